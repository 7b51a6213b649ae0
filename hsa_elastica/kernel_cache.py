"""numba's on-disk kernel cache kept in step with the package's sources.

numba keys a cached kernel on the modification time and size of the file that defines it, not
on the kernels it calls: after an update that changes a kernel in one module (``git pull``, an
edit), a cached caller in another module keeps running the old callee's machine code, silently.
:func:`ensure_fresh_cache` closes that gap: it hashes the package's source files a kernel can
depend on (the layers up to ``engines``, :data:`KERNEL_PARTS`) with the numba and PyElastica
versions, compares the digest with the one stored beside the cache, and when they differ
removes the package's cached kernels (``*.nbi`` index and ``*.nbc`` data files of its kernel
modules), so that every kernel is compiled again from the present sources.  It runs once per
process, when :mod:`hsa_elastica.physics` or :mod:`hsa_elastica.engines` is first imported
(every module that defines a kernel imports one of them first, before any kernel is called);
hashing the sources costs tens of milliseconds.  A cache that cannot be written is left to
:mod:`hsa_elastica.io.numba_cache`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

__all__ = ["KERNEL_PARTS", "STAMP_NAME", "cache_directory", "ensure_fresh_cache", "kernel_files",
           "sources_digest"]

#: the file beside the cache that holds the digest of the sources it was compiled from
STAMP_NAME = "hsa_elastica-sources.sha256"

PACKAGE = Path(__file__).resolve().parent

#: the parts of the package a kernel can depend on: the layers up to ``engines``
#: (``docs/architecture.md``; a kernel module may import only from its own or lower layers, and
#: ``tests/test_layers.py`` enforces it), so that an edit in ``robots/``, ``cli/`` and above does
#: not discard the cache
KERNEL_PARTS = ("params", "compat.py", "kernel_cache.py", "data", "presets", "physics", "spcs",
                "io", "engines")

_CHECKED = False


def _installed(name: str) -> str:
    """Where module ``name`` is installed and its ``__init__`` file's size and time stamp
    (an upgrade rewrites it), without importing it or reading package metadata (slow)."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return "absent"
    stat = os.stat(spec.origin)
    return f"{spec.origin}:{stat.st_size}:{stat.st_mtime_ns}"


def _sources(root: Path) -> list[tuple[str, bytes]]:
    """The ``*.py`` files under ``root`` (for the package: those of :data:`KERNEL_PARTS`) as
    sorted ``(relative path, bytes)``."""
    out = []
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        rel = os.path.relpath(top, root)
        for name in files:
            if not name.endswith(".py"):
                continue
            path = name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")
            if root == PACKAGE and path.split("/", 1)[0] not in KERNEL_PARTS:
                continue
            with open(os.path.join(top, name), "rb") as f:
                out.append((path, f.read()))
    return sorted(out)


def sources_digest(root: Path = PACKAGE, sources: list[tuple[str, bytes]] | None = None) -> str:
    """SHA-256 of the source files kernels can depend on under ``root`` (relative path and
    bytes, in sorted order; ``sources``: those already read) with the installed numba and
    PyElastica."""
    h = hashlib.sha256()
    for name in ("numba", "elastica"):
        h.update(f"{name}={_installed(name)}\n".encode())
    for path, data in _sources(root) if sources is None else sources:
        h.update(path.encode() + b"\0")
        h.update(data)
        h.update(b"\0")
    return h.hexdigest()


def kernel_files(root: Path = PACKAGE, sources: list[tuple[str, bytes]] | None = None
                 ) -> list[Path]:
    """The source files under ``root`` that define numba kernels (they mention ``njit``)."""
    return [root / path for path, data in (_sources(root) if sources is None else sources)
            if b"njit" in data]


def _cache_dir(source: Path) -> Path | None:
    """The directory numba caches the kernels of ``source`` in (its own locators: the
    ``NUMBA_CACHE_DIR`` tree, the ``__pycache__`` beside the file or the user's cache); None
    if numba finds none it can write."""
    from numba.core.caching import FunctionCache

    namespace: dict[str, object] = {}
    exec(compile("def probe():\n    pass\n", str(source), "exec"), namespace)  # noqa: S102
    try:
        return Path(FunctionCache(namespace["probe"]).cache_path)
    except (RuntimeError, OSError, AttributeError):
        return None


def cache_directory(root: Path = PACKAGE) -> Path | None:
    """The directory numba caches the package's first kernel module in, where the sources'
    digest (and :mod:`hsa_elastica.engines.precompile`'s lock) is kept; None if numba finds
    none it can write."""
    files = kernel_files(root)
    return _cache_dir(files[0]) if files else None


def _remove_cached(source: Path, directory: Path) -> int:
    """Remove numba's cache files of the kernels defined in ``source`` from ``directory``
    (named ``<module>.<qualname>-<line>.pyXY.nbi`` and ``....N.nbc``); how many went."""
    removed = 0
    prefix = source.stem + "."
    for path in directory.glob(prefix + "*"):
        if path.suffix in (".nbi", ".nbc"):
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:  # another process removed it first
                pass
    return removed


def ensure_fresh_cache(root: Path = PACKAGE) -> int:
    """Remove the package's cached kernels if they were compiled from other sources than the
    present ones (module doc); the number of cache files removed.  Once per process for the
    installed package; ``HSA_ELASTICA_CACHE_CHECK=0`` turns the check off."""
    global _CHECKED
    if root == PACKAGE:
        if _CHECKED or os.environ.get("HSA_ELASTICA_CACHE_CHECK", "1") == "0":
            return 0
        _CHECKED = True
    sources = _sources(root)
    files = kernel_files(root, sources)
    if not files:
        return 0
    stamp_dir = _cache_dir(files[0])
    if stamp_dir is None:
        return 0
    stamp = stamp_dir / STAMP_NAME
    digest = sources_digest(root, sources)
    try:
        if stamp.read_text().strip() == digest:
            return 0
    except OSError:
        pass
    removed = 0
    for source in files:
        directory = _cache_dir(source)
        if directory is not None and directory.is_dir():
            removed += _remove_cached(source, directory)
    try:
        stamp_dir.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_name(f"{STAMP_NAME}.{os.getpid()}.tmp")
        tmp.write_text(digest + "\n")
        tmp.replace(stamp)
    except OSError:
        pass
    return removed
