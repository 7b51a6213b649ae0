"""Bad input to the Gymnasium environments: refused with one line naming the field
and what is allowed, before any work; the episode goes on unharmed after a refused action.
Skipped without gymnasium."""

from __future__ import annotations

import math

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import hsa_elastica  # noqa: E402,F401  (registers the ids)
from hsa_elastica.envs import HSARobotEnv, HSAStackEnv  # noqa: E402
from hsa_elastica.params import MAX_MOTOR_ANGLE, ParameterError  # noqa: E402

BAD_ACTIONS = {
    "scalar": 0.5,
    "0-d array": np.float32(0.5),
    "one short": [0.0] * 3,
    "one long": [0.0] * 5,
    "row of a batch": [[0.0] * 4],
    "nan": [0.0, math.nan, 0.0, 0.0],
    "+inf": [math.inf, 0.0, 0.0, 0.0],
    "-inf": [0.0, 0.0, 0.0, -math.inf],
    "strings": ["a", "b", "c", "d"],
    "None": None,
    "empty": [],
}


@pytest.fixture(scope="module")
def robot_env() -> HSARobotEnv:
    env = HSARobotEnv(n_elements=4, dt=1e-4)  # the checks run before any physics
    env.reset(seed=0)
    return env


def _one_line(exc: pytest.ExceptionInfo[ParameterError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("name", list(BAD_ACTIONS))
def test_bad_action_is_refused_naming_shape_and_range(robot_env: HSARobotEnv, name: str) -> None:
    """No broadcasting of a scalar to every motor, no numpy broadcasting message, no NaN motor
    command: one ``ParameterError`` naming the expected shape and range; nothing simulated."""
    t0 = robot_env.robot.time
    with pytest.raises(ParameterError) as exc:
        robot_env.step(BAD_ACTIONS[name])  # type: ignore[arg-type]
    msg = _one_line(exc)
    assert "action" in msg and "(4,)" in msg and "[-1, 1]" in msg, msg
    assert robot_env.robot.time == t0


def test_episode_goes_on_after_a_refused_action(robot_env: HSARobotEnv) -> None:
    with pytest.raises(ParameterError):
        robot_env.step([math.nan] * 4)
    obs, _, terminated, _, info = robot_env.step(np.zeros(4, dtype=np.float32))
    assert not terminated and np.all(np.isfinite(obs))
    # half way (pi/2) is beyond one interval of the default servo limit: the MX-28's
    # 55 rev/min for 20 ms, 0.1152 rad
    servo_step = 55.0 * 2.0 * math.pi / 60.0 * 0.02
    np.testing.assert_allclose(np.abs(info["motor_angles_rad"]), servo_step, atol=1e-12)


def test_bad_action_through_gym_make_and_the_stack() -> None:
    """The same refusal through gymnasium's wrappers, and with the stack's 8 motors."""
    env = gym.make("HSARobot-v1", n_elements=4, dt=1e-4)
    env.reset(seed=0)
    with pytest.raises(ParameterError, match=r"shape \(4,\)"):
        env.step(1.0)
    stack = HSAStackEnv(n_elements=4, dt=1e-4)
    stack.reset(seed=0)
    for action in (0.0, [0.0] * 4, [0.0] * 7 + [math.inf]):
        with pytest.raises(ParameterError) as exc:
            stack.step(action)  # type: ignore[arg-type]
        assert "(8,)" in _one_line(exc) and "[-1, 1]" in str(exc.value)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"max_steps": 10}, "max_episode_steps"),
        ({"phi_max": 2 * MAX_MOTOR_ANGLE}, "phi_max"),
        ({"phi_max": math.nan}, "phi_max"),
        ({"control_dt": 0.0}, "control_dt"),
        ({"render_mode": "ansi"}, "render_mode"),
    ],
)
@pytest.mark.filterwarnings("ignore:.*render_mode:UserWarning")  # gymnasium's own, for 'ansi'
def test_bad_constructor_arguments(kwargs: dict[str, object], field: str) -> None:
    """(``gym.make(..., render_mode="human")`` is gymnasium's: it wraps the ``rgb_array`` env
    in its ``HumanRendering``.)"""
    with pytest.raises(ParameterError) as exc:
        HSARobotEnv(**kwargs)  # type: ignore[arg-type]
    assert field in _one_line(exc)
    with pytest.raises(ParameterError):
        gym.make("HSAStack-v1", **kwargs)


@pytest.mark.parametrize("target", [(0.0, 0.0, math.nan), (0.0, 0.0, 1.0), (0.0, 0.1), "x"])
def test_bad_target_is_refused(robot_env: HSARobotEnv, target: object) -> None:
    """A target outside the robot's reach (213 mm), not finite or not 3 numbers."""
    with pytest.raises(ParameterError) as exc:
        robot_env.reset(seed=0, options={"target": target})
    assert "options['target']" in _one_line(exc) and "m" in str(exc.value)


@pytest.mark.parametrize("env_id", ["HSARobot-v1", "HSAStack-v1"])
@pytest.mark.parametrize(
    "kwargs, needle",
    [
        # 1e9 s asked numpy for 121 TiB at the first step: at most 2e7 internal steps of the
        # coarse 6e-5 s (1200 s)
        ({"control_dt": 1e9}, "control_dt = 1e+09 is invalid: must be a finite number >= 6e-05 and <= 1200 s"),
        # shorter than one internal step: was accepted until the first step
        ({"control_dt": 1e-9}, "control_dt = 1e-09 is invalid: must be a finite number >= 6e-05"),
        ({"control_dt": "fast"}, "control_dt = 'fast' is invalid"),
        # above the explicit stability limit of the coarse 10-element rods (6.9e-5 s)
        ({"dt": 1.0}, "Env.dt = 1.0 is invalid: must be > 0 and <= 6.86e-05 s"),
        # 60 elements at the coarse step: the step the discretization chose is named
        ({"n_elements": 60}, "Env.dt = 6e-05 (the discretization's internal step; pass a smaller dt) is invalid"),
    ],
)
def test_step_sizes_checked_at_construction(env_id: str, kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(ParameterError) as exc:  # the explicit stepper's limits
        gym.make(env_id, integrator="explicit", **kwargs)
    msg = _one_line(exc)
    owner = "HSARobotEnv" if env_id == "HSARobot-v1" else "HSAStackEnv"
    assert needle in msg and msg.startswith(owner), msg
