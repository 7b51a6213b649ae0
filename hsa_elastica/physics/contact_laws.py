"""Frictional contact with fixed obstacles as a law: parameter records, the numba force kernel
and its consistent tangent (docs/contact.md).

A contact *point* (a rod node, a point of a rigid body's rim) at ``x`` with velocity ``v``,
radius ``r`` (the rod's cross-section; 0 for a rim point) and mass ``m`` touches an obstacle
whose signed distance is ``phi(x)`` with outward normal ``n = grad phi``.  With the gap
``g = phi(x) - r``, the smoothing length ``l``, the stiffness ``k``, ``s = sigmoid(-g / l)``:

* normal force ``F_n = max(k l softplus(-g / l) - c s (n . v), 0)``, ``c = 2 zeta sqrt(k m)``
  (the damping never pulls a separating point back: a contact only pushes);
* friction ``f_t = -mu f_el v_t / sqrt(|v_t|^2 + v_s^2)`` with ``f_el = k l softplus(-g / l)``
  and ``v_t = v - n (n . v)``;
* force on the point ``f = F_n n + f_t``.

:func:`contact_forces` evaluates ``f`` for every point; :func:`contact_tangent` the 3x3 blocks
``d f / d x`` and ``d f / d v`` per point, from the same helpers (:func:`_normal_terms`,
:func:`_surface`, :func:`_hessian_entry`) differentiated by the chain rule.  Both take
records (:class:`ContactPoints`, :class:`ObstacleGeometry`, :class:`ContactLaw`) and allocate
nothing.  :func:`body_points` / :func:`body_wrench` map a rigid body's points (body frame) to
contact points and their forces back to the body's force and torque.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.params.environment import (
    BoxObstacle,
    CapsuleObstacle,
    ContactParams,
    PlaneObstacle,
    SphereObstacle,
)

__all__ = [
    "PLANE",
    "SPHERE",
    "CAPSULE",
    "BOX",
    "ContactLaw",
    "ObstacleGeometry",
    "ContactPoints",
    "ContactOutput",
    "law_record",
    "geometry_record",
    "row_law",
    "row_obstacle",
    "row_geometry",
    "contact_forces",
    "obstacle_point",
    "surface_values",
    "contact_tangent",
    "law_force",
    "point_force",
    "body_spin",
    "body_point",
    "body_points",
    "body_wrench",
    "FAR_SMOOTHING_LENGTHS",
]

PLANE, SPHERE, CAPSULE, BOX = 0, 1, 2, 3

#: a box's normal component along one of its axes above which that axis is clamped (the
#: closest point is on a face across it); the free axes' components are round-off (~1e-17)
_BOX_CLAMPED = 1e-12

#: a point farther from the obstacle than this many smoothing lengths feels no force (the law
#: gives below ``k l 4.3e-18`` there: zero to double precision against any force of a touching
#: point) and its tangent is zero; the kernels skip the law's transcendental functions for it
FAR_SMOOTHING_LENGTHS = 40.0


class ContactLaw(NamedTuple):
    """The law's parameters (SI): ``ContactParams`` as a numba record."""

    stiffness: float  # k [N/m]
    smoothing_length: float  # l [m]
    damping_ratio: float  # zeta [-]
    mu: float  # Coulomb coefficient [-]
    slip_velocity: float  # v_s [m/s]


class ObstacleGeometry(NamedTuple):
    """A fixed obstacle: ``kind`` (PLANE, SPHERE, CAPSULE, BOX), ``origin`` (plane point,
    sphere centre, capsule start, box centre) [m], ``direction`` (plane normal, capsule unit
    axis, box z axis; unused for a sphere), ``radius`` [m] (0 for a plane; a box's edge
    radius), ``length`` [m] of a capsule's axis, ``box`` (6,): a box's x axis and the half
    edge lengths [m] of its inner box (``size / 2 - edge_radius``); not read for the other
    kinds."""

    kind: int
    origin: NDArray[np.float64]
    direction: NDArray[np.float64]
    radius: float
    length: float
    box: NDArray[np.float64]


class ContactPoints(NamedTuple):
    """The points a law acts on: positions and velocities (3, n) [m, m/s], radii (n,) [m],
    masses (n,) [kg] (the damping's critical rate)."""

    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    radius: NDArray[np.float64]
    mass: NDArray[np.float64]


