"""Layout arithmetic of the rendered scene, free of VTK: rounded colour-bar ticks, the length of
the scale bar and a camera placed as close as the framed points allow."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["centred_camera", "colorbar_ticks", "fit_camera", "scale_bar_length"]


# --------------------------------------------------------------------------------------------
def _nice_step(raw: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k that is >= ``raw`` (> 0)."""
    k = math.floor(math.log10(raw))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * 10.0**k >= raw * (1.0 - 1e-12):
            return m * 10.0**k
    return 10.0 ** (k + 1)  # pragma: no cover


def colorbar_ticks(lo: float, hi: float, *, max_ticks: int = 6) -> tuple[float, float, list[float], str]:
    """Rounded colour-bar limits, tick values and a ``%``-format for the data range [lo, hi].

    Values within 1e-9 of the range's magnitude of zero are zero (``-8.88e-16`` is round-off of
    an unstrained rod, not data); the limits are widened to multiples of a step of 1, 2, 2.5 or
    5 x 10^k giving at most ``max_ticks`` ticks; the format shows exactly the digits the step
    needs (fixed point, or ``%.3g`` for magnitudes outside [1e-4, 1e5)).
    Returns ``(lo, hi, ticks, fmt)``.
    """
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"colour range [{lo}, {hi}] is not finite")
    lo, hi = min(lo, hi), max(lo, hi)
    scale = max(abs(lo), abs(hi))
    lo = 0.0 if abs(lo) <= 1e-9 * scale else lo
    hi = 0.0 if abs(hi) <= 1e-9 * scale else hi
    if hi - lo <= 1e-9 * scale or scale == 0.0:  # a constant field
        half = 0.05 * abs(lo) if lo != 0.0 else 0.5
        lo, hi = (lo - half, hi + half) if lo != 0.0 else (0.0, 1.0)
    step = _nice_step((hi - lo) / max(1, max_ticks - 1))
    n_lo = math.floor(lo / step + 1e-9)
    n_hi = math.ceil(hi / step - 1e-9)
    mantissa = step / 10.0 ** math.floor(math.log10(step))
    decimals = max(0, -math.floor(math.log10(step)) + (1 if abs(mantissa - 2.5) < 1e-9 else 0))
    ticks = [round(k * step, decimals + 3) + 0.0 for k in range(n_lo, n_hi + 1)]  # + 0.0: no -0.0
    big = max(abs(ticks[0]), abs(ticks[-1]))
    fmt = f"%.{decimals}f" if (step >= 1e-4 and big < 1e5) else "%.3g"
    return ticks[0], ticks[-1], ticks, fmt


def scale_bar_length(length: float) -> float:
    """A round scale-bar length [m] for a robot of rod length ``length`` [m]: the largest
    1, 2 or 5 x 10^k not above half of it (50 mm for the paper's 10 cm rods)."""
    if not (math.isfinite(length) and length > 0):
        raise ValueError(f"length = {length!r} is invalid: must be a finite number > 0 (m)")
    half = 0.5 * length
    k = math.floor(math.log10(half))
    best = 10.0**k
    for m in (1.0, 2.0, 5.0):
        if m * 10.0**k <= half * (1.0 + 1e-12):
            best = m * 10.0**k
    return best


