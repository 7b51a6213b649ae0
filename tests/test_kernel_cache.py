"""numba's cache kept in step with the sources (hsa_elastica/kernel_cache.py).

numba keys a cached kernel on its own file's time stamp only, so a cached caller keeps the
machine code of a callee in another file after that file changed.  The demo package below has
exactly that shape: ``a.f`` calls ``b.g``; after ``b.g`` changes, a process that first runs
:func:`ensure_fresh_cache` on the package must see the new ``g``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hsa_elastica.kernel_cache import (
    KERNEL_PARTS,
    PACKAGE,
    STAMP_NAME,
    ensure_fresh_cache,
    kernel_files,
    sources_digest,
)

A = "from numba import njit\nfrom kc_demo.b import g\n\n\n@njit(cache=True)\ndef f():\n    return g() + 10\n"
B = "from numba import njit\n\n\n@njit(cache=True)\ndef g():\n    return {value}\n"


def _write_demo(root: Path, value: int) -> Path:
    pkg = root / "kc_demo"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(A)
    (pkg / "b.py").write_text(B.format(value=value))
    return pkg


def _run(root: Path, cache: Path, check: bool) -> int:
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(root)!r})
        from hsa_elastica.kernel_cache import ensure_fresh_cache
        if {check}:
            ensure_fresh_cache(Path({str(root)!r}) / "kc_demo")
        from kc_demo.a import f
        print(f())
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, timeout=300)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_changed_callee_in_another_file_is_recompiled(tmp_path: Path) -> None:
    pkg = _write_demo(tmp_path, value=1)
    cache = tmp_path / "cache"
    assert _run(tmp_path, cache, check=True) == 11  # compiles, fills the cache, writes the stamp
    time.sleep(0.01)
    (pkg / "b.py").write_text(B.format(value=2))  # the callee changes, the caller's file not
    assert _run(tmp_path, cache, check=True) == 12


def test_the_digest_follows_the_sources(tmp_path: Path) -> None:
    pkg = _write_demo(tmp_path, value=1)
    first = sources_digest(pkg)
    assert sources_digest(pkg) == first
    (pkg / "b.py").write_text(B.format(value=2))
    assert sources_digest(pkg) != first
    (pkg / "b.py").write_text(B.format(value=1))
    assert sources_digest(pkg) == first
    assert [p.name for p in kernel_files(pkg)] == ["a.py", "b.py"]


def test_stale_cache_files_go_and_a_fresh_cache_stays(tmp_path: Path, monkeypatch) -> None:
    pkg = _write_demo(tmp_path, value=1)
    cache = tmp_path / "cache"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    from numba.core import config

    config.reload_config()
    try:
        assert ensure_fresh_cache(pkg) == 0  # nothing cached yet; the stamp is written
        stamps = list(cache.rglob(STAMP_NAME))
        assert len(stamps) == 1 and stamps[0].read_text().strip() == sources_digest(pkg)
        # fake cache files of both modules, and one of a module the package does not have
        directory = stamps[0].parent
        for name in ("a.f-5.py311.nbi", "a.f-5.py311.1.nbc", "b.g-4.py311.nbi", "c.h-1.py311.nbi"):
            (directory / name).write_bytes(b"x")
        assert ensure_fresh_cache(pkg) == 0  # same sources: the cache is kept
        (pkg / "b.py").write_text(B.format(value=3))
        assert ensure_fresh_cache(pkg) == 3  # a's and b's files go, c's stays
        assert sorted(p.name for p in directory.iterdir() if p.suffix in (".nbi", ".nbc")) == [
            "c.h-1.py311.nbi"]
        assert stamps[0].read_text().strip() == sources_digest(pkg)
    finally:
        monkeypatch.delenv("NUMBA_CACHE_DIR")
        config.reload_config()


def test_every_kernel_of_the_package_is_in_the_digest() -> None:
    """A kernel outside the hashed parts would escape the check (and its layer rule)."""
    every = {p for p in PACKAGE.rglob("*.py") if b"njit" in p.read_bytes()}
    assert every == set(kernel_files())
    assert {p.relative_to(PACKAGE).parts[0] for p in every} <= set(KERNEL_PARTS)
