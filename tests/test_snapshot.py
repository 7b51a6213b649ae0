"""State snapshots (engines/snapshot.py): restoring a snapshot and stepping gives bitwise the
trajectory of never having stopped, on every engine (operators, fused, implicit; exact
equality: the same arithmetic on the same numbers; any difference means some state was not
captured)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hsa_elastica.params import ParameterError, paper_robot_params


def _params(law: str = "filtered") -> Any:
    p = paper_robot_params()
    # coarse rods keep it short; the twist filter (state of its own in the coupling), the
    # passive law (the reciprocal couple kept by the operator between its two calls), or the
    # creep of the rest strain (its strain and clock in the coupling table)
    extra: dict[str, Any] = {
        "filtered": {"twist_filter_time": 0.005}, "passive": {"coupling_law": "passive"},
        "creep": {"creep_fraction": 0.3, "creep_time": 0.01},
    }[law]
    rod = dataclasses.replace(p.rod, n_elements=8, **extra)
    return dataclasses.replace(p, rod=rod)


def _build(engine: str, law: str = "filtered") -> Any:
    from hsa_elastica.robots.builders import build_fast_robot, build_robot

    p = _params(law)
    angles = [0.8, -0.8, 0.8, -0.8]
    if engine == "fused":
        return build_fast_robot(p, angles, ramp=0.02, record=False)
    return build_robot(p, angles, ramp=0.02, record=False)


def _roll(robot: Any, commands: list[list[float]], h: float) -> list[np.ndarray]:
    out = []
    for u in commands:
        robot.set_motor_angles(u)
        robot.step(h)
        out.append(np.concatenate([robot.rods[0].position_collection.ravel(),
                                   robot.platform.position_collection.ravel(),
                                   robot.platform.omega_collection.ravel(), [robot.time]]))
    return out


@pytest.mark.parametrize("engine, law", [("fused", "filtered"), ("operators", "filtered"),
                                         ("fused", "passive"), ("operators", "passive"),
                                         ("fused", "creep"), ("operators", "creep")])
def test_restore_and_step_is_bitwise_the_uninterrupted_run(engine: str, law: str,
                                                           tmp_path: Path) -> None:
    h = 0.002 if engine == "fused" else 0.0006
    robot = _build(engine, law)
    robot.step(h)  # mid-ramp: moving rods, initialised operators and filter memory
    state = robot.get_state()
    robot.save_state(tmp_path / "s.npz")
    commands = [[0.2, -0.4, 0.6, -0.1], [1.0, 0.0, -0.5, 0.3]]
    first = _roll(robot, commands, h)
    # restore in memory: the same commands give the same states, bit for bit
    robot.set_state(state)
    again = _roll(robot, commands, h)
    for a, b in zip(first, again):
        assert np.array_equal(a, b)
    # from disk, into a fresh robot of the same model
    other = _build(engine, law)
    other.load_state(tmp_path / "s.npz")
    for a, b in zip(first, _roll(other, commands, h)):
        assert np.array_equal(a, b)


def test_schedules_and_extra_state_are_restored() -> None:
    """A step() replaces the motor schedules by ramps: restoring brings the old ones back; an
    engine's ``extra_state`` / ``set_extra_state`` hook travels with the snapshot."""
    robot = _build("fused")
    robot.step(0.002)
    saved: dict[str, np.ndarray] = {}
    robot.extra_state = lambda: {"memory": np.array([1.0, 2.0])}
    robot.set_extra_state = saved.update
    before = robot._motor_bcs[0].angle
    state = robot.get_state()
    robot.set_motor_angles([0.1, 0.1, 0.1, 0.1])
    robot.step(0.002)
    assert robot._motor_bcs[0].angle is not before
    robot.set_state(state)
    assert robot._motor_bcs[0].angle is before
    assert np.array_equal(saved["memory"], [1.0, 2.0])