class ContactOutput(NamedTuple):
    """What :func:`contact_forces` writes per point: force (3, n) [N], gap (n,) [m] (negative:
    penetration), tangential speed (n,) [m/s]."""

    force: NDArray[np.float64]
    gap: NDArray[np.float64]
    slip: NDArray[np.float64]


@njit(cache=True, inline="always")  # type: ignore[misc]
def row_law(par: NDArray[np.float64], i: int) -> ContactLaw:
    """The law of row ``i`` of a contact table's ``params`` (columns 8-12: k, l, zeta, mu,
    v_s; :class:`~hsa_elastica.physics.tables.ContactTable`)."""
    return ContactLaw(par[i, 8], par[i, 9], par[i, 10], par[i, 11], par[i, 12])


@njit(cache=True, inline="always")  # type: ignore[misc]
def row_obstacle(ids: NDArray[np.int64], par: NDArray[np.float64], i: int) -> ObstacleGeometry:
    """The obstacle of row ``i`` of a contact table (:class:`~hsa_elastica.physics.tables.
    ContactTable`): its kind ``ids[i, 3]``; in ``params``, origin (columns 0-2), direction
    (3-5), radius (6), length (7) and a box's x axis and inner half edges (15-20)."""
    return ObstacleGeometry(ids[i, 3], par[i, 0:3], par[i, 3:6], par[i, 6], par[i, 7],
                            par[i, 15:21])


@njit(cache=True, inline="always")  # type: ignore[misc]
def row_geometry(ids: NDArray[np.int64], par: NDArray[np.float64], i: int) -> tuple[Any, ...]:
    """:func:`row_obstacle`'s geometry as :func:`_scalars`' tuple, read from the table's
    columns without taking a slice (the compiled force evaluation's rows: each slice is a
    reference count)."""
    return (ids[i, 3], par[i, 0], par[i, 1], par[i, 2], par[i, 3], par[i, 4], par[i, 5],
            par[i, 6], par[i, 7], par[i, 15], par[i, 16], par[i, 17], par[i, 18], par[i, 19],
            par[i, 20])


def law_record(p: ContactParams) -> ContactLaw:
    """The numba record of a validated :class:`ContactParams`."""
    return ContactLaw(float(p.stiffness), float(p.smoothing_length), float(p.damping_ratio),
                      float(p.friction_coefficient), float(p.slip_velocity))


def geometry_record(obstacle: Any) -> ObstacleGeometry:
    """The numba record of a validated obstacle (plane, sphere, capsule or box parameters)."""
    unused = np.zeros(6)
    if isinstance(obstacle, PlaneObstacle):
        return ObstacleGeometry(PLANE, np.array(obstacle.point), np.array(obstacle.normal), 0.0,
                                0.0, unused)
    if isinstance(obstacle, SphereObstacle):
        return ObstacleGeometry(SPHERE, np.array(obstacle.center), np.zeros(3),
                                float(obstacle.radius), 0.0, unused)
    if isinstance(obstacle, CapsuleObstacle):
        a, b = np.array(obstacle.start), np.array(obstacle.end)
        length = float(np.linalg.norm(b - a))
        return ObstacleGeometry(CAPSULE, a, (b - a) / length, float(obstacle.radius), length,
                                unused)
    if isinstance(obstacle, BoxObstacle):
        r = float(obstacle.edge_radius)
        inner = 0.5 * np.array(obstacle.size) - r
        return ObstacleGeometry(BOX, np.array(obstacle.center), np.array(obstacle.z_axis), r,
                                0.0, np.concatenate([np.array(obstacle.x_axis), inner]))
    raise TypeError(f"not an obstacle: {obstacle!r}")


