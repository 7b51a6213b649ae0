"""The code base stays clean under the linters CI relies on: ``ruff check`` (rules in
pyproject.toml ``[tool.ruff]``) and ``mypy`` (``[tool.mypy]``: the ``hsa_elastica`` package).

Both are in the ``test`` extra, so ``python -m pytest`` (the README's test command, run by
``.ci/run``) runs them.  mypy keeps its cache in ``.mypy_cache/`` at the repository root: about
30 s of CPU on a fresh checkout, under 1 s when nothing changed.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_ruff_check_is_clean() -> None:
    proc = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_mypy_is_clean() -> None:
    proc = _run("mypy")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout
