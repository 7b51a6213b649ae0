"""Motors carried by a moving rigid body (Section II-D on a moving body): the joint of
Eq. 6-7 (:mod:`hsa_elastica.physics.joints`) at a rod's base, turned by the motor.

* :class:`MotorMount` -- motor-angle drive: the rest orientation of the joint is turned by the
  motor angle about the rod's own axis (kernel :func:`mount_rest_orientation`).
* :class:`TwistMount` -- torque drive: the base may turn freely about its own axis relative to
  the body (the rest orientation follows its present twist, kernel
  :func:`free_twist_rest_orientation`), the motor torque acts on the rod about its axis and
  its reaction on the body (kernel :func:`motor_torque_kernel`).

Both are ``ConnectionBase`` operators connecting ``first_rod`` = the rod
(``first_connect_idx=0``: base node and base element) to ``second_rod`` = the body
(``second_connect_idx=0``), with the gains and attachment point of :class:`PlatformJoint`; the
compiled engines evaluate the same kernels (:mod:`hsa_elastica.physics.forces`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from elastica.typing import ConnectionIndex
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.actuation import (
    AngleDrive,
    ScalarOrSchedule,
    TorqueDrive,
    twist_about_axis,
)
from hsa_elastica.physics.joint_tangent import (
    BODY_ROT,
    ELEMENT,
    frame_block,
    joint_torque_tangent,
    skew_add,
)
from hsa_elastica.physics.joints import PlatformJoint
# re-exported: the motor torque kernel is shared with the rigid mounts
from hsa_elastica.physics.mount_kernels import SystemLike, motor_torque_kernel, system_arrays
from hsa_elastica.physics.rotations import rotation_matrix_to_quaternion

__all__ = [
    "MotorMount",
    "TwistMount",
    "mount_rest_orientation",
    "mount_torque_tangent",
    "twist_mount_torque_tangent",
    "free_twist_rest_orientation",
    "motor_torque_kernel",
]


# --------------------------------------------------------------------------------------------
# motor mount: the joint at a rod's base, on a moving rigid body
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def mount_rest_orientation(
    base_orientation: NDArray[np.float64], angle: float, out: NDArray[np.float64]
) -> None:
    """``out = C0 R_z(angle)``: rest relative orientation of a motor mount at motor angle
    ``angle`` [rad].

    ``C0 = Q_b Q_e^T`` is the body / base-element relative orientation at motor angle 0.  The
    motor turns the base element about its own d3 as :class:`~hsa_elastica.physics.actuation.
    MotorAngleBC` does (``Q_e(phi) = R_z(phi)^T Q_e``), so the rest relative orientation is
    ``Q_b Q_e(phi)^T = C0 R_z(phi)`` with ``R_z = [[c, -s, 0], [s, c, 0], [0, 0, 1]]``.
    """
    c = math.cos(angle)
    s = math.sin(angle)
    for i in range(3):
        a0 = base_orientation[i, 0]
        a1 = base_orientation[i, 1]
        out[i, 0] = c * a0 + s * a1
        out[i, 1] = -s * a0 + c * a1
        out[i, 2] = base_orientation[i, 2]


@njit(cache=True)  # type: ignore[misc]
def mount_torque_tangent(
    rod: SystemLike, element: int, body: SystemLike, b: int,
    base_orientation: NDArray[np.float64], angle: float, k_tau: float, nu_tau: float,
    rest_out: NDArray[np.float64], out: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Consistent tangent of a :class:`MotorMount`'s couple (Eq. 7 toward the rest orientation
    ``C0 R_z(angle)``, written to ``rest_out`` by :func:`mount_rest_orientation`) added into
    ``out`` (12, 12; rows and columns as
    :func:`~hsa_elastica.physics.joint_tangent.joint_torque_tangent`) [N m/rad].  The motor
    angle is an input, not an unknown; the mount's force is the joint's (Eq. 6,
    :func:`~hsa_elastica.physics.joint_tangent.joint_force_tangent`).  ``work``:
    :func:`~hsa_elastica.physics.joint_tangent.tangent_scratch`.  The derivative wrt the
    velocities is the joint couple's,
    :func:`~hsa_elastica.physics.joint_tangent.joint_torque_velocity_tangent` (the rest
    orientation holds no velocity), as is the :class:`TwistMount`'s."""
    mount_rest_orientation(base_orientation, angle, rest_out)
    joint_torque_tangent(rod, element, body, b, rest_out, k_tau, nu_tau, out, work)