# --------------------------------------------------------------------------------------------
# shared helpers: the expressions the force and the tangent both differentiate
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")  # type: ignore[misc]
def _scalars(geom: ObstacleGeometry) -> tuple[Any, ...]:
    """The obstacle as a tuple of scalars ``(kind, origin (3), direction (3), radius,
    length, box (6))``: read once per kernel call (an array taken out of a record is
    reference-counted at every access, which cost more than the law itself per point)."""
    o, e, b = geom.origin, geom.direction, geom.box
    return (geom.kind, o[0], o[1], o[2], e[0], e[1], e[2], geom.radius, geom.length,
            b[0], b[1], b[2], b[3], b[4], b[5])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _box_axes(geom: tuple[Any, ...]) -> tuple[Any, ...]:
    """A box's unit axes x, y = z x x, z (lab) from its scalars (:func:`_scalars`)."""
    z0, z1, z2, x0, x1, x2 = geom[4], geom[5], geom[6], geom[9], geom[10], geom[11]
    return ((x0, x1, x2), (z1 * x2 - z2 * x1, z2 * x0 - z0 * x2, z0 * x1 - z1 * x0),
            (z0, z1, z2))


@njit(cache=True, inline="always")  # type: ignore[misc]
def _box_clamp(u: tuple[float, float, float], h: float, d0: float, d1: float, d2: float
               ) -> tuple[float, float]:
    """``(q, r)``: the coordinate ``q = d . u`` along a box axis ``u`` and its excess
    ``r = q - clamp(q, -h, h)`` beyond the inner box's half edge ``h``."""
    q = d0 * u[0] + d1 * u[1] + d2 * u[2]
    return q, q - min(max(q, -h), h)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _box_surface(geom: tuple[Any, ...], d0: float, d1: float, d2: float) -> tuple[Any, ...]:
    """:func:`_surface` of a box at ``d`` from its centre: outside the inner box (half edges
    ``h``), the distance to its closest point ``c = clamp(q, -h, h)`` (``q``: ``d`` in the
    box's axes) less the edge radius; inside it, minus the depth below the nearest face and
    the edge radius.  ``interior``: inside the inner box."""
    ux, uy, uz = _box_axes(geom)
    qx, rx = _box_clamp(ux, geom[12], d0, d1, d2)
    qy, ry = _box_clamp(uy, geom[13], d0, d1, d2)
    qz, rz = _box_clamp(uz, geom[14], d0, d1, d2)
    dist = math.sqrt(rx * rx + ry * ry + rz * rz)
    if dist > 0.0:
        return (dist - geom[7], (rx * ux[0] + ry * uy[0] + rz * uz[0]) / dist,
                (rx * ux[1] + ry * uy[1] + rz * uz[1]) / dist,
                (rx * ux[2] + ry * uy[2] + rz * uz[2]) / dist, dist, False)
    # inside: the face of least depth h - |q| (ties: x before y before z)
    u, q, depth = ux, qx, geom[12] - abs(qx)
    if geom[13] - abs(qy) < depth:
        u, q, depth = uy, qy, geom[13] - abs(qy)
    if geom[14] - abs(qz) < depth:
        u, q, depth = uz, qz, geom[14] - abs(qz)
    sign = 1.0 if q >= 0.0 else -1.0
    return -depth - geom[7], sign * u[0], sign * u[1], sign * u[2], 0.0, True


@njit(cache=True, inline="always")  # type: ignore[misc]
def _surface(geom: tuple[Any, ...], x0: float, x1: float, x2: float) -> tuple[Any, ...]:
    """``(phi, n0, n1, n2, dist, interior)`` of the obstacle ``geom`` (:func:`_scalars`):
    signed distance to the surface [m], outward unit normal, distance to the
    plane/centre/axis (curvature radius + phi; 0 for a plane; a box's: to its inner box) and
    whether the closest point of a capsule is inside its axis (not on a cap), or the point is
    inside a box's inner box (:func:`_box_surface`)."""
    kind, g0, g1, g2, e0, e1, e2, radius, length = geom[:9]
    d0, d1, d2 = x0 - g0, x1 - g1, x2 - g2
    if kind == PLANE:
        return d0 * e0 + d1 * e1 + d2 * e2, e0, e1, e2, 0.0, False
    if kind == BOX:
        return _box_surface(geom, d0, d1, d2)
    interior = False
    if kind == CAPSULE:
        t = d0 * e0 + d1 * e1 + d2 * e2
        if t > length:
            t = length
        elif t > 0.0:
            interior = True
        else:
            t = 0.0
        d0, d1, d2 = d0 - t * e0, d1 - t * e1, d2 - t * e2
    dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    if dist < 1e-300:  # the point on the centre / axis: any normal is as good
        return -radius, 0.0, 0.0, 1.0, 1e-300, interior
    return dist - radius, d0 / dist, d1 / dist, d2 / dist, dist, interior


