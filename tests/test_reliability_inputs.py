"""Inputs that were misread, crashed or hung: parameter files, CSV inputs, the
command line's messages.  Each case is refused with one line naming the field, key, row or
column and the allowed range (exit 2 on the command line, ``ParameterError`` in Python),
before any simulation; a fuzz test (hypothesis) holds the parsers to that for any text.

Command-line cases run in-process (``main``) with the simulator and the fit replaced by
sentinels that fail the test if reached.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import numpy as np
import pytest

from hsa_elastica.cli import main
from hsa_elastica.experiments import calibration as calibration_module
from hsa_elastica.io.csv_input import read_csv_columns
from hsa_elastica.params import MAX_MOTOR_ANGLE, ParameterError, RobotParams, RodParams, load_params
from hsa_elastica.params.files import MAX_NESTING, MAX_PARAM_FILE_BYTES
from hsa_elastica.robots import statics_api
from hsa_elastica.robots import steady_state as steady_state_module


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any solve or fit fails the test: refusals must come before the work."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the solver was started")

    for module, name in ((steady_state_module, "solve_steady_state"), (statics_api, "solve_static"),
                         (statics_api, "solve_static_batch"), (calibration_module, "calibrate")):
        monkeypatch.setattr(module, name, refuse)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def _refused(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, err


# --------------------------------------------------------------------------------------------
# parameter files
# --------------------------------------------------------------------------------------------
BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
) + "\n"


def test_yaml_alias_bomb_refused_in_bounded_time(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    assert len(BILLION_LAUGHS) < 600  # 9^9 = 3.9e8 strings once expanded
    t0 = time.perf_counter()
    with pytest.raises(ParameterError, match="not allowed") as info:
        load_params(path)
    # on main the message builder repr()'d the expanded value: minutes and gigabytes
    assert time.perf_counter() - t0 < 2.0
    assert "\n" not in str(info.value) and len(str(info.value)) < 300


@pytest.mark.parametrize("suffix, text", [
    (".yaml", "rod: " + "[" * 5000 + "]" * 5000 + "\n"),
    (".yaml", "rod:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 500))),
    (".toml", "rod = " + "[" * 5000 + "]" * 5000 + "\n"),
])
def test_deeply_nested_file_refused_not_recursion_error(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"deep{suffix}"
    path.write_text(text)
    with pytest.raises(ParameterError, match="nested (more than|too deeply)") as info:
        load_params(path)
    assert str(MAX_NESTING) in str(info.value)


def test_duplicate_yaml_key_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("rod:\n  density: 1000.0\n  length: 0.1\n  density: 2000.0\n")
    with pytest.raises(ParameterError, match=r"line 4: duplicate key 'density'"):
        load_params(path)


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n\n", "{}\n", "---\n"])
def test_parameter_file_without_parameters_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(ParameterError, match="has no parameters in it"):
        load_params(path)


def test_truncated_dump_refused(tmp_path: Path) -> None:
    """A dump cut inside its header comment (a full disk, a killed copy) is not the defaults."""
    full = tmp_path / "full.yaml"
    assert main(["params", "--dump", str(full)]) == 0
    cut = tmp_path / "cut.yaml"
    cut.write_text(full.read_text()[:200])
    assert cut.read_text().lstrip().startswith("#")
    with pytest.raises(ParameterError, match="no parameters"):
        load_params(cut)


def test_oversized_parameter_file_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("rod:\n  length: 0.1\n" + "# padding\n" * (MAX_PARAM_FILE_BYTES // 10 + 1))
    with pytest.raises(ParameterError, match="larger than"):
        load_params(path)


@pytest.mark.parametrize("section, field, value, needle", [
    ("rod", "density", 1.0e-300, ">= 1 "),
    ("rod", "length", 1.0e-300, ">= 0.0001"),
    ("rod", "wall_thickness", 1.0e-300, ">= 0.0001"),
    ("rod", "youngs_modulus", 1.0e-300, ">= 1000"),
    ("rod", "shear_modulus", 1.0e-300, ">= 1000"),
    ("rod", "bend_rigidity", 1.0e-300, ">= 1e-09"),
    ("platform", "density", 1.0e-300, ">= 1 "),
    ("joint", "k_F", 1.0e-300, ">= 1 "),
])
def test_physical_lower_bounds_named(tmp_path: Path, section: str, field: str, value: float,
                                     needle: str) -> None:
    """On main these loaded and the solvers raised LinAlgError / AssertionError, or a robot
    with a detached platform was reported converged."""
    path = tmp_path / "p.yaml"
    path.write_text(f"{section}:\n  {field}: {value!r}\n")
    with pytest.raises(ParameterError) as info:
        load_params(path)
    message = str(info.value)
    assert f".{field} = " in message and needle in message, message


def test_tiny_c_eps_is_checked_without_overflow() -> None:
    """``C_eps = 1e-300`` made the stiffness check square a 5e299 twist (OverflowError)."""
    assert RodParams(C_eps=1e-300).C_eps == 1e-300  # the linear law: a valid, tiny coupling
    with pytest.raises(ParameterError, match="C_eps"):
        RodParams(C_eps=1e-300, E_quad=-1.0)


def test_params_file_part_of_key_empty(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(["steady-state", "--angles", "0", "0", "0", "0", "--params", "#0"], capsys)
    _refused(code, err, "'#0'", "the file part before '#' is empty")
    assert "'.'" not in err


# --------------------------------------------------------------------------------------------
# CSV inputs
# --------------------------------------------------------------------------------------------
HEADER = "angle_0,angle_1,angle_2,angle_3\n"
LIMIT = f"+-{MAX_MOTOR_ANGLE:.6g} rad"  # the allowed range, as check_motor_angles names it
CAL_HEADER = ("motor_angle_rad_0,motor_angle_rad_1,motor_angle_rad_2,motor_angle_rad_3,"
              "platform_x_m,platform_y_m,platform_z_m,platform_qx,platform_qy,platform_qz,platform_qw\n")
GOOD_ROW = "0,0,0,0,0,0,0.12,0,0,0,1\n"
#: (command, file content, texts the one-line message must contain)
BAD_CSV = [
    ("angles", HEADER + "0,0,0,0\n0.1,0.2,0.3,0.4,0.5\n", ["line 3 has 5 fields, the header has 4"]),
    ("angles", "angle_0,angle_1,angle_2,angle_3,angle_1\n0,0,0,0,1\n", ["column 'angle_1' appears twice"]),
    ("angles", HEADER, ["no rows"]),
    ("angles", "", ["is empty"]),
    ("angles", HEADER + "0,0,0,0\n0,1e308,0,0\n", ["line 3", "1e+308", LIMIT]),
    ("angles", HEADER + "0,0,0,0\n0,0,-50,0\n", ["line 3", "-50.0", LIMIT]),
    ("angles", HEADER + "0,x,0,0\n", ["line 2, column angle_1", "not a number"]),
    ("angles", HEADER + "0,nan,0,0\n", ["line 2, column angle_1", "non-finite"]),
    ("calibrate", CAL_HEADER + GOOD_ROW + "1e308,0,0,0,0,0,0.12,0,0,0,1\n", ["line 3", "1e+308", LIMIT]),
    ("calibrate", CAL_HEADER + GOOD_ROW + "0,0,0,0,0,0,0.12,0,0,0,0\n",
     ["line 3", "platform_qx, platform_qy, platform_qz, platform_qw", "norm 0", "[0.5, 2]"]),
    ("calibrate", CAL_HEADER + GOOD_ROW + "0,0,0,0,0,0,0.12,0,0,inf,1\n",
     ["line 3, column platform_qz", "non-finite"]),
    ("calibrate", CAL_HEADER + GOOD_ROW + "0,0,0,0,0,0,0.12,0,0,0,1,7\n", ["line 3 has 12 fields"]),
    ("calibrate", CAL_HEADER.replace("platform_qw", "platform_qx") + GOOD_ROW,
     ["'platform_qx' appears twice"]),
]


@pytest.mark.parametrize("command, body, needles", BAD_CSV)
def test_csv_input_refused_naming_the_row_or_column(
    tmp_path: Path, command: str, body: str, needles: list[str], no_solve: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``steady-state --angles-csv`` and ``calibrate --data`` (one reader, one angle check)."""
    csv = tmp_path / "input.csv"
    csv.write_text(body)
    out = tmp_path / ("out.csv" if command == "angles" else "fit.yaml")
    args = (["steady-state", "--angles-csv", str(csv), "--out", str(out)] if command == "angles"
            else ["calibrate", "--data", str(csv), "--params", "paper_robot", "--free", "rod.C_eps",
                  "--out", str(out)])
    code, _, err = _cli(args, capsys)
    _refused(code, err, "--angles-csv" if command == "angles" else "data file", *needles)
    assert not out.exists()  # on main a header-only --angles-csv gave a 1-byte table and exit 0