def _one_line(exc: pytest.ExceptionInfo[ParameterError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_foreign_state_is_refused(tmp_path: Path) -> None:
    fused = _build("fused")
    with pytest.raises(ParameterError, match="state"):
        fused.set_state(_build("operators").get_state())
    with pytest.raises(ParameterError, match="state"):
        fused.set_state({"time": 0.0})
    (tmp_path / "bad.npz").write_bytes(b"not a state file")
    with pytest.raises(ParameterError, match="path") as exc:
        fused.load_state(tmp_path / "bad.npz")
    assert "not an .npz" in _one_line(exc)
    # an .npz that is not a state file
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ParameterError, match="path") as exc:
        fused.load_state(tmp_path / "other.npz")
    assert "meta.json" in _one_line(exc)
    # a truncated state file (a save interrupted by a dying machine, a partial copy)
    fused.step(0.002)
    fused.save_state(tmp_path / "s.npz")
    data = (tmp_path / "s.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ParameterError, match="path") as exc:
        fused.load_state(tmp_path / "cut.npz")
    assert "truncated" in _one_line(exc)


@pytest.mark.parametrize("change, field", [({"k_tau": 30.0}, "joint.k_tau"),
                                           ({"n_elements": 6}, "rod.n_elements")])
def test_state_of_another_model_is_refused(change: dict[str, Any], field: str,
                                           tmp_path: Path) -> None:
    """A state saved from a robot with other parameters (same discretisation or not) names the
    first parameter that differs, in memory and from a file; nothing is restored."""
    from hsa_elastica.robots.builders import build_fast_robot

    p = _params()
    if field.startswith("joint"):
        p = p.replace(joint=p.joint.replace(**change))
    else:
        p = p.replace(rod=p.rod.replace(**change))
    other = build_fast_robot(p, [0.8, -0.8, 0.8, -0.8], ramp=0.02, record=False)
    other.step(0.002)
    other.save_state(tmp_path / "other.npz")
    robot = _build("fused")
    before = robot.rods[0].position_collection.copy()
    for restore in (lambda: robot.set_state(other.get_state()),
                    lambda: robot.load_state(tmp_path / "other.npz")):
        with pytest.raises(ParameterError, match="another model") as exc:
            restore()
        assert field in _one_line(exc)
    assert np.array_equal(robot.rods[0].position_collection, before)


class _Payload:
    """Unpickling this runs ``Path.touch`` on the marker: what loading an untrusted pickle
    does with any code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (Path.touch, (self.marker,))


@pytest.mark.parametrize("name", ["s.pkl", "s.npz"])
def test_pickle_file_is_refused_not_executed(name: str, tmp_path: Path) -> None:
    import pickle

    marker = tmp_path / "ran"
    (tmp_path / name).write_bytes(pickle.dumps(_Payload(marker)))
    robot = _build("fused")
    with pytest.raises(ParameterError, match="pickle") as exc:
        robot.load_state(tmp_path / name)
    _one_line(exc)
    assert not marker.exists()
    # nor is one hidden inside an .npz (an object array): np.load(allow_pickle=False)
    obj = np.empty(1, dtype=object)
    obj[0] = _Payload(marker)
    robot.step(0.002)
    robot.save_state(tmp_path / "s2.npz")
    with np.load(tmp_path / "s2.npz") as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["arrays/rod.position"] = obj
    with open(tmp_path / "evil.npz", "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(ParameterError, match="path"):
        robot.load_state(tmp_path / "evil.npz")
    assert not marker.exists()


def test_schedules_written_to_file(tmp_path: Path) -> None:
    """Numbers and Ramps are written (a number set on a motor is a ``Constant``); an arbitrary
    callable cannot be, and save_state says so in one line."""
    robot = _build("fused")
    robot.step(0.002)
    robot._motor_bcs[1].angle = 0.3
    robot.save_state(tmp_path / "s.npz")
    other = _build("fused")
    other.load_state(tmp_path / "s.npz")
    assert other._motor_bcs[1].angle(1.0) == 0.3 and other._motor_bcs[1].angle_rate is None
    assert other._motor_bcs[0].angle == robot._motor_bcs[0].angle  # the Ramp, field by field
    robot._motor_bcs[2].angle = lambda t: 0.1 * t
    with pytest.raises(ParameterError, match="schedule") as exc:
        robot.save_state(tmp_path / "s.npz")
    _one_line(exc)


@pytest.mark.parametrize("integrator", ["explicit", "implicit"])
def test_env_rollouts_from_one_state_are_reproducible(integrator: str) -> None:
    """MPC-style use: two rollouts of the same actions from one ``get_state`` agree exactly
    (with either integrator)."""
    gym = pytest.importorskip("gymnasium")
    import hsa_elastica  # noqa: F401  (registers the ids)

    env = gym.make("HSARobot-v1", integrator=integrator, motor_speed=None)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    state = env.unwrapped.get_state()
    actions = [np.full(4, 0.5, dtype=np.float32), np.array([1, -1, 0.2, 0], dtype=np.float32)]
    first = [env.step(a)[0] for a in actions]
    env.unwrapped.set_state(state)
    again = [env.step(a)[0] for a in actions]
    for a, b in zip(first, again):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("law", ["filtered", "creep"])
def test_implicit_integrator_restores_bitwise(law: str, tmp_path: Path) -> None:
    """The implicit integrator (ImplicitRobot, 1 ms steps): its velocities, accelerations and
    chord Jacobian travel in the snapshot (``extra_state``; a restore factorises the saved
    Jacobian again), so restoring and stepping, in memory or from disk into a fresh robot,
    repeats the uninterrupted run bit for bit."""
    from hsa_elastica.robots.compiled import ImplicitRobot
    from hsa_elastica.robots.builders import build_fast_robot

    p = _params(law)
    p = p.replace(simulation=p.simulation.replace(dt=1e-3, integrator="implicit"))

    def build() -> Any:
        return build_fast_robot(p, [0.8, -0.8, 0.8, -0.8], ramp=0.02, record=False)

    h = 0.004
    robot = build()
    assert isinstance(robot, ImplicitRobot)
    robot.step(h)
    state = robot.get_state()
    assert state.extra["ga_velocity"].size and state.extra["ga_jacobian"].size
    robot.save_state(tmp_path / "s.npz")
    commands = [[0.2, -0.4, 0.6, -0.1], [1.0, 0.0, -0.5, 0.3]]
    first = _roll(robot, commands, h)
    robot.set_state(state)
    for a, b in zip(first, _roll(robot, commands, h)):
        assert np.array_equal(a, b)
    other = build()
    other.load_state(tmp_path / "s.npz")
    for a, b in zip(first, _roll(other, commands, h)):
        assert np.array_equal(a, b)
