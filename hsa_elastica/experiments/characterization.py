"""Virtual versions of the HSA characterization experiments (paper Section II-C, Fig. 3).

Good et al. (ICRA 2022) characterized closed FPU 50 HSAs by four steady-state quantities,
each as a function of the twist angle ``phi`` [rad] applied at the proximal end:

* :func:`holding_torque` [N m] -- base twisted to ``phi`` (``MotorAngleBC``), distal twist
  locked, otherwise free; the twist torque the base must supply at steady state, read as the
  reaction of the internal twist couple of the first Voronoi region,
  ``tau = -couple_z[0] / e_voronoi[0]^3`` (PyElastica applies ``couple / e^3`` to element 0).
  The torque-driven alternative of the paper (``FreeTwistBC`` + ``BaseTwistTorque``, read the
  angle) is :func:`twist_angle_under_torque`; both give the same curve (tested).
* :func:`minimum_energy_length` [m] -- same set-up; tip z minus base z at steady state.
* :func:`spring_constant` [N/m] -- same set-up at rest, then a small axial tip force
  ``+F`` and ``-F``; ``k = 2 F / (z(+F) - z(-F))`` (central difference: the geometric
  nonlinearity of PyElastica's stretch law ``n = S (1 - 1/e)`` cancels to first order; the
  one-sided values ``F / (z(+F) - z0)`` and ``F / (z0 - z(-F))`` are returned by
  :func:`spring_constant_details` as a linearity check).
* :func:`blocked_force` [N] -- distal node and element held at their printed position and
  orientation (``FixedConstraint``), base twisted to ``phi``; the axial compression force in
  the last element, ``F_b = -(Q^T n)_z / e`` at steady state.

Steady states come from the static solver of the same discrete model by default
(``method="static"``, :mod:`hsa_elastica.robots.rod_statics`: milliseconds per point; a solve
that fails or ends unstable falls back to the dynamics with a logged warning).  With
``method="dynamic"`` each run relaxes the dynamics and stops when the rod has settled: every
node speed below ``tol_velocity`` and every angular speed below ``tol_omega`` for ``window``
seconds after the actuation ramp (not after a fixed long time; :data:`ROD_SETTLE`).
:func:`settling_sim_params` picks ``dt`` and a near-critical damping from the rod's slowest axial/torsional mode so that a
run takes a few thousand steps.  Both agree to the settling tolerance (tested).  The dynamic
runs step the handle's operators (PyElastica's Position Verlet) or, with
``sim_params.integrator = "implicit"`` (``settling_sim_params(rod, integrator="implicit")``:
a step 17x larger for the Table I rod, a few hundred steps per run), the implicit integrator
(:mod:`hsa_elastica.engines.implicit`); both settle where the static solver says to 1e-5
(``tests/test_implicit_rod.py``).  The relaxation itself is
:mod:`hsa_elastica.robots.rod_relaxation` (``relax_rod``: the dynamic counterpart of
``solve_static_rod``, ``steady_state(rod_params, angle, method="dynamic")``).

Closed forms (:func:`closed_form`, in :mod:`hsa_elastica.experiments.characterization_closed_form`
with the data layout) of the same discrete model (uniform twist, element strains with the
half-strain end elements of the zero-padded average, see docs/architecture.md):

* length ``= sum_i l_i (1 + eps_i)`` (``= L + C_eps phi`` unclipped, linear law);
* holding torque ``= B_z(kappa_v) kappa_v`` with ``kappa_v = phi / sum(printed_voronoi)``
  (``= B_z phi n / ((n-1) L)`` for a constant ``B_z``);
* spring constant ``k = 1 / sum_i(rest_i / S_i)`` with ``S_i = E(kappa_i) A``;
* blocked force ``f`` solving ``sum_i rest_i / (1 + f / S_i) = L`` (``= E A eps`` for uniform
  elements) -- from ``n = S (1 - rest / l)``.

Optional quadratic twist laws (``RodParams.C_eps2``, ``E_quad``, ``twist_rigidity_quad``): the
same formulas with ``eps_i``, ``E(kappa_i)`` and ``B_z(kappa_v)`` quadratic in the clipped twist
strain (:func:`hsa_elastica.physics.auxetic_coupling.rest_strain`).

Optional compression law: every experiment and :func:`closed_form` take ``axial_law``
(:class:`hsa_elastica.physics.compression_law.AxialLawParams`); with an asymmetric law the runs add the
:class:`~hsa_elastica.physics.compression_law.AxialCompressionLaw` forcing, the blocked force uses
``r_c S_i`` and the spring constant is the pull-only value (the paper's experiment pulls).

They are used for a fast parameter fit (``python -m hsa_elastica.validation.characterization --fit``) and as
independent references in the tests.

Units: SI inside (m, N, N m, N/m, rad); the data file uses mm, N, N*mm, N/mm and degrees --
:data:`DATA_UNITS` converts at the edges only.
"""

