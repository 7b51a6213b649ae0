"""The one settling loop of every dynamic steady state, with its one options type
:class:`SettleOptions`: :func:`relax` advances a handle in chunks and applies the settling
test described in :mod:`hsa_elastica.robots.steady_state` (speeds, damper balance, static
residual, held over a window) after each one.  Robots
(:func:`~hsa_elastica.robots.steady_state.solve_steady_state`) and stacks
(:func:`~hsa_elastica.robots.stack_steady_state.solve_stack_steady_state`) run it through
:func:`build_and_settle`; the single-rod characterization runs through
:func:`~hsa_elastica.robots.rod_relaxation.settle_rod`.
"""

from __future__ import annotations

import logging
import math
import time as _time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from hsa_elastica.engines.timeloop import SimulationFailed, SolverFailed
from hsa_elastica.params import ParameterError, check_run_length, is_finite_number
from hsa_elastica.robots.settling_checks import (  # re-exported: the tests of a check
    TOL_STATIC_RESIDUAL,
    TOL_WINDING,
    Relaxation,
    creep_factor,
    describe_lost,
    equilibrium_residual_ok,
    lost_twist,
    lost_twist_model,
)
from hsa_elastica.robots.settling_watch import relax_watched, watch_plan

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)

__all__ = [
    "TOL_STATIC_RESIDUAL",
    "TOL_WINDING",
    "Relaxation",
    "DEFAULT_SETTLE",
    "SettleOptions",
    "check_settle",
    "settle_span",
    "build_and_settle",
    "raise_divergence",
    "divergence_summary",
    "append_final_sample",
    "equilibrium_residual_ok",
    "describe_lost",
    "lost_twist",
    "lost_twist_model",
    "positive",
    "relax",
]


def positive(name: str, value: Any, unit: str, *, allow_zero: bool = False) -> float:
    """``value`` as a float if it is a finite number > 0 (>= 0 with ``allow_zero``), else
    ``ParameterError`` naming ``name`` and the range (a bool or a string is not a number)."""
    ok = is_finite_number(value) and (float(value) >= 0.0 if allow_zero else float(value) > 0.0)
    if not ok:
        rel = ">= 0" if allow_zero else "> 0"
        raise ParameterError(f"{name} = {value!r} is invalid: must be a finite number {rel} ({unit})")
    return float(value)


def append_final_sample(robot: Any, t: float) -> None:
    """Record the stopping state if the recorders did not sample it (keeps frames aligned)."""
    if not robot.recorders:
        return
    systems: dict[str, Any] = {}
    # a stack's recorders are keyed "seg{k}/rod{i}", "seg{k}/platform", "seg{k}/sensors"
    segments = getattr(robot, "segments", None) or [robot]
    for k, seg in enumerate(segments):
        prefix = "" if seg is robot else f"seg{k}/"
        systems.update({f"{prefix}rod{i}": r for i, r in enumerate(seg.rods)})
        systems[f"{prefix}platform"] = seg.platform
        systems[f"{prefix}sensors"] = seg.platform  # the sensor recorder samples the whole robot
    for key, rec in robot.recorders.items():
        arr = rec.to_array()
        if arr.shape[0] == 0 or abs(float(arr[-1, 0]) - t) > 0.5 * robot.dt:
            rec.record(systems[key], t)


