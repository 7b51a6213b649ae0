"""Random valid configurations of the free objects' contact laws for the registry of
tangents (:mod:`~hsa_elastica.physics.laws`): rod nodes on a free sphere or ``Cylinder``, a
rigid body's points on one, and a free sphere's support point on a curved obstacle with
rolling resistance.  Each is one row of a
:class:`~hsa_elastica.physics.tables.ContactTable` as the engines compile it: its forces from
the force evaluation's own kernel (:func:`~hsa_elastica.physics.contact_rows.apply_contact`), its
tangent from the point blocks the Newton matrices scatter
(:func:`~hsa_elastica.physics.point_tangent.contact_point_block`), so the check covers the
engines' path, kinematics and scatter layout included.

Scales: objects of 5 cm radius, nodes of 5 mm contact radius, the law's smoothing length
0.1 mm (every point within one of touching), relative tangential speeds and the rolling
speed about the slip velocity (1 mm/s: both smoothed zones), objects turned ~2 rad.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.physics.contact_laws import CAPSULE, SPHERE
from hsa_elastica.physics.contact_rows import apply_contact
from hsa_elastica.physics.joint_tangent import BODY_POS, JOINT_BLOCK, NODE
from hsa_elastica.physics.law_cases import LawCase, _rotation, turn
from hsa_elastica.physics.mount_kernels import SystemView
from hsa_elastica.physics.point_tangent import contact_point_block
from hsa_elastica.physics.tables import CONTACT_PARAMS, ContactTable

__all__ = ["object_contact_case", "cylinder_contact_case", "rolling_couple_case",
           "body_object_contact_case"]

Array = NDArray[np.float64]

#: the law of every case: k [N/m], l [m], zeta, mu, v_s [m/s]
LAW = (1e3, 1e-4, 0.3, 0.5, 1e-3)


def _table(ids: tuple[int, ...], width: int) -> ContactTable:
    table = ContactTable(ids=np.array([ids], dtype=np.int64), params=np.zeros((1, CONTACT_PARAMS)),
                         points=np.zeros((1, 11, width)), output=np.zeros((1, 5, width)))
    table.params[0, 8:13] = LAW
    return table


def _system(x: Array, v: Array, omega: Array, q: Array) -> SystemView:
    """A system of ``x.shape[1]`` nodes (or bodies) and ``q.shape[2]`` elements (or bodies),
    loads zeroed."""
    return SystemView(x.copy(), v.copy(), omega.copy(), q.copy(), np.zeros_like(x),
                      np.zeros_like(omega))


def _row_case(table: ContactTable, rod: SystemView, body: SystemView, nodes: int,
              steps: tuple[float, float, float, float]) -> LawCase:
    """:class:`LawCase` of contact row 0 of ``table``: unknowns the rod's first ``nodes``
    nodes, then body 1's position and rotation; ``steps`` = (position, rotation, velocity,
    angular velocity) of the differences."""
    n = 3 * nodes + 6
    b = 3 * nodes

    def forces(dx: Array, dv: Array | None = None) -> Array:
        r = _system(rod.position, rod.velocity, rod.omega, rod.director)
        o = _system(body.position, body.velocity, body.omega, body.director)
        r.position[:, :nodes] += dx[:b].reshape(3, nodes, order="F")
        o.position[:, 1] += dx[b : b + 3]
        turn(o.director, 1, dx[b + 3 : b + 6])
        if dv is not None:
            r.velocity[:, :nodes] += dv[:b].reshape(3, nodes, order="F")
            o.velocity[:, 1] += dv[b : b + 3]
            o.omega[:, 1] += dv[b + 3 : b + 6]
        apply_contact(table, 0, r, o)
        return np.concatenate([r.external_forces[:, :nodes].ravel(order="F"),
                               o.external_forces[:, 1], o.external_torques[:, 1]])

    def tangent(velocity: bool) -> Array:
        out = np.zeros((n, n))
        block = np.zeros((JOINT_BLOCK, JOINT_BLOCK))
        for p in range(int(table.ids[0, 2])):
            block[:] = 0.0
            contact_point_block(rod, body, table, p, velocity, block)
            own = [slice(3 * p, 3 * p + 3), slice(b, n)] if nodes else [slice(b, n)]
            src = [slice(NODE, NODE + 3), slice(BODY_POS, JOINT_BLOCK)] if nodes else \
                [slice(BODY_POS, JOINT_BLOCK)]
            for ro, rs in zip(own, src):
                for co, cs in zip(own, src):
                    out[ro, co] += block[rs, cs]
        return out

    dx_steps = np.r_[np.full(b + 3, steps[0]), np.full(3, steps[1])]
    dv_steps = np.r_[np.full(b + 3, steps[2]), np.full(3, steps[3])]
    return LawCase(n, forces, lambda: tangent(False), dx_steps,
                   lambda dv: forces(np.zeros(n), dv), lambda: tangent(True), dv_steps)


def _object_row(shape: tuple[int, float, float], x0: Array, rng: np.random.Generator,
                center: Array, q: Array) -> LawCase:
    """Rod nodes ``x0`` (3, 3) moving about the slip velocity on body 1 (at ``center``,
    directors ``q`` (3, 3, 2)) carrying the obstacle ``shape``, moving and spinning."""
    table = _table((0, 0, 3, shape[0], 1), 3)
    table.params[0, 6:8] = shape[1:]
    table.points[0, 9] = 0.005  # the nodes' contact radius [m]
    table.points[0, 10] = 1e-3  # reduced masses [kg]
    rod = _system(x0, 1e-3 * rng.normal(size=(3, 3)), np.zeros((3, 2)),
                  np.ascontiguousarray(np.stack([np.eye(3)] * 2, axis=2)))
    position = np.zeros((3, 2))
    position[:, 1] = center
    body = _system(position, 1e-3 * rng.normal(size=(3, 2)), 0.02 * rng.normal(size=(3, 2)), q)
    # rotation steps of 1e-6 rad as the joints' (a turn's round-off, ~1e-16 of the directors,
    # is 1e-10 of it; measured 8e-9 of a column on the capsule, whose surface a turn moves);
    # the velocities as the rod contact's
    return _row_case(table, rod, body, 3, (1e-4 * LAW[1], 1e-6, 1e-7, 1e-6))


def _bodies(rng: np.random.Generator) -> tuple[Array, Array]:
    center = 0.05 * rng.normal(size=3)
    q = np.ascontiguousarray(np.stack([_rotation(rng, 2.0) for _ in range(2)], axis=2))
    return center, q


def object_contact_case(rng: np.random.Generator) -> LawCase:
    """Frictional contact of three rod nodes with a moving, spinning sphere (radius 5 cm,
    body 1 of two, turned ~2 rad) within a smoothing length (0.1 mm) of touching, relative
    tangential speeds about the slip velocity; unknowns: the nodes, the sphere's position and
    rotation."""
    center, q = _bodies(rng)
    normals = rng.normal(size=(3, 3))
    normals /= np.linalg.norm(normals, axis=0)
    x0 = center[:, None] + (0.055 + 1e-4 * rng.uniform(-1.0, 1.0, 3)) * normals
    return _object_row((SPHERE, 0.05, 0.0), x0, rng, center, q)


def cylinder_contact_case(rng: np.random.Generator) -> LawCase:
    """The same on a free ``Cylinder`` (a capsule of radius 5 cm about its 10 cm axis, the
    body's local z): two nodes beside its side (the closest point inside the axis) and one
    on a cap (beyond an end), each within a smoothing length of touching."""
    center, q = _bodies(rng)
    reach = 0.055 + 1e-4 * rng.uniform(-1.0, 1.0, 3)  # axis/end distance: radius + node's
    local = np.empty((3, 3))
    for p in range(2):  # beside the side, anywhere along the axis
        a = rng.uniform(0.0, 2.0 * math.pi)
        local[:, p] = (reach[p] * math.cos(a), reach[p] * math.sin(a), rng.uniform(-0.04, 0.04))
    cap = rng.normal(size=3)
    cap[2] = abs(cap[2]) + 0.5  # a direction into the upper cap's half-space
    local[:, 2] = np.array([0.0, 0.0, 0.05]) + reach[2] * cap / np.linalg.norm(cap)
    x0 = center[:, None] + q[:, :, 1].T @ local  # body -> lab: Q^T
    return _object_row((CAPSULE, 0.05, 0.1), np.ascontiguousarray(x0), rng, center, q)


def rolling_couple_case(rng: np.random.Generator, c_rr: float = 0.2) -> LawCase:
    """A free sphere (radius 5 cm, 30 g, body 1) resting on a curved obstacle (a fixed sphere
    of radius 0.5 m: its normal turns as the ball moves) within a smoothing length of
    touching, with friction and the rolling resistance ``c_rr`` (0.2), rolling, sliding and
    spinning at about the slip velocity: its support point's force and couple with the
    rolling couple (:func:`~hsa_elastica.physics.object_contact_laws.rolling_couple` of the
    support point's normal force); unknowns: the sphere's position and rotation."""
    table = _table((1, 2, 1, SPHERE, -1), 1)
    table.params[0, 0:8] = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0)  # the obstacle
    table.params[0, 13:15] = (0.05, c_rr)  # the ball's radius [m], rolling resistance
    table.points[0, 10] = 0.03  # its mass [kg]
    up = rng.normal(size=3) * np.array([0.3, 0.3, 1.0])
    up /= np.linalg.norm(up)
    _, q = _bodies(rng)
    position = np.zeros((3, 2))
    position[:, 1] = (0.55 + 1e-4 * rng.uniform(-1.0, 1.0)) * up
    # rolling speed w_t R about v_s: w ~ v_s / R = 0.02 rad/s (body frame), sliding ~ v_s
    body = _system(position, 1e-3 * rng.normal(size=(3, 2)), 0.02 * rng.normal(size=(3, 2)), q)
    empty: Any = _system(np.zeros((3, 1)), np.zeros((3, 1)), np.zeros((3, 1)),
                         np.ascontiguousarray(np.eye(3)[:, :, None]))
    return _row_case(table, empty, body, 0, (1e-4 * LAW[1], 1e-6, 1e-7, 1e-6))


def body_object_contact_case(rng: np.random.Generator, capsule: bool = False) -> LawCase:
    """Three points fixed on a moving, spinning rigid body (body 0, as a platform's rims;
    turned ~2 rad) within a smoothing length (0.1 mm) of touching a free sphere (radius 5 cm)
    or, with ``capsule``, a free ``Cylinder`` (a capsule of radius 5 cm about its 10 cm axis)
    (body 1), relative tangential speeds about the slip velocity; unknowns: body 0's position
    and rotation, then the object's (the point block's ``OWN_POS``, ``OWN_ROT``, ``BODY_POS``,
    ``BODY_ROT`` slots)."""
    center, q = _bodies(rng)
    shape = (CAPSULE, 0.05, 0.1) if capsule else (SPHERE, 0.05, 0.0)
    table = _table((0, 1, 3, shape[0], 1), 3)
    table.params[0, 6:8] = shape[1:]
    table.points[0, 10] = 1e-3  # the points' reduced masses [kg]; radius 0 (a body's point)
    reach = 0.05 + 1e-4 * rng.uniform(-1.0, 1.0, 3)  # from the centre (or the axis, the cap)
    local = np.empty((3, 3))  # in the object's frame
    for p in range(3):
        d = rng.normal(size=3)
        d /= np.linalg.norm(d)
        local[:, p] = reach[p] * d
        if capsule:  # beside the side, or (the last one) on the upper cap
            if p < 2:
                d[2] = 0.0
                local[:, p] = reach[p] * d / np.linalg.norm(d) + [0.0, 0.0, rng.uniform(-0.04, 0.04)]
            else:
                d[2] = abs(d[2]) + 0.5
                local[:, p] = np.array([0.0, 0.0, 0.05]) + reach[p] * d / np.linalg.norm(d)
    points = center[:, None] + q[:, :, 1].T @ local  # object frame -> lab
    own = center + 0.08 * rng.normal(size=3)  # body 0's centre
    table.points[0, 0:3, :] = q[:, :, 0] @ (points - own[:, None])  # lab -> body 0's frame
    position = np.stack([own, center], axis=1)
    body = _system(position, 1e-3 * rng.normal(size=(3, 2)), 0.02 * rng.normal(size=(3, 2)), q)
    empty = _system(np.zeros((3, 1)), np.zeros((3, 1)), np.zeros((3, 1)),
                    np.ascontiguousarray(np.eye(3)[:, :, None]))
    n = 12

    def forces(dx: Array, dv: Array | None = None) -> Array:
        o = _system(body.position, body.velocity, body.omega, body.director)
        for b in (0, 1):
            o.position[:, b] += dx[6 * b : 6 * b + 3]
            turn(o.director, b, dx[6 * b + 3 : 6 * b + 6])
            if dv is not None:
                o.velocity[:, b] += dv[6 * b : 6 * b + 3]
                o.omega[:, b] += dv[6 * b + 3 : 6 * b + 6]
        apply_contact(table, 0, empty, o)
        return np.concatenate([o.external_forces[:, 0], o.external_torques[:, 0],
                               o.external_forces[:, 1], o.external_torques[:, 1]])

    def tangent(velocity: bool) -> Array:
        out = np.zeros((n, n))  # the block's slots are these unknowns, in this order
        for p in range(3):
            contact_point_block(empty, body, table, p, velocity, out)
        return out

    steps = np.tile(np.r_[np.full(3, 1e-4 * LAW[1]), np.full(3, 1e-6)], 2)
    v_steps = np.tile(np.r_[np.full(3, 1e-7), np.full(3, 1e-6)], 2)
    return LawCase(n, forces, lambda: tangent(False), steps,
                   lambda dv: forces(np.zeros(n), dv), lambda: tangent(True), v_steps)
