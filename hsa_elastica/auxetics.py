"""Auxetic trajectory of an HSA rod (paper Section II-B, Eq. 2-5).

A Handed Shearing Auxetic rod lengthens when it is twisted *with* its handedness.  The
coupling is a PyElastica forcing (``NoForces``) that, once per time step, rewrites the rest
configuration of a stock :class:`elastica.CosseratRod` in place:

* Eq. 4 -- handed twist strain measured against the *printed* Voronoi lengths,
  ``kappa_z[k] = log(Q_{k+1} Q_k^T)_z / printed_voronoi[k]``  [rad/m], and
  ``kappa_h = -handedness * kappa_z`` (with PyElastica's sign, a base rotation ``+phi`` of a
  rod whose distal twist is held gives ``kappa_z ~ -phi / L``);
* Eq. 3 -- averaged to the elements with zero padding at both ends
  (``avg[i] = 0.5 * (k[i-1] + k[i])``, ``k[-1] = k[n-1] = 0``) and turned into an axial strain
  ``eps = clip(C_eps * avg, eps_min, eps_max)``  [-];
* Eq. 2 -- ``rest_lengths = (1 + eps) * printed_lengths`` [m] and
  ``rest_voronoi_lengths = 0.5 * (rest[1:] + rest[:-1])`` [m];
* the twist rigidity ``bend_matrix[2, 2, k]`` is scaled by ``rest_voronoi / printed_voronoi`` so
  that the twist couple stays the one of Eq. 4, ``B_z * theta / printed_voronoi``
  (PyElastica measures its own ``kappa`` against the updated rest Voronoi lengths);
* Eq. 5 (optional, :class:`TwistStiffnessLaw`) -- linear twist-dependence of the stiffnesses,
  using the same (clipped) handed twist strain as the rest-length law;
* optional quadratic terms (not in the paper; default 0 = the paper's linear laws, bit-identical):
  ``eps = clip(C_eps k + C_eps2 k^2, eps_min, eps_max)`` with ``k`` the handed twist strain
  clipped to the linear law's range ``[eps_min, eps_max] / C_eps``, and ``E_quad k^2``,
  ``twist_rigidity_quad k^2`` added to Young's modulus and the twist rigidity;
* reciprocal twist couple (optional, default off, not in the paper): the derivative of the elastic
  energy through the twist-dependent rest lengths, ``M_k = dU/dtheta_k``, applied like an
  elastic couple.  It makes the coupling conservative (Maxwell-Betti: an HSA under axial load
  produces a twist torque) and removes the self-excited stretch-twist mode of the one-way
  law (docs/stability.md).

Timing: PyElastica calls forcings after the internal forces of the step were computed.  The
coupling writes the rest configuration for the current directors and then recomputes the
rod's internal forces and torques (``compute_internal_forces_and_torques``), so there is no
lag of the rest length behind the twist (a one-step lag is an O(dt) delay in a stiff loop and
self-excites the stretch-twist mode, docs/stability.md).  Cost: one extra internal-force
evaluation per rod and step.  Add the coupling before any forcing that reads internal forces.

The kernels are pure ``numba`` functions on arrays; :class:`AuxeticCoupling` only holds
parameters and the printed geometry captured from the rod on its first application.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica._rotations import _inv_rotate
from elastica.external_forces import NoForces

from hsa_elastica.params import invalid_parameter, is_finite_number

__all__ = [
    "ALPHA_C",
    "AuxeticCoupling",
    "TwistStiffnessLaw",
    "handed_twist_strain",
    "average_to_elements",
    "clip_strain",
    "auxetic_rest_lengths",
    "rest_strain",
    "twist_dependent_stiffness",
    "low_pass",
    "reciprocal_twist_couple",
    "apply_twist_couple",
]

#: Timoshenko shear correction used by PyElastica's ``straight_rod`` (Kaneko 1975), [-].
ALPHA_C: float = 27.0 / 28.0


_invalid = invalid_parameter
_finite = is_finite_number


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
    rotation_vectors = _inv_rotate(director_collection)
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


@njit(cache=True)  # type: ignore[misc]
def rest_strain(
    k: float, C_eps: float, C_eps2: float, kappa_min: float, kappa_max: float,
    eps_min: float, eps_max: float,
) -> float:
    """Axial strain [-] of the rest-length law at the handed twist strain ``k`` [rad/m].

    Paper (Eq. 3, ``C_eps2 = 0``): ``clip(C_eps k, eps_min, eps_max)``.  Optional quadratic
    law: ``clip(C_eps kc + C_eps2 kc^2, eps_min, eps_max)`` with ``kc = clip(k, kappa_min,
    kappa_max)``, the linear law's range ``[eps_min, eps_max] / C_eps`` (for ``C_eps2 = 0``
    both expressions are equal; the first is evaluated so the paper's model is bit-identical).
    ``C_eps`` [m/rad], ``C_eps2`` [m^2/rad^2].
    """
    if C_eps2 == 0.0:
        x = C_eps * k
    else:
        kc = min(max(k, kappa_min), kappa_max)
        x = C_eps * kc + C_eps2 * kc * kc
    return min(max(x, eps_min), eps_max)


@njit(cache=True)  # type: ignore[misc]
def auxetic_rest_lengths(
    kappa_h_elements: NDArray[np.float64],
    C_eps: float,
    C_eps2: float,
    kappa_min: float,
    kappa_max: float,
    eps_min: float,
    eps_max: float,
    printed_lengths: NDArray[np.float64],
    eps: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
) -> None:
    """Rest-length law, Eq. 2-3 (optionally quadratic), written in place.

    ``eps = rest_strain(kappa_h_elements)`` [-] (:func:`rest_strain`; the paper's
    ``clip(C_eps * kappa_h_elements, eps_min, eps_max)`` for ``C_eps2 = 0``),
    ``rest_lengths = (1 + eps) * printed_lengths`` [m],
    ``rest_voronoi_lengths = 0.5 * (rest_lengths[1:] + rest_lengths[:-1])`` [m].

    ``C_eps`` in m/rad, ``C_eps2`` in m^2/rad^2, ``kappa_h_elements`` and the twist range
    ``kappa_min, kappa_max`` in rad/m (element averages of Eq. 4).
    """
    n = eps.shape[0]
    for i in range(n):
        e = rest_strain(kappa_h_elements[i], C_eps, C_eps2, kappa_min, kappa_max, eps_min, eps_max)
        eps[i] = e
        rest_lengths[i] = (1.0 + e) * printed_lengths[i]
    for k in range(n - 1):
        rest_voronoi_lengths[k] = 0.5 * (rest_lengths[k + 1] + rest_lengths[k])


@njit(cache=True)  # type: ignore[misc]
def twist_dependent_stiffness(
    kappa_h_elements: NDArray[np.float64],
    kappa_h_voronoi: NDArray[np.float64],
    area: float,
    E_slope: float,
    G_slope: float,
    bend_rigidity_slope: float,
    twist_rigidity_slope: float,
    E_quad: float,
    twist_rigidity_quad: float,
    printed_shear_matrix: NDArray[np.float64],
    printed_bend_matrix: NDArray[np.float64],
    printed_voronoi_lengths: NDArray[np.float64],
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
    Slopes: ``E_slope``, ``G_slope`` in Pa m/rad, rigidity slopes in N m^2 m/rad; optional
    quadratic coefficients (0 = the paper's linear Eq. 5): ``E_quad`` in Pa m^2/rad^2,
    ``twist_rigidity_quad`` in N m^2 m^2/rad^2; ``area`` in m^2.
    With all slopes zero only the twist-rigidity scaling acts.

    Returns the smallest diagonal entry written (callers check it is > 0).
    """
    smallest = np.inf
    for i in range(kappa_h_elements.shape[0]):
        k = kappa_h_elements[i]
        s_shear = ALPHA_C * G_slope * area * k
        shear_matrix[0, 0, i] = printed_shear_matrix[0, 0, i] + s_shear
        shear_matrix[1, 1, i] = printed_shear_matrix[1, 1, i] + s_shear
        shear_matrix[2, 2, i] = printed_shear_matrix[2, 2, i] + E_slope * area * k
        if E_quad != 0.0:
            shear_matrix[2, 2, i] += E_quad * area * k * k
        for d in range(3):
            smallest = min(smallest, shear_matrix[d, d, i])
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


