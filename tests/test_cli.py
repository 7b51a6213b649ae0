"""Tests of the ``hsa-elastica`` command line and the scenario scripts' ``--help``.

Exit codes and stderr are checked through real subprocesses (what a user sees); the physics
cases are quick (unactuated robot, a few hundred steps) and compared with the rest geometry of
the paper robot written out by hand (rods on a 24 mm circle at 45 deg + 90 deg i, L = 100 mm,
platform 3 mm thick).
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import imageio.v2 as imageio
import numpy as np
import pytest

from hsa_elastica.cli import main
from hsa_elastica.params import RobotParams, load_params, save_params

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "hsa_elastica.cli"]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


@pytest.fixture(scope="module")
def quick_params(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Paper robot with a short ramp and a stable time step (2e-5 s)."""
    p = RobotParams()
    p = p.replace(simulation=p.simulation.replace(dt=2e-5, ramp_time=0.01))
    path = tmp_path_factory.mktemp("params") / "quick.yaml"
    save_params(p, path)
    return path


def test_console_script_declared() -> None:
    eps = [e for e in entry_points(group="console_scripts") if e.name == "hsa-elastica"]
    assert eps and eps[0].value == "hsa_elastica.cli:main"


def test_steady_state_json_contract(quick_params: Path) -> None:
    r = _run("steady-state", "--angles", "0", "0", "0", "0", "--params", str(quick_params),
             "--json", "-", "--max-time", "0.5", "--dynamic")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)  # exactly one JSON object on stdout
    assert list(d) == [
        "motor_angles_rad", "platform_position_m", "platform_marker_position_m",
        "platform_quaternion_xyzw", "rod_tip_positions_m", "converged", "sim_time_s",
        "wall_time_s", "method", "symmetry_broken", "symmetry_branch_m",
    ]
    assert d["method"] == "dynamic"
    # the zero command is symmetric under all three symmetries, and so is the rest pose
    assert d["symmetry_broken"] is False and d["symmetry_branch_m"] == [0.0, 0.0, 0.0]
    assert d["motor_angles_rad"] == [0.0, 0.0, 0.0, 0.0]
    assert np.asarray(d["platform_position_m"]).shape == (3,)
    assert np.asarray(d["platform_quaternion_xyzw"]).shape == (4,)
    assert np.asarray(d["rod_tip_positions_m"]).shape == (4, 3)
    assert d["converged"] is True
    assert isinstance(d["sim_time_s"], float) and 0.01 <= d["sim_time_s"] < 0.5
    assert isinstance(d["wall_time_s"], float) and d["wall_time_s"] > 0.0
    # SI units in the robot base frame: metres, not millimetres
    np.testing.assert_allclose(d["platform_position_m"], [0.0, 0.0, 0.1015], atol=1e-9)
    np.testing.assert_allclose(d["platform_quaternion_xyzw"], [0, 0, 0, 1], atol=1e-9)
    a = np.radians([45.0, 135.0, 225.0, 315.0])
    tips = np.stack([0.024 * np.cos(a), 0.024 * np.sin(a), np.full(4, 0.1)], axis=1)
    np.testing.assert_allclose(d["rod_tip_positions_m"], tips, atol=1e-9)


def test_steady_state_json_file(quick_params: Path, tmp_path: Path) -> None:
    out = tmp_path / "ss.json"  # (a missing directory is refused: tests/test_reliability.py)
    code = main(["steady-state", "--angles", "0", "0", "0", "0", "--params", str(quick_params),
                 "--json", str(out), "--quiet", "--max-time", "0.5"])
    assert code == 0
    d = json.loads(out.read_text())
    assert d["converged"] is True and len(d["rod_tip_positions_m"]) == 4


