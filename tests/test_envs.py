"""``HSARobot-v1`` / ``HSAStack-v1`` (and ``-v0``) Gymnasium environments; skipped without
gymnasium.  Bad actions and arguments: ``tests/test_reliability_envs.py``."""

from __future__ import annotations

import math
import subprocess
import sys
import warnings
from typing import Callable

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import hsa_elastica  # noqa: E402,F401  (registers the ids)
from hsa_elastica.engines.implicit import ImplicitStepFailed  # noqa: E402
from hsa_elastica.envs import HSARobotEnv, HSAStackEnv  # noqa: E402
from hsa_elastica.params import ParameterError  # noqa: E402

#: the paper robot's rod handedness (Section II-E: R, L, R, L around the circle) and phi_max
PAPER_HANDEDNESS = np.array([1.0, -1.0, 1.0, -1.0])


def _offscreen_rendering() -> str | None:
    """None if pyvista can render off screen here, else the reason."""
    try:
        env = HSARobotEnv(render_mode="rgb_array", render_size=(32, 32), n_elements=4, dt=1e-4)
        env.reset(seed=0)
        env.render()
    except Exception as exc:  # off-screen VTK not available on this machine
        return str(exc)
    return None


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (imports from a clean ``sys.modules``)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_hsa_elastica_registers_the_ids_without_loading_numba_or_gymnasium() -> None:
    """``import hsa_elastica`` registers both ids with their TimeLimit (150 steps) whichever of
    hsa_elastica and gymnasium is imported first, and loads none of numba, PyElastica or
    gymnasium itself (the CLI's start-up)."""
    out = _python(
        "import sys, hsa_elastica\n"
        "print(sorted(m for m in ('numba', 'elastica', 'gymnasium') if m in sys.modules))\n"
        "import gymnasium as gym\n"
        "print([(s.entry_point, s.max_episode_steps) for s in map(gym.spec, ('HSARobot-v1', 'HSAStack-v1'))])\n"
        "print('numba' in sys.modules, 'elastica' in sys.modules)\n"
    )
    assert out.splitlines() == [
        "[]",
        "[('hsa_elastica.envs.hsa_robot:HSARobotEnv', 150), ('hsa_elastica.envs.hsa_stack:HSAStackEnv', 150)]",
        "False False",
    ]
    out = _python(
        "import gymnasium as gym, hsa_elastica\n"
        "print(gym.spec('HSARobot-v1').max_episode_steps, gym.spec('HSAStack-v0').max_episode_steps)\n"
    )
    assert out.split() == ["150", "150"]


def test_module_prefixed_id_makes_the_env_with_its_time_limit() -> None:
    """``gym.make("hsa_elastica:HSARobot-v1")`` with nothing imported beforehand."""
    out = _python(
        "import gymnasium as gym\n"
        "env = gym.make('hsa_elastica:HSARobot-v1')\n"
        "print(type(env.unwrapped).__name__, type(env).__name__, env.spec.max_episode_steps)\n"
    )
    assert out.split() == ["HSARobotEnv", "TimeLimit", "150"]


@pytest.mark.parametrize(
    "env_id, kwargs",
    [("HSARobot-v1", {}), ("HSARobot-v1", {"motor_torques": True}), ("HSAStack-v1", {})],
)
def test_passes_the_gymnasium_checker_without_a_warning(env_id: str, kwargs: dict[str, bool]) -> None:
    """``check_env`` with every warning an error, the render modes included where off-screen
    rendering works."""
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id, render_size=(64, 48), **kwargs)
    skip_render = _offscreen_rendering() is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=skip_render)
    env.close()


def test_time_limit_truncates_and_the_bare_env_never_does() -> None:
    env = gym.make("HSARobot-v1", max_episode_steps=3)
    env.reset(seed=0)
    flags = [env.step(env.action_space.sample())[3] for _ in range(3)]
    assert flags == [False, False, True]
    bare = HSARobotEnv()
    bare.reset(seed=0)
    assert not any(bare.step(np.zeros(4, np.float32))[3] for _ in range(4))


