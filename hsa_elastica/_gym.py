"""Registration of the Gymnasium environments, done by ``import hsa_elastica`` at no cost.

``HSARobot-v0`` and ``HSAStack-v0`` are registered with gymnasium by entry-point strings
(``"hsa_elastica.envs.hsa_robot:HSARobotEnv"``), so registering imports neither numba nor
PyElastica; the environment's module is imported by ``gym.make``.  Importing gymnasium itself
takes about 0.25 s (numpy), which the ``hsa-elastica`` command should not pay: if gymnasium is
already imported the ids are registered at once, otherwise a one-shot import hook registers them
right after gymnasium's own ``import`` completes (and does nothing if gymnasium is not
installed, the optional extra ``rl``).  So all of these work::

    import hsa_elastica; import gymnasium as gym; gym.make("HSARobot-v0")
    import gymnasium as gym; import hsa_elastica; gym.make("HSARobot-v0")
    import gymnasium as gym; gym.make("hsa_elastica:HSARobot-v0")
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any, Sequence

__all__ = ["ENVS", "register", "install"]

#: id -> (entry point, ``max_episode_steps`` of the spec: 150 control steps of 20 ms = 3 s)
ENVS: dict[str, tuple[str, int]] = {
    "HSARobot-v0": ("hsa_elastica.envs.hsa_robot:HSARobotEnv", 150),
    "HSAStack-v0": ("hsa_elastica.envs.hsa_stack:HSAStackEnv", 150),
}


def register(gym: Any) -> None:
    """Register every id of :data:`ENVS` with the gymnasium module ``gym`` (once)."""
    for env_id, (entry_point, steps) in ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=steps)


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