@njit(cache=True)  # type: ignore[misc]
def reciprocal_twist_couple(
    sigma: NDArray[np.float64],
    rest_sigma: NDArray[np.float64],
    internal_stress: NDArray[np.float64],
    kappa: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
    kappa_h_elements: NDArray[np.float64],
    C_eps: float,
    C_eps2: float,
    kappa_min: float,
    kappa_max: float,
    eps_min: float,
    eps_max: float,
    handedness: float,
    printed_lengths: NDArray[np.float64],
    printed_voronoi_lengths: NDArray[np.float64],
    couple: NDArray[np.float64],
) -> None:
    """Twist couple conjugate to the rest-length law (Maxwell-Betti reciprocal of Eq. 2-4).

    The rest lengths ``l_i = (1 + eps_i) lbar_i`` depend on the Voronoi twist angles
    ``theta_k = log(Q_{k+1} Q_k^T)_z``; with ``eps_i = C_eps (kh_{i-1} + kh_i) / 2`` and
    ``kh_k = -h theta_k / Dbar_k`` (Eq. 3-4), an unclipped element has
    ``d l_i / d theta_k = -h C_eps lbar_i / (2 Dbar_k)`` for ``i in {k, k+1}`` (0 when clipped).
    The couple is ``M_k = dU/dtheta_k = sum_i (dU/dl_i)(dl_i/dtheta_k)`` [N m] with PyElastica's
    elastic energy at fixed positions and directors:

    * stretch/shear, ``U_i = 1/2 (s_i - s0_i).S_i (s_i - s0_i) l_i`` with
      ``s_i = Q_i (x_{i+1} - x_i)/l_i - e_z``:
      ``dU_i/dl_i = -(n_z + s.n - 1/2 (s - s0).n)`` with ``n = S (s - s0)`` (internal stress);
    * bending, ``U_k = 1/2 (B_xx kx^2 + B_yy ky^2) D_k`` with ``kappa = theta / D`` and
      ``D_k = (l_k + l_{k+1})/2``: ``dU_k/dl_i = -1/4 (B_xx kx^2 + B_yy ky^2)`` for
      ``i in {k, k+1}``;
    * twist: independent of the rest lengths (``B_zz`` is scaled by ``D / Dbar``).

    At a clip limit the one-sided derivative is used only when the couple drives the strain
    into the unclipped range (tension at ``eps_min``, compression at ``eps_max``).
    The stiffness law (Eq. 5) contribution ``dU/dS dS/dtheta`` is not included.

    Quadratic rest-length law (``C_eps2 != 0``, :func:`rest_strain`): ``C_eps`` above becomes
    ``d eps / d k = C_eps + 2 C_eps2 k`` [m/rad] at the element's twist strain ``k``; the element
    counts as clipped when ``k`` is outside ``[kappa_min, kappa_max]`` or the polynomial is
    outside ``[eps_min, eps_max]``.

    ``sigma``, ``rest_sigma``, ``internal_stress`` (3, n); ``kappa`` [1/m], ``bend_matrix``
    (3, 3, n-1) as used for this step's internal forces; ``kappa_h_elements`` (n,) element
    averages of the handed twist strain [rad/m] (clip test); ``C_eps`` [m/rad];
    ``printed_*`` [m].  Output ``couple`` (n-1,) [N m], to be applied as a local-z torque
    ``+M_k`` on element k and ``-M_k`` on element k+1 (PyElastica's sign for an elastic couple).
    """
    n = sigma.shape[1]
    # g_i = -dU/dl_i for the unclipped elements, 0 for the clipped ones
    g = np.zeros(n)
    for i in range(n):
        k_i = kappa_h_elements[i]
        if C_eps2 == 0.0:
            e = C_eps * k_i
            at_low, at_high = e == eps_min, e == eps_max
        else:
            if k_i < kappa_min or k_i > kappa_max:
                continue  # outside the twist range: the rest length is constant
            e = C_eps * k_i + C_eps2 * k_i * k_i
            at_low = e == eps_min or k_i == kappa_min
            at_high = e == eps_max or k_i == kappa_max
        if e < eps_min or e > eps_max:
            continue  # clipped: the rest length does not depend on the twist
        s_dot_n = 0.0
        ds_dot_n = 0.0
        for d in range(3):
            s_dot_n += sigma[d, i] * internal_stress[d, i]
            ds_dot_n += (sigma[d, i] - rest_sigma[d, i]) * internal_stress[d, i]
        g[i] = internal_stress[2, i] + s_dot_n - 0.5 * ds_dot_n
        for k in (i - 1, i):
            if 0 <= k <= n - 2:
                g[i] += 0.25 * (
                    bend_matrix[0, 0, k] * kappa[0, k] ** 2
                    + bend_matrix[1, 1, k] * kappa[1, k] ** 2
                )
        # exactly at a clip limit (e.g. zero twist with eps_min = 0) the law has a kink: keep
        # the one-sided derivative only if the couple drives the strain back into the range
        if (at_low and g[i] < 0.0) or (at_high and g[i] > 0.0):
            g[i] = 0.0
        if C_eps2 != 0.0:
            # d eps/d k relative to C_eps (C_eps > 0 whenever C_eps2 != 0, RodParams/AuxeticCoupling)
            g[i] *= (C_eps + 2.0 * C_eps2 * k_i) / C_eps
    for k in range(n - 1):
        couple[k] = (
            handedness
            * C_eps
            / (2.0 * printed_voronoi_lengths[k])
            * (printed_lengths[k] * g[k] + printed_lengths[k + 1] * g[k + 1])
        )