def test_actions_map_onto_the_elongating_ranges() -> None:
    """``phi_i = h_i pi (a_i + 1) / 2``: a = -1 rest, 0 half, +1 the full elongating twist of
    each rod (right-handed rods positive, left-handed negative, Section II-E); finite actions
    outside [-1, 1] are clipped.  Without a speed limit the motor reaches its command at the
    end of the interval."""
    env = HSARobotEnv(motor_speed=None)
    env.reset(seed=0)
    assert env.action_space.shape == (4,)
    np.testing.assert_array_equal(env.action_space.low, -1.0)
    np.testing.assert_array_equal(env.action_space.high, 1.0)
    for a, fraction in ((-1.0, 0.0), (0.0, 0.5), (1.0, 1.0), (2.5, 1.0), (-0.5, 0.25)):
        *_, info = env.step(np.full(4, a, dtype=np.float32))
        np.testing.assert_allclose(info["motor_angles_rad"], PAPER_HANDEDNESS * math.pi * fraction, atol=1e-12)
    a = np.array([-1.0, -0.5, 0.5, 1.0], dtype=np.float32)
    np.testing.assert_allclose(env.angles_to_action(env.action_to_angles(a)), a, atol=1e-7)


def test_seeded_targets_and_reward_is_minus_distance() -> None:
    env = HSARobotEnv()
    obs_a, info_a = env.reset(seed=7)
    obs_b, info_b = env.reset(seed=7)
    np.testing.assert_array_equal(obs_a, obs_b)
    _, info_c = env.reset(seed=8)
    assert not np.allclose(info_c["target_position_m"], info_a["target_position_m"])
    # targets inside the documented cylinder above the rest pose
    rng_targets = [env.reset(seed=s)[1]["target_position_m"] - env.rest_position for s in range(20)]
    for d in rng_targets:
        assert math.hypot(d[0], d[1]) <= env.target_radius + 1e-15
        assert env.target_height[0] <= d[2] <= env.target_height[1]
    env.reset(seed=7)
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(np.full(4, -0.4, dtype=np.float32))
        assert not terminated and not truncated
        # reward from the observation: platform position (0:3) and target (13:16)
        assert reward == pytest.approx(-np.linalg.norm(obs[0:3] - obs[13:16]), abs=1e-6)
        assert obs.dtype == np.float32 and env.observation_space.contains(obs)
        assert not info["observation_clipped"]
    # the elongating commands (30 % of each range) raised the platform
    assert obs[2] > env.rest_position[2] + 1e-3


def test_same_seed_same_trajectory() -> None:
    """Two episodes from the same seed with the same (sampled) actions are bitwise equal."""
    env = HSARobotEnv()
    runs = []
    for _ in range(2):
        obs, _ = env.reset(seed=3)
        env.action_space.seed(3)
        traj = [obs]
        for _ in range(4):
            traj.append(env.step(env.action_space.sample())[0])
        runs.append(np.array(traj))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_observation_bounds_hold_the_robot_and_clipping_is_reported() -> None:
    """Position bound: the paper robot's geometric reach, 24 mm (rod circle) + 150 mm x 1.1
    (a 100 mm rod at its clipped rest strain eps_max = 0.5, plus 10 % stretch) + hypot(24 mm,
    1.5 mm) (joint to platform centre) = 213.05 mm.  The most violent policy (every motor
    jumping between the ends of its range at random every 20 ms) stays inside every bound
    without clipping (explicit stepper, no motor speed limit: the ``-v0`` dynamics, the
    fastest motions the envs offer); an out-of-bound state is clipped and reported."""
    env = HSARobotEnv(motor_torques=True, integrator="explicit", motor_speed=None)
    assert env.reach == pytest.approx(0.024 + 0.15 * 1.1 + math.hypot(0.024, 0.0015), rel=1e-12)
    high = env.observation_space.high
    np.testing.assert_allclose(high[0:3], env.reach, rtol=1e-7)
    np.testing.assert_array_equal(high[3:7], 1.0)
    # torque bound: 10x the static torque of the paper rod twisted by pi, B_z pi / L
    np.testing.assert_allclose(high[16:], 10 * 0.014 * math.pi / 0.1, rtol=1e-6)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs, _, terminated, _, info = env.step(rng.choice([-1.0, 1.0], size=4).astype(np.float32))
        assert not terminated and not info["observation_clipped"]
        assert env.observation_space.contains(obs)
    env.robot.platform.velocity_collection[:, 0] = (0.0, 100.0, 0.0)  # beyond MAX_SPEED = 20 m/s
    obs, clipped = env._observation()
    assert clipped and obs[8] == 20.0 and env.observation_space.contains(obs)