@njit(cache=True)  # type: ignore[misc]
def _hessian_entry(
    geom: tuple[Any, ...], n: tuple[float, float, float], dist: float, interior: bool,
    i: int, j: int,
) -> float:
    """``d n_i / d x_j`` (the signed distance's Hessian): 0 for a plane,
    ``(delta_ij - n_i n_j) / dist`` for a sphere or a capsule's cap, minus ``e_i e_j / dist``
    on a capsule's cylinder; for a box ``(P_ij - n_i n_j) / dist`` outside its inner box,
    ``P`` the projection on its clamped axes (one on a face: 0, two on an edge, three at a
    corner), and 0 inside it."""
    if geom[0] == PLANE:
        return 0.0
    if geom[0] == BOX:
        if interior:
            return 0.0
        h = -n[i] * n[j]
        for u in _box_axes(geom):
            if abs(n[0] * u[0] + n[1] * u[1] + n[2] * u[2]) > _BOX_CLAMPED:
                h += u[i] * u[j]
        return h / dist
    h = (1.0 if i == j else 0.0) - n[i] * n[j]
    if interior:
        e = (geom[4], geom[5], geom[6])
        h -= e[i] * e[j]
    return h / dist


@njit(cache=True, inline="always")  # type: ignore[misc]
def _hessian9(
    geom: tuple[Any, ...], n: tuple[float, float, float], dist: float, interior: bool
) -> tuple[float, ...]:
    """The signed distance's Hessian (:func:`_hessian_entry`), its 9 entries row by row."""
    return (_hessian_entry(geom, n, dist, interior, 0, 0),
            _hessian_entry(geom, n, dist, interior, 0, 1),
            _hessian_entry(geom, n, dist, interior, 0, 2),
            _hessian_entry(geom, n, dist, interior, 1, 0),
            _hessian_entry(geom, n, dist, interior, 1, 1),
            _hessian_entry(geom, n, dist, interior, 1, 2),
            _hessian_entry(geom, n, dist, interior, 2, 0),
            _hessian_entry(geom, n, dist, interior, 2, 1),
            _hessian_entry(geom, n, dist, interior, 2, 2))


@njit(cache=True, inline="always")  # type: ignore[misc]
def _normal_terms(g: float, law: ContactLaw) -> tuple[float, float, float, float]:
    """``(f_el, s, d f_el / d g, d s / d g)``: the elastic normal force
    ``k l softplus(-g / l)`` [N] and the contact indicator ``s = sigmoid(-g / l)``, with their
    derivatives (overflow-free for any ``g``)."""
    k, ell = law.stiffness, law.smoothing_length
    z = -g / ell
    if z > 0.0:
        ez = math.exp(-z)
        softplus = z + math.log1p(ez)
        s = 1.0 / (1.0 + ez)
    else:
        ez = math.exp(z)
        softplus = math.log1p(ez)
        s = ez / (1.0 + ez)
    return k * ell * softplus, s, -k * s, -s * (1.0 - s) / ell


@njit(cache=True)  # type: ignore[misc]
def _point_state(
    x: NDArray[np.float64], v: NDArray[np.float64], radius: float, mass: float,
    geom: tuple[Any, ...], law: ContactLaw, p: int,
) -> tuple[Any, ...]:
    """Everything the force and its tangent share at point ``p`` (position ``x[:, p]``,
    velocity ``v[:, p]``, ``radius``, ``mass``):
    ``(g, n, dist, interior, f_el, s, dfel, ds, c, vn, vt, rho)``."""
    phi, n0, n1, n2, dist, interior = _surface(geom, x[0, p], x[1, p], x[2, p])
    g = phi - radius
    f_el, s, dfel, ds = _normal_terms(g, law)
    c = 2.0 * law.damping_ratio * math.sqrt(law.stiffness * mass)
    vn = n0 * v[0, p] + n1 * v[1, p] + n2 * v[2, p]
    vt = (v[0, p] - n0 * vn, v[1, p] - n1 * vn, v[2, p] - n2 * vn)
    rho = math.sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]
                    + law.slip_velocity * law.slip_velocity)
    return g, (n0, n1, n2), dist, interior, f_el, s, dfel, ds, c, vn, vt, rho