def fit_camera(
    points: NDArray[np.float64], *, direction: Any, view_angle_deg: float, aspect: float,
    fill: float = 0.9, left_fraction: float = 1.0, top_fraction: float = 1.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(focal point, camera position) of a perspective camera looking along ``-direction`` (z up)
    such that all ``points`` (n, 3) project inside the central ``fill`` fraction of the left
    ``left_fraction`` and lower ``top_fraction`` of the image (vertical view angle
    ``view_angle_deg``, width/height ``aspect``), as close as possible.  The rest of the image
    is left for the legend (right) and the title (top)."""
    d = np.asarray(direction, dtype=np.float64)
    d /= np.linalg.norm(d)
    right = np.cross(np.array([0.0, 0.0, 1.0]), d)
    right /= np.linalg.norm(right)
    up = np.cross(d, right)
    ty = math.tan(math.radians(0.5 * view_angle_deg)) * fill * top_fraction
    tx = math.tan(math.radians(0.5 * view_angle_deg)) * fill * aspect * left_fraction
    center = 0.5 * (points.min(axis=0) + points.max(axis=0))
    for _ in range(4):  # distance for the current centre, then re-centre on the projected box
        rel = points - center
        x, y, z = rel @ right, rel @ up, rel @ d
        dist = float(np.max(np.maximum(z + np.abs(x) / tx, z + np.abs(y) / ty)))
        depth = dist - z
        u, v = x / (depth * tx), y / (depth * ty)  # in [-1, 1] inside the fill area
        du, dv = 0.5 * (u.max() + u.min()), 0.5 * (v.max() + v.min())
        if abs(du) < 1e-3 and abs(dv) < 1e-3:
            break
        mean_depth = float(np.mean(depth))
        center = center + right * du * mean_depth * tx + up * dv * mean_depth * ty
    rel = points - center
    dist = float(np.max(np.maximum(rel @ d + np.abs(rel @ right) / tx, rel @ d + np.abs(rel @ up) / ty)))
    # slide camera and focal point sideways so that the fitted strip sits at the image's left,
    # and up so that it sits at the image's bottom
    shift = (1.0 - left_fraction) * math.tan(math.radians(0.5 * view_angle_deg)) * aspect * dist
    lift = (1.0 - top_fraction) * math.tan(math.radians(0.5 * view_angle_deg)) * dist
    center = center + shift * right + lift * up
    return center, center + dist * d


def centred_camera(
    robot: NDArray[np.float64], fit: NDArray[np.float64], keep_out: NDArray[np.float64], *,
    direction: Any, view_angle_deg: float, aspect: float, fill: float = 0.9,
    top_fraction: float = 1.0, boxes: Any = (),
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(focal point, camera position) of a perspective camera looking along ``-direction`` (z up)
    with the projected bounding box of the ``robot`` points (n, 3) at the image's centre, at the
    smallest distance (within 2 %) at which every ``fit`` point projects inside the central
    ``fill`` fraction of the image below its top band (the top ``1 - top_fraction`` of the
    height, the title's) and no ``keep_out`` point falls inside one of ``boxes`` (legend,
    colour bar, world axes: ``(x0, y0, x1, y1)`` as fractions of the width and height, from the
    lower left)."""
    d = np.asarray(direction, dtype=np.float64)
    d /= np.linalg.norm(d)
    right = np.cross(np.array([0.0, 0.0, 1.0]), d)
    right /= np.linalg.norm(right)
    up = np.cross(d, right)
    t = math.tan(math.radians(0.5 * view_angle_deg))
    top = fill - 2.0 * (1.0 - top_fraction)  # highest v (-1 .. 1) a fitted point may reach

    def project(pts: NDArray[np.float64], c: NDArray[np.float64], dist: float
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        rel = pts - c
        depth = dist - rel @ d
        return (rel @ right) / (depth * t * aspect), (rel @ up) / (depth * t)

    def distance(c: NDArray[np.float64]) -> float:
        rel = fit - c
        x, y, z = rel @ right, rel @ up, rel @ d
        lift = np.where(y > 0.0, y / (t * top), -y / (t * fill))
        dist = float(np.max(np.maximum(z + np.abs(x) / (t * aspect * fill), z + lift)))
        for _ in range(200):  # back off until nothing of the robot is under a panel
            u, v = project(keep_out, c, dist)
            fx, fy = 0.5 * (u + 1.0), 0.5 * (v + 1.0)
            if not any(np.any((fx >= b[0]) & (fx <= b[2]) & (fy >= b[1]) & (fy <= b[3])) for b in boxes):
                break
            dist *= 1.02
        return dist

    def place(drop: float) -> tuple[NDArray[np.float64], float]:
        """Horizontally centred, the box's middle ``drop`` (in half-heights) below centre."""
        center = 0.5 * (robot.min(axis=0) + robot.max(axis=0))
        dist = distance(center)
        for _ in range(6):  # re-centre on the projected box, then fit again
            u, v = project(robot, center, dist)
            du, dv = 0.5 * (u.max() + u.min()), 0.5 * (v.max() + v.min()) + drop
            if abs(du) < 1e-3 and abs(dv) < 1e-3:
                break
            depth = float(np.mean(dist - (robot - center) @ d))
            center = center + right * du * depth * t * aspect + up * dv * depth * t
            dist = distance(center)
        return center, dist

    # lowering the robot a little may clear a panel at the top right at a closer distance
    center, dist = min((place(drop) for drop in np.linspace(0.0, 0.3, 7)), key=lambda cd: cd[1])
    return center, center + dist * d