def test_reference_flag_same_result_as_fused_default(quick_params: Path, tmp_path: Path) -> None:
    # Default = fused numba loop, --reference = per-rod PyElastica operators: the same equations
    # in the same order, so the same steady state to round-off (1e-9 m on a 0.1 m robot; see
    # tests/test_fast.py).  Asymmetric angles so the robot actually moves (>0.1 mm).
    angles = ["0.9", "-0.4", "0.3", "-0.7"]
    out = {}
    for flag in (["--dynamic"], ["--dynamic", "--reference"]):
        path = tmp_path / f"ss{len(flag)}.json"
        code = main(["steady-state", "--angles", *angles, "--params", str(quick_params),
                     "--json", str(path), "--quiet", "--max-time", "0.03", *flag])
        assert code == 0
        out[len(flag)] = json.loads(path.read_text())
    fast, ref = out[1], out[2]
    assert fast["sim_time_s"] == ref["sim_time_s"]
    assert abs(ref["platform_position_m"][2] - 0.1015) > 1e-4
    for key in ("platform_position_m", "platform_quaternion_xyzw", "rod_tip_positions_m"):
        np.testing.assert_allclose(fast[key], ref[key], rtol=0, atol=1e-9, err_msg=key)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["primitive", "bend_up"], "unknown primitive 'bend_up'"),
        (["primitive", "elongation", "--magnitude", "1.5"], "magnitude"),
        (["primitive", "elongation", "--magnitude", "-0.1"], "magnitude"),
        (["steady-state", "--angles", "0.1", "0.2", "0.3"], "exactly 4"),
        (["steady-state", "--angles", "0.1", "0.2", "0.3", "0.4", "0.5"], "exactly 4"),
        (["steady-state", "--angles", "a", "b", "c", "d"], "not a number"),
        (["primitive", "elongation", "--params", "/nonexistent/robot.yaml"], "cannot read"),
        (["render", "/nonexistent/run", "--out", "x.mp4"], "does not exist"),
        (["params"], "--dump"),
    ],
)
def test_bad_input_exit_code_2(args: list[str], needle: str) -> None:
    r = _run(*args)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr  # one line, no usage dump
    assert "Traceback" not in r.stderr
    assert needle in lines[0]
    assert r.stdout == ""


