"""Motion-capture time series of the real robot and their replay on the implicit integrator.

A time series is the motor angles as the servos reported them, logged in time, and the pose of
the platform's marker body at the same rows (:class:`MeasuredSeries`, SI units, robot base
frame).  Two runs ship with the package (:func:`measured_series`: ``elongation``, 271 s, and
``twisting``, 541 s, a row every ~0.11 s); other runs are read from a CSV file by
:func:`read_series` (the layout of the shipped files: ``t_experiment_s`` [s],
``motor_angle_rad_j`` [rad], ``platform_{x,y,z}_m`` [m], ``platform_q{x,y,z,w}``), which refuses a
bad file in one line (:class:`~hsa_elastica.experiments.mocap.CalibrationError`).

:func:`simulate` replays a series on a robot: the robot starts at rest at the first row's
angles (``settle`` seconds of it, under gravity if the parameters have it), then each logged
interval turns every motor linearly from its reported angle to the next one
(``set_motor_angles`` + ``step(t[k+1] - t[k])`` of the implicit integrator), and the marker's
pose is read at the logged times.  :func:`errors` compares it with the measurement.  Used by
the time-series calibration (:mod:`hsa_elastica.experiments.calibration_timeseries`) and the
validations ``real_robot_timeseries`` and ``real_robot_creep``.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.experiments.mocap import MEASURED_COLUMNS, QUATERNION_NORM_RANGE, CalibrationError
from hsa_elastica.params import ParameterError, RobotParams

__all__ = ["MeasuredSeries", "SimulatedSeries", "RUNS", "TIME_COLUMN", "MAX_POSITION_M",
           "MAX_DURATION_S", "DEFAULT_DT", "DEFAULT_SETTLE_S", "measured_series", "read_series", "load_series",
           "check_replay_step", "simulate", "errors"]

#: the shipped runs, by short name (``hsa_elastica.data.load_timeseries``)
RUNS = ("elongation", "twisting")
#: the time column of a time-series file [s]
TIME_COLUMN = "t_experiment_s"
#: largest accepted marker coordinate [m]: the robot is ~0.15 m tall, so a coordinate beyond
#: this is a position in mm (or another unit), not metres
MAX_POSITION_M = 2.0
#: longest accepted run [s] (27 hours): a 10-minute run logged in ms would read as 6e5 s
MAX_DURATION_S = 1e5
#: internal step of the implicit integrator [s] (the envs' step: the seven primitives within
#: 0.001 mm of the explicit stepper at this step, docs/model.md)
DEFAULT_DT = 2.0e-3
#: seconds at the first row's command before the run starts (the robot sags under gravity and
#: settles; the slowest mode of the preset decays within ~1.5 s)
DEFAULT_SETTLE_S = 2.0


@dataclass(frozen=True)
class MeasuredSeries:
    """One run's time series in SI units, robot base frame: times ``t`` (N,) [s] since the
    first row, the servos' reported angles ``angles`` (N, n_rods) [rad], the marker's
    ``position`` (N, 3) [m] and orientation ``quaternion`` (N, 4) (x y z w, unit), and
    ``fitted`` (N,) bool: the row is a steady-state sample of the static calibration."""

    name: str
    t: NDArray[np.float64]
    angles: NDArray[np.float64]
    position: NDArray[np.float64]
    quaternion: NDArray[np.float64]
    fitted: NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.t.shape[0])


@dataclass(frozen=True)
class SimulatedSeries:
    """The simulated marker ``position`` (N, 3) [m] and platform ``rotation`` (N, 3, 3) at the
    measured times, and the wall time of the simulation [s]."""

    position: NDArray[np.float64]
    rotation: NDArray[np.float64]
    wall_time_s: float


def _check_duration(duration: float | None) -> None:
    if duration is not None and not (math.isfinite(duration) and duration > 0):
        raise ParameterError(f"duration = {duration!r} is invalid: must be a finite number of seconds > 0")


def measured_series(run: str, duration: float | None = None) -> MeasuredSeries:
    """The rows of the shipped run ``run`` (``"elongation"`` or ``"twisting"``) up to
    ``duration`` [s] after the first one (None: all).  The first row, logged before any servo
    reading, gets the angles 0 (the servos are zeroed at the first reading); rows without a
    motion-capture pose are dropped."""
    if run not in RUNS:
        raise ParameterError(f"run = {run!r} is not a shipped time series; allowed: {', '.join(RUNS)}")
    _check_duration(duration)
    from hsa_elastica.data import load_timeseries

    df = load_timeseries(run)
    t = df[TIME_COLUMN].to_numpy(dtype=np.float64)
    t = t - t[0]
    angles = df[[f"motor_angle_rad_{j}" for j in range(4)]].to_numpy(dtype=np.float64)
    angles[0] = np.where(np.isnan(angles[0]), 0.0, angles[0])  # no reading yet: zeroed there
    pos = df[list(MEASURED_COLUMNS[:3])].to_numpy(dtype=np.float64)
    quat = df[list(MEASURED_COLUMNS[3:])].to_numpy(dtype=np.float64)
    keep = np.isfinite(pos).all(axis=1) & np.isfinite(quat).all(axis=1) & np.isfinite(angles).all(axis=1)
    if duration is not None:
        keep &= t <= duration
    fitted = df["steady_state_sample"].to_numpy() == 1
    quat = quat[keep] / np.linalg.norm(quat[keep], axis=1)[:, None]
    return MeasuredSeries(run, t[keep], angles[keep], pos[keep], quat, fitted[keep])


def read_series(path: str | Path, n_rods: int = 4, *, duration: float | None = None,
                name: str | None = None) -> MeasuredSeries:
    """Read a time-series CSV file (columns :data:`TIME_COLUMN` [s], ``motor_angle_rad_j``
    [rad], ``platform_{x,y,z}_m`` [m], ``platform_q{x,y,z,w}``; other columns ignored; an
    optional ``steady_state_sample`` flag is not read).  Raises
    :class:`~hsa_elastica.experiments.mocap.CalibrationError` in one line naming the file, the
    line and the column for: a missing column, a value that is not a finite number (a NaN, an
    empty field), times that do not increase strictly or span more than
    :data:`MAX_DURATION_S` (ms instead of s), a motor angle beyond the motor range
    (degrees instead of radians), a marker coordinate beyond :data:`MAX_POSITION_M` (mm instead
    of m), a quaternion whose norm is not in ``[0.5, 2]``.  Times are shifted to start at 0."""
    from hsa_elastica.io.csv_input import check_angle_rows, read_csv_columns

    _check_duration(duration)
    p = Path(path)
    label = f"time-series file {str(p)!r}"
    angle_cols = [f"motor_angle_rad_{j}" for j in range(n_rods)]
    try:
        table = read_csv_columns(p, [TIME_COLUMN, *angle_cols, *MEASURED_COLUMNS], what="time-series file")
        angles = check_angle_rows(table, angle_cols, what=label)
    except ParameterError as exc:
        raise CalibrationError(str(exc)) from None
    values, lines = table.values, table.lines
    t = values[:, 0]
    bad = np.flatnonzero(np.diff(t) <= 0.0)
    if bad.size:
        i = int(bad[0]) + 1
        raise CalibrationError(
            f"{label}: line {int(lines[i])}, column {TIME_COLUMN}: time {t[i]:g} s does not "
            f"follow {t[i - 1]:g} s on line {int(lines[i - 1])}: times must increase strictly"
        )
    if t[-1] - t[0] > MAX_DURATION_S:
        raise CalibrationError(
            f"{label}: line {int(lines[-1])}, column {TIME_COLUMN}: the run lasts "
            f"{t[-1] - t[0]:g} s, more than {MAX_DURATION_S:g} s (times in ms?)"
        )
    pos = values[:, 1 + n_rods:4 + n_rods]
    far = np.flatnonzero(np.abs(pos).max(axis=1) > MAX_POSITION_M)
    if far.size:
        i = int(far[0])
        raise CalibrationError(
            f"{label}: line {int(lines[i])}, columns {', '.join(MEASURED_COLUMNS[:3])}: "
            f"{np.abs(pos[i]).max():g} is invalid: must be in [-{MAX_POSITION_M:g}, "
            f"{MAX_POSITION_M:g}] m (a position in mm?)"
        )
    q = values[:, 4 + n_rods:]
    norm = np.linalg.norm(q, axis=1)
    lo, hi = QUATERNION_NORM_RANGE
    odd = np.flatnonzero(~((norm >= lo) & (norm <= hi)))
    if odd.size:
        i = int(odd[0])
        raise CalibrationError(
            f"{label}: line {int(lines[i])}, columns {', '.join(MEASURED_COLUMNS[3:])}: "
            f"quaternion norm {norm[i]:.3g} is invalid: must be in [{lo:g}, {hi:g}] "
            "(a unit quaternion x y z w)"
        )
    t = t - t[0]
    keep = np.ones(len(t), dtype=bool) if duration is None else t <= duration
    return MeasuredSeries(name or p.name.split(".")[0], t[keep], angles[keep].copy(), pos[keep].copy(),
                          (q / norm[:, None])[keep], np.zeros(int(keep.sum()), dtype=bool))


def load_series(sources: Sequence[str | Path], n_rods: int = 4, *,
                duration: float | None = None) -> list[MeasuredSeries]:
    """:func:`measured_series` of a shipped run's name, :func:`read_series` of a path."""
    return [measured_series(str(s), duration) if str(s) in RUNS
            else read_series(s, n_rods, duration=duration) for s in sources]