@njit(cache=True)  # type: ignore[misc]
def surface_values(
    position: NDArray[np.float64], geom: ObstacleGeometry, phi: NDArray[np.float64],
    normal: NDArray[np.float64],
) -> None:
    """The obstacle's signed distance ``phi`` (n,) [m] and outward unit normal ``grad phi``
    (3, n) at the points ``position`` (3, n) [m] (:func:`_surface`'s), written."""
    gs = _scalars(geom)
    for p in range(position.shape[1]):
        phi[p], n0, n1, n2, _, _ = _surface(gs, position[0, p], position[1, p], position[2, p])
        normal[0, p], normal[1, p], normal[2, p] = n0, n1, n2


# --------------------------------------------------------------------------------------------
# the law's kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")  # type: ignore[misc]
def law_force(
    g: float, n0: float, n1: float, n2: float, v0: float, v1: float, v2: float, mass: float,
    law: ContactLaw,
) -> tuple[float, float, float, float]:
    """The law at one contact: gap ``g`` [m], unit normal ``n`` (pointing to the side the force
    pushes), velocity ``v`` [m/s] relative to the other surface, mass ``mass`` [kg] (the
    damping's critical rate) -> ``(f0, f1, f2, slip)``: the force [N]
    ``max(f_el - c s v_n, 0) n - mu f_el v_t / rho`` and the tangential speed [m/s].  Every
    contact of the package (obstacles, objects, rod against rod) evaluates its force here."""
    f_el, s, _, _ = _normal_terms(g, law)
    c = 2.0 * law.damping_ratio * math.sqrt(law.stiffness * mass)
    vn = n0 * v0 + n1 * v1 + n2 * v2
    t0, t1, t2 = v0 - n0 * vn, v1 - n1 * vn, v2 - n2 * vn
    rho = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2 + law.slip_velocity * law.slip_velocity)
    fn = max(f_el - c * s * vn, 0.0)  # a contact pushes only: no pull while separating
    slip = math.sqrt(max(rho * rho - law.slip_velocity * law.slip_velocity, 0.0))
    return (fn * n0 - law.mu * f_el * t0 / rho, fn * n1 - law.mu * f_el * t1 / rho,
            fn * n2 - law.mu * f_el * t2 / rho, slip)


@njit(cache=True, inline="always")  # type: ignore[misc]
def point_force(
    g: float, n0: float, n1: float, n2: float, v0: float, v1: float, v2: float, mass: float,
    law: ContactLaw, far: float,
) -> tuple[float, float, float, float]:
    """:func:`law_force` at one point, or beyond ``far`` [m] (:data:`FAR_SMOOTHING_LENGTHS`
    smoothing lengths) no force and the tangential speed ``|v - n (n . v)|`` [m/s]: what
    every contact kernel's loop writes per point."""
    if g > far:
        vn = n0 * v0 + n1 * v1 + n2 * v2
        t0, t1, t2 = v0 - n0 * vn, v1 - n1 * vn, v2 - n2 * vn
        return 0.0, 0.0, 0.0, math.sqrt(t0 * t0 + t1 * t1 + t2 * t2)
    return law_force(g, n0, n1, n2, v0, v1, v2, mass, law)


@njit(cache=True, inline="always")  # type: ignore[misc]
def contact_forces(
    pts: ContactPoints, geom: ObstacleGeometry, law: ContactLaw, out: ContactOutput
) -> None:
    """Contact force on every point (written to ``out.force``, not accumulated), its gap and
    tangential speed: ``f = max(f_el - c s v_n, 0) n - mu f_el v_t / rho`` (0 beyond
    :data:`FAR_SMOOTHING_LENGTHS` smoothing lengths; :func:`point_force`)."""
    far = FAR_SMOOTHING_LENGTHS * law.smoothing_length
    gs = _scalars(geom)
    x, v, radius, mass = pts
    force, gap, slip = out
    for p in range(x.shape[1]):
        f0, f1, f2, gap[p], slip[p] = obstacle_point(
            gs, (x[0, p], x[1, p], x[2, p]), (v[0, p], v[1, p], v[2, p]), radius[p], mass[p],
            law, far)
        force[0, p], force[1, p], force[2, p] = f0, f1, f2