def test_options_target_and_torque_observation() -> None:
    env = HSARobotEnv(motor_torques=True, n_elements=10, dt=5e-5, integrator="explicit")
    assert env.params.rod.n_elements == 10 and env.params.simulation.dt == 5e-5
    obs, info = env.reset(seed=0, options={"target": (0.0, 0.0, 0.11)})
    assert len(env.robot.rods[0].rest_lengths) == 10
    assert obs.shape == (20,)
    np.testing.assert_allclose(info["target_position_m"], (0.0, 0.0, 0.11))
    obs, *_ = env.step(np.zeros(4, dtype=np.float32))  # every rod half way along its range
    assert np.all(np.isfinite(obs))
    assert np.any(np.abs(obs[16:]) > 0.0)  # motor torques of the twisted rods


def _red_pixels(img: np.ndarray) -> np.ndarray:
    """(row, column) of the target sphere's pixels: saturated red (the rods are orange and teal,
    the platform grey, the background white)."""
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return np.argwhere((r > 120) & (g < 0.35 * r) & (b < 0.35 * r))


def test_rgb_array_render_draws_the_target() -> None:
    """The target is a red sphere: present in the image, and moving it east (+x, towards the
    camera's right: the camera looks from the south-east) moves its pixels right."""
    env = HSARobotEnv(render_mode="rgb_array", render_size=(240, 180))
    centres = []
    for x in (-0.03, 0.03):
        env.reset(seed=0, options={"target": (x, 0.0, 0.115)})
        try:
            img = env.render()
        except Exception as exc:  # off-screen VTK not available on this machine
            pytest.skip(f"off-screen rendering unavailable: {exc}")
        assert img is not None and img.dtype == np.uint8 and img.shape == (180, 240, 3)
        assert img.std() > 0  # not a blank frame
        red = _red_pixels(img)
        assert len(red) >= 10, len(red)  # a sphere of 5.7 mm radius: ~35 pixels at this size
        centres.append(red.mean(axis=0))
    assert centres[1][1] > centres[0][1] + 5.0, centres


def test_discretization_is_explicit() -> None:
    from hsa_elastica.envs.hsa_robot import MX28_SPEED
    from hsa_elastica.params import paper_robot_params

    # the paper robot defaults to the coarse discretization (a documented parameter), the
    # implicit integrator at its recommended 2e-3 s and the MX-28 servos' 55 rev/min ...
    env = HSARobotEnv()
    assert env.discretization == "coarse" and env.params.simulation.integrator == "implicit"
    assert (env.params.rod.n_elements, env.params.simulation.dt) == (10, 2e-3)
    assert env.motor_speed == pytest.approx(55 * 2 * math.pi / 60, rel=1e-15) == MX28_SPEED
    explicit = HSARobotEnv(integrator="explicit")
    assert (explicit.params.rod.n_elements, explicit.params.simulation.dt) == (10, 6e-5)
    # ... the paper's own on request, and params passed in are never coarsened silently
    full = HSARobotEnv(discretization="full", integrator="explicit")
    given = HSARobotEnv(paper_robot_params(), integrator=None)
    for e in (full, given):
        assert e.discretization == "full" and e.params.simulation.integrator == "explicit"
        assert (e.params.rod.n_elements, e.params.simulation.dt) == (25, 3e-5)
    assert HSARobotEnv(paper_robot_params()).params.simulation.dt == 2e-3
    assert HSARobotEnv(n_elements=12).params.rod.n_elements == 12
    # Newton's tolerances: the coarse model's, the parameters' own otherwise
    tolerances = [(e.params.simulation.implicit_tol_position,
                   e.params.simulation.implicit_tol_rotation) for e in (env, full, given)]
    assert tolerances == [(1e-6, 1e-4), (1e-7, 1e-5), (1e-7, 1e-5)]
    with pytest.raises(ParameterError, match="discretization"):
        HSARobotEnv(discretization="fine")


