"""The settling loop of :func:`~hsa_elastica.robots.settling.relax` for a robot on the implicit
integrator: many checks per engine call (:mod:`hsa_elastica.engines.implicit_watch`).

At the implicit integrator's step (1-2 ms) a settling check (every 2 ms) comes every one or two
steps, and a return to Python per check cost three times the step.  :func:`relax_watched` runs
the checks inside the compiled loop, in batches that end where Python has work to do: at a
recording step (the recorders are Python callbacks), after at most ``chunk`` steps (the motor
tables are O(steps)), and at a check whose outcome needs the Python functions: a suspected
divergence (``find_runaway`` decides and names the system), a suspected lost turn of twist
(``lost_twist`` decides), the end of the settling window.  Everything else -- the steps and
their time arithmetic, the tests and their order, the recordings, the reported state and
times -- is what :func:`relax`'s per-check loop does, bit for bit.

Used by :func:`relax` when it applies (:func:`watch_plan`): a robot or a stack on
:class:`~hsa_elastica.robots.compiled.ImplicitRobot` from time 0, with the settling state of
:func:`~hsa_elastica.robots.settling_checks.settling_state` (a stack's:
:func:`~hsa_elastica.robots.settling_checks.stack_settling_state`), recorders sampling at check
ends.
"""

from __future__ import annotations

import logging
import math
import time as _time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica import compat
from hsa_elastica.engines.implicit import ImplicitStepFailed
from hsa_elastica.engines.implicit_watch import (
    CHECK_FAILED,
    CHECK_LOST,
    CHECK_SETTLED,
    CHECK_SUSPECT,
    N_LIMITS,
    LastGood,
    Samples,
    SettleWatch,
    check_state,
    load_row,
    run_checks,
    save_row,
)
from hsa_elastica.engines.timeloop import (
    DEFAULT_MAX_STRETCH,
    SimulationDiverged,
    check_bound,
    find_runaway,
)
from hsa_elastica.io.recording import sample_reads
from hsa_elastica.io.sample_kernels import no_samples
from hsa_elastica.physics.actuation import MotorAngleBC
from hsa_elastica.robots.loop_samples import LoopSamples
from hsa_elastica.robots.settling_checks import (
    TOL_STATIC_RESIDUAL,
    TOL_WINDING,
    Relaxation,
    creep_factor,
    describe_lost,
    lost_twist,
    settling_state,
    stack_settling_state,
)

log = logging.getLogger("hsa_elastica.robots.settling")

__all__ = ["relax_watched", "watch_plan"]


def watch_plan(robot: Any, state_fn: Callable[[Any], dict[str, Any]],
               steps_per_check: int) -> SettleWatch | None:
    """The :class:`SettleWatch` of ``robot`` (bounds not filled in), or None where
    :func:`relax_watched` does not apply: not an implicit robot or stack at time 0, another
    settling state than :func:`~hsa_elastica.robots.settling_checks.settling_state` (a robot)
    or :func:`~hsa_elastica.robots.settling_checks.stack_settling_state` (a stack: every
    segment's rods and platform watched), scheduled loads, a callback sampling between check
    ends, a rod's motor not in the model."""
    from hsa_elastica.robots.compiled import ImplicitRobot

    if not isinstance(robot, ImplicitRobot):
        return None
    segments = getattr(robot.robot, "segments", None)
    watched = stack_settling_state if segments else settling_state
    if (state_fn is not watched or robot.model.inputs.scheduled_loads or robot.time != 0.0
            or not hasattr(robot.robot, "platform")):
        return None
    if not all(a.flags.c_contiguous for a in robot.model.instant_arrays()):
        return None  # (the recordings copy them as flat views)
    for target in robot.model.inputs.callbacks:
        if steps_per_check == 1:
            break  # every step ends a check
        # the sampling period in steps (a recorder's may be fractional: samples at
        # round(k * period)); every sample must end a check
        period = getattr(target, "steps_per_sample", getattr(target, "every", None))
        if not isinstance(period, (int, float, np.integer, np.floating)) or period < 1:
            return None
        whole = round(float(period))
        if abs(float(period) - whole) > 1e-9 or whole % steps_per_check:
            return None
    model = robot.model
    parts: list[Any] = segments or [robot.robot]  # the built robots: rods, platform, motors
    rods = [rod for part in parts for rod in part.rods]
    motors = [ref for part in parts for ref in part.motors]
    rod_block, body_block = model.rod_arrays, model.body_arrays
    nodes, elems = [], []
    for rod in rods:
        n0 = compat.block_offset(rod.position_collection, rod_block.position)
        e0 = compat.block_offset(rod.director_collection, rod_block.director)
        nodes.append((n0, n0 + int(rod.n_elems) + 1))
        elems.append((e0, e0 + int(rod.n_elems)))
    body = [compat.block_offset(part.platform.position_collection, body_block.position)
            for part in parts]
    cols, twist_elems, refs = [], [], []
    bcs = list(model.inputs.motor_bcs)
    for ref, span in zip(motors, elems):
        bc = getattr(ref, "instance", ref)
        if isinstance(bc, MotorAngleBC):
            col = next((i for i, b in enumerate(bcs) if b is bc), -1)
            if col < 0:
                return None
            cols.append(col)
            twist_elems.append(span)
            refs.append(np.array(bc.reference_director, dtype=np.float64))
    i64 = np.int64
    return SettleWatch(
        np.array(nodes, dtype=i64).reshape(-1, 2), np.array(elems, dtype=i64).reshape(-1, 2),
        np.array(body, dtype=i64), np.array(cols, dtype=i64),
        np.array(twist_elems, dtype=i64).reshape(-1, 2),
        np.array(refs, dtype=np.float64).reshape(-1, 3, 3), np.zeros(N_LIMITS),
        np.array([np.nan, 0.0, -np.inf]))


