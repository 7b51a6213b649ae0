"""Outputs never clobber what they should not: special files and symbolic links
survive, every writer is atomic, an existing table needs ``--overwrite``, an over-long name is
refused before the work, and a validation run writes only where it is told.

The solver is replaced where the test is about files (a canned result), so no case simulates.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest
import yaml

from hsa_elastica import data as package_data
from hsa_elastica.cli import main
from hsa_elastica.params import ParameterError, RobotParams, load_params, save_params
from hsa_elastica.params import files as files_module
from hsa_elastica.params.files import OutputPathError, atomic_output, output_path_problem
from hsa_elastica.robots import statics_api
from hsa_elastica.robots import steady_state as steady_state_module

ANGLES = ["steady-state", "--angles", "0.1", "0", "0", "0"]
LONG = "x" * 300


class _Result:
    """What ``steady-state --json`` writes (the fields of a real result, fixed numbers)."""

    method = "static"
    converged = True
    stable = True
    wall_time_s = 0.01

    def to_json_dict(self) -> dict[str, object]:
        return {"platform_position_m": [0.0, 0.0, 0.1015], "converged": True, "method": "static"}


@pytest.fixture
def canned_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(statics_api, "solve_static", lambda params, angles, **kw: _Result())
    monkeypatch.setattr(statics_api, "solve_static_batch",
                        lambda params, angles, **kw: [_Result() for _ in angles])
    monkeypatch.setattr("hsa_elastica.cli.steady_state.describe", lambda result: "canned")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the dynamics were started")

    monkeypatch.setattr(steady_state_module, "solve_steady_state", refuse)


def _refused(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


# --------------------------------------------------------------------------------------------
# special files and links
# --------------------------------------------------------------------------------------------
def test_json_through_a_symlink_writes_the_target(tmp_path: Path, canned_solve: None) -> None:
    target = tmp_path / "real.json"
    target.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    assert main([*ANGLES, "--json", str(link), "--quiet"]) == 0
    assert link.is_symlink() and os.readlink(link) == "real.json"  # on main: a regular file
    assert json.loads(target.read_text())["converged"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real.json"]


def test_params_dump_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "robot.yaml"
    target.write_text("old")
    link = tmp_path / "robot.yaml"
    link.symlink_to(target)
    assert main(["params", "--dump", str(link)]) == 0
    assert link.is_symlink()
    assert load_params(target) == RobotParams()


def test_json_into_a_fifo_writes_in_place(tmp_path: Path, canned_solve: None) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    try:
        code = main([*ANGLES, "--json", str(fifo), "--quiet"])
    finally:
        reader.join(timeout=10)
    assert code == 0
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # on main: renamed over by a regular file
    assert json.loads(received[0])["converged"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.json"]


def test_char_device_written_in_place_never_renamed_over() -> None:
    """/dev/null stays the device (the helper is called directly: on main the command line
    replaced a device node with a regular file when run as root)."""
    before = os.stat("/dev/null")
    assert output_path_problem("/dev/null") is None
    with atomic_output("/dev/null") as path:
        assert path != Path("/dev/null")  # a temporary file, copied into the device
        path.write_text("discarded")
    assert not path.exists()
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_socket_refused_before_the_work(tmp_path: Path, canned_solve: None,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        code = main([*ANGLES, "--json", str(path)])
        _refused(code, capsys.readouterr().err, "--json", "is a socket")
        assert stat.S_ISSOCK(path.stat().st_mode)
        with pytest.raises(OutputPathError, match="socket"):
            with atomic_output(path):
                pass


# --------------------------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["robot.yaml", "robot.toml"])
def test_params_dump_is_atomic(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Interrupted at the rename, the old file is intact and no temporary file is left (on main
    the dump wrote into the file itself: an interruption left a truncated file)."""
    path = tmp_path / name
    path.write_text("old content\n")

    def interrupted(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(files_module.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save_params(RobotParams(), path)
    assert path.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_params_dump_to_stdout(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["params", "--dump", "-", "--preset", "fpu_robot_2022"]) == 0
    out = capsys.readouterr().out
    (tmp_path / "p.yaml").write_text(out)
    from hsa_elastica.params import resolve_params

    assert load_params(tmp_path / "p.yaml") == resolve_params("fpu_robot_2022")
    assert out.startswith("# hsa-elastica parameters: RobotParams")
    assert not (tmp_path / "-").exists() and not Path("-").exists()


def test_new_file_gets_the_ordinary_mode(tmp_path: Path) -> None:
    """The temporary file (0600) gets the mode a plain open() would give (0666 & ~umask)."""
    umask = os.umask(0o022)
    try:
        save_params(RobotParams(), tmp_path / "p.yaml")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "p.yaml").stat().st_mode) == 0o644


