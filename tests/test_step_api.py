"""Step API (``set_motor_angles`` / ``step`` / ``state``) on both paths.

* Commands changed every control interval give the same trajectory and the same state on the
  per-rod path and the fused path (1e-10, as tests/test_fast.py: round-off only).
* Changing commands does not recompile anything (numba signatures unchanged).
* Control intervals are whole internal steps without drift.
* The motor torque against a closed form: a straight rod twisted by its motor with the other end
  clamped carries a uniform twist, torque ``B_z * phi / l_twist`` with ``l_twist`` the distance
  between the centres of the first and last elements, ``(n - 1) L / n``: PyElastica's twist
  strain lives on the n - 1 Voronoi domains between the clamped end elements.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from elastica.boundary_conditions import FixedConstraint
from elastica.dissipation import AnalyticalLinearDamper
from elastica.timestepper.symplectic_steppers import PositionVerlet

from hsa_elastica.engines import fused
from hsa_elastica.engines.control import STATE_KEYS, motor_torques
from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.engines.timeloop import run as run_loop
from hsa_elastica.params import ParameterError, RodParams, paper_robot_params
from hsa_elastica.physics.actuation import MotorAngleBC, Ramp
from hsa_elastica.robots.builders import HSASimulator, build_robot, make_hsa_rod

TOL = 1e-10
DT = 2e-5


def _params(**sim: object):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    s = dict(dt=DT, ramp_time=0.005, record_fps=500.0)
    s.update(sim)
    return dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, **s))


def _commands(seed: int, n: int) -> np.ndarray:
    # random angles within each rod's elongating range (handedness R, L, R, L), up to 1.2 rad
    rng = np.random.default_rng(seed)
    h = np.array([1.0, -1.0, 1.0, -1.0])
    return h * rng.uniform(0.0, 1.2, size=(n, 4))


@pytest.mark.parametrize("interpolate", [True, False], ids=["linear", "hold"])
def test_changing_commands_same_trajectory_on_both_paths(interpolate: bool) -> None:
    params = _params()
    ref = build_robot(params, [0.0] * 4, record=True)
    fast = FastRobot(build_robot(params, [0.0] * 4, record=True), chunk=333)
    # a small hold step (0.05 rad) so the command steps stay far from any stability limit
    cmds = _commands(1, 6) * (1.0 if interpolate else 0.05)
    signatures: tuple[int, int] | None = None
    for k, u in enumerate(cmds):
        if k == 1:  # compiled (or loaded from the cache) by the first interval
            signatures = (len(fused.advance.signatures), len(fused.ramp_table.signatures))
        states = []
        for robot in (ref, fast):
            robot.set_motor_angles(u)
            robot.step(0.0023, interpolate=interpolate)  # 115 internal steps
            states.append(robot.state())
        assert fast.time == ref.time
        a, b = states
        assert list(a) == list(STATE_KEYS)
        for key in STATE_KEYS:
            err = float(np.max(np.abs(np.asarray(a[key]) - np.asarray(b[key]))))
            assert err <= TOL, f"step {k}: {key} differs by {err:.3g}"
    # the motors reached the last command at the end of the interval
    np.testing.assert_allclose(fast.state()["motor_angles_rad"], cmds[-1], rtol=0, atol=1e-12)
    # the platform moved (not a trivial match) and the torques are not zero
    assert fast.state()["platform_position_m"][2] > params.rod.length + 1e-4
    assert np.all(np.abs(fast.state()["motor_torques_nm"]) > 1e-4)
    # no recompilation for new commands
    assert (len(fused.advance.signatures), len(fused.ramp_table.signatures)) == signatures
    d_ref, d_fast = ref.diagnostics(), fast.diagnostics()
    np.testing.assert_allclose(d_fast.to_numpy(), d_ref.to_numpy(), rtol=0.0, atol=TOL)


def test_control_intervals_are_whole_steps_without_drift() -> None:
    dt = 3e-5  # does not divide 20 ms
    robot = FastRobot(build_robot(_params(dt=dt), [0.0] * 4, record=False))
    times = []
    for _ in range(10):
        robot.set_motor_angles([0.1, -0.1, 0.1, -0.1])
        times.append(robot.step(0.02))
    for k, t in enumerate(times, start=1):
        assert abs(t - 0.02 * k) <= 0.5 * dt + 1e-12  # nearest internal step to k * 20 ms
        assert abs(t / dt - round(t / dt)) < 1e-6  # whole steps


def test_step_api_rejects_bad_input() -> None:
    robot = build_robot(_params(), [0.0] * 4, record=False)
    with pytest.raises(ParameterError, match="n_rods = 4"):
        robot.set_motor_angles([0.1, 0.2])
    with pytest.raises(ParameterError, match=r"angles \(angle 2\)"):
        robot.set_motor_angles([0.1, 0.2, math.nan, 0.0])
    with pytest.raises(ParameterError, match="dt_control"):
        robot.step(0.5 * DT)
    with pytest.raises(ParameterError, match="dt_control"):
        robot.step(math.inf)



def test_run_length_capped_as_on_the_command_line() -> None:
    # robot.step(1e9) ran without bound; the cap is the command line's: 2e7 internal steps
    # (400 s at this dt = 2e-5 s), for the step API and run() on both handles, before any step
    from hsa_elastica.params import MAX_STEPS

    assert MAX_STEPS == 20_000_000  # docs/reliability.md: "at most 2e7 time steps"
    robot = build_robot(_params(), [0.0] * 4, record=False)
    fast = FastRobot(build_robot(_params(), [0.0] * 4, record=False))
    for handle in (robot, fast):
        with pytest.raises(ParameterError, match=r"dt_control = 1e\+09 is invalid.*<= 400 s"):
            handle.step(1e9)
        with pytest.raises(ParameterError, match=r"run\(\): duration.*<= 400 s"):
            handle.run(401.0)
        assert handle.time == 0.0  # refused before the first step


def test_motor_torque_of_a_clamped_rod_in_pure_torsion() -> None:
    n, length, phi = 6, 0.05, 0.3
    rp = RodParams(n_elements=n, length=length)
    dt = 2e-5
    sim = HSASimulator()
    rod = make_hsa_rod(rp, base_position=(0.0, 0.0, 0.0), normal=(1.0, 0.0, 0.0))
    sim.append(rod)
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
        angle=Ramp(target=phi, duration=0.01),
    )
    sim.constrain(rod).using(
        FixedConstraint, constrained_position_idx=(-1,), constrained_director_idx=(-1,)
    )
    sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=200.0, time_step=dt)
    sim.finalize()
    run_loop(sim, PositionVerlet(), duration=0.1, dt=dt)
    expected = rp.B_z * phi / ((n - 1) * length / n)
    # settled (damping 200 1/s over 0.09 s after the ramp); 1e-4 relative leaves room for the
    # second-order axial strain of a twisted rod and the residual motion (seen: 2e-6) and is
    # far below any modelling error (a wrong sign, Voronoi length or dilatation power: >= 1e-1)
    assert motor_torques([rod])[0] == pytest.approx(expected, rel=1e-4)
