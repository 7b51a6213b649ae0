"""``calibrate --timeseries``: the time-series calibration recovers known creep parameters from
a synthetic run, refuses bad data and settings in one line before any replay, and the command
writes the fitted parameter file and its report.

The synthetic run is the simulator's own replay (``experiments.timeseries.simulate``) of a
5-element robot with ``creep_fraction = 0.3``, ``creep_time = 4 s``: all four motors turn to
1.5 rad along their handedness in 1 s, hold 11 s, turn back and hold 17 s, logged every
0.25 s.  The true values are set here, not read from the code under test, and the fit starts
far from them (0.1, 1 s).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from hsa_elastica.cli import main
from hsa_elastica.experiments import calibration_timeseries as ct
from hsa_elastica.experiments.timeseries import MeasuredSeries, read_series, simulate
from hsa_elastica.params import ParameterError, RobotParams, load_params, save_params

TRUE_C, TRUE_TAU = 0.3, 4.0
SETTLE = 1.0
_COLUMNS = ["t_experiment_s", *[f"motor_angle_rad_{j}" for j in range(4)],
            "platform_x_m", "platform_y_m", "platform_z_m",
            "platform_qx", "platform_qy", "platform_qz", "platform_qw"]


def _robot() -> RobotParams:
    p = RobotParams()
    return p.replace(rod=p.rod.replace(n_elements=5))


def _with_creep(p: RobotParams, c: float, tau: float) -> RobotParams:
    return p.replace(rod=p.rod.replace(creep_fraction=c, creep_time=tau))


@pytest.fixture(scope="module")
def synthetic() -> MeasuredSeries:
    from scipy.spatial.transform import Rotation

    t = np.arange(0.0, 30.0 + 1e-9, 0.25)
    up = np.clip(t - 1.0, 0.0, 1.0) - np.clip(t - 13.0, 0.0, 1.0)
    angles = 1.5 * up[:, None] * np.array([1.0, -1.0, 1.0, -1.0])[None, :]
    blank = MeasuredSeries("synthetic", t, angles, np.zeros((len(t), 3)),
                           np.tile([0.0, 0.0, 0.0, 1.0], (len(t), 1)), np.zeros(len(t), dtype=bool))
    sim = simulate(_with_creep(_robot(), TRUE_C, TRUE_TAU), blank, dt=0.02, settle=SETTLE)
    quat = Rotation.from_matrix(sim.rotation).as_quat()
    return MeasuredSeries("synthetic", t, angles, sim.position, quat, blank.fitted)


def _write(path: Path, s: MeasuredSeries) -> Path:
    rows = np.column_stack([s.t, s.angles, s.position, s.quaternion])
    lines = [",".join(_COLUMNS)] + [",".join(repr(float(v)) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_synthetic_run_has_creep_to_identify(synthetic: MeasuredSeries) -> None:
    """The creep is a visible part of the data: at 0.3 of a ~0.15 rest strain of 100 mm rods
    it lengthens the rods by ~4.5 mm after a hold of a few creep times, so the replay without
    creep must differ from the data by millimetres."""
    plain = simulate(_robot(), synthetic, dt=0.02, settle=SETTLE)
    assert np.abs(plain.position[:, 2] - synthetic.position[:, 2]).max() > 2e-3


def test_synthetic_creep_is_recovered(synthetic: MeasuredSeries) -> None:
    """Noise-free data of the same model: only the implicit steps' Newton tolerance and the
    optimiser's xtol (1e-4) separate the fit from the truth.  1 % on each parameter; measured:
    both within 1e-5 relative, position RMS 0.00 mm."""
    res = ct.calibrate_timeseries(
        _robot(), [synthetic], ["rod.creep_fraction", "rod.creep_time"],
        start={"rod.creep_fraction": 0.1, "rod.creep_time": 1.0},
        bounds={"rod.creep_time": (0.1, 100.0)}, settle=SETTLE,
    )
    assert res.fitted["rod.creep_fraction"] == pytest.approx(TRUE_C, rel=0.01)
    assert res.fitted["rod.creep_time"] == pytest.approx(TRUE_TAU, rel=0.01)
    assert res.params.rod.creep_fraction == pytest.approx(TRUE_C, rel=0.01)
    assert res.rms_start_mm_deg["synthetic"][0] > 0.5  # the start (0.1, 1 s) is far off
    assert res.rms_mm_deg["synthetic"][0] < 0.01


def test_yaw_turns_the_replay_into_the_measured_frame(synthetic: MeasuredSeries) -> None:
    """``mocap.yaw`` rotates the simulated poses about +z into the motion-capture frame, as in
    the steady-state calibration: the synthetic data turned by 0.1 rad about +z have zero
    residuals at ``yaw = 0.1`` (the replay is deterministic: 1e-6 of a mm or degree) and a
    0.1 rad = 5.7 deg orientation error at ``yaw = 0``."""
    from scipy.spatial.transform import Rotation

    rz = Rotation.from_euler("z", 0.1)
    turned = MeasuredSeries("turned", synthetic.t, synthetic.angles, rz.apply(synthetic.position),
                            (rz * Rotation.from_quat(synthetic.quaternion)).as_quat(), synthetic.fitted)
    truth = _with_creep(_robot(), TRUE_C, TRUE_TAU)
    r = ct.timeseries_residuals(truth, [turned], settle=SETTLE, yaw=0.1).reshape(-1, 6)
    assert np.abs(r).max() < 1e-6
    r0 = ct.timeseries_residuals(truth, [turned], settle=SETTLE, yaw=0.0).reshape(-1, 6)
    assert np.linalg.norm(r0[:, 3:], axis=1) == pytest.approx(np.degrees(0.1), rel=1e-6)


def test_cli_writes_the_fitted_file_and_report(synthetic: MeasuredSeries, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """One free parameter (the creep time held at its true value through ``--start``), the
    objective on every second row: the fitted file carries the true fraction (1 %), the JSON
    report has 6 residuals per objective row (61 of the 121 rows) and the printed report the
    run's RMS."""
    data = _write(tmp_path / "run.csv", synthetic)
    start = tmp_path / "start.yaml"
    save_params(_with_creep(_robot(), 0.1, TRUE_TAU), start)
    out, report = tmp_path / "fitted.yaml", tmp_path / "report.json"
    code = main(["calibrate", "--timeseries", str(data), "--params", str(start),
                 "--free", "rod.creep_fraction", "--settle", str(SETTLE), "--every", "2",
                 "--out", str(out), "--json", str(report), "--quiet"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    fitted = load_params(out, RobotParams)
    assert fitted.rod.creep_fraction == pytest.approx(TRUE_C, rel=0.01)
    assert fitted.rod.creep_time == TRUE_TAU and fitted.rod.n_elements == 5
    rep = json.loads(report.read_text())
    assert rep["n_residuals"] == 6 * 61
    assert rep["parameters"]["rod.creep_fraction"]["value"] == pytest.approx(TRUE_C, rel=0.01)
    assert rep["rms_mm_deg"]["run"][0] < 0.01 < rep["rms_start_mm_deg"]["run"][0]
    assert "rod.creep_fraction" in printed.out and "run" in printed.out


_GOOD = ("t_experiment_s,motor_angle_rad_0,motor_angle_rad_1,motor_angle_rad_2,motor_angle_rad_3,"
         "platform_x_m,platform_y_m,platform_z_m,platform_qx,platform_qy,platform_qz,platform_qw\n")
_ROW = "{t},0,0,0,0,0,0,{z},0,0,0,1\n"


@pytest.mark.parametrize("body, needle", [
    (_GOOD.replace(",platform_qw", "") + "0,0,0,0,0,0,0,0.12,0,0,0\n", "missing column(s) platform_qw"),
    (_GOOD + _ROW.format(t=0, z=0.12) + _ROW.format(t=0.2, z=0.12) + _ROW.format(t=0.1, z=0.12),
     "line 4, column t_experiment_s: time 0.1 s does not follow"),
    (_GOOD + _ROW.format(t=0, z=0.12) + _ROW.format(t=0.2, z=0.12) + _ROW.format(t=0.2, z=0.12),
     "must increase strictly"),
    (_GOOD + _ROW.format(t=0, z=0.12) + _ROW.format(t=0.2, z="nan"), "line 3, column platform_z_m"),
    (_GOOD + _ROW.format(t=0, z=0.12) + _ROW.format(t=0.2, z=""), "missing or non-finite"),
    (_GOOD + _ROW.format(t=0, z=120.0) + _ROW.format(t=0.2, z=120.0), "a position in mm"),
    (_GOOD + _ROW.format(t=0, z=0.12) + _ROW.format(t=110000, z=0.12), "times in ms?"),
    (_GOOD + "0,90,0,0,0,0,0,0.12,0,0,0,1\n" + _ROW.format(t=0.2, z=0.12), "line 2"),
    (_GOOD + "0,0,0,0,0,0,0,0.12,0,0,0,0\n" + _ROW.format(t=0.2, z=0.12), "quaternion norm"),
    (_GOOD + _ROW.format(t=0, z=0.12) + _ROW.format(t=0.005, z=0.12), "less than the integrator step"),
    (_GOOD + _ROW.format(t=0, z=0.12), "needs at least 2"),
])
def test_bad_data_exits_2_with_one_line_before_any_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        body: str, needle: str) -> None:
    monkeypatch.setattr(ct, "simulate", _no_replay)
    data = tmp_path / "run.csv"
    data.write_text(body, encoding="utf-8")
    code = main(["calibrate", "--timeseries", str(data), "--params", "paper_robot",
                 "--free", "rod.C_eps", "--out", str(tmp_path / "f.yaml")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "f.yaml").exists()


def _no_replay(*args: object, **kwargs: object) -> None:
    raise AssertionError("a replay started before the input was checked")


@pytest.mark.parametrize("extra, needle", [
    (["--free", "rod.length"], "cannot be fitted to a time series: allowed rod.creep_fraction"),
    (["--free", "rod.creep_time"], "rod.creep_time starts at 0"),
    (["--free", "rod.creep_fraction"], "needs rod.creep_time > 0"),
    (["--free", "rod.creep_fraction", "rod.creep_time", "--start", "rod.creep_fraction", "0.1",
      "--start", "rod.creep_time", "10", "--bounds", "rod.creep_time", "0", "100"],
     "bounds of rod.creep_time: [0, 100] are invalid: must satisfy lower < upper, lie in (0, 100000] s"),
    (["--free", "rod.creep_fraction", "--start", "rod.creep_time", "10", "--bounds",
      "rod.creep_fraction", "0", "2"], "lie in [0, 1]"),
    (["--free", "rod.C_eps", "--start", "rod.creep_fraction", "0.1"], "creep_time"),
    (["--free", "rod.C_eps", "--max-poses", "5"], "--max-poses is an option of --data"),
    (["--free", "rod.C_eps", "--mirror-branch", "gravity"], "--mirror-branch is an option of --data"),
    (["--free", "rod.C_eps", "--dt", "0.5"], "--dt = 0.5 is invalid: must be in (0, 0.05] s"),
    (["--free", "rod.C_eps", "--dt", "nan"], "--dt"),
    (["--free", "rod.C_eps", "--every", "0"], "--every = 0 is invalid"),
    (["--free", "rod.C_eps", "--settle", "-1"], "--settle"),
    (["--free", "rod.C_eps", "--duration", "0"], "--duration"),
])
def test_bad_names_bounds_and_options_exit_2_before_any_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        extra: list[str], needle: str) -> None:
    monkeypatch.setattr(ct, "simulate", _no_replay)
    code = main(["calibrate", "--timeseries", "elongation", "--params", "fpu_robot_2022",
                 "--out", str(tmp_path / "f.yaml"), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and needle in err, err


def test_time_series_options_refused_with_steady_state_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calibrate", "--data", "elongation", "--params", "paper_robot", "--free", "rod.C_eps",
                 "--dt", "0.01", "--out", str(tmp_path / "f.yaml")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--dt is an option of --timeseries" in err


@pytest.mark.parametrize("kwargs, field", [
    ({"dt": 0.0}, "dt"), ({"dt": math.inf}, "dt"), ({"settle": -1.0}, "settle"),
    ({"every": 0}, "every"), ({"max_nfev": 0}, "max_nfev"), ({"diff_step": 2.0}, "diff_step"),
])
def test_python_api_refuses_bad_settings(kwargs: dict[str, float], field: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ct, "simulate", _no_replay)
    s = read_series_from_rows()
    with pytest.raises(ParameterError, match=f"^{field} = "):
        ct.calibrate_timeseries(_robot(), [s], ["rod.C_eps"], **kwargs)  # type: ignore[arg-type]


def read_series_from_rows() -> MeasuredSeries:
    t = np.array([0.0, 0.5, 1.0])
    return MeasuredSeries("rows", t, np.zeros((3, 4)), np.zeros((3, 3)),
                          np.tile([0.0, 0.0, 0.0, 1.0], (3, 1)), np.zeros(3, dtype=bool))


def test_shipped_run_read_as_a_file_equals_the_shipped_reader(tmp_path: Path) -> None:
    """A shipped run written out as a plain CSV reads back to the same series (SI units
    checked by the reader's ranges: 120-150 mm marker heights, angles within the motor range)."""
    from hsa_elastica.experiments.timeseries import measured_series

    s = measured_series("elongation", duration=20.0)
    back = read_series(_write(tmp_path / "elongation.csv", s), duration=20.0)
    assert np.array_equal(back.t, s.t) and np.array_equal(back.angles, s.angles)
    assert np.allclose(back.position, s.position, rtol=0, atol=1e-15)
    assert np.all((back.position[:, 2] > 0.10) & (back.position[:, 2] < 0.16))


def test_validation_replays_through_the_package() -> None:
    """The validation module calls the package's replay (not a copy of it)."""
    from hsa_elastica.experiments import timeseries
    from hsa_elastica.validation import real_robot_timeseries as v

    assert v.simulate is timeseries.simulate and v.measured_series is timeseries.measured_series


ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "calibration.md"
RECORD = ROOT / "validation" / "real_robot_timeseries_fit.json"


def _documented_command() -> list[str]:
    import re
    import shlex

    for block in re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL):
        if block.lstrip().startswith("hsa-elastica calibrate --timeseries"):
            return shlex.split(block)
    raise AssertionError("docs/calibration.md has no ```bash block with 'hsa-elastica calibrate --timeseries'")


def test_documented_command_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The page's command as written, on the first 20 s of the run and one evaluation (the
    whole run takes minutes: its output on the page is the recorded fit, next test)."""
    argv = _documented_command()
    monkeypatch.chdir(tmp_path)
    code = main([*argv[1:], "--duration", "20", "--max-evaluations", "1", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    out = argv[argv.index("--out") + 1]
    assert load_params(tmp_path / out, RobotParams).rod.creep_time == 1000.0
    assert json.loads((tmp_path / argv[argv.index("--json") + 1]).read_text())["n_evaluations"] >= 1


def test_page_output_is_the_recorded_fit() -> None:
    """The output printed on the page is the recorded run of the documented command
    (``validation/real_robot_timeseries_fit.json``, ``fit_rate``), to its printed digits."""
    import re

    rec = json.loads(RECORD.read_text(encoding="utf-8"))["fit_rate"]["calibration"]
    assert rec["success"]
    page = PAGE.read_text(encoding="utf-8")
    entry = rec["parameters"]["rod.creep_fraction"]
    row = re.search(r"^rod\.creep_fraction\s+(\S+)\s+(\S+)\s+(\S+)\s*$", page, flags=re.MULTILINE)
    assert row is not None
    assert float(row.group(2)) == pytest.approx(entry["value"], rel=1e-5)
    line = re.search(r"^elongation\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", page, flags=re.MULTILINE)
    assert line is not None
    shown = [float(v) for v in line.groups()]
    assert shown == pytest.approx([*rec["rms_start_mm_deg"]["elongation"], *rec["rms_mm_deg"]["elongation"]],
                                  abs=0.006)