@njit(cache=True, inline="always")  # type: ignore[misc]
def obstacle_point(
    gs: tuple[Any, ...], x: tuple[float, float, float], v: tuple[float, float, float],
    radius: float, mass: float, law: ContactLaw, far: float,
) -> tuple[float, float, float, float, float]:
    """One point at ``x`` [m] with velocity ``v`` [m/s], ``radius`` [m] and ``mass`` [kg]
    against the fixed obstacle ``gs`` (:func:`_scalars`): ``(f0, f1, f2, gap, slip)``, the
    force [N] of :func:`point_force` at the gap ``phi(x) - radius`` [m] and the tangential
    speed [m/s].  The step of every loop over points against an obstacle
    (:func:`contact_forces`, the compiled force evaluation's rows)."""
    phi, n0, n1, n2, _, _ = _surface(gs, x[0], x[1], x[2])
    g = phi - radius
    f0, f1, f2, sp = point_force(g, n0, n1, n2, v[0], v[1], v[2], mass, law, far)
    return f0, f1, f2, g, sp


@njit(cache=True)  # type: ignore[misc]
def contact_tangent(
    pts: ContactPoints, geom: ObstacleGeometry, law: ContactLaw,
    d_dx: NDArray[np.float64], d_dv: NDArray[np.float64],
) -> None:
    """The consistent tangent of :func:`contact_forces`: ``d_dx[:, :, p] = d f_p / d x_p`` and
    ``d_dv[:, :, p] = d f_p / d v_p`` (3x3 per point; a point's force depends on its own state
    only), the chain rule through ``g(x)``, ``n(x)``, ``v_n`` and ``v_t``."""
    mu = law.mu
    far = FAR_SMOOTHING_LENGTHS * law.smoothing_length
    gs = _scalars(geom)
    x, v, radius, mass = pts
    for p in range(x.shape[1]):
        g, n, dist, interior, f_el, s, dfel, ds, c, vn, vt, rho = _point_state(
            x, v, radius[p], mass[p], gs, law, p)
        if g > far:  # no force (contact_forces): no tangent
            for i in range(3):
                for j in range(3):
                    d_dx[i, j, p] = 0.0
                    d_dv[i, j, p] = 0.0
            continue
        fn = f_el - c * s * vn
        pushing = 1.0 if fn > 0.0 else 0.0  # the clipped normal force: zero, and its slope
        fn *= pushing
        h = _hessian9(gs, n, dist, interior)  # once per point (zeros for a plane)
        v0, v1, v2 = v[0, p], v[1, p], v[2, p]
        hv = (h[0] * v0 + h[1] * v1 + h[2] * v2, h[3] * v0 + h[4] * v1 + h[5] * v2,
              h[6] * v0 + h[7] * v1 + h[8] * v2)
        inv_rho2 = 1.0 / (rho * rho)
        for i in range(3):
            for j in range(3):
                hij = h[3 * i + j]
                dfn_dx = pushing * (dfel * n[j] - c * (ds * n[j] * vn + s * hv[j]))
                dfn_dv = -pushing * c * s * n[j]
                kx = n[i] * dfn_dx + fn * hij
                kv = n[i] * dfn_dv
                # friction: -mu (u_i d f_el / d x_j + f_el A_ik d vt_k / d x_j), A = d u / d vt
                ax = 0.0
                av = 0.0
                for k in range(3):
                    a_ik = ((1.0 if i == k else 0.0) - vt[i] * vt[k] * inv_rho2) / rho
                    hkj = h[3 * k + j]
                    ax += a_ik * -(hkj * vn + n[k] * hv[j])
                    av += a_ik * ((1.0 if k == j else 0.0) - n[k] * n[j])
                d_dx[i, j, p] = kx - mu * (vt[i] / rho * dfel * n[j] + f_el * ax)
                d_dv[i, j, p] = kv - mu * f_el * av


