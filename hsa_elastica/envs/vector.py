"""Sub-environments stepped side by side on threads: the vector env of this package's ids.

``gym.make_vec("HSARobot-v1", num_envs=N)`` (no ``vectorization_mode``, or
``vectorization_mode="vector_entry_point"``) builds a :class:`ThreadVectorEnv` of ``N``
``gym.make(id, ...)`` envs.  The compiled kernels that take an env's internal steps (the
implicit integrator's Newton kernel, the explicit fused stepper) release Python's GIL for the
call, so the sub-envs' steps run on threads at the same time, in one process: no pipes, no
pickled results, no worker processes waking up for every step.  Only the envs' own Python (the
action's motor schedule, the observation, about 0.1 ms of a 1.4 ms step of ``HSARobot-v1``)
takes turns.

Results are those of Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv` bit for bit (each
sub-env's arithmetic is its own; the infos are merged in the order of the sub-envs), with the
same autoreset modes.  ``vectorization_mode="sync"`` / ``"async"`` keep Gymnasium's own vector
envs (``"async"``: one process per sub-env, for envs whose Python dominates, or more sub-envs
than a process's threads can serve).
"""

from __future__ import annotations

import os
from copy import deepcopy
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Sequence, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import concatenate, iterate

from hsa_elastica.params import ParameterError

__all__ = ["ThreadVectorEnv", "make_vector", "default_threads"]

#: one sub-env's outcome: observation, reward, terminated, truncated, info, and (autoreset
#: ``SAME_STEP`` after an episode's end) the final observation and info, else None
_Outcome = tuple[Any, SupportsFloat, bool, bool, dict[str, Any], Any]


def default_threads() -> int:
    """The cores this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def _check_count(name: str, value: Any, maximum: int | None = None) -> int:
    """``value`` as a positive int (at most ``maximum``), else ``ParameterError`` naming it."""
    upper = "" if maximum is None else f" and at most {maximum}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 1 or (maximum is not None and value > maximum):
        raise ParameterError(f"{name} = {value!r} is invalid: must be an integer >= 1{upper}")
    return int(value)


class ThreadVectorEnv(SyncVectorEnv):  # type: ignore[misc]
    """Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv` whose :meth:`step` runs the
    sub-envs' steps on ``threads`` threads (default: one per core, at most one per sub-env;
    the calling thread takes the first share).  ``env_fns``, ``copy``, ``observation_mode``
    and ``autoreset_mode`` as for ``SyncVectorEnv``; resets run one after the other (a reset
    restores a snapshot in under a millisecond)."""

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gym.Env]],
        copy: bool = True,
        observation_mode: str = "same",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        threads: int | None = None,
    ) -> None:
        n_envs = len(env_fns)
        _check_count("num_envs", n_envs)
        self.threads = (min(n_envs, default_threads()) if threads is None
                        else _check_count("threads", threads, n_envs))
        super().__init__(env_fns, copy=copy, observation_mode=observation_mode,
                         autoreset_mode=autoreset_mode)
        # sub-env k runs on thread k % threads; thread 0 is the caller's
        self._shares = [list(range(k, n_envs, self.threads)) for k in range(self.threads)]
        self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="hsa-env") \
            if self.threads > 1 else None

    def _sub_step(self, i: int, action: Any) -> _Outcome:
        """Sub-env ``i``'s part of a step, as ``SyncVectorEnv.step`` takes it."""
        env = self.envs[i]
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._autoreset_envs[i]:
            obs, info = env.reset()
            return obs, 0.0, False, False, info, None
        if self.autoreset_mode == AutoresetMode.DISABLED:
            assert not self._autoreset_envs[i], f"{self._autoreset_envs=}"
        obs, reward, terminated, truncated, info = env.step(action)
        final = None
        if self.autoreset_mode == AutoresetMode.SAME_STEP and (terminated or truncated):
            final = (obs, info)
            obs, info = env.reset()
        return obs, reward, terminated, truncated, info, final

    def _run_share(self, share: list[int], actions: list[Any],
                   out: list[_Outcome | None]) -> None:
        for i in share:
            out[i] = self._sub_step(i, actions[i])

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Every sub-env's step (or autoreset), the sub-envs on their threads; the batched
        results as ``SyncVectorEnv.step`` returns them.  The outcomes are merged in the order
        of the sub-envs, those that are ready while the other threads still step.  An
        exception of a sub-env is raised here once every thread is done."""
        acts = list(iterate(self.action_space, actions))
        if len(acts) != self.num_envs:
            raise ParameterError(
                f"actions has {len(acts)} rows: must have num_envs = {self.num_envs}")
        out: list[_Outcome | None] = [None] * self.num_envs
        futures: list[Future[None]] = []
        if self._pool is not None:
            futures = [self._pool.submit(self._run_share, share, acts, out)
                       for share in self._shares[1:]]
        infos: dict[str, Any] = {}
        try:
            self._run_share(self._shares[0], acts, out)
            merged, infos = self._merge(out, 0, infos)
        finally:
            wait(futures)
        for f in futures:
            f.result()  # a sub-env's exception
        _, infos = self._merge(out, merged, infos)
        self._observations = concatenate(self.single_observation_space, self._env_obs,
                                         self._observations)
        self._autoreset_envs = np.logical_or(self._terminations, self._truncations)
        return (
            deepcopy(self._observations) if self.copy else self._observations,
            np.copy(self._rewards),
            np.copy(self._terminations),
            np.copy(self._truncations),
            infos,
        )

    def _merge(self, out: list[_Outcome | None], first: int, infos: dict[str, Any]
               ) -> tuple[int, dict[str, Any]]:
        """The outcomes from sub-env ``first`` on, up to the first not ready, into the
        batched arrays and ``infos`` (as ``SyncVectorEnv.step`` adds them); returns the index
        of the first one not merged and the infos."""
        i = first
        while i < len(out):
            outcome = out[i]
            if outcome is None:
                break
            obs, reward, terminated, truncated, info, final = outcome
            if final is not None:
                infos = self._add_info(infos, {"final_obs": final[0], "final_info": final[1]}, i)
            self._env_obs[i] = obs
            self._rewards[i] = reward
            self._terminations[i] = terminated
            self._truncations[i] = truncated
            infos = self._add_info(infos, info, i)
            i += 1
        return i, infos

    def close_extras(self, **kwargs: Any) -> None:
        """The threads, then the sub-envs."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        super().close_extras(**kwargs)


def make_vector(env_id: str, num_envs: int, *, threads: int | None = None,
                **kwargs: Any) -> ThreadVectorEnv:
    """A :class:`ThreadVectorEnv` of ``num_envs`` ``gym.make(env_id, **kwargs)`` envs (the
    ``vector_entry_point`` of the registered ids: ``kwargs`` are the spec's keyword arguments
    with the caller's, and ``max_episode_steps``)."""
    num_envs = _check_count("num_envs", num_envs)

    def make() -> gym.Env:
        return gym.make(env_id, **kwargs)

    return ThreadVectorEnv([make] * num_envs, threads=threads)