def test_stack_env_reaches_up_and_is_truncated_by_its_time_limit() -> None:
    from hsa_elastica.envs import HSAStackEnv

    env = gym.make("HSAStack-v1", max_episode_steps=3, n_elements=10, dt=5e-5, control_dt=0.01,
                   integrator="explicit", motor_speed=None)
    stack_env = env.unwrapped
    assert isinstance(stack_env, HSAStackEnv)
    assert stack_env.action_space.shape == (8,)
    # the reach of two stacked paper robots: twice the single robot's (213.05 mm, see
    # test_observation_bounds_hold_the_robot...) plus half the lower platform (1.5 mm)
    single = 0.024 + 0.15 * 1.1 + math.hypot(0.024, 0.0015)
    assert stack_env.reach == pytest.approx(2 * single + 0.0015, rel=1e-12)
    obs, info = env.reset(seed=1)
    # two stages of 100 mm rods + 3 mm platforms: the top centre 204.5 mm above the base
    np.testing.assert_allclose(obs[0:3], [0.0, 0.0, 0.2045], atol=1e-6)
    action = np.zeros(8, dtype=np.float32)  # every rod half way along its elongating range
    for _ in range(3):
        obs, reward, terminated, truncated, info = env.step(action)
        assert not terminated
        assert reward == pytest.approx(-np.linalg.norm(obs[0:3] - obs[13:16]), abs=1e-6)
    assert truncated
    np.testing.assert_allclose(
        info["motor_angles_rad"], np.tile(PAPER_HANDEDNESS, 2) * math.pi / 2, atol=1e-12
    )
    assert obs[2] > 0.2045 + 1e-3  # all eight rods elongating lift the top platform
    env.close()


@pytest.mark.parametrize("mode", [None, "sync", "async"])
def test_vector_env_matches_single_envs(mode: str | None) -> None:
    """``gym.make_vec`` in every mode (None: the package's vector env, sub-envs on threads):
    each sub-env follows the single env of its seed exactly, and the TimeLimit truncates and
    autoresets every sub-env."""
    actions = np.array([[-0.5, 0.2, 0.9, -1.0], [1.0, 0.0, -0.3, 0.4]], dtype=np.float32)
    venv = gym.make_vec("HSARobot-v1", num_envs=2, vectorization_mode=mode, max_episode_steps=2)
    try:
        obs, _ = venv.reset(seed=[4, 5])
        trajectory = [obs]
        for _ in range(2):
            obs, _, terminated, truncated, _ = venv.step(actions)
            trajectory.append(obs)
        assert not terminated.any() and truncated.all()
    finally:
        venv.close()
    for i, seed in enumerate((4, 5)):
        env = HSARobotEnv()
        single = [env.reset(seed=seed)[0]] + [env.step(actions[i])[0] for _ in range(2)]
        np.testing.assert_array_equal(np.array(trajectory)[:, i], np.array(single))


