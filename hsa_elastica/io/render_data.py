"""What the renderer reads from a diagnostics frame, and when it samples it.

Input is a diagnostics :class:`pandas.DataFrame` in the format of ``recording.py`` (see
``docs/architecture.md``): a ``time`` column (s), per rod ``rod{i}/position_{x|y|z}_{node}`` (m)
and ``rod{i}/director_{r}{c}_{elem}`` (PyElastica directors: row ``r`` is the local axis
``d_{r+1}`` in lab coordinates), optionally ``rod{i}/<quantity>_{elem or vor}`` for colouring, and
for a robot ``platform/position_{x|y|z}`` (m) and ``platform/quaternion_{x|y|z|w}``.  A single-rod
frame without the ``rod{i}/`` prefix is accepted too.

Video timing: a clip shows the run at ``speed`` times real time (``speed = 0.25``: one second of
simulated time lasts four seconds of video); :func:`frame_times` gives the simulated time of each
frame and :func:`resample` interpolates the recorded samples (linearly) at those times, so slow
motion is smooth even when the recording rate is below ``fps / speed``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["quaternion_to_matrix", "select_frames", "frame_times", "resample"]


def rod_prefixes(df: pd.DataFrame) -> list[str]:
    """Column prefixes of the rods (``"rod0/"``, ... or ``""`` for a single-rod frame)."""
    prefixes = []
    i = 0
    while f"rod{i}/position_x_0" in df.columns:
        prefixes.append(f"rod{i}/")
        i += 1
    if not prefixes and "position_x_0" in df.columns:
        prefixes.append("")
    if not prefixes:
        raise ValueError(
            "diagnostics frame has no rod columns: expected 'rod{i}/position_x_0' (robot) or "
            "'position_x_0' (single rod)"
        )
    return prefixes


def count(df: pd.DataFrame, prefix: str, stem: str) -> int:
    """Number of consecutive columns ``{prefix}{stem}0``, ``{prefix}{stem}1``, ..."""
    n = 0
    while f"{prefix}{stem}{n}" in df.columns:
        n += 1
    return n


def block(df: pd.DataFrame, cols: list[str]) -> NDArray[np.float64]:
    """The columns ``cols`` as a float array ``(n_t, len(cols))``; a clear error if any is missing."""
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"diagnostics frame lacks column(s) {missing[:3]}{'...' if len(missing) > 3 else ''}")
    return df[cols].to_numpy(dtype=np.float64)


def positions(df: pd.DataFrame, prefix: str) -> NDArray[np.float64]:
    """Node positions ``(n_t, 3, n_nodes)`` (m)."""
    n = count(df, prefix, "position_x_")
    cols = [f"{prefix}position_{a}_{k}" for a in "xyz" for k in range(n)]
    return block(df, cols).reshape(len(df), 3, n)


def directors(df: pd.DataFrame, prefix: str, n_elem: int) -> NDArray[np.float64]:
    """Element directors ``(n_t, 3, 3, n_elem)`` (row ``r`` = local axis ``d_{r+1}``)."""
    cols = [f"{prefix}director_{r}{c}_{k}" for r in range(3) for c in range(3) for k in range(n_elem)]
    return block(df, cols).reshape(len(df), 3, 3, n_elem)


def quaternion_to_matrix(q_xyzw: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotation matrices ``(..., 3, 3)`` from scalar-last unit quaternions ``(..., 4)``.

    The matrix maps body-frame vectors to the lab frame (its columns are the body axes in lab
    coordinates), the convention of ``platform/quaternion_{x|y|z|w}``.
    """
    q = np.asarray(q_xyzw, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z)
    m[..., 0, 1] = 2 * (x * y - z * w)
    m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w)
    m[..., 1, 1] = 1 - 2 * (x * x + z * z)
    m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w)
    m[..., 2, 1] = 2 * (y * z + x * w)
    m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def node_scalars(values: NDArray[np.float64], n_nodes: int) -> NDArray[np.float64]:
    """Map per-element (n_nodes-1) or per-Voronoi (n_nodes-2) values ``(n_t, m)`` to nodes by
    linear interpolation in arc-length fraction (clamped at the ends)."""
    m = values.shape[1]
    if m == n_nodes:
        return values
    if m == n_nodes - 1:
        at = (np.arange(m) + 0.5) / m  # element centres
    elif m == n_nodes - 2:
        at = (np.arange(m) + 1.0) / (n_nodes - 1)  # interior nodes
    else:
        raise ValueError(f"cannot map {m} values onto {n_nodes} nodes")
    s = np.linspace(0.0, 1.0, n_nodes)
    return np.stack([np.interp(s, at, row) for row in values])