from __future__ import annotations

import logging
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from elastica.external_forces import NoForces

from hsa_elastica.physics.compression_law import AxialLawParams
from hsa_elastica.params import ParameterError, RodParams, SimulationParams, integrator
# the data layout and the closed forms live in their own module; re-exported here
from hsa_elastica.experiments.characterization_closed_form import (
    CHARACTERISTICS as CHARACTERISTICS,
    DATA_COLUMNS as DATA_COLUMNS,
    DATA_UNITS as DATA_UNITS,
    _compressive,
    closed_form as closed_form,
    default_data_path as default_data_path,
    load_characterization_data as load_characterization_data,
    to_data_unit as to_data_unit,
)
# the dynamic relaxation of a single rod lives with the rods; re-exported here
from hsa_elastica.robots.rod_relaxation import (
    IMPLICIT_SETTLE_STEP as IMPLICIT_SETTLE_STEP,
    ROD_SETTLE as ROD_SETTLE,
    NotSettledError as NotSettledError,
    SettleOptions as SettleOptions,
    build_setup as _build,
    implicit_engine as _implicit_engine,
    relax_rod as relax_rod,
    settle_rod as _settle,
    settling_sim_params as settling_sim_params,
)

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.robots.builders import SingleRod
    from hsa_elastica.robots.rod_statics import RodSteadyState

log = logging.getLogger(__name__)

#: ``method`` of the experiments: the static solver (default) or dynamic relaxation
METHODS = ("static", "dynamic")

__all__ = [
    "CHARACTERISTICS",
    "DATA_UNITS",
    "DATA_COLUMNS",
    "NotSettledError",
    "ROD_SETTLE",
    "SettleOptions",
    "default_data_path",
    "load_characterization_data",
    "to_data_unit",
    "closed_form",
    "settling_sim_params",
    "holding_torque",
    "twist_angle_under_torque",
    "minimum_energy_length",
    "spring_constant",
    "spring_constant_details",
    "blocked_force",
    "simulate_point",
    "relax_rod",
    "METHODS",
]


class _AdjustableTipForce(NoForces):
    """Axial force [N] on the last node, along lab +z; ``force`` may be changed between settles."""

    def __init__(self, *, force: float = 0.0) -> None:
        super().__init__()
        self.force = float(force)

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        system.external_forces[2, -1] += self.force


# --------------------------------------------------------------------------------------------
# the four experiments
# --------------------------------------------------------------------------------------------
def _check_method(method: str) -> bool:
    """True for the static solver; raises on an unknown ``method``."""
    if method not in METHODS:
        raise ParameterError(f"method = {method!r} is invalid: must be one of {METHODS}")
    return method == "static"


def _static_state(
    rod_params: RodParams,
    *,
    angle: float = 0.0,
    distal: str = "twist_locked",
    axial_law: AxialLawParams | None = None,
    tip_force: float = 0.0,
    base: str = "motor",
    torque: float = 0.0,
    initial: "RodSteadyState | None" = None,
) -> "RodSteadyState | None":
    """Static steady state of the set-up, or None (logged) when the static solve failed or
    ended unstable: the caller then runs the dynamic experiment."""
    from hsa_elastica.robots.rod_statics import solve_static_rod

    if not isinstance(rod_params, RodParams):
        raise ParameterError(f"rod_params = {rod_params!r} is invalid: must be a RodParams")
    for name, v in (("angle", angle), ("torque", torque)):
        if not math.isfinite(v):
            raise ParameterError(f"{name} = {v!r} is invalid: must be a finite number")
    res = solve_static_rod(rod_params, angle=angle, torque=torque, base=base, distal=distal,
                           tip_force=tip_force, axial_law=axial_law, initial=initial)
    if res.converged and res.stable is not False:
        return res
    log.warning("static characterization solve (angle %.4g rad, distal %s): %s; falling back "
                "to dynamic relaxation", angle, distal, res.message or "not converged")
    return None


