"""The real robot's time series replayed on the implicit integrator
(``hsa_elastica.validation.real_robot_timeseries``): the replay is the model's quasi-static
answer where the robot holds still, it reads the shipped data in SI units, and bad input is
refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.params import ParameterError, RobotParams, resolve_params
from hsa_elastica.validation import real_robot_timeseries as ts


@pytest.fixture(scope="module")
def replay() -> tuple[ts.MeasuredSeries, ts.SimulatedSeries]:
    series = ts.measured_series("elongation", duration=12.0)
    return series, ts.simulate(resolve_params("fpu_robot_2022"), series)


def test_measured_series_in_si_units_from_the_first_row() -> None:
    s = ts.measured_series("twisting", duration=30.0)
    assert s.t[0] == 0.0 and 29.0 < s.t[-1] <= 30.0 and np.all(np.diff(s.t) > 0)
    # logged every ~0.11 s (data README); the marker hangs 120-150 mm below the base
    assert 0.09 < np.median(np.diff(s.t)) < 0.13
    assert np.all((s.position[:, 2] > 0.10) & (s.position[:, 2] < 0.16))
    assert np.allclose(np.linalg.norm(s.quaternion, axis=1), 1.0, atol=1e-6)
    assert np.all(np.abs(s.angles) <= np.pi)  # servo angles [rad], zeroed at the first reading


def test_held_samples_equal_the_static_solution(
    replay: tuple[ts.MeasuredSeries, ts.SimulatedSeries],
) -> None:
    """At the steady-state samples the servos have held their angle for ~2 s, longer than the
    preset's slowest mode needs to decay below 1e-3 of a 0.5 mm step (~1.5 s): the dynamic
    replay must sit on the static solver's pose for the same angles.  5 um leaves room for the
    implicit steps' Newton tolerance (1e-7 m per step); measured: 0.2 um."""
    from hsa_elastica.robots.statics_api import solve_static

    series, sim = replay
    params: RobotParams = resolve_params("fpu_robot_2022")
    held = np.nonzero(series.fitted)[0]
    assert len(held) == 4  # the first four samples of the run lie in its first 12 s
    for k in held:
        static = np.asarray(solve_static(params, series.angles[k]).platform_marker_position_m)
        assert np.abs(static - sim.position[k]).max() < 5e-6


def test_replay_follows_the_measured_run(
    replay: tuple[ts.MeasuredSeries, ts.SimulatedSeries],
) -> None:
    """The calibrated preset against the measurement, first 12 s of the elongation run:
    position RMS 0.54 mm, orientation 0.36 deg measured; the steady-state validation's
    targets (1.5 mm, 1.5 deg) bound them."""
    row = ts.summary_row(*replay)
    assert row["rows"] == len(replay[0].t) and row["pos_rms_mm"] < 1.5 and row["rot_rms_deg"] < 1.5
    dp, dr = ts.errors(*replay)
    assert dp.shape == dr.shape == replay[0].t.shape


@pytest.mark.parametrize("run, duration, field", [("walking", None, "run"), ("twisting", -1.0, "duration"),
                                                   ("twisting", float("nan"), "duration")])
def test_bad_input_is_named(run: str, duration: float | None, field: str) -> None:
    with pytest.raises(ParameterError, match=field):
        ts.measured_series(run, duration)


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--runs", "walking"], ["--duration", "0"], ["--dt", "inf"], ["--params", "nope"],
                 ["--creep", "1.5", "100"], ["--creep", "0.1", "0"], ["--creep", "-0.1", "100"]):
        with pytest.raises(SystemExit) as e:
            code = ts.main(argv)
            raise SystemExit(code)
        assert e.value.code == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert err and len(err[-1]) > 0


def test_creep_fit_refuses_bad_arguments_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """``real_robot_creep``: exit 2 and one line naming the option before any replay."""
    from hsa_elastica.validation import real_robot_creep as rc

    for argv, name in ((["--dt", "0.5"], "dt"), (["--params", "nope"], "nope")):
        assert rc.main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and name in err[0], err


def test_with_creep_validates_the_law() -> None:
    from hsa_elastica.validation.real_robot_creep import with_creep

    p = with_creep(resolve_params("fpu_robot_2022"), 0.2, 1000.0)
    assert (p.rod.creep_fraction, p.rod.creep_time) == (0.2, 1000.0)
    with pytest.raises(ParameterError, match="creep_time"):
        with_creep(p, 0.2, 0.0)
