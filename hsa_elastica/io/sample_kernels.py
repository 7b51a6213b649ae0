"""The built-in recorders' samples as one compiled program, taken inside a compiled loop.

A compiled settling run (:mod:`hsa_elastica.engines.implicit_watch`) takes the samples of the
package's recorders -- :class:`~hsa_elastica.io.recording.RodRecorder`,
:class:`~hsa_elastica.io.recording.RigidBodyRecorder`,
:class:`~hsa_elastica.io.sensors.RobotSensorRecorder` -- at its recording steps with
:func:`take_samples`, which calls the kernels the recorders call (:func:`rod_sample
<hsa_elastica.io.recording.rod_sample>`, :func:`~hsa_elastica.physics.rotations.rotation_matrix_to_quaternion`,
:func:`~hsa_elastica.physics.sensors.robot_sensor_kernel`) on the model's memory blocks and
writes into the recorders' own row buffers.  What depends on Python objects (the time column,
the unwrapped base twist, the motor schedules, the platform's body-frame angular velocity) is
filled in after the call (:mod:`hsa_elastica.robots.loop_samples`).  A plan of no recorders
(:func:`no_samples`) takes nothing: the loop's other recording path, a copy of the instant for
the Python callbacks, is then used.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.io.recording import rod_sample
from hsa_elastica.physics.rotations import rotation_matrix_to_quaternion
from hsa_elastica.physics.sensors import robot_sensor_kernel
from hsa_elastica.physics.tables import BodyBlockArrays, RodBlockArrays

__all__ = ["BodySamples", "RodSamples", "SamplePlan", "SensorSamples", "block_views",
           "no_samples", "take_samples"]


class RodSamples(NamedTuple):
    """Rod recorders: per recorder ``where`` (k, 6) its rod's nodes, elements and Voronoi
    regions ``[start, end)`` in the rod block, ``director0`` (k, 3, 3) the reference director of
    its base twist; ``out`` (k, capacity, columns) the recorders' row buffers (sample ``s`` into
    row ``first[i] + s``), ``first`` (k,) their first free rows; ``angle`` (k, capacity) the
    base twist [rad] of each sample, principal value."""

    where: NDArray[np.int64]
    director0: NDArray[np.float64]
    out: NDArray[np.float64]
    first: NDArray[np.int64]
    angle: NDArray[np.float64]


class BodySamples(NamedTuple):
    """Body recorders: ``where`` (b,) each recorder's body in the body block, ``out`` (b,
    capacity, 14) their row buffers, ``first`` (b,) their first free rows."""

    where: NDArray[np.int64]
    out: NDArray[np.float64]
    first: NDArray[np.int64]


class SensorSamples(NamedTuple):
    """The sensor recorder (none: ``where`` of no rows): the arguments of
    :func:`~hsa_elastica.physics.sensors.robot_sensor_kernel` (``rods`` / ``body``: the memory
    blocks' arrays in ``SystemView`` order), the joint table's ``rest_orientation`` (m, 3, 3) and
    each rod's row in it; per sample ``out`` (capacity, n_rods, SENSOR_VALUES) the readings and
    the body block's ``velocity``, ``director`` and ``omega``."""

    rods: tuple[NDArray[np.float64], ...]
    body: tuple[NDArray[np.float64], ...]
    internal_torques: NDArray[np.float64]
    where: NDArray[np.int64]
    gains: NDArray[np.float64]
    attachments: NDArray[np.float64]
    rests: NDArray[np.float64]
    references: NDArray[np.float64]
    b: int
    rest_orientation: NDArray[np.float64]
    joint_rows: NDArray[np.int64]
    out: NDArray[np.float64]
    velocity: NDArray[np.float64]
    director: NDArray[np.float64]
    omega: NDArray[np.float64]


class SamplePlan(NamedTuple):
    """What :func:`take_samples` takes: the rod, body and sensor recorders' parts."""

    rods: RodSamples
    bodies: BodySamples
    sensors: SensorSamples


@njit(cache=True)  # type: ignore[misc]
def _rod_samples(rod: RodBlockArrays, rods: RodSamples, s: int) -> None:
    for i in range(rods.where.shape[0]):
        n0, n1, e0, e1, v0, v1 = rods.where[i]
        rods.angle[i, s] = rod_sample(
            rod.position[:, n0:n1], rod.velocity[:, n0:n1], rod.director[:, :, e0:e1],
            rod.rest_lengths[e0:e1], rod.rest_voronoi_lengths[v0:v1], rods.director0[i],
            rods.out[i, rods.first[i] + s])


@njit(cache=True)  # type: ignore[misc]
def _body_samples(body: BodyBlockArrays, bodies: BodySamples, s: int) -> None:
    q = np.empty((3, 3))
    for i in range(bodies.where.shape[0]):
        b = bodies.where[i]
        row = bodies.out[i, bodies.first[i] + s]
        for a in range(3):
            row[1 + a] = body.position[a, b]
            row[8 + a] = body.velocity[a, b]
            row[11 + a] = body.omega[a, b]
            for c in range(3):
                q[a, c] = body.director[c, a, b]  # the body -> lab rotation, director.T
        row[4:8] = rotation_matrix_to_quaternion(q)


@njit(cache=True)  # type: ignore[misc]
def _sensor_samples(body: BodyBlockArrays, sensors: SensorSamples, s: int) -> None:
    if sensors.where.shape[0] == 0:
        return
    for i in range(sensors.joint_rows.shape[0]):
        sensors.rests[i] = sensors.rest_orientation[sensors.joint_rows[i]]
    robot_sensor_kernel(sensors.rods, sensors.body, sensors.internal_torques, sensors.where,
                        sensors.gains, sensors.attachments, sensors.rests, sensors.references,
                        sensors.b, sensors.out[s])
    sensors.velocity[s] = body.velocity
    sensors.director[s] = body.director
    sensors.omega[s] = body.omega


@njit(cache=True)  # type: ignore[misc]
def take_samples(rod: RodBlockArrays, body: BodyBlockArrays, plan: SamplePlan, s: int) -> None:
    """Sample ``s`` of the plan's recorders at the present state of the model's rod and body
    blocks (``rod``, ``body``)."""
    _rod_samples(rod, plan.rods, s)
    _body_samples(body, plan.bodies, s)
    _sensor_samples(body, plan.sensors, s)


def block_views(block: Any) -> tuple[NDArray[np.float64], ...]:
    """A memory block's arrays in ``SystemView`` order, as a plain tuple."""
    return (block.position, block.velocity, block.omega, block.director, block.external_forces,
            block.external_torques)


def no_sensors(rod: RodBlockArrays, body: BodyBlockArrays) -> SensorSamples:
    """A :class:`SensorSamples` of no rods, of the types of a real one."""
    z2, z3 = np.zeros((0, 0)), np.zeros((0, 0, 0))
    return SensorSamples(block_views(rod), block_views(body), rod.internal_torques,
                         np.zeros((0, 0), np.int64), z2, z2, z3, z3, 0, z3,
                         np.zeros(0, np.int64), z3, z3, np.zeros((0, 0, 0, 0)), z3)


def no_samples(rod: RodBlockArrays, body: BodyBlockArrays) -> SamplePlan:
    """The plan that takes nothing (the recordings go through copies of the instant)."""
    none = np.zeros(0, np.int64)
    return SamplePlan(
        RodSamples(np.zeros((0, 6), np.int64), np.zeros((0, 3, 3)), np.zeros((0, 0, 0)), none,
                   np.zeros((0, 0))),
        BodySamples(none, np.zeros((0, 0, 14)), none),
        no_sensors(rod, body))