class _BaseJoint(PlatformJoint):
    """The joint of Eq. 6-7 at a rod's base whose rest orientation is turned about the rod's
    axis (by the motor angle, or by the free twist): the orientation at the first call is kept
    as ``base_orientation`` (``C0``), the rest orientation is rewritten at every call."""

    #: body / base-element relative orientation at angle 0 (set at the first call)
    base_orientation: NDArray[np.float64] | None = None

    def _resolve(
        self, system_one: Any, index_one: ConnectionIndex, system_two: Any,
        index_two: ConnectionIndex,
    ) -> None:
        super()._resolve(system_one, index_one, system_two, index_two)
        self.base_orientation = self.rest_relative_orientation
        self.rest_relative_orientation = np.empty((3, 3))


class MotorMount(AngleDrive, _BaseJoint):
    """A motor carried by a rigid body, driving a rod's base (Section II-D on a moving body).

    The rod's base node and base element are tied to an attachment point on a rigid body (the
    platform of a lower stage, or any PyElastica rigid body) by the spring-damper joint of
    Eq. 6-7 (the kernels of :class:`PlatformJoint`), with the rest orientation turned by the
    motor angle ``phi(t)`` about the rod's own axis: ``C(phi) = C0 R_z(phi)``
    (:func:`mount_rest_orientation`; ``C0`` is the body / base-element orientation at the first
    call, i.e. as built, at motor angle 0).  So the base follows the body's position and
    orientation, the motor angle is about the rod's own axis in the body frame, and the
    reaction force and torque go to the body by construction (equal and opposite, Newton's
    third law).  Compared with :class:`~hsa_elastica.physics.actuation.MotorAngleBC`
    (a rigid, lab-fixed base) the mount is as compliant as the rod-tip joint: the base moves
    by ``|F| / k_F`` [m] and turns by ``|tau| / k_tau`` [rad] under a base load ``F``, ``tau``.
    The damping term ``nu_tau`` acts on the whole relative angular velocity, including the
    motor's own rate ``phi'(t)`` while it turns.

    Connect with ``first_rod`` = the rod (``first_connect_idx=0``: base node and element) and
    ``second_rod`` = the body (``second_connect_idx=0``)::

        sim.connect(first_rod=rod, second_rod=body, first_connect_idx=0, second_connect_idx=0
            ).using(MotorMount, k_F=5e5, k_tau=20.0, attachment_point=(x, y, h), angle=phi)

    Parameters (keyword-only): those of :class:`PlatformJoint` (``attachment_point`` in the
    body's local frame [m]) and ``angle``: a float [rad] (held) or a callable ``t [s] -> phi
    [rad]`` (such as :class:`~hsa_elastica.physics.actuation.Ramp`), reassignable at any time
    like ``MotorAngleBC.angle`` (the fused stepper reads it at every call).
    """

    _owner = "MotorMount"

    def __init__(self, *, angle: ScalarOrSchedule = 0.0, **joint: Any) -> None:
        super().__init__(**joint)
        self.angle = angle  # type: ignore[assignment]

    def _torques(self, system_one: Any, system_two: Any, time: float) -> None:
        """Eq. 7 with the rest orientation turned by the motor angle ``phi(time)``."""
        assert self.base_orientation is not None and self.rest_relative_orientation is not None
        mount_rest_orientation(
            self.base_orientation, float(self.angle(time)), self.rest_relative_orientation
        )
        super()._torques(system_one, system_two, time)


