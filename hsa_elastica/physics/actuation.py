"""Proximal actuation and distal twist lock of HSA rods (paper Section II-D).

* :class:`Ramp` -- time profiles ``t -> value`` for motor angles [rad] and torques [N m]
  (:class:`Constant` for a number).
* :class:`MotorAngleBC` -- option (a) of the paper: the base node is held at its initial position
  and the base element is turned about the rod's own axis to the motor angle ``phi(t)``.
* :class:`FreeTwistBC` + :class:`BaseTwistTorque` -- option (b): the base may only twist about
  its initial axis, driven by a torque ``tau(t)``.
* :class:`DistalTwistLockBC` -- the last element may move and tilt but not twist (the paper's
  characterization experiments, Section II-C).
* :func:`base_twist_angle` -- signed twist of element 0 about its axis.

Conventions (docs/architecture.md): directors are stored as rows (``Q`` maps lab -> local,
row 2 = d3 = rod axis); the motor angle ``phi`` is a right-handed rotation about the rod's own
+z axis, imposed as ``Q0(phi) = R_z(phi)^T @ Q0_initial`` (directors rotated by ``+phi`` about
d3).  For a rod built along lab +z (every rod of the robot) this equals the contract's
``Q0_initial @ R_z(phi)^T`` because both rotations are about the same axis.  PyElastica's
``omega`` and external torques are in the local (material) frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Union

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.boundary_conditions import ConstraintBase
from elastica.external_forces import NoForces
from elastica.typing import RodType

from hsa_elastica.compat import inv_rotate
from hsa_elastica.params import invalid_parameter, is_finite_number

__all__ = [
    "Ramp",
    "AngleDrive",
    "TorqueDrive",
    "Constant",
    "MotorAngleBC",
    "FreeTwistBC",
    "BaseTwistTorque",
    "DistalTwistLockBC",
    "twist_lock_gradient",
    "base_twist_angle",
    "twist_about_axis",
    "remove_twist",
    "rotate_about_own_axis",
    "free_twist_director",
    "winding_defect",
]

ScalarOrSchedule = Union[float, Callable[[float], float]]

_SHAPES = ("linear", "smooth")


_invalid = invalid_parameter
_finite = is_finite_number


# --------------------------------------------------------------------------------------------
# time profiles
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ramp:
    """Ramp from ``start`` to ``target`` over ``duration`` seconds after ``delay`` seconds.

    ``value(t) = start + (target - start) * s((t - delay) / duration)`` with ``s`` clamped to
    [0, 1] outside the ramp.  ``shape="linear"``: ``s(x) = x``.  ``shape="smooth"``: the C2
    quintic smoothstep ``s(x) = 10 x^3 - 15 x^4 + 6 x^5`` (zero slope and zero curvature at both
    ends, so the imposed acceleration has no jump).  ``duration = 0`` is a step at ``delay``.
    Units are those of ``target`` (rad for motor angles, N m for torques); times in s.
    """

    target: float
    duration: float
    shape: str = "smooth"
    start: float = 0.0
    delay: float = 0.0

    def __post_init__(self) -> None:
        for name in ("target", "start"):
            value = getattr(self, name)
            if isinstance(value, bool) or not _finite(value):
                raise _invalid("Ramp", name, value, "a finite number")
            object.__setattr__(self, name, float(value))
        for name in ("duration", "delay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not _finite(value) or float(value) < 0.0:
                raise _invalid("Ramp", name, value, "a finite number >= 0 (s)")
            object.__setattr__(self, name, float(value))
        if self.shape not in _SHAPES:
            raise _invalid("Ramp", "shape", self.shape, "'linear' or 'smooth'")

    def _progress(self, t: float) -> tuple[float, float]:
        """Return (s, ds/dt) at time t."""
        if self.duration == 0.0:
            return (1.0 if t >= self.delay else 0.0), 0.0
        x = (t - self.delay) / self.duration
        if x <= 0.0:
            return 0.0, 0.0
        if x >= 1.0:
            return 1.0, 0.0
        if self.shape == "linear":
            return x, 1.0 / self.duration
        s = x * x * x * (10.0 + x * (-15.0 + 6.0 * x))
        ds = 30.0 * x * x * (1.0 - x) * (1.0 - x) / self.duration
        return s, ds

    def __call__(self, t: float) -> float:
        s, _ = self._progress(float(t))
        return self.start + (self.target - self.start) * s

    def rate(self, t: float) -> float:
        """Time derivative of the ramp [unit/s] (0 outside the ramp and for a step)."""
        _, ds = self._progress(float(t))
        return (self.target - self.start) * ds


@dataclass(frozen=True)
class Constant:
    """The schedule ``t -> value`` of a number given where a schedule is expected (a plain
    record, so that state snapshots can write it to a file)."""

    value: float

    def __call__(self, t: float) -> float:
        return self.value


def _schedule(owner: str, name: str, value: ScalarOrSchedule) -> Callable[[float], float]:
    if callable(value):
        return value
    if isinstance(value, bool) or not _finite(value):
        raise _invalid(owner, name, value, "a finite number or a callable t -> value")
    return Constant(float(value))


def motor_schedule(
    owner: str, value: ScalarOrSchedule
) -> tuple[Callable[[float], float], Callable[[float], float] | None]:
    """``(schedule, rate)`` of a motor angle: a number [rad] or a callable ``t -> phi``; the
    rate is the schedule's ``rate`` method if it has one (as :class:`Ramp`), else None."""
    rate = getattr(value, "rate", None)
    return _schedule(owner, "angle", value), (rate if callable(rate) else None)


