"""Contact of rod nodes with an obstacle carried by a moving rigid body: the kernels
(docs/contact.md, "Moving objects").

The law is the fixed obstacles' (:func:`~hsa_elastica.physics.contact_laws.contact_forces`,
one kernel): the obstacle's geometry is taken at the body's present pose
(:func:`object_geometry`: a ``Sphere`` is a sphere about its centre, a ``Cylinder`` a capsule
about its axis segment), and the points' velocity is their velocity relative to the body's
surface point they touch, spin included (:func:`relative_velocity`):
``v_rel = v_p - v_o - w x r_p``, ``r_p = x_p - phi n - x_o`` the lever from the body's centre
of mass to the point of its surface closest to the node.  The body takes the equal and
opposite forces at those surface points (:func:`object_reaction`): ``-sum f_p`` and the couple
``-sum r_p x f_p``.  Velocity and couple use the same lever, so the contact's power is
``sum f_p . v_rel`` exactly: the damping and friction of the law take energy out of the pair
as they do against a fixed obstacle.  The normal damping takes the reduced mass of node and
body (:func:`reduced_masses`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.contact_laws import (
    CAPSULE,
    SPHERE,
    ContactLaw,
    ContactOutput,
    ContactPoints,
    ObstacleGeometry,
    _scalars,
    _surface,
    contact_forces,
    contact_tangent,
)

__all__ = [
    "rolling_couple",
    "object_geometry",
    "relative_velocity",
    "object_reaction",
    "object_contact_forces",
    "object_contact_tangent",
    "reduced_masses",
    "sphere_support",
]


def reduced_masses(node_mass: NDArray[np.float64], body_mass: float) -> NDArray[np.float64]:
    """``m M / (m + M)`` per node [kg]: the mass of the two-body contact spring (its critical
    damping ``2 sqrt(k m M / (m + M))``)."""
    m = np.asarray(node_mass, dtype=np.float64)
    return np.ascontiguousarray(m * body_mass / (m + body_mass))


@njit(cache=True)  # type: ignore[misc]
def object_geometry(
    x: NDArray[np.float64], q: NDArray[np.float64], o: int, shape: tuple[int, float, float],
    frame: NDArray[np.float64],
) -> ObstacleGeometry:
    """The obstacle carried by body ``o`` (centre ``x[:, o]``, directors ``q[:, :, o]``, lab
    -> body) at its present pose: ``shape = (kind, radius, length)``; a SPHERE about the
    centre, a CAPSULE along the body's local z (``Cylinder``'s axis, ``length`` long, centred).
    Origin and direction are written to ``frame`` (6,) and viewed by the record."""
    kind, radius, length = shape
    e0, e1, e2 = q[2, 0, o], q[2, 1, o], q[2, 2, o]
    h = 0.5 * length if kind == CAPSULE else 0.0
    frame[0] = x[0, o] - h * e0
    frame[1] = x[1, o] - h * e1
    frame[2] = x[2, o] - h * e2
    frame[3], frame[4], frame[5] = e0, e1, e2
    return ObstacleGeometry(kind, frame[0:3], frame[3:6], radius, length)


@njit(cache=True)  # type: ignore[misc]
def _lever(gs: tuple[Any, ...], x: NDArray[np.float64], o: int, p: NDArray[np.float64],
           k: int) -> tuple[float, float, float]:
    """``r = x_p - phi n - x_o``: from body ``o``'s centre to its surface point closest to
    point ``k`` of ``p`` (3, n)."""
    phi, n0, n1, n2, _, _ = _surface(gs, p[0, k], p[1, k], p[2, k])
    return (p[0, k] - phi * n0 - x[0, o], p[1, k] - phi * n1 - x[1, o],
            p[2, k] - phi * n2 - x[2, o])


@njit(cache=True)  # type: ignore[misc]
def relative_velocity(
    pts: ContactPoints, body: tuple[Any, ...], o: int, geom: ObstacleGeometry,
    rel: NDArray[np.float64],
) -> None:
    """``rel[:, p] = v_p - v_o - (Q^T omega) x r_p`` (lab) for body ``o`` of
    ``body = (x, v, omega, Q, ...)`` (``omega`` in the body frame)."""
    x, v, omega, q = body[0], body[1], body[2], body[3]
    gs = _scalars(geom)
    w0 = q[0, 0, o] * omega[0, o] + q[1, 0, o] * omega[1, o] + q[2, 0, o] * omega[2, o]
    w1 = q[0, 1, o] * omega[0, o] + q[1, 1, o] * omega[1, o] + q[2, 1, o] * omega[2, o]
    w2 = q[0, 2, o] * omega[0, o] + q[1, 2, o] * omega[1, o] + q[2, 2, o] * omega[2, o]
    position, velocity = pts.position, pts.velocity
    for p in range(position.shape[1]):
        r0, r1, r2 = _lever(gs, x, o, position, p)
        rel[0, p] = velocity[0, p] - v[0, o] - (w1 * r2 - w2 * r1)
        rel[1, p] = velocity[1, p] - v[1, o] - (w2 * r0 - w0 * r2)
        rel[2, p] = velocity[2, p] - v[2, o] - (w0 * r1 - w1 * r0)


@njit(cache=True)  # type: ignore[misc]
def object_reaction(
    position: NDArray[np.float64], geom: ObstacleGeometry, body: tuple[Any, ...], o: int,
    force: NDArray[np.float64],
) -> None:
    """Add to body ``o`` of ``body = (x, v, omega, Q, external_forces, external_torques)`` the
    reaction of the forces ``force`` (3, n) [N] on the points ``position``: ``-sum f_p`` and
    the couple ``-sum r_p x f_p`` (lab, converted to the body frame)."""
    x, q, f, tau = body[0], body[3], body[4], body[5]
    gs = _scalars(geom)
    t0 = t1 = t2 = 0.0
    for p in range(force.shape[1]):
        r0, r1, r2 = _lever(gs, x, o, position, p)
        f0, f1, f2 = force[0, p], force[1, p], force[2, p]
        f[0, o] -= f0
        f[1, o] -= f1
        f[2, o] -= f2
        t0 -= r1 * f2 - r2 * f1
        t1 -= r2 * f0 - r0 * f2
        t2 -= r0 * f1 - r1 * f0
    for i in range(3):
        tau[i, o] += q[i, 0, o] * t0 + q[i, 1, o] * t1 + q[i, 2, o] * t2


@njit(cache=True)  # type: ignore[misc]
def object_contact_forces(
    pts: ContactPoints, body: tuple[Any, ...], o: int, shape: tuple[int, float, float],
    law: ContactLaw, frame: NDArray[np.float64], rel: NDArray[np.float64], out: ContactOutput,
) -> None:
    """The contact of the points ``pts`` (a rod's nodes: positions, velocities, radii, reduced
    masses) with the obstacle ``shape`` carried by body ``o`` of ``body = (x, v, omega, Q,
    external_forces, external_torques)``: the forces on the points written to ``out`` (the
    caller adds them to its nodes), the reaction added to the body.  ``frame`` (6,) and
    ``rel`` (3, n) are scratch."""
    geom = object_geometry(body[0], body[3], o, shape, frame)
    relative_velocity(pts, body, o, geom, rel)
    contact_forces(ContactPoints(pts.position, rel, pts.radius, pts.mass), geom, law, out)
    object_reaction(pts.position, geom, body, o, out.force)


@njit(cache=True)  # type: ignore[misc]
def sphere_support(
    x: NDArray[np.float64], q: NDArray[np.float64], b: int, geom: ObstacleGeometry,
    radius: float, local: NDArray[np.float64],
) -> None:
    """The point of sphere ``b`` (centre ``x[:, b]``, directors ``q[:, :, b]``, ``radius`` [m])
    closest to the fixed obstacle ``geom``, in the body frame: ``local[:, 0] = Q (-R n)``, ``n``
    the obstacle's outward normal at the centre.  A body contact on that one point (radius 0)
    has the gap ``phi(centre) - R`` and the velocity and lever of the sphere's surface there,
    so a rolling sphere feels no friction and a sliding one the friction couple."""
    _, n0, n1, n2, _, _ = _surface(_scalars(geom), x[0, b], x[1, b], x[2, b])
    for i in range(3):
        local[i, 0] = -radius * (q[i, 0, b] * n0 + q[i, 1, b] * n1 + q[i, 2, b] * n2)


@njit(cache=True)  # type: ignore[misc]
def rolling_couple(
    body: tuple[Any, ...], b: int, geom: ObstacleGeometry, force: NDArray[np.float64],
    law: tuple[float, float, float],
) -> None:
    """Rolling resistance of sphere ``b`` on the fixed obstacle ``geom``: the couple
    ``T = -c_rr R f_n w_t / sqrt(|w_t|^2 + (v_s / R)^2)`` (lab) added to the body's
    ``external_torques`` (body frame), ``w_t`` the lab angular velocity's component along the
    obstacle's surface (the rolling; the spin about the normal meets none), ``f_n`` the normal
    part of the support point's contact ``force`` (3, 1) [N] (0 when it pulls), ``law`` =
    ``(c_rr [-], R [m], v_s [m/s])`` (the obstacle's ``rolling_resistance``, the radius, its
    law's slip velocity: the couple is smoothed below the rolling speed ``v_s``).  Rolling
    without slipping it decelerates a solid sphere at ``(5/7) c_rr g`` on a level floor.
    ``body`` = (position, director, omega, external_torques) of the block."""
    crr, radius, vs = law
    x, q, om, torque = body
    _, n0, n1, n2, _, _ = _surface(_scalars(geom), x[0, b], x[1, b], x[2, b])
    fn = force[0, 0] * n0 + force[1, 0] * n1 + force[2, 0] * n2
    if not fn > 0.0:
        return
    # lab angular velocity Q^T omega, its part along the surface (three scalars: no
    # allocation in the contact loop)
    w0 = q[0, 0, b] * om[0, b] + q[1, 0, b] * om[1, b] + q[2, 0, b] * om[2, b]
    w1 = q[0, 1, b] * om[0, b] + q[1, 1, b] * om[1, b] + q[2, 1, b] * om[2, b]
    w2 = q[0, 2, b] * om[0, b] + q[1, 2, b] * om[1, b] + q[2, 2, b] * om[2, b]
    wn = w0 * n0 + w1 * n1 + w2 * n2
    w0 -= wn * n0
    w1 -= wn * n1
    w2 -= wn * n2
    ws = vs / radius
    scale = -crr * radius * fn / np.sqrt(w0 * w0 + w1 * w1 + w2 * w2 + ws * ws)
    for a in range(3):
        torque[a, b] += scale * (q[a, 0, b] * w0 + q[a, 1, b] * w1 + q[a, 2, b] * w2)


def _skew(a: Any) -> NDArray[np.float64]:
    """``[a]``: ``[a] b = a x b``."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def object_contact_tangent(
    pts: ContactPoints, body: tuple[Any, ...], o: int, shape: tuple[int, float, float],
    law: ContactLaw, out: NDArray[np.float64],
) -> None:
    """The consistent tangent of :func:`object_contact_forces` for a SPHERE carried by body
    ``o``, w.r.t. each point's position and the body's position and rotation increment (the
    static solver's unknowns: ``Q <- exp(-[w]) Q``): ``out`` (3 n + 6, 3 n + 6), rows and
    columns in the order node 0 .. n-1, body position, body rotation; generalised forces:
    node forces, the body's force and its couple in the body frame.

    From the fixed obstacle's tangent (``D_x = d f / d x``, ``D_v = d f / d v`` of
    :func:`~hsa_elastica.physics.contact_laws.contact_tangent` at the relative velocity):
    the node's block ``K = D_x + D_v d v_rel / d x_p`` with ``d v_rel / d x_p = -[w] R H``
    (the lever ``r = R n`` follows the node), the body position's block ``-K`` (the sphere's
    force depends on ``x_p - x_o``), the rotation's ``D_v d v_rel / d w`` with
    ``d v_rel / d w = -[r] Q^T [omega]`` (the body's spin seen from the turned frame); the
    body's rows the negative sums; its couple ``-Q sum r_p x f_p`` transported by the lever's
    derivative and turned with the frame (``[tau]``).  Numpy: the engines difference the
    contacts; this is the law's registered tangent (physics/laws.py)."""
    n = pts.position.shape[1]
    x, omega, q = body[0], body[2], body[3]
    if shape[0] != SPHERE:
        raise ValueError("object_contact_tangent: a sphere only")
    frame, rel = np.zeros(6), np.zeros((3, n))
    geom = object_geometry(x, q, o, shape, frame)
    relative_velocity(pts, body, o, geom, rel)
    moving = ContactPoints(pts.position, rel, pts.radius, pts.mass)
    d_dx, d_dv = np.zeros((3, 3, n)), np.zeros((3, 3, n))
    contact_tangent(moving, geom, law, d_dx, d_dv)
    force = ContactOutput(np.zeros((3, n)), np.zeros(n), np.zeros(n))
    contact_forces(moving, geom, law, force)
    Q = np.array(q[:, :, o])
    skew_w = _skew(omega[:, o])
    w_lab = Q.T @ omega[:, o]
    b = 3 * n
    tau = np.zeros(3)
    out[:, :] = 0.0
    for p in range(n):
        xp = pts.position[:, p]
        d = xp - x[:, o]
        dist = float(np.linalg.norm(d))
        nv = d / dist
        r = shape[1] * nv
        dr = shape[1] * (np.eye(3) - np.outer(nv, nv)) / dist  # d r / d x_p
        k_node = d_dx[:, :, p] + d_dv[:, :, p] @ (-_skew(w_lab) @ dr)
        k_rot = d_dv[:, :, p] @ (-_skew(r) @ Q.T @ skew_w)
        f = force.force[:, p]
        s = 3 * p
        out[s : s + 3, s : s + 3] = k_node
        out[s : s + 3, b : b + 3] = -k_node
        out[s : s + 3, b + 3 : b + 6] = k_rot
        out[b : b + 3, s : s + 3] = -k_node
        out[b : b + 3, b : b + 3] += k_node
        out[b : b + 3, b + 3 : b + 6] -= k_rot
        # couple (body frame) -Q (r x f): d / d x_p = -Q ([r] K - [f] dr); d / d x_o its negative
        c_node = -Q @ (_skew(r) @ k_node - _skew(f) @ dr)
        out[b + 3 : b + 6, s : s + 3] = c_node
        out[b + 3 : b + 6, b : b + 3] -= c_node
        out[b + 3 : b + 6, b + 3 : b + 6] -= Q @ _skew(r) @ k_rot
        tau -= Q @ np.cross(r, f)
    # the couple turns with the body frame: d (Q t) / d w = [Q t] under Q <- exp(-[w]) Q
    out[b + 3 : b + 6, b + 3 : b + 6] += _skew(tau)