@njit(cache=True)  # type: ignore[misc]
def free_twist_rest_orientation(
    base_orientation: NDArray[np.float64], body_director: NDArray[np.float64], body: int,
    rod_director: NDArray[np.float64], element: int, out: NDArray[np.float64],
) -> float:
    """``out = C0 R_z(psi)`` with ``psi`` [rad] the present twist of rod ``element`` about its
    own axis relative to the body (returned): the rest orientation of a :class:`TwistMount`.

    ``C0 = Q_b Q_e^T`` at twist 0; the element rigidly attached to the body would have the
    director ``C0^T Q_b``; ``psi`` is the twist of the actual director relative to it (swing-twist
    decomposition, :func:`~hsa_elastica.physics.actuation.twist_about_axis`), so the Eq. 7
    spring acting toward ``out`` restores the swing (tilt of the rod axis against the body) and
    leaves the twist free.
    """
    reference = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            reference[i, j] = (
                base_orientation[0, i] * body_director[0, j, body]
                + base_orientation[1, i] * body_director[1, j, body]
                + base_orientation[2, i] * body_director[2, j, body]
            )
    current = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            current[i, j] = rod_director[i, j, element]
    psi = twist_about_axis(reference, current)
    mount_rest_orientation(base_orientation, psi, out)
    return psi  # type: ignore[no-any-return]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _twist_gradients(
    base_orientation: NDArray[np.float64], Qp: NDArray[np.float64], Qt: NDArray[np.float64],
    rel: NDArray[np.float64],
) -> tuple[float, ...]:
    """``d psi / dW_t`` and ``d psi / dW_p`` (lab rotations of the element and the body) of the
    free twist ``psi`` of :func:`free_twist_rest_orientation`, as six floats.

    The element's frame relative to the reference ``C0^T Q_p`` is ``Rel = Q_t^T C0^T Q_p``,
    a swing (axis normal to the reference d3 ``a``) after a twist ``psi`` about ``a``; with
    its quaternion ``(w, v)``, ``psi = 2 atan2(v.a, w)``.  Turning the element gives
    ``Rel <- exp([W_t]) Rel``, turning the body ``Rel <- Rel exp(-[W_p])`` and ``a <- a + W_p x a``,
    so with ``D = w^2 + (v.a)^2``: ``d psi/dW_t = (w (w a + v x a) + (v.a) v) / D`` and
    ``d psi/dW_p = (-w^2 a - w (v x a) - (v.a) v) / D`` (a pure twist: ``a`` and ``-a``)."""
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += Qt[k, i] * (base_orientation[0, k] * Qp[0, j]
                                 + base_orientation[1, k] * Qp[1, j]
                                 + base_orientation[2, k] * Qp[2, j])
            rel[i, j] = s
    x, y, z, w = rotation_matrix_to_quaternion(rel)
    a0 = base_orientation[0, 2] * Qp[0, 0] + base_orientation[1, 2] * Qp[1, 0] + base_orientation[2, 2] * Qp[2, 0]
    a1 = base_orientation[0, 2] * Qp[0, 1] + base_orientation[1, 2] * Qp[1, 1] + base_orientation[2, 2] * Qp[2, 1]
    a2 = base_orientation[0, 2] * Qp[0, 2] + base_orientation[1, 2] * Qp[1, 2] + base_orientation[2, 2] * Qp[2, 2]
    va = x * a0 + y * a1 + z * a2
    inv = 1.0 / (w * w + va * va)
    c0, c1, c2 = y * a2 - z * a1, z * a0 - x * a2, x * a1 - y * a0  # v x a
    return (
        (w * (w * a0 + c0) + va * x) * inv, (w * (w * a1 + c1) + va * y) * inv,
        (w * (w * a2 + c2) + va * z) * inv,
        (-w * (w * a0 + c0) - va * x) * inv, (-w * (w * a1 + c1) - va * y) * inv,
        (-w * (w * a2 + c2) - va * z) * inv,
    )