class AngleDrive:
    """The motor-angle command of an operator (:class:`MotorAngleBC`, the motor mounts): the
    ``angle`` schedule and its ``angle_rate``; the class's ``_owner`` names it in errors."""

    _owner = "AngleDrive"
    _angle: Callable[[float], float]
    #: the schedule's ``rate`` method (rad/s), None if it has none
    angle_rate: Callable[[float], float] | None = None

    @property
    def angle(self) -> Callable[[float], float]:
        """Motor angle schedule ``t [s] -> phi [rad]`` (assign a number or a callable)."""
        return self._angle

    @angle.setter
    def angle(self, value: ScalarOrSchedule) -> None:
        self._angle, self.angle_rate = motor_schedule(self._owner, value)


class TorqueDrive:
    """The motor-torque command of an operator (the torque-driven mounts): the ``torque``
    schedule; the class's ``_owner`` names it in errors."""

    _owner = "TorqueDrive"
    _torque: Callable[[float], float]

    @property
    def torque(self) -> Callable[[float], float]:
        """Motor torque schedule ``t [s] -> tau [N m]`` (assign a number or a callable)."""
        return self._torque

    @torque.setter
    def torque(self, value: ScalarOrSchedule) -> None:
        self._torque = _schedule(self._owner, "torque", value)


def _single_index(owner: str, name: str, idx: Any) -> int:
    arr = np.asarray(idx, dtype=np.int64).reshape(-1)
    if arr.size != 1:
        raise _invalid(owner, name, tuple(arr.tolist()), "exactly one index, e.g. (0,)")
    return int(arr[0])


def _director_matrix(fixed_director: NDArray[np.float64]) -> NDArray[np.float64]:
    """C-contiguous float64 (3, 3) copy of a constrained director (the reference)."""
    return np.ascontiguousarray(np.array(fixed_director, dtype=np.float64).reshape(3, 3))


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------


@njit(cache=True)  # type: ignore[misc]
def rotate_about_own_axis(
    reference: NDArray[np.float64], angle: float, out: NDArray[np.float64]
) -> None:
    """``out = R_z(angle)^T @ reference``: directors turned by ``+angle`` about their own d3.

    ``reference`` and ``out`` are (3, 3) director matrices (rows d1, d2, d3); ``angle`` in rad.
    """
    c = math.cos(angle)
    s = math.sin(angle)
    for j in range(3):
        d1 = reference[0, j]
        d2 = reference[1, j]
        out[0, j] = c * d1 + s * d2
        out[1, j] = -s * d1 + c * d2
        out[2, j] = reference[2, j]