class _TableTipForce:
    """Axial tip force [N] along lab +z as the implicit integrator's compiled load row (the
    ``EndpointForces`` row of the tip, past its ramp); ``force`` may be changed between
    settles, as :class:`_AdjustableTipForce`'s."""

    def __init__(self, engine: Any) -> None:
        loads = engine.model.tables.loads
        self._force = loads.force
        self._row = int(np.nonzero(loads.node >= 0)[0][-1])

    @property
    def force(self) -> float:
        return float(self._force[self._row, 2])

    @force.setter
    def force(self, value: float) -> None:
        self._force[self._row] = (0.0, 0.0, float(value))


def _twisted_free_rod(
    rod_params: RodParams,
    angle: float,
    sim_params: SimulationParams | None,
    settle: SettleOptions,
    tip_force: bool = False,
    axial_law: AxialLawParams | None = None,
) -> tuple["SingleRod", float, Any]:
    """The twisted rod (distal twist locked) settled; with ``tip_force`` also the handle of an
    adjustable axial tip force (an object with a ``force`` [N] attribute), else None."""
    implicit = not integrator(sim_params).operator_path  # compiled-engine only
    h, _ = _build(
        rod_params, angle, sim_params, distal="twist_locked",
        finalize=not tip_force or implicit, axial_law=axial_law, tip_load=tip_force and implicit,
    )
    tip: Any = None
    if tip_force and implicit:
        tip = _TableTipForce(_implicit_engine(h))
    elif tip_force:
        from hsa_elastica.robots.builders import OperatorRef

        ref: OperatorRef[_AdjustableTipForce] = OperatorRef()
        h.simulator.add_forcing_to(h.rod).using(ref.capture(_AdjustableTipForce), force=0.0)
        h.simulator.finalize()
        tip = ref.instance
    t = _settle(h, quiet_after=h.sim_params.ramp_time, settle=settle)
    return h, t, tip


def holding_torque(
    rod_params: RodParams,
    angle: float,
    *,
    sim_params: SimulationParams | None = None,
    settle: SettleOptions = ROD_SETTLE,
    axial_law: AxialLawParams | None = None,
    method: str = "static",
) -> float:
    """Twist torque [N m] about +z the base must supply to hold the base angle ``angle`` [rad].

    Base: ``MotorAngleBC``; distal: ``DistalTwistLockBC``.  Read at steady state as minus the
    internal twist couple of the first Voronoi region divided by its dilatation cubed (the
    torque PyElastica applies to element 0, in its local frame whose z is the rod axis).
    ``method``: ``"static"`` (default) or ``"dynamic"`` (see the module doc).
    """
    if _check_method(method):
        st = _static_state(rod_params, angle=angle, axial_law=axial_law)
        if st is not None:
            return st.holding_torque_Nm
    h, _, _ = _twisted_free_rod(rod_params, angle, sim_params, settle, axial_law=axial_law)
    rod = h.rod
    rod.compute_internal_forces_and_torques(np.float64(0.0))
    return float(-rod.internal_couple[2, 0] / rod.voronoi_dilatation[0] ** 3)


