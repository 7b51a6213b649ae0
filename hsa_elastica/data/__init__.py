"""Measured data shipped with hsa-elastica (sources and licences: ``README.md`` next to this file).

* ``good2022_closed_fpu50.csv`` -- mechanical characterization of closed FPU 50 HSAs (Good et
  al., ICRA 2022, Fig. 4), used by :mod:`hsa_elastica.experiments.characterization`.
* ``elongation_20221011_174514_steady_state.csv``, ``twisting_20221012_103309_steady_state.csv``
  -- motion-capture steady states of the four-rod robot of the RoboSoft 2023 paper, used by
  :mod:`hsa_elastica.experiments.calibration` and the ``fpu_robot_2022`` preset.
* ``elongation_20221011_174514_timeseries.csv.gz``, ``twisting_20221012_103309_timeseries.csv.gz``
  -- the same two runs, every logged control step (gzip-compressed CSV), read by
  :func:`load_timeseries`.

:func:`path` returns the installed file's path (works outside a source checkout).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["path", "names", "MOCAP_RUNS", "MOCAP_TIMESERIES", "load_timeseries", "timeseries_unit"]

_HERE = Path(__file__).resolve().parent

#: the two motion-capture runs of the real robot (steady states), by short name
MOCAP_RUNS: dict[str, str] = {
    "elongation": "elongation_20221011_174514_steady_state.csv",
    "twisting": "twisting_20221012_103309_steady_state.csv",
}
#: the same two runs, every row the robot's control loop logged, by short name
MOCAP_TIMESERIES: dict[str, str] = {
    "elongation": "elongation_20221011_174514_timeseries.csv.gz",
    "twisting": "twisting_20221012_103309_timeseries.csv.gz",
}


def names() -> list[str]:
    """File names of the shipped data sets."""
    return sorted(p.name for p in [*_HERE.glob("*.csv"), *_HERE.glob("*.csv.gz")])


def path(name: str) -> Path:
    """Path of the shipped data file ``name`` (a file name from :func:`names`, or a short
    mocap run name from :data:`MOCAP_RUNS`); ``FileNotFoundError`` naming the choices."""
    name = MOCAP_RUNS.get(name, name)
    p = _HERE / name
    if p.parent != _HERE or not p.is_file():
        raise FileNotFoundError(
            f"no shipped data file {name!r}; available: {', '.join(names())} "
            f"(or a run name: {', '.join(MOCAP_RUNS)})"
        )
    return p


#: unit of a time-series column by its name (first match; ``j`` = rod index, README.md here)
_TIMESERIES_UNITS = (
    (r"row", "1 (index)"),
    (r"t_\w+_s", "s"),
    (r"(goal|present)_ticks_\d", "servo tick (4096 per revolution)"),
    (r"(goal|motor)_angle_rad_\d", "rad"),
    (r"(velocity|load)_raw_\d", "raw servo reading (uncalibrated)"),
    (r"(platform|ring)_[xyz]_m", "m"),
    (r"(platform|ring)_q[xyzw]", "1 (unit quaternion, x y z w)"),
    (r"steady_state_sample", "1 (flag: row of the steady-state file)"),
)


def timeseries_unit(column: str) -> str:
    """Unit of a column of :func:`load_timeseries` (``"s"``, ``"rad"``, ``"m"``, ...);
    ``KeyError`` for a name that is not one of its columns."""
    for pattern, unit in _TIMESERIES_UNITS:
        if re.fullmatch(pattern, column):
            return unit
    raise KeyError(column)


def load_timeseries(run: str) -> "pd.DataFrame":
    """Every logged control step of a motion-capture run of the real robot, as a DataFrame.

    ``run``: ``"elongation"`` (2371 rows, 272 s) or ``"twisting"`` (4732 rows, 541 s), the
    keys of :data:`MOCAP_TIMESERIES`; anything else raises
    :class:`~hsa_elastica.params.ParameterError` naming the choices.  Columns and units:
    ``README.md`` next to this file; ``df.attrs["units"]`` maps each column to its unit
    (:func:`timeseries_unit`).  Rows with ``steady_state_sample == 1`` are the rows of the
    steady-state file of the same run (:data:`MOCAP_RUNS`).  The first row has no servo reading
    yet: its ``motor_angle_rad_j`` are NaN.
    """
    import pandas as pd

    from hsa_elastica.params import ParameterError

    if run not in MOCAP_TIMESERIES:
        raise ParameterError(f"run = {run!r} is invalid: must be one of {', '.join(map(repr, MOCAP_TIMESERIES))}")
    df = pd.read_csv(_HERE / MOCAP_TIMESERIES[run])
    df.attrs["units"] = {c: timeseries_unit(c) for c in df.columns}
    return df