@njit(cache=True)  # type: ignore[misc]
def remove_twist(
    reference: NDArray[np.float64], current: NDArray[np.float64], out: NDArray[np.float64]
) -> None:
    """Swing part of ``current`` relative to ``reference`` (swing-twist decomposition).

    ``out`` has the axis d3 of ``current`` and is obtained from ``reference`` by the minimal
    rotation taking the reference d3 to the current d3, i.e. ``current`` with its twist about
    d3 (relative to ``reference``) removed.  If d3 is reversed (singular case) ``out`` is
    ``current``.
    """
    a0 = reference[2, 0]
    a1 = reference[2, 1]
    a2 = reference[2, 2]
    b0 = current[2, 0]
    b1 = current[2, 1]
    b2 = current[2, 2]
    nb = math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    b0 /= nb
    b1 /= nb
    b2 /= nb
    c = a0 * b0 + a1 * b1 + a2 * b2
    if 1.0 + c < 1e-12:
        for i in range(3):
            for j in range(3):
                out[i, j] = current[i, j]
        return
    v0 = a1 * b2 - a2 * b1
    v1 = a2 * b0 - a0 * b2
    v2 = a0 * b1 - a1 * b0
    f = 1.0 / (1.0 + c)
    # Rodrigues: R = I + [v]x + [v]x^2 / (1 + c), maps a to b
    r00 = 1.0 - f * (v1 * v1 + v2 * v2)
    r11 = 1.0 - f * (v0 * v0 + v2 * v2)
    r22 = 1.0 - f * (v0 * v0 + v1 * v1)
    r01 = -v2 + f * v0 * v1
    r10 = v2 + f * v0 * v1
    r02 = v1 + f * v0 * v2
    r20 = -v1 + f * v0 * v2
    r12 = -v0 + f * v1 * v2
    r21 = v0 + f * v1 * v2
    for i in range(3):
        x = reference[i, 0]
        y = reference[i, 1]
        z = reference[i, 2]
        out[i, 0] = r00 * x + r01 * y + r02 * z
        out[i, 1] = r10 * x + r11 * y + r12 * z
        out[i, 2] = r20 * x + r21 * y + r22 * z


@njit(cache=True)  # type: ignore[misc]
def twist_lock_gradient(reference: NDArray[np.float64],
                        current: NDArray[np.float64]) -> tuple[float, float]:
    """The derivative of the twist [rad] that :func:`remove_twist` gives a locked director
    ``current`` (its own swing part relative to ``reference``) when it is turned about its
    own x and y: for ``exp(-[w]) current``, ``w = (w_x, w_y, 0)`` (the static solver's
    increment, a lab rotation ``theta = w_x d1 + w_y d2``), the re-locked director is
    ``exp(-[tau e_3]) exp(-[w]) current`` with ``tau = -(a . theta) / (1 + a . d3)`` to first
    order, ``a`` the reference's d3 (the minimal rotation from ``a`` turns about its moving end
    by ``(a x d3) . dd3 / (1 + a . d3)``, with ``dd3 = theta x d3``; the turn of
    ``exp(-[w])`` about d3 is zero).  Returns ``(d tau / d w_x, d tau / d w_y)``; zero when
    ``d3 = a`` (an untilted element) or at the lock's singular reversal."""
    c = reference[2, 0] * current[2, 0] + reference[2, 1] * current[2, 1] \
        + reference[2, 2] * current[2, 2]
    if 1.0 + c < 1e-12:
        return 0.0, 0.0
    gx = reference[2, 0] * current[0, 0] + reference[2, 1] * current[0, 1] \
        + reference[2, 2] * current[0, 2]
    gy = reference[2, 0] * current[1, 0] + reference[2, 1] * current[1, 1] \
        + reference[2, 2] * current[1, 2]
    return -gx / (1.0 + c), -gy / (1.0 + c)


@njit(cache=True)  # type: ignore[misc]
def twist_about_axis(reference: NDArray[np.float64], current: NDArray[np.float64]) -> float:
    """Signed twist angle [rad] of ``current`` about its own d3 relative to ``reference``.

    Swing-twist decomposition: the swing (tilt of d3) is removed first, the remaining rotation
    ``current = R_z(psi)^T @ swing`` gives ``psi`` in (-pi, pi] (right-hand rule about d3).
    """
    swing = np.empty((3, 3))
    remove_twist(reference, current, swing)
    m00 = 0.0
    m01 = 0.0
    m10 = 0.0
    m11 = 0.0
    for j in range(3):
        m00 += current[0, j] * swing[0, j]
        m01 += current[0, j] * swing[1, j]
        m10 += current[1, j] * swing[0, j]
        m11 += current[1, j] * swing[1, j]
    return math.atan2(m01 - m10, m00 + m11)


@njit(cache=True)  # type: ignore[misc]
def free_twist_director(
    reference: NDArray[np.float64], current: NDArray[np.float64], out: NDArray[np.float64]
) -> None:
    """``out`` = ``reference`` turned about its own d3 by the twist of ``current`` (the
    director :class:`FreeTwistBC` imposes: roll and pitch removed, twist kept)."""
    psi = twist_about_axis(reference, current)
    rotate_about_own_axis(reference, psi, out)


