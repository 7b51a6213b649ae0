"""Every ``python`` code block of README.md and docs/*.md runs as written.

A block tagged ```` ```python ```` is a promise that it can be copied into a fresh interpreter
and run: each is executed on its own, in a subprocess, with nothing imported for it.  The blocks
of one page run in order in one temporary directory laid out like the repository root (a copy
of ``docs/examples/``), as a reader following the page from the repository root would run them:
a block may read a file that an earlier block of the page wrote (``fitted.yaml``) and write
relative paths such as ``run/``.  Fragments that only
show a call's shape are tagged ```` ```text ```` instead.  A block identical to a file under
``docs/examples/`` is run by that file's own test (``test_own_simulator_example.py``) and not
again here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = {p.read_text(encoding="utf-8").strip() for p in (ROOT / "docs" / "examples").glob("*.py")}


def python_blocks() -> list[tuple[str, str]]:
    out = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, flags=re.S | re.M):
            if m.group(1) in ("python", "py", "python3"):
                line = text[: m.start()].count("\n") + 1
                out.append((f"{path.relative_to(ROOT)}:{line}", m.group(2)))
    return out


BLOCKS = python_blocks()


def test_the_docs_have_python_blocks() -> None:
    # the collector itself: README's operator example is a python block
    assert any(name.startswith("README.md") for name, _ in BLOCKS)


PAGES = sorted({name.split(":")[0] for name, _ in BLOCKS})


@pytest.mark.parametrize("page", PAGES)
def test_page_blocks_run_as_written(page: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "docs" / "examples", tmp_path / "docs" / "examples")
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    ran = 0
    for k, (name, code) in enumerate(b for b in BLOCKS if b[0].split(":")[0] == page):
        if code.strip() in EXAMPLES:
            continue  # identical to a docs/examples/ file, run by its own test
        script = tmp_path / f"block{k}.py"
        script.write_text(code, encoding="utf-8")
        proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, f"{name} failed:\n{proc.stderr[-3000:]}"
        ran += 1
    if ran == 0:
        pytest.skip("every python block of this page is a docs/examples/ file, run by its own test")
