"""Where a robot stands: the base of :func:`~hsa_elastica.robots.builders.build_robot` as a
pose or a rigid body carrying the motors (the robot frame in the lab), and the checks of the
mount options.  Used by :mod:`hsa_elastica.robots.builders` and :mod:`hsa_elastica.robots.stack`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import JointParams, ParameterError, RobotParams

__all__ = ["Frame"]

Frame = tuple[NDArray[np.float64], NDArray[np.float64]]


_DRIVES = ("angle", "torque")


def _check_drive(drive: str, body: Any) -> None:
    if drive not in _DRIVES:
        raise ParameterError(f"drive = {drive!r} is invalid: must be one of {_DRIVES}")
    if drive == "torque" and body is None:
        raise ParameterError(
            "drive = 'torque' needs a rigid body as base (motors fixed in the lab are driven "
            "by angle)"
        )


def _with_joint(robot_params: RobotParams, joint: Any) -> RobotParams:
    """``robot_params`` with the joint gains ``joint`` (for the time-step check of mounts)."""
    if not isinstance(joint, JointParams):
        raise ParameterError(f"mount = {joint!r} is invalid: must be None or a JointParams")
    return dataclasses.replace(robot_params, joint=joint)


def _pose(base: Any) -> Frame:
    """``(rotation (3, 3), position (3,))`` of a pose given as a (4, 4) matrix or a pair."""
    message = (
        f"base = {base!r} is invalid: must be None, a rigid body, a (4, 4) homogeneous matrix "
        f"or a pair (position (3,) [m], rotation (3, 3))"
    )
    try:
        if isinstance(base, (tuple, list)) and len(base) == 2:
            p = np.array(base[0], dtype=np.float64).reshape(3)
            r = np.array(base[1], dtype=np.float64).reshape(3, 3)
        else:
            h = np.array(base, dtype=np.float64).reshape(4, 4)
            if not np.allclose(h[3], (0.0, 0.0, 0.0, 1.0)):
                raise ValueError
            p, r = h[:3, 3].copy(), h[:3, :3].copy()
    except (TypeError, ValueError):
        raise ParameterError(message) from None
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(r))):
        raise ParameterError(message)
    if not np.allclose(r @ r.T, np.eye(3), atol=1e-9) or np.linalg.det(r) <= 0.0:
        raise ParameterError(f"base: the rotation {r.tolist()!r} is not a proper rotation matrix")
    return r, p


def _base_frame(base: Any, mount_offset: Sequence[float] | None) -> tuple[Frame | None, Any]:
    """``(frame, body)`` of ``build_robot``'s ``base``: the robot frame (rotation robot ->
    lab, origin [m]; None = the lab frame itself) and the carrying body (or None)."""
    if base is None:
        if mount_offset is not None:
            raise ParameterError("mount_offset is only meaningful with a rigid body as base")
        return None, None
    if hasattr(base, "director_collection") and hasattr(base, "position_collection"):
        if hasattr(base, "rest_lengths"):
            raise ParameterError("base must be a rigid body or a pose, not a rod")
        if mount_offset is None:
            length = float(getattr(base, "length", 0.0))
            offset = np.array([0.0, 0.0, 0.5 * length])
        else:
            offset = np.array(mount_offset, dtype=np.float64).reshape(-1)
            if offset.shape != (3,) or not np.all(np.isfinite(offset)):
                raise ParameterError(
                    f"mount_offset = {mount_offset!r} is invalid: must be 3 finite numbers (m)"
                )
        rotation = np.array(base.director_collection[:, :, 0], dtype=np.float64).T
        origin = np.array(base.position_collection[:, 0], dtype=np.float64) + rotation @ offset
        return (rotation, origin), base
    if mount_offset is not None:
        raise ParameterError("mount_offset is only meaningful with a rigid body as base")
    return _pose(base), None


def _placed(frame: Frame | None, point: Any, *, vector: bool = False) -> NDArray[np.float64]:
    """``point`` (robot frame) in the lab frame (a direction when ``vector``)."""
    x = np.array(point, dtype=np.float64)
    if frame is None:
        return x
    r, p = frame
    return np.asarray(r @ x if vector else r @ x + p, dtype=np.float64)