def test_stack_rgb_array_render_draws_both_stages() -> None:
    """The stack's image shows more than the single robot's: two platforms and eight rods make
    more non-background pixels than one stage seen the same way (measured 1.13x with both
    centred in the image and clear of the legend, which frames the taller stack smaller; 1.6x
    when they sat left of the legend)."""
    from hsa_elastica.envs import HSAStackEnv

    stack = HSAStackEnv(render_mode="rgb_array", n_elements=6)
    robot = HSARobotEnv(render_mode="rgb_array", n_elements=6)
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
    assert filled[0] > 1.08 * filled[1], filled


def test_stack_env_discretization_default_and_refusal() -> None:
    """Two paper robots default to the coarse discretization (10 elements; implicit at 1e-3 s,
    explicit at 6e-5 s), given segments keep theirs, and an unknown discretization is refused
    by name."""
    from hsa_elastica.envs import HSAStackEnv
    from hsa_elastica.params import ParameterError, paper_robot_params

    env = HSAStackEnv()
    assert env.discretization == "coarse"
    assert all(p.rod.n_elements == 10 and p.simulation.dt == 1e-3
               and p.simulation.integrator == "implicit" for p in env.segments)
    env = HSAStackEnv(integrator="explicit")
    assert all(p.rod.n_elements == 10 and p.simulation.dt == 6e-5 for p in env.segments)
    given = HSAStackEnv([paper_robot_params()] * 2)
    assert given.discretization == "full" and given.segments[0].rod.n_elements == 25
    with pytest.raises(ParameterError, match="discretization"):
        HSAStackEnv(discretization="fine")


def test_control_example_reaches_its_documented_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    """``scenarios/control_example.py`` (docs/control.md): from the seed-0 target 11.65 mm away,
    the proportional controller (servo-limited motors, ``HSARobot-v1``) is 0.034 mm away after
    0.6 s (30 steps; 0.31 mm after 0.4 s, still moving); bound 0.1 mm, the pose target."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scenarios" / "control_example.py"
    spec = importlib.util.spec_from_file_location("control_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--seed", "0", "--steps", "30"]) == 0
    out = capsys.readouterr().out
    assert "distance 11.65 mm" in out
    final = float(out.split("final error:")[1].split("mm")[0])
    assert final < 0.1, out


def test_v0_ids_keep_the_earlier_defaults_and_are_marked_out_of_date() -> None:
    """``-v1``: the classes' defaults (implicit at 2e-3 s / the stack's 1e-3 s, servo-limited
    motors); ``-v0``: the explicit stepper at 6e-5 s with unlimited motors, as before ``-v1``
    existed, and gymnasium's out-of-date warning naming ``v1``."""
    from hsa_elastica.envs.hsa_robot import MX28_SPEED

    for env_id, dt in (("HSARobot-v1", 2e-3), ("HSAStack-v1", 1e-3)):
        env = gym.make(env_id).unwrapped
        assert (env.params.simulation.integrator, env.params.simulation.dt) == ("implicit", dt)
        assert env.motor_speed == MX28_SPEED
    for env_id in ("HSARobot-v0", "HSAStack-v0"):
        with pytest.warns(DeprecationWarning, match="out of date.*v1"):
            env = gym.make(env_id).unwrapped
        assert (env.params.simulation.integrator, env.params.simulation.dt) == ("explicit", 6e-5)
        assert env.motor_speed is None


def test_fast_false_needs_the_explicit_integrator() -> None:
    """The per-rod operators step explicitly: with the implicit integrator (the default) they
    are refused at construction, naming ``fast`` and the way out."""
    with pytest.raises(ParameterError, match=r"fast = False .*integrator='explicit'"):
        HSARobotEnv(fast=False)
    assert HSARobotEnv(fast=False, integrator="explicit").params.simulation.dt == 6e-5


