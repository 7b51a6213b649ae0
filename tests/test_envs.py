"""``HSARobot-v0`` Gymnasium environment (issue 16); skipped without gymnasium."""

from __future__ import annotations

import math

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import hsa_elastica.envs  # noqa: E402,F401  (registers the ids)
from hsa_elastica.envs import HSARobotEnv  # noqa: E402
from hsa_elastica.params import ParameterError  # noqa: E402


def test_registered_and_passes_the_gymnasium_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    env = gym.make("HSARobot-v0", max_steps=5)
    assert isinstance(env.unwrapped, HSARobotEnv)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_seeded_targets_and_reward_is_minus_distance() -> None:
    env = HSARobotEnv(max_steps=3)
    obs_a, info_a = env.reset(seed=7)
    obs_b, info_b = env.reset(seed=7)
    np.testing.assert_array_equal(obs_a, obs_b)
    _, info_c = env.reset(seed=8)
    assert not np.allclose(info_c["target"], info_a["target"])
    # targets inside the documented cylinder above the rest pose
    rng_targets = [env.reset(seed=s)[1]["target"] - env.rest_position for s in range(20)]
    for d in rng_targets:
        assert math.hypot(d[0], d[1]) <= env.target_radius + 1e-15
        assert env.target_height[0] <= d[2] <= env.target_height[1]
    env.reset(seed=7)
    high = env.action_space.high
    for k in range(3):
        # the second action is out of range: it is clipped to the elongating range
        action = (0.3 if k != 1 else 2.0) * np.where(high > 0, high, env.action_space.low)
        obs, reward, terminated, truncated, info = env.step(action)
        assert not terminated
        assert truncated == (k == 2)
        # reward from the observation: platform position (0:3) and target (13:16)
        assert reward == pytest.approx(-np.linalg.norm(obs[0:3] - obs[13:16]), abs=1e-6)
        assert obs.dtype == np.float32 and env.observation_space.contains(obs)
        lo, hi = env.action_space.low, env.action_space.high
        assert np.all(info["motor_angles"] >= lo - 1e-6) and np.all(info["motor_angles"] <= hi + 1e-6)
    # the elongating commands raised the platform
    assert obs[2] > env.rest_position[2] + 1e-3


def test_options_target_and_torque_observation() -> None:
    env = HSARobotEnv(motor_torques=True, max_steps=2, n_elements=10, dt=5e-5)
    assert env.params.rod.n_elements == 10 and env.params.simulation.dt == 5e-5
    obs, info = env.reset(seed=0, options={"target": (0.0, 0.0, 0.11)})
    assert len(env.robot.rods[0].rest_lengths) == 10
    assert obs.shape == (20,)
    np.testing.assert_allclose(info["target"], (0.0, 0.0, 0.11))
    obs, *_ = env.step(env.action_space.high * 0.0 + 0.5 * (env.action_space.high + env.action_space.low))
    assert np.all(np.isfinite(obs))
    assert np.any(np.abs(obs[16:]) > 0.0)  # motor torques of the twisted rods


def test_rgb_array_render() -> None:
    env = HSARobotEnv(render_mode="rgb_array", render_size=(160, 120), max_steps=1)
    env.reset(seed=0)
    try:
        img = env.render()
    except Exception as exc:  # off-screen VTK not available on this machine
        pytest.skip(f"off-screen rendering unavailable: {exc}")
    assert img is not None and img.dtype == np.uint8 and img.shape == (120, 160, 3)
    assert img.std() > 0  # not a blank frame


def test_discretization_is_explicit() -> None:
    from hsa_elastica.params import paper_robot_params

    # the paper robot defaults to the coarse discretization (a documented parameter) ...
    env = HSARobotEnv(max_steps=1)
    assert env.discretization == "coarse"
    assert (env.params.rod.n_elements, env.params.simulation.dt) == (10, 6e-5)
    # ... the paper's own on request, and params passed in are never coarsened silently
    full = HSARobotEnv(max_steps=1, discretization="full")
    given = HSARobotEnv(paper_robot_params(), max_steps=1)
    for e in (full, given):
        assert e.discretization == "full"
        assert (e.params.rod.n_elements, e.params.simulation.dt) == (25, 3e-5)
    assert HSARobotEnv(max_steps=1, n_elements=12).params.rod.n_elements == 12
    with pytest.raises(ParameterError, match="discretization"):
        HSARobotEnv(discretization="fine")


def test_stack_env_registered_checked_and_reaches_up() -> None:
    from gymnasium.utils.env_checker import check_env

    from hsa_elastica.envs import HSAStackEnv

    env = gym.make("HSAStack-v0", max_steps=3, n_elements=10, dt=5e-5, control_dt=0.01)
    assert isinstance(env.unwrapped, HSAStackEnv)
    check_env(env.unwrapped, skip_render_check=True)
    stack_env = env.unwrapped
    assert stack_env.action_space.shape == (8,)
    obs, info = stack_env.reset(seed=1)
    # two stages of 100 mm rods + 3 mm platforms: the top centre 204.5 mm above the base
    np.testing.assert_allclose(obs[0:3], [0.0, 0.0, 0.2045], atol=1e-9)
    high, low = stack_env.action_space.high, stack_env.action_space.low
    action = 0.5 * np.where(high > 0, high, low)  # every rod half way along its elongating range
    for _ in range(3):
        obs, reward, terminated, truncated, info = stack_env.step(action)
        assert not terminated
        assert reward == pytest.approx(-np.linalg.norm(obs[0:3] - obs[13:16]), abs=1e-6)
    assert truncated
    assert obs[2] > 0.2045 + 1e-3  # all eight rods elongating lift the top platform
    env.close()


def test_stack_rgb_array_render_draws_both_stages() -> None:
    """The stack's image shows more than the single robot's: two platforms and eight rods make
    more non-background pixels than one stage seen the same way (measured ~1.6x)."""
    from hsa_elastica.envs import HSAStackEnv

    stack = HSAStackEnv(render_mode="rgb_array", n_elements=6, max_steps=1)
    robot = HSARobotEnv(render_mode="rgb_array", n_elements=6, max_steps=1)
    stack.reset(seed=0)
    robot.reset(seed=0)
    try:
        imgs = [stack.render(), robot.render()]
    except Exception as exc:  # off-screen VTK not available on this machine
        pytest.skip(f"off-screen rendering unavailable: {exc}")
    filled = []
    for img in imgs:
        assert img is not None and img.dtype == np.uint8 and img.shape == (360, 480, 3)
        filled.append(int(np.sum(np.any(img < 240, axis=2))))
    assert filled[0] > 1.2 * filled[1], filled


def test_stack_env_discretization_default_and_refusal() -> None:
    """Two paper robots default to the coarse discretization (10 elements, 6e-5 s), given
    segments keep theirs, and an unknown discretization is refused by name."""
    from hsa_elastica.envs import HSAStackEnv
    from hsa_elastica.params import ParameterError, paper_robot_params

    env = HSAStackEnv()
    assert env.discretization == "coarse"
    assert all(p.rod.n_elements == 10 and p.simulation.dt == 6e-5 for p in env.segments)
    given = HSAStackEnv([paper_robot_params()] * 2)
    assert given.discretization == "full" and given.segments[0].rod.n_elements == 25
    with pytest.raises(ParameterError, match="discretization"):
        HSAStackEnv(discretization="fine")