def check_replay_step(series: MeasuredSeries, dt: float) -> None:
    """Refuse (:class:`CalibrationError`, one line) a series with fewer than two rows or a
    logged interval shorter than the integrator's step ``dt`` [s] (the step API advances in
    whole steps, at least one per interval)."""
    if len(series) < 2:
        raise CalibrationError(f"time series {series.name!r} has {len(series)} row(s): needs at least 2")
    gaps = np.diff(series.t)
    k = int(np.argmin(gaps))
    if gaps[k] < dt * (1.0 - 1e-9):
        raise CalibrationError(
            f"time series {series.name!r}: rows {k} and {k + 1} are {gaps[k]:.4g} s apart, less than "
            f"the integrator step dt = {dt:g} s: use a smaller dt or drop rows"
        )


def simulate(params: RobotParams, series: MeasuredSeries, *, dt: float = DEFAULT_DT,
             settle: float = DEFAULT_SETTLE_S, progress: bool = False) -> SimulatedSeries:
    """Replay ``series`` on ``params`` with the implicit integrator at step ``dt`` [s] (see the
    module docstring); the marker is ``params.platform.marker_offset`` in the platform frame."""
    from hsa_elastica.io.render import quaternion_to_matrix
    from hsa_elastica.robots.builders import build_fast_robot

    check_replay_step(series, dt)
    sim = params.simulation.replace(integrator="implicit", dt=float(dt))
    robot = build_fast_robot(params.replace(simulation=sim), series.angles[0], ramp=0.0, record=False)
    if settle > 0:
        robot.set_motor_angles(series.angles[0])
        robot.step(float(settle))
    offset = np.asarray(params.platform.marker_offset, dtype=np.float64)
    n = len(series.t)
    pos, rot = np.empty((n, 3)), np.empty((n, 3, 3))
    start = time.perf_counter()
    last = start
    for k in range(n):
        if k > 0:
            robot.set_motor_angles(series.angles[k])
            robot.step(float(series.t[k] - series.t[k - 1]))
        s = robot.state()
        rot[k] = quaternion_to_matrix(np.asarray(s["platform_quaternion_xyzw"]))
        pos[k] = np.asarray(s["platform_position_m"]) + rot[k] @ offset
        if progress and time.perf_counter() - last > 5.0:
            last = time.perf_counter()
            print(f"  {series.name}: t = {series.t[k]:.0f} of {series.t[-1]:.0f} s", file=sys.stderr)
    return SimulatedSeries(pos, rot, time.perf_counter() - start)


def errors(series: MeasuredSeries, sim: SimulatedSeries) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Position error norms (N,) [m] and orientation error angles (N,) [rad] per row."""
    from scipy.spatial.transform import Rotation

    dp = np.linalg.norm(sim.position - series.position, axis=1)
    dr = (Rotation.from_quat(series.quaternion).inv() * Rotation.from_matrix(sim.rotation)).magnitude()
    return dp, np.asarray(dr, dtype=np.float64)