def rod_scalars(
    df: pd.DataFrame, prefix: str, color_by: str, n_nodes: int, printed_length: float
) -> NDArray[np.float64]:
    """Per-node colour values ``(n_t, n_nodes)`` of one rod.

    ``color_by="elongation"`` is the auxetic rest-length strain ``rest_length / printed - 1``
    (Eq. 3, dimensionless); any other name reads the recorded columns ``{prefix}{color_by}_{k}``.
    """
    if color_by == "elongation":
        n = count(df, prefix, "rest_length_")
        if n == 0:
            raise ValueError(f"color_by='elongation' needs the columns '{prefix}rest_length_{{k}}'")
        rest = block(df, [f"{prefix}rest_length_{k}" for k in range(n)])
        values = rest / (printed_length / n) - 1.0
    else:
        n = count(df, prefix, f"{color_by}_")
        if n == 0:
            raise ValueError(
                f"color_by={color_by!r}: no columns '{prefix}{color_by}_{{k}}' in the diagnostics; "
                "use 'handedness', 'elongation' or a recorded per-element quantity (e.g. 'sigma_z')"
            )
        values = block(df, [f"{prefix}{color_by}_{k}" for k in range(n)])
    return node_scalars(values, n_nodes)


def _check_rate(fps: float, speed: float) -> None:
    if not (fps > 0 and math.isfinite(fps)):
        raise ValueError(f"fps = {fps!r} is invalid: must be a finite number > 0 (1/s)")
    if not (speed > 0 and math.isfinite(speed)):
        raise ValueError(f"speed = {speed!r} is invalid: must be a finite number > 0")


def select_frames(
    times: NDArray[np.float64] | Sequence[float],
    *,
    fps: float = 30.0,
    speed: float = 1.0,
    n_frames: int | None = None,
) -> NDArray[np.int64]:
    """Row indices of recorded samples to show, without interpolation.

    With ``n_frames`` the clip has exactly that many frames spread evenly over the rows; otherwise
    one frame every ``speed / fps`` seconds of simulated time (``speed`` = simulated seconds per
    second of video), each the nearest recorded sample, plus the last sample if it was not
    picked (the clip always ends on the final state).
    """
    t = np.asarray(times, dtype=np.float64)
    if t.size == 0:
        raise ValueError("diagnostics frame is empty: nothing to render")
    if n_frames is not None:
        if int(n_frames) < 1:
            raise ValueError(f"n_frames = {n_frames!r} is invalid: must be an integer >= 1")
        return np.round(np.linspace(0, t.size - 1, int(n_frames))).astype(np.int64)
    _check_rate(fps, speed)
    targets = np.arange(t[0], t[-1] + 0.5 * speed / fps, speed / fps)
    idx = np.clip(np.searchsorted(t, targets), 0, t.size - 1)
    prev = np.clip(idx - 1, 0, t.size - 1)
    nearer_prev = np.abs(t[prev] - targets) < np.abs(t[idx] - targets)
    rows = np.where(nearer_prev, prev, idx).astype(np.int64)
    if rows[-1] != t.size - 1:  # always end on the final state
        rows = np.append(rows, t.size - 1)
    return rows


def frame_times(t_start: float, t_end: float, *, fps: float, speed: float) -> NDArray[np.float64]:
    """Simulated times (s) of the frames of a clip at ``fps`` frames per second of video showing
    ``speed`` simulated seconds per second of video: ``t_start + k speed / fps`` up to ``t_end``,
    and ``t_end`` itself as the last frame (added unless the grid already ends within 1e-9 of a
    frame step of it).  The clip therefore lasts ``(t_end - t_start) / speed`` seconds (to one
    frame)."""
    _check_rate(fps, speed)
    if not (math.isfinite(t_start) and math.isfinite(t_end) and t_end >= t_start):
        raise ValueError(f"time range [{t_start!r}, {t_end!r}] is invalid: must be finite, end >= start")
    step = speed / fps
    n = int(math.floor((t_end - t_start) / step + 1e-9)) + 1
    t = t_start + step * np.arange(n, dtype=np.float64)
    if t_end - t[-1] > 1e-9 * step:
        t = np.append(t, t_end)
    else:
        t[-1] = t_end
    return t


def resample(df: pd.DataFrame, times: NDArray[np.float64]) -> pd.DataFrame:
    """The numeric columns of ``df`` linearly interpolated in its ``time`` column at ``times``
    (clamped to the recorded range).  Positions, directors, quaternions and scalars are all
    interpolated entry-wise; the renderer re-normalises the frames it draws, and between two
    recorded samples (10 ms apart by default) the rotation is small, so the chordal error is
    far below a pixel."""
    num = df.select_dtypes("number").reset_index(drop=True)
    t = num["time"].to_numpy(dtype=np.float64)
    values = num.to_numpy(dtype=np.float64)
    tq = np.clip(np.asarray(times, dtype=np.float64), t[0], t[-1])
    if t.size == 1:
        out = np.repeat(values, tq.size, axis=0)
    else:
        i = np.clip(np.searchsorted(t, tq, side="right") - 1, 0, t.size - 2)
        dt = t[i + 1] - t[i]
        w = np.where(dt > 0, (tq - t[i]) / np.where(dt > 0, dt, 1.0), 1.0)
        w = np.clip(w, 0.0, 1.0)[:, None]
        out = (1.0 - w) * values[i] + w * values[i + 1]
    res = pd.DataFrame(out, columns=num.columns)
    res["time"] = tq
    return res


