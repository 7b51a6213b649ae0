"""Defects found while driving the robot as a controller would.

* a motor schedule reassigned after ``FastRobot`` was built must be followed by the fused path;
* per-rod motor schedules (any callable of time) on both paths, exact at every step;
* ``SingleRod.run`` after a user appended a system to its simulator;
* recording at ``record_fps`` without drift (no 9.99 ms period, no trailing extra sample);
* the command-line tool says when it has to compile the numba kernels.

The paths are compared as in ``tests/test_fast.py`` (1e-10: room for round-off growth only, no
modelling difference such as a missed command or a one-step lag).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from elastica.rigidbody import Sphere

from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.params import ParameterError, RodParams, paper_robot_params
from hsa_elastica.physics.actuation import Ramp, base_twist_angle
from hsa_elastica.robots.builders import build_robot, build_single_rod

TOL = 1e-10
DT = 2e-5
ANGLES = (0.9, -0.4, 0.3, -0.7)


def _params(**sim: object):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    s = dict(dt=DT, ramp_time=0.005, record_fps=500.0)
    s.update(sim)
    return dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, **s))


def _max_difference(a, b) -> float:  # type: ignore[no-untyped-def]
    worst = 0.0
    for ra, rb in zip([*a.rods, a.platform], [*b.rods, b.platform]):
        for name in ("position_collection", "velocity_collection", "director_collection",
                     "omega_collection"):
            x, y = np.asarray(getattr(ra, name)), np.asarray(getattr(rb, name))
            assert np.all(np.isfinite(x))
            worst = max(worst, float(np.max(np.abs(x - y))))
    return worst


def _twist(robot, i: int) -> float:  # type: ignore[no-untyped-def]
    return base_twist_angle(robot.rods[i], robot.motors[i].instance.reference_director)


def test_fused_path_follows_a_motor_schedule_changed_after_wrapping() -> None:
    params = _params()
    ref = build_robot(params, ANGLES, record=False)
    fast = FastRobot(build_robot(params, ANGLES, record=False), chunk=97)
    for robot in (ref, fast):
        robot.run(300 * DT)
    new = (-0.2, 0.6, 0.1, 0.4)
    for robot in (ref, fast):
        for i, phi in enumerate(new):
            robot.motors[i].instance.angle = Ramp(
                target=phi, start=ANGLES[i], duration=0.002, delay=robot.time, shape="linear"
            )
        robot.run(250 * DT)
    assert _max_difference(ref, fast) <= TOL
    # the base elements sit at the new angles (rotation about each rod's axis, to round-off)
    for i, phi in enumerate(new):
        assert abs(_twist(fast, i) - phi) < 1e-12


def test_a_number_assigned_as_motor_angle_is_held_on_both_paths() -> None:
    params = _params()
    ref = build_robot(params, ANGLES, record=False)
    fast = FastRobot(build_robot(params, ANGLES, record=False), chunk=97)
    for robot in (ref, fast):
        robot.run(100 * DT)
        robot.motors[1].instance.angle = 0.25
        assert robot.motors[1].instance.angle_rate is None  # the old ramp's rate is dropped
        robot.run(150 * DT)
    assert _max_difference(ref, fast) <= TOL
    assert abs(_twist(fast, 1) - 0.25) < 1e-12
    with pytest.raises(ParameterError, match="MotorAngleBC.angle"):
        ref.motors[0].instance.angle = math.inf


class _Sine:
    """A schedule with a ``rate`` method that is not a Ramp: phi = a sin(2 pi f t)."""

    def __init__(self, a: float, f: float) -> None:
        self.a, self.w = a, 2.0 * math.pi * f
        self.times: list[float] = []

    def __call__(self, t: float) -> float:
        self.times.append(t)
        return self.a * math.sin(self.w * t)

    def rate(self, t: float) -> float:
        return self.a * self.w * math.cos(self.w * t)


def test_per_rod_schedules_are_exact_on_both_paths() -> None:
    params = _params()

    def schedules():  # type: ignore[no-untyped-def]
        # four different kinds: a Ramp, a plain callable (no rate), a callable with a rate, a
        # number (ramped by the builder); 200 Hz so that a value held over a chunk would show
        return [
            Ramp(target=0.8, duration=0.003, shape="linear"),
            lambda t: -0.3 * (1.0 - math.cos(2.0 * math.pi * 200.0 * t)),
            _Sine(0.25, 200.0),
            -0.5,
        ]

    ref = build_robot(params, schedules(), record=False)
    fast = FastRobot(build_robot(params, schedules(), record=False), chunk=500)
    n = 437  # not a multiple of anything
    ref.run(n * DT)
    fast.run(n * DT)
    assert fast.time == ref.time
    assert _max_difference(ref, fast) <= TOL
    sine = fast.motors[2].instance.angle
    # the fused path evaluated the schedule at each step's two operator times (mid, end);
    # finalize() applies the constraints once at t = 0
    assert len({t for t in sine.times if t > 0.0}) == 2 * n
    for i in range(3):
        phi = fast.motors[i].instance.angle(fast.time)
        assert abs(_twist(fast, i) - phi) < 1e-12


def test_per_rod_schedule_validation() -> None:
    with pytest.raises(ParameterError, match="motor_angles"):
        build_robot(_params(), [0.1, "x", 0.0, 0.0], record=False)
    with pytest.raises(ParameterError, match="motor_angles"):
        build_robot(_params(), [0.1, math.nan, 0.0, 0.0], record=False)


def test_single_rod_runs_after_a_system_is_appended() -> None:
    rod = RodParams(n_elements=8)
    handle = build_single_rod(rod, finalize=False)
    ball = Sphere(center=np.array([0.5, 0.0, 0.0]), base_radius=0.01, density=1000.0)
    handle.simulator.append(ball)
    handle.finalize()
    t = handle.run(10 * handle.dt)
    assert t == pytest.approx(10 * handle.dt)
    assert np.all(np.isfinite(handle.rod.position_collection))


@pytest.mark.parametrize("fast", [False, True], ids=["reference", "fused"])
def test_recording_period_does_not_drift(fast: bool) -> None:
    # dt = 3e-5 s does not divide 1 ms: a fixed 33-step period gives 0.99 ms and, over 0.1 s,
    # one sample too many.  Samples must sit at k / fps to within dt / 2, one per period.
    dt, fps, duration = 3e-5, 1000.0, 0.1
    params = _params(dt=dt, record_fps=fps)
    robot = build_robot(params, ANGLES, record=True)
    if fast:
        robot = FastRobot(robot, chunk=250)
    robot.run(duration)
    times = robot.diagnostics()["time"].to_numpy()
    n_steps = math.ceil(duration / dt * (1 - 1e-9))
    assert len(times) == math.floor(n_steps * dt * fps + 1e-9) + 1
    k = np.arange(len(times))
    assert np.max(np.abs(times - k / fps)) <= 0.5 * dt + 1e-15
    # the mean period is the requested one (0.99 ms before the fix)
    assert np.mean(np.diff(times)) == pytest.approx(1.0 / fps, rel=1e-3)


def _import_module(path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def test_cache_detector_sees_a_cold_and_a_warm_cache(tmp_path: Path) -> None:
    from hsa_elastica import compat

    src = tmp_path / "hsa_cache_probe_mod.py"
    src.write_text(
        "from numba import njit\n@njit(cache=True)\ndef f(x):\n    return x + 1.0\n"
    )
    mod = _import_module(src)
    assert not compat.numba_cache_has_entry(mod.f)  # never compiled: cold
    assert mod.f(1.0) == 2.0
    assert compat.numba_cache_has_entry(mod.f)  # compiled and written to the cache
