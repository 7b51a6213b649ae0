"""Actuation mapping of an HSA robot and the seven motion primitives of Fig. 2(a).

Conventions (robot base frame, see ``docs/primitives.md`` for the table):

* origin at the centre of the circle of rod bases, ``x`` = east, ``y`` = north, ``z`` up from the
  bases toward the platform;
* rod ``i`` is based at the azimuth ``theta_i = first_rod_angle + 2*pi*i/n_rods`` (default
  45 deg + 90 deg * i: NE, NW, SW, SE) with handedness ``h_i`` (default R, L, R, L = +1, -1, +1, -1);
* each rod receives a *command* ``u_i in [0, 1]``, the fraction of the maximum motor angle taken
  along its handedness; the motor angle (rotation of the rod base about the rod's own +z axis,
  right-hand rule, rad) is ``phi_i = h_i * phi_max * u_i`` with ``phi_max = pi`` by default
  (Section II-E: "maximum twist angles of phi_0,max = pi rad").  So a right-handed rod only
  receives angles in ``[0, phi_max]`` and a left-handed one only angles in ``[-phi_max, 0]``:
  both only ever elongate (Eq. 3, ``eps = C_eps * kappa_h >= 0``).

The mapping from a platform configuration to commands (:func:`platform_to_angles`) is::

    u_i = clip( e  -  (b_x cos theta_i + b_y sin theta_i) / sqrt(2)  +  t * h_i / 2 ,  0, 1 )

* ``e in [0, 1]`` -- elongation (common command of all rods);
* ``(b_x, b_y) in [-1, 1]^2`` -- bending: the direction (east, north) toward which the platform
  normal tilts.  A rod on the side *opposite* to the bend direction elongates: bending north
  (``b_y > 0``) lengthens the south rods, which lifts the south edge of the platform and tilts its
  normal toward +y.  The factor ``1/sqrt(2)`` makes a unit cardinal bend a command difference of
  exactly 1 between the two sides for the default 45 deg layout (``|cos|, |sin| = 1/sqrt(2)``);
* ``t in [-1, 1]`` -- twist, positive = counter-clockwise seen from above (about +z).  As in the
  caption of Fig. 2, counter-clockwise twisting actuates the right-handed rods more than the
  left-handed ones (``+t/2`` for R, ``-t/2`` for L).

The primitives of Fig. 2(a) are special cases (magnitude ``m in [0, 1]``)::

    elongation  e = m                          -> all four rods at u = m
    bend_north  e = m/2, b_y = +m              -> the two south rods at u = m, north rods at 0
    bend_south  e = m/2, b_y = -m              -> north rods at m, south rods at 0
    bend_east   e = m/2, b_x = +m              -> west rods at m, east rods at 0
    bend_west   e = m/2, b_x = -m              -> east rods at m, west rods at 0
    twist_ccw   e = m/2, t = +m                -> right-handed rods at m, left-handed at 0
    twist_cw    e = m/2, t = -m                -> left-handed rods at m, right-handed at 0

For elongation and bending each side holds one R and one L rod at the same command, so the sum of
the motor angles (the sum of the "handed torques" of Fig. 2(a)) is zero; for twisting it is
``+-2 m phi_max``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params.base import MAX_MOTOR_ANGLE, ParameterError

if TYPE_CHECKING:  # pragma: no cover
    from hsa_elastica.params import RobotParams

__all__ = [
    "PRIMITIVES",
    "PlatformCommand",
    "primitive_angles",
    "primitive_commands",
    "platform_to_angles",
    "platform_to_commands",
    "rod_layout",
    "commands_to_angles",
]

DEFAULT_PHI_MAX = math.pi


@dataclass(frozen=True)
class PlatformCommand:
    """A platform configuration per unit primitive magnitude (dimensionless).

    Attributes are the arguments of :func:`platform_to_angles`: ``elongation`` in [0, 1],
    ``bend_x``/``bend_y`` in [-1, 1] (direction the platform normal tilts toward, east/north),
    ``twist`` in [-1, 1] (positive = counter-clockwise about +z).
    """

    elongation: float = 0.0
    bend_x: float = 0.0
    bend_y: float = 0.0
    twist: float = 0.0

    def scaled(self, magnitude: float) -> "PlatformCommand":
        return PlatformCommand(
            self.elongation * magnitude,
            self.bend_x * magnitude,
            self.bend_y * magnitude,
            self.twist * magnitude,
        )


#: The seven motion primitives of Fig. 2(a) as platform commands at magnitude 1.
PRIMITIVES: dict[str, PlatformCommand] = {
    "elongation": PlatformCommand(elongation=1.0),
    "bend_north": PlatformCommand(elongation=0.5, bend_y=1.0),
    "bend_south": PlatformCommand(elongation=0.5, bend_y=-1.0),
    "bend_east": PlatformCommand(elongation=0.5, bend_x=1.0),
    "bend_west": PlatformCommand(elongation=0.5, bend_x=-1.0),
    "twist_cw": PlatformCommand(elongation=0.5, twist=-1.0),
    "twist_ccw": PlatformCommand(elongation=0.5, twist=1.0),
}


def _default_params() -> "RobotParams":
    from hsa_elastica.params import RobotParams

    return RobotParams()


def _check_range(name: str, value: float, lo: float, hi: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} = {value!r} is invalid: must be a number in [{lo}, {hi}]") from None
    if not math.isfinite(v) or v < lo or v > hi:
        raise ValueError(f"{name} = {value!r} is invalid: must be a finite number in [{lo}, {hi}]")
    return v


def _check_phi_max(phi_max: float) -> float:
    """``phi_max`` [rad] in ``(0, MAX_MOTOR_ANGLE]``: the angles made from it are motor angles
    (:func:`~hsa_elastica.params.check_motor_angles`)."""
    try:
        v = float(phi_max)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v) or v <= 0.0 or v > MAX_MOTOR_ANGLE:
        raise ParameterError(
            f"phi_max = {phi_max!r} is invalid: must be a finite number in "
            f"(0, {MAX_MOTOR_ANGLE:.6g}] rad (MAX_MOTOR_ANGLE)"
        )
    return v


def rod_layout(params: "RobotParams | None" = None) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Azimuths ``theta_i`` (rad, from +x = east toward +y = north) and handedness ``h_i`` (±1)
    of the rods of ``params`` (default: :class:`RobotParams` defaults)."""
    p = _default_params() if params is None else params
    n = int(p.n_rods)
    theta = float(p.first_rod_angle) + 2.0 * np.pi * np.arange(n) / n
    handedness = np.asarray(p.handedness, dtype=np.int64)
    if handedness.shape != (n,):
        raise ValueError(
            f"RobotParams.handedness has {handedness.size} entries: must have n_rods = {n}"
        )
    return theta, handedness


