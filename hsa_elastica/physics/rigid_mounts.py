"""Motors bolted to a moving rigid body (Section II-D on a moving body, rigid mount).

The paper's motor boundary condition (:class:`~hsa_elastica.physics.actuation.MotorAngleBC`,
option (a), and :class:`~hsa_elastica.physics.actuation.FreeTwistBC`, option (b)) holds a rod's
base node and base element in the lab.  Here the same kinematic conditions are imposed relative
to a rigid body's frame (the platform of a lower stage of a stacked robot, or any PyElastica
rigid body), and the load they absorb is handed to that body:

* :class:`MotorMountBC` -- motor-angle drive: the base node sits at a point fixed in the body
  frame, the base element has the orientation it had at assembly relative to the body, turned
  by the motor angle ``phi(t)`` about its own axis (kernel :func:`mount_values`); velocities
  follow the body's rigid motion plus the motor rate (kernel :func:`mount_rates`).
* :class:`TwistMountBC` -- torque drive: as above but the twist of the base element about its
  own axis is free (the swing follows the body).
* :class:`MountReaction` -- the connection that hands the held node's and element's load to the
  body (kernel :func:`mount_reaction`) and, for a torque-driven mount, applies the motor
  torque to the rod and its reaction to the body (Newton's third law).

With the body held still, a :class:`MotorMountBC` imposes the same position and director as
:class:`MotorAngleBC` (to round-off), so a stage on a held body moves like the fixed-base
robot.  The held node and element are treated as massless parts of the body: the load on them
(internal force and couple of the rod, plus the external loads added before the reaction in
the operator order: register the reaction after gravity) goes to the body; their own inertia
(half an element's mass, ~0.2 g for the paper rod) is neglected, as the lab constraint
neglects it.

Registration (``sim`` any ``BaseSystemCollection`` with constraints and connections)::

    sim.constrain(rod).using(MotorMountBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,), body=body, angle=Ramp(target=phi))
    ...  # gravity, dampers of the rod and the body
    sim.connect(first_rod=rod, second_rod=body, first_connect_idx=0, second_connect_idx=0
                ).using(MountReaction)

For a torque drive use :class:`TwistMountBC` (no ``angle``) and ``MountReaction`` with
``torque=tau`` [N m] (a number or a callable of time).  The compiled engines (fused stepper,
static solver) evaluate the same kernels (:mod:`hsa_elastica.physics.forces`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from elastica.typing import RodType
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.params import invalid_parameter
from hsa_elastica.physics.actuation import (
    AngleDrive,
    ScalarOrSchedule,
    TorqueDrive,
    _ProximalBC,
    free_twist_director,
    rotate_about_own_axis,
    twist_about_axis,
)
from hsa_elastica.physics.joints import RodBodyConnection
from hsa_elastica.physics.mount_kernels import (
    SystemView,
    lever_and_spin,
    motor_torque_kernel,
    system_view,
)

__all__ = [
    "MotorMountBC",
    "TwistMountBC",
    "MountReaction",
    "mount_values",
    "mount_rates",
    "mount_reaction",
]


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def mount_values(
    body: SystemView, b: int, offset: NDArray[np.float64], relative_director: NDArray[np.float64],
    angle: float, free_twist: bool, rod: SystemView, node: int, element: int,
    work: NDArray[np.float64],
) -> None:
    """Base node and base element of a mounted rod from the pose of ``body``'s body ``b``.

    Node ``node`` of ``rod`` [m] goes to ``x_b + Q_b^T offset`` (``offset`` in the body frame).  The
    element's reference director is ``Q_ref = relative_director @ Q_b`` (its orientation at
    assembly relative to the body); element ``element`` gets ``R_z(angle)^T Q_ref`` (the motor
    angle [rad] about its own d3, as :class:`MotorAngleBC`), or with ``free_twist`` ``Q_ref``
    turned by its present twist (as :class:`FreeTwistBC`).  ``work``: (3, 3, 3) scratch.
    """
    q = body.director
    for a in range(3):
        s = body.position[a, b]
        for k in range(3):
            s += q[k, a, b] * offset[k]
        rod.position[a, node] = s
    reference = work[:, :, 0]
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += relative_director[i, k] * q[k, j, b]
            reference[i, j] = s
    out = work[:, :, 1]
    if free_twist:
        current = work[:, :, 2]
        for i in range(3):
            for j in range(3):
                current[i, j] = rod.director[i, j, element]
        free_twist_director(reference, current, out)
    else:
        rotate_about_own_axis(reference, angle, out)
    for i in range(3):
        for j in range(3):
            rod.director[i, j, element] = out[i, j]


@njit(cache=True)  # type: ignore[misc]
def mount_rates(
    body: SystemView, b: int, offset: NDArray[np.float64], rate: float, free_twist: bool,
    rod: SystemView, node: int, element: int,
) -> None:
    """Velocities of a mounted base (``rod``'s node ``node`` and element ``element``): the rigid
    motion of ``body``'s body ``b`` at the mount point.

    Node velocity ``v_b + w x (Q_b^T offset)`` [m/s] with ``w = Q_b^T omega_b`` the body's
    angular velocity in the lab; the element's angular velocity (local frame) ``Q_e w`` plus
    ``rate`` [rad/s] about d3 (the motor rate), or with ``free_twist`` ``Q_e w`` in the swing
    components and the element's own twist rate kept.
    """
    r0, r1, r2, w0, w1, w2 = lever_and_spin(body.director, body.omega, b, offset)
    v = body.velocity
    rod.velocity[0, node] = v[0, b] + w1 * r2 - w2 * r1
    rod.velocity[1, node] = v[1, b] + w2 * r0 - w0 * r2
    rod.velocity[2, node] = v[2, b] + w0 * r1 - w1 * r0
    e = rod.director
    omega = rod.omega
    omega[0, element] = e[0, 0, element] * w0 + e[0, 1, element] * w1 + e[0, 2, element] * w2
    omega[1, element] = e[1, 0, element] * w0 + e[1, 1, element] * w1 + e[1, 2, element] * w2
    if not free_twist:
        omega[2, element] = (
            e[2, 0, element] * w0 + e[2, 1, element] * w1 + e[2, 2, element] * w2 + rate
        )


@njit(cache=True)  # type: ignore[misc]
def mount_reaction(
    rod: SystemView, internal_forces: NDArray[np.float64], internal_torques: NDArray[np.float64],
    node: int, element: int, body: SystemView, b: int, free_twist: bool, torque: float,
) -> None:
    """The load of a mounted node and element handed to the body, accumulated in place.

    Body ``b`` receives the net force ``F`` [N] on ``rod``'s node ``node`` (``internal_forces``
    plus the external forces so far, lab frame) at its centre of mass, its moment
    ``(x_node - x_b) x F`` and the net couple on element ``element`` (``internal_torques`` plus
    the external torques, local frame, rotated to the body frame ``Q_b Q_e^T tau``), all three
    in the body's frame for the torques.  With ``free_twist`` the couple about the element's
    own axis stays with the element (its twist is free) and the motor ``torque`` [N m] is
    applied to the element with its reaction on the body
    (:func:`~hsa_elastica.physics.mount_kernels.motor_torque_kernel`).
    """
    fe = rod.external_forces
    f0 = internal_forces[0, node] + fe[0, node]
    f1 = internal_forces[1, node] + fe[1, node]
    f2 = internal_forces[2, node] + fe[2, node]
    body.external_forces[0, b] += f0
    body.external_forces[1, b] += f1
    body.external_forces[2, b] += f2
    x = body.position
    r0 = rod.position[0, node] - x[0, b]
    r1 = rod.position[1, node] - x[1, b]
    r2 = rod.position[2, node] - x[2, b]
    te = rod.external_torques
    t0 = internal_torques[0, element] + te[0, element]
    t1 = internal_torques[1, element] + te[1, element]
    t2 = 0.0
    if not free_twist:
        t2 = internal_torques[2, element] + te[2, element]
    e = rod.director
    # lab torque: moment of the force about the centre of mass plus the couple Q_e^T tau
    m0 = r1 * f2 - r2 * f1 + e[0, 0, element] * t0 + e[1, 0, element] * t1 + e[2, 0, element] * t2
    m1 = r2 * f0 - r0 * f2 + e[0, 1, element] * t0 + e[1, 1, element] * t1 + e[2, 1, element] * t2
    m2 = r0 * f1 - r1 * f0 + e[0, 2, element] * t0 + e[1, 2, element] * t1 + e[2, 2, element] * t2
    q = body.director
    for a in range(3):
        body.external_torques[a, b] += q[a, 0, b] * m0 + q[a, 1, b] * m1 + q[a, 2, b] * m2
    if free_twist:
        motor_torque_kernel(rod, element, body, b, torque)


# --------------------------------------------------------------------------------------------
# operators
# --------------------------------------------------------------------------------------------
class _BodyMountBC(_ProximalBC):
    """Base node and element held relative to a rigid body (see the module doc)."""

    _owner = "_BodyMountBC"
    free_twist = False

    def __init__(
        self, fixed_position: NDArray[np.float64], fixed_director: NDArray[np.float64], *,
        body: Any, **kwargs: Any,
    ) -> None:
        super().__init__(fixed_position, fixed_director, **kwargs)
        director = getattr(body, "director_collection", None)
        if director is None or np.shape(director)[:2] != (3, 3):
            raise invalid_parameter(
                self._owner, "body", type(body).__name__, "a PyElastica rigid body")
        self.body = body
        qb = np.array(body.director_collection[..., 0], dtype=np.float64)
        xb = np.array(body.position_collection[..., 0], dtype=np.float64)
        #: base node in the body frame [m] and base-element orientation relative to the body
        #: (``Q_e Q_b^T``) at assembly
        self.offset = np.ascontiguousarray(qb @ (self.fixed_position - xb))
        self.relative_director = np.ascontiguousarray(self.reference_director @ qb.T)
        self._work = np.empty((3, 3, 3))

    def twist(self, system: RodType) -> float:
        """Present twist [rad] of the base element about its own axis relative to the body
        (the measured motor angle; principal value in (-pi, pi])."""
        reference = self.relative_director @ np.asarray(self.body.director_collection[..., 0])
        current = np.ascontiguousarray(system.director_collection[..., self._director_idx])
        return float(twist_about_axis(np.ascontiguousarray(reference), current))

    def _angle_now(self, time: float) -> float:
        return 0.0

    def _rate_now(self, time: float) -> float:
        return 0.0

    def constrain_values(self, system: RodType, time: np.float64) -> None:
        mount_values(
            system_view(self.body), 0, self.offset, self.relative_director,
            self._angle_now(float(time)), self.free_twist, system_view(system),
            self._position_idx, self._director_idx, self._work,
        )

    def constrain_rates(self, system: RodType, time: np.float64) -> None:
        mount_rates(
            system_view(self.body), 0, self.offset, self._rate_now(float(time)),
            self.free_twist, system_view(system), self._position_idx, self._director_idx,
        )


class MotorMountBC(AngleDrive, _BodyMountBC):
    """A motor bolted to a rigid body turning a rod's base (Section II-D (a) on a moving body).

    The base node keeps its assembly position in the body frame, the base element its assembly
    orientation relative to the body turned by ``phi(t)`` about its own axis, and both move
    with the body (kernels :func:`mount_values`, :func:`mount_rates`).  Pair it with a
    :class:`MountReaction` so the body carries the load.

    Parameters (keyword-only besides PyElastica's): ``body`` the rigid body carrying the motor;
    ``angle`` a float [rad] or a callable ``t [s] -> phi [rad]`` (such as
    :class:`~hsa_elastica.physics.actuation.Ramp`), reassignable at any time as
    ``MotorAngleBC.angle``.
    """

    _owner = "MotorMountBC"

    def __init__(
        self, fixed_position: NDArray[np.float64], fixed_director: NDArray[np.float64], *,
        body: Any, angle: ScalarOrSchedule = 0.0, **kwargs: Any,
    ) -> None:
        super().__init__(fixed_position, fixed_director, body=body, **kwargs)
        self.angle = angle  # type: ignore[assignment]

    def _angle_now(self, time: float) -> float:
        return float(self._angle(time))

    def _rate_now(self, time: float) -> float:
        return 0.0 if self.angle_rate is None else float(self.angle_rate(time))


class TwistMountBC(_BodyMountBC):
    """A torque-driven motor bolted to a rigid body (Section II-D (b) on a moving body).

    As :class:`MotorMountBC` with the twist of the base element about its own axis free; the
    motor torque and its reaction are applied by the paired ``MountReaction(torque=...)``.
    """

    _owner = "TwistMountBC"
    free_twist = True


class MountReaction(TorqueDrive, RodBodyConnection):
    """Hands the load of a mounted rod base to the body (kernel :func:`mount_reaction`).

    Connect ``first_rod`` = the rod (``first_connect_idx=0``) to ``second_rod`` = the body of its
    :class:`MotorMountBC` / :class:`TwistMountBC` (``second_connect_idx=0``), after the rod's
    gravity.  ``torque``: None for a motor-angle mount; for a :class:`TwistMountBC` the motor
    torque [N m] (a float or a callable ``t [s] -> tau``, reassignable), applied to the base
    element about its own axis with the reaction on the body.
    """

    _owner = "MountReaction"

    def __init__(self, *, torque: ScalarOrSchedule | None = None) -> None:
        super().__init__()
        self.free_twist = torque is not None
        self.torque = 0.0 if torque is None else torque  # type: ignore[assignment]

    def _forces(self, system_one: Any, system_two: Any, time: float) -> None:
        """The force, moment and couple of the held base on the body (and the motor torque);
        the torque call adds nothing: this hands the whole wrench over."""
        mount_reaction(
            system_view(system_one), system_one.internal_forces, system_one.internal_torques,
            self._node, self._element, system_view(system_two), self._body, self.free_twist,
            float(self._torque(time)),
        )