def relax(
    robot: Any,
    state_fn: Callable[[Any], dict[str, Any]],
    options: SettleOptions,
    span: tuple[float, float],
    *,
    dampings: tuple[float, float],
    stop_when_settled: bool = True,
    progress: bool = False,
) -> Relaxation:
    """Advance ``robot`` (a robot, stack or single-rod handle, fused or per-rod) in chunks of
    ``options.check_interval`` [s] up to ``t_max`` [s], applying the settling test of the
    module doc with the bounds of ``options`` after every chunk that ends at or after
    ``ramp_end`` [s] (``span = (ramp_end, t_max)``, :func:`settle_span`).  ``state_fn(robot)``
    gives at least ``max_speed`` [m/s] (every rod node and body) and ``platform_omega``
    [rad/s] (every body); ``dampings`` = (translational, rotational) damping rates [1/s] of
    the creep bound.  ``stop_when_settled`` False: run to ``t_max``, still reporting whether
    the test held over the last window.
    A divergence, a step the implicit integrator refused or a failed force law
    (:class:`~hsa_elastica.engines.timeloop.SimulationFailed`) stops the run and is returned,
    not raised, as ``divergence``; so does a rod that lost a turn of twist
    (:func:`lost_twist`, checked after every chunk: ``converged = False``, ``lost``).
    A robot on the implicit integrator runs the same checks in its compiled loop
    (:func:`~hsa_elastica.robots.settling_watch.relax_watched`).  The result's ``wall_time_s``
    is the wall-clock time of the loop, from after its set-up (the settling watch's, with
    the kernels it calls loaded) to the stop."""
    ramp_end, t_max = span
    o = options
    tol_velocity, tol_omega, tol_residual = o.tol_velocity, o.tol_omega, o.tol_residual
    window, max_speed, check_interval = o.window, o.max_speed, o.check_interval
    dt = robot.dt
    steps_per_check = max(1, int(round(check_interval / dt)))
    bar = _progress_bar(t_max) if progress else None
    watch = watch_plan(robot, state_fn, steps_per_check)
    run = Relaxation(float(robot.time), 0, None, False, state_fn(robot), None)
    # force per unit mass the dampers balance at 1 m/s (1 rad/s): solve_steady_state's tol_residual
    bounds = (tol_velocity, tol_omega, tol_residual, creep_factor(dampings[0], dt),
              creep_factor(dampings[1], dt))
    if watch is None:  # (the settling watch loads its own)
        _load_kernels(robot)
    loop0 = _time.perf_counter()
    try:
        if watch is not None:  # the implicit integrator: the checks inside its compiled loop
            return relax_watched(
                robot, state_fn, watch, t_max=t_max, per_check=steps_per_check,
                max_speed=max_speed, bar=bar, ramp_end=ramp_end, dampings=dampings,
                tol_velocity=tol_velocity, tol_omega=tol_omega, tol_residual=tol_residual,
                window=window, stop_when_settled=stop_when_settled)
        _check_loop(robot, state_fn, run, steps_per_check, bounds, t_max=t_max,
                    ramp_end=ramp_end, window=window, stop_when_settled=stop_when_settled,
                    max_speed=max_speed, bar=bar)
    except SimulationFailed as exc:  # a blow-up, a refused implicit step
        _stopped(run, exc, robot, watch is not None)
    except FloatingPointError as exc:  # a force law that failed (a non-positive stiffness)
        _stopped(run, SolverFailed(run.t, "force law", run.t, str(exc), str(exc)), robot,
                 watch is not None)
    finally:
        if bar is not None:
            bar.close()
    run.lost = run.lost or None
    run.wall_time_s = _time.perf_counter() - loop0
    return run


def _check_loop(
    robot: Any, state_fn: Callable[[Any], dict[str, Any]], run: Relaxation, per_check: int,
    bounds: tuple[float, float, float, float, float], *, t_max: float, ramp_end: float,
    window: float, stop_when_settled: bool, max_speed: float, bar: Any,
) -> None:
    """:func:`relax`'s loop on the per-check path: chunks of ``per_check`` steps up to
    ``t_max`` [s], each followed by the lost-twist test and the settling test (``bounds``: the
    arguments of :func:`_calm` after the state), updating ``run`` in place."""
    dt = robot.dt
    due = -math.inf  # the static residual is next tested at a settled check from this time on
    while run.t < t_max - 0.5 * dt:
        n = min(per_check, int(math.ceil((t_max - run.t) / dt - 1e-9)))
        # divergence check (non-finite, speed > max_speed, overstretched rod) each chunk
        t_new = float(robot.run(n * dt, check_every=n, max_speed=max_speed))
        run.n_steps += n
        if bar is not None:
            bar.update(t_new - run.t)
        run.t = t_new
        run.state = state_fn(robot)
        # a rod that lost a turn of twist never gets it back: stop, not converged
        run.lost = lost_twist(robot)
        if run.lost:
            run.converged = False
            log.warning("at t = %.4g s %s: not converged", run.t, describe_lost(run.lost))
            return
        calm = _calm(run.state, *bounds)
        if run.t >= ramp_end - 0.5 * dt and calm:
            if run.settled_since is None:
                run.settled_since, due = run.t, -math.inf
            run.converged = run.t - run.settled_since >= window - 0.5 * dt
            if run.converged and (run.t >= due or run.t >= t_max - 0.5 * dt):
                if not equilibrium_residual_ok(robot):  # the force balance (module doc)
                    run.settled_since, run.converged = None, False
                    continue
                due = run.t + window - 0.5 * dt
            if run.converged and stop_when_settled:
                return
        else:
            run.settled_since = None
            run.converged = False


