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
node speed below ``tol_speed`` and every angular speed below ``tol_omega`` for ``window``
seconds after the actuation ramp (not after a fixed long time).  :func:`settling_sim_params`
picks ``dt`` and a near-critical damping from the rod's slowest axial/torsional mode so that a
run takes a few thousand steps.  Both agree to the settling tolerance (tested).  The dynamic
runs step the handle's operators (PyElastica's Position Verlet) or, with
``sim_params.integrator = "implicit"`` (``settling_sim_params(rod, integrator="implicit")``:
a step 17x larger for the Table I rod, a few hundred steps per run), the implicit integrator
(:mod:`hsa_elastica.engines.implicit`); both settle where the static solver says to 1e-5
(``tests/test_implicit_rod.py``).  :func:`relax_rod` is the dynamic counterpart of
``solve_static_rod`` (``steady_state(rod_params, angle, method="dynamic")``).

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from elastica.external_forces import NoForces

from hsa_elastica.engines.timeloop import max_stable_dt
from hsa_elastica.physics.compression_law import AxialCompressionLaw, AxialLawParams
from hsa_elastica.params import ParameterError, RodParams, SimulationParams
from hsa_elastica.params.base import MAX_DAMPING
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

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.robots.builders import OperatorRef, SingleRod
    from hsa_elastica.robots.rod_statics import RodSteadyState

log = logging.getLogger(__name__)

#: ``method`` of the experiments: the static solver (default) or dynamic relaxation
METHODS = ("static", "dynamic")
#: implicit settling step times the slowest symmetric mode's angular frequency (rad)
IMPLICIT_SETTLE_STEP = 0.25

