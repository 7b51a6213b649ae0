"""The shipped motion-capture time series of the real robot load with their documented rows,
columns and units (``hsa_elastica.data.load_timeseries``, ``hsa_elastica/data/README.md``).

The expected numbers are the data's own, independent of the loader: the row counts and
durations of the recording (data README), the servo's tick resolution (4096 per revolution)
against the angle columns, the steady-state files shipped next to them, and the rest height of
the marker the README states (119.6 mm).
"""

from __future__ import annotations

import configparser
import fnmatch
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hsa_elastica import data
from hsa_elastica.params import ParameterError

ROOT = Path(__file__).resolve().parents[1]
ROWS = {"elongation": (2371, 272.0), "twisting": (4732, 541.0)}  # rows, duration [s]
STEADY_ROWS = {"elongation": 100, "twisting": 200}
COLUMNS = (
    ["row", "t_unix_s", "t_experiment_s", "t_since_setpoint_s"]
    + [f"{q}_{j}" for q in ("goal_ticks", "present_ticks", "goal_angle_rad", "motor_angle_rad",
                            "velocity_raw", "load_raw") for j in range(4)]
    + [f"{b}_{c}" for b in ("platform", "ring") for c in ("x_m", "y_m", "z_m", "qx", "qy", "qz", "qw")]
    + ["steady_state_sample"]
)


@pytest.mark.parametrize("run", sorted(ROWS))
def test_timeseries_rows_columns_and_units(run: str) -> None:
    df = data.load_timeseries(run)
    rows, duration = ROWS[run]
    assert list(df.columns) == COLUMNS
    assert len(df) == rows
    # the run's length in time: the data README's 271 s / 541 s, to the second
    assert abs(float(df["t_experiment_s"].iloc[-1]) - duration) < 1.0
    assert df["t_experiment_s"].is_monotonic_increasing
    units = df.attrs["units"]
    assert units["t_experiment_s"] == "s" and units["motor_angle_rad_2"] == "rad"
    assert units["platform_z_m"] == "m" and units["ring_qw"].startswith("1")
    # angles in rad: the servo's raw ticks (4096 per revolution) from the first reading.
    # Tolerance 1e-9 rad: the CSV stores 13 significant digits (observed 5e-13).
    readings = df.dropna()
    assert len(readings) == rows - 1  # the first row has no servo reading yet
    for j in range(4):
        ticks = readings[f"present_ticks_{j}"] - df[f"present_ticks_{j}"].iloc[1]
        np.testing.assert_allclose(readings[f"motor_angle_rad_{j}"], ticks * 2 * math.pi / 4096, atol=1e-9)
    # positions in m: at rest the marker hangs 119.6 mm from the base (data README), +-2 mm
    assert abs(float(df["platform_z_m"].iloc[0]) - 0.1196) < 2e-3
    quats = df[["platform_qx", "platform_qy", "platform_qz", "platform_qw"]].to_numpy()
    np.testing.assert_allclose(np.linalg.norm(quats, axis=1), 1.0, atol=1e-6)  # unit quaternions


@pytest.mark.parametrize("run", sorted(ROWS))
def test_flagged_rows_are_the_steady_state_file(run: str) -> None:
    df = data.load_timeseries(run)
    steady = pd.read_csv(data.path(run))
    flagged = df[df["steady_state_sample"] == 1]
    assert len(flagged) == len(steady) == STEADY_ROWS[run]
    cols = [f"motor_angle_rad_{j}" for j in range(4)] + ["platform_x_m", "platform_y_m", "platform_z_m"]
    np.testing.assert_array_equal(flagged[cols].to_numpy(), steady[cols].to_numpy())


def test_unknown_run_is_refused_with_the_choices() -> None:
    with pytest.raises(ParameterError, match=r"run = 'bending' is invalid: must be one of 'elongation', 'twisting'"):
        data.load_timeseries("bending")
    with pytest.raises(KeyError):
        data.timeseries_unit("not_a_column")


def test_every_shipped_data_file_is_package_data() -> None:
    """setup.cfg's package_data patterns cover every file in hsa_elastica/data (an installed
    package would miss one that no pattern matches)."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    patterns = [p.strip() for p in cfg["options.package_data"]["hsa_elastica.data"].split(",")]
    shipped = [p.name for p in (ROOT / "hsa_elastica" / "data").iterdir()
               if p.is_file() and p.suffix != ".py"]
    assert set(data.MOCAP_TIMESERIES.values()) <= set(shipped)
    missing = [n for n in shipped if not any(fnmatch.fnmatch(n, pat) for pat in patterns)]
    assert not missing, missing