@njit(cache=True)  # type: ignore[misc]
def winding_defect(
    reference: NDArray[np.float64], directors: NDArray[np.float64], base_angle: float
) -> float:
    """Twist the rod has lost [rad] against its motor: ``phi + sum_k theta_k - psi_tip``.

    ``directors`` (3, 3, n) are the rod's element directors (C-contiguous), ``reference`` the
    (3, 3) initial director of its elements (a straight printed rod: all equal), ``base_angle``
    the motor angle ``phi`` [rad] imposed on element 0 (:class:`MotorAngleBC`).
    ``theta_k = log(Q_{k+1} Q_k^T)_z`` are the twist angles between neighbouring elements (the
    rotation vectors of the internal couples and of Eq. 4, each the principal value, of
    magnitude at most pi) and ``psi_tip`` the twist of the last element about its axis relative to
    ``reference`` (:func:`twist_about_axis`, in (-pi, pi]).

    The motor turns the directors by ``+phi`` about d3, so along an intact rod the neighbour
    twists add up to ``-(phi - psi_tip)`` and the defect is zero up to the writhe of the
    centreline (well below pi for a rod that is not coiled).  The rotation vectors are stored
    modulo a full turn: a rod whose neighbouring elements turned by more than pi against each
    other (a violent buckle, or a continuation step of more than pi) is an equilibrium of the
    same discrete equations with ``2 pi`` less twist, and its defect is a multiple of ``2 pi``.
    Valid while the last element turns by less than pi (a tip held by a platform joint).
    """
    n = directors.shape[2]
    total = 0.0
    if n > 1:
        theta = inv_rotate(directors)
        for k in range(n - 1):
            total += theta[2, k]
    tip = np.ascontiguousarray(directors[:, :, n - 1])
    return base_angle + total - twist_about_axis(reference, tip)  # type: ignore[no-any-return]


def base_twist_angle(rod: RodType, reference_directors: NDArray[np.float64]) -> float:
    """Signed twist angle [rad] of element 0 about its own +z axis (right-hand rule).

    ``reference_directors`` is the (3, 3) initial director of element 0 or the (3, 3, n) initial
    director collection.  The result is the principal value in (-pi, pi]; tilt of the element
    (swing) does not contribute.  With :class:`MotorAngleBC` it equals the motor angle modulo
    2 pi.
    """
    ref = np.asarray(reference_directors, dtype=np.float64)
    if ref.ndim == 3:
        ref = ref[..., 0]
    if ref.shape != (3, 3):
        raise ValueError(
            f"base_twist_angle.reference_directors has shape {ref.shape}: must be (3, 3) or "
            f"(3, 3, n)"
        )
    current = np.ascontiguousarray(rod.director_collection[..., 0])
    return float(twist_about_axis(np.ascontiguousarray(ref), current))


# --------------------------------------------------------------------------------------------
# boundary conditions
# --------------------------------------------------------------------------------------------


