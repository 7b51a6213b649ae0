"""The implicit integrator's settling loop with the checks in compiled code
(robots/settling_watch.py, engines/implicit_watch.py) against the per-check Python loop of
``relax`` (the reference: one engine call and one Python settling test per check).

Both must give the same run bit for bit: recordings, stopping time, steps, settling window,
reported state, and on a divergence the same exception and partial result.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hsa_elastica.engines.timeloop import SimulationDiverged
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots import settling, settling_watch
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.settling import SettleOptions
from hsa_elastica.robots.steady_state import solve_steady_state


def _params(dt: float):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    # a short ramp: the robot settles within a fraction of a second
    return p.replace(simulation=p.simulation.replace(integrator="implicit", dt=dt, ramp_time=0.2))


def _watched_and_reference(monkeypatch: pytest.MonkeyPatch, solve):  # type: ignore[no-untyped-def]
    """``solve()`` on the watched loop (which must run) and on the per-check loop."""
    calls = []
    plan = settling_watch.watch_plan

    def spy(*a, **k):  # type: ignore[no-untyped-def]
        w = plan(*a, **k)
        calls.append(w is not None)
        return w

    monkeypatch.setattr(settling, "watch_plan", spy)
    watched = solve()
    monkeypatch.setattr(settling, "watch_plan", lambda *a, **k: None)
    reference = solve()
    assert calls == [True]  # the watched loop did run
    return watched, reference


def _both(monkeypatch: pytest.MonkeyPatch, dt: float, *, params=None,  # type: ignore[no-untyped-def]
          primitive: str = "bend_east", **kw):
    p = _params(dt) if params is None else params
    u = primitive_angles(primitive, 1.0, p)
    watched, reference = _watched_and_reference(monkeypatch,
                                                lambda: solve_steady_state(p, u, **kw))
    return watched, reference


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    for key in ("converged", "sim_time_s", "n_steps", "settle_time_s", "max_node_speed_m_s",
                "max_platform_omega_rad_s", "diverged"):
        x, y = getattr(a, key), getattr(b, key)
        assert x == y or (np.isnan(x) and np.isnan(y)), key
    for key in ("platform_position_m", "platform_quaternion_xyzw", "rod_tip_positions_m"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key), err_msg=key)
    if a.diagnostics is not None or b.diagnostics is not None:
        pd.testing.assert_frame_equal(a.diagnostics, b.diagnostics, check_exact=True)


@pytest.mark.parametrize("dt, stop", [(2e-3, True), (1e-3, False)])
def test_watched_loop_is_the_per_check_loop(monkeypatch: pytest.MonkeyPatch, dt: float,
                                            stop: bool) -> None:
    watched, reference = _both(monkeypatch, dt, settle=SettleOptions(max_time=1.0), stop_when_settled=stop,
                               record=True)
    _same(watched, reference)
    # the run settled (the window and the residual test were exercised), and stopped there
    # when asked to
    assert watched.converged
    assert 0.2 < watched.settle_time_s < 1.0
    if stop:
        assert watched.sim_time_s < 1.0 - 1e-9
    else:
        assert watched.sim_time_s == pytest.approx(1.0)


def _plate(p):  # type: ignore[no-untyped-def]
    """``p`` under a stiff plate 1 mm above the platform's top face at rest, which the
    elongating robot presses (the contact's sensor columns record its force)."""
    from hsa_elastica.params import ContactParams, EnvironmentParams, PlaneObstacle
    from hsa_elastica.robots.builders import build_robot

    rest = build_robot(p, [0.0] * 4, record=False, finalize=False)
    top = float(rest.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness
    plate = PlaneObstacle(point=(0.0, 0.0, top + 1e-3), normal=(0.0, 0.0, -1.0),
                          contact=ContactParams(stiffness=2e5, smoothing_length=1e-4,
                                                damping_ratio=0.3))
    return p.replace(environment=EnvironmentParams(obstacles=(plate,)))


@pytest.mark.parametrize("case", ["passive", "plate"])
def test_watched_recordings_are_the_per_check_loop_s(monkeypatch: pytest.MonkeyPatch,
                                                     case: str) -> None:
    # the recorders replayed from the compiled loop's copies of each recorded instant read what
    # they read live in the per-check loop: the passive law's twist couple and strains (the
    # sensors' motor torque), damped joints (the joint wrench reads the velocities) and a
    # contact's force (its sensor columns)
    p = _params(2e-3)
    if case == "passive":
        p = p.replace(rod=p.rod.replace(coupling_law="passive"),
                      joint=p.joint.replace(nu_F=50.0, nu_tau=0.01))
        name = "bend_east"
    else:
        p = _plate(p)
        name = "elongation"
    watched, reference = _both(monkeypatch, 2e-3, params=p, primitive=name,
                               settle=SettleOptions(max_time=0.4), stop_when_settled=False,
                               record=True)
    _same(watched, reference)
    if case == "plate":  # the plate was pressed: its force is in the recording
        force = watched.diagnostics.filter(like="contact").abs().to_numpy()
        assert np.nanmax(force) > 1.0


def test_a_recorder_s_reads_count_only_where_its_class_takes_the_samples() -> None:
    # the compiled loop copies for the recorders only what they declare they read; a subclass
    # that takes its samples another way (or a callback that declares nothing) gets everything
    from elastica.callback_functions import CallBackBaseClass

    from hsa_elastica.io.recording import RigidBodyRecorder, RodRecorder, sample_reads
    from hsa_elastica.io.sensors import RobotSensorRecorder

    class Accelerations(RodRecorder):
        def _fill(self, rod, row):  # type: ignore[no-untyped-def]
            row[1:] = rod.acceleration_collection.reshape(-1)[: row.size - 1]

    class Renamed(RodRecorder):  # samples as RodRecorder does
        pass

    assert "rod.position" in sample_reads(RodRecorder(every=1))  # type: ignore[operator]
    assert sample_reads(Renamed(every=1)) == RodRecorder.reads
    assert sample_reads(Accelerations(every=1)) is None
    assert sample_reads(CallBackBaseClass()) is None
    assert "body.omega" in sample_reads(RigidBodyRecorder(every=1))  # type: ignore[operator]
    assert "contacts.output" in sample_reads(RobotSensorRecorder(every=1))  # type: ignore[operator]
    assert settling_watch._reads([RodRecorder(every=1), CallBackBaseClass()]) is None


def test_a_misspelt_read_is_refused_naming_it() -> None:
    # a name that is no array of the model would leave the recorder reading the live state at
    # every sample: refused before the run; a constant (never copied) is a valid name
    from hsa_elastica.params import ParameterError
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import compiled_engine

    p = _params(2e-3)
    model = compiled_engine(build_robot(p, [0.0] * 4, record=False)).model
    with pytest.raises(ParameterError, match="'rod.positon' is invalid"):
        model.instant_arrays({"rod.position", "rod.positon"})
    arrays = model.instant_arrays({"rod.mass", "couplings.C_eps"})
    assert len(arrays) == len(model.instant_arrays()) and not any(a.size for a in arrays)


def test_watched_loop_diverges_as_the_per_check_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # a speed bound the ramp exceeds: the runaway guard stops both runs at the same check
    p = _params(2e-3)
    u = primitive_angles("bend_east", 1.0, p)
    errors = []
    for plan in (settling_watch.watch_plan, lambda *a, **k: None):
        monkeypatch.setattr(settling, "watch_plan", plan)
        with pytest.raises(SimulationDiverged) as info:
            solve_steady_state(p, u, settle=SettleOptions(max_time=0.5, max_speed=0.02),
                               record=True)
        errors.append(info.value)
    a, b = errors
    assert (a.time, a.last_good_time, a.name, a.reason) == (b.time, b.last_good_time, b.name,
                                                             b.reason)
    assert 0.0 < a.time < 0.5
    _same(a.result, b.result)


def test_watched_loop_finds_a_lost_turn_as_the_per_check_loop(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # motors ramped by 1.2 rad on top of a full turn (a plain schedule): the rods settle on the
    # pose of 1.2 rad, one turn short of their motors (tests/test_reliability_api.py's set-up
    # on the implicit integrator); both loops stop at the same first check
    import math

    from hsa_elastica.physics.actuation import Ramp
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import compiled_engine
    from hsa_elastica.robots.settling import relax
    from hsa_elastica.robots.steady_state import settling_state

    p = _params(2e-3)
    ramp = Ramp(target=1.2, duration=0.05)
    outcomes = []
    for plan in (settling_watch.watch_plan, lambda *a, **k: None):
        monkeypatch.setattr(settling, "watch_plan", plan)
        schedules = [(lambda t, s=s: s * (2 * math.pi + ramp(t))) for s in p.handedness]
        robot = compiled_engine(build_robot(p, schedules, ramp=None, record=False))
        outcomes.append(relax(
            robot, settling_state, SettleOptions(), (0.05, 0.3),
            dampings=(p.simulation.damping, p.simulation.rotational_damping)))
    a, b = outcomes
    assert a.lost is not None and len(a.lost) == p.n_rods and not a.converged
    assert (a.t, a.n_steps, a.lost, a.converged, a.settled_since) == (
        b.t, b.n_steps, b.lost, b.converged, b.settled_since)
    np.testing.assert_array_equal(a.state["platform_position_m"], b.state["platform_position_m"])


@pytest.mark.parametrize("fps, used", [(100.0, True), (1.0 / 10.5e-3, False), (40.0, False)])
def test_watched_loop_only_where_every_recording_ends_a_check(fps: float, used: bool) -> None:
    # at 1 ms a check is 2 steps; samples every 10 steps end checks, samples at
    # round(k * 10.5) or every 25 steps do not (the per-check loop splits such a check there)
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import compiled_engine
    from hsa_elastica.robots.steady_state import settling_state

    p = _params(1e-3)
    p = p.replace(simulation=p.simulation.replace(record_fps=fps))
    robot = compiled_engine(build_robot(p, primitive_angles("bend_east", 1.0, p), record=True))
    assert (settling_watch.watch_plan(robot, settling_state, 2) is not None) == used
    assert settling_watch.watch_plan(robot, settling_state, 1) is not None  # every step a check


def _relax_both(monkeypatch: pytest.MonkeyPatch, residual_ok: bool):  # type: ignore[no-untyped-def]
    """The bend primitive relaxed to 1 s without stopping, on the watched and the per-check
    loop; with ``residual_ok`` False both see a static residual above any bound (the watched
    loop through a bound of 0, the per-check loop through its test); the per-check loop's
    residual tests are logged (time, outcome)."""
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import compiled_engine
    from hsa_elastica.robots.settling import relax
    from hsa_elastica.robots.steady_state import settling_state

    p = _params(2e-3)
    u = primitive_angles("bend_east", 1.0, p)
    tests: list[tuple[float, bool]] = []
    real = settling.equilibrium_residual_ok

    def logged(robot):  # type: ignore[no-untyped-def]
        ok = real(robot) and residual_ok
        tests.append((float(robot.time), ok))
        return ok

    if not residual_ok:
        monkeypatch.setattr(settling_watch, "TOL_STATIC_RESIDUAL", 0.0)
    outcomes = []
    for plan in (settling_watch.watch_plan, lambda *a, **k: None):
        monkeypatch.setattr(settling, "watch_plan", plan)
        monkeypatch.setattr(settling, "equilibrium_residual_ok", logged)
        robot = compiled_engine(build_robot(p, u, record=False))
        outcomes.append(relax(robot, settling_state, SettleOptions(window=0.05), (0.2, 1.0),
                              dampings=(p.simulation.damping, p.simulation.rotational_damping),
                              stop_when_settled=False))
    a, b = outcomes
    assert (a.t, a.n_steps, a.converged, a.settled_since) == (
        b.t, b.n_steps, b.converged, b.settled_since)
    return b, tests


def test_a_settled_run_tests_its_force_balance_once_per_window(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the speeds hold from some check on: the residual is tested at the check that completes
    # the window (0.05 s later), then once per window, and at the last check (1 s)
    run, tests = _relax_both(monkeypatch, residual_ok=True)
    assert run.converged and run.settled_since is not None
    times = [t for t, _ in tests]
    assert all(ok for _, ok in tests)
    assert times[0] == pytest.approx(run.settled_since + 0.05, abs=1e-9)
    assert times[-1] == pytest.approx(1.0, abs=1e-9)
    assert np.all(np.diff(times[:-1]) == pytest.approx(0.05, abs=1e-9))
    assert len(times) <= (1.0 - run.settled_since) / 0.05 + 1


def test_a_force_imbalance_at_the_window_s_end_starts_the_window_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # a residual above its bound: never converged; each failed test restarts the window, so
    # the tests are one window and one check apart
    run, tests = _relax_both(monkeypatch, residual_ok=False)
    assert not run.converged
    times = [t for t, _ in tests]
    assert len(times) >= 2 and not any(ok for _, ok in tests)
    assert np.all(np.diff(times) == pytest.approx(0.05 + 2e-3, abs=1e-9))


class _Clock:
    """What :func:`settling_watch._batch` reads of a compiled handle: its step, chunk, and the
    recorders' sampling steps (real recorders at rates that do not divide the check period)."""

    def __init__(self, dt: float, chunk: int, fps: tuple[float, ...]) -> None:
        from types import SimpleNamespace

        from hsa_elastica.io.recording import RodRecorder

        self.dt, self.chunk = dt, chunk
        self.recorders = [RodRecorder(fps=f, dt=dt) for f in fps]
        self.model = SimpleNamespace(inputs=SimpleNamespace(callback_every=1 if fps else 0,
                                                            callbacks=self.recorders))

    def _next_callback_step(self, step: int) -> int:
        return min((r.next_sample_step(step) for r in self.recorders), default=-1)

    def _callback_steps(self, first: int, last: int):  # type: ignore[no-untyped-def]
        from hsa_elastica.robots.compiled import FastRobot

        return FastRobot._callback_steps(self, first, last)  # type: ignore[arg-type]


def _batch_by_hand(clock: _Clock, t: float, t_max: float, per_check: int):  # type: ignore[no-untyped-def]
    """The checks of one call, one at a time: a check records when the first recording step
    from its first step on is its last step."""
    steps, ends, samples = [], [], []
    while t < t_max - 0.5 * clock.dt:
        n = min(per_check, int(np.ceil((t_max - t) / clock.dt - 1e-9)))
        if steps and sum(steps) + n > clock.chunk:
            break
        first = round(t / clock.dt) + 1
        t = t + n * clock.dt
        end = round(t / clock.dt)
        nxt = clock._next_callback_step(first) if clock.recorders else -1
        steps.append(n)
        ends.append(t)
        samples.append(end if nxt == end else 0)
    return steps, ends, samples


@pytest.mark.parametrize("dt, per_check, chunk, fps", [
    (2e-3, 1, 500, (100.0,)), (1e-3, 2, 500, (100.0, 30.0)), (1e-3, 3, 47, (60.0,)),
    (5e-4, 4, 500, (33.0, 100.0)), (2e-3, 1, 500, (500.0,)), (1e-3, 1, 500, (700.0,)),
    (2e-3, 1, 500, ()),
])
def test_a_call_s_checks_and_recordings_are_those_taken_one_at_a_time(
        dt: float, per_check: int, chunk: int, fps: tuple[float, ...]) -> None:
    clock = _Clock(dt, chunk, fps)
    t, t_max, calls = 0.0, 0.7, 0
    while t < t_max - 0.5 * dt:
        got = settling_watch._batch(clock, t, t_max, per_check)
        assert got == _batch_by_hand(clock, t, t_max, per_check)
        assert 0 < sum(got[0]) <= max(chunk, per_check)
        t, calls = got[1][-1], calls + 1
    assert calls >= 1 and abs(t - t_max) < 1e-9
    if fps:  # some check of the run ends on a recording step
        assert any(settling_watch._batch(clock, 0.0, t_max, per_check)[2])


def test_a_call_s_step_times_are_those_of_one_call_per_check() -> None:
    # the motor table's times of a batch at once, against the per-check loop's arithmetic
    # (check c starts where the one before ended, end + n dt; step k of it ends at start + k dt)
    from hsa_elastica.engines.implicit_watch import _step_times

    rng = np.random.default_rng(0)
    for _ in range(100):
        steps = rng.integers(1, 5, rng.integers(0, 300))
        t, dt = float(rng.uniform(0.0, 10.0)), float(rng.choice([2e-3, 1e-3, 5e-4, 3e-5]))
        parts, end = [np.array([t])], t
        for n in steps:
            parts.append(end + dt * np.arange(1, int(n) + 1, dtype=np.float64))
            end = end + int(n) * dt
        np.testing.assert_array_equal(_step_times(steps, t, dt), np.concatenate(parts))


def test_a_stack_s_watched_loop_is_the_per_check_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # a two-stage stack on the implicit integrator: every segment's rods and platform watched
    # (the largest angular speed of the platforms), the bottom stage's rods for lost twist, the
    # recordings of every segment replayed
    from hsa_elastica.robots.stack import stack_primitive_angles
    from hsa_elastica.robots.stack_steady_state import solve_stack_steady_state

    p = _params(1e-3)
    p = p.replace(rod=p.rod.replace(n_elements=8),
                  simulation=p.simulation.replace(damping=20.0, rotational_damping=20.0))
    u = stack_primitive_angles([("bend_east", 1.0), ("twist_cw", 0.5)], [p, p])
    watched, reference = _watched_and_reference(monkeypatch, lambda: solve_stack_steady_state(
        [p, p], u, settle=SettleOptions(max_time=1.5), record=True))
    for key in ("converged", "sim_time_s", "n_steps", "settle_time_s", "max_node_speed_m_s",
                "max_platform_omega_rad_s", "diverged"):
        x, y = getattr(watched, key), getattr(reference, key)
        assert x == y or (np.isnan(x) and np.isnan(y)), key
    for a, b in zip(watched.relative_poses, reference.relative_poses):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    pd.testing.assert_frame_equal(watched.diagnostics, reference.diagnostics, check_exact=True)
    assert watched.converged and watched.diagnostics.shape[0] > 10


@pytest.mark.parametrize("damped, grown", [(False, False), (True, False), (False, True)])
def test_samples_taken_in_the_loop_are_what_the_callbacks_record(
        monkeypatch: pytest.MonkeyPatch, damped: bool, grown: bool) -> None:
    # the built-in recorders' samples taken inside the compiled loop (robots/loop_samples.py)
    # against copies of the same instants replayed one at a time through PyElastica's
    # callbacks: every column equal, the joint wrench with damped joints (it reads the
    # velocities) included; ``grown``: the shared buffers made for one sample, so that the
    # first call grows them (the first sample's rows carried over)
    from hsa_elastica.robots import loop_samples

    if grown:
        make = loop_samples.LoopSamples.make.__func__  # type: ignore[attr-defined]
        monkeypatch.setattr(loop_samples.LoopSamples, "make",
                            classmethod(lambda cls, model, capacity: make(cls, model, 1)))

    p = _params(2e-3)
    if damped:
        p = p.replace(joint=p.joint.replace(nu_F=50.0, nu_tau=0.01))
    u = primitive_angles("bend_east", 1.0, p)
    plans = []
    plan = loop_samples.LoopSamples.plan

    def spy(self, count):  # type: ignore[no-untyped-def]
        taken = plan(self, count)
        plans.append(taken is not None)
        return taken

    def solve():  # type: ignore[no-untyped-def]
        return solve_steady_state(p, u, settle=SettleOptions(max_time=0.3),
                                  stop_when_settled=False, record=True)

    monkeypatch.setattr(loop_samples.LoopSamples, "plan", spy)
    compiled = solve()
    assert plans and all(plans)  # the loop took every sample after the first
    monkeypatch.setattr(loop_samples.LoopSamples, "make",
                        classmethod(lambda cls, *a: None))
    copies = solve()
    assert len(compiled.diagnostics) == 31  # 0.3 s at 100 fps, the first sample and the last
    pd.testing.assert_frame_equal(compiled.diagnostics, copies.diagnostics, check_exact=True)