def _stopped(run: Relaxation, failure: SimulationFailed, robot: Any, watched: bool) -> None:
    """Record the failure that stopped a run (not converged); a watched run's time is the
    handle's (the compiled loop's checks raise from inside its call)."""
    run.divergence = failure
    run.converged = False
    if watched:
        run.t = float(robot.time)


def _load_kernels(robot: Any) -> None:
    """Load the kernels of the per-check loop before its clock starts (a compiled handle's
    :meth:`~hsa_elastica.robots.compiled.FastRobot.load_kernels` and the lost-twist test,
    which only read the state; the per-rod operators have none of their own)."""
    if hasattr(robot, "load_kernels"):
        lost_twist(robot)
        robot.load_kernels()


def _calm(state: dict[str, Any], tol_velocity: float, tol_omega: float,
          tol_residual: float, creep_t: float, creep_r: float) -> bool:
    """The settling test's bounds at every check (speeds, creep; module doc)."""
    return (
        state["max_speed"] < tol_velocity
        and state["platform_omega"] < tol_omega
        and state["max_speed"] * creep_t < tol_residual
        and state["platform_omega"] * creep_r < tol_residual / tol_velocity * tol_omega
    )


def _progress_bar(t_max: float) -> Any:
    """The tqdm bar of a settling run, in simulated seconds (shown after 0.5 s)."""
    from hsa_elastica.io.progress import progress_bar

    return progress_bar(total=t_max, desc="simulated", unit="s", delay=0.5,
                        bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")


# -- the options and the set-up shared by every dynamic settling run --------------------------
@dataclass(frozen=True)
class SettleOptions:
    """When a dynamic run counts as settled, and when it gives up (SI units): the one options
    type of every settling run (robots and stacks, :func:`relax`; the single-rod
    characterization runs, :func:`~hsa_elastica.robots.rod_relaxation.settle_rod`).

    Attributes
    ----------
    tol_velocity : float
        Bound on every rod node speed and body speed [m/s].
    tol_omega : float
        Bound on every body's angular speed (a single rod: every element's) [rad/s].
    tol_residual : float
        The creep bound [m/s^2] (:mod:`hsa_elastica.robots.steady_state`, "The creep bound");
        ``math.inf``: none (the near-critically damped single-rod runs).
    max_speed : float
        Runaway guard [m/s]: a faster node or body stops the run as diverged.
    window : float
        Simulated time the bounds must hold for, at every check [s] (0: one check).
    check_interval : float
        Simulated time between two checks [s] (rounded to whole steps, at least one).
    max_time : float or None
        Give up at this simulated time past the run's start [s] (None: the end of the motor
        ramp + 3 s); checked against the run's step when it starts
        (:func:`settle_span`: at most :data:`hsa_elastica.params.MAX_STEPS` steps).

    Invalid values raise ``ParameterError`` naming the field and its range.
    """

    tol_velocity: float = 1e-4
    tol_omega: float = 1e-3
    tol_residual: float = 5e-3
    max_speed: float = 100.0
    window: float = 0.05
    check_interval: float = 0.002
    max_time: float | None = None

    def __post_init__(self) -> None:
        checked = {
            "tol_velocity": positive("tol_velocity", self.tol_velocity, "m/s"),
            "max_speed": positive("max_speed", self.max_speed, "m/s"),
            "tol_omega": positive("tol_omega", self.tol_omega, "rad/s"),
            "tol_residual": math.inf if self.tol_residual == math.inf
            else positive("tol_residual", self.tol_residual, "m/s^2"),
            "window": positive("window", self.window, "s", allow_zero=True),
            "check_interval": positive("check_interval", self.check_interval, "s"),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)


#: the robots' and stacks' settling test (the defaults of :class:`SettleOptions`)
DEFAULT_SETTLE = SettleOptions()


def check_settle(settle: Any) -> SettleOptions:
    """``settle`` if it is a :class:`SettleOptions`, else ``ParameterError`` naming it."""
    if not isinstance(settle, SettleOptions):
        raise ParameterError(f"settle = {settle!r} is invalid: must be a SettleOptions")
    return settle


def settle_span(options: SettleOptions, *, ramp: Any, ramp_time: float, dt: float,
                start: float = 0.0) -> tuple[float, float]:
    """``(ramp_end, t_max)`` [s] of a run from ``start`` [s] with ``options``: the settling
    test starts at the end of the motor ramp (``ramp``: the time [s] it ends; None:
    ``ramp_time``, the parameters' ramp; a callable: at ``start``) and the run gives up at ``start +
    options.max_time`` (None: ``ramp_end + 3 s``), at most
    :data:`hsa_elastica.params.MAX_STEPS` steps of ``dt`` [s] (the command line's cap).
    ``ParameterError`` naming ``settle`` (not a :class:`SettleOptions`), ``ramp`` or
    ``max_time`` and the range otherwise."""
    check_settle(options)
    if ramp is None:
        ramp_end = float(ramp_time)
    elif callable(ramp):
        ramp_end = float(start)
    else:
        ramp_end = positive("ramp", ramp, "s", allow_zero=True)
    span = ramp_end + 3.0 - start if options.max_time is None else options.max_time
    return ramp_end, start + check_run_length(span, dt, "max_time")


def build_and_settle(
    build: Callable[[], Any], params: Any, state_fn: Callable[[Any], dict[str, Any]],
    options: SettleOptions, span: tuple[float, float], *, fast: bool,
    dampings: tuple[float, float], record: bool, stop_when_settled: bool, progress: bool,
) -> tuple[Any, Relaxation, "pd.DataFrame | None"]:
    """The dynamic run of a steady-state solver, robot or stack: with ``record``, check that
    the recordings of ``params`` (a robot's, or a stack's list) fit in memory up to ``t_max``
    (``span = (ramp_end, t_max)``); ``build()`` the handle and run it until it has settled
    (:func:`relax`), stepped by the compiled engine its ``simulation.integrator`` selects if
    ``fast``, else by the per-rod operators.  With ``record`` the stopping state is appended
    to the recordings (unless the run diverged).  Returns the stepped handle, the relaxation
    and the diagnostics (None without ``record``).  The relaxation's ``setup_wall_time_s`` is
    the wall-clock time from the call to the start of the simulation loop (the build,
    compiling the model, the engine's set-up, loading the kernels the loop calls), its
    ``wall_time_s`` the loop's."""
    if record:
        from hsa_elastica.io.recording import check_recording_size

        check_recording_size(params, span[1])
    wall0 = _time.perf_counter()
    robot = build()
    if fast:
        from hsa_elastica.robots.compiled import compiled_engine

        robot = compiled_engine(robot)
    relaxed = relax(robot, state_fn, options, span, dampings=dampings,
                    stop_when_settled=stop_when_settled, progress=progress)
    relaxed.setup_wall_time_s = _time.perf_counter() - wall0 - relaxed.wall_time_s
    diagnostics = None
    if record:
        if relaxed.divergence is None:
            append_final_sample(robot, relaxed.t)
        diagnostics = robot.diagnostics()
    return robot, relaxed, diagnostics


def raise_divergence(relaxed: Relaxation, result: Any) -> None:
    """Raise the failure that stopped a run, if any, with the partial ``result`` (the pose at
    the last good check, everything recorded so far) as its ``result`` attribute: the caller
    can save it, nothing computed is lost."""
    if relaxed.divergence is not None:
        relaxed.divergence.result = result
        raise relaxed.divergence


def divergence_summary(divergence: SimulationFailed | None) -> dict[str, Any] | None:
    """The ``divergence`` entry of a steady-state result: time [s], last good time [s],
    system, reason and message of the run's divergence (None if it did not diverge)."""
    if divergence is None:
        return None
    return {
        "time_s": divergence.time,
        "last_good_time_s": divergence.last_good_time,
        "system": divergence.name,
        "reason": divergence.reason,
        "message": str(divergence),
    }
