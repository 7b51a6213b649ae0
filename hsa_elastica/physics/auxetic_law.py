"""The auxetic laws of an HSA rod (paper Section II-B, Eq. 2-5): numba kernels.

One kernel per law, called by every execution path (the :class:`AuxeticCoupling` operator, the
fused stepper and the static solver through :func:`auxetic_update`); a law's parameters and
state are one row of :class:`~hsa_elastica.physics.tables.CouplingTable` (the operator holds a
one-row table):

* Eq. 4 -- handed twist strain against the *printed* Voronoi lengths
  (:func:`handed_twist_strain`), ``kappa_h = -handedness * log(Q_{k+1} Q_k^T)_z / printed_voronoi``
  [rad/m];
* Eq. 3 -- averaged to the elements with zero padding (:func:`average_to_elements`) and turned
  into an axial strain ``eps = clip(C_eps * avg, eps_min, eps_max)`` (:func:`rest_strain`; an
  optional quadratic term ``C_eps2``);
* Eq. 2 -- ``rest = (1 + eps) * printed`` and the rest Voronoi lengths
  (:func:`rest_lengths_of_row`);
* Eq. 5 -- stiffnesses linear (optionally quadratic) in the clipped twist strain, and the twist
  rigidity scaled by ``rest_voronoi / printed_voronoi`` (:func:`twist_dependent_stiffness`);
* optional creep of the rest strain (not in the paper): ``eps_rest = eps + eps_c`` with
  ``tau_c d eps_c/dt = c eps - eps_c`` (``creep_fraction`` ``c``, ``creep_time`` ``tau_c``),
  advanced exactly for an input held over the step (:func:`creep_blend`);
* optional rate-independent hysteresis (not in the paper): the rest-length law sees the
  twist strain through a weighted play operator (:mod:`hsa_elastica.physics.hysteresis`);
* the reciprocal (Maxwell-Betti) twist couple of the rest-length law
  (:func:`reciprocal_twist_couple`) of the passive model (``coupling_law="passive"``).

:func:`auxetic_update` is the whole sequence strain -> (filter) -> rest lengths -> stiffness,
written once.  Units: SI; strains in rad/m, ``C_eps`` in m/rad.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.compat import inv_rotate
from hsa_elastica.physics.hysteresis import advance_play_arrays, hysteretic_input, play_row
from hsa_elastica.physics.tables import CouplingTable, RestLengthRow, StiffnessRow, TwistRow


__all__ = [
    "ALPHA_C",
    "auxetic_update",
    "twist_row",
    "update_of_rows",
    "handed_twist_strain",
    "handed_twist_from_rotation",
    "average_to_elements",
    "clip_strain",
    "rest_length_row",
    "rest_lengths_of_row",
    "rest_strain",
    "rest_strain_slope",
    "soft_clip",
    "PASSIVE_CLIP_WIDTH",
    "twist_dependent_stiffness",
    "stiffness_row",
    "stiffness_of_row",
    "low_pass",
    "creep_blend",
    "StepMemory",
    "step_memory",
    "save_step_memory",
    "restore_step_memory",
    "reciprocal_twist_couple",
]

#: Timoshenko shear correction used by PyElastica's ``straight_rod`` (Kaneko 1975), [-].
ALPHA_C: float = 27.0 / 28.0


# --------------------------------------------------------------------------------------------
# numba kernels (pure functions on arrays)
# --------------------------------------------------------------------------------------------


@njit(cache=True)  # type: ignore[misc]
def handed_twist_strain(
    director_collection: NDArray[np.float64],
    printed_voronoi_lengths: NDArray[np.float64],
    handedness: float,
    kappa_h_voronoi: NDArray[np.float64],
) -> None:
    """Handed twist strain on the Voronoi domain (Eq. 4), written into ``kappa_h_voronoi``.

    ``kappa_h[k] = -handedness * log(Q_{k+1} Q_k^T)_z / printed_voronoi[k]`` [rad/m].

    Parameters
    ----------
    director_collection : (3, 3, n) directors (rows map lab -> local).
    printed_voronoi_lengths : (n-1,) printed Voronoi lengths [m].
    handedness : +1 (right-handed) or -1 (left-handed).
    kappa_h_voronoi : (n-1,) output [rad/m].
    """
    handed_twist_from_rotation(
        inv_rotate(director_collection), printed_voronoi_lengths, handedness, kappa_h_voronoi
    )


@njit(cache=True)  # type: ignore[misc]
def handed_twist_from_rotation(
    rotation_vectors: NDArray[np.float64],
    printed_voronoi_lengths: NDArray[np.float64],
    handedness: float,
    kappa_h_voronoi: NDArray[np.float64],
) -> None:
    """Eq. 4 from the rotation vectors ``log(Q_{k+1} Q_k^T)`` (3, n-1) [rad] already computed
    (e.g. by the rod's internal-torque evaluation): ``kappa_h[k] = -handedness *
    rotation_vectors[2, k] / printed_voronoi[k]`` [rad/m]."""
    for k in range(kappa_h_voronoi.shape[0]):
        kappa_h_voronoi[k] = -handedness * rotation_vectors[2, k] / printed_voronoi_lengths[k]


@njit(cache=True)  # type: ignore[misc]
def average_to_elements(
    voronoi_values: NDArray[np.float64], element_values: NDArray[np.float64]
) -> None:
    """Average Voronoi values to the n elements with zero padding (operator ``A^h`` of Eq. 3).

    ``element[i] = 0.5 * (v[i-1] + v[i])`` with ``v[-1] = v[n-1] = 0`` (PyElastica's quadrature
    kernel), so that for uniform elements ``sum(element) * l = sum(v) * l``.
    """
    n = element_values.shape[0]
    for i in range(n):
        left = voronoi_values[i - 1] if i >= 1 else 0.0
        right = voronoi_values[i] if i <= n - 2 else 0.0
        element_values[i] = 0.5 * (left + right)


@njit(cache=True)  # type: ignore[misc]
def clip_strain(
    values: NDArray[np.float64], lower: float, upper: float, out: NDArray[np.float64]
) -> None:
    """``out = min(max(values, lower), upper)`` elementwise (``lower``/``upper`` may be +-inf)."""
    for i in range(values.shape[0]):
        out[i] = min(max(values[i], lower), upper)


#: blend width [-] of the clipped rest-length law in the passive model (:func:`soft_clip`):
#: the clip at ``eps_min``/``eps_max`` is rounded over +-1e-4 of axial strain so that the
#: energy is continuously differentiable (the paper's hard clip has a kink at zero twist, where
#: the conjugate couple would jump); the rest strain changes by at most ``width/4`` = 2.5e-5
#: there (2.5 um on a 100 mm rod).
PASSIVE_CLIP_WIDTH: float = 1e-4


@njit(cache=True)  # type: ignore[misc]
def soft_clip(x: float, lower: float, upper: float, width: float) -> tuple[float, float]:
    """``(clip(x, lower, upper), slope)``; with ``width > 0`` the corners are rounded by
    quadratic blends over ``[lower - width, lower + width]`` and ``[upper - width,
    upper + width]`` (continuous slope; ``width`` is reduced to half the range if larger).
    ``width = 0``: the hard clip, slope 1 strictly inside the range, else 0."""
    if width <= 0.0:
        return min(max(x, lower), upper), (1.0 if lower < x < upper else 0.0)
    w = min(width, 0.5 * (upper - lower))
    if w <= 0.0:
        return min(max(x, lower), upper), 0.0
    if x <= lower - w:
        return lower, 0.0
    if x < lower + w:
        d = x - lower + w
        return lower + d * d / (4.0 * w), d / (2.0 * w)
    if x <= upper - w:
        return x, 1.0
    if x < upper + w:
        d = upper + w - x
        return upper - d * d / (4.0 * w), d / (2.0 * w)
    return upper, 0.0


@njit(cache=True)  # type: ignore[misc]
def _rest_strain_and_slope(
    k: float, C_eps: float, C_eps2: float, kappa_min: float, kappa_max: float,
    eps_min: float, eps_max: float, clip_width: float,
) -> tuple[float, float]:
    if C_eps2 == 0.0:
        value, slope = soft_clip(C_eps * k, eps_min, eps_max, clip_width)
        return value, slope * C_eps
    margin = clip_width / C_eps
    kc = min(max(k, kappa_min - margin), kappa_max + margin)
    dx = C_eps + 2.0 * C_eps2 * kc if kappa_min - margin < k < kappa_max + margin else 0.0
    value, slope = soft_clip(C_eps * kc + C_eps2 * kc * kc, eps_min, eps_max, clip_width)
    return value, slope * dx


@njit(cache=True)  # type: ignore[misc]
def rest_strain(
    k: float, C_eps: float, C_eps2: float, kappa_min: float, kappa_max: float,
    eps_min: float, eps_max: float, clip_width: float = 0.0,
) -> float:
    """Axial strain [-] of the rest-length law at the handed twist strain ``k`` [rad/m].

    Paper (Eq. 3, ``C_eps2 = 0``, ``clip_width = 0``): ``clip(C_eps k, eps_min, eps_max)``.
    Optional quadratic law: ``clip(C_eps kc + C_eps2 kc^2, eps_min, eps_max)`` with
    ``kc = clip(k, kappa_min, kappa_max)``, the linear law's range ``[eps_min, eps_max] / C_eps``
    (widened by ``clip_width / C_eps`` when rounded).  ``clip_width > 0`` rounds the clip
    (:func:`soft_clip`; the passive model uses :data:`PASSIVE_CLIP_WIDTH`).
    ``C_eps`` [m/rad], ``C_eps2`` [m^2/rad^2].
    """
    return _rest_strain_and_slope(  # type: ignore[no-any-return]
        k, C_eps, C_eps2, kappa_min, kappa_max, eps_min, eps_max, clip_width
    )[0]


@njit(cache=True)  # type: ignore[misc]
def rest_strain_slope(
    k: float, C_eps: float, C_eps2: float, kappa_min: float, kappa_max: float,
    eps_min: float, eps_max: float, clip_width: float,
) -> float:
    """``d eps / d k`` [m/rad] of :func:`rest_strain` (0 where clipped)."""
    return _rest_strain_and_slope(  # type: ignore[no-any-return]
        k, C_eps, C_eps2, kappa_min, kappa_max, eps_min, eps_max, clip_width
    )[1]


@njit(cache=True, inline="always")  # type: ignore[misc]
def rest_law(c: CouplingTable, i: int) -> tuple[float, float, float, float, float, float, float]:
    """The rest-length law of row ``i`` of the coupling table, in the argument order of
    :func:`rest_strain` after ``k``: ``(C_eps, C_eps2, kappa_min, kappa_max, eps_min,
    eps_max, clip_width)``."""
    return (c.C_eps[i], c.C_eps2[i], c.kappa_min[i], c.kappa_max[i], c.eps_min[i],
            c.eps_max[i], c.clip_width[i])


@njit(cache=True, inline="always")  # type: ignore[misc]
def rest_length_row(c: CouplingTable, i: int) -> RestLengthRow:
    """Row ``i`` of ``c`` as the rest-length law reads it, the creep's and the play's clocks
    advanced for this evaluation (:func:`creep_blend`, :func:`~hsa_elastica.physics.
    hysteresis.play_row`; each only when its law is on)."""
    fraction = c.creep_fraction[i]
    return RestLengthRow(c.eps[i], c.printed_lengths[i], c.eps_creep[i], rest_law(c, i),
                         fraction, creep_blend(c, i) if fraction != 0.0 else 0.0,
                         play_row(c, i))


@njit(cache=True, inline="always")  # type: ignore[misc]
def rest_lengths_of_row(
    kappa_h_elements: NDArray[np.float64], row: RestLengthRow,
    rest_lengths: NDArray[np.float64], rest_voronoi_lengths: NDArray[np.float64],
) -> None:
    """Rest-length law, Eq. 2-3 (optionally quadratic), of one coupling row
    (:func:`rest_length_row`), written in place.

    ``eps = rest_strain(kappa_h_elements)`` [-] (:func:`rest_strain` with the row's ``C_eps``
    [m/rad], ``C_eps2`` [m^2/rad^2], twist range ``kappa_min, kappa_max`` [rad/m], ``eps_min``,
    ``eps_max`` and ``clip_width``; the paper's ``clip(C_eps * kappa_h_elements, eps_min,
    eps_max)`` for ``C_eps2 = 0``) into ``row.eps``,
    ``rest_lengths = (1 + eps) * printed_lengths`` [m],
    ``rest_voronoi_lengths = 0.5 * (rest_lengths[1:] + rest_lengths[:-1])`` [m].
    ``kappa_h_elements`` [rad/m] are the element averages of Eq. 4.

    With the play on (``row.play.weight != 0``, :mod:`hsa_elastica.physics.hysteresis`) its
    arrays are first advanced (:func:`~hsa_elastica.physics.hysteresis.advance_play_arrays`)
    and the law sees the hysteretic twist strain
    (:func:`~hsa_elastica.physics.hysteresis.hysteretic_input`) instead of
    ``kappa_h_elements``.

    With the creep on (``row.creep_fraction`` ``cf != 0``) the creep strain ``row.eps_creep``
    [-] is advanced towards ``cf * eps`` by the row's blend and the rest length is
    ``(1 + eps + eps_creep) * printed``; ``row.eps`` stays the instantaneous strain.
    """
    eps, printed_lengths, eps_creep, law, fraction, blend, play = row
    memory, trial, width, weight, frozen, clock = play
    n = eps.shape[0]
    advance_play_arrays(clock, memory, trial, kappa_h_elements, width)
    for k in range(n):
        x = hysteretic_input(kappa_h_elements[k], weight, frozen, width, memory[k], trial[k])[0]
        eps[k] = rest_strain(x, *law)
    if fraction == 0.0:
        for k in range(n):
            rest_lengths[k] = (1.0 + eps[k]) * printed_lengths[k]
    else:
        for k in range(n):
            eps_creep[k] += blend * (fraction * eps[k] - eps_creep[k])
            rest_lengths[k] = (1.0 + eps[k] + eps_creep[k]) * printed_lengths[k]
    for k in range(n - 1):
        rest_voronoi_lengths[k] = 0.5 * (rest_lengths[k + 1] + rest_lengths[k])


@njit(cache=True, inline="always")  # type: ignore[misc]
def twist_dependent_stiffness(
    kappa_h_elements: NDArray[np.float64],
    kappa_h_voronoi: NDArray[np.float64],
    c: CouplingTable,
    i: int,
    rest_voronoi_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
) -> float:
    """Twist-dependent stiffness (Eq. 5) and twist-rigidity scaling, written in place.

    Elements (``kappa_h_elements``, the clipped element averages, rad/m):
    ``S_zz = S_zz0 + E_slope * A * k + E_quad * A * k^2`` [N],
    ``S_xx = S_yy = S0 + alpha_c * G_slope * A * k`` [N].
    Voronoi (``kappa_h_voronoi``, clipped, rad/m):
    ``B_xx = B_yy = B0 + bend_rigidity_slope * k`` [N m^2],
    ``B_zz = (B_zz0 + twist_rigidity_slope * k + twist_rigidity_quad * k^2) * rest_voronoi /
    printed_voronoi`` [N m^2].
    The coefficients are row ``i`` of the coupling table ``c``: slopes ``E_slope``, ``G_slope``
    in Pa m/rad, rigidity slopes ``bend_slope``, ``twist_slope`` in N m^2 m/rad; optional
    quadratic coefficients (0 = the paper's linear Eq. 5): ``E_quad`` in Pa m^2/rad^2,
    ``twist_quad`` in N m^2 m^2/rad^2; ``area`` in m^2; the printed ``S0``, ``B0`` and Voronoi
    lengths ``printed_shear``, ``printed_bend``, ``printed_voronoi``.
    With all slopes zero only the twist-rigidity scaling acts.

    Returns the smallest diagonal entry written (callers check it is > 0).
    """
    return stiffness_of_row(  # type: ignore[no-any-return]
        kappa_h_elements, kappa_h_voronoi, stiffness_row(c, i), rest_voronoi_lengths,
        shear_matrix, bend_matrix,
    )


@njit(cache=True, inline="always")  # type: ignore[misc]
def stiffness_row(c: CouplingTable, i: int) -> StiffnessRow:
    """Row ``i`` of ``c`` as the stiffness law (Eq. 5) reads it."""
    return StiffnessRow(c.area[i], c.E_slope[i], c.G_slope[i], c.bend_slope[i],
                        c.twist_slope[i], c.E_quad[i], c.twist_quad[i], c.printed_shear[i],
                        c.printed_bend[i], c.printed_voronoi[i])


@njit(cache=True, inline="always")  # type: ignore[misc]
def stiffness_of_row(
    kappa_h_elements: NDArray[np.float64], kappa_h_voronoi: NDArray[np.float64],
    row: StiffnessRow, rest_voronoi_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64], bend_matrix: NDArray[np.float64],
) -> float:
    """:func:`twist_dependent_stiffness` of one coupling row (:func:`stiffness_row`)."""
    (area, E_slope, G_slope, bend_rigidity_slope, twist_rigidity_slope, E_quad,
     twist_rigidity_quad, printed_shear_matrix, printed_bend_matrix,
     printed_voronoi_lengths) = row
    smallest = np.inf
    for e in range(kappa_h_elements.shape[0]):
        k = kappa_h_elements[e]
        s_shear = ALPHA_C * G_slope * area * k
        shear_matrix[0, 0, e] = printed_shear_matrix[0, 0, e] + s_shear
        shear_matrix[1, 1, e] = printed_shear_matrix[1, 1, e] + s_shear
        shear_matrix[2, 2, e] = printed_shear_matrix[2, 2, e] + E_slope * area * k
        if E_quad != 0.0:
            shear_matrix[2, 2, e] += E_quad * area * k * k
        for d in range(3):
            smallest = min(smallest, shear_matrix[d, d, e])
    for j in range(kappa_h_voronoi.shape[0]):
        k = kappa_h_voronoi[j]
        bend_matrix[0, 0, j] = printed_bend_matrix[0, 0, j] + bend_rigidity_slope * k
        bend_matrix[1, 1, j] = printed_bend_matrix[1, 1, j] + bend_rigidity_slope * k
        b_z = printed_bend_matrix[2, 2, j] + twist_rigidity_slope * k
        if twist_rigidity_quad != 0.0:
            b_z += twist_rigidity_quad * k * k
        bend_matrix[2, 2, j] = b_z * (rest_voronoi_lengths[j] / printed_voronoi_lengths[j])
        for d in range(3):
            smallest = min(smallest, bend_matrix[d, d, j])
    return smallest


@njit(cache=True)  # type: ignore[misc]
def low_pass(
    signal: NDArray[np.float64], blend: float, filtered: NDArray[np.float64]
) -> None:
    """First-order low pass in place: ``filtered += blend * (signal - filtered)``.

    ``blend = 1 - exp(-dt / tau)`` (exact discretisation of ``tau * y' = x - y`` for a
    piecewise-constant input), ``blend = 1`` means no filtering.
    """
    for k in range(signal.shape[0]):
        filtered[k] += blend * (signal[k] - filtered[k])


@njit(cache=True, inline="always")  # type: ignore[misc]
def creep_blend(c: CouplingTable, i: int) -> float:
    """Blend ``1 - exp(-dt / creep_time)`` of the creep strain of row ``i`` of ``c`` for this
    evaluation, and the row's creep clock advanced.

    ``dt = c.last_time[i] - c.creep_last[i]`` [s] (>= 0): the time of this evaluation (the
    caller stores it in ``last_time`` first, as for the twist filter) since the creep's last
    update; ``creep_last`` is -inf before the first one (``dt = 0`` then).  Evaluations at one
    time advance the creep once: the implicit integrator's Newton evaluations of a step after
    its first one, and the static solver (``creep_time = 0``: the creep strain is a given,
    frozen state) leave it unchanged.  Exact discretisation of ``tau_c eps_c' = cf eps -
    eps_c`` for ``eps`` held over ``dt``.
    """
    now = c.last_time[i]
    previous = c.creep_last[i]
    c.creep_last[i] = now
    tau = c.creep_time[i]
    if not tau > 0.0 or previous == -math.inf:
        return 0.0
    return 1.0 - math.exp(-max(now - previous, 0.0) / tau)


class StepMemory(NamedTuple):
    """The creep's and the play's memory of a coupling table at the start of an implicit step
    (copies; all empty when neither law is on), put back when the step is refused so that
    the step taken again (in halves) starts from the same memory."""

    eps_creep: NDArray[np.float64]
    creep_last: NDArray[np.float64]
    play: NDArray[np.float64]
    play_last: NDArray[np.float64]
    play_trial: NDArray[np.float64]


def step_memory(c: CouplingTable) -> StepMemory:
    """A :class:`StepMemory` for the coupling table ``c``: arrays of its shapes if a row has
    creep or the play on, else empty ones (nothing to save)."""
    on = bool(np.any(c.creep_fraction != 0.0) or np.any(c.play_weight != 0.0))
    if not on:
        return StepMemory(np.zeros((0, 0)), np.zeros(0), np.zeros((0, 0)), np.zeros(0),
                          np.zeros((0, 0)))
    return StepMemory(c.eps_creep.copy(), c.creep_last.copy(), c.play.copy(),
                      c.play_last.copy(), c.play_trial.copy())


@njit(cache=True, inline="always")  # type: ignore[misc]
def save_step_memory(c: CouplingTable, saved: StepMemory) -> None:
    """The creep's and the play's memory of ``c`` into ``saved`` (nothing if it is empty)."""
    if saved.creep_last.shape[0] == 0:
        return
    saved.eps_creep[:] = c.eps_creep
    saved.creep_last[:] = c.creep_last
    saved.play[:] = c.play
    saved.play_last[:] = c.play_last
    saved.play_trial[:] = c.play_trial


@njit(cache=True, inline="always")  # type: ignore[misc]
def restore_step_memory(saved: StepMemory, c: CouplingTable) -> None:
    """The memory :func:`save_step_memory` kept back into ``c`` (nothing if it is empty)."""
    if saved.creep_last.shape[0] == 0:
        return
    c.eps_creep[:] = saved.eps_creep
    c.creep_last[:] = saved.creep_last
    c.play[:] = saved.play
    c.play_last[:] = saved.play_last
    c.play_trial[:] = saved.play_trial


@njit(cache=True, inline="always")  # type: ignore[misc]
def reciprocal_twist_couple(
    sigma: NDArray[np.float64],
    dilatation: NDArray[np.float64],
    kappa: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
    c: CouplingTable,
    i: int,
) -> None:
    """Twist couple conjugate to the rest-length law (Maxwell-Betti reciprocal of Eq. 2-4).

    The rest lengths ``l_i = (1 + eps_i) lbar_i`` depend on the Voronoi twist angles
    ``theta_k = log(Q_{k+1} Q_k^T)_z``; with ``eps_i = C_eps (kh_{i-1} + kh_i) / 2`` and
    ``kh_k = -h theta_k / Dbar_k`` (Eq. 3-4), an element has
    ``d l_i / d theta_k = -h (d eps_i / d k) lbar_i / (2 Dbar_k)`` for ``i in {k, k+1}``.
    The couple is ``M_k = dU/dtheta_k = sum_i (dU/dl_i)(dl_i/dtheta_k)`` [N m], with ``U`` the
    energy of the passive rod (:mod:`hsa_elastica.physics.variational_rod`), at fixed positions
    and directors:

    * stretch/shear, ``U_i = l_i [S_zz (e - 1 - ln e) + (S_xx sx^2 + S_yy sy^2)/2]`` with the
      dilatation ``e = |x_{i+1} - x_i| / l_i`` and ``s = Q (x_{i+1} - x_i)/l_i - e_z``:
      ``-dU_i/dl_i = S_zz ln e + (S_xx sx^2 + S_yy sy^2)/2``;
    * bend/twist, ``U_k = theta.B theta / (2 D_k)`` with ``D_k = (l_k + l_{k+1})/2`` and the
      twist rigidity scaled by ``D_k / Dbar_k`` (:func:`twist_dependent_stiffness`, so the twist
      term does not depend on ``D_k``): ``-dU_k/dl_i = (B_xx kx^2 + B_yy ky^2) / 4`` for
      ``i in {k, k+1}``.

    It is applied, with the exact log-map Jacobian, by
    :func:`~hsa_elastica.physics.variational_rod.variational_correction`: together with the
    exact-gradient rod forces it makes the coupled rod the gradient of ``U`` (tested against a
    finite-difference gradient of ``U``).  The rest curvature and rest shear strain are zero
    (straight printed rods).  The Eq. 5 stiffness slopes act through ``S`` and ``B``; their own
    conjugate terms are not included (zero for the paper's model).  The rest-length law enters
    through its slope ``d eps / d k`` (:func:`rest_strain_slope`: ``C_eps``, or
    ``C_eps + 2 C_eps2 k`` for the quadratic law, times the slope of the clip, which is rounded
    over ``clip_width`` so that the couple is continuous; 0 where clipped).

    ``sigma`` (3, n) shear/stretch strains, ``dilatation`` (n,), ``kappa`` (3, n-1) [1/m],
    ``shear_matrix`` (3, 3, n) [N], ``bend_matrix`` (3, 3, n-1) [N m^2], all of this step's
    internal forces.  Row ``i`` of the coupling table ``c`` gives the law (``C_eps`` [m/rad],
    ``C_eps2``, the clip ranges, ``handedness``, ``clip_width`` [-] of the rounded clip,
    :func:`soft_clip`), the printed lengths [m] and ``kappa_elem``, the element averages of the
    handed twist strain [rad/m] of this step; output ``c.couple[i]`` (n-1,) [N m].
    """
    kappa_h_elements = c.kappa_elem[i]
    law = rest_law(c, i)
    handedness = c.handedness[i]
    printed_lengths = c.printed_lengths[i]
    printed_voronoi_lengths = c.printed_voronoi[i]
    couple = c.couple[i]
    n = sigma.shape[1]
    # g_i = -(dU/dl_i) (d eps_i/d k), zero where the rest length does not follow the twist
    g = np.zeros(n)
    for e in range(n):
        slope = rest_strain_slope(kappa_h_elements[e], *law)
        if slope == 0.0:
            continue
        g_e = (
            shear_matrix[2, 2, e] * math.log(dilatation[e])
            + 0.5 * (shear_matrix[0, 0, e] * sigma[0, e] ** 2
                     + shear_matrix[1, 1, e] * sigma[1, e] ** 2)
        )
        for k in (e - 1, e):
            if 0 <= k <= n - 2:
                g_e += 0.25 * (
                    bend_matrix[0, 0, k] * kappa[0, k] ** 2
                    + bend_matrix[1, 1, k] * kappa[1, k] ** 2
                )
        g[e] = g_e * slope
    for k in range(n - 1):
        couple[k] = (
            handedness
            / (2.0 * printed_voronoi_lengths[k])
            * (printed_lengths[k] * g[k] + printed_lengths[k + 1] * g[k + 1])
        )


@njit(cache=True, inline="always")  # type: ignore[misc]
def auxetic_update(
    rotation_vectors: NDArray[np.float64],
    c: CouplingTable,
    i: int,
    filter_blend: float,
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
) -> float:
    """The auxetic rest configuration of one rod (Eq. 2-5) for its present directors.

    The one sequence every path runs, for the rod of row ``i`` of the coupling table ``c``
    (law parameters, printed geometry and the strain state of the row), from the rotation
    vectors ``log(Q_{k+1} Q_k^T)`` (3, n-1) [rad] of the rod's present directors (the caller
    computes them: ``inv_rotate`` in the operator, once per evaluation for the coupling and
    the internal torques in the compiled engines): handed twist strain (Eq. 4, into
    ``c.kappa_vor[i]`` [rad/m]; with ``filter_blend < 0`` unfiltered, else through
    :func:`low_pass` of the raw strain in ``c.kappa_vor_raw[i]`` with that blend) -> element
    average (Eq. 3, ``c.kappa_elem[i]``) -> rest lengths and rest Voronoi lengths (Eq. 2,
    :func:`rest_lengths_of_row`, ``c.eps[i]``) -> both strains clipped to
    ``[kappa_min, kappa_max]`` -> stiffness law and twist-rigidity scaling (Eq. 5,
    :func:`twist_dependent_stiffness`).  Writes the rod's ``rest_lengths``,
    ``rest_voronoi_lengths`` [m] and the diagonals of ``shear_matrix`` [N] / ``bend_matrix``
    [N m^2] in place.

    Returns the smallest stiffness written (callers check it is > 0).
    """
    return update_of_rows(  # type: ignore[no-any-return]
        rotation_vectors, twist_row(c, i), rest_length_row(c, i), stiffness_row(c, i),
        filter_blend, rest_lengths, rest_voronoi_lengths, shear_matrix, bend_matrix,
    )


@njit(cache=True, inline="always")  # type: ignore[misc]
def twist_row(c: CouplingTable, i: int) -> TwistRow:
    """Row ``i`` of ``c`` as the twist strain (Eq. 3-4) reads and writes it."""
    return TwistRow(c.kappa_vor_raw[i], c.kappa_vor[i], c.kappa_vor_clipped[i], c.kappa_elem[i],
                    c.kappa_elem_clipped[i], c.printed_voronoi[i], c.handedness[i],
                    c.kappa_min[i], c.kappa_max[i])


@njit(cache=True, inline="always")  # type: ignore[misc]
def update_of_rows(
    rotation_vectors: NDArray[np.float64], twist: TwistRow, rest: RestLengthRow,
    stiffness: StiffnessRow, filter_blend: float, rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64], shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
) -> float:
    """:func:`auxetic_update` of one coupling row read by :func:`twist_row`,
    :func:`rest_length_row` and :func:`stiffness_row`.  A caller that loops over the table's
    rows builds the three in its loop and calls this: a kernel that takes the table and uses
    it after a loop reference-counts each of the table's 45 arrays per call
    (:class:`~hsa_elastica.physics.tables.TwistRow`)."""
    (raw, kappa_vor, vor_clipped, kappa_elem, elem_clipped, printed_voronoi, handedness,
     kappa_min, kappa_max) = twist
    if filter_blend < 0.0:
        handed_twist_from_rotation(rotation_vectors, printed_voronoi, handedness, kappa_vor)
    else:
        handed_twist_from_rotation(rotation_vectors, printed_voronoi, handedness, raw)
        low_pass(raw, filter_blend, kappa_vor)
    average_to_elements(kappa_vor, kappa_elem)
    rest_lengths_of_row(kappa_elem, rest, rest_lengths, rest_voronoi_lengths)
    clip_strain(kappa_elem, kappa_min, kappa_max, elem_clipped)
    clip_strain(kappa_vor, kappa_min, kappa_max, vor_clipped)
    return stiffness_of_row(  # type: ignore[no-any-return]
        elem_clipped, vor_clipped, stiffness, rest_voronoi_lengths, shear_matrix, bend_matrix,
    )