@njit(cache=True)  # type: ignore[misc]
def apply_twist_couple(couple: NDArray[np.float64], external_torques: NDArray[np.float64]) -> None:
    """Add Voronoi couples ``couple`` (n-1,) [N m] as local-z torques: ``+M_k`` on element k,
    ``-M_k`` on element k+1 (PyElastica's difference operator for ``internal_couple``)."""
    for k in range(couple.shape[0]):
        external_torques[2, k] += couple[k]
        external_torques[2, k + 1] -= couple[k]


# --------------------------------------------------------------------------------------------
# parameters and operator
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TwistStiffnessLaw:
    """Linear twist dependence of the rod stiffnesses (paper Eq. 5, Table I).

    The handed twist strain ``kappa_h`` [rad/m] is the same (clipped) strain that drives the
    rest-length law.  Each slope multiplies it; all default to 0 (no dependence).

    Attributes
    ----------
    E_slope : float
        d E / d kappa_h [Pa m/rad]; ``S_zz = (E0 + E_slope * kappa_h) * A``.
    G_slope : float
        d G / d kappa_h [Pa m/rad]; ``S_xx = S_yy = alpha_c * (G0 + G_slope * kappa_h) * A``.
    bend_rigidity_slope : float
        d B_xy / d kappa_h [N m^2 m/rad]; ``B_xx = B_yy = B_xy0 + slope * kappa_h``.
    twist_rigidity_slope : float
        d B_z / d kappa_h [N m^2 m/rad]; ``B_zz = B_z0 + slope * kappa_h`` (then scaled by the
        Voronoi elongation like the constant twist rigidity).
    E_quad : float
        Optional quadratic term (not in the paper, default 0) [Pa m^2/rad^2]:
        ``S_zz = (E0 + E_slope * kappa_h + E_quad * kappa_h^2) * A``.
    twist_rigidity_quad : float
        Optional quadratic term (default 0) [N m^2 m^2/rad^2]:
        ``B_zz = B_z0 + twist_rigidity_slope * kappa_h + twist_rigidity_quad * kappa_h^2``.
    """

    E_slope: float = 0.0
    G_slope: float = 0.0
    bend_rigidity_slope: float = 0.0
    twist_rigidity_slope: float = 0.0
    E_quad: float = 0.0
    twist_rigidity_quad: float = 0.0

    def __post_init__(self) -> None:
        units = {
            "E_slope": "Pa m/rad",
            "G_slope": "Pa m/rad",
            "bend_rigidity_slope": "N m^2 m/rad",
            "twist_rigidity_slope": "N m^2 m/rad",
            "E_quad": "Pa m^2/rad^2",
            "twist_rigidity_quad": "N m^2 m^2/rad^2",
        }
        for name, unit in units.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not _finite(value):
                raise _invalid("TwistStiffnessLaw", name, value, f"a finite number ({unit})")
            object.__setattr__(self, name, float(value))

    @property
    def is_constant(self) -> bool:
        """True when every slope is zero."""
        return (
            self.E_slope == 0.0
            and self.G_slope == 0.0
            and self.bend_rigidity_slope == 0.0
            and self.twist_rigidity_slope == 0.0
            and self.E_quad == 0.0
            and self.twist_rigidity_quad == 0.0
        )


