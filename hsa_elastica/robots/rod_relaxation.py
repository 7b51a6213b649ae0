"""Dynamic relaxation of a single HSA rod (the Section II-C characterization set-ups).

:func:`build_setup` builds a set-up of :func:`~hsa_elastica.robots.builders.build_single_rod`
(motor or free-twist base ramped to its angle / torque, free / twist-locked / fixed distal end,
optional tip force and compression law); :func:`settle_rod` steps it until every node speed is
below ``tol_velocity`` and every angular speed below ``tol_omega`` for ``window`` seconds after
the ramp (the settling loop of every dynamic steady state,
:func:`~hsa_elastica.robots.settling.relax`, with the options :data:`ROD_SETTLE`);
:func:`settling_sim_params` picks the step and a near-critical damping from the rod's slowest
axial / torsional mode; :func:`relax_rod` returns the settled
state as a :class:`~hsa_elastica.robots.rod_statics.RodSteadyState` (``method = "dynamic"``), the
dynamic counterpart of :func:`~hsa_elastica.robots.rod_statics.solve_static_rod`
(``steady_state(rod_params, angle, method="dynamic")``).

The steps are PyElastica's Position Verlet on the handle's operators, or with
``sim_params.integrator = "implicit"`` the implicit integrator
(:mod:`hsa_elastica.engines.implicit`, via :func:`~hsa_elastica.robots.compiled.compiled_engine`).
The characterization experiments (:mod:`hsa_elastica.experiments.characterization`) use these
for their ``method="dynamic"``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.timeloop import max_stable_dt
from hsa_elastica.params import ParameterError, RodParams, SimulationParams
from hsa_elastica.params import integrator as integrator_record
from hsa_elastica.params.base import MAX_DAMPING
from hsa_elastica.physics.compression_law import AxialCompressionLaw, AxialLawParams
from hsa_elastica.robots.settling import SettleOptions, describe_lost, relax, settle_span

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.robots.builders import OperatorRef
    from hsa_elastica.robots.handles import SingleRod
    from hsa_elastica.robots.rod_statics import RodSteadyState

__all__ = [
    "IMPLICIT_SETTLE_STEP",
    "NotSettledError",
    "ROD_SETTLE",
    "SettleOptions",
    "build_setup",
    "relax_rod",
    "rod_speeds",
    "settle_rod",
    "settling_sim_params",
]

#: implicit settling step times the slowest symmetric mode's angular frequency (rad)
IMPLICIT_SETTLE_STEP = 0.25


def _compressive(axial_law: AxialLawParams | None) -> bool:
    """True for an asymmetric compression law (it adds the AxialCompressionLaw forcing)."""
    return axial_law is not None and not axial_law.is_symmetric


class NotSettledError(RuntimeError):
    """A characterization run did not settle within its ``SettleOptions.max_time``, or one of
    its rods lost a turn of twist."""


#: the settling test of the characterization runs (:class:`SettleOptions`): every node slower
#: than 10 um/s and every element turning slower than 1e-3 rad/s for 10 ms, checked every
#: 5 ms, within 2 s of the run's start.  No creep bound: the runs are damped near-critically
#: (:func:`settling_sim_params`), so a creeping rod is a slow one, which the speed bound
#: catches.  The speed bound is 1e-4 to 2e-4 rod lengths per second for the closed HSAs of
#: Good et al. (50-100 mm).
ROD_SETTLE = SettleOptions(tol_velocity=1e-5, tol_omega=1e-3, tol_residual=math.inf,
                           window=0.01, check_interval=0.005, max_time=2.0)


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
    record = integrator_record(integrator)  # ParameterError naming the registered names
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
    if not record.checks_stability_limit:  # the settle needs the slowest mode only
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


def implicit_engine(handle: "SingleRod") -> Any:
    """The :class:`~hsa_elastica.robots.compiled.ImplicitRobot` stepping ``handle`` (made on
    first use, at time 0, and kept on the handle); None for the explicit integrator, which
    steps the handle's operators (PyElastica's Position Verlet)."""
    if integrator_record(handle.sim_params).operator_path:
        return None
    engine = getattr(handle, "_implicit_engine", None)
    if engine is None:
        from hsa_elastica.robots.compiled import compiled_engine

        engine = compiled_engine(handle)
        object.__setattr__(handle, "_implicit_engine", engine)
    return engine


def rod_speeds(handle: Any) -> dict[str, float]:
    """The settling state of a single rod: its largest node speed ``max_speed`` [m/s] and
    largest element angular speed ``platform_omega`` [rad/s] (the key :func:`relax` reads for
    the bodies' angular speed; a single rod has none)."""
    rod = handle.rods[0]
    return {
        "max_speed": float(np.sqrt(np.max(np.sum(rod.velocity_collection ** 2, axis=0)))),
        "platform_omega": float(np.sqrt(np.max(np.sum(rod.omega_collection ** 2, axis=0)))),
    }


def settle_rod(handle: "SingleRod", *, quiet_after: float,
               settle: SettleOptions = ROD_SETTLE) -> float:
    """Step ``handle`` from its present time until settled (:func:`relax`, the settling loop
    of every dynamic steady state, with :func:`rod_speeds` and ``settle``; the test starts at
    ``quiet_after`` [s]); returns the time [s].  With ``sim_params.integrator = "implicit"``
    the steps are the implicit integrator's, and the test also asks for the force balance
    (the static residual).  A blow-up or a step the implicit integrator cannot take raises
    :class:`~hsa_elastica.engines.timeloop.SimulationFailed` naming the time and the rod
    (``"rod"``); a run that does not settle within ``settle.max_time``, or whose rod lost a
    turn of twist, :class:`NotSettledError`."""
    engine = implicit_engine(handle)
    runner: Any = handle if engine is None else engine
    span = settle_span(settle, ramp=float(quiet_after), ramp_time=0.0, dt=handle.dt,
                       start=float(handle.time))
    sp = handle.sim_params
    run = relax(runner, rod_speeds, settle, span, dampings=(sp.damping, sp.rotational_damping))
    if run.divergence is not None:
        raise run.divergence
    if run.lost:
        raise NotSettledError(f"characterization run at t = {run.t:.4g} s: {describe_lost(run.lost)}")
    if not run.converged:
        raise NotSettledError(
            f"characterization run not settled after {run.t:.3g} s: max speed "
            f"{run.state['max_speed']:.3g} m/s (tol {settle.tol_velocity:.3g}), max angular "
            f"speed {run.state['platform_omega']:.3g} rad/s (tol {settle.tol_omega:.3g})"
        )
    return float(run.t)


def build_setup(
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
    implicit integrator's spring-constant runs set; an array: that
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
    settle: SettleOptions = ROD_SETTLE,
) -> "RodSteadyState":
    """Steady state of a single-rod set-up by dynamic relaxation: the set-up of
    :func:`~hsa_elastica.robots.rod_statics.solve_static_rod` (same arguments: base ``angle``
    [rad] or ``torque`` [N m], ``distal`` end, ``tip_force`` [N] on the distal node, ramped
    with the actuation) run from rest until settled (:class:`SettleOptions`), with the time
    step, damping and integrator of ``sim_params`` (default :func:`settling_sim_params`;
    ``integrator = "implicit"`` steps the implicit integrator).  Returns a
    :class:`~hsa_elastica.robots.rod_statics.RodSteadyState` with ``method = "dynamic"``
    (``stable`` None); raises :class:`NotSettledError` when it does not settle in
    ``settle.max_time``."""
    import time as _time

    from hsa_elastica.physics.actuation import twist_about_axis
    from hsa_elastica.robots.rod_statics import RodSteadyState, check_rod_loads

    wall0 = _time.perf_counter()
    f = check_rod_loads(tip_force, angle, torque)
    if sim_params is None:
        scale = angle if base == "motor" else torque / max(rod_params.B_z, 1e-300) * rod_params.length
        sim_params = settling_sim_params(rod_params, angle=float(scale))
    h, law_ref = build_setup(rod_params, float(angle), sim_params, distal=distal, base=base,
                        torque=float(torque), axial_law=axial_law,
                        tip_load=f if np.any(f != 0.0) else False)
    reference = np.array(h.rod.director_collection[..., 0])
    t = settle_rod(h, quiet_after=h.sim_params.ramp_time, settle=settle)
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