def twist_angle_under_torque(
    rod_params: RodParams,
    torque: float,
    *,
    sim_params: SimulationParams | None = None,
    settle: SettleOptions = ROD_SETTLE,
    method: str = "static",
) -> float:
    """Steady base twist angle [rad] under a base torque ``torque`` [N m] (paper's procedure).

    Base: ``FreeTwistBC`` + ``BaseTwistTorque``; distal twist locked.  The angle is read with
    ``actuation.base_twist_angle`` (principal value, so ``|angle| < pi``).
    ``method``: ``"static"`` (default) or ``"dynamic"``.
    """
    from hsa_elastica.physics.actuation import base_twist_angle

    if not math.isfinite(torque):
        raise ParameterError(f"torque = {torque!r} is invalid: must be a finite number (N m)")
    if _check_method(method):
        st = _static_state(rod_params, base="free_twist", torque=torque)
        if st is not None:
            return st.base_angle_rad
    # the damping / time step of the angle that this torque gives in the closed form
    guess = torque / max(rod_params.B_z, 1e-300) * (rod_params.length * (rod_params.n_elements - 1) / rod_params.n_elements)
    sp = settling_sim_params(rod_params, angle=guess) if sim_params is None else sim_params
    h, _ = _build(rod_params, 0.0, sp, distal="twist_locked", base="free_twist", torque=torque)
    reference = np.array(h.rod.director_collection[..., 0])
    _settle(h, quiet_after=sp.ramp_time, settle=settle)
    return base_twist_angle(h.rod, reference)


def minimum_energy_length(
    rod_params: RodParams,
    angle: float,
    *,
    sim_params: SimulationParams | None = None,
    settle: SettleOptions = ROD_SETTLE,
    axial_law: AxialLawParams | None = None,
    method: str = "static",
) -> float:
    """Steady-state length [m] (tip z - base z) of the rod with base angle ``angle`` [rad]
    (``method``: ``"static"``, default, or ``"dynamic"``)."""
    if _check_method(method):
        st = _static_state(rod_params, angle=angle, axial_law=axial_law)
        if st is not None:
            return st.length_m
    h, _, _ = _twisted_free_rod(rod_params, angle, sim_params, settle, axial_law=axial_law)
    pos = h.rod.position_collection
    return float(pos[2, -1] - pos[2, 0])


def spring_constant_details(
    rod_params: RodParams,
    angle: float,
    *,
    force: float | None = None,
    sim_params: SimulationParams | None = None,
    settle: SettleOptions = ROD_SETTLE,
    axial_law: AxialLawParams | None = None,
    pull_only: bool = False,
    method: str = "static",
) -> dict[str, float]:
    """Axial spring constant of the twisted rod, with a linearity check.

    ``force`` [N] defaults to 1 % of ``E0 A`` (1 % strain).  Returns ``k`` (central
    difference), ``k_pull`` / ``k_push`` (one-sided) [N/m], ``z0`` [m] and ``force`` [N];
    ``pull_only`` skips the push (``k``, ``k_push`` are then NaN).
    """
    if force is None:
        force = 0.01 * rod_params.youngs_modulus * rod_params.area
    if not (math.isfinite(force) and force > 0.0):
        raise ParameterError(f"force = {force!r} is invalid: must be a finite number > 0 (N)")
    if _check_method(method):
        static = _static_spring(rod_params, angle, force, axial_law, pull_only)
        if static is not None:
            return static
    h, t, tip = _twisted_free_rod(rod_params, angle, sim_params, settle, tip_force=True,
                                  axial_law=axial_law)
    pos = h.rod.position_collection
    z0 = float(pos[2, -1] - pos[2, 0])
    out = {"z0": z0, "force": float(force)}
    sides = ((+1.0, "z_pull"),) if pull_only else ((+1.0, "z_pull"), (-1.0, "z_push"))
    for sign, name in sides:
        tip.force = sign * force
        t = _settle(h, quiet_after=t, settle=settle)
        out[name] = float(pos[2, -1] - pos[2, 0])
    return _spring_values(out, force, pull_only)


def _spring_values(out: dict[str, float], force: float, pull_only: bool) -> dict[str, float]:
    """Adds ``k``, ``k_pull``, ``k_push`` [N/m] to the lengths ``z0``, ``z_pull``, ``z_push``."""
    z0 = out["z0"]
    out["k_pull"] = force / (out["z_pull"] - z0)
    if pull_only:
        out["z_push"] = out["k"] = out["k_push"] = float("nan")
    else:
        out["k"] = 2.0 * force / (out["z_pull"] - out["z_push"])
        out["k_push"] = force / (z0 - out["z_push"])
    return out


