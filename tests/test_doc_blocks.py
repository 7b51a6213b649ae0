"""Every ``python`` code block of README.md and docs/*.md runs as written.

A block tagged ```` ```python ```` is a promise that it can be copied into a fresh interpreter
and run: each is executed on its own, in a subprocess, in an empty temporary directory (so it
may write relative paths such as ``run/``), with nothing imported for it.  Fragments that only
show a call's shape are tagged ```` ```text ```` instead.  A block identical to a file under
``docs/examples/`` is run by that file's own test (``test_own_simulator_example.py``) and not
again here.
"""

from __future__ import annotations

import os
import re
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
        for k, m in enumerate(re.finditer(r"^```(\w*)[^\n]*\n(.*?)^```", text, flags=re.S | re.M)):
            if m.group(1) in ("python", "py", "python3"):
                line = text[: m.start()].count("\n") + 1
                out.append((f"{path.relative_to(ROOT)}:{line}", m.group(2)))
    return out


BLOCKS = python_blocks()


def test_the_docs_have_python_blocks() -> None:
    # the collector itself: README's operator example is a python block
    assert any(name.startswith("README.md") for name, _ in BLOCKS)


@pytest.mark.parametrize("name,code", BLOCKS, ids=[n for n, _ in BLOCKS])
def test_block_runs_as_written(name: str, code: str, tmp_path: Path) -> None:
    if code.strip() in EXAMPLES:
        pytest.skip("identical to a docs/examples/ file, run by its own test")
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stderr[-3000:]}"
