"""The worked ``calibrate`` example of docs/calibration.md runs as written and does what it says.

The command is read from the markdown (the first ``bash`` block starting with
``hsa-elastica calibrate``), so the page and the test cannot drift apart.  It runs in a fresh
directory that sees the checkout's ``docs/`` (the page says: from the repository root).  The
checks do not trust the calibration's own report:

* the fitted robot is scored against the measured elongation run read here with pandas
  (all 100 poses, 80 of them not used by the fit): its marker position RMS must fall well
  below the start's;
* every fitted parameter moves toward the shipped preset ``fpu_robot_2022``, fitted
  independently (two stages, all 300 poses, 25 elements per rod);
* the report's RMS (the ``--json`` file) matches an RMS recomputed here on the same 20 poses,
  and the numbers printed on the page match the report.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hsa_elastica import data, resolve_params
from hsa_elastica.robots.statics_api import solve_static_batch

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "calibration.md"
PRESET = "fpu_robot_2022"


def documented_command() -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        if block.lstrip().startswith("hsa-elastica calibrate"):
            return shlex.split(block)
    raise AssertionError("docs/calibration.md has no ```bash block with 'hsa-elastica calibrate'")


def option(argv: list[str], flag: str) -> list[str]:
    """The values following ``flag`` in ``argv`` (up to the next option)."""
    i = argv.index(flag) + 1
    out = []
    while i < len(argv) and not (argv[i].startswith("--") and not re.match(r"--?\d", argv[i])):
        out.append(argv[i])
        i += 1
    return out


def marker_rms_mm(params_source: str | Path, angles: np.ndarray, measured: np.ndarray) -> float:
    """RMS over poses of |simulated marker - measured marker| [mm]."""
    params = resolve_params(str(params_source))
    sim = np.array([r.platform_marker_position_m
                    for r in solve_static_batch(params, angles, mirror_branch="gravity")])
    return float(np.sqrt(np.mean(np.sum((sim - measured) ** 2, axis=1)))) * 1e3


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    argv = documented_command()
    workdir = tmp_path_factory.mktemp("calibration_example")
    (workdir / "docs").symlink_to(ROOT / "docs", target_is_directory=True)
    exe = shutil.which("hsa-elastica")
    cmd = ([exe] if exe else [sys.executable, "-m", "hsa_elastica.cli"]) + argv[1:]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"argv": argv, "dir": workdir, "stdout": proc.stdout}


def test_documented_command_is_the_elongation_example() -> None:
    argv = documented_command()
    assert option(argv, "--data") == ["elongation"]
    assert (ROOT / option(argv, "--params")[0]).is_file()


def test_fit_reduces_the_measured_rms_and_moves_toward_the_preset(example: dict[str, object]) -> None:
    argv = example["argv"]
    assert isinstance(argv, list)
    workdir = Path(str(example["dir"]))
    start_file = ROOT / option(argv, "--params")[0]
    fitted_file = workdir / option(argv, "--out")[0]
    assert fitted_file.is_file()

    df = pd.read_csv(data.path("elongation"))
    angles = df[[f"motor_angle_rad_{j}" for j in range(4)]].to_numpy()
    measured = df[["platform_x_m", "platform_y_m", "platform_z_m"]].to_numpy()
    before = marker_rms_mm(start_file, angles, measured)
    after = marker_rms_mm(fitted_file, angles, measured)
    # Before: 5.1 mm (the README robot sits 3-4 mm too low and its marker 3.5 mm off centre).
    # After: the preset with 25 elements reaches 0.85 mm; the real robot's tilt drift that the
    # symmetric model cannot follow leaves about 1 mm (validation/real_robot.md).  Demand the
    # project's 1.5 mm target and at least a factor 3, on all 100 poses, 80 of them unseen.
    assert after < 1.5, (before, after)
    assert after < before / 3.0, (before, after)

    start, fitted, preset = (resolve_params(str(s)) for s in (start_file, fitted_file, PRESET))
    from hsa_elastica.experiments.calibration import get_value

    for name in option(argv, "--free"):
        s, f, p = (get_value(x, name) for x in (start, fitted, preset))
        assert abs(f - p) < abs(s - p), f"{name}: start {s:g}, fitted {f:g}, preset {p:g}"


def test_report_matches_an_independent_rms_and_the_page(example: dict[str, object]) -> None:
    argv = example["argv"]
    assert isinstance(argv, list)
    workdir = Path(str(example["dir"]))
    report = json.loads((workdir / option(argv, "--json")[0]).read_text())
    (run_name, (pos_after, _)), = report["rms_mm_deg"].items()
    pos_before = report["rms_start_mm_deg"][run_name][0]
    assert report["success"]

    # the same poses as --max-poses N: N evenly spread indices of the run
    n = int(option(argv, "--max-poses")[0])
    df = pd.read_csv(data.path("elongation"))
    idx = np.unique(np.linspace(0, len(df) - 1, n).round().astype(int))
    angles = df[[f"motor_angle_rad_{j}" for j in range(4)]].to_numpy()[idx]
    measured = df[["platform_x_m", "platform_y_m", "platform_z_m"]].to_numpy()[idx]
    start_file = ROOT / option(argv, "--params")[0]
    fitted_file = workdir / option(argv, "--out")[0]
    # 0.01 mm: the report solves each pose warm-started from another, this from a fresh
    # start; Newton stops at a residual far below that
    assert pos_before == pytest.approx(marker_rms_mm(start_file, angles, measured), abs=0.01)
    assert pos_after == pytest.approx(marker_rms_mm(fitted_file, angles, measured), abs=0.01)

    # the output printed on the page is what the command prints now (to its 2 decimals)
    page = PAGE.read_text(encoding="utf-8")
    line = re.search(rf"^{re.escape(run_name)}\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$",
                     page, flags=re.MULTILINE)
    assert line is not None, "the page's RMS table line is missing"
    shown = [float(v) for v in line.groups()]
    now = [*report["rms_start_mm_deg"][run_name], *report["rms_mm_deg"][run_name]]
    assert shown == pytest.approx(now, abs=0.011)
    for name, entry in report["parameters"].items():
        row = re.search(rf"^{re.escape(name)}\s+(\S+)\s+(\S+)\s+(\S+)\s*$", page, flags=re.MULTILINE)
        assert row is not None, name
        assert float(row.group(2)) == pytest.approx(entry["value"], rel=1e-4), name
