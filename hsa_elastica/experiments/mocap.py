"""Measured steady states of the real robot for calibration (motion capture runs): the data
file layout, the reader with its one-line errors, and :class:`MocapRun` (SI, robot base
frame).  :mod:`hsa_elastica.experiments.calibration` fits parameters to them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError

__all__ = ["CalibrationError", "MocapRun", "MEASURED_COLUMNS", "SCHEMA_MEASURED_COLUMNS",
           "QUATERNION_NORM_RANGE", "load_run", "load_mocap_run", "load_runs"]

#: columns a run CSV must have (``j`` = rod index 0 .. n_rods-1 for the angles)
MEASURED_COLUMNS = (
    "platform_x_m", "platform_y_m", "platform_z_m",
    "platform_qx", "platform_qy", "platform_qz", "platform_qw",
)
#: the same quantities under the output schema's names (:mod:`hsa_elastica.io.columns`): a
#: ``steady-state --angles-csv`` batch CSV is a valid data file (synthetic measurements)
SCHEMA_MEASURED_COLUMNS = (
    "platform_marker_position_m_x", "platform_marker_position_m_y", "platform_marker_position_m_z",
    "platform_quaternion_xyzw_x", "platform_quaternion_xyzw_y", "platform_quaternion_xyzw_z",
    "platform_quaternion_xyzw_w",
)
class CalibrationError(ParameterError):
    """Bad calibration input: unreadable data, missing columns, NaNs, unknown parameter names
    or bounds that make the robot invalid (one-line message)."""


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MocapRun:
    """Measured steady states of one run (SI, robot base frame)."""

    name: str
    motor_angles: NDArray[np.float64]  # (N, n_rods) [rad]
    position: NDArray[np.float64]  # (N, 3) marker position [m]
    quaternion: NDArray[np.float64]  # (N, 4) marker body orientation, x y z w

    def __len__(self) -> int:
        return int(self.motor_angles.shape[0])

    def subset(self, index: Sequence[int] | NDArray[np.int64]) -> "MocapRun":
        """The poses ``index`` of this run."""
        idx = np.asarray(index, dtype=np.int64)
        return MocapRun(self.name, self.motor_angles[idx], self.position[idx], self.quaternion[idx])

    def every(self, max_poses: int | None) -> "MocapRun":
        """At most ``max_poses`` poses, evenly spread over the run (all for None)."""
        if max_poses is None or max_poses >= len(self):
            return self
        return self.subset(np.unique(np.linspace(0, len(self) - 1, max_poses).round().astype(int)))


#: accepted norm of a measured quaternion (normalised on reading): motion capture exports unit
#: quaternions; a norm far from 1 (or 0) is a corrupt row, not a rotation
QUATERNION_NORM_RANGE = (0.5, 2.0)


def load_run(path: str | Path, n_rods: int = 4, *, name: str | None = None,
             measured: Sequence[str] = MEASURED_COLUMNS) -> MocapRun:
    """Read one run CSV (:func:`hsa_elastica.io.csv_input.read_csv_columns`: one line naming
    the file, line and column for a missing or repeated column, a row with extra or missing
    fields, no rows, a value that is not a finite number); the motor angles are checked by
    :func:`hsa_elastica.params.check_motor_angles` and each quaternion's norm must lie in
    :data:`QUATERNION_NORM_RANGE` (it is normalised).  Raises :class:`CalibrationError`.

    ``measured``: the seven columns of the tracked body, position x y z [m] then quaternion
    x y z w (default: the platform marker; e.g. the ``ring_*`` columns for the ring on rod 2).
    A file whose header has the output schema's names (``motor_angles_rad_j``,
    :data:`SCHEMA_MEASURED_COLUMNS`: a ``steady-state`` batch CSV) is read by those for the
    default ``measured``.
    """
    from hsa_elastica.io.csv_input import check_angle_rows, csv_header, read_csv_columns

    p = Path(path)
    angle_cols = [f"motor_angle_rad_{j}" for j in range(n_rods)]
    schema_cols = [f"motor_angles_rad_{j}" for j in range(n_rods)] + list(SCHEMA_MEASURED_COLUMNS)
    if tuple(measured) == MEASURED_COLUMNS and set(schema_cols) <= csv_header(p):
        angle_cols, measured = schema_cols[:n_rods], SCHEMA_MEASURED_COLUMNS
    needed = angle_cols + list(measured)
    try:
        table = read_csv_columns(p, needed, what="data file")
        angles = check_angle_rows(table, angle_cols, what=f"data file {str(p)!r}")
    except ParameterError as exc:
        raise CalibrationError(str(exc)) from None
    values = table.values
    q = values[:, n_rods + 3:]
    norm = np.linalg.norm(q, axis=1)
    lo, hi = QUATERNION_NORM_RANGE
    bad = np.nonzero(~((norm >= lo) & (norm <= hi)))[0]
    if bad.size:
        i = int(bad[0])
        raise CalibrationError(
            f"data file {str(p)!r}: line {int(table.lines[i])}, columns {', '.join(measured[3:])}: "
            f"quaternion norm {norm[i]:.3g} is invalid: must be in [{lo:g}, {hi:g}] "
            "(a unit quaternion x y z w)"
        )
    return MocapRun(
        name=name or p.stem,
        motor_angles=angles.copy(),
        position=values[:, n_rods:n_rods + 3].copy(),
        quaternion=q / norm[:, None],
    )


load_mocap_run = load_run
"""Alias of :func:`load_run` (public name in ``hsa_elastica``; ``load_run`` there is the
run-directory reader)."""


def load_runs(paths: Sequence[str | Path], n_rods: int = 4) -> list[MocapRun]:
    """:func:`load_run` of each path (a shipped run may be named: ``"elongation"``)."""
    from hsa_elastica import data

    out = []
    for p in paths:
        path = data.path(str(p)) if str(p) in data.MOCAP_RUNS else Path(p)
        out.append(load_run(path, n_rods))
    return out