class RodsView:
    """What the renderer reads of a robot to draw a stack's rods all at once: the rod,
    ``n_rods`` and ``handedness`` of every rod of every stage (bottom stage first), and the
    top stage's ``circle_radius`` [m] and ``platform`` (the camera's fit).  Not a
    :class:`~hsa_elastica.params.RobotParams`: the stages' rods would not fit on one circle."""

    def __init__(self, rod: Any, handedness: Sequence[int], circle_radius: float,
                 platform: Any) -> None:
        self.rod = rod
        self.handedness = tuple(int(h) for h in handedness)
        self.n_rods = len(self.handedness)
        self.circle_radius = float(circle_radius)
        self.platform = platform

    @classmethod
    def of_stack(cls, segments: Sequence[Any]) -> RodsView:
        """The view of the stages ``segments`` (``RobotParams``, bottom first)."""
        top = segments[-1]
        return cls(top.rod, [h for p in segments for h in p.handedness], top.circle_radius,
                   top.platform)


def stack_frame(df: pd.DataFrame, segments: Sequence[Any]) -> tuple[pd.DataFrame, Any]:
    """A multi-segment stack's diagnostics (``seg{k}/rod{i}/...``, ``seg{k}/platform/...``)
    in the renderer's robot format, and parameters describing all its rods: rods renumbered
    ``rod0 ... rod{n-1}`` (segment 0 first), the top platform as ``platform/``, the lower
    ones as ``platform{k}/``; ``segments`` are the stages' ``RobotParams``, bottom first."""
    if not segments:
        raise ValueError("stack_frame: no segments")
    names = {"time": "time"}
    j = 0
    last = len(segments) - 1
    for k, params in enumerate(segments):
        for i in range(params.n_rods):
            old = f"seg{k}/rod{i}/"
            for c in df.columns:
                if c.startswith(old):
                    names[c] = f"rod{j}/{c[len(old):]}"
            j += 1
        old = f"seg{k}/platform/"
        new = "platform/" if k == last else f"platform{k}/"
        for c in df.columns:
            if c.startswith(old):
                names[c] = new + c[len(old):]
    if not any(c.startswith("rod0/") for c in names.values()):
        raise ValueError("diagnostics frame has no stack columns: expected 'seg0/rod0/position_x_0'")
    frame = df[list(names)].rename(columns=names)
    return frame, RodsView.of_stack(segments)


def sensor_series(df: pd.DataFrame, stem: str, n_segments: int = 0) -> NDArray[np.float64] | None:
    """The per-motor sensor columns ``sensors/{stem}_{i}`` (a stack's
    ``seg{k}/sensors/{stem}_{i}``, segment 0 first) as ``(n_t, n_motors)``, or None when the run
    recorded none (e.g. ``stem="motor_angle"`` [rad], ``"motor_torque"`` [N m])."""
    prefixes = [f"seg{k}/sensors/" for k in range(n_segments)] if n_segments else ["sensors/"]
    cols = [f"{p}{stem}_{i}" for p in prefixes for i in range(count(df, p, f"{stem}_"))]
    return block(df, cols) if cols else None


def platform_tilt_twist(rot: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Tilt (angle between the platform normal and lab +z) and twist (yaw of the platform's x
    axis about lab +z, in (-pi, pi]) [rad] of body->lab rotations ``(..., 3, 3)``: the
    definitions of ``SteadyStateResult.platform_tilt_rad`` / ``platform_twist_rad``."""
    tilt = np.arccos(np.clip(rot[..., 2, 2], -1.0, 1.0))
    twist = np.arctan2(rot[..., 1, 0], rot[..., 0, 0])
    return tilt, twist


def run_title(summary: Any) -> str:
    """A one-line title of a run from its ``summary.json``: the primitive and its magnitude
    (``"bend_north, magnitude 1"``) or else the motor angles in degrees (``"motor angles 0, 0,
    180, -180 deg"``); ``""`` when the summary names neither."""
    if not isinstance(summary, dict):
        return ""
    name = summary.get("primitive")
    if isinstance(name, str) and name:
        mag = summary.get("magnitude")
        return f"{name}, magnitude {mag:g}" if isinstance(mag, (int, float)) else name
    angles = summary.get("motor_angles_rad")
    if angles is None:  # a summary written before the one schema (io/columns.OLD_JSON_KEYS)
        angles = summary.get("actuation_angles_rad")
    if isinstance(angles, (list, tuple)) and angles and all(isinstance(a, (int, float)) for a in angles):
        return "motor angles " + ", ".join(f"{math.degrees(a):.0f}" for a in angles) + " deg"
    return ""