class AuxeticCoupling(NoForces):
    """HSA auxetic coupling of twist and rest length (Eq. 2-5) as a PyElastica forcing.

    Usage::

        sim.add_forcing_to(rod).using(AuxeticCoupling, handedness=+1, C_eps=0.01,
                                      eps_min=0.0, eps_max=0.5, stiffness=None)

    The printed geometry (rest lengths, rest Voronoi lengths, shear and bend matrices) is read
    from the rod the first time the operator is applied (PyElastica instantiates forcings at
    ``finalize()`` without handing them the rod), so build the rod with its printed geometry.
    The operator writes ``rest_lengths``, ``rest_voronoi_lengths`` and the diagonals of
    ``shear_matrix`` / ``bend_matrix`` in place, so memory blocks see the change.  With
    ``reciprocal=True`` (default False) it also applies the twist couple conjugate to the rest-length
    law (:func:`reciprocal_twist_couple`), which makes the coupling conservative.

    Parameters (keyword-only)
    -------------------------
    handedness : int
        +1 right-handed (elongates under positive base angles), -1 left-handed.
    C_eps : float
        Extension factor [m/rad], >= 0: ``eps = C_eps * kappa_h``.
    C_eps2 : float
        Optional quadratic term of the rest-length law [m^2/rad^2], default 0 (the paper's
        linear law): ``eps = clip(C_eps k + C_eps2 k^2, eps_min, eps_max)`` with ``k`` the handed
        twist strain clipped to ``[eps_min, eps_max] / C_eps`` (:func:`rest_strain`).  Needs
        ``C_eps > 0`` and ``C_eps + 2 C_eps2 k >= 0`` over that range.
    eps_min, eps_max : float
        Limits of the axial strain [-], both in (-1, 10] with ``eps_min <= eps_max``.  A closed
        HSA has ``eps_min = 0``.  (``eps_min > 0`` would stretch the rod at zero twist.)
    stiffness : TwistStiffnessLaw or None
        Optional Eq. 5 stiffness law; None keeps the printed stiffnesses (only the twist
        rigidity is scaled by the Voronoi elongation).
    area : float or None
        Cross-section area [m^2] used by the stiffness law; None reads it from the rod as
        ``volume / rest_lengths`` on the first application (the area of PyElastica's circular
        section, i.e. the tube area when the rod was built with the equivalent radius
        ``sqrt(A / pi)``).
    twist_filter_time : float
        Optional robustness option [s], default 0 (off, the paper's model).  When > 0 the handed
        twist strain is passed through a first-order low pass with this time constant before
        the rest-length and stiffness laws, which removes the high-frequency feedback path
        twist -> rest length -> axial force (see docs/stability.md).  Steady states are
        unchanged.
    reciprocal : bool
        Default False (the paper's one-way model).  True: apply the reciprocal twist couple
        ``M_k = dU/dtheta_k`` of the elastic energy through the twist dependence of the rest
        lengths (an axially loaded HSA produces a twist torque, Maxwell-Betti).  Without it
        the coupling is not derived from an energy and self-excites a stretch-twist mode on
        stiff, strongly coupled rods (docs/stability.md).  Changes results only where the rod
        carries axial load (or is bent); the unloaded equilibria are unchanged.  Not allowed
        with ``twist_filter_time > 0``.  Stable on single rods, but the 4-rod robot with it
        diverged in the checks of docs/stability.md, hence off by default.

    Diagnostics (read-only, None before the first application)
    ----------------------------------------------------------
    eps : (n,) axial strain of each element [-].
    kappa_h : (n,) unclipped element average of the handed twist strain [rad/m].
    kappa_h_voronoi : (n-1,) handed twist strain on the Voronoi domain [rad/m].
    reciprocal_couple : (n-1,) reciprocal twist couple of the last step [N m].
    """

    def __init__(
        self,
        *,
        handedness: int,
        C_eps: float,
        eps_min: float = 0.0,
        eps_max: float = 0.5,
        stiffness: TwistStiffnessLaw | None = None,
        area: float | None = None,
        twist_filter_time: float = 0.0,
        reciprocal: bool = False,
        C_eps2: float = 0.0,
    ) -> None:
        super().__init__()
        owner = "AuxeticCoupling"
        if isinstance(handedness, bool) or handedness not in (1, -1):
            raise _invalid(owner, "handedness", handedness, "+1 (right-handed) or -1 (left-handed)")
        if isinstance(C_eps, bool) or not _finite(C_eps) or float(C_eps) < 0.0:
            raise _invalid(owner, "C_eps", C_eps, "a finite number >= 0 (m/rad)")
        for name, value in (("eps_min", eps_min), ("eps_max", eps_max)):
            if isinstance(value, bool) or not _finite(value) or not -1.0 < float(value) <= 10.0:
                raise _invalid(owner, name, value, "a finite number in (-1, 10] (-)")
        if float(eps_min) > float(eps_max):
            raise _invalid(owner, "eps_min", eps_min, f"<= eps_max = {eps_max!r} (-)")
        if isinstance(C_eps2, bool) or not _finite(C_eps2):
            raise _invalid(owner, "C_eps2", C_eps2, "a finite number (m^2/rad^2)")
        if float(C_eps2) != 0.0:
            if float(C_eps) == 0.0:
                raise _invalid(owner, "C_eps2", C_eps2, "0 when C_eps = 0 (m^2/rad^2)")
            for k_end in (float(eps_min) / float(C_eps), float(eps_max) / float(C_eps)):
                if float(C_eps) + 2.0 * float(C_eps2) * k_end < 0.0:
                    raise _invalid(
                        owner, "C_eps2", C_eps2,
                        "such that d eps/d k = C_eps + 2 C_eps2 k >= 0 over "
                        f"[eps_min, eps_max] / C_eps (fails at k = {k_end:.6g} rad/m) (m^2/rad^2)",
                    )
        if stiffness is not None and not isinstance(stiffness, TwistStiffnessLaw):
            raise _invalid(owner, "stiffness", stiffness, "a TwistStiffnessLaw or None")
        if area is not None and (
            isinstance(area, bool) or not _finite(area) or float(area) <= 0.0
        ):
            raise _invalid(owner, "area", area, "None or a finite number > 0 (m^2)")
        if (
            isinstance(twist_filter_time, bool)
            or not _finite(twist_filter_time)
            or float(twist_filter_time) < 0.0
        ):
            raise _invalid(
                owner, "twist_filter_time", twist_filter_time, "a finite number >= 0 (s)"
            )

        if not isinstance(reciprocal, (bool, np.bool_)):
            raise _invalid(owner, "reciprocal", reciprocal, "True or False")
        if reciprocal and float(twist_filter_time) > 0.0:
            raise _invalid(
                owner, "reciprocal", reciprocal,
                "False when twist_filter_time > 0 (a lagged rest length makes the reciprocal "
                "couple non-conservative; it diverges, docs/stability.md)",
            )

        self.handedness = int(handedness)
        self.reciprocal = bool(reciprocal)
        self.C_eps = float(C_eps)
        self.C_eps2 = float(C_eps2)
        self.eps_min = float(eps_min)
        self.eps_max = float(eps_max)
        self.stiffness = stiffness if stiffness is not None else TwistStiffnessLaw()
        self.area = None if area is None else float(area)
        self.twist_filter_time = float(twist_filter_time)

        # Range of kappa_h seen by the stiffness law: the one the rest-length law is clipped to.
        if self.C_eps > 0.0:
            self.kappa_h_min = self.eps_min / self.C_eps
            self.kappa_h_max = self.eps_max / self.C_eps
        else:
            self.kappa_h_min = -np.inf
            self.kappa_h_max = np.inf

        self._initialized = False
        self._last_time = 0.0

    # -- diagnostics -------------------------------------------------------------------------
    @staticmethod
    def _readonly(array: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
        if array is None:
            return None
        view = array.view()
        view.flags.writeable = False
        return view

    @property
    def eps(self) -> NDArray[np.float64] | None:
        """Axial strain of each element [-] (None before the first application)."""
        return self._readonly(getattr(self, "_eps", None))

    @property
    def kappa_h(self) -> NDArray[np.float64] | None:
        """Unclipped element average of the handed twist strain [rad/m]."""
        return self._readonly(getattr(self, "_kappa_h_elem", None))

    @property
    def kappa_h_voronoi(self) -> NDArray[np.float64] | None:
        """Handed twist strain on the Voronoi domain [rad/m] (filtered if the option is on)."""
        return self._readonly(getattr(self, "_kappa_h_vor", None))

    @property
    def reciprocal_couple(self) -> NDArray[np.float64] | None:
        """Reciprocal twist couple ``M_k`` of the last step [N m] (zeros if disabled)."""
        return self._readonly(getattr(self, "_couple", None))

    @property
    def printed_lengths(self) -> NDArray[np.float64] | None:
        """Printed element lengths captured on the first application [m]."""
        return self._readonly(getattr(self, "_printed_lengths", None))

    @property
    def printed_voronoi_lengths(self) -> NDArray[np.float64] | None:
        """Printed Voronoi lengths captured on the first application [m]."""
        return self._readonly(getattr(self, "_printed_voronoi", None))

    # -- setup -------------------------------------------------------------------------------
    def _capture_printed_geometry(self, system: Any, time: float) -> None:
        n = int(system.n_elems)
        self._printed_lengths = np.array(system.rest_lengths, dtype=np.float64, copy=True)
        self._printed_voronoi = np.array(
            system.rest_voronoi_lengths, dtype=np.float64, copy=True
        )
        self._printed_shear = np.array(system.shear_matrix, dtype=np.float64, copy=True)
        self._printed_bend = np.array(system.bend_matrix, dtype=np.float64, copy=True)
        if self.area is None:
            self._area = float(np.mean(np.asarray(system.volume) / self._printed_lengths))
        else:
            self._area = self.area
        self._kappa_h_vor_raw = np.zeros(n - 1)
        self._kappa_h_vor = np.zeros(n - 1)
        self._kappa_h_vor_clipped = np.zeros(n - 1)
        self._kappa_h_elem = np.zeros(n)
        self._kappa_h_elem_clipped = np.zeros(n)
        self._eps = np.zeros(n)
        self._couple = np.zeros(n - 1)
        self._check_stiffness_positive()
        # the filter starts from the strain present at the first application
        handed_twist_strain(
            system.director_collection,
            self._printed_voronoi,
            float(self.handedness),
            self._kappa_h_vor,
        )
        self._last_time = float(time)
        self._initialized = True

    def _check_stiffness_positive(self) -> None:
        """Raise if the stiffness law gives a non-positive stiffness in the clipped range."""
        law = self.stiffness
        if law.is_constant or not (
            np.isfinite(self.kappa_h_min) and np.isfinite(self.kappa_h_max)
        ):
            return  # constant law, or unbounded range: checked every step instead
        A = self._area
        shear, bend = self._printed_shear, self._printed_bend
        # (slope name, quadratic name, slope, quadratic coefficient, printed value, formula)
        checks: tuple[tuple[str, str, float, float, NDArray[np.float64], str], ...] = (
            ("E_slope", "E_quad", law.E_slope * A, law.E_quad * A, shear[2, 2, :],
             "S_zz = (E0 + E_slope k) A"),
            ("G_slope", "", ALPHA_C * law.G_slope * A, 0.0,
             np.minimum(shear[0, 0, :], shear[1, 1, :]), "S_xx = S_yy = alpha_c (G0 + G_slope k) A"),
            ("bend_rigidity_slope", "", law.bend_rigidity_slope, 0.0,
             np.minimum(bend[0, 0, :], bend[1, 1, :]), "B_xy = B_xy0 + slope k"),
            ("twist_rigidity_slope", "twist_rigidity_quad", law.twist_rigidity_slope,
             law.twist_rigidity_quad, bend[2, 2, :], "B_z = B_z0 + slope k"),
        )
        for name, quad_name, slope, quad, base, formula in checks:
            ks = [self.kappa_h_min, self.kappa_h_max]
            if quad > 0.0 and self.kappa_h_min < -slope / (2.0 * quad) < self.kappa_h_max:
                ks.append(-slope / (2.0 * quad))  # convex: interior minimum
            if quad != 0.0:
                name = quad_name
                formula = formula.replace(" k", " k + quad k^2", 1)
            for k in ks:
                worst = float(np.min(base + slope * k + quad * k * k))
                if worst <= 0.0:
                    raise ValueError(
                        f"TwistStiffnessLaw.{name} = {getattr(law, name)!r} is invalid: "
                        f"{formula} reaches {worst:.6g} <= 0 at kappa_h = {k:.6g} rad/m, the "
                        f"end of the clipped range [eps_min/C_eps, eps_max/C_eps] = "
                        f"[{self.kappa_h_min:.6g}, {self.kappa_h_max:.6g}] rad/m; the "
                        f"stiffness must stay > 0 over that range"
                    )

    # -- operator ----------------------------------------------------------------------------
    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        """Update rest lengths and stiffnesses of ``system`` in place, recompute its internal
        forces/torques with them, and compute the reciprocal couple (applied by
        :meth:`apply_torques`)."""
        t = float(time)
        if not self._initialized:
            self._capture_printed_geometry(system, t)

        filtered = self.twist_filter_time > 0.0
        handed_twist_strain(
            system.director_collection,
            self._printed_voronoi,
            float(self.handedness),
            self._kappa_h_vor_raw if filtered else self._kappa_h_vor,
        )
        if filtered:
            dt = max(t - self._last_time, 0.0)
            blend = 1.0 - math.exp(-dt / self.twist_filter_time)
            low_pass(self._kappa_h_vor_raw, blend, self._kappa_h_vor)
        self._last_time = t

        average_to_elements(self._kappa_h_vor, self._kappa_h_elem)
        auxetic_rest_lengths(
            self._kappa_h_elem,
            self.C_eps,
            self.C_eps2,
            self.kappa_h_min,
            self.kappa_h_max,
            self.eps_min,
            self.eps_max,
            self._printed_lengths,
            self._eps,
            system.rest_lengths,
            system.rest_voronoi_lengths,
        )
        clip_strain(self._kappa_h_elem, self.kappa_h_min, self.kappa_h_max, self._kappa_h_elem_clipped)
        clip_strain(self._kappa_h_vor, self.kappa_h_min, self.kappa_h_max, self._kappa_h_vor_clipped)
        law = self.stiffness
        smallest = twist_dependent_stiffness(
            self._kappa_h_elem_clipped,
            self._kappa_h_vor_clipped,
            self._area,
            law.E_slope,
            law.G_slope,
            law.bend_rigidity_slope,
            law.twist_rigidity_slope,
            law.E_quad,
            law.twist_rigidity_quad,
            self._printed_shear,
            self._printed_bend,
            self._printed_voronoi,
            system.rest_voronoi_lengths,
            system.shear_matrix,
            system.bend_matrix,
        )
        # PyElastica computed the internal forces of this step before calling the forcings,
        # with the rest configuration of the previous step.  Recompute them with the one just
        # written: a one-step lag of the rest length behind the twist is an O(dt) delay in a
        # stiff feedback loop and self-excites the stretch-twist mode (docs/stability.md).
        system.compute_internal_forces_and_torques(time)
        if self.reciprocal:
            # derivative of the energy whose forces act in this step (sigma, internal_stress
            # and kappa just recomputed)
            reciprocal_twist_couple(
                system.sigma,
                system.rest_sigma,
                system.internal_stress,
                system.kappa,
                system.bend_matrix,
                self._kappa_h_elem,
                self.C_eps,
                self.C_eps2,
                self.kappa_h_min,
                self.kappa_h_max,
                self.eps_min,
                self.eps_max,
                float(self.handedness),
                self._printed_lengths,
                self._printed_voronoi,
                self._couple,
            )
        if not smallest > 0.0:
            raise FloatingPointError(
                f"AuxeticCoupling.stiffness gave a non-positive stiffness ({smallest:.6g}) at "
                f"t = {t:.6g} s: with C_eps = 0 the twist strain is not clipped, so the linear "
                f"TwistStiffnessLaw {law} must stay positive for the twist that occurs; "
                f"use C_eps > 0 with eps limits, or smaller slopes"
            )

    def apply_torques(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        """Apply the reciprocal twist couple computed by :meth:`apply_forces` (if enabled)."""
        if self.reciprocal and self._initialized:
            apply_twist_couple(self._couple, system.external_torques)
