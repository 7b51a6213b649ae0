"""Sub-environments stepped side by side on threads: the vector env of this package's ids.

``gym.make_vec("HSARobot-v1", num_envs=N)`` (no ``vectorization_mode``, or
``vectorization_mode="vector_entry_point"``) builds a :class:`ThreadVectorEnv` of ``N``
``gym.make(id, ...)`` envs.  The compiled kernels that take an env's internal steps (the
implicit integrator's Newton kernel, the explicit fused stepper) release Python's GIL for the
call, so the sub-envs' steps run on threads at the same time, in one process: no pipes, no
pickled results, no worker processes waking up for every step.  Only the envs' own Python (the
action's motor schedule, the observation, about 0.15 ms of a 1.3 ms step of ``HSARobot-v1``)
takes turns.

Results are those of Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv` bit for bit, with the
same autoreset modes: each sub-env's arithmetic is its own, and ``SyncVectorEnv.step`` itself
batches the results, each sub-env handing over the call it took ahead.
``vectorization_mode="sync"`` / ``"async"`` keep Gymnasium's own vector envs (``"async"``: one
process per sub-env, for envs whose Python dominates, or more sub-envs than a process's
threads can serve).
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import iterate

from hsa_elastica.params import ParameterError

__all__ = ["ThreadVectorEnv", "make_vector", "default_threads"]


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


class _Prepared(gym.Wrapper):  # type: ignore[misc]
    """A sub-env whose next ``step`` / ``reset`` calls may have been taken ahead, on a thread:
    such a call returns the result prepared for it (the call that was made with the same
    arguments), any other goes through."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.prepared: list[tuple[str, Any]] = []

    def prepare(self, action: Any, mode: AutoresetMode, ended: bool) -> None:
        """Take ahead what ``SyncVectorEnv.step`` will call next: after an episode's end
        (``ended``) with autoreset ``NEXT_STEP`` the reset, else the step (with ``SAME_STEP``
        and an episode that ends: the step, then the reset)."""
        if mode == AutoresetMode.NEXT_STEP and ended:
            self.prepared.append(("reset", self.env.reset()))
            return
        out = self.env.step(action)
        self.prepared.append(("step", out))
        if mode == AutoresetMode.SAME_STEP and (out[2] or out[3]):
            self.prepared.append(("reset", self.env.reset()))

    def _take(self, kind: str) -> Any:
        got, out = self.prepared.pop(0)
        assert got == kind, f"prepared {got}, called {kind}"
        return out

    def step(self, action: Any) -> Any:
        return self._take("step") if self.prepared else self.env.step(action)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        if self.prepared and seed is None and options is None:
            return self._take("reset")
        return self.env.reset(seed=seed, options=options)


class ThreadVectorEnv(SyncVectorEnv):  # type: ignore[misc]
    """Gymnasium's :class:`~gymnasium.vector.SyncVectorEnv` whose :meth:`step` takes the
    sub-envs' steps on ``threads`` threads (default: one per core, at most one per sub-env;
    the calling thread takes the first share), then lets ``SyncVectorEnv.step`` batch their
    results.  ``env_fns``, ``copy``, ``observation_mode`` and ``autoreset_mode`` as for
    ``SyncVectorEnv``; resets run one after the other (a reset restores a snapshot in under a
    millisecond).  ``envs[i]`` is sub-env ``i`` in a thin wrapper that hands over the result
    of a call taken ahead."""

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
        modes = [m.value for m in AutoresetMode]
        if not isinstance(autoreset_mode, AutoresetMode) and autoreset_mode not in modes:
            raise ParameterError(
                f"autoreset_mode = {autoreset_mode!r} is invalid: must be one of {modes}")
        if not isinstance(copy, (bool, np.bool_)):
            raise ParameterError(f"copy = {copy!r} is invalid: must be True or False")
        super().__init__([functools.partial(_wrapped, fn) for fn in env_fns], copy=copy,
                         observation_mode=observation_mode, autoreset_mode=autoreset_mode)
        # sub-env k runs on thread k % threads; thread 0 is the caller's
        self._shares = [list(range(k, n_envs, self.threads)) for k in range(self.threads)]
        self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="hsa-env") \
            if self.threads > 1 else None
        self._ended = np.zeros(n_envs, dtype=bool)
        self._subs: list[_Prepared] = [env for env in self.envs if isinstance(env, _Prepared)]

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        """``SyncVectorEnv.reset``; no sub-env's episode has ended after it."""
        out = super().reset(seed=seed, options=options)
        self._ended[:] = False
        return out  # type: ignore[no-any-return]

    def _prepare_share(self, share: list[int], actions: list[Any]) -> None:
        for i in share:
            self._subs[i].prepare(actions[i], self.autoreset_mode, bool(self._ended[i]))

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Every sub-env's step (or autoreset) taken on its thread, then batched by
        ``SyncVectorEnv.step``.  An exception of a sub-env is raised here once every thread is
        done (the other sub-envs have taken their step; the batched results are not updated)."""
        acts = list(iterate(self.action_space, actions))
        if len(acts) != self.num_envs:
            raise ParameterError(
                f"actions has {len(acts)} rows: must have num_envs = {self.num_envs}")
        futures: list[Future[None]] = []
        if self._pool is not None:
            futures = [self._pool.submit(self._prepare_share, share, acts)
                       for share in self._shares[1:]]
        error: BaseException | None = None
        try:
            self._prepare_share(self._shares[0], acts)
        except BaseException as exc:  # noqa: BLE001 -- raised below, once the threads are done
            error = exc
        wait(futures)
        for f in futures:
            error = error or f.exception()
        if error is not None:
            for env in self._subs:
                env.prepared.clear()
            raise error
        out = super().step(actions)
        self._ended = np.logical_or(out[2], out[3])
        return out  # type: ignore[no-any-return]

    def close_extras(self, **kwargs: Any) -> None:
        """The threads, then the sub-envs."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        super().close_extras(**kwargs)


def _wrapped(env_fn: Callable[[], gym.Env]) -> _Prepared:
    return _Prepared(env_fn())


def make_vector(env_id: str, num_envs: int, *, threads: int | None = None,
                autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
                copy: bool = True, **kwargs: Any) -> ThreadVectorEnv:
    """A :class:`ThreadVectorEnv` of ``num_envs`` ``gym.make(env_id, **kwargs)`` envs (the
    ``vector_entry_point`` of the registered ids: ``kwargs`` are the spec's keyword arguments
    with the caller's, and ``max_episode_steps``); ``threads``, ``autoreset_mode`` and
    ``copy`` are the vector env's (``gym.make_vec`` passes a custom vector env's arguments
    with the env's)."""
    num_envs = _check_count("num_envs", num_envs)

    def make() -> gym.Env:
        return gym.make(env_id, **kwargs)

    return ThreadVectorEnv([make] * num_envs, threads=threads, autoreset_mode=autoreset_mode,
                           copy=copy)
