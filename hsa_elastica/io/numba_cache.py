"""numba's kernel cache where it cannot be written: one warning line, not two tracebacks.

The kernels (the package's and PyElastica's) are compiled with ``cache=True``: numba looks for
a cache directory when the module defining a kernel is imported (``NUMBA_CACHE_DIR``, else the
``__pycache__`` beside the source, else the user's cache) and raises ``RuntimeError: cannot
cache function ...`` in the middle of that import when none can be written (a read-only
install with a read-only ``NUMBA_CACHE_DIR``).  :func:`ensure_writable_cache` checks this once,
before any kernel module is imported, with numba's own cache locators; if no cache can be
written, it points ``NUMBA_CACHE_DIR`` at a new temporary directory (removed at exit), so the
kernels compile as on a first run, every run, and returns the warning to print.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["cache_problem", "ensure_writable_cache"]


def _kernel_sources() -> list[Path]:
    """A source file of each installed package that defines cached kernels (found without
    importing them: importing one is what fails)."""
    files = [Path(__file__).resolve().parents[1] / "engines" / "timeloop.py"]
    spec = importlib.util.find_spec("elastica")
    if spec is not None and spec.origin is not None:
        files.append(Path(spec.origin).parent / "_linalg.py")
    return [f for f in files if f.is_file()]


def cache_problem() -> str | None:
    """Why numba cannot cache the kernels of a package (None if it can): the first source file
    for which none of numba's cache locators finds a writable directory."""
    from numba.core.caching import FunctionCache

    for source in _kernel_sources():
        namespace: dict[str, object] = {}
        exec(compile("def probe():\n    pass\n", str(source), "exec"), namespace)  # noqa: S102
        try:
            FunctionCache(namespace["probe"])
        except RuntimeError:
            where = os.environ.get("NUMBA_CACHE_DIR")
            return (f"NUMBA_CACHE_DIR={where!r} and {str(source.parent)!r} are not writable"
                    if where else f"{str(source.parent)!r} and the user's cache directory are "
                    "not writable")
    return None


def ensure_writable_cache() -> str | None:
    """Make numba's kernel cache writable for this process (see the module doc); the one-line
    warning to print if it had to use a temporary directory, else None."""
    problem = cache_problem()
    if problem is None:
        return None
    from numba.core import config

    directory = tempfile.mkdtemp(prefix="hsa-elastica-numba-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    os.environ["NUMBA_CACHE_DIR"] = directory
    config.reload_config()
    return (f"warning: numba cannot cache the kernels ({problem}); they are compiled in every "
            "run (set NUMBA_CACHE_DIR to a writable directory to keep them)")
