"""Rod tip <-> platform spring-damper joint (paper Section II-D, Eq. 6-7).

One rod's distal node and distal element are tied to an attachment point on a rigid platform
(PyElastica ``Cylinder``) by a translational and a rotational spring-damper. The joint is a
PyElastica 1.0 ``ConnectionBase``::

    sim.connect(first_rod=rod, second_rod=platform, first_connect_idx=-1, second_connect_idx=0
        ).using(PlatformJoint, k_F=5e5, nu_F=0.0, k_tau=20.0, nu_tau=0.0,
                attachment_point=np.array([x, y, -thickness / 2]))

Frames (PyElastica conventions): ``director_collection[:, :, k]`` (written ``Q``) maps lab ->
local, so lab vectors are ``Q.T @ v_local``. Angular velocities ``omega_collection`` and external
torques are stored in the LOCAL (body / material) frame for rods and rigid bodies alike.

The numerical work is done by the ``@njit(cache=True)`` kernels :func:`joint_force_kernel` and
:func:`joint_torque_kernel` (pure functions on the systems' arrays, no allocation of 3-vectors in
Python); the class only holds the parameters and the rest orientation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from elastica.joint import ConnectionBase
from elastica.typing import ConnectionIndex, RigidBodyType, RodType
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.params import invalid_parameter
from hsa_elastica.physics.mount_kernels import (
    SystemLike,
    lever_and_spin,
    relative_orientation,
    system_arrays,
)
# re-exported: the rotation kernels used to live here
from hsa_elastica.physics.rotations import (
    quaternion_from_entries,
    rotation_matrix_to_quaternion,
    rotation_vector_from_matrix,
    rotation_vector_from_quaternion,
)

__all__ = [
    "PlatformJoint",
    "RodBodyConnection",
    "resolve_joint_indices",
    "joint_force_kernel",
    "joint_torque_kernel",
    "joint_force_terms",
    "joint_torque_terms",
    "lever_and_spin",
    "relative_orientation",
    "rotation_matrix_to_quaternion",
    "rotation_vector_from_matrix",
]


# --------------------------------------------------------------------------------------------
# joint kernels (numba); the helpers they share with the motor mounts are in mount_kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")  # type: ignore[misc]
def joint_force_terms(
    rod: SystemLike, node: int, body: SystemLike, b: int, attachment_point: NDArray[np.float64],
    k_F: float, nu_F: float,
) -> tuple[float, float, float, float, float, float, float, float, float]:
    """The sub-expressions of Eq. 6 shared by :func:`joint_force_kernel` and its tangent
    (:mod:`~hsa_elastica.physics.joint_tangent`): the lab lever ``r = Q_p^T a`` [m], the lab
    angular velocity ``w = Q_p^T omega_p`` [rad/s] and the force ``F`` [N] on the rod node,
    as ``(r0, r1, r2, w0, w1, w2, f0, f1, f2)``."""
    rod_x, rod_v = rod[0], rod[1]
    x, v, omega, q = body[0], body[1], body[2], body[3]
    r0, r1, r2, w0, w1, w2 = lever_and_spin(q, omega, b, attachment_point)
    # attachment point velocity v_p = v_com + w x r
    vp0 = v[0, b] + (w1 * r2 - w2 * r1)
    vp1 = v[1, b] + (w2 * r0 - w0 * r2)
    vp2 = v[2, b] + (w0 * r1 - w1 * r0)
    f0 = k_F * (x[0, b] + r0 - rod_x[0, node]) + nu_F * (vp0 - rod_v[0, node])
    f1 = k_F * (x[1, b] + r1 - rod_x[1, node]) + nu_F * (vp1 - rod_v[1, node])
    f2 = k_F * (x[2, b] + r2 - rod_x[2, node]) + nu_F * (vp2 - rod_v[2, node])
    return r0, r1, r2, w0, w1, w2, f0, f1, f2


@njit(cache=True)  # type: ignore[misc]
def joint_force_kernel(
    rod: SystemLike, node: int, body: SystemLike, b: int, attachment_point: NDArray[np.float64],
    k_F: float, nu_F: float,
) -> None:
    """Translational spring-damper of Eq. 6 between ``rod``'s node ``node`` and the point
    ``attachment_point`` [m] (body frame) of ``body``'s body ``b``, accumulated in place.

    ``F = k_F (r_p - r_tip) + nu_F (v_p - v_tip)`` [N] with the attachment point
    ``r_p = x_com + r``, ``r = Q_p^T a`` (lab) and ``v_p = v_com + (Q_p^T omega_p) x r``
    (``omega_p`` is the body-frame angular velocity). ``+F`` is added to rod node ``node``,
    ``-F`` to the platform centre of mass and the moment ``r x (-F)`` of that force about the
    centre of mass to the platform torque, converted to the body frame (``Q_p (r x -F)``).
    """
    rod_f = rod[4]  # SystemView fields: a plain tuple works too
    q, f, tau = body[3], body[4], body[5]
    Q = q[:, :, b]
    r0, r1, r2, _, _, _, f0, f1, f2 = joint_force_terms(rod, node, body, b, attachment_point,
                                                        k_F, nu_F)
    rod_f[0, node] += f0
    rod_f[1, node] += f1
    rod_f[2, node] += f2
    f[0, b] -= f0
    f[1, b] -= f1
    f[2, b] -= f2
    # moment about the COM of -F applied at r (lab), then to the body frame
    t0 = -(r1 * f2 - r2 * f1)
    t1 = -(r2 * f0 - r0 * f2)
    t2 = -(r0 * f1 - r1 * f0)
    for i in range(3):
        tau[i, b] += Q[i, 0] * t0 + Q[i, 1] * t1 + Q[i, 2] * t2


@njit(cache=True, inline="always")  # type: ignore[misc]
def _row_times(
    a: NDArray[np.float64], b: NDArray[np.float64], i: int
) -> tuple[float, float, float]:
    """Row ``i`` of the 3 x 3 product ``a b``, each entry summed left to right."""
    return (
        a[i, 0] * b[0, 0] + a[i, 1] * b[1, 0] + a[i, 2] * b[2, 0],
        a[i, 0] * b[0, 1] + a[i, 1] * b[1, 1] + a[i, 2] * b[2, 1],
        a[i, 0] * b[0, 2] + a[i, 1] * b[1, 2] + a[i, 2] * b[2, 2],
    )


@njit(cache=True, inline="always")  # type: ignore[misc]
def _transpose_times(
    a: NDArray[np.float64], i: int, m00: float, m01: float, m02: float, m10: float,
    m11: float, m12: float, m20: float, m21: float, m22: float,
) -> tuple[float, float, float]:
    """Row ``i`` of ``a^T M`` for the 3 x 3 ``M`` given by its entries, summed left to right."""
    return (
        a[0, i] * m00 + a[1, i] * m10 + a[2, i] * m20,
        a[0, i] * m01 + a[1, i] * m11 + a[2, i] * m21,
        a[0, i] * m02 + a[1, i] * m12 + a[2, i] * m22,
    )


@njit(cache=True, inline="always")  # type: ignore[misc]
def joint_torque_terms(
    rod: SystemLike, element: int, body: SystemLike, b: int,
    rest_relative_orientation: NDArray[np.float64], k_tau: float, nu_tau: float,
) -> tuple[float, ...]:
    """The sub-expressions of Eq. 7 shared by :func:`joint_torque_kernel` and its tangent
    (:mod:`~hsa_elastica.physics.joint_tangent`): the orientation error's rotation vector
    ``theta = log(Q_p^T C0 Q_t)`` (lab) [rad], the lab angular velocities ``w_p`` of the body
    and ``w_t`` of the element [rad/s] and the lab torque ``tau_p`` on the body [N m], as
    ``(theta0..2, wp0..2, wt0..2, tp0..2)``."""
    rod_omega, rod_q = rod[2], rod[3]
    omega, q = body[2], body[3]
    Qp = q[:, :, b]
    Qt = rod_q[:, :, element]
    # M = C0 Q_t, E = Q_p^T M, as scalars (no 3 x 3 arrays allocated per call; the products
    # summed in the same order as before, so the same bits)
    C0 = rest_relative_orientation
    m00, m01, m02 = _row_times(C0, Qt, 0)
    m10, m11, m12 = _row_times(C0, Qt, 1)
    m20, m21, m22 = _row_times(C0, Qt, 2)
    e00, e01, e02 = _transpose_times(Qp, 0, m00, m01, m02, m10, m11, m12, m20, m21, m22)
    e10, e11, e12 = _transpose_times(Qp, 1, m00, m01, m02, m10, m11, m12, m20, m21, m22)
    e20, e21, e22 = _transpose_times(Qp, 2, m00, m01, m02, m10, m11, m12, m20, m21, m22)
    qx, qy, qz, qw = quaternion_from_entries(e00, e01, e02, e10, e11, e12, e20, e21, e22)
    th0, th1, th2 = rotation_vector_from_quaternion(qx, qy, qz, qw)
    op = omega[:, b]
    ot = rod_omega[:, element]
    # lab angular velocities w = Q^T omega, as scalars (no allocation)
    wp0 = Qp[0, 0] * op[0] + Qp[1, 0] * op[1] + Qp[2, 0] * op[2]
    wp1 = Qp[0, 1] * op[0] + Qp[1, 1] * op[1] + Qp[2, 1] * op[2]
    wp2 = Qp[0, 2] * op[0] + Qp[1, 2] * op[1] + Qp[2, 2] * op[2]
    wt0 = Qt[0, 0] * ot[0] + Qt[1, 0] * ot[1] + Qt[2, 0] * ot[2]
    wt1 = Qt[0, 1] * ot[0] + Qt[1, 1] * ot[1] + Qt[2, 1] * ot[2]
    wt2 = Qt[0, 2] * ot[0] + Qt[1, 2] * ot[1] + Qt[2, 2] * ot[2]
    tp0 = -k_tau * th0 - nu_tau * (wp0 - wt0)
    tp1 = -k_tau * th1 - nu_tau * (wp1 - wt1)
    tp2 = -k_tau * th2 - nu_tau * (wp2 - wt2)
    return (th0, th1, th2, wp0, wp1, wp2, wt0, wt1, wt2, tp0, tp1, tp2)


@njit(cache=True)  # type: ignore[misc]
def joint_torque_kernel(
    rod: SystemLike, element: int, body: SystemLike, b: int,
    rest_relative_orientation: NDArray[np.float64], k_tau: float, nu_tau: float,
) -> None:
    """Rotational spring-damper of Eq. 7 between ``rod``'s element ``element`` and ``body``'s
    body ``b``, accumulated in place (torques in N m).

    With ``C0 = Q_p0 Q_t0^T`` the stored rest relative orientation, the orientation error is
    the lab-frame rotation ``E = Q_p^T C0 Q_t`` that carries the platform from the pose rigidly
    attached to the rod tip to its actual pose (``E = I`` when ``Q_p Q_t^T = C0``), and
    ``theta = log(E)`` its rotation vector (lab frame). With the lab angular velocities
    ``w_p = Q_p^T omega_p``, ``w_t = Q_t^T omega_t`` the lab torque on the platform is

        ``tau_p = -k_tau theta - nu_tau (w_p - w_t)``,

    and ``-tau_p`` acts on the rod tip element; each is added in its own local frame
    (``Q_p tau_p``, ``Q_t (-tau_p)``). For ``C0 = I`` this is Eq. 7 of the paper
    (``theta = -Q_p^T log(Q_p Q_t^T)``), written so the spring torque is the gradient of the
    potential ``k_tau |theta|^2 / 2`` and both terms oppose the error.
    """
    rod_q, rod_tau = rod[3], rod[5]  # SystemView fields (or a plain tuple of them)
    q, tau = body[3], body[5]
    Qp = q[:, :, b]
    Qt = rod_q[:, :, element]
    terms = joint_torque_terms(rod, element, body, b, rest_relative_orientation, k_tau, nu_tau)
    tp0, tp1, tp2 = terms[9], terms[10], terms[11]
    for i in range(3):
        tau[i, b] += Qp[i, 0] * tp0 + Qp[i, 1] * tp1 + Qp[i, 2] * tp2
        rod_tau[i, element] -= Qt[i, 0] * tp0 + Qt[i, 1] * tp1 + Qt[i, 2] * tp2


# --------------------------------------------------------------------------------------------
# operator class
# --------------------------------------------------------------------------------------------
def _check_gain(name: str, value: float, unit: str) -> np.float64:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not (math.isfinite(v) and v >= 0.0):
        raise invalid_parameter("PlatformJoint", name, value, f"a finite number >= 0 ({unit})")
    return np.float64(v)


def _resolve_index(index: Any, n: int, what: str) -> int:
    if isinstance(index, (tuple, list, np.ndarray)):
        if len(index) != 1:
            raise TypeError(
                f"PlatformJoint connects one {what} per joint; got the index {index!r}"
            )
        index = index[0]
    if not isinstance(index, (int, np.integer)):
        raise TypeError(f"PlatformJoint: {what} index must be an integer, got {index!r}")
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"PlatformJoint: {what} index {i} out of range for size {n}")
    return i % n


def resolve_joint_indices(
    system_one: RodType | RigidBodyType,
    index_one: ConnectionIndex,
    system_two: RodType | RigidBodyType,
    index_two: ConnectionIndex,
) -> tuple[int, int, int]:
    """``(node, element, body)`` joined by a :class:`PlatformJoint` (non-negative indices).

    A non-negative ``index_one`` counts from the base (node i, element min(i, n_elems-1)); a
    negative one from the tip (-1 = distal node and distal element).  Out-of-range or
    non-integer indices raise with the index named.
    """
    n_nodes = system_one.position_collection.shape[1]
    n_elems = system_one.director_collection.shape[2]
    if isinstance(index_one, (tuple, list, np.ndarray)) and len(index_one) == 1:
        index_one = index_one[0]
    node = _resolve_index(index_one, n_nodes, "node")
    if isinstance(index_one, (int, np.integer)) and int(index_one) >= 0:
        element = min(node, n_elems - 1)
    else:
        element = _resolve_index(index_one, n_elems, "element")
    body = _resolve_index(index_two, system_two.position_collection.shape[1], "body")
    return node, element, body


class RodBodyConnection(ConnectionBase):
    """A connection between a rod end (one node and one element) and a rigid body: the base
    of :class:`PlatformJoint`, the motor mounts and
    :class:`~hsa_elastica.physics.rigid_mounts.MountReaction`.

    PyElastica's ``apply_forces`` / ``apply_torques`` resolve the indices at the first call
    (:func:`resolve_joint_indices`, :meth:`_resolve`) and then call the subclass's
    :meth:`_forces` / :meth:`_torques` with the two systems and the time [s].
    """

    _node = -1
    _element = -1
    _body = -1

    def _resolve(
        self, system_one: Any, index_one: ConnectionIndex, system_two: Any,
        index_two: ConnectionIndex,
    ) -> None:
        self._node, self._element, self._body = resolve_joint_indices(
            system_one, index_one, system_two, index_two
        )

    def _ready(
        self, system_one: Any, index_one: ConnectionIndex, system_two: Any,
        index_two: ConnectionIndex,
    ) -> None:
        if self._body < 0:
            self._resolve(system_one, index_one, system_two, index_two)

    def apply_forces(self, system_one: Any, index_one: ConnectionIndex, system_two: Any,
                     index_two: ConnectionIndex, time: np.float64 = np.float64(0.0)) -> None:
        """PyElastica's force call: :meth:`_forces` once the indices are resolved."""
        self._ready(system_one, index_one, system_two, index_two)
        self._forces(system_one, system_two, float(time))

    def apply_torques(self, system_one: Any, index_one: ConnectionIndex, system_two: Any,
                      index_two: ConnectionIndex, time: np.float64 = np.float64(0.0)) -> None:
        """PyElastica's torque call: :meth:`_torques` once the indices are resolved."""
        self._ready(system_one, index_one, system_two, index_two)
        self._torques(system_one, system_two, float(time))

    def _forces(self, system_one: Any, system_two: Any, time: float) -> None:
        """Forces of the connection (none by default)."""

    def _torques(self, system_one: Any, system_two: Any, time: float) -> None:
        """Torques of the connection (none by default)."""


