"""CI runs what the README says, and the code base stays clean under its linters: ``ruff check`` (rules in
pyproject.toml ``[tool.ruff]``) and ``mypy`` (``[tool.mypy]``: the ``hsa_elastica`` package).

Both are in the ``test`` extra, so ``python -m pytest`` (the README's test command, run by
``.ci/run``) runs them.  mypy keeps its cache in ``.mypy_cache/`` at the repository root: about
30 s of CPU on a fresh checkout, under 1 s when nothing changed.
"""

from __future__ import annotations

import re
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


def test_ci_runs_the_readme_test_command() -> None:
    """``.ci/run`` runs the README's "Run the tests" command verbatim (its interpreter,
    ``python3.11``, by whatever name the CI machine has: ``"$PY"``)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Run the tests", 1)[1]
    command = re.search(r"```bash\n(.*?)\n```", section, flags=re.S)[1].strip()  # type: ignore[index]
    assert command.startswith("python3.11 -m venv .venv && ") and command.endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert command.replace("python3.11", '"$PY"', 1) in ci


def test_readme_is_a_front_page() -> None:
    """The README stays short (details live in docs/, which the Sphinx build checks)."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