def _limits(watch: SettleWatch, dt: float, s: dict[str, Any]) -> None:
    """The bounds of the settling test, computed as :func:`relax` computes them."""
    v_max = check_bound("max_speed", s["max_speed"], "m/s")
    watch.limits[:] = [
        s["tol_velocity"], s["tol_omega"], s["tol_residual"], creep_factor(s["dampings"][0], dt),
        creep_factor(s["dampings"][1], dt), s["tol_residual"] / s["tol_velocity"] * s["tol_omega"],
        s["ramp_end"] - 0.5 * dt, s["window"] - 0.5 * dt, TOL_STATIC_RESIDUAL, v_max * v_max,
        DEFAULT_MAX_STRETCH, 1.0 if s["stop_when_settled"] else 0.0, TOL_WINDING,
        s["t_max"] - 0.5 * dt]


def _last_good(model: Any) -> LastGood:
    r, b = model.rod_arrays, model.body_arrays
    return LastGood(*(np.array(a, copy=True) for a in (
        r.position, r.velocity, r.director, r.omega, b.position, b.velocity, b.director, b.omega)))


def _state_at(robot: Any, good: LastGood, state_fn: Callable[[Any], dict[str, Any]]
              ) -> dict[str, Any]:
    """``state_fn`` of the state kept in ``good`` (the last check that passed); the robot's
    own state is put back."""
    r, b = robot.model.rod_arrays, robot.model.body_arrays
    live = (r.position, r.velocity, r.director, r.omega, b.position, b.velocity, b.director,
            b.omega)
    saved = [a.copy() for a in live]
    for dst, src in zip(live, good):
        np.copyto(dst, src)
    try:
        return state_fn(robot)
    finally:
        for dst, src in zip(live, saved):
            np.copyto(dst, src)


