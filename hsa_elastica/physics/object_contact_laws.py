"""Contact of rod nodes with an obstacle carried by a moving rigid body: the kernels
(docs/contact.md, "Moving objects").

The law is the fixed obstacles' (:func:`~hsa_elastica.physics.contact_laws.point_force`, one
kernel): the obstacle's geometry is taken at the body's present pose (:func:`object_geometry`:
a ``Sphere`` is a sphere about its centre, a ``Cylinder`` a capsule about its axis segment),
and the points' velocity is their velocity relative to the body's surface point they touch,
spin included (:func:`relative_velocity`): ``v_rel = v_p - v_o - w x r_p``, with
``r_p = x_p - phi n - x_o`` the lever from the body's centre of mass to the point of its
surface closest to the node.  The body takes the equal and opposite forces at those surface
points: ``-sum f_p`` and the couple ``-sum r_p x f_p`` (:func:`object_contact_forces`, one
pass over the points).
Velocity and couple use the same lever, so the contact's power is ``sum f_p . v_rel`` exactly:
the damping and friction of the law take energy out of the pair as they do against a fixed
obstacle.  The normal damping takes the reduced mass of node and body (:func:`reduced_masses`).
A free sphere resting on a fixed obstacle touches it at its support point
(:func:`sphere_support`) and meets its rolling resistance there (:func:`rolling_couple`, with
its tangent :func:`rolling_couple_tangent` from the same terms).  The contact's tangent in the
Newton matrices' unknowns, objects included, is
:func:`~hsa_elastica.physics.point_tangent.contact_point_block`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.contact_laws import (
    CAPSULE,
    FAR_SMOOTHING_LENGTHS,
    ContactLaw,
    ContactOutput,
    ContactPoints,
    ObstacleGeometry,
    _hessian_entry,
    _scalars,
    _surface,
    body_spin,
    point_force,
)
from hsa_elastica.physics.joint_tangent import BODY_POS, BODY_ROT

__all__ = [
    "rolling_couple",
    "rolling_couple_tangent",
    "object_geometry",
    "object_scalars",
    "object_point",
    "relative_velocity",
    "object_contact_forces",
    "reduced_masses",
    "sphere_support",
    "support_point",
    "react",
    "add_couple",
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
    gs = object_scalars(x, q, o, shape)
    frame[0], frame[1], frame[2], frame[3], frame[4], frame[5] = gs[1:7]
    return ObstacleGeometry(gs[0], frame[0:3], frame[3:6], gs[7], gs[8], frame)  # (no box)


@njit(cache=True, inline="always")  # type: ignore[misc]
def object_scalars(
    x: NDArray[np.float64], q: NDArray[np.float64], o: int, shape: tuple[int, float, float]
) -> tuple[Any, ...]:
    """:func:`object_geometry` as :func:`~hsa_elastica.physics.contact_laws._scalars`' tuple
    (no array written: the compiled force evaluation's rows)."""
    kind, radius, length = shape
    e0, e1, e2 = q[2, 0, o], q[2, 1, o], q[2, 2, o]
    h = 0.5 * length if kind == CAPSULE else 0.0
    return (kind, x[0, o] - h * e0, x[1, o] - h * e1, x[2, o] - h * e2, e0, e1, e2, radius,
            length, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _lever_velocity(
    gs: tuple[Any, ...], x: NDArray[np.float64], v: NDArray[np.float64], o: int,
    w: tuple[float, float, float], y: tuple[float, float, float],
    u: tuple[float, float, float],
) -> tuple[Any, ...]:
    """A point at ``y`` [m] moving at ``u`` [m/s] against the surface ``gs`` of body ``o``
    (centre ``x[:, o]``, velocity ``v[:, o]``, lab angular velocity ``w``): ``(phi, n, r,
    u_rel)``, its signed distance [m] and normal, the lever ``r = x_p - phi n - x_o`` from the
    body's centre to its surface point closest to the point, and the velocity relative to that
    surface point ``u_rel = v_p - v_o - w x r`` [m/s] (scalars: no allocation in a kernel's
    loop)."""
    phi, n0, n1, n2, _, _ = _surface(gs, y[0], y[1], y[2])
    r0 = y[0] - phi * n0 - x[0, o]
    r1 = y[1] - phi * n1 - x[1, o]
    r2 = y[2] - phi * n2 - x[2, o]
    return (phi, (n0, n1, n2), (r0, r1, r2),
            (u[0] - v[0, o] - (w[1] * r2 - w[2] * r1),
             u[1] - v[1, o] - (w[2] * r0 - w[0] * r2),
             u[2] - v[2, o] - (w[0] * r1 - w[1] * r0)))


@njit(cache=True, inline="always")  # type: ignore[misc]
def object_point(
    gs: tuple[Any, ...], x: NDArray[np.float64], v: NDArray[np.float64], o: int,
    w: tuple[float, float, float], y: tuple[float, float, float],
    u: tuple[float, float, float], radius: float, mass: float, law: ContactLaw, far: float,
) -> tuple[Any, ...]:
    """One point (position ``y`` [m], velocity ``u`` [m/s], ``radius`` [m], reduced ``mass``
    [kg]) against the obstacle ``gs`` carried by body ``o`` (centre ``x``, velocity ``v``;
    arrays, not a record: this runs per point; :func:`_lever_velocity`):
    ``(f0, f1, f2, gap, slip, r)``, the force on the point [N] of
    :func:`~hsa_elastica.physics.contact_laws.point_force` at its velocity relative to the
    body's surface point, the gap [m], the tangential speed [m/s] and the lever ``r`` [m] of
    the reaction ``-f`` the body takes.  The step of every loop over points against an object
    (:func:`object_contact_forces`, the compiled force evaluation's rows)."""
    phi, n, r, rel = _lever_velocity(gs, x, v, o, w, y, u)
    g = phi - radius
    f0, f1, f2, sp = point_force(g, n[0], n[1], n[2], rel[0], rel[1], rel[2], mass, law, far)
    return f0, f1, f2, g, sp, r


@njit(cache=True)  # type: ignore[misc]
def relative_velocity(
    pts: ContactPoints, body: tuple[Any, ...], o: int, geom: ObstacleGeometry,
    rel: NDArray[np.float64],
) -> None:
    """``rel[:, p] = v_p - v_o - (Q^T omega) x r_p`` (lab) for body ``o`` of
    ``body = (x, v, omega, Q, ...)`` (``omega`` in the body frame; :func:`_lever_velocity`)."""
    x, v, omega, q = body[0], body[1], body[2], body[3]
    gs = _scalars(geom)
    w = body_spin(q, omega, o)
    y, u = pts.position, pts.velocity
    for p in range(y.shape[1]):
        _, _, _, rel_p = _lever_velocity(gs, x, v, o, w, (y[0, p], y[1, p], y[2, p]),
                                         (u[0, p], u[1, p], u[2, p]))
        rel[0, p], rel[1, p], rel[2, p] = rel_p


@njit(cache=True)  # type: ignore[misc]
def object_contact_forces(
    pts: ContactPoints, body: tuple[Any, ...], o: int, shape: tuple[int, float, float],
    law: ContactLaw, out: ContactOutput,
) -> None:
    """The contact of the points ``pts`` (a rod's nodes, or a body's points: positions,
    velocities, radii, reduced masses) with the obstacle ``shape`` carried by body ``o`` of
    ``body = (x, v, omega, Q, external_forces, external_torques)``: the forces on the points
    written to ``out`` (force, gap, tangential speed; the caller adds the forces to its nodes
    or body), the reaction added to the body: ``-sum f_p`` and the couple ``-sum r_p x f_p``
    (lab, converted to the body frame).

    One pass over the points: each point's distance, lever and relative velocity
    (:func:`_lever_velocity`), the law's force
    (:func:`~hsa_elastica.physics.contact_laws.point_force`, as
    :func:`~hsa_elastica.physics.contact_laws.contact_forces`) and its reaction, without calls
    or scratch arrays inside the loop (docs/contact.md, "On the compiled engines")."""
    x, v, omega, q, f, tau = body
    gs = object_scalars(x, q, o, shape)
    far = FAR_SMOOTHING_LENGTHS * law.smoothing_length
    w = body_spin(q, omega, o)
    y, u, radius, mass = pts
    force, gap, slip = out
    t = (0.0, 0.0, 0.0)
    for p in range(radius.shape[0]):
        f0, f1, f2, g, slip[p], r = object_point(
            gs, x, v, o, w, (y[0, p], y[1, p], y[2, p]), (u[0, p], u[1, p], u[2, p]),
            radius[p], mass[p], law, far)
        gap[p] = g
        force[0, p], force[1, p], force[2, p] = f0, f1, f2
        if g > far:  # no force: no reaction
            continue
        t = react(f, o, (f0, f1, f2), r, t)
    add_couple(tau, q, o, t)


@njit(cache=True, inline="always")  # type: ignore[misc]
def react(f: NDArray[np.float64], o: int, force: tuple[float, float, float],
          r: tuple[float, float, float], t: tuple[float, float, float]
          ) -> tuple[float, float, float]:
    """The reaction of a point's contact ``force`` [N] on the object ``o``: ``-force``
    added to its external force ``f``; returns the couple ``t - r x force`` [N m] (lab, ``r``
    the lever from its centre), summed over the points by the caller."""
    f[0, o] -= force[0]
    f[1, o] -= force[1]
    f[2, o] -= force[2]
    return (t[0] - (r[1] * force[2] - r[2] * force[1]),
            t[1] - (r[2] * force[0] - r[0] * force[2]),
            t[2] - (r[0] * force[1] - r[1] * force[0]))


@njit(cache=True, inline="always")  # type: ignore[misc]
def add_couple(tau: NDArray[np.float64], q: NDArray[np.float64], b: int,
               t: tuple[float, float, float]) -> None:
    """Add the lab couple ``t`` [N m] to body ``b``'s torque, in its frame (``Q t``)."""
    for a in range(3):
        tau[a, b] += q[a, 0, b] * t[0] + q[a, 1, b] * t[1] + q[a, 2, b] * t[2]


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
    local[0, 0], local[1, 0], local[2, 0] = support_point(_scalars(geom), x, q, b, radius)


@njit(cache=True, inline="always")  # type: ignore[misc]
def support_point(
    gs: tuple[Any, ...], x: NDArray[np.float64], q: NDArray[np.float64], b: int, radius: float
) -> tuple[float, float, float]:
    """:func:`sphere_support`'s point ``Q (-R n)`` (body frame) [m] on the obstacle ``gs``
    (:func:`~hsa_elastica.physics.contact_laws._scalars`)."""
    _, n0, n1, n2, _, _ = _surface(gs, x[0, b], x[1, b], x[2, b])
    return (-radius * (q[0, 0, b] * n0 + q[0, 1, b] * n1 + q[0, 2, b] * n2),
            -radius * (q[1, 0, b] * n0 + q[1, 1, b] * n1 + q[1, 2, b] * n2),
            -radius * (q[2, 0, b] * n0 + q[2, 1, b] * n1 + q[2, 2, b] * n2))


@njit(cache=True, inline="always")  # type: ignore[misc]
def _rolling_state(
    x: NDArray[np.float64], q: NDArray[np.float64], om: NDArray[np.float64], b: int,
    gs: tuple[Any, ...], force: NDArray[np.float64], ws: float,
) -> tuple[Any, ...]:
    """What the rolling couple and its tangent share for sphere ``b`` on the obstacle ``gs``
    (:func:`~hsa_elastica.physics.contact_laws._scalars`): ``(f_n, n, dist, interior, w, w_t,
    rho)``, ``n`` the obstacle's normal at the centre, ``f_n = f . n`` the support point's
    normal force, ``w = Q^T omega`` the lab angular velocity, ``w_t = w - n (n . w)`` its part
    along the surface and ``rho = sqrt(|w_t|^2 + ws^2)`` (``ws = v_s / R``; scalars: no
    allocation in the contact loop)."""
    _, n0, n1, n2, dist, interior = _surface(gs, x[0, b], x[1, b], x[2, b])
    fn = force[0, 0] * n0 + force[1, 0] * n1 + force[2, 0] * n2
    w0, w1, w2 = body_spin(q, om, b)
    wn = w0 * n0 + w1 * n1 + w2 * n2
    t0, t1, t2 = w0 - wn * n0, w1 - wn * n1, w2 - wn * n2
    rho = np.sqrt(t0 * t0 + t1 * t1 + t2 * t2 + ws * ws)
    return fn, (n0, n1, n2), dist, interior, (w0, w1, w2), (t0, t1, t2), rho


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
    ``body`` = (position, director, omega, external_torques) of the block.  Its tangent:
    :func:`rolling_couple_tangent` (the same terms, :func:`_rolling_state`)."""
    crr, radius, vs = law
    x, q, om, torque = body
    fn, _, _, _, _, wt, rho = _rolling_state(x, q, om, b, _scalars(geom), force, vs / radius)
    if not fn > 0.0:
        return
    scale = -crr * radius * fn / rho
    for a in range(3):
        torque[a, b] += scale * (q[a, 0, b] * wt[0] + q[a, 1, b] * wt[1] + q[a, 2, b] * wt[2])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _rolling_column(
    s: tuple[Any, ...], gs: tuple[Any, ...], f: NDArray[np.float64], df: NDArray[np.float64],
    q: NDArray[np.float64], col: int, pose: bool,
) -> tuple[float, float, float]:
    """``d T / d u_col`` (lab) of the couple for unknown ``col`` of the block
    (:func:`rolling_couple_tangent`; ``s`` = ``(c, f_n, n, dist, interior, w, w_t, rho)``)."""
    c, fn, n, dist, interior, w, wt, rho = s
    dn = (0.0, 0.0, 0.0)  # the normal at the centre: d n = H d x_b
    if pose and BODY_POS <= col < BODY_POS + 3:
        k = col - BODY_POS
        dn = (_hessian_entry(gs, n, dist, interior, 0, k),
              _hessian_entry(gs, n, dist, interior, 1, k),
              _hessian_entry(gs, n, dist, interior, 2, k))
    dw = (0.0, 0.0, 0.0)  # w = Q^T omega: Q^T d omega; a turn: -[w] Q^T d W
    if BODY_ROT <= col < BODY_ROT + 3:
        k = col - BODY_ROT
        e = (q[k, 0], q[k, 1], q[k, 2])  # Q^T e_k
        if pose:
            dw = (-(w[1] * e[2] - w[2] * e[1]), -(w[2] * e[0] - w[0] * e[2]),
                  -(w[0] * e[1] - w[1] * e[0]))
        else:
            dw = e
    # d f_n = n . d f + f . d n;  d w_t = d w - (n . w) d n - n (w . d n + n . d w)
    dfn = (n[0] * df[0, col] + n[1] * df[1, col] + n[2] * df[2, col]
           + f[0] * dn[0] + f[1] * dn[1] + f[2] * dn[2])
    nw = n[0] * w[0] + n[1] * w[1] + n[2] * w[2]
    along = (w[0] * dn[0] + w[1] * dn[1] + w[2] * dn[2]
             + n[0] * dw[0] + n[1] * dw[1] + n[2] * dw[2])
    d0 = dw[0] - nw * dn[0] - n[0] * along
    d1 = dw[1] - nw * dn[1] - n[1] * along
    d2 = dw[2] - nw * dn[2] - n[2] * along
    # T = c f_n w_t / rho:  d T = c (w_t d f_n + f_n (d w_t - w_t (w_t . d w_t) / rho^2)) / rho
    proj = (wt[0] * d0 + wt[1] * d1 + wt[2] * d2) / (rho * rho)
    return (c * (wt[0] * dfn + fn * (d0 - wt[0] * proj)) / rho,
            c * (wt[1] * dfn + fn * (d1 - wt[1] * proj)) / rho,
            c * (wt[2] * dfn + fn * (d2 - wt[2] * proj)) / rho)


@njit(cache=True, inline="always")  # type: ignore[misc]
def rolling_couple_tangent(
    body: tuple[Any, ...], b: int, geom: ObstacleGeometry, force: NDArray[np.float64],
    df: NDArray[np.float64], law: tuple[float, float, float], velocity: bool,
    out: NDArray[np.float64],
) -> None:
    """The consistent tangent of :func:`rolling_couple` added into the body's couple rows
    (``BODY_ROT``) of a 12 x 12 block in the joints' layout
    (:data:`~hsa_elastica.physics.joint_tangent.JOINT_BLOCK`): with respect to the sphere's
    position and rotation increment (``Q <- exp(-[W]) Q``), or with ``velocity`` to its
    velocity and angular velocity (body frame).  ``force`` (3, 1) is the support point's
    contact force and ``df`` (3, 12) its derivative in the same unknowns (the point's block,
    :func:`~hsa_elastica.physics.point_tangent.contact_point_block`): the couple depends on
    them through ``f_n``, on the position through the normal ``n(x_b)`` and on the rotation
    and angular velocity through ``w = Q^T omega``; its body-frame value ``Q T`` turns with
    the frame (``[Q T]``).  ``body`` = (position, director, omega)."""
    crr, radius, vs = law
    x, q, om = body
    gs = _scalars(geom)
    fn, n, dist, interior, w, wt, rho = _rolling_state(x, q, om, b, gs, force, vs / radius)
    if not fn > 0.0:
        return
    c = -crr * radius
    s = (c, fn, n, dist, interior, w, wt, rho)
    Q = q[:, :, b]
    f = force[:, 0]
    for col in range(out.shape[1]):
        t0, t1, t2 = _rolling_column(s, gs, f, df, Q, col, not velocity)
        for a in range(3):
            out[BODY_ROT + a, col] += Q[a, 0] * t0 + Q[a, 1] * t1 + Q[a, 2] * t2
    if velocity:
        return
    scale = c * fn / rho  # the couple turns with the body frame: d (Q T) / d W = [Q T]
    tb = (scale * (Q[0, 0] * wt[0] + Q[0, 1] * wt[1] + Q[0, 2] * wt[2]),
          scale * (Q[1, 0] * wt[0] + Q[1, 1] * wt[1] + Q[1, 2] * wt[2]),
          scale * (Q[2, 0] * wt[0] + Q[2, 1] * wt[1] + Q[2, 2] * wt[2]))
    out[BODY_ROT + 0, BODY_ROT + 1] -= tb[2]
    out[BODY_ROT + 0, BODY_ROT + 2] += tb[1]
    out[BODY_ROT + 1, BODY_ROT + 0] += tb[2]
    out[BODY_ROT + 1, BODY_ROT + 2] -= tb[0]
    out[BODY_ROT + 2, BODY_ROT + 0] -= tb[1]
    out[BODY_ROT + 2, BODY_ROT + 1] += tb[0]