@njit(cache=True)  # type: ignore[misc]
def twist_mount_torque_tangent(
    rod: SystemLike, element: int, body: SystemLike, b: int,
    base_orientation: NDArray[np.float64], torque: float, k_tau: float, nu_tau: float,
    rest_out: NDArray[np.float64], out: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Consistent tangent of a :class:`TwistMount`'s couples added into ``out`` (12, 12; as
    :func:`~hsa_elastica.physics.joint_tangent.joint_torque_tangent`) [N m/rad]: Eq. 7 toward
    the rest orientation ``C0 R_z(psi)`` that follows the free twist ``psi``
    (:func:`free_twist_rest_orientation`, written to ``rest_out``), plus the motor
    ``torque`` [N m] on the element's d3 and its reaction on the body
    (:func:`motor_torque_kernel`).

    Chain rule: the joint's tangent at the fixed rest orientation, plus
    ``d tau_p / d psi = -k_tau M d3`` (turning ``R_z(psi)`` by ``dpsi`` turns the orientation
    error by ``dpsi d3`` on the right, ``d3`` the element's axis in the lab) times
    ``d psi / dw`` (:func:`_twist_gradients`); the reaction ``-torque Q_p d3`` turns with the
    body (``[T]``) and with the element's axis (``torque Q_p [d3] Q_t^T``)."""
    free_twist_rest_orientation(base_orientation, body[3], b, rod[3], element, rest_out)
    joint_torque_tangent(rod, element, body, b, rest_out, k_tau, nu_tau, out, work)
    M = work[0]  # the log map's Jacobian at the orientation error, left by the joint tangent
    Qp = body[3][:, :, b]
    Qt = rod[3][:, :, element]
    g = _twist_gradients(base_orientation, Qp, Qt, work[1])
    d0, d1, d2 = Qt[2, 0], Qt[2, 1], Qt[2, 2]
    # columns: d psi / dw = (Q g) for the element's and the body's local increments
    ct = np.empty(3)
    cp = np.empty(3)
    u = np.empty(3)
    for i in range(3):
        ct[i] = Qt[i, 0] * g[0] + Qt[i, 1] * g[1] + Qt[i, 2] * g[2]
        cp[i] = Qp[i, 0] * g[3] + Qp[i, 1] * g[4] + Qp[i, 2] * g[5]
        u[i] = -k_tau * (M[i, 0] * d0 + M[i, 1] * d1 + M[i, 2] * d2)  # d tau_p / d psi (lab)
    for i in range(3):
        tb = Qp[i, 0] * u[0] + Qp[i, 1] * u[1] + Qp[i, 2] * u[2]
        tt = -(Qt[i, 0] * u[0] + Qt[i, 1] * u[1] + Qt[i, 2] * u[2])
        for j in range(3):
            out[BODY_ROT + i, ELEMENT + j] += tb * ct[j]
            out[BODY_ROT + i, BODY_ROT + j] += tb * cp[j]
            out[ELEMENT + i, ELEMENT + j] += tt * ct[j]
            out[ELEMENT + i, BODY_ROT + j] += tt * cp[j]
    # the motor's reaction on the body, T_m = -torque Q_p d3
    m0 = -torque * (Qp[0, 0] * d0 + Qp[0, 1] * d1 + Qp[0, 2] * d2)
    m1 = -torque * (Qp[1, 0] * d0 + Qp[1, 1] * d1 + Qp[1, 2] * d2)
    m2 = -torque * (Qp[2, 0] * d0 + Qp[2, 1] * d1 + Qp[2, 2] * d2)
    skew_add(out, BODY_ROT, BODY_ROT, 1.0, m0, m1, m2)
    D = work[2]
    D[:] = 0.0
    skew_add(D, 0, 0, 1.0, d0, d1, d2)
    frame_block(out, BODY_ROT, ELEMENT, Qp, D, Qt, torque, work[3])


class TwistMount(TorqueDrive, _BaseJoint):
    """A torque-driven motor carried by a rigid body (Section II-D option (b) on a moving body).

    The rod's base node and element are held to the body by the joint of Eq. 6-7 (kernels of
    :class:`PlatformJoint`) except for the twist about the rod's own axis, which is free: the
    rest orientation follows the present twist (:func:`free_twist_rest_orientation`).  The motor
    applies ``torque(t)`` [N m] to the base element about its axis and the reaction to the body
    (:func:`motor_torque_kernel`).  The damping ``nu_tau`` acts on the whole relative angular
    velocity, including the free twist (bearing friction).

    Parameters (keyword-only): those of :class:`PlatformJoint` and ``torque``: a float [N m] or a
    callable ``t [s] -> tau [N m]``, reassignable at any time.
    """

    _owner = "TwistMount"

    def __init__(self, *, torque: ScalarOrSchedule = 0.0, **joint: Any) -> None:
        super().__init__(**joint)
        self.torque = torque  # type: ignore[assignment]
        #: twist [rad] of the base relative to the body at the last call
        self.twist = 0.0

    def _torques(self, system_one: Any, system_two: Any, time: float) -> None:
        """Eq. 7 on the swing (twist free), then the motor torque and its reaction."""
        assert self.base_orientation is not None and self.rest_relative_orientation is not None
        self.twist = float(free_twist_rest_orientation(
            self.base_orientation, system_two.director_collection, self._body,
            system_one.director_collection, self._element, self.rest_relative_orientation,
        ))
        super()._torques(system_one, system_two, time)
        motor_torque_kernel(
            system_arrays(system_one), self._element, system_arrays(system_two), self._body,
            float(self.torque(time)),
        )