def _batch(robot: Any, t: float, t_max: float, per_check: int) -> tuple[
        list[int], list[float], list[int]]:
    """The checks of the next engine call: their steps (as the per-check loop sizes them), end
    times, and the recording step each ends on (0: none), up to ``robot.chunk`` steps."""
    dt = float(robot.dt)
    t = float(t)
    chunk, stop = int(robot.chunk), float(t_max) - 0.5 * dt
    # the full checks (per_check steps each) at once: their start times as the per-check loop
    # adds them up (a cumulative sum adds in the same order), up to the first that is not full
    k_max = max(1, chunk // per_check)
    starts = np.cumsum(np.concatenate(([t], np.full(k_max, per_check * dt))))
    full = (starts[:k_max] < stop) & (np.ceil((t_max - starts[:k_max]) / dt - 1e-9) >= per_check)
    k = k_max if full.all() else int(np.argmin(full))
    steps = [per_check] * k
    ends = starts[1:k + 1].tolist()
    firsts = (np.rint(starts[:k] / dt) + 1).astype(np.int64).tolist()
    t, total = float(starts[k]), k * per_check
    while t < stop:  # the rest: a last, shorter check
        n = min(per_check, math.ceil((t_max - t) / dt - 1e-9))
        if steps and total + n > chunk:
            break
        firsts.append(round(t / dt) + 1)
        steps.append(n)
        total += n
        t = t + n * dt
        ends.append(t)
    if robot.model.inputs.callback_every <= 0 or not steps:
        return steps, ends, [0] * len(steps)
    # a check records if the first recording step from its first step on is its last step (a
    # recording step inside a check is not recorded)
    first_steps = np.array(firsts, dtype=np.int64)
    last_steps = np.rint(np.array(ends) / dt).astype(np.int64)
    recording = robot._callback_steps(int(first_steps[0]), int(last_steps[-1]))
    i = np.searchsorted(recording, first_steps)  # each check's first recording step from its first
    hit = recording[np.minimum(i, recording.size - 1)] if recording.size else last_steps + 1
    samples = np.where((i < recording.size) & (hit == last_steps), last_steps, 0).tolist()
    return steps, ends, samples


def _reads(callbacks: list[Any]) -> set[str] | None:
    """What the recorders ``callbacks`` read of an instant (their ``reads``); None (all of it)
    if one of them does not say."""
    names: set[str] = set()
    for target in callbacks:
        reads = sample_reads(target)
        if reads is None:
            return None
        names.update(reads)
    return names


class _Recording:
    """The recorders' samples of the compiled loop's calls: taken by the loop itself where
    :class:`~hsa_elastica.robots.loop_samples.LoopSamples` applies, else the model's state
    arrays (flat views) copied into rows at the recording steps and replayed to the recorders
    (Python callbacks) after the call."""

    def __init__(self, robot: Any, expected: int = 0) -> None:
        self.robot = robot
        model = robot.model
        arrays = model.instant_arrays(_reads(model.inputs.callbacks))
        self.arrays = tuple(a.reshape(-1) for a in arrays)
        self.size = sum(a.size for a in arrays)
        self.live = np.empty(self.size)
        self.rows = np.empty((0, self.size))
        #: the samples of the run (the shared buffers' first size)
        self.expected = expected
        #: the built-in recorders' samples in the loop (None: not (yet) applicable)
        self.in_loop: LoopSamples | None = None
        self.taken = False  # the last call's samples taken by the loop
        self._no_rows = np.zeros((0, 0))
        self._no_plan = no_samples(model.rod_arrays, model.body_arrays)

    def samples(self, flags: list[int]) -> Samples:
        need = sum(1 for f in flags if f)
        marks = np.array([1 if f else 0 for f in flags], dtype=np.int64)
        plan = None
        if need:
            if self.in_loop is None:
                self.in_loop = LoopSamples.make(self.robot.model, max(self.expected, need))
            if self.in_loop is not None:
                plan = self.in_loop.plan(need)
        self.taken = plan is not None
        if plan is not None:
            return Samples(marks, self.arrays, self._no_rows, plan)
        if self.rows.shape[0] < need:
            self.rows = np.empty((need, self.size))
        return Samples(marks, self.arrays, self.rows, self._no_plan)

    def replay(self, rows: int, ends: list[float], samples: list[int], t: float) -> None:
        """The recorders at the first ``rows`` recorded checks (end times ``ends``, recording
        steps ``samples``): the columns Python fills in of the samples the loop took, or each
        sample on its copied state (the state at ``t`` [s] put back)."""
        if rows == 0:
            return
        robot, sim = self.robot, self.robot.robot.simulator
        if self.taken:
            assert self.in_loop is not None
            self.in_loop.finish([t_k for t_k, step in zip(ends, samples) if step][:rows])
            return
        save_row(self.arrays, self.live)
        k = 0
        for t_k, step in zip(ends, samples):
            if k == rows:
                break
            if step:
                load_row(self.arrays, self.rows[k])
                robot.time = t_k
                sim.apply_callbacks(np.float64(t_k), step)
                k += 1
        load_row(self.arrays, self.live)
        robot.time = t


def relax_watched(robot: Any, state_fn: Callable[[Any], dict[str, Any]], watch: SettleWatch, *,
                  t_max: float, per_check: int, max_speed: float, bar: Any,
                  **settings: Any) -> Relaxation:
    """:func:`~hsa_elastica.robots.settling.relax` of ``robot`` with the checks in the
    compiled loop (see the module doc); ``settings``: relax's ``ramp_end``, ``dampings``,
    ``tol_velocity``, ``tol_omega``, ``tol_residual``, ``window``, ``stop_when_settled``."""
    dt = robot.dt
    _limits(watch, dt, dict(settings, max_speed=max_speed, t_max=t_max))
    v_max = check_bound("max_speed", max_speed, "m/s")
    engine, model = robot.engine, robot.model
    check = robot.residual_check().record
    good = _last_good(model)
    first = round(float(robot.time) / dt) + 1
    recording = _Recording(robot, int(robot._callback_steps(first, round(t_max / dt)).size))
    out = np.zeros(4)
    systems, names = robot._checked_systems(None)
    sim = robot.robot.simulator
    t = float(robot.time)
    n_steps = 0
    state = state_fn(robot)
    lost: list[tuple[int, float]] = []
    converged = False
    _load_kernels(robot, watch, check, good, recording, out)
    loop0 = _time.perf_counter()
    while t < t_max - 0.5 * dt:
        steps, ends, samples = _batch(robot, t, t_max, per_check)
        try:
            code, done, t_new = run_checks(engine, np.array(steps, dtype=np.int64), t, watch,
                                           check, good, recording.samples(samples), out)
        except ImplicitStepFailed:
            robot.time = engine.time
            recording.replay(int(out[3]), ends, samples, engine.time)
            raise
        start = ends[done - 2] if done >= 2 else t  # the last check's start
        n_steps += sum(steps[:done])
        robot.time = t_new
        recording.replay(int(out[3]), ends, samples, t_new)
        if code == CHECK_FAILED and samples[done - 1]:  # its end is the state now
            step = round(np.float64(t_new) / np.float64(dt))
            if step == samples[done - 1]:
                sim.apply_callbacks(np.float64(t_new), step)
        if bar is not None:
            bar.update(t_new - t)
        t = t_new
        code = _resolve(robot, code, watch, check, good)
        if code == CHECK_SUSPECT:
            bad = find_runaway(systems, max_speed=v_max, max_stretch=DEFAULT_MAX_STRETCH)
            if bad is not None:
                name = names[bad[0]] if bad[0] < len(names) else f"system {bad[0]}"
                divergence = SimulationDiverged(t, name, start, bad[1])
                state = _state_at(robot, good, state_fn)
                return Relaxation(start, n_steps - steps[done - 1], _since(watch), False, state,
                                  divergence, None, wall_time_s=_time.perf_counter() - loop0)
            code = _resolve(robot, code, watch, check, good, stage=1)
        if code == CHECK_LOST:
            lost = lost_twist(robot)
            if lost:
                log.warning("at t = %.4g s %s: not converged", t, describe_lost(lost))
                converged = False
                break
            code = _resolve(robot, code, watch, check, good, stage=2)
        converged = bool(watch.state[1])
        if code == CHECK_SETTLED:
            break
    state = state_fn(robot)
    return Relaxation(t, n_steps, _since(watch), converged, state, None, lost or None,
                      wall_time_s=_time.perf_counter() - loop0)


def _load_kernels(robot: Any, watch: SettleWatch, check: Any, good: LastGood,
                  recording: _Recording, out: NDArray[np.float64]) -> None:
    """Load the kernels of the loop from numba's cache before it starts (a one-time cost of
    about a second in a fresh process, not part of the loop's time): a call of no checks
    (the engine started at the robot's time, as the first call would start it), and the
    recordings' copies of the state into a row and back, the recorders' own kernels."""
    run_checks(robot.engine, np.zeros(0, dtype=np.int64), float(robot.time), watch, check,
               good, recording.samples([]), out)
    save_row(recording.arrays, recording.live)
    load_row(recording.arrays, recording.live)
    robot.load_recorder_kernels()


def _resolve(robot: Any, code: int, watch: SettleWatch, check: Any, good: LastGood,
             stage: int = 0) -> int:
    """The outcome of the check that ended the call, its tests from ``stage`` on run from
    Python where the compiled loop left them to Python (a check after a step taken in halves:
    all of them; after a false alarm of the divergence pre-check (``stage`` 1) or of the
    lost-twist test (``stage`` 2): the rest)."""
    if code == CHECK_FAILED or stage > 0:
        m = robot.model
        return int(check_state(robot.time, m.commands(robot.time), m.rod_arrays, m.body_arrays,
                               m.tables.joints, watch, check, good, stage))
    return code


def _since(watch: SettleWatch) -> float | None:
    s = float(watch.state[0])
    return None if math.isnan(s) else s
