"""Rotation kernels shared by every path: rotation matrix -> unit quaternion, log map of SO(3).

One home for these kernels: the platform joint (Eq. 7), the recorders, the steady-state
summary and the SPCS kinematics (Sections III-IV) all call them.  ``R`` acts on column vectors
(``v' = R v``, the convention of ``scipy.spatial.transform.Rotation.from_matrix``); quaternions
are ``(x, y, z, w)`` with ``w >= 0``; rotation vectors are ``theta * axis`` [rad],
``|theta| <= pi``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = [
    "quaternion_from_entries",
    "rotation_matrix_to_quaternion",
    "rotation_vector_from_matrix",
    "rotation_vector_from_quaternion",
]


@njit(cache=True, inline="always")  # type: ignore[misc]
def quaternion_from_entries(
    r00: float, r01: float, r02: float, r10: float, r11: float, r12: float, r20: float,
    r21: float, r22: float,
) -> tuple[float, float, float, float]:
    """:func:`rotation_matrix_to_quaternion` of the matrix with entries ``R[i, j] = rij``: for
    callers that hold the entries as scalars (no 3 x 3 array allocated per call)."""
    tr = r00 + r11 + r22
    if tr >= r00 and tr >= r11 and tr >= r22:
        s = math.sqrt(1.0 + tr) * 2.0  # s = 4 w
        w = 0.25 * s
        x = (r21 - r12) / s
        y = (r02 - r20) / s
        z = (r10 - r01) / s
    elif r00 >= r11 and r00 >= r22:
        s = math.sqrt(max(1.0 + r00 - r11 - r22, 0.0)) * 2.0  # s = 4 x
        w = (r21 - r12) / s
        x = 0.25 * s
        y = (r01 + r10) / s
        z = (r02 + r20) / s
    elif r11 >= r22:
        s = math.sqrt(max(1.0 + r11 - r00 - r22, 0.0)) * 2.0  # s = 4 y
        w = (r02 - r20) / s
        x = (r01 + r10) / s
        y = 0.25 * s
        z = (r12 + r21) / s
    else:
        s = math.sqrt(max(1.0 + r22 - r00 - r11, 0.0)) * 2.0  # s = 4 z
        w = (r10 - r01) / s
        x = (r02 + r20) / s
        y = (r12 + r21) / s
        z = 0.25 * s
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if w < 0.0:
        n = -n
    return x / n, y / n, z / n, w / n


@njit(cache=True)  # type: ignore[misc]
def rotation_matrix_to_quaternion(
    R: NDArray[np.float64],
) -> tuple[float, float, float, float]:
    """Unit quaternion ``(x, y, z, w)`` with ``w >= 0`` of the proper rotation matrix ``R``.

    ``R`` acts on column vectors (``v' = R v``), the convention of ``scipy``'s
    ``Rotation.from_matrix``. Shepperd's method: the largest of ``w, x, y, z`` is computed from
    the diagonal first, so the result is accurate for every angle in [0, pi].
    """
    return quaternion_from_entries(  # type: ignore[no-any-return]
        R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2]
    )


@njit(cache=True, inline="always")  # type: ignore[misc]
def rotation_vector_from_quaternion(
    x: float, y: float, z: float, w: float
) -> tuple[float, float, float]:
    """Rotation vector ``theta * axis`` [rad] of the unit quaternion ``(x, y, z, w)``,
    ``w >= 0`` (the log map of :func:`rotation_vector_from_matrix`)."""
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-8:
        # theta = 2 asin(s) ~ 2 s (1 + s^2/6); theta/s -> 2/w to O(s^2)
        scale = 2.0 / w
    else:
        scale = 2.0 * math.atan2(s, w) / s
    return scale * x, scale * y, scale * z


@njit(cache=True)  # type: ignore[misc]
def rotation_vector_from_matrix(R: NDArray[np.float64]) -> tuple[float, float, float]:
    """Rotation vector ``theta * axis`` (rad) of the rotation matrix ``R`` (``log`` map).

    Same convention as ``scipy``'s ``Rotation.from_matrix(R).as_rotvec()``: ``R`` rotates column
    vectors by ``|theta|`` about ``axis`` (right-hand rule), ``|theta| <= pi``. Computed from the
    quaternion, so it is accurate near 0 and near pi.
    """
    x, y, z, w = rotation_matrix_to_quaternion(R)
    return rotation_vector_from_quaternion(x, y, z, w)  # type: ignore[no-any-return]
