"""Old module paths of hsa-elastica 0.1 (flat layout), kept importable for one release.

``import hsa_elastica.fast`` or ``from hsa_elastica.kinematics import SPCSModel`` still work but
emit a :class:`DeprecationWarning` naming the new module.  A meta-path finder, installed by
``hsa_elastica/__init__.py``, answers only for the names in :data:`LEGACY`:

* an old module whose names all moved to one new module is that module (``sys.modules`` maps
  the old name to it, so ``hsa_elastica.robot.build_robot is hsa_elastica.robots.builders.build_robot``);
* an old module whose names are spread over several new modules (``auxetics``, ``fast``) is a
  read-only proxy that looks each name up in its new homes, in order.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
import warnings
from typing import Any, Sequence

__all__ = ["LEGACY", "LegacyFinder", "install"]

#: old module name -> new module(s); for a proxy the first module is the main home
LEGACY: dict[str, tuple[str, ...]] = {
    "hsa_elastica.actuation": ("hsa_elastica.physics.actuation",),
    "hsa_elastica.auxetics": ("hsa_elastica.physics.auxetic_coupling", "hsa_elastica.physics.auxetic_law"),
    "hsa_elastica.axial_law": ("hsa_elastica.physics.compression_law",),
    "hsa_elastica.joints": ("hsa_elastica.physics.joints",),
    "hsa_elastica.fast": ("hsa_elastica.engines.fused", "hsa_elastica.robots.builders"),
    "hsa_elastica.simulation": ("hsa_elastica.engines.timeloop",),
    "hsa_elastica.steady_state": ("hsa_elastica.robots.steady_state",),
    "hsa_elastica.robot": ("hsa_elastica.robots.builders",),
    "hsa_elastica.primitives": ("hsa_elastica.robots.primitives",),
    "hsa_elastica.kinematics": ("hsa_elastica.spcs",),
    "hsa_elastica.recording": ("hsa_elastica.io.recording",),
    "hsa_elastica.rundir": ("hsa_elastica.io.rundir",),
    "hsa_elastica.render": ("hsa_elastica.io.render",),
    "hsa_elastica.characterization": ("hsa_elastica.experiments.characterization",),
    # the SPCS model was one module (spcs/kinematics.py) briefly before it was split
    "hsa_elastica.spcs.kinematics": ("hsa_elastica.spcs",),
}


#: frames of these files are skipped when the warning looks for the user's import statement
_SKIP_FILES = (__file__, os.path.join(os.path.dirname(__file__), "__init__.py"))
_SKIP_DIRS = (os.path.dirname(importlib.__file__) + os.sep, "<frozen importlib")


def _caller_stacklevel() -> int:
    """``stacklevel`` for :func:`warnings.warn` called from this module that points at the
    first frame outside this module, the package ``__init__`` and the import machinery (the
    user's import statement or attribute access).  :func:`warnings.warn` itself already steps
    over ``importlib._bootstrap`` frames, so they are not counted."""
    level = 1
    frame = sys._getframe(1).f_back  # the caller of the function that warns
    while frame is not None:
        filename = frame.f_code.co_filename
        internal = "importlib" in filename and "_bootstrap" in filename
        if not internal:
            if filename not in _SKIP_FILES and not filename.startswith(_SKIP_DIRS):
                return level + 1
            level += 1
        frame = frame.f_back
    return level


class _ProxyModule(types.ModuleType):
    """An old module whose names now live in several modules."""

    def __init__(self, name: str, targets: Sequence[types.ModuleType]) -> None:
        super().__init__(name, f"Deprecated alias of {', '.join(m.__name__ for m in targets)}.")
        self.__dict__["_targets"] = tuple(targets)
        self.__dict__["__all__"] = sorted({n for m in targets for n in getattr(m, "__all__", ())})

    def __getattr__(self, name: str) -> Any:
        for module in self.__dict__["_targets"]:
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(self.__dict__["__all__"]) | set(self.__dict__))


class _LegacyLoader(importlib.abc.Loader):
    def __init__(self, targets: tuple[str, ...]) -> None:
        self.targets = targets

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # default module; exec_module replaces it in sys.modules

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        warnings.warn(
            f"{name} is deprecated and will be removed in the next release; "
            f"import from {' / '.join(self.targets)} instead (or from hsa_elastica)",
            DeprecationWarning,
            stacklevel=_caller_stacklevel(),
        )
        modules = [importlib.import_module(t) for t in self.targets]
        # the import statement returns whatever sys.modules holds under the name afterwards
        sys.modules[name] = modules[0] if len(modules) == 1 else _ProxyModule(name, modules)


class LegacyFinder(importlib.abc.MetaPathFinder):
    """Meta-path finder for the old module names in :data:`LEGACY` (nothing else)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        targets = LEGACY.get(fullname)
        if targets is None:
            return None
        return importlib.util.spec_from_loader(fullname, _LegacyLoader(targets))


def install() -> None:
    """Put one :class:`LegacyFinder` first on ``sys.meta_path`` (idempotent)."""
    if not any(isinstance(f, LegacyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, LegacyFinder())