class _ProximalBC(ConstraintBase):
    """Base node held at its initial position, base element oriented by the subclass.

    Resolves the single constrained node/element index and keeps the initial position and
    director (the reference) plus a (3, 3) work array for the imposed director.
    """

    _owner = "_ProximalBC"  # class name in error messages

    def __init__(
        self,
        fixed_position: NDArray[np.float64],
        fixed_director: NDArray[np.float64],
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._position_idx = _single_index(
            self._owner, "constrained_position_idx", self.constrained_position_idx
        )
        self._director_idx = _single_index(
            self._owner, "constrained_director_idx", self.constrained_director_idx
        )
        self.fixed_position = np.array(fixed_position, dtype=np.float64).reshape(3)
        self.reference_director = _director_matrix(fixed_director)
        self._director = np.empty((3, 3))


class MotorAngleBC(AngleDrive, _ProximalBC):
    """Motor-driven base of an HSA rod (Section II-D, option (a)).

    The base node keeps its initial position and the base element is the initial orientation
    turned about the rod's own axis by ``phi(t)``: ``Q0 = R_z(phi)^T @ Q0_initial``.  Velocity
    of the base node is set to zero; the base element's angular velocity (local frame) is set
    to ``(0, 0, phi'(t))`` when ``angle`` provides a ``rate(t)`` method (as :class:`Ramp` does)
    and to zero otherwise (the paper sets it to zero; the orientation itself is imposed each
    step either way, so this only makes the rate consistent with the imposed motion during a
    ramp).

    Usage::

        sim.constrain(rod).using(MotorAngleBC, constrained_position_idx=(0,),
                                 constrained_director_idx=(0,), angle=Ramp(target=phi,
                                 duration=1.0))

    ``angle``: a float [rad] (held constant) or a callable ``t [s] -> phi [rad]``.  It may be
    reassigned at any time (``bc.angle = Ramp(...)`` or a number): the assignment validates the
    value and sets :attr:`angle_rate` from the new schedule's ``rate`` method (None if it has
    none); every path, including the fused stepper, reads the schedule at each step from then on.
    """

    _owner = "MotorAngleBC"

    def __init__(
        self,
        fixed_position: NDArray[np.float64],
        fixed_director: NDArray[np.float64],
        *,
        angle: ScalarOrSchedule,
        **kwargs: Any,
    ) -> None:
        super().__init__(fixed_position, fixed_director, **kwargs)
        self.angle = angle  # type: ignore[assignment]

    def constrain_values(self, system: RodType, time: np.float64) -> None:
        rotate_about_own_axis(self.reference_director, float(self.angle(float(time))), self._director)
        system.position_collection[..., self._position_idx] = self.fixed_position
        system.director_collection[..., self._director_idx] = self._director

    def constrain_rates(self, system: RodType, time: np.float64) -> None:
        system.velocity_collection[..., self._position_idx] = 0.0
        system.omega_collection[..., self._director_idx] = 0.0
        if self.angle_rate is not None:
            system.omega_collection[2, self._director_idx] = float(self.angle_rate(float(time)))


class FreeTwistBC(_ProximalBC):
    """Torque-driven base (Section II-D, option (b)): position fixed, only twist is free.

    The base node keeps its initial position (velocity 0).  The base element keeps its initial
    axis: roll and pitch rates are removed (``omega_x = omega_y = 0``, local frame) and, against
    drift, the director is re-projected each step onto a pure rotation about the initial d3,
    ``Q0 = R_z(psi)^T @ Q0_initial`` with ``psi`` the current twist angle.  Use with
    :class:`BaseTwistTorque`.
    """

    _owner = "FreeTwistBC"

    def constrain_values(self, system: RodType, time: np.float64) -> None:
        current = np.ascontiguousarray(system.director_collection[..., self._director_idx])
        free_twist_director(self.reference_director, current, self._director)
        system.position_collection[..., self._position_idx] = self.fixed_position
        system.director_collection[..., self._director_idx] = self._director

    def constrain_rates(self, system: RodType, time: np.float64) -> None:
        system.velocity_collection[..., self._position_idx] = 0.0
        system.omega_collection[0, self._director_idx] = 0.0
        system.omega_collection[1, self._director_idx] = 0.0


class DistalTwistLockBC(ConstraintBase):
    """The distal element may move and tilt but not twist about its own axis (Section II-C).

    ``constrain_rates`` sets the local ``omega_z`` of the element to 0; ``constrain_values``
    removes any twist drift by replacing the director with its swing part relative to the
    initial director (swing-twist decomposition, see :func:`remove_twist`).

    Usage::

        sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    """

    def __init__(self, fixed_director: NDArray[np.float64], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if np.asarray(self.constrained_position_idx).size != 0:
            raise _invalid(
                "DistalTwistLockBC",
                "constrained_position_idx",
                tuple(np.asarray(self.constrained_position_idx).tolist()),
                "empty: the distal end is free to move",
            )
        self._director_idx = _single_index(
            "DistalTwistLockBC", "constrained_director_idx", self.constrained_director_idx
        )
        self.reference_director = _director_matrix(fixed_director)
        self._director = np.empty((3, 3))

    def constrain_values(self, system: RodType, time: np.float64) -> None:
        current = np.ascontiguousarray(system.director_collection[..., self._director_idx])
        remove_twist(self.reference_director, current, self._director)
        system.director_collection[..., self._director_idx] = self._director

    def constrain_rates(self, system: RodType, time: np.float64) -> None:
        system.omega_collection[2, self._director_idx] = 0.0


class BaseTwistTorque(NoForces):
    """Twist torque ``tau(t)`` [N m] about the rod axis on element 0 (Section II-D, option (b)).

    PyElastica external torques are in the local frame, so the torque is added to
    ``external_torques[2, 0]`` (local z = d3 = rod axis, right-hand rule, base -> tip).

    ``torque``: a float [N m] (constant) or a callable ``t [s] -> tau [N m]`` such as
    :class:`Ramp`.
    """

    def __init__(self, *, torque: ScalarOrSchedule, element_index: int = 0) -> None:
        super().__init__()
        self.torque = _schedule("BaseTwistTorque", "torque", torque)
        if isinstance(element_index, bool) or not isinstance(element_index, (int, np.integer)):
            raise _invalid("BaseTwistTorque", "element_index", element_index, "an integer")
        self.element_index = int(element_index)

    def apply_torques(self, system: RodType, time: np.float64 = np.float64(0.0)) -> None:
        system.external_torques[2, self.element_index] += float(self.torque(float(time)))