def platform_to_commands(
    elongation: float = 0.0,
    bend_x: float = 0.0,
    bend_y: float = 0.0,
    twist: float = 0.0,
    params: "RobotParams | None" = None,
) -> NDArray[np.float64]:
    """Per-rod commands ``u_i in [0, 1]`` (fraction of ``phi_max`` along the handedness).

    ``u_i = clip(e - (b_x cos theta_i + b_y sin theta_i)/sqrt(2) + t h_i / 2, 0, 1)``; see the
    module docstring for the meaning and sign of each input.

    Raises
    ------
    ValueError
        if ``elongation`` is outside [0, 1] or ``bend_x``, ``bend_y``, ``twist`` outside [-1, 1].
    """
    e = _check_range("elongation", elongation, 0.0, 1.0)
    bx = _check_range("bend_x", bend_x, -1.0, 1.0)
    by = _check_range("bend_y", bend_y, -1.0, 1.0)
    t = _check_range("twist", twist, -1.0, 1.0)
    theta, h = rod_layout(params)
    u = e - (bx * np.cos(theta) + by * np.sin(theta)) / math.sqrt(2.0) + 0.5 * t * h
    # round-off guard (e.g. cos(3*pi/4)*sqrt(2) != -1 exactly) before clipping to the range
    u = np.where(np.abs(u) < 1e-12, 0.0, u)
    return np.clip(u, 0.0, 1.0)


def commands_to_angles(
    commands: Sequence[float] | NDArray[np.float64],
    params: "RobotParams | None" = None,
    *,
    phi_max: float = DEFAULT_PHI_MAX,
) -> NDArray[np.float64]:
    """Motor angles ``phi_i = h_i * phi_max * u_i`` (rad) from commands ``u_i in [0, 1]``."""
    pm = _check_phi_max(phi_max)
    _, h = rod_layout(params)
    u = np.asarray(commands, dtype=np.float64)
    if u.shape != h.shape:
        raise ValueError(f"commands has shape {u.shape}: must have one entry per rod ({h.size})")
    for i, ui in enumerate(u):
        _check_range(f"commands[{i}]", float(ui), 0.0, 1.0)
    return h * pm * u + 0.0  # + 0.0 turns -0.0 (u = 0 on a left-handed rod) into 0.0


def platform_to_angles(
    elongation: float = 0.0,
    bend_x: float = 0.0,
    bend_y: float = 0.0,
    twist: float = 0.0,
    params: "RobotParams | None" = None,
    *,
    phi_max: float = DEFAULT_PHI_MAX,
) -> NDArray[np.float64]:
    """Motor angles (rad, about each rod's +z) for a platform configuration.

    ``phi_i = h_i * phi_max * u_i`` with ``u_i`` from :func:`platform_to_commands`. The result
    never leaves ``[0, phi_max]`` along each rod's handedness.
    """
    u = platform_to_commands(elongation, bend_x, bend_y, twist, params)
    return commands_to_angles(u, params, phi_max=phi_max)


def _check_primitive(name: str, magnitude: float) -> tuple[PlatformCommand, float]:
    if name not in PRIMITIVES:
        allowed = ", ".join(PRIMITIVES)
        raise ValueError(f"unknown primitive {name!r}: must be one of {allowed}")
    m = _check_range("magnitude", magnitude, 0.0, 1.0)
    return PRIMITIVES[name], m


def primitive_commands(
    name: str, magnitude: float = 1.0, params: "RobotParams | None" = None
) -> NDArray[np.float64]:
    """Per-rod commands ``u_i in [0, 1]`` of the motion primitive ``name`` (Fig. 2(a))."""
    cmd, m = _check_primitive(name, magnitude)
    c = cmd.scaled(m)
    return platform_to_commands(c.elongation, c.bend_x, c.bend_y, c.twist, params)


def primitive_angles(
    name: str,
    magnitude: float = 1.0,
    params: "RobotParams | None" = None,
    *,
    phi_max: float = DEFAULT_PHI_MAX,
) -> NDArray[np.float64]:
    """Motor angles (rad) of the motion primitive ``name`` at ``magnitude in [0, 1]``.

    ``name`` is one of :data:`PRIMITIVES` (``elongation``, ``bend_north``, ``bend_south``,
    ``bend_east``, ``bend_west``, ``twist_cw``, ``twist_ccw``).

    Raises
    ------
    ValueError
        naming the primitive or the magnitude and the allowed values.
    """
    u = primitive_commands(name, magnitude, params)
    return commands_to_angles(u, params, phi_max=phi_max)

