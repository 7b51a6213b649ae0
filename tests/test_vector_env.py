"""The package's vector env (:mod:`hsa_elastica.envs.vector`): sub-envs stepped on threads give
Gymnasium's ``SyncVectorEnv`` results bit for bit, in every autoreset mode and on both
integrators; its arguments are checked; a sub-env's exception reaches the caller."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import hsa_elastica  # noqa: E402,F401  (registers the ids)
from hsa_elastica.envs.vector import ThreadVectorEnv  # noqa: E402
from hsa_elastica.params import ParameterError  # noqa: E402
from gymnasium.vector import AutoresetMode, SyncVectorEnv  # noqa: E402

#: seeded random commands of the robot, a different one per sub-env
ACTIONS = np.random.default_rng(7).uniform(-1.0, 1.0, (7, 3, 4)).astype(np.float32)


def _run(venv: Any) -> list[tuple[Any, ...]]:
    """Reset (seeds 1, 2, 3) and 7 steps of seeded random commands, a different one per
    sub-env; every returned value."""
    rng = np.random.default_rng(7)
    try:
        out: list[tuple[Any, ...]] = [venv.reset(seed=[1, 2, 3])]
        out += [venv.step(rng.uniform(-1.0, 1.0, venv.action_space.shape).astype(np.float32))
                for _ in range(7)]
    finally:
        venv.close()
    return out


def _assert_same(a: Any, b: Any) -> None:
    """Nested tuples / dicts / arrays equal bit for bit (NaN where NaN)."""
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)) or (isinstance(a, np.ndarray) and a.dtype == object):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _envs(env_id: str, **kwargs: Any) -> list[Any]:
    # 3 steps per episode: each sub-env ends two episodes within the 7 steps
    return [lambda: gym.make(env_id, max_episode_steps=3, n_elements=4, **kwargs)] * 3


@pytest.mark.parametrize("env_id, mode", [
    ("HSARobot-v1", "NextStep"), ("HSARobot-v1", "SameStep"), ("HSARobot-v0", "NextStep"),
    ("HSARobot-v0", "SameStep"), ("HSAStack-v1", "NextStep")])
def test_threads_match_sync_vector_env(env_id: str, mode: str) -> None:
    """Three sub-envs on two threads (one with two sub-envs, one with one): observations,
    rewards, ends and infos (the final observations of ``SameStep`` too) as Gymnasium's
    ``SyncVectorEnv`` gives them, bit for bit; ``-v0`` steps the explicit fused stepper,
    ``-v1`` the implicit integrator, the stack its two stages in one model."""
    threaded = _run(ThreadVectorEnv(_envs(env_id), threads=2, autoreset_mode=AutoresetMode(mode)))
    reference = _run(SyncVectorEnv(_envs(env_id), autoreset_mode=AutoresetMode(mode)))
    _assert_same(threaded, reference)
    assert any(step[3].any() for step in threaded[1:])  # episodes ended (TimeLimit)


def test_make_vec_builds_the_threaded_env() -> None:
    """``gym.make_vec`` without a mode gives the package's vector env with the spec's kwargs
    and TimeLimit; ``threads`` and ``autoreset_mode`` are the vector env's."""
    venv = gym.make_vec("HSARobot-v1", num_envs=2, n_elements=4, max_episode_steps=5, threads=1,
                        autoreset_mode="SameStep")
    try:
        assert isinstance(venv, ThreadVectorEnv)
        assert venv.threads == 1
        assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
        assert venv.envs[0].spec.max_episode_steps == 5
        assert venv.envs[0].unwrapped.params.rod.n_elements == 4
    finally:
        venv.close()


@pytest.mark.parametrize("threads", [0, 3, 1.5, True, "2"])
def test_threads_out_of_range_is_refused(threads: Any) -> None:
    """``threads`` outside ``1 .. num_envs`` (or not an integer): ParameterError naming it and
    the range, before any env is built."""
    built = []

    def make() -> Any:
        built.append(1)
        return gym.make("HSARobot-v1", n_elements=4)

    with pytest.raises(ParameterError, match=r"threads = .* integer >= 1 and at most 2"):
        ThreadVectorEnv([make, make], threads=threads)
    assert not built


@pytest.mark.parametrize("keyword, value, allowed", [
    ("autoreset_mode", "next_step", "NextStep"), ("copy", "yes", "True or False")])
def test_bad_vector_keyword_is_refused(keyword: str, value: Any, allowed: str) -> None:
    """A bad ``autoreset_mode`` / ``copy`` through ``gym.make_vec``: ParameterError naming the
    keyword and what it may be, not a ``ValueError`` from inside Gymnasium."""
    with pytest.raises(ParameterError, match=rf"{keyword} = .* invalid: must be .*{allowed}"):
        gym.make_vec("HSARobot-v1", num_envs=2, **{keyword: value})


@pytest.mark.parametrize("bad_env", [0, 1])
def test_sub_env_exception_reaches_the_caller(bad_env: int) -> None:
    """A non-finite command of sub-env 0 (the caller's thread) or 1 (another thread): its
    env's ParameterError is raised by the vector env's step, no call taken ahead is left
    over, and the next step batches that step's results."""
    venv = ThreadVectorEnv(_envs("HSARobot-v1"), threads=3)
    try:
        venv.reset(seed=0)
        bad = ACTIONS[0].copy()
        bad[bad_env, 2] = np.nan
        with pytest.raises(ParameterError, match="action"):
            venv.step(bad)
        obs, _, _, _, info = venv.step(ACTIONS[1])
        times = [env.unwrapped.robot.time for env in venv.envs]
        np.testing.assert_array_equal(info["sim_time_s"], times)
        for i, env in enumerate(venv.envs):
            np.testing.assert_array_equal(obs[i], env.unwrapped._last_obs)
    finally:
        venv.close()


def test_step_kernels_release_the_gil() -> None:
    """The kernels that take the envs' internal steps are compiled without the GIL (numba
    ``nogil``), else the threads would take turns."""
    from hsa_elastica.engines.fused import advance
    from hsa_elastica.engines.implicit_newton import newton_steps

    for kernel in (newton_steps, advance):
        assert kernel.targetoptions.get("nogil") is True, kernel.__name__