# --------------------------------------------------------------------------------------------
# rigid bodies: points fixed in the body frame
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def body_points(
    body: tuple[Any, ...], b: int, local: NDArray[np.float64], pts: ContactPoints
) -> None:
    """Positions and velocities of the points ``local`` (3, m) [m] (body frame) of body ``b``
    of ``body = (x, v, omega, Q)`` (PyElastica layout: ``Q`` maps lab -> body, ``omega`` in
    the body frame) into ``pts``: ``x_p = x + Q^T r``, ``v_p = v + (Q^T omega) x (Q^T r)``."""
    x, v, omega, q = body
    w = body_spin(q, omega, b)
    position, velocity = pts.position, pts.velocity
    for p in range(local.shape[1]):
        (position[0, p], position[1, p], position[2, p], velocity[0, p], velocity[1, p],
         velocity[2, p]) = body_point(x, v, q, b, w, (local[0, p], local[1, p], local[2, p]))


@njit(cache=True, inline="always")  # type: ignore[misc]
def body_spin(q: NDArray[np.float64], omega: NDArray[np.float64], b: int
              ) -> tuple[float, float, float]:
    """``w = Q^T omega``: body ``b``'s angular velocity in the lab [rad/s] (``omega`` in its
    frame, ``Q = q[:, :, b]`` lab -> body)."""
    return (q[0, 0, b] * omega[0, b] + q[1, 0, b] * omega[1, b] + q[2, 0, b] * omega[2, b],
            q[0, 1, b] * omega[0, b] + q[1, 1, b] * omega[1, b] + q[2, 1, b] * omega[2, b],
            q[0, 2, b] * omega[0, b] + q[1, 2, b] * omega[1, b] + q[2, 2, b] * omega[2, b])


@njit(cache=True, inline="always")  # type: ignore[misc]
def body_point(
    x: NDArray[np.float64], v: NDArray[np.float64], q: NDArray[np.float64], b: int,
    w: tuple[float, float, float], local: tuple[float, float, float],
) -> tuple[float, float, float, float, float, float]:
    """The lab position [m] and velocity [m/s] of the point ``l = local`` (body frame) of
    body ``b`` (centre ``x``, velocity ``v``, directors ``q``; arrays, not a record: this runs
    per point) turning at ``w`` (lab, :func:`body_spin`): ``x + Q^T l`` and
    ``v + w x (Q^T l)``."""
    l0, l1, l2 = local
    r0 = q[0, 0, b] * l0 + q[1, 0, b] * l1 + q[2, 0, b] * l2
    r1 = q[0, 1, b] * l0 + q[1, 1, b] * l1 + q[2, 1, b] * l2
    r2 = q[0, 2, b] * l0 + q[1, 2, b] * l1 + q[2, 2, b] * l2
    return (x[0, b] + r0, x[1, b] + r1, x[2, b] + r2, v[0, b] + w[1] * r2 - w[2] * r1,
            v[1, b] + w[2] * r0 - w[0] * r2, v[2, b] + w[0] * r1 - w[1] * r0)


@njit(cache=True)  # type: ignore[misc]
def body_wrench(
    body: tuple[Any, ...], b: int, pts: ContactPoints, force: NDArray[np.float64]
) -> None:
    """Add the points' forces ``force`` (3, m) [N] to body ``b`` of
    ``body = (x, Q, external_forces, external_torques)``: their sum to the force, their
    moment about the centre of mass (lab, converted to the body frame) to the torque."""
    x, q, f, tau = body
    Q = q[:, :, b]
    t0 = t1 = t2 = 0.0
    position = pts.position
    for p in range(force.shape[1]):
        r0 = position[0, p] - x[0, b]
        r1 = position[1, p] - x[1, b]
        r2 = position[2, p] - x[2, b]
        f[0, b] += force[0, p]
        f[1, b] += force[1, p]
        f[2, b] += force[2, p]
        t0 += r1 * force[2, p] - r2 * force[1, p]
        t1 += r2 * force[0, p] - r0 * force[2, p]
        t2 += r0 * force[1, p] - r1 * force[0, p]
    for i in range(3):
        tau[i, b] += Q[i, 0] * t0 + Q[i, 1] * t1 + Q[i, 2] * t2
