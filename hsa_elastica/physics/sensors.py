"""Sensor readings of an HSA robot: motor reaction torque and joint wrench (Eq. 6-7).

Both are *read* from a system's state with the kernels that produce the forces in the
simulation (no equation is repeated here):

* :func:`motor_reaction_torque` -- the torque [N m] the motor (``MotorAngleBC``) supplies to
  hold the rod's base element, about the element's own axis ``d3`` (right-hand rule, base ->
  tip).  Quasi-static reaction: the base element receives the torque ``internal_torques[:, e]``
  (local frame, PyElastica's bend/twist, shear and transport couples of the rest of the rod,
  computed at the last force evaluation) and the motor balances it, ``tau_m = -internal_torques``.
  It neglects the base element's own rotational inertia (``J d(omega)/dt``, nil at rest and
  during a constant-speed turn) and external torques applied to the base element.
  :func:`motor_torque` adds, for ``RodParams.coupling_law = "passive"``, the rest of the
  passive rod's elastic torque on that element (:func:`passive_correction_torque`: the
  exact-gradient correction and the reciprocal twist couple, which the passive model applies
  as external torques).
* :func:`joint_wrench` -- the force [N] and torque [N m] the platform joint of Eq. 6 and
  Eq. 7 applies to the rod's tip (node and element), lab frame: evaluated by calling
  :func:`~hsa_elastica.physics.joints.joint_force_kernel` and
  :func:`~hsa_elastica.physics.joints.joint_torque_kernel` on zeroed scratch arrays.  The
  platform receives the opposite force at the attachment point and the opposite torque.
* :func:`robot_sensor_kernel` -- the encoder twist, the one-way law's motor torque and the
  joint wrench of every rod of a robot in one call, on the memory blocks the rods are views
  of (the recorders of a compiled run): the same kernels and the same arithmetic as the
  per-rod readings above, so the same numbers bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.actuation import twist_about_axis
from hsa_elastica.physics.joints import joint_force_kernel, joint_torque_kernel
from hsa_elastica.physics.mount_kernels import SystemLike, SystemView, as_view, relative_orientation
from hsa_elastica.physics.variational_rod import elastic_state, variational_correction

__all__ = [
    "motor_reaction_torque",
    "motor_torque",
    "passive_correction_torque",
    "joint_wrench",
    "joint_rest_orientation",
    "robot_sensor_kernel",
    "SENSOR_INDEX",
    "SENSOR_VALUES",
]

#: columns of :func:`robot_sensor_kernel`'s ``index`` (per rod, indices into the blocks):
#: tip node, tip element, motor element, 1 if the motor's encoder is read (a
#: ``MotorAngleBC``), 1 if the rod has a Voronoi domain (two or more elements)
SENSOR_INDEX = 5
#: columns of its ``out`` (per rod): measured twist [rad] (NaN without an encoder), motor
#: torque [N m], joint force (3) [N] and torque (3) [N m], lab frame
SENSOR_VALUES = 8


def motor_reaction_torque(internal_torques: NDArray[np.float64], element: int) -> float:
    """Motor torque [N m] about the axis ``d3`` of ``element`` (see the module doc):
    ``-internal_torques[2, element]`` (local frame).  For a one-element rod (no Voronoi
    domain, no couple) the callers report 0."""
    return -float(internal_torques[2, element])


def passive_correction_torque(rod: Any, twist_couple: NDArray[np.float64], element: int) -> float:
    """Torque [N m] about ``d3`` of ``element`` (local frame) that the passive model adds to
    PyElastica's internal torques: :func:`~hsa_elastica.physics.variational_rod.variational_correction`
    (exact-gradient correction plus the reciprocal twist couple ``twist_couple`` (n-1,) [N m]
    of the coupling's last step), evaluated on zeroed scratch arrays from the rod's strains and
    stresses of the last force evaluation -- the numbers the simulation added."""
    n = int(rod.rest_lengths.shape[0])
    forces = np.zeros((3, n + 1))
    torques = np.zeros((3, n))
    variational_correction(
        elastic_state(rod), np.ascontiguousarray(twist_couple, dtype=np.float64), forces,
        torques, np.zeros((3, n)),
    )
    return float(torques[2, element])


def motor_torque(rod: Any, element: int, twist_couple: NDArray[np.float64] | None = None) -> float:
    """Motor torque [N m] on ``element`` of ``rod`` (see the module doc): minus the rod's
    elastic torque on it about ``d3``; ``twist_couple`` (the passive model's reciprocal couple
    of the rod's coupling, None for the one-way law) adds :func:`passive_correction_torque`.
    0 for a one-element rod (no Voronoi domain, no couple)."""
    if rod.director_collection.shape[2] < 2:
        return 0.0
    tau = motor_reaction_torque(rod.internal_torques, element)
    if twist_couple is not None:
        tau -= passive_correction_torque(rod, twist_couple, element)
    return tau


@njit(cache=True)  # type: ignore[misc]
def joint_wrench(
    rod: SystemLike, node: int, element: int, body: SystemLike, b: int,
    attachment: NDArray[np.float64], k_F: float, nu_F: float,
    rest_orientation: NDArray[np.float64], k_tau: float, nu_tau: float, out: NDArray[np.float64],
) -> None:
    """``out[0:3]``: force [N] of Eq. 6 on ``rod``'s node ``node``; ``out[3:6]``: torque
    [N m] of Eq. 7 on its element ``element``; both in the lab frame, for the joint to
    ``body``'s body ``b`` (attachment point [m] in the body frame, gains of Eq. 6-7).

    ``rest_orientation`` is the joint's stored ``C0 = Q_p0 Q_tip0^T`` (3, 3).  The joint
    kernels accumulate into zeroed scratch arrays (the views' own external loads are not
    touched), so the numbers are exactly the ones the simulation adds to
    ``external_forces`` / ``external_torques`` in the same state.
    """
    rod = as_view(rod)
    body = as_view(body)
    nb = body.position.shape[1]
    rod_force = np.zeros((3, node + 1))
    rod_torque = np.zeros((3, element + 1))
    scratch_rod = SystemView(
        rod.position, rod.velocity, rod.omega, rod.director, rod_force, rod_torque
    )
    scratch_body = SystemView(
        body.position, body.velocity, body.omega, body.director, np.zeros((3, nb)),
        np.zeros((3, nb)),
    )
    joint_force_kernel(scratch_rod, node, scratch_body, b, attachment, k_F, nu_F)
    joint_torque_kernel(scratch_rod, element, scratch_body, b, rest_orientation, k_tau, nu_tau)
    for i in range(3):
        out[i] = rod_force[i, node]
        # local -> lab: Q^T v
        out[3 + i] = (
            rod.director[0, i, element] * rod_torque[0, element]
            + rod.director[1, i, element] * rod_torque[1, element]
            + rod.director[2, i, element] * rod_torque[2, element]
        )


def joint_rest_orientation(
    stored: NDArray[np.float64] | None,
    body_director: NDArray[np.float64],
    body: int,
    rod_director: NDArray[np.float64],
    element: int,
) -> NDArray[np.float64]:
    """The joint's rest orientation ``C0``: ``stored`` once the joint was applied, else the one
    its first application will store (the present relative orientation, Eq. 7)."""
    if stored is not None:
        return np.ascontiguousarray(stored, dtype=np.float64)
    return relative_orientation(body_director, body, rod_director, element)  # type: ignore[no-any-return]


@njit(cache=True)  # type: ignore[misc]
def robot_sensor_kernel(
    rods: SystemLike, body: SystemLike, internal_torques: NDArray[np.float64],
    index: NDArray[np.int64], gains: NDArray[np.float64], attachments: NDArray[np.float64],
    rests: NDArray[np.float64], references: NDArray[np.float64], b: int,
    out: NDArray[np.float64],
) -> None:
    """The sensor readings of every rod of a robot into ``out`` (n_rods, :data:`SENSOR_VALUES`),
    from the memory blocks the rods and the platform are views of: ``rods`` / ``body`` (block
    arrays, ``SystemView`` order; their external loads are not touched), ``internal_torques``
    (the rod block's, of the last force evaluation), per rod ``index`` (n_rods,
    :data:`SENSOR_INDEX`), joint gains ``(k_F, nu_F, k_tau, nu_tau)`` (n_rods, 4), attachment
    points [m] in the body frame (n_rods, 3), rest orientations ``C0`` (n_rods, 3, 3), the
    motors' reference directors (n_rods, 3, 3), the platform's body ``b`` in its block.

    Per rod what :func:`twist_about_axis`, :func:`motor_reaction_torque` (0 for a one-element
    rod) and :func:`joint_wrench` give on the rod's own arrays (the same kernels)."""
    rods = as_view(rods)
    body = as_view(body)
    rod_force = np.zeros((3, rods.position.shape[1]))
    rod_torque = np.zeros((3, rods.director.shape[2]))
    scratch_rod = SystemView(rods.position, rods.velocity, rods.omega, rods.director, rod_force,
                             rod_torque)
    nb = body.position.shape[1]
    scratch_body = SystemView(body.position, body.velocity, body.omega, body.director,
                              np.zeros((3, nb)), np.zeros((3, nb)))
    current = np.empty((3, 3))
    for k in range(index.shape[0]):
        node, element, motor = index[k, 0], index[k, 1], index[k, 2]
        if index[k, 3] != 0:
            for i in range(3):
                for j in range(3):
                    current[i, j] = rods.director[i, j, motor]
            out[k, 0] = twist_about_axis(references[k], current)
        else:
            out[k, 0] = np.nan
        out[k, 1] = -internal_torques[2, motor] if index[k, 4] != 0 else 0.0
        for i in range(3):
            rod_force[i, node] = 0.0
            rod_torque[i, element] = 0.0
        joint_force_kernel(scratch_rod, node, scratch_body, b, attachments[k], gains[k, 0],
                           gains[k, 1])
        joint_torque_kernel(scratch_rod, element, scratch_body, b, rests[k], gains[k, 2],
                            gains[k, 3])
        for i in range(3):
            out[k, 2 + i] = rod_force[i, node]
            out[k, 5 + i] = (
                rods.director[0, i, element] * rod_torque[0, element]
                + rods.director[1, i, element] * rod_torque[1, element]
                + rods.director[2, i, element] * rod_torque[2, element]
            )