class PlatformJoint(RodBodyConnection):
    """Spring-damper joint between a rod's distal end and a rigid platform (Eq. 6-7).

    Connect with ``first_rod`` = the rod (``first_connect_idx=-1``: its distal node and distal
    element) and ``second_rod`` = the platform rigid body (``second_connect_idx=0``). Any system
    with PyElastica's rod/rigid-body arrays works as the first system (tests use a second
    rigid body, whose centre of mass then plays the role of the rod tip node).

    Translation (Eq. 6): ``F = k_F (r_p - r_tip) + nu_F (v_p - v_tip)`` with the attachment
    point ``r_p`` from rigid-body kinematics (see :func:`joint_force_kernel`); ``+F`` on the rod
    tip node, ``-F`` and the moment ``r x (-F)`` on the platform.

    Rotation (Eq. 7): the relative orientation ``Q_p Q_tip^T`` at the FIRST call (the first
    force evaluation of the first time step: for a system started at rest this is the initial
    configuration) is stored as rest orientation ``C0``; deviations are penalised with
    ``k_tau`` times the lab-frame rotation vector of the error and relative angular velocities
    with ``nu_tau`` (derivation in :func:`joint_torque_kernel`).

    With ``nu_F = nu_tau = 0`` the joint is conservative with potential
    ``k_F |r_p - r_tip|^2 / 2 + k_tau |theta|^2 / 2`` and conserves the total linear and angular
    momentum of the pair (the force is central, along ``r_p - r_tip``).

    Parameters (keyword-only)
    -------------------------
    k_F : float
        Translational stiffness [N/m], >= 0.
    nu_F : float
        Translational damping [N s/m], >= 0.
    k_tau : float
        Rotational stiffness [N m/rad], >= 0.
    nu_tau : float
        Rotational damping [N m s/rad], >= 0.
    attachment_point : array_like, shape (3,)
        Attachment point in the platform's LOCAL frame relative to its centre of mass [m].
    """

    def __init__(
        self,
        *,
        k_F: float,
        nu_F: float = 0.0,
        k_tau: float,
        nu_tau: float = 0.0,
        attachment_point: NDArray[np.float64] | tuple[float, float, float] | list[float],
    ) -> None:
        self.k_F = _check_gain("k_F", k_F, "N/m")
        self.nu_F = _check_gain("nu_F", nu_F, "N s/m")
        self.k_tau = _check_gain("k_tau", k_tau, "N m/rad")
        self.nu_tau = _check_gain("nu_tau", nu_tau, "N m s/rad")
        try:
            a = np.array(attachment_point, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            a = np.empty(0)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise invalid_parameter(
                "PlatformJoint", "attachment_point", attachment_point,
                "3 finite numbers (m, platform local frame)",
            )
        self.attachment_point: NDArray[np.float64] = a
        #: rest relative orientation ``Q_p Q_tip^T`` (3, 3), set at the first call
        self.rest_relative_orientation: NDArray[np.float64] | None = None

    def _resolve(
        self, system_one: Any, index_one: ConnectionIndex, system_two: Any,
        index_two: ConnectionIndex,
    ) -> None:
        super()._resolve(system_one, index_one, system_two, index_two)
        self.rest_relative_orientation = relative_orientation(
            system_two.director_collection, self._body, system_one.director_collection, self._element
        )

    def _forces(self, system_one: Any, system_two: Any, time: float) -> None:
        """Eq. 6: add ``+F`` to the rod tip node, ``-F`` and ``r x (-F)`` to the platform."""
        joint_force_kernel(
            system_arrays(system_one), self._node, system_arrays(system_two), self._body,
            self.attachment_point, self.k_F, self.nu_F,
        )

    def _torques(self, system_one: Any, system_two: Any, time: float) -> None:
        """Eq. 7: equal and opposite orientation spring-damper torques (local frames)."""
        assert self.rest_relative_orientation is not None
        joint_torque_kernel(
            system_arrays(system_one), self._element, system_arrays(system_two), self._body,
            self.rest_relative_orientation, self.k_tau, self.nu_tau,
        )
