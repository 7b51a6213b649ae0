"""The marker ring on rod 2 of the real robot against the model's rod: a check of the rod's
shape, in particular of how the twist is distributed along it, beyond the platform pose that
the calibration uses (``python -m hsa_elastica.validation.ring_marker``; results in
``validation/real_robot.md``).

Data: the ``ring_*`` columns of the two motion-capture runs (``hsa_elastica/data``, README: a
marker ring clamped around rod 2 part-way up its free length), position [m] and orientation
(quaternion x, y, z, w) in the robot base frame.

Model: the ``fpu_robot_2022`` preset, static poses of the measured motor angles
(:func:`~hsa_elastica.robots.statics_api.solve_static_batch`, the buckled branch as in
:mod:`hsa_elastica.validation.real_robot`).  The ring is rigid on the rod at a fraction ``s``
of the flexible length: its tracked position is ``x(s) + R(s) o`` and its orientation
``R(s) R0``, with ``x(s)`` interpolated between the nodes, ``R(s)`` (element -> lab) between
the element frames, ``o`` [m] the offset of the tracked point in the rod's local frame and
``R0`` the ring's mounting rotation.  These seven numbers describe the clamp, not the physics:
they are fitted on the elongation run (``s`` and ``R0`` on the orientations, then ``o`` on the
positions) and the twisting run is predicted.

The tracker sometimes flips the ring's orientation for one pose: a pose more than 60 deg away
from both neighbours, which agree within 30 deg, is left out (:func:`tracking_flips`; model
free).  A model-free number is printed too: the ring's turn about the vertical per radian of
rod 2's motor angle (slope of a line fit), next to the model's at the fitted ``s``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import least_squares
from scipy.spatial.transform import Rotation

from hsa_elastica import data
from hsa_elastica.experiments.calibration import MocapRun, load_run
from hsa_elastica.params import RobotParams, resolve_params
from hsa_elastica.robots.statics_api import solve_static_batch, static_solver
from hsa_elastica.validation.real_robot import MIRROR_BRANCH

__all__ = [
    "RingRun",
    "load_ring_run",
    "rod_frames",
    "ring_pose",
    "fit_ring",
    "tracking_flips",
    "turn_slope",
    "main",
]

#: the rod the ring is clamped on (data README: motor 23 = rod 2)
RING_ROD = 2
#: units of the printed errors and of the orientation residuals
MM, DEG = 1e-3, np.pi / 180.0


#: the ring's columns in the motion-capture runs (position [m], then quaternion x y z w)
RING_COLUMNS = ("ring_x_m", "ring_y_m", "ring_z_m", "ring_qx", "ring_qy", "ring_qz", "ring_qw")

#: measured ring poses of one run: a :class:`~hsa_elastica.experiments.calibration.MocapRun`
#: whose ``position`` / ``quaternion`` are the ring's
RingRun = MocapRun


def load_ring_run(name: str) -> MocapRun:
    """The ring columns of the shipped motion-capture run ``name`` (``"elongation"`` or
    ``"twisting"``), read and checked by the calibration's run reader."""
    return load_run(data.path(name), name=name, measured=RING_COLUMNS)