# --------------------------------------------------------------------------------------------
# overwrite and names
# --------------------------------------------------------------------------------------------
def test_angles_csv_table_not_overwritten_without_flag(
    tmp_path: Path, canned_solve: None, capsys: pytest.CaptureFixture[str],
) -> None:
    csv = tmp_path / "a.csv"
    csv.write_text("angle_0,angle_1,angle_2,angle_3\n0,0,0,0\n")
    out = tmp_path / "table.csv"
    out.write_text("precious\n")
    code = main(["steady-state", "--angles-csv", str(csv), "--out", str(out)])
    _refused(code, capsys.readouterr().err, "--out", "the file exists", "--overwrite")
    assert out.read_text() == "precious\n"
    assert main(["steady-state", "--angles-csv", str(csv), "--out", str(out), "--overwrite",
                 "--quiet"]) == 0
    assert "platform_position_m_z" in out.read_text()


@pytest.mark.parametrize("args", [
    [*ANGLES, "--json", "{tmp}/" + LONG + ".json"],
    [*ANGLES, "--out", "{tmp}/" + LONG],
    ["steady-state", "--angles-csv", "{tmp}/a.csv", "--out", "{tmp}/" + LONG + ".csv"],
    ["primitive", "elongation", "--out", "{tmp}/" + LONG],
    ["primitive", "elongation", "--render", "{tmp}/" + LONG + ".mp4"],
    ["primitive", "elongation", "--still", "{tmp}/" + LONG + ".png"],
    ["params", "--dump", "{tmp}/" + LONG + ".yaml"],
    ["calibrate", "--data", "elongation", "--params", "paper_robot", "--free", "rod.C_eps",
     "--out", "{tmp}/" + LONG + ".yaml"],
    ["render", "{tmp}", "--out", "{tmp}/" + LONG + ".mp4"],
])
def test_file_name_longer_than_name_max_refused(
    args: list[str], tmp_path: Path, canned_solve: None, capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "a.csv").write_text("angle_0,angle_1,angle_2,angle_3\n0,0,0,0\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main([a.replace("{tmp}", str(tmp_path)) for a in args])
    _refused(code, capsys.readouterr().err, "bytes long; a file name may have at most 255 bytes")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# --------------------------------------------------------------------------------------------
# validation runs write only where they are told
# --------------------------------------------------------------------------------------------
def _digest(paths: list[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def test_characterization_fit_writes_only_into_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--fit --out DIR``: every file in DIR, none in the working directory or the package
    data (the simulator runs are replaced by the closed forms: this is about files)."""
    from hsa_elastica.validation import characterization as module

    def closed_forms_as_simulated(data, rods, jobs, laws=None, method="static"):  # type: ignore[no-untyped-def]
        import pandas as pd

        frames = [module._closed_form_points(data, p, by_rows, (laws or {}).get(p, {}))
                  for p, by_rows in rods.items()]
        points = pd.concat(frames, ignore_index=True)
        points["simulated"] = points["closed_form"]
        points["run_time_s"] = 0.0
        return points

    monkeypatch.setattr(module, "simulate_all", closed_forms_as_simulated)
    shipped = sorted(Path(package_data.__file__).parent.glob("fitted_params*.yaml"))
    assert len(shipped) == 5  # linear, compression, nonlinear, nonlinear + compression, shared
    before = _digest(shipped)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    out = tmp_path / "out"
    assert module.main(["--fit", "--rows", "4", "--out", str(out)]) == 0
    assert _digest(shipped) == before
    assert list(cwd.iterdir()) == []  # on main: ./validation_results with the YAML and figures
    written = {p.name for p in out.iterdir()}
    assert {"characterization_points.csv", "scores.csv", "fitted_params.yaml"} <= written
    fitted = yaml.safe_load((out / "fitted_params.yaml").read_text())
    assert set(fitted) == {4}
    # the checkout's report writer, told --out, also writes only there (report and figures)
    report = _wrapper("characterization", monkeypatch)
    out2 = tmp_path / "out2"
    assert report.main(["--fit", "--rows", "4", "--out", str(out2)]) == 0  # type: ignore[attr-defined]
    assert _digest(shipped) == before
    assert list(cwd.iterdir()) == []
    assert {"results.md", "fig3_characterization.png", "scores.csv",
            "fitted_params.yaml"} <= {p.name for p in out2.iterdir()}


def _wrapper(name: str, monkeypatch: pytest.MonkeyPatch) -> object:
    root = Path(__file__).resolve().parents[1]
    monkeypatch.syspath_prepend(str(root))  # the checkout's ``validation`` package
    spec = importlib.util.spec_from_file_location(f"checkout_{name}", root / "validation" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, package_dir, told", [
    ("characterization", "data", (["--fit", "--out", "d"], ["--fit", "--results=r"],
                                  ["--fitted-dir", "f", "--fit"])),
    ("real_robot", "presets", (["--fit", "--results", "r"], ["--fit", "--preset-out=p.yaml"])),
])
def test_checkout_wrappers_add_their_defaults_only_without_output_options(
    name: str, package_dir: str, told: tuple[list[str], ...], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``python -m validation.NAME`` regenerates the committed files (the package's data or
    preset among them) only when it is not told where to write (on main ``--fit --out DIR`` /
    ``--fit --results DIR`` still rewrote the package's own files)."""
    module = _wrapper(name, monkeypatch)
    package = str(Path(package_data.__file__).parents[1] / package_dir)
    assert any(a.startswith(package) for a in module.arguments(["--fit"]))  # type: ignore[attr-defined]
    for argv in told:
        assert module.arguments(argv) == argv  # type: ignore[attr-defined]


def test_output_path_problem_names_each_case(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    assert output_path_problem(tmp_path / "new.json") is None
    assert "is a directory" in str(output_path_problem(tmp_path))
    assert "does not exist" in str(output_path_problem(tmp_path / "no" / "x.json"))
    assert output_path_problem(tmp_path / "no" / "x.png", create_parents=True) is None
    assert "is not a directory" in str(output_path_problem(tmp_path / "f" / "x.png", create_parents=True))
    assert "empty" in str(output_path_problem(""))
    with pytest.raises(ParameterError):
        with atomic_output(tmp_path):
            pass


@pytest.mark.parametrize("text, words", [
    ("a: &x {rod: 1}\nb: *x\n", "anchors"),
    ("3:\n  length: 0.1\n  length: 0.2\n", "duplicate key"),
    ("# nothing\n", "no parameters in it"),
])
def test_validation_fitted_file_goes_through_the_strict_reader(
    text: str, words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """``python -m hsa_elastica.validation.characterization --fitted FILE`` reads FILE like a
    parameter file (no aliases, no duplicate keys, not empty): exit 2 with one line before any
    work, instead of yaml.safe_load taking the last duplicate or expanding an alias."""
    from hsa_elastica.validation.characterization import main

    fitted = tmp_path / "fitted.yaml"
    fitted.write_text(text)
    code = main(["--fitted", str(fitted), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and "--fitted" in err and words in err, err
    assert not (tmp_path / "out").exists()
