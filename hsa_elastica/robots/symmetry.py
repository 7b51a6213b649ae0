"""Symmetries of a robot and of a command, and steady states that break them.

A symmetry of the robot is an orthogonal map ``S`` of the robot base frame that keeps ``+z``
(a rotation about ``z`` or a mirror in a vertical plane) and maps the rod layout onto itself:
rod ``i`` onto rod ``j`` at ``S b_i = b_j``, with the handedness kept by a rotation and swapped
by a mirror (a mirror image of a right-handed rod is left-handed): ``h_j = det(S) h_i``.
Lateral gravity must be kept too (``S g = g``).  The paper robot (rods at 45 + 90 i deg,
handedness R, L, R, L) has three besides the identity:

* the half turn about ``z`` (rods 0 <-> 2, 1 <-> 3, handedness kept);
* the mirror in the plane ``x = 0`` (rods 0 <-> 1, 2 <-> 3, handedness swapped);
* the mirror in the plane ``y = 0`` (rods 0 <-> 3, 1 <-> 2, handedness swapped).

The quarter turns and the diagonal mirrors map a rod onto one of the other handedness (a quarter
turn) or onto itself with the handedness swapped (a diagonal mirror): not symmetries.

A command maps to itself under ``S`` when ``phi_j = det(S) phi_i`` for every rod (a mirror
turns the sense of a motor's rotation about ``+z``), i.e. when the rods' commands
``u_i = phi_i / h_i`` are equal along the permutation.  Then the image under ``S`` of any
equilibrium at that command is an equilibrium too: a pose that is not its own image (a buckled
pose of a symmetric command) has an equally valid mirror pose, and which of the two a solver
reaches is decided by round-off (docs/stability.md).  :func:`broken_symmetry` says so for a
solved pose, and which branch it is: the platform centre's offset from the symmetric part of
its position (the mirror branch has the opposite offset).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.params import RobotParams

__all__ = [
    "ANGLE_TOL",
    "POSITION_TOL",
    "ROTATION_TOL",
    "BrokenSymmetry",
    "Symmetry",
    "broken_symmetry",
    "command_symmetries",
    "robot_symmetries",
]

#: two motor angles are the same command within this [rad] (a command typed twice, or
#: ``h phi_max u`` and ``-h phi_max u`` of the primitives, agree exactly)
ANGLE_TOL = 1e-9
#: a pose breaks a symmetry when a point (platform centre, rod tip) is further than this [m]
#: from its image: the converged poses of symmetric commands that do not buckle were their own
#: images within 5e-13 m (static and dynamic: bend_north, elongation, twist_ccw at 0.5; the
#: unstable symmetric pose of a twist within 5e-11 m), a buckled one is millimetres off
POSITION_TOL = 1e-6
#: ... or the platform's rotation matrix further than this (max-norm) from its image [-]
#: (measured at most 6e-12 on the same poses, 8e-10 on the unstable one)
ROTATION_TOL = 1e-5


@dataclass(frozen=True)
class Symmetry:
    """A symmetry of a robot: ``name``, the map ``matrix`` (3, 3) of the base frame and the
    rods' permutation ``perm`` (rod ``i`` onto rod ``perm[i]``); ``det`` +1 (a rotation) or
    -1 (a mirror)."""

    name: str
    matrix: NDArray[np.float64]
    perm: tuple[int, ...]

    @property
    def det(self) -> int:
        return 1 if np.linalg.det(self.matrix) > 0.0 else -1

    def describe(self) -> str:
        pairs = sorted({tuple(sorted((i, j))) for i, j in enumerate(self.perm) if i != j})
        return f"{self.name} (rods {', '.join(f'{i}<->{j}' for i, j in pairs)})"


@dataclass(frozen=True)
class BrokenSymmetry:
    """What :func:`broken_symmetry` found: ``symmetries`` of the command (identity excluded;
    empty: the command has none), ``broken`` those the pose is not its own image under,
    ``offset_m`` (3,) the platform centre minus the mean of its images under the command's
    symmetries [m] (zeros on a symmetric pose; the mirror branch has ``-offset_m`` in the
    directions the broken symmetries reverse)."""

    symmetries: tuple[Symmetry, ...]
    broken: tuple[Symmetry, ...]
    offset_m: NDArray[np.float64]

    @property
    def is_broken(self) -> bool:
        return bool(self.broken)

    def describe(self, platform_position_m: NDArray[np.float64]) -> str:
        """One line for a user: the symmetry broken, where the platform of the mirror pose is
        and which branch this pose is (empty when no symmetry is broken)."""
        if not self.broken:
            return ""
        s = self.broken[0]
        image = s.matrix @ np.asarray(platform_position_m, dtype=np.float64)
        mm = ", ".join(f"{v * 1e3:.2f}" for v in image)
        off = ", ".join(f"{v * 1e3:+.2f}" for v in self.offset_m)
        return (f"broken symmetry: the motor angles are symmetric under the {s.describe()} but "
                f"the pose is not; its image under it (platform at ({mm}) mm) is an equally "
                "valid equilibrium, and round-off decides which one a solver reaches; this "
                f"branch: symmetry_branch_m = ({off}) mm")


def _rotation(angle: float) -> NDArray[np.float64]:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _mirror(azimuth: float) -> NDArray[np.float64]:
    """The mirror in the vertical plane through ``z`` at ``azimuth`` [rad]."""
    c, s = math.cos(2.0 * azimuth), math.sin(2.0 * azimuth)
    return np.array([[c, s, 0.0], [s, -c, 0.0], [0.0, 0.0, 1.0]])


def _candidates(params: RobotParams) -> list[tuple[str, NDArray[np.float64]]]:
    n, a0 = params.n_rods, float(params.first_rod_angle)
    out = []
    for k in range(1, n):
        deg = 360.0 * k / n
        name = "half turn about z" if 2 * k == n else f"{deg:g} deg turn about z"
        out.append((name, _rotation(2.0 * math.pi * k / n)))
    for m in range(n):  # the planes through a rod or half way between two
        az = a0 + math.pi * m / n
        normal = np.array([math.cos(az + 0.5 * math.pi), math.sin(az + 0.5 * math.pi)])
        normal = np.where(np.abs(normal) < 1e-12, 0.0, normal)
        out.append((f"mirror in the plane {_plane(normal)}", _mirror(az)))
    return out


def _plane(normal: NDArray[np.float64]) -> str:
    """``x = 0``, ``y = 0`` or ``a x + b y = 0`` of a vertical plane with ``normal`` (2,)."""
    if normal[1] == 0.0:
        return "x = 0"
    if normal[0] == 0.0:
        return "y = 0"
    return f"{normal[0]:.3g} x + {normal[1]:.3g} y = 0"


def robot_symmetries(params: RobotParams) -> list[Symmetry]:
    """The symmetries of the robot ``params`` besides the identity (module doc)."""
    n = params.n_rods
    bases = np.array([params.rod_base(i) for i in range(n)])
    h = np.asarray(params.handedness)
    g = params.simulation.gravity
    gravity = np.zeros(3) if g is None else np.asarray(g, dtype=np.float64)
    scale = max(float(params.circle_radius), 1e-300)
    out = []
    for name, s in _candidates(params):
        images = bases @ s.T
        dist = np.linalg.norm(images[:, None, :] - bases[None, :, :], axis=2)
        perm = np.argmin(dist, axis=1)
        if np.any(dist[np.arange(n), perm] > 1e-9 * scale) or len(set(perm.tolist())) != n:
            continue
        sym = Symmetry(name, s, tuple(int(j) for j in perm))
        if (np.all(h[perm] == sym.det * h) and np.allclose(s @ gravity, gravity, rtol=0.0, atol=1e-12)
                and _imperfections_kept(params, sym)):
            out.append(sym)
    return out


def _imperfections_kept(params: RobotParams, sym: Symmetry) -> bool:
    """The imperfections map onto themselves: rod ``j = perm[i]`` has rod ``i``'s stiffness
    and ``C_eps`` deviations and its motor offset turned by ``det(S)``, and the rods' common
    lean (a rotation vector ``w = (tilt_x, tilt_y, 0)``, an axial vector) is its own image,
    ``det(S) S w = w`` (a lean toward -y keeps the mirror in ``x = 0`` only)."""
    perm = list(sym.perm)
    w = np.array([*params.rod_tilt, 0.0])
    if np.any(w) and not np.allclose(sym.det * (sym.matrix @ w), w, rtol=0.0,
                                     atol=1e-12 * float(np.linalg.norm(w))):
        return False
    for name in ("motor_offset", "rod_C_eps_deviation", "rod_bend_deviation"):
        v = np.asarray(getattr(params, name), dtype=np.float64)
        if v.size == 0:
            continue
        sign = sym.det if name == "motor_offset" else 1.0
        if not np.array_equal(v[perm], sign * v):
            return False
    return True


def command_symmetries(params: RobotParams, angles: Sequence[float] | NDArray[np.float64]
                       ) -> list[Symmetry]:
    """The symmetries of the robot that map the motor ``angles`` [rad] to themselves."""
    phi = np.asarray(angles, dtype=np.float64)
    return [s for s in robot_symmetries(params)
            if np.all(np.abs(phi[list(s.perm)] - s.det * phi) <= ANGLE_TOL)]


def _matrix(q: NDArray[np.float64]) -> NDArray[np.float64]:
    x, y, z, w = (float(v) for v in q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def broken_symmetry(
    params: RobotParams, angles: Sequence[float] | NDArray[np.float64],
    platform_position_m: NDArray[np.float64], platform_quaternion_xyzw: NDArray[np.float64],
    rod_tip_positions_m: NDArray[np.float64],
) -> BrokenSymmetry:
    """Which symmetries of the command ``angles`` [rad] (:func:`command_symmetries`) the pose
    (platform centre [m], platform quaternion body -> base ``xyzw``, rod tips (n, 3) [m])
    breaks: a point further than :data:`POSITION_TOL` from its image, or the platform's
    rotation further than :data:`ROTATION_TOL` from its image (``S R S^T``)."""
    syms = command_symmetries(params, angles)
    p = np.asarray(platform_position_m, dtype=np.float64)
    tips = np.asarray(rod_tip_positions_m, dtype=np.float64)
    rot = _matrix(np.asarray(platform_quaternion_xyzw, dtype=np.float64))
    broken = []
    for s in syms:
        m = s.matrix
        off_p = float(np.linalg.norm(m @ p - p))
        off_tips = float(np.linalg.norm(tips @ m.T - tips[list(s.perm)], axis=1).max(initial=0.0))
        off_rot = float(np.abs(m @ rot @ m.T - rot).max())
        if max(off_p, off_tips) > POSITION_TOL or off_rot > ROTATION_TOL:
            broken.append(s)
    mean = np.mean([p] + [s.matrix @ p for s in syms], axis=0)
    offset = p - mean if broken else np.zeros(3)
    return BrokenSymmetry(tuple(syms), tuple(broken), offset + 0.0)
