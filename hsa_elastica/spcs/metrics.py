"""Error metrics of Section IV-C (Eq. 15-16) and PyElastica rod -> SE(3) element poses.

Conventions (PyElastica directors as rows, printed vs rest arc length): see
:mod:`hsa_elastica.spcs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from hsa_elastica.spcs.lie import (
    KinematicsError,
    _as_poses,
    _finite_array,
    euler_xyz,
    rotation_to_quaternion,
)

__all__ = ["ErrorMetrics", "error_metrics", "rod_element_poses"]

FloatArray = NDArray[np.float64]

# --------------------------------------------------------------------------------------------
# Error metrics (IV-C)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ErrorMetrics:
    """Eq. 15–16: position RMSE ``e_p`` [m], quaternion-vector RMSE ``e_quat`` [-], and the
    RMSE of the XYZ Euler angles of R_true R_est^T, ``e_eul`` (alpha, beta, gamma) [rad]."""

    e_p: float
    e_quat: float
    e_eul: FloatArray


def error_metrics(true_poses: Any, estimated_poses: Any) -> ErrorMetrics:
    """Eq. 15–16 over all samples (time steps x poses, flattened) of equal-shape pose sets.

    Poses: (..., 4, 4) arrays or (R, p) tuples. The quaternion sign ambiguity is removed by
    choosing the sign of each estimated quaternion with a non-negative dot product with the true one.
    """

    def flat(x: Any, name: str) -> tuple[FloatArray, FloatArray]:
        if isinstance(x, tuple) and len(x) == 2:
            return _as_poses((np.reshape(x[0], (-1, 3, 3)), np.reshape(x[1], (-1, 3))), name)
        arr = np.asarray(x)
        if arr.ndim >= 2 and arr.shape[-2:] == (4, 4):
            arr = arr.reshape((-1, 4, 4))
        return _as_poses(arr, name)

    Rt, pt = flat(true_poses, "true_poses")
    Re, pe = flat(estimated_poses, "estimated_poses")
    if Rt.shape != Re.shape:
        raise KinematicsError(
            f"true_poses ({len(Rt)} poses) and estimated_poses ({len(Re)} poses) must have the same count"
        )
    e_p = float(np.sqrt(np.mean(np.sum((pe - pt) ** 2, axis=1))))
    qt = rotation_to_quaternion(Rt)
    qe = rotation_to_quaternion(Re)
    sign = np.where(np.sum(qt * qe, axis=1) < 0.0, -1.0, 1.0)
    e_quat = float(np.sqrt(np.mean(np.sum((sign[:, None] * qe[:, :3] - qt[:, :3]) ** 2, axis=1))))
    eul = euler_xyz(np.einsum("nij,nkj->nik", Rt, Re))
    e_eul = np.sqrt(np.mean(eul**2, axis=0))
    return ErrorMetrics(e_p=e_p, e_quat=e_quat, e_eul=e_eul)


# --------------------------------------------------------------------------------------------
# PyElastica rod → SE(3) poses
# --------------------------------------------------------------------------------------------
def rod_element_poses(
    position_collection: ArrayLike,
    director_collection: ArrayLike,
    printed_lengths: float | ArrayLike,
    base_pose: ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Element poses of a PyElastica rod in the kinematic base frame, at printed arc lengths.

    Parameters
    ----------
    position_collection: (3, n + 1) node positions [m] (lab frame).
    director_collection: (3, 3, n) directors (rows d1, d2, d3; lab → local).
    printed_lengths: total printed length [m] (uniform elements) or the n printed element lengths.
    base_pose: 4x4 pose of the kinematic base frame {S_B} in the lab frame (default identity);
        for a rod built along lab +z with ``normal`` +x from ``start``, use translation ``start``
        and identity rotation (the *un-actuated* base frame; the motor angle is phi0 of q).

    Returns
    -------
    s: (n,) printed arc lengths of the element centres [m];
    T: (n, 4, 4) poses with R = director.T (local z = tangent) and p = element midpoint.
    """
    x = _finite_array(position_collection, "position_collection")
    Q = _finite_array(director_collection, "director_collection")
    if x.ndim != 2 or x.shape[0] != 3 or Q.ndim != 3 or Q.shape[:2] != (3, 3) or x.shape[1] != Q.shape[2] + 1:
        raise KinematicsError(
            f"position_collection (3, n+1) and director_collection (3, 3, n) shapes mismatch: {x.shape}, {Q.shape}"
        )
    n = Q.shape[2]
    lens = _finite_array(printed_lengths, "printed_lengths")
    if lens.ndim == 0:
        lens = np.full(n, float(lens) / n)
    if lens.shape != (n,) or np.any(lens <= 0.0):
        raise KinematicsError(f"printed_lengths must be a length > 0 (m) or {n} element lengths > 0 (m)")
    s = np.cumsum(lens) - 0.5 * lens
    T = np.zeros((n, 4, 4))
    T[:, :3, :3] = np.transpose(Q, (2, 1, 0))  # R[k] = Q[:, :, k].T
    T[:, :3, 3] = 0.5 * (x[:, 1:] + x[:, :-1]).T
    T[:, 3, 3] = 1.0
    if base_pose is not None:
        B = _finite_array(base_pose, "base_pose")
        if B.shape != (4, 4):
            raise KinematicsError(f"base_pose must be a 4x4 homogeneous transform, got shape {B.shape}")
        _as_poses(B, "base_pose")
        Binv = np.eye(4)
        Binv[:3, :3] = B[:3, :3].T
        Binv[:3, 3] = -B[:3, :3].T @ B[:3, 3]
        T = np.einsum("ij,njk->nik", Binv, T)
    return s, T