def test_malformed_and_invalid_params_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rod: [\n")  # YAML syntax error (multi-line parser message)
    assert main(["steady-state", "--angles", "0", "0", "0", "0", "--params", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot parse" in err
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text("rod:\n  youngs_modulus: -1.0\n")
    assert main(["primitive", "elongation", "--params", str(invalid)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "youngs_modulus" in err


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_params_dump_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"robot{suffix}"
    assert main(["params", "--dump", str(path)]) == 0
    text = path.read_text()
    assert "youngs_modulus" in text and "Pa" in text  # units are written with the values
    assert load_params(path, RobotParams) == RobotParams()


def test_primitive_run_dir_and_render(quick_params: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code = main(["primitive", "elongation", "--magnitude", "0", "--params", str(quick_params),
                 "--duration", "0.05", "--out", str(run_dir), "--quiet"])
    assert code == 0
    summary = json.loads((run_dir / "summary.json").read_text())
    for key in ("motor_angles_rad", "platform_position_m", "platform_quaternion_xyzw",
                "rod_tip_positions_m", "converged", "sim_time_s", "wall_time_s"):
        assert key in summary
    assert summary["primitive"] == "elongation"
    assert summary["sim_time_s"] == pytest.approx(0.05, abs=1e-9)  # --duration: fixed length
    assert load_params(run_dir / "params.yaml", RobotParams) == load_params(quick_params, RobotParams)
    video = tmp_path / "re.mp4"
    still = tmp_path / "re.png"
    r = _run("render", str(run_dir), "--out", str(video), "--fps", "100", "--still", str(still),
             "--size", "320x240", "--speed", "1", "--hold", "0")
    assert r.returncode == 0, r.stderr
    reader = imageio.get_reader(str(video))
    frames = [np.asarray(f) for f in reader]
    reader.close()
    assert len(frames) == 6  # 0.05 s at real time (--speed 1), 100 frames/s, no hold
    assert frames[0].shape == (240, 320, 3)
    assert imageio.imread(str(still)).std() > 10.0


@pytest.mark.parametrize(
    "script", ["motion_primitive.py", "steady_state.py", "single_rod_twist.py"]
)
def test_scenario_help(script: str) -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scenarios" / script), "--help"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage:")


@pytest.mark.parametrize("sub", ["primitive", "steady-state", "render", "params"])
def test_subcommand_help(sub: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([sub, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: hsa-elastica " + sub)
    if sub == "steady-state":
        assert "RADIANS" in out


def test_primitive_on_a_stack_of_segments(quick_params: Path, tmp_path: Path) -> None:
    """``--params A,B`` builds a two-segment stack; one primitive per segment."""
    still = tmp_path / "stack.png"
    r = _run("primitive", "elongation,bend_north", "--params", f"{quick_params},{quick_params}",
             "--duration", "0.02", "--still", str(still), "--size", "160x120")
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith("segment")]
    assert len(lines) == 2 and "platform 0 frame" in lines[1]
    assert still.exists()
    bad = _run("primitive", "elongation,bend_north,twist_cw", "--params",
               f"{quick_params},{quick_params}")
    assert bad.returncode == 2 and "3 primitives for 2 segments" in bad.stderr


def test_stack_run_dir_reloads_rerenders_and_reruns(quick_params: Path, tmp_path: Path) -> None:
    """``--out`` on a stack writes the run directory of a single robot, per segment."""
    run_dir = tmp_path / "run"
    two = f"{quick_params},{quick_params}"
    code = main(["primitive", "elongation,bend_north", "--params", two, "--duration", "0.02",
                 "--out", str(run_dir), "--quiet"])
    assert code == 0
    from hsa_elastica.io.rundir import load_run

    run = load_run(run_dir)
    p = load_params(quick_params, RobotParams)
    assert run.segments == (p, p)
    s = run.summary
    assert s["sim_time_s"] == pytest.approx(0.02, abs=1e-9) and s["n_segments"] == 2
    assert s["primitive"] == "elongation,bend_north" and s["method"] == "dynamic"
    assert len(s["motor_angles_rad"]) == 8 and len(s["rod_tip_positions_m"]) == 8
    seg = s["segments"]
    assert [e["segment"] for e in seg] == [0, 1] and seg[1]["base"] == "platform of segment 0"
    # the summary's top platform is the last sample of the top platform's columns
    df = run.diagnostics
    z = df["seg1/platform/position_z"].iloc[-1]
    assert s["platform_position_m"][2] == pytest.approx(z, abs=1e-12)
    assert seg[1]["platform_position_m"][2] == pytest.approx(z, abs=1e-12)
    assert seg[0]["platform_position_m"][2] == pytest.approx(df["seg0/platform/position_z"].iloc[-1])
    # every column has its unit and frame (none left "?")
    meta = df.attrs["columns"]
    assert meta["seg1/platform/quaternion_w"]["frame"] == "body->robot_base"
    assert meta["seg1/sensors/motor_torque_2"]["unit"] == "N m"
    assert meta["seg0/rod3/position_z_0"]["unit"] == "m"
    assert not [c for c, m in meta.items() if m["unit"] == "?"]
    # the parameters rerun the stack by key, and the run re-renders
    again = tmp_path / "again"
    keys = f"{run_dir}/params.yaml#0,{run_dir}/params.yaml#1"
    assert main(["primitive", "elongation,bend_north", "--params", keys, "--duration", "0.02",
                 "--out", str(again), "--quiet"]) == 0
    np.testing.assert_allclose(load_run(again).summary["platform_position_m"],
                               s["platform_position_m"], atol=1e-12)
    still = tmp_path / "re.png"
    r = _run("render", str(run_dir), "--still", str(still), "--size", "160x120")
    assert r.returncode == 0, r.stderr
    assert imageio.imread(str(still)).std() > 10.0
