"""Registration of the Gymnasium environments, done by ``import hsa_elastica`` at no cost.

``HSARobot-v1`` and ``HSAStack-v1`` (the implicit integrator, motors at the paper robot's servo
speed) and ``HSARobot-v0`` / ``HSAStack-v0`` (the earlier defaults: the explicit stepper,
unlimited motor speed, so that results obtained with them reproduce) and ``HSAPush-v0`` (the
robot pushing a ball to a target) are registered with
gymnasium by entry-point strings
(``"hsa_elastica.envs.hsa_robot:HSARobotEnv"``), so registering imports neither numba nor
PyElastica; the environment's module is imported by ``gym.make``.  Importing gymnasium itself
takes about 0.25 s (numpy), which the ``hsa-elastica`` command should not pay: if gymnasium is
already imported the ids are registered at once, otherwise a one-shot import hook registers them
right after gymnasium's own ``import`` completes (and does nothing if gymnasium is not
installed, the optional extra ``rl``).  So all of these work::

    import hsa_elastica; import gymnasium as gym; gym.make("HSARobot-v1")
    import gymnasium as gym; import hsa_elastica; gym.make("HSARobot-v1")
    import gymnasium as gym; gym.make("hsa_elastica:HSARobot-v1")
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any, Sequence

__all__ = ["ENVS", "V0_KWARGS", "register", "install", "make_vector"]

#: the keyword arguments of the ``-v0`` ids: the classes' defaults before ``-v1`` (the
#: integrator of the params -- the explicit stepper for the paper robot -- and no motor speed
#: limit)
V0_KWARGS: dict[str, Any] = {"integrator": None, "motor_speed": None}

#: id -> (entry point, ``max_episode_steps`` of the spec: 150 control steps of 20 ms = 3 s,
#: keyword arguments of the spec).  ``-v1``: the classes' defaults (implicit integrator, servo
#: speed limit); ``-v0``: :data:`V0_KWARGS`.  Gymnasium warns (``DeprecationWarning``) that a
#: ``-v0`` id is out of date when it is made.
ENVS: dict[str, tuple[str, int, dict[str, Any]]] = {
    "HSARobot-v1": ("hsa_elastica.envs.hsa_robot:HSARobotEnv", 150, {}),
    "HSAStack-v1": ("hsa_elastica.envs.hsa_stack:HSAStackEnv", 150, {}),
    "HSARobot-v0": ("hsa_elastica.envs.hsa_robot:HSARobotEnv", 150, V0_KWARGS),
    "HSAStack-v0": ("hsa_elastica.envs.hsa_stack:HSAStackEnv", 150, V0_KWARGS),
    # 250 steps (5 s): the held push reaches the farthest default target in about 3 s
    "HSAPush-v0": ("hsa_elastica.envs.hsa_push:HSAPushEnv", 250, {}),
}


def make_vector(env_id: str, num_envs: int, **kwargs: Any) -> Any:
    """The ids' ``vector_entry_point``: :func:`hsa_elastica.envs.vector.make_vector` (its
    sub-envs stepped on threads), imported when a vector env is made."""
    from hsa_elastica.envs.vector import make_vector as make

    return make(env_id, num_envs, **kwargs)


def register(gym: Any) -> None:
    """Register every id of :data:`ENVS` with the gymnasium module ``gym`` (once), with
    :func:`make_vector` as its vector entry point (``gym.make_vec(id, num_envs=N)``)."""
    for env_id, (entry_point, steps, kwargs) in ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=steps,
                         kwargs=dict(kwargs),
                         vector_entry_point=functools.partial(make_vector, env_id))


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, registering the ids once the module has executed."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)  # type: ignore[no-any-return]

    def exec_module(self, module: ModuleType) -> None:
        # hand the module its own loader back before it runs: nothing of this hook stays
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        module.__loader__ = self.loader
        self.loader.exec_module(module)
        register(module)


class _GymnasiumHook(importlib.abc.MetaPathFinder):
    """One-shot finder: wraps the loader of the first ``import gymnasium``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "gymnasium":
            return None
        uninstall()
        spec = importlib.util.find_spec(fullname)  # the other finders (None: not installed)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _GymnasiumHook)]


def install() -> None:
    """Register now if gymnasium is imported, else when it is."""
    gym = sys.modules.get("gymnasium")
    if gym is not None and hasattr(gym, "registry"):
        register(gym)
    elif not any(isinstance(f, _GymnasiumHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _GymnasiumHook())