def _static_spring(rod_params: RodParams, angle: float, force: float,
                   axial_law: AxialLawParams | None, pull_only: bool) -> dict[str, float] | None:
    """:func:`spring_constant_details` by three (two) static solves; None if one failed."""
    out = {"force": float(force)}
    sides = ((0.0, "z0"), (+1.0, "z_pull")) + (() if pull_only else ((-1.0, "z_push"),))
    rest = None
    for sign, name in sides:
        # the loaded rod from the unloaded equilibrium (as the experiment does)
        st = _static_state(rod_params, angle=angle, axial_law=axial_law, tip_force=sign * force,
                           initial=rest)
        if st is None:
            return None
        rest = st if rest is None else rest
        out[name] = st.length_m
    return _spring_values(out, force, pull_only)


def spring_constant(
    rod_params: RodParams,
    angle: float,
    *,
    force: float | None = None,
    sim_params: SimulationParams | None = None,
    settle: SettleOptions = ROD_SETTLE,
    axial_law: AxialLawParams | None = None,
    method: str = "static",
) -> float:
    """Axial spring constant [N/m] at base angle ``angle`` [rad]; see :func:`spring_constant_details`.

    Paper's law (``axial_law`` None or symmetric): the central difference ``k``.  With an
    asymmetric ``axial_law`` the push side is softer by design, so the pull-only value
    ``k_pull`` is returned -- the experiment of Section II-C applies a small *pulling* force --
    and the push is not run.
    """
    pull = _compressive(axial_law)
    det = spring_constant_details(
        rod_params, angle, force=force, sim_params=sim_params, settle=settle, axial_law=axial_law,
        pull_only=pull, method=method,
    )
    return det["k_pull"] if pull else det["k"]


def blocked_force(
    rod_params: RodParams,
    angle: float,
    *,
    sim_params: SimulationParams | None = None,
    settle: SettleOptions = ROD_SETTLE,
    axial_law: AxialLawParams | None = None,
    method: str = "static",
) -> float:
    """Axial force [N] the blocked distal end takes when the base is twisted to ``angle`` [rad].

    Distal node and element fixed at their printed pose (``FixedConstraint``); read as the
    compression of the last element, ``-(Q^T n)_z / e`` with ``n`` PyElastica's internal stress
    (times the element's compression factor ``r_c`` of an asymmetric ``axial_law``).
    ``method``: ``"static"`` (default) or ``"dynamic"``.
    """
    if _check_method(method):
        st = _static_state(rod_params, angle=angle, distal="fixed", axial_law=axial_law)
        if st is not None:
            return st.distal_axial_force_N
    h, law_ref = _build(rod_params, angle, sim_params, distal="fixed", axial_law=axial_law)
    _settle(h, quiet_after=h.sim_params.ramp_time, settle=settle)
    rod = h.rod
    rod.compute_internal_forces_and_torques(np.float64(0.0))
    n_lab = rod.director_collection[..., -1].T @ rod.internal_stress[:, -1]
    factor = 1.0
    if law_ref is not None:
        law = law_ref.instance
        law.apply_forces(rod, np.float64(0.0))  # refresh factor for this state
        rod.external_forces[:] = 0.0  # the probe must not leave a force behind
        factor = float(law.factor[-1])
    return float(-factor * n_lab[2] / rod.dilatation[-1])


_EXPERIMENTS = {
    "holding_torque": holding_torque,
    "minimum_energy_length": minimum_energy_length,
    "spring_constant": spring_constant,
    "blocked_force": blocked_force,
}


def simulate_point(
    rod_params: RodParams,
    characteristic: str,
    angle: float,
    *,
    axial_law: AxialLawParams | None = None,
    method: str = "static",
) -> float:
    """Run the virtual experiment ``characteristic`` at base angle ``angle`` [rad]; SI result.

    ``axial_law``: optional compression-softening law (:mod:`hsa_elastica.physics.compression_law`);
    ``method``: ``"static"`` (static solver, default) or ``"dynamic"`` (dynamic relaxation).
    """
    if characteristic not in _EXPERIMENTS:
        raise ValueError(
            f"characteristic = {characteristic!r} is invalid: must be one of {CHARACTERISTICS}"
        )
    return float(_EXPERIMENTS[characteristic](rod_params, angle, axial_law=axial_law, method=method))
