"""Kernels shared by every rod-end <-> rigid-body connection (Section II-D, Eq. 6-7).

The platform joint (:mod:`hsa_elastica.physics.joints`), the compliant motor mounts
(:mod:`hsa_elastica.physics.mounts`) and the rigid motor mounts
(:mod:`hsa_elastica.physics.rigid_mounts`) are one kernel family: each kernel takes the two
systems as :class:`SystemView` records (the arrays of a PyElastica system, or of a memory block
of them, that a connection reads and writes) plus the node / element / body indices and the
law's parameters, and calls the helpers below for the rigid-body kinematics of a point on the
body (:func:`lever_and_spin`), the relative orientation of the rod element and the body
(:func:`relative_orientation`) and the motor torque with its reaction
(:func:`motor_torque_kernel`).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Union

import numpy as np
from numba import njit, types
from numba.extending import overload
from numpy.typing import NDArray

__all__ = [
    "SystemView",
    "SystemLike",
    "system_arrays",
    "as_view",
    "block_view",
    "lever_and_spin",
    "relative_orientation",
    "motor_torque_kernel",
]


class SystemView(NamedTuple):
    """The arrays of one PyElastica system (rod, rigid body, or a memory block of them) that
    the connection kernels read and write (lab frame except where noted): ``position`` (3, n)
    [m], ``velocity`` (3, n) [m/s], ``omega`` (3, m) [rad/s, local frame], ``director``
    (3, 3, m) (lab -> local), ``external_forces`` (3, n) [N] and ``external_torques`` (3, m)
    [N m, local frame]."""

    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    omega: NDArray[np.float64]
    director: NDArray[np.float64]
    external_forces: NDArray[np.float64]
    external_torques: NDArray[np.float64]


#: a :class:`SystemView`, or its six arrays as a plain tuple in the same order: what the
#: operator classes pass (:func:`system_arrays`), since numba dispatches a call with a plain
#: tuple ~3 us faster than one with a NamedTuple (its type is not fingerprinted); the kernels
#: unpack the fields in order (the joint kernels, the motor torque) or turn either into a
#: :class:`SystemView` with :func:`as_view` (an identity call for a record: ~60 ns)
SystemLike = Union[SystemView, tuple[NDArray[np.float64], ...]]


def system_arrays(system: Any, copy: bool = False) -> tuple[NDArray[np.float64], ...]:
    """The :class:`SystemView` arrays of a PyElastica system as a plain tuple (C-contiguous
    copies with ``copy``: the specialisation the compiled engines use, for readers that must
    not write)."""
    arrays = (
        system.position_collection, system.velocity_collection, system.omega_collection,
        system.director_collection, system.external_forces, system.external_torques,
    )
    if copy:
        return tuple(np.ascontiguousarray(a, dtype=np.float64) for a in arrays)
    return arrays


def as_view(system: SystemLike) -> SystemView:
    """``system`` as a :class:`SystemView` (the record itself, or the plain tuple wrapped)."""
    return system if isinstance(system, SystemView) else SystemView(*system)


@overload(as_view)  # type: ignore[misc]
def _as_view_numba(system: Any) -> Any:
    """numba's :func:`as_view` (the implementations repeat the typing function's annotations,
    as numba requires)."""
    if isinstance(system, types.BaseNamedTuple):
        def same(system: Any) -> Any:
            return system

        return same

    def wrap(system: Any) -> Any:
        return SystemView(system[0], system[1], system[2], system[3], system[4], system[5])

    return wrap


@njit(cache=True, inline="always")  # type: ignore[misc]
def block_view(block: Any) -> SystemView:
    """:class:`SystemView` of a memory-block record
    (:class:`~hsa_elastica.physics.tables.RodBlockArrays` or ``BodyBlockArrays``)."""
    return SystemView(
        block.position, block.velocity, block.omega, block.director, block.external_forces,
        block.external_torques,
    )


@njit(cache=True, inline="always")  # type: ignore[misc]
def lever_and_spin(
    director: NDArray[np.float64], omega: NDArray[np.float64], body: int, point: NDArray[np.float64]
) -> tuple[float, float, float, float, float, float]:
    """Lab lever arm ``r = Q_b^T point`` [m] of a point given in body ``body``'s frame and the
    body's lab angular velocity ``w = Q_b^T omega_b`` [rad/s] (``omega`` local), as
    ``(r0, r1, r2, w0, w1, w2)``: the rigid-body kinematics of a point attached to a body
    (joints of Eq. 6 and the rigid motor mounts)."""
    r0 = director[0, 0, body] * point[0] + director[1, 0, body] * point[1] + director[2, 0, body] * point[2]
    r1 = director[0, 1, body] * point[0] + director[1, 1, body] * point[1] + director[2, 1, body] * point[2]
    r2 = director[0, 2, body] * point[0] + director[1, 2, body] * point[1] + director[2, 2, body] * point[2]
    w0 = director[0, 0, body] * omega[0, body] + director[1, 0, body] * omega[1, body] + director[2, 0, body] * omega[2, body]
    w1 = director[0, 1, body] * omega[0, body] + director[1, 1, body] * omega[1, body] + director[2, 1, body] * omega[2, body]
    w2 = director[0, 2, body] * omega[0, body] + director[1, 2, body] * omega[1, body] + director[2, 2, body] * omega[2, body]
    return r0, r1, r2, w0, w1, w2


@njit(cache=True)  # type: ignore[misc]
def relative_orientation(
    platform_director: NDArray[np.float64], body: int, rod_director: NDArray[np.float64],
    element: int,
) -> NDArray[np.float64]:
    """``C = Q_p Q_tip^T`` (3, 3): the rod-tip material frame expressed in the platform frame."""
    C = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            s = 0.0
            for m in range(3):
                s += platform_director[i, m, body] * rod_director[j, m, element]
            C[i, j] = s
    return C


@njit(cache=True)  # type: ignore[misc]
def motor_torque_kernel(
    rod: SystemLike, element: int, body: SystemLike, b: int, torque: float
) -> None:
    """Motor torque ``torque`` [N m] on rod ``element`` about its own axis d3 (local z,
    right-hand rule) and the reaction ``-torque d3`` on body ``b`` (in the body's local frame,
    ``Q_b (-torque d3)``), accumulated in place: the stator on the body turns the rotor."""
    _, _, _, e, _, rod_tau = rod  # SystemView fields (or a plain tuple of them)
    _, _, _, q, _, tau = body
    rod_tau[2, element] += torque
    for i in range(3):
        tau[i, b] -= torque * (
            q[i, 0, b] * e[2, 0, element]
            + q[i, 1, b] * e[2, 1, element]
            + q[i, 2, b] * e[2, 2, element]
        )