def rod_frames(
    params: RobotParams, angles: NDArray[np.float64], rod: int = RING_ROD
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Node positions ``(N, 3, n + 1)`` [m] and element directors ``(N, 3, 3, n)`` (rows
    ``d1, d2, d3`` in the lab frame) of rod ``rod`` at the static poses of ``angles``
    ``(N, n_rods)`` [rad]."""
    results = solve_static_batch(params, angles, mirror_branch=MIRROR_BRANCH)
    model = static_solver(params)[0].model
    n0, n1 = int(model.tables.motors.node[rod]), int(model.tables.joints.node[rod])
    e0, e1 = int(model.tables.motors.element[rod]), int(model.tables.joints.element[rod])
    x = np.array([r.state[1][0][:, n0:n1 + 1] for r in results])
    q = np.array([r.state[1][1][:, :, e0:e1 + 1] for r in results])
    return x, q


def ring_pose(
    x: NDArray[np.float64], q: NDArray[np.float64], v: NDArray[np.float64]
) -> tuple[NDArray[np.float64], Rotation]:
    """Model ring positions ``(N, 3)`` [m] and orientations (ring -> lab) for the clamp
    ``v = (s, o_x, o_y, o_z [m], R0 as a rotation vector [rad])`` (module doc)."""
    ne = q.shape[-1]
    u = float(np.clip(v[0], 0.0, 1.0)) * ne
    k = min(int(u), ne - 1)
    f = u - k
    pos = (1.0 - f) * x[:, :, k] + f * x[:, :, k + 1]
    # element frames belong to the element centres, (j + 1/2) / ne
    c = u - 0.5
    j = int(np.clip(np.floor(c), 0, max(ne - 2, 0)))
    g = float(np.clip(c - j, 0.0, 1.0)) if ne > 1 else 0.0
    a = Rotation.from_matrix(np.transpose(q[:, :, :, j], (0, 2, 1)))
    b = Rotation.from_matrix(np.transpose(q[:, :, :, min(j + 1, ne - 1)], (0, 2, 1)))
    frame = a * Rotation.from_rotvec(g * (a.inv() * b).as_rotvec())
    return pos + frame.apply(v[1:4]), frame * Rotation.from_rotvec(v[4:7])


def _orientation_residuals(v: NDArray[np.float64], x: NDArray[np.float64],
                           q: NDArray[np.float64], run: MocapRun,
                           keep: NDArray[np.bool_]) -> NDArray[np.float64]:
    _, rot = ring_pose(x[keep], q[keep], np.r_[v[0], 0.0, 0.0, 0.0, v[1:4]])
    return ((Rotation.from_quat(run.quaternion[keep]).inv() * rot).as_rotvec() / DEG).ravel()


def fit_ring(x: NDArray[np.float64], q: NDArray[np.float64], run: MocapRun,
             keep: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    """The clamp ``v`` (see :func:`ring_pose`) of the run's poses ``keep``, in two steps: the
    place ``s`` and the mounting rotation ``R0`` from the orientations (least squares from nine
    starts ``s = 0.1 .. 0.9``, ``R0`` started at the mean), then the offset ``o`` from the
    positions (linear least squares at that ``s``)."""
    keep = np.ones(len(run.position), dtype=bool) if keep is None else keep
    best: Any = None
    for s0 in np.linspace(0.1, 0.9, 9):
        _, frame = ring_pose(x[keep], q[keep], np.r_[s0, np.zeros(6)])
        r0 = (frame.inv() * Rotation.from_quat(run.quaternion[keep])).mean().as_rotvec()
        res = least_squares(_orientation_residuals, np.r_[s0, r0], args=(x, q, run, keep),
                            bounds=([0.0, -4.0, -4.0, -4.0], [1.0, 4.0, 4.0, 4.0]))
        if best is None or res.cost < best.cost:
            best = res
    v = np.r_[best.x[0], np.zeros(3), best.x[1:4]]
    centre, frame = ring_pose(x[keep], q[keep], np.r_[v[0], np.zeros(6)])  # x(s), R(s)
    m = frame.as_matrix()  # (N, 3, 3): p - x(s) = R(s) o
    o = np.linalg.lstsq(m.reshape(-1, 3), (run.position[keep] - centre).ravel(), rcond=None)[0]
    v[1:4] = o
    return v


def tracking_flips(quaternion: NDArray[np.float64], jump_deg: float = 60.0,
                   agree_deg: float = 30.0) -> NDArray[np.bool_]:
    """Poses whose tracked orientation is more than ``jump_deg`` from both neighbours while the
    neighbours agree within ``agree_deg`` (a one-pose flip of the tracker)."""
    r = Rotation.from_quat(quaternion)
    n = len(r)
    out = np.zeros(n, dtype=bool)
    if n < 3:
        return out
    prev = np.degrees((r[:-2].inv() * r[1:-1]).magnitude())
    nxt = np.degrees((r[1:-1].inv() * r[2:]).magnitude())
    across = np.degrees((r[:-2].inv() * r[2:]).magnitude())
    out[1:-1] = (prev > jump_deg) & (nxt > jump_deg) & (across < agree_deg)
    return out


def turn_slope(rot: Rotation, motor_angle: NDArray[np.float64]) -> float:
    """Turn about the vertical [rad] per radian of ``motor_angle`` (slope of a line fit to the
    unwrapped yaw of ``rot``'s x axis)."""
    ax = rot.apply([1.0, 0.0, 0.0])
    yaw = np.unwrap(np.arctan2(ax[:, 1], ax[:, 0]))
    return float(np.polyfit(motor_angle, yaw, 1)[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.ring_marker",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--params", default="fpu_robot_2022", help="preset name or parameter file")
    args = ap.parse_args(argv)
    params: RobotParams = resolve_params(args.params)
    runs = [load_ring_run("elongation"), load_ring_run("twisting")]
    frames = {run.name: rod_frames(params, run.motor_angles) for run in runs}
    keeps = {run.name: ~tracking_flips(run.quaternion) for run in runs}
    v = fit_ring(*frames["elongation"], runs[0], keeps["elongation"])
    print(f"clamp fitted on the elongation run: s = {v[0]:.3f} of the flexible length, offset "
          f"{np.round(v[1:4] / MM, 2)} mm, mounting rotation {np.round(np.degrees(v[4:7]), 1)} deg")
    print()
    print("| run | poses (flips left out) | position RMS [mm] | orientation RMS [deg] | "
          "orientation max [deg] | ring turn per motor rad: measured | model |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for run in runs:
        keep = keeps[run.name]
        x, q = frames[run.name]
        pos, rot = ring_pose(x[keep], q[keep], v)
        meas = Rotation.from_quat(run.quaternion[keep])
        dp = np.linalg.norm(pos - run.position[keep], axis=1) / MM
        dr = np.degrees((meas.inv() * rot).magnitude())
        phi = run.motor_angles[keep, RING_ROD]
        print(f"| {run.name} | {int(keep.sum())} ({int((~keep).sum())}) | "
              f"{np.sqrt(np.mean(dp ** 2)):.2f} | {np.sqrt(np.mean(dr ** 2)):.2f} | "
              f"{dr.max():.1f} | {turn_slope(meas, phi):.3f} | {turn_slope(rot, phi):.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
