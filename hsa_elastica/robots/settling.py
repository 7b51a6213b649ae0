"""The settling loop of the dynamic steady states (single robots:
:func:`~hsa_elastica.robots.steady_state.solve_steady_state`; stacks:
:func:`~hsa_elastica.robots.stack_steady_state.solve_stack_steady_state`): :func:`relax`
advances a robot or stack handle in chunks and applies the settling test described in
:mod:`hsa_elastica.robots.steady_state` (speeds, damper balance, static residual, held over a
window) after each one.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from hsa_elastica.engines.timeloop import SimulationDiverged
from hsa_elastica.physics.actuation import MotorAngleBC, winding_defect

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

log = logging.getLogger(__name__)

__all__ = [
    "TOL_STATIC_RESIDUAL",
    "TOL_WINDING",
    "Relaxation",
    "SettleSettings",
    "settle_settings",
    "settle",
    "divergence_summary",
    "append_final_sample",
    "equilibrium_residual_ok",
    "describe_lost",
    "lost_twist",
    "lost_twist_model",
    "positive",
    "relax",
]


def positive(name: str, value: float, unit: str, *, allow_zero: bool = False) -> float:
    v = float(value)
    ok = math.isfinite(v) and (v >= 0.0 if allow_zero else v > 0.0)
    if not ok:
        rel = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} = {value!r} is invalid: must be a finite number {rel} ({unit})")
    return v


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


def _creep_factor(rate: float, dt: float) -> float:
    """``(exp(c dt) - 1) / dt`` [1/s]: the acceleration [m/s^2] per unit speed that the damper
    ``v *= exp(-c dt)`` removes each step, i.e. the residual force per unit mass of a robot
    creeping at that speed (``~ c`` for ``c dt << 1``)."""
    x = rate * dt
    return math.inf if x > 700.0 else math.expm1(x) / dt


#: N (or N m); largest net force on a free node / couple on an element or the platform at a
#: converged pose.  A robot within the default speed bounds (1e-4 m/s at 50 1/s) still feels
#: damping forces m c v of ~4e-6 N per rod node and ~8e-5 N on the platform; 1e-3 N leaves a
#: factor >10 for that and is ~1e-3 of the joint forces of an actuated pose.
TOL_STATIC_RESIDUAL = 1e-3


def equilibrium_residual_ok(robot: Any, tol: float = TOL_STATIC_RESIDUAL) -> bool:
    """The force balance holds at the current pose: the static residual
    (:meth:`~hsa_elastica.robots.compiled.FastRobot.static_residual`, velocities set to zero)
    of a robot stepped by a compiled engine is below ``tol`` [N, N m].  Robots stepped by the reference operators are
    not compiled for it (True: the speed and damper-balance bounds decide)."""
    from hsa_elastica.engines.compile import CompiledModel

    if not isinstance(getattr(robot, "model", None), CompiledModel):
        return True
    forces, couples = robot.static_residual()
    return max(forces, couples) < tol  # (nan: not below)


#: rad; largest magnitude of the twist defect
#: (:func:`~hsa_elastica.physics.actuation.winding_defect`) of an intact rod.  A rod that lost a turn has a defect of 2 pi; an intact one only the writhe of
#: its centreline (3e-3 rad for the paper robot's bend primitive at 2 pi, 0.08 rad during the
#: 1 s elongation ramp), so pi separates the two.
TOL_WINDING = math.pi


def lost_twist(robot: Any, angles: Any = None) -> list[tuple[int, float]]:
    """``(rod index, defect [rad])`` of each rod of ``robot`` whose twist no longer matches its
    motor (:func:`~hsa_elastica.physics.actuation.winding_defect` beyond :data:`TOL_WINDING`).

    Every rod held by a :class:`MotorAngleBC` in the lab is checked (a robot's rods, a stack's
    bottom stage; rods on motor mounts are not); ``angles`` [rad] are their motor angles
    (default: the motors' schedules at the robot's present time).  The discrete rod stores the
    rotation between neighbouring elements modulo a full turn, so a rod that was wrenched by
    more than pi between two elements (a violent buckle in the dynamics, a continuation step of
    more than pi in the statics) settles on an equilibrium of the same equations with whole
    turns of twist missing: the platform pose of a smaller motor angle, reported as if it were
    the commanded one.  An empty list: every checked rod is intact.
    """
    segments = getattr(robot, "segments", None) or [robot]
    t = float(getattr(robot, "time", 0.0))
    out: list[tuple[int, float]] = []
    k = 0
    for seg in segments:
        for rod, ref in zip(seg.rods, seg.motors):
            bc = getattr(ref, "instance", ref)
            if isinstance(bc, MotorAngleBC):
                phi = float(bc.angle(t)) if angles is None else float(angles[k])
                d = float(winding_defect(
                    bc.reference_director, np.ascontiguousarray(rod.director_collection), phi
                ))
                if not abs(d) < TOL_WINDING:
                    out.append((k, d))
            k += 1
    return out


def lost_twist_model(model: Any, angles: Any) -> list[tuple[int, float]]:
    """:func:`lost_twist` on the arrays of a compiled model (the static solver's state):
    ``(motor row, defect [rad])`` of each rod held by a motor in the lab
    (``MotorTable.body == -1``) whose twist does not match its motor angle ``angles[row]``
    [rad] (the rows of ``model.motors``, as :meth:`CompiledModel.commands`)."""
    rod, m = model.rod_arrays, model.motors
    ghosts = np.asarray(rod.ghost_elems_idx, dtype=np.int64).ravel()
    n_el = rod.director.shape[2]
    out: list[tuple[int, float]] = []
    for i in range(len(m.element)):
        if int(m.body[i]) >= 0:
            continue
        e0 = int(m.element[i])
        later = ghosts[ghosts > e0]
        end = int(later.min()) if later.size else n_el
        d = float(winding_defect(
            np.ascontiguousarray(m.reference_director[i]),
            np.ascontiguousarray(rod.director[:, :, e0:end]), float(angles[i]),
        ))
        if not abs(d) < TOL_WINDING:
            out.append((i, d))
    return out


def describe_lost(lost: list[tuple[int, float]]) -> str:
    """``"rod 0 lost +1.00 turns of twist; ..."`` for the entries of :func:`lost_twist`."""
    return "; ".join(f"rod {i} lost {d / (2 * math.pi):+.2f} turns of twist" for i, d in lost)


@dataclass
class Relaxation:
    """Outcome of :func:`relax`: the stopping time [s], steps taken, the start of the final
    settling window [s] (None if none), whether the window was completed, the last
    ``state_fn`` state, the divergence that stopped the run (None if none) and the rods found
    with lost turns of twist (:func:`lost_twist`; the run stops there, not converged)."""

    t: float
    n_steps: int
    settled_since: float | None
    converged: bool
    state: dict[str, Any]
    divergence: SimulationDiverged | None
    lost: list[tuple[int, float]] | None = None


def relax(
    robot: Any,
    state_fn: Callable[[Any], dict[str, Any]],
    *,
    ramp_end: float,
    t_max: float,
    check_interval: float,
    dampings: tuple[float, float],
    tol_velocity: float,
    tol_omega: float,
    tol_residual: float,
    window: float,
    stop_when_settled: bool,
    max_speed: float,
    progress: bool,
) -> Relaxation:
    """Advance ``robot`` (a robot or stack handle, fused or per-rod) in chunks of
    ``check_interval`` [s] up to ``t_max`` [s], applying the settling test of the module doc
    after every chunk that ends at or after ``ramp_end`` [s].  ``state_fn(robot)`` gives at
    least ``max_speed`` [m/s] (every rod node and body) and ``platform_omega`` [rad/s] (every
    body); ``dampings`` = (translational, rotational) damping rates [1/s] of the creep bound.
    A divergence stops the run and is returned, not raised; so does a rod that lost a turn of
    twist (:func:`lost_twist`, checked after every chunk: ``converged = False``, ``lost``)."""
    dt = robot.dt
    steps_per_check = max(1, int(round(check_interval / dt)))
    bar = None
    if progress:
        from hsa_elastica.io.progress import progress_bar

        bar = progress_bar(
            total=t_max,
            desc="simulated",
            unit="s",
            delay=0.5,
            bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]",
        )
    from hsa_elastica.robots.settling_watch import relax_watched, watch_plan

    watch = watch_plan(robot, state_fn, steps_per_check)
    if watch is not None:  # the implicit integrator: the checks inside its compiled loop
        try:
            return relax_watched(
                robot, state_fn, watch, t_max=t_max, per_check=steps_per_check,
                max_speed=max_speed, bar=bar, ramp_end=ramp_end, dampings=dampings,
                tol_velocity=tol_velocity, tol_omega=tol_omega, tol_residual=tol_residual,
                window=window, stop_when_settled=stop_when_settled)
        finally:
            if bar is not None:
                bar.close()
    t = float(robot.time)
    n_steps = 0
    settled_since: float | None = None
    converged = False
    state = state_fn(robot)
    # residual force per unit mass balanced by the dampers at speed 1 m/s (1 rad/s), see
    # tol_residual of solve_steady_state
    creep_t = _creep_factor(dampings[0], dt)
    creep_r = _creep_factor(dampings[1], dt)
    divergence: SimulationDiverged | None = None
    lost: list[tuple[int, float]] = []
    try:
        while t < t_max - 0.5 * dt:
            n = min(steps_per_check, int(math.ceil((t_max - t) / dt - 1e-9)))
            # divergence check (non-finite, speed > max_speed, overstretched rod) each chunk
            t_new = float(robot.run(n * dt, check_every=n, max_speed=max_speed))
            n_steps += n
            if bar is not None:
                bar.update(t_new - t)
            t = t_new
            state = state_fn(robot)
            # a rod that lost a turn of twist never gets it back: stop, not converged
            lost = lost_twist(robot)
            if lost:
                converged = False
                log.warning("at t = %.4g s %s: not converged", t, describe_lost(lost))
                break
            calm = (
                state["max_speed"] < tol_velocity
                and state["platform_omega"] < tol_omega
                and state["max_speed"] * creep_t < tol_residual
                and state["platform_omega"] * creep_r < tol_residual / tol_velocity * tol_omega
                and equilibrium_residual_ok(robot)
            )
            if t >= ramp_end - 0.5 * dt and calm:
                if settled_since is None:
                    settled_since = t
                converged = t - settled_since >= window - 0.5 * dt
                if converged and stop_when_settled:
                    break
            else:
                settled_since = None
                converged = False
    except SimulationDiverged as exc:
        divergence = exc
        converged = False
    finally:
        if bar is not None:
            bar.close()
    return Relaxation(t, n_steps, settled_since, converged, state, divergence, lost or None)


# -- the set-up shared by the dynamic steady-state solvers (robot and stack) -------------------
@dataclass(frozen=True)
class SettleSettings:
    """The checked options of a dynamic steady-state run: the settling test's bounds
    ``tol_velocity`` [m/s], ``tol_omega`` [rad/s], ``tol_residual`` [m/s^2], the runaway guard
    ``max_speed`` [m/s], ``window`` and ``check_interval`` [s], the end of the motor ramp
    ``ramp_end`` [s] (where the test starts) and the simulated time limit ``t_max`` [s]."""

    tol_velocity: float
    tol_omega: float
    tol_residual: float
    max_speed: float
    window: float
    check_interval: float
    ramp_end: float
    t_max: float


def settle_settings(
    *, tol_velocity: float, tol_omega: float, tol_residual: float, max_speed: float,
    window: float, check_interval: float, ramp: Any, max_time: float | None, ramp_time: float,
) -> SettleSettings:
    """The options of :func:`~hsa_elastica.robots.steady_state.solve_steady_state` (same names
    and units) checked (``ValueError`` naming the first bad one); ``ramp_time`` [s] is the
    parameters' ramp, used when ``ramp`` is None (a callable ``ramp``: the test starts at 0);
    ``max_time`` None: the end of the ramp + 3 s."""
    tol_v = positive("tol_velocity", tol_velocity, "m/s")
    v_max = positive("max_speed", max_speed, "m/s")
    tol_w = positive("tol_omega", tol_omega, "rad/s")
    tol_r = positive("tol_residual", tol_residual, "m/s^2")
    win = positive("window", window, "s", allow_zero=True)
    chk = positive("check_interval", check_interval, "s")
    if ramp is None:
        ramp_end = float(ramp_time)
    elif callable(ramp):
        ramp_end = 0.0
    else:
        ramp_end = positive("ramp", ramp, "s", allow_zero=True)
    t_max = ramp_end + 3.0 if max_time is None else positive("max_time", max_time, "s")
    return SettleSettings(tol_v, tol_w, tol_r, v_max, win, chk, ramp_end, t_max)


def settle(
    robot: Any, state_fn: Callable[[Any], dict[str, Any]], settings: SettleSettings, *,
    fast: bool, dampings: tuple[float, float], record: bool, stop_when_settled: bool,
    progress: bool,
) -> tuple[Any, Relaxation, "pd.DataFrame | None"]:
    """Run a freshly built ``robot`` (or stack) until it has settled (:func:`relax` with
    ``settings``), stepped by the compiled engine its ``simulation.integrator`` selects if
    ``fast``, else by the per-rod operators.  With ``record`` the stopping state is appended to
    the recordings (unless the run diverged).  Returns the stepped handle, the relaxation and
    the diagnostics (None without ``record``)."""
    if fast:
        from hsa_elastica.robots.compiled import compiled_engine

        robot = compiled_engine(robot)
    s = settings
    relaxed = relax(
        robot, state_fn, ramp_end=s.ramp_end, t_max=s.t_max, check_interval=s.check_interval,
        dampings=dampings, tol_velocity=s.tol_velocity, tol_omega=s.tol_omega,
        tol_residual=s.tol_residual, window=s.window, stop_when_settled=stop_when_settled,
        max_speed=s.max_speed, progress=progress,
    )
    diagnostics = None
    if record:
        if relaxed.divergence is None:
            append_final_sample(robot, relaxed.t)
        diagnostics = robot.diagnostics()
    return robot, relaxed, diagnostics


def divergence_summary(divergence: SimulationDiverged | None) -> dict[str, Any] | None:
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