__all__ = [
    "CHARACTERISTICS",
    "DATA_UNITS",
    "DATA_COLUMNS",
    "NotSettledError",
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


class NotSettledError(RuntimeError):
    """A characterization run did not settle within ``SettleOptions.max_time``."""


# --------------------------------------------------------------------------------------------
# settling
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SettleOptions:
    """When a characterization run counts as settled.

    Attributes
    ----------
    tol_speed : float
        Node speed tolerance as a fraction of the printed length per second [1/s]
        (``1e-4`` -> 7.5 um/s for a 75 mm rod).
    tol_omega : float
        Angular speed tolerance [rad/s].
    window : float
        The rod must stay below both tolerances for this many seconds [s].
    max_time : float
        Give up (``NotSettledError``) after this simulated time past the ramp [s].
    check_every : int
        Steps between two checks.
    """

    tol_speed: float = 1e-4
    tol_omega: float = 1e-3
    window: float = 0.01
    max_time: float = 2.0
    check_every: int = 20

    def __post_init__(self) -> None:
        for name in ("tol_speed", "tol_omega", "window", "max_time"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (
                math.isfinite(v) and v > 0
            ):
                raise ParameterError(f"SettleOptions.{name} = {v!r} is invalid: must be a finite number > 0")
        if isinstance(self.check_every, bool) or not isinstance(self.check_every, int) or self.check_every < 1:
            raise ParameterError(
                f"SettleOptions.check_every = {self.check_every!r} is invalid: must be an integer >= 1"
            )


def _slowest_rate(rod: RodParams) -> float:
    """Lowest angular frequency [rad/s] of the symmetric (axial, torsional) modes, untwisted.

    Axial, fixed-free: ``pi/2 c_a / L``, ``c_a = sqrt(E0 / rho)``; torsional, both ends
    twist-held: ``pi c_t / L``, ``c_t = sqrt(B_z / (rho 2 I))``.
    """
    c_a = math.sqrt(rod.youngs_modulus / rod.density)
    c_t = math.sqrt(rod.B_z / (rod.density * 2.0 * rod.second_moment))
    return min(0.5 * math.pi * c_a, math.pi * c_t) / rod.length


def settling_sim_params(rod: RodParams, *, angle: float = math.pi,
                        integrator: str = "explicit") -> SimulationParams:
    """Time step and damping for a fast quasi-static settle of ``rod`` (Section II-C runs).

    * damping ``gamma = 2 omega_min`` [1/s] (uniform, translational = rotational), i.e. critical
      for the slowest symmetric mode, so every mode decays at least like ``exp(-omega_min t)``
      (at most ``SimulationParams``' ``MAX_DAMPING``, 1000 1/s: the paper robot's 100 mm rod,
      ``omega_min`` = 750 rad/s, settles slightly under-critically);
    * ``dt = 0.25 l / c_max`` [s] with ``c_max`` the axial wave speed at the stiffest point of
      the law up to ``angle`` (PositionVerlet is stable for ``omega dt < 2``; the element
      modes are at most ``2 c / l``), at most :func:`~hsa_elastica.engines.timeloop.max_stable_dt`;
    * ramp time ``4 / omega_min`` [s], linear ramps are avoided (smooth quintic).

    ``integrator = "implicit"``: the generalized-alpha integrator
    (:mod:`hsa_elastica.engines.implicit`) at ``dt = IMPLICIT_SETTLE_STEP / omega_min`` (16
    steps through the ramp; the settle needs the slowest mode, not the element waves).
    """
    if integrator not in ("explicit", "implicit"):
        raise ParameterError(
            f"integrator = {integrator!r} is invalid: must be 'explicit' or 'implicit'")
    w = _slowest_rate(rod)
    n = rod.n_elements
    l0 = rod.length / n
    kmax = abs(angle) / ((n - 1) * l0)
    if rod.is_nonlinear:  # the quadratic law is evaluated on the clipped range only
        kmax = min(kmax, rod.eps_max / rod.C_eps)
    ks = np.linspace(0.0, kmax, 9)  # the quadratic law may peak inside the range
    e_law = float(np.max(rod.youngs_modulus + rod.E_slope * ks + rod.E_quad * ks**2))
    e_max = max(rod.youngs_modulus, e_law, rod.shear_modulus)
    c_max = math.sqrt(e_max / rod.density)
    # (and never above the builders' stability check, which covers the whole clipped twist
    # range: a quadratic law may be stiffer beyond ``angle`` than inside it)
    dt = min(0.25 * l0 / c_max, max_stable_dt(rod)[0])
    if integrator == "implicit":
        dt = IMPLICIT_SETTLE_STEP / w
    gamma = min(2.0 * w, MAX_DAMPING)
    return SimulationParams(
        dt=dt,
        damping=gamma,
        rotational_damping=gamma,
        ramp_time=4.0 / w,
        ramp_shape="smooth",
        record_fps=1.0 / dt,
        integrator=integrator,
    )


def _implicit_engine(handle: "SingleRod") -> Any:
    """The :class:`~hsa_elastica.robots.compiled.ImplicitRobot` stepping ``handle`` (made on
    first use, at time 0, and kept on the handle); None for the explicit integrator, which
    steps the handle's operators (PyElastica's Position Verlet)."""
    if handle.sim_params.integrator != "implicit":
        return None
    engine = getattr(handle, "_implicit_engine", None)
    if engine is None:
        from hsa_elastica.robots.compiled import compiled_engine

        engine = compiled_engine(handle)
        object.__setattr__(handle, "_implicit_engine", engine)
    return engine


def _settle(handle: "SingleRod", time: float, *, quiet_after: float, options: SettleOptions) -> float:
    """Step ``handle`` until settled (see :class:`SettleOptions`); returns the time [s].  With
    ``sim_params.integrator = "implicit"`` the steps are the implicit integrator's (a step it
    cannot take raises ``ImplicitStepFailed``, a blow-up ``SimulationDiverged``, both naming
    the time; the rod is ``"rod"``)."""
    rod = handle.rod
    sim = handle.simulator
    step = handle.timestepper.step
    dt = handle.dt
    engine = _implicit_engine(handle)
    v_tol = options.tol_speed * handle.rod_params.length
    quiet = 0.0
    t = np.float64(time)
    deadline = quiet_after + options.max_time
    while True:
        if engine is not None:
            t = np.float64(engine.run(options.check_every * dt))
        else:
            for _ in range(options.check_every):
                t = step(sim, t, dt)
        v = float(np.max(np.abs(rod.velocity_collection)))
        w = float(np.max(np.abs(rod.omega_collection)))
        if not (math.isfinite(v) and math.isfinite(w)):
            raise NotSettledError(f"characterization run diverged at t = {float(t):.4g} s")
        if float(t) >= quiet_after and v < v_tol and w < options.tol_omega:
            quiet += options.check_every * dt
            if quiet >= options.window:
                return float(t)
        else:
            quiet = 0.0
        if float(t) > deadline:
            raise NotSettledError(
                f"characterization run not settled after {float(t):.3g} s: max speed {v:.3g} m/s "
                f"(tol {v_tol:.3g}), max angular speed {w:.3g} rad/s (tol {options.tol_omega:.3g})"
            )


class _AdjustableTipForce(NoForces):
    """Axial force [N] on the last node, along lab +z; ``force`` may be changed between settles."""

    def __init__(self, *, force: float = 0.0) -> None:
        super().__init__()
        self.force = float(force)

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        system.external_forces[2, -1] += self.force


def _build(
    rod: RodParams,
    angle: float,
    sim_params: SimulationParams | None,
    *,
    distal: str,
    base: str = "motor",
    torque: float = 0.0,
    finalize: bool = True,
    axial_law: AxialLawParams | None = None,
    tip_load: "bool | NDArray[np.float64]" = False,
) -> "tuple[SingleRod, OperatorRef[AxialCompressionLaw] | None]":
    """Single rod of the Section II-C set-ups; with an asymmetric ``axial_law`` an
    :class:`AxialCompressionLaw` forcing is added after the auxetic coupling (returned ref).
    ``tip_load``: an ``EndpointForces`` on the tip (True: zero, whose compiled load row the
    implicit integrator's spring-constant runs set, :class:`_TableTipForce`; an array: that
    force [N], ramped over the ramp time)."""
    from hsa_elastica.physics.actuation import Ramp
    from hsa_elastica.robots.builders import OperatorRef, build_single_rod

    if not isinstance(rod, RodParams):
        raise ParameterError(f"rod_params = {rod!r} is invalid: must be a RodParams")
    if not math.isfinite(angle):
        raise ParameterError(f"angle = {angle!r} is invalid: must be a finite number (rad)")
    sp = settling_sim_params(rod, angle=angle) if sim_params is None else sim_params
    with_law = _compressive(axial_law)
    h = build_single_rod(
        rod,
        sp,
        base=base,
        angle=Ramp(target=float(angle), duration=sp.ramp_time, shape=sp.ramp_shape),
        torque=Ramp(target=float(torque), duration=sp.ramp_time, shape=sp.ramp_shape),
        distal=distal,
        tip_force=(np.zeros(3) if tip_load is True else tip_load) if tip_load is not False
        else None,
        record=False,
        finalize=finalize and not with_law,
    )
    if not with_law:
        return h, None
    assert axial_law is not None
    ref: OperatorRef[AxialCompressionLaw] = OperatorRef()
    h.simulator.add_forcing_to(h.rod).using(
        ref.capture(AxialCompressionLaw), **AxialCompressionLaw.kwargs_for(rod, axial_law)
    )
    if finalize:
        h.simulator.finalize()
    return h, ref


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
        loads = engine.model.loads
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
    options: SettleOptions,
    tip_force: bool = False,
    axial_law: AxialLawParams | None = None,
) -> tuple["SingleRod", float, Any]:
    """The twisted rod (distal twist locked) settled; with ``tip_force`` also the handle of an
    adjustable axial tip force (an object with a ``force`` [N] attribute), else None."""
    implicit = sim_params is not None and sim_params.integrator == "implicit"
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
    t = _settle(h, 0.0, quiet_after=h.sim_params.ramp_time, options=options)
    return h, t, tip


def holding_torque(
    rod_params: RodParams,
    angle: float,
    *,
    sim_params: SimulationParams | None = None,
    options: SettleOptions = SettleOptions(),
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
    h, _, _ = _twisted_free_rod(rod_params, angle, sim_params, options, axial_law=axial_law)
    rod = h.rod
    rod.compute_internal_forces_and_torques(np.float64(0.0))
    return float(-rod.internal_couple[2, 0] / rod.voronoi_dilatation[0] ** 3)


def twist_angle_under_torque(
    rod_params: RodParams,
    torque: float,
    *,
    sim_params: SimulationParams | None = None,
    options: SettleOptions = SettleOptions(),
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
    _settle(h, 0.0, quiet_after=sp.ramp_time, options=options)
    return base_twist_angle(h.rod, reference)


def minimum_energy_length(
    rod_params: RodParams,
    angle: float,
    *,
    sim_params: SimulationParams | None = None,
    options: SettleOptions = SettleOptions(),
    axial_law: AxialLawParams | None = None,
    method: str = "static",
) -> float:
    """Steady-state length [m] (tip z - base z) of the rod with base angle ``angle`` [rad]
    (``method``: ``"static"``, default, or ``"dynamic"``)."""
    if _check_method(method):
        st = _static_state(rod_params, angle=angle, axial_law=axial_law)
        if st is not None:
            return st.length_m
    h, _, _ = _twisted_free_rod(rod_params, angle, sim_params, options, axial_law=axial_law)
    pos = h.rod.position_collection
    return float(pos[2, -1] - pos[2, 0])


def spring_constant_details(
    rod_params: RodParams,
    angle: float,
    *,
    force: float | None = None,
    sim_params: SimulationParams | None = None,
    options: SettleOptions = SettleOptions(),
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
    h, t, tip = _twisted_free_rod(rod_params, angle, sim_params, options, tip_force=True,
                                  axial_law=axial_law)
    pos = h.rod.position_collection
    z0 = float(pos[2, -1] - pos[2, 0])
    out = {"z0": z0, "force": float(force)}
    sides = ((+1.0, "z_pull"),) if pull_only else ((+1.0, "z_pull"), (-1.0, "z_push"))
    for sign, name in sides:
        tip.force = sign * force
        t = _settle(h, t, quiet_after=t, options=options)
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
    options: SettleOptions = SettleOptions(),
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
        rod_params, angle, force=force, sim_params=sim_params, options=options, axial_law=axial_law,
        pull_only=pull, method=method,
    )
    return det["k_pull"] if pull else det["k"]


def blocked_force(
    rod_params: RodParams,
    angle: float,
    *,
    sim_params: SimulationParams | None = None,
    options: SettleOptions = SettleOptions(),
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
    _settle(h, 0.0, quiet_after=h.sim_params.ramp_time, options=options)
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


def relax_rod(
    rod_params: RodParams,
    *,
    angle: float = 0.0,
    torque: float = 0.0,
    base: str = "motor",
    distal: str = "twist_locked",
    tip_force: "float | NDArray[np.float64] | Any" = 0.0,
    axial_law: AxialLawParams | None = None,
    sim_params: SimulationParams | None = None,
    options: SettleOptions = SettleOptions(),
) -> "RodSteadyState":
    """Steady state of a single-rod set-up by dynamic relaxation: the set-up of
    :func:`~hsa_elastica.robots.rod_statics.solve_static_rod` (same arguments: base ``angle``
    [rad] or ``torque`` [N m], ``distal`` end, ``tip_force`` [N] on the distal node, ramped
    with the actuation) run from rest until settled (:class:`SettleOptions`), with the time
    step, damping and integrator of ``sim_params`` (default :func:`settling_sim_params`;
    ``integrator = "implicit"`` steps the implicit integrator).  Returns a
    :class:`~hsa_elastica.robots.rod_statics.RodSteadyState` with ``method = "dynamic"``
    (``stable`` None); raises :class:`NotSettledError` when it does not settle in
    ``options.max_time``."""
    import time as _time

    from hsa_elastica.physics.actuation import twist_about_axis
    from hsa_elastica.robots.rod_statics import RodSteadyState

    wall0 = _time.perf_counter()
    f = np.array(tip_force, dtype=np.float64).reshape(-1)
    if f.shape == (1,):
        f = np.array([0.0, 0.0, f[0]])
    if f.shape != (3,) or not np.all(np.isfinite(f)):
        raise ParameterError(
            f"tip_force = {tip_force!r} is invalid: must be a number or 3 finite numbers (N)")
    for name, v in (("angle", angle), ("torque", torque)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not math.isfinite(v):
            raise ParameterError(f"{name} = {v!r} is invalid: must be a finite number")
    if sim_params is None:
        scale = angle if base == "motor" else torque / max(rod_params.B_z, 1e-300) * rod_params.length
        sim_params = settling_sim_params(rod_params, angle=float(scale))
    h, law_ref = _build(rod_params, float(angle), sim_params, distal=distal, base=base,
                        torque=float(torque), axial_law=axial_law,
                        tip_load=f if np.any(f != 0.0) else False)
    reference = np.array(h.rod.director_collection[..., 0])
    t = _settle(h, 0.0, quiet_after=h.sim_params.ramp_time, options=options)
    rod = h.rod
    rod.compute_internal_forces_and_torques(np.float64(t))
    n_lab = rod.director_collection[..., -1].T @ rod.internal_stress[:, -1]
    factor = 1.0
    if law_ref is not None:
        law = law_ref.instance
        law.apply_forces(rod, np.float64(t))  # refresh factor for this state
        rod.external_forces[:] = 0.0
        factor = float(law.factor[-1])
    pos = rod.position_collection
    return RodSteadyState(
        converged=True,
        method="dynamic",
        iterations=0,
        stable=None,
        wall_time_s=_time.perf_counter() - wall0,
        base_angle_rad=float(twist_about_axis(
            reference, np.ascontiguousarray(rod.director_collection[..., 0]))),
        torque_Nm=float(torque),
        tip_force_N=f,
        length_m=float(pos[2, -1] - pos[2, 0]),
        holding_torque_Nm=float(-rod.internal_couple[2, 0] / rod.voronoi_dilatation[0] ** 3),
        distal_axial_force_N=float(-factor * n_lab[2] / rod.dilatation[-1]),
        positions_m=pos.copy(),
        directors=rod.director_collection.copy(),
        message=f"settled at t = {t:.6g} s ({h.sim_params.integrator} integrator)",
    )


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