def test_angles_csv_reads_the_angles_in_header_order(tmp_path: Path) -> None:
    """Columns in any order, extra columns ignored, blank lines skipped, lines counted."""
    csv = tmp_path / "a.csv"
    csv.write_text("note,angle_1,angle_0\nx,0.25,-0.5\n\ny,1.5,2\n")
    table = read_csv_columns(csv, ["angle_0", "angle_1"])
    np.testing.assert_array_equal(table.values, [[-0.5, 0.25], [2.0, 1.5]])
    np.testing.assert_array_equal(table.lines, [2, 4])


def test_calibration_data_quaternions_normalised() -> None:
    """A unit quaternion written with a scale in the accepted range is read as that rotation."""
    from hsa_elastica import data

    run = calibration_module.load_run(data.path("elongation"))
    np.testing.assert_allclose(np.linalg.norm(run.quaternion, axis=1), 1.0, atol=1e-12)
    assert np.all(np.abs(run.motor_angles) <= MAX_MOTOR_ANGLE)


# --------------------------------------------------------------------------------------------
# command-line messages and checks before the work
# --------------------------------------------------------------------------------------------
def test_negative_infinity_angle_named_as_not_finite(capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("-inf", "-Infinity", "-nan"):
        code, _, err = _cli(["steady-state", "--angles", "0", text, "0", "0"], capsys)
        _refused(code, err, "--angles", f"'{text}' is not a finite number")
        assert "unrecognized" not in err


def test_render_of_a_plain_file_says_not_a_run_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("x")
    code, _, err = _cli(["render", str(plain), "--still", str(tmp_path / "s.png")], capsys)
    _refused(code, err, "is not a run directory")
    assert "does not exist" not in err
    # the same with no output flag (outputs default to RUN_DIR/render.*), and for view and
    # plot, whose outputs default to RUN_DIR too
    for command in ("render", "view", "plot"):
        code, _, err = _cli([command, str(plain)], capsys)
        _refused(code, err, "is not a run directory")
        assert "does not exist" not in err and command in err
    code, _, err = _cli(["view", str(tmp_path / "nothing")], capsys)
    _refused(code, err, "does not exist")


@pytest.mark.parametrize("name", ["rod.n_elements", "n_rods", "rod.handedness", "simulation.dt"])
def test_calibrate_refuses_non_fittable_fields(
    name: str, tmp_path: Path, no_solve: None, capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _cli(["calibrate", "--data", "elongation", "--params", "paper_robot", "--free",
                         name, "--out", str(tmp_path / "fit.yaml")], capsys)
    _refused(code, err, f"'{name}'", "cannot be fitted", "fittable: rod.length", "rod.C_eps", "mocap.yaw")


@pytest.mark.parametrize("flag, value", [("--json", "{tmp}/missing/report.json"),
                                         ("--out", "{tmp}/missing/fit.yaml")])
def test_calibrate_checks_its_outputs_before_the_fit(
    flag: str, value: str, tmp_path: Path, no_solve: None, capsys: pytest.CaptureFixture[str],
) -> None:
    args = {"--out": str(tmp_path / "fit.yaml"), flag: value.replace("{tmp}", str(tmp_path))}
    code, _, err = _cli(["calibrate", "--data", "elongation", "--params", "paper_robot", "--free",
                         "rod.C_eps", *[x for kv in args.items() for x in kv]], capsys)
    _refused(code, err, flag, "does not exist")


@pytest.mark.parametrize("args", [
    ["primitive", "elongation", "--duration", "1e9"],
    ["primitive", "elongation", "--params", "paper_robot,paper_robot", "--duration", "1e9"],
    ["steady-state", "--angles", "0", "0", "0", "0", "--dynamic", "--max-time", "1e9"],
])
def test_run_length_bounded_without_outputs(
    args: list[str], no_solve: None, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from hsa_elastica.robots import stack_steady_state

    monkeypatch.setattr(stack_steady_state, "solve_stack_steady_state", statics_api.solve_static)
    code, _, err = _cli(args, capsys)
    _refused(code, err, "1e+09 is invalid", "<= 600 s", "simulation.dt = 3e-05")


# --------------------------------------------------------------------------------------------
# fuzz: any text either loads or is refused with one line, quickly
# --------------------------------------------------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FIELDS = ["rod", "density", "length", "n_elements", "dt", "simulation", "platform", "&a", "*a",
          "<<", "0", "1", "-", ":", "{", "}", "[", "]", ",", "'", '"', "#", "\n", "  ", "!!python/object",
          "1.0e+300", "1e400", "nan", ".inf", "null", "none", "~", "9" * 5000, "=", "[rod]", "\t"]
TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(FIELDS), max_size=60).map(" ".join),
    st.lists(st.sampled_from(FIELDS), max_size=60).map("".join),
)
#: HSA_FUZZ_EXAMPLES=5000 for a longer search (the default keeps the module under a minute)
FUZZ = settings(max_examples=int(os.environ.get("HSA_FUZZ_EXAMPLES", "150")), deadline=10_000, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


class _MemoryGrowth:
    """Peak memory of this process during one fuzz example, above its memory before it.

    Linux resets the peak (VmHWM) when "5" is written to /proc/self/clear_refs; where that is
    not allowed the process's high-water mark (ru_maxrss) is compared before and after the
    example instead (never a false alarm, but blind below the peak of earlier tests).  The
    peak since the process started is not usable: earlier tests of the same pytest process
    may have used more than 1 GiB."""

    def __enter__(self) -> "_MemoryGrowth":
        self.before = self._status("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.key = "VmHWM"
        except OSError:
            self.key, self.before = "maxrss", self._maxrss()
        return self

    def __exit__(self, *exc: object) -> None:
        peak = self._status("VmHWM") if self.key == "VmHWM" else self._maxrss()
        assert peak - self.before < 1024**3, f"a fuzz example grew memory by {peak - self.before} bytes"

    @staticmethod
    def _status(field: str) -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
        return 0

    @staticmethod
    def _maxrss() -> int:
        import resource

        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024  # KiB on Linux


def _loads_or_refuses(path: Path, cls: type = RobotParams) -> None:
    t0 = time.perf_counter()
    with _MemoryGrowth():
        try:
            load_params(path, cls)
        except ParameterError as exc:
            assert "\n" not in str(exc) and len(str(exc)) < 2000
    assert time.perf_counter() - t0 < 10.0


@FUZZ
@given(text=TEXT, suffix=st.sampled_from([".yaml", ".toml"]))
def test_fuzz_parameter_loader(tmp_path_factory: pytest.TempPathFactory, text: str, suffix: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / f"p{suffix}"
    path.write_text(text, encoding="utf-8")
    _loads_or_refuses(path)


VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.sampled_from(["", "x", '"1"', "1e308", "-50", " 3 ", "0x1", "1_0", "\x00"]))


@FUZZ
@given(header=st.lists(st.sampled_from(["angle_0", "angle_1", "angle_2", "angle_3", "x", ""]),
                       min_size=0, max_size=6),
       rows=st.lists(st.lists(VALUES, max_size=6), max_size=5),
       tail=st.text(max_size=20))
def test_fuzz_csv_reader(tmp_path_factory: pytest.TempPathFactory, header: list[str],
                         rows: list[list[str]], tail: str) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "a.csv"
    path.write_text("\n".join([",".join(header)] + [",".join(r) for r in rows]) + tail,
                    encoding="utf-8")
    names = [f"angle_{i}" for i in range(4)]
    from hsa_elastica.io.csv_input import check_angle_rows

    try:
        with _MemoryGrowth():
            table = read_csv_columns(path, names, what="--angles-csv")
            angles = check_angle_rows(table, names, what="--angles-csv")
    except ParameterError as exc:
        assert "\n" not in str(exc)
        return
    assert angles.shape == (len(table.lines), 4)
    assert np.all(np.isfinite(angles)) and np.all(np.abs(angles) <= MAX_MOTOR_ANGLE)
    assert not math.isnan(float(angles.sum()))
