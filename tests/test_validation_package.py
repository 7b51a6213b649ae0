"""The validations are package features: they run as ``python -m hsa_elastica.validation.NAME``
from a directory outside the source checkout, with only the package importable (no
``validation/`` folder, no data outside the package), read their measured data from the package's
``hsa_elastica/data`` and write into ``--results``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hsa_elastica.validation import VALIDATIONS

PACKAGE = Path(__file__).resolve().parents[1] / "hsa_elastica"


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A working directory outside the checkout and an environment in which only the package
    (linked into an empty folder, as an installed package would be) is importable."""
    site = tmp_path_factory.mktemp("site")
    (site / "hsa_elastica").symlink_to(PACKAGE, target_is_directory=True)
    cwd = tmp_path_factory.mktemp("user")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    env["MPLBACKEND"] = "Agg"
    return cwd, env


def _run(args: list[str], outside: tuple[Path, dict[str, str]]) -> subprocess.CompletedProcess[str]:
    cwd, env = outside
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_checkout_is_not_on_the_path(outside: tuple[Path, dict[str, str]]) -> None:
    res = _run(["-c", "import validation"], outside)
    assert res.returncode != 0 and "No module named 'validation'" in res.stderr


@pytest.mark.parametrize("name", VALIDATIONS)
def test_entry_point_runs_outside_the_checkout(name: str, outside: tuple[Path, dict[str, str]]) -> None:
    res = _run(["-m", f"hsa_elastica.validation.{name}", "--help"], outside)
    assert res.returncode == 0, res.stderr
    assert "--results" in res.stdout


def test_real_robot_evaluation_outside_the_checkout(outside: tuple[Path, dict[str, str]]) -> None:
    """Two poses per run of the shipped motion capture against the shipped preset: the RMS
    table is printed and the figure written into --results (relative to the working dir)."""
    res = _run(["-m", "hsa_elastica.validation.real_robot", "--max-poses", "2",
                "--results", "out"], outside)
    assert res.returncode == 0, res.stderr
    assert "| elongation | 2 |" in res.stdout and "| twisting | 2 |" in res.stdout
    fig = outside[0] / "out" / "fig_real_robot.png"
    assert fig.is_file() and fig.stat().st_size > 10_000