def test_default_rollout_follows_the_explicit_stepper_within_the_pose_target() -> None:
    """The ``-v1`` defaults (implicit at 2e-3 s, servo-limited motors) against the explicit
    stepper at its 6e-5 s (same coarse robot, same servo limit) over 20 env steps of the same
    random actions: platform position within the implicit integrator's accuracy target, 0.1 mm
    RMS over the steps (docs/performance.md, "Implicit integrator"; measured 0.073 mm RMS,
    0.21 mm at most, with the coarse model's Newton tolerances; 0.072 mm with the library's).  The motion is not small: the platform moves up to 12.2 mm (bound 3 mm),
    so the RMS bound is not met by standing still."""
    rng = np.random.default_rng(11)
    actions = rng.uniform(-1.0, 1.0, (20, 4)).astype(np.float32)
    paths = []
    for kwargs in ({}, {"integrator": "explicit"}):
        env = HSARobotEnv(**kwargs)
        obs, _ = env.reset(seed=0)
        path = [obs[0:3].astype(np.float64)]
        for a in actions:
            obs, _, terminated, _, _ = env.step(a)
            assert not terminated
            path.append(obs[0:3].astype(np.float64))
        paths.append(np.array(path))
    implicit, explicit = paths
    assert np.max(np.linalg.norm(explicit - explicit[0], axis=1)) > 3e-3
    rms = math.sqrt(np.mean(np.sum((implicit - explicit) ** 2, axis=1)))
    assert rms < 1e-4, rms


def test_snapshot_restores_the_servo_limits_start_angles() -> None:
    """``set_state`` after steps that moved the motors: the servo limit starts again from the
    snapshot's motor angles, so the steps that follow are bitwise those after the snapshot."""
    env = HSARobotEnv()
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for a in rng.uniform(-1.0, 1.0, (3, 4)).astype(np.float32):
        env.step(a)
    snap = env.get_state()
    actions = rng.uniform(-1.0, 1.0, (3, 4)).astype(np.float32)
    first = [env.step(a)[0] for a in actions]
    env.set_state(snap)
    again = [env.step(a)[0] for a in actions]
    np.testing.assert_array_equal(np.array(first), np.array(again))


def _episode(env: HSARobotEnv, seed: int, actions: np.ndarray) -> np.ndarray:
    obs, _ = env.reset(seed=seed)
    return np.array([obs] + [env.step(a)[0] for a in actions])


@pytest.mark.parametrize("make", [
    HSARobotEnv,  # implicit, servo-limited (HSARobot-v1)
    lambda: HSARobotEnv(integrator=None, motor_speed=None),  # explicit fused (HSARobot-v0)
    lambda: HSARobotEnv(integrator="explicit", fast=False),  # per-rod operators
    lambda: HSAStackEnv(discretization="coarse"),  # HSAStack-v1, coarse
], ids=["implicit", "fused", "operators", "stack"])
def test_a_reset_restores_the_built_engine_bitwise_as_a_new_env_would_start(
        make: Callable[[], HSARobotEnv]) -> None:
    """A reset after an episode restores the snapshot taken when the engine was built instead
    of building it again: the same engine object, and the episode that follows is bitwise the
    one a brand-new env gives from the same seed and actions (the previous episode left the
    robot bent, moving, at another time).  After an episode whose last step failed the next
    reset builds the robot anew."""
    env = make()
    rng = np.random.default_rng(5)
    before, actions = (rng.uniform(-1.0, 1.0, (n, env.n_rods)).astype(np.float32) for n in (6, 5))
    _episode(env, 1, before)
    engine = env.robot
    reused = _episode(env, 2, actions)
    assert env.robot is engine
    np.testing.assert_array_equal(reused, _episode(make(), 2, actions))
    env.robot.rods[0].position_collection[:] = np.nan
    if env.params.simulation.integrator == "explicit":  # the episode terminates as diverged
        *_, terminated, _, info = env.step(actions[0])
        assert terminated and "diverged" in info
    else:  # the implicit integrator refuses the step (ImplicitStepFailed, module docstring)
        with pytest.raises(ImplicitStepFailed, match="refused"):
            env.step(actions[0])
    np.testing.assert_array_equal(_episode(env, 2, actions), reused)
    assert env.robot is not engine
