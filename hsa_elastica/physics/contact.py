"""Frictional contact of rods and rigid bodies with fixed obstacles, as PyElastica forcings
(docs/contact.md).

The law (smooth penalty normal force, normal damping, smoothed Coulomb friction) and its
kernels are in :mod:`hsa_elastica.physics.contact_laws`; the obstacles and their parameters
are the records of :mod:`hsa_elastica.params.environment`.  Two forcings::

    sim.add_forcing_to(rod).using(RodContact, obstacle=PlaneObstacle(...))
    sim.add_forcing_to(cylinder).using(BodyContact, obstacle=PlaneObstacle(...))

``RodContact`` acts on every node of a ``CosseratRod`` (contact radius: the node's mean
cross-section radius).  ``BodyContact`` acts on points of a rigid ``Cylinder``: by default the
rims of its two end discs (``n_rim`` points each).  Each instance is a sensor after every
step: ``force`` (3, n) [N] on each point, ``gap`` [m], ``in_contact`` (gap < 5 smoothing
lengths), ``sliding``
(in contact and tangential speed above the slip velocity), ``sticking``, ``total_force``.

Friction acts at the node (the centre line), with the node's velocity: rolling of a rod on
its surface is not modelled.  :func:`check_placement` refuses a system placed inside an
obstacle (``ParameterError``); both forcings call it on their first evaluation, and
:func:`add_contact` calls it before registering the forcing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from elastica import Cylinder, Sphere
from elastica.external_forces import NoForces
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError
from hsa_elastica.params.environment import (
    BoxObstacle,
    CapsuleObstacle,
    PlaneObstacle,
    SphereObstacle,
)
from hsa_elastica.params.base import ContactStepWarning as ContactStepWarning
from hsa_elastica.physics.operator_ref import OperatorRef
from hsa_elastica.physics.contact_laws import (
    ContactOutput,
    ContactPoints,
    body_points,
    body_wrench,
    contact_forces,
    geometry_record,
    law_record,
    surface_values,
)
from hsa_elastica.physics.object_contact_laws import rolling_couple, sphere_support
from hsa_elastica.physics.tables import CONTACT_PARAMS, ContactTable

__all__ = [
    "RodContact",
    "BodyContact",
    "add_contact",
    "ContactRef",
    "ContactStepWarning",
    "step_limit_message",
    "check_placement",
    "contact_table",
    "rim_points",
    "step_limits",
    "OVERLAP_SMOOTHING_LENGTHS",
    "CONTACT_SMOOTHING_LENGTHS",
]

#: a point deeper in an obstacle than its own radius plus this many smoothing lengths at the
#: start is an overlapping placement (a rod's centre line inside the obstacle)
OVERLAP_SMOOTHING_LENGTHS = 10.0

#: a point closer to an obstacle than this many smoothing lengths is reported in contact
CONTACT_SMOOTHING_LENGTHS = 5.0

_OBSTACLES = (PlaneObstacle, SphereObstacle, CapsuleObstacle, BoxObstacle)


def _check_obstacle(owner: str, obstacle: Any) -> None:
    if not isinstance(obstacle, _OBSTACLES):
        raise ParameterError(
            f"{owner}.obstacle = {obstacle!r:.40} is invalid: must be a PlaneObstacle, "
            "SphereObstacle, CapsuleObstacle or BoxObstacle"
        )


def rim_points(radius: float, length: float, n_rim: int) -> NDArray[np.float64]:
    """Points (3, 2 n_rim) [m] in a cylinder's body frame (axis: local z, PyElastica's
    ``Cylinder``): ``n_rim`` evenly spaced on the rim of each end disc."""
    phi = 2.0 * math.pi * np.arange(n_rim) / n_rim
    ring = np.stack([radius * np.cos(phi), radius * np.sin(phi), np.zeros(n_rim)])
    top, bottom = ring.copy(), ring.copy()
    top[2], bottom[2] = 0.5 * length, -0.5 * length
    return np.ascontiguousarray(np.concatenate([bottom, top], axis=1))


def cylinder_rims(body: Any, n_rim: int, owner: str, also: str = "") -> NDArray[np.float64]:
    """The default contact points of a rigid body: a ``Cylinder``'s rims (:func:`rim_points`),
    or ``ParameterError`` naming ``owner.points`` (``also``: the other bodies with defaults)."""
    if not isinstance(body, Cylinder):
        raise ParameterError(
            f"{owner}.points is None on a {type(body).__name__}: the default rim points need a "
            f"Cylinder (radius and length){also}; give points, a (3, m) array (m, body frame)")
    return rim_points(float(np.ravel(body.radius)[0]), float(np.ravel(body.length)[0]), n_rim)


def check_n_rim(n_rim: Any, owner: str) -> int:
    """``n_rim`` as an int, or ``ParameterError`` naming ``owner.n_rim`` and its range."""
    if isinstance(n_rim, bool) or not isinstance(n_rim, (int, np.integer)) or not 3 <= n_rim <= 1000:
        raise ParameterError(f"{owner}.n_rim = {n_rim!r:.40} is invalid: must be an integer >= 3 "
                             "and <= 1000")
    return int(n_rim)


def check_body_points(points: Any, owner: str) -> NDArray[np.float64]:
    """``points`` as a (3, m) float array (a body's contact points in its frame [m]), or
    ``ParameterError`` naming ``owner.points``."""
    try:
        local = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        local = np.zeros((0,))
    if local.ndim != 2 or local.shape[0] != 3 or local.shape[1] < 1 or not np.isfinite(local).all():
        raise ParameterError(f"{owner}.points is invalid: must be a (3, m) array of finite "
                             "numbers, m >= 1 (m, body frame)")
    return np.ascontiguousarray(local)


def _gaps(points: ContactPoints, obstacle: Any) -> NDArray[np.float64]:
    out = ContactOutput(np.zeros_like(points.position), np.zeros(points.radius.size),
                        np.zeros(points.radius.size))
    contact_forces(points, geometry_record(obstacle), law_record(obstacle.contact), out)
    return out.gap


def _overlap(owner: str, points: ContactPoints, obstacle: Any) -> None:
    gap = _gaps(points, obstacle)
    limit = points.radius + OVERLAP_SMOOTHING_LENGTHS * obstacle.contact.smoothing_length
    deep = np.flatnonzero(gap < -limit)
    if deep.size:
        p = int(deep[0])
        raise ParameterError(
            f"{owner}: point {p} starts {-gap[p]:.3g} m inside the {type(obstacle).__name__}: "
            f"the initial placement must penetrate at most {limit[p]:.3g} m (the point's "
            f"radius + {OVERLAP_SMOOTHING_LENGTHS:g} smoothing lengths)"
        )


class _ContactSensor:
    """The sensor outputs shared by both forcings (valid after the first evaluation)."""

    obstacle: Any
    _out: ContactOutput | None = None

    def _law_params(self) -> Any:
        """The law's :class:`ContactParams` (the obstacle's)."""
        return self.obstacle.contact

    @property
    def force(self) -> NDArray[np.float64]:
        """Contact force on each point (3, n) [N], lab frame."""
        return self._output().force

    @property
    def gap(self) -> NDArray[np.float64]:
        """Gap of each point to the obstacle (n,) [m]; negative: penetration."""
        return self._output().gap

    def _masks(self, out: ContactOutput) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """The points touching the obstacle and those of them sliding, from ``out``."""
        law = self._law_params()
        touching = np.asarray(out.gap < CONTACT_SMOOTHING_LENGTHS * law.smoothing_length)
        return touching, touching & (out.slip > law.slip_velocity)

    @property
    def in_contact(self) -> NDArray[np.bool_]:
        """Points touching the obstacle: gap below :data:`CONTACT_SMOOTHING_LENGTHS` smoothing
        lengths (the elastic normal force there exceeds ``k l exp(-5)``)."""
        return self._masks(self._output())[0]

    @property
    def sliding(self) -> NDArray[np.bool_]:
        """Points in contact whose tangential speed exceeds the slip velocity."""
        return self._masks(self._output())[1]

    @property
    def sticking(self) -> NDArray[np.bool_]:
        """Points in contact at most at the slip velocity (stuck, up to the smoothing)."""
        touching, sliding = self._masks(self._output())
        return touching & ~sliding

    @property
    def total_force(self) -> NDArray[np.float64]:
        """Sum of the contact forces (3,) [N] on the system."""
        return np.asarray(self._output().force.sum(axis=1))

    def readings(self) -> tuple[float, ...]:
        """The recorded sensor values in one pass: :attr:`total_force` (3 values [N]), the
        numbers of points :attr:`in_contact`, :attr:`sliding` and :attr:`sticking`, and the
        smallest :attr:`gap` [m] (the properties' numbers, the contact's output read once)."""
        out = self._output()
        touching, sliding = self._masks(out)
        n_in, n_slide = int(np.count_nonzero(touching)), int(np.count_nonzero(sliding))
        return (*out.force.sum(axis=1).tolist(), float(n_in), float(n_slide),
                float(n_in - n_slide), float(out.gap.min()))

    def _output(self) -> ContactOutput:
        if self._out is None:
            raise RuntimeError("the contact is read after the first time step only")
        return self._out


def _node_radii(rod: Any) -> NDArray[np.float64]:
    r = np.asarray(rod.radius, dtype=np.float64)
    nodes = np.empty(r.size + 1)
    nodes[0], nodes[-1] = r[0], r[-1]
    nodes[1:-1] = 0.5 * (r[:-1] + r[1:])
    return nodes


def _check_nodes(nodes: Any, owner: str = "RodContact") -> tuple[int, int] | None:
    if nodes is None:
        return None
    if (not isinstance(nodes, (tuple, list)) or len(nodes) != 2 or any(
            isinstance(k, bool) or not isinstance(k, (int, np.integer)) for k in nodes)):
        raise ParameterError(f"{owner}.nodes = {nodes!r:.40} is invalid: must be None (every "
                             "node) or a pair of integers (start, stop), as a Python slice")
    return int(nodes[0]), int(nodes[1])


def _node_range(rod: Any, nodes: tuple[int, int] | None) -> tuple[int, int]:
    n = rod.position_collection.shape[1]
    a, b, _ = slice(*(nodes or (0, n))).indices(n)
    if b <= a:
        raise ParameterError(f"RodContact.nodes = {nodes!r} is invalid: selects no node of a rod "
                             f"with {n} nodes (start < stop, as a Python slice)")
    return a, b


def _rod_points(rod: Any, nodes: tuple[int, int] | None = None) -> ContactPoints:
    a, b = _node_range(rod, nodes)
    return ContactPoints(rod.position_collection[:, a:b], rod.velocity_collection[:, a:b],
                         _node_radii(rod)[a:b], np.asarray(rod.mass, dtype=np.float64)[a:b])


class RodContact(NoForces, _ContactSensor):
    """Contact of the nodes of a rod with a fixed ``obstacle`` (its ``contact`` law): every
    node, or ``nodes = (start, stop)`` (a Python slice of the node indices; the sensor arrays
    then hold those nodes):
    ``sim.add_forcing_to(rod).using(RodContact, obstacle=PlaneObstacle(...))``."""

    def __init__(self, obstacle: Any, nodes: Any = None) -> None:
        super().__init__()
        _check_obstacle("RodContact", obstacle)
        self.obstacle = obstacle
        self.nodes = _check_nodes(nodes)
        self.geometry = geometry_record(obstacle)
        self.law = law_record(obstacle.contact)
        self._points: ContactPoints | None = None
        self._source: Any = None  # the rod's position array the points are views of

    def node_range(self, rod: Any) -> tuple[int, int]:
        """First node and one past the last of ``rod`` that touch the obstacle."""
        return _node_range(rod, self.nodes)

    def _setup(self, system: Any) -> None:
        if self._points is None or self._source is not system.position_collection:
            points = _rod_points(system, self.nodes)
            _overlap("RodContact", points, self.obstacle)
            n = points.radius.size
            self._points, self._source = points, system.position_collection
            self._out = ContactOutput(np.zeros((3, n)), np.zeros(n), np.zeros(n))

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        self._setup(system)
        assert self._out is not None and self._points is not None
        contact_forces(self._points, self.geometry, self.law, self._out)
        a = self._points.radius.size
        if a == system.external_forces.shape[1]:
            system.external_forces += self._out.force
        else:
            start = self.node_range(system)[0]
            system.external_forces[:, start : start + a] += self._out.force


class BodyContact(NoForces, _ContactSensor):
    """Contact of points fixed on a rigid body with a fixed ``obstacle``: by default the rims
    of a ``Cylinder``'s end discs (``n_rim`` points each) or a ``Sphere``'s one point closest
    to the obstacle (found at every evaluation: it rolls without friction), or ``points``
    (3, m) [m] in the body frame.  Each point carries ``mass / m`` for the normal damping.
    ``sim.add_forcing_to(platform).using(BodyContact, obstacle=PlaneObstacle(...))``."""

    def __init__(self, obstacle: Any, n_rim: int = 16, points: Any = None) -> None:
        super().__init__()
        _check_obstacle("BodyContact", obstacle)
        self.n_rim = check_n_rim(n_rim, "BodyContact")
        self.obstacle = obstacle
        self.geometry = geometry_record(obstacle)
        self.law = law_record(obstacle.contact)
        self.local: NDArray[np.float64] | None = None
        self.sphere_radius = 0.0  # a Sphere without points: its radius [m]
        self.rolling_resistance = float(obstacle.contact.rolling_resistance)  # a Sphere's [-]
        if points is not None:
            self.local = check_body_points(points, "BodyContact")
        self._points: ContactPoints | None = None

    def _setup(self, body: Any) -> None:
        if self.local is None and isinstance(body, Sphere):
            # the sphere's point closest to the obstacle, found again at every evaluation
            self.sphere_radius = float(np.ravel(body.radius)[0])
            self.local = np.zeros((3, 1))
        if self.local is None:
            self.local = cylinder_rims(body, self.n_rim, "BodyContact", " or a Sphere")
        m = self.local.shape[1]
        self._points = ContactPoints(np.zeros((3, m)), np.zeros((3, m)), np.zeros(m),
                                     np.full(m, float(np.sum(body.mass)) / m))
        self._out = ContactOutput(np.zeros((3, m)), np.zeros(m), np.zeros(m))
        self._place(body)
        _overlap("BodyContact", self._points, self.obstacle)

    def _place(self, body: Any) -> None:
        """The points' positions and velocities at the body's present state (a sphere's
        point: the closest to the obstacle, :func:`sphere_support`)."""
        assert self.local is not None and self._points is not None
        if self.sphere_radius > 0.0:
            sphere_support(body.position_collection, body.director_collection, 0, self.geometry,
                           self.sphere_radius, self.local)
        body_points(self._kinematics(body), 0, self.local, self._points)

    @staticmethod
    def _kinematics(body: Any) -> tuple[Any, ...]:
        return (body.position_collection, body.velocity_collection, body.omega_collection,
                body.director_collection)

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        if self._points is None:
            self._setup(system)
        assert self._points is not None and self._out is not None and self.local is not None
        self._place(system)
        contact_forces(self._points, self.geometry, self.law, self._out)
        body_wrench((system.position_collection, system.director_collection,
                     system.external_forces, system.external_torques), 0, self._points,
                    self._out.force)
        if self.sphere_radius > 0.0 and self.rolling_resistance > 0.0:
            rolling_couple((system.position_collection, system.director_collection,
                            system.omega_collection, system.external_torques), 0,
                           self.geometry, self._out.force,
                           (self.rolling_resistance, self.sphere_radius, self.law.slip_velocity))


def _normals(points: ContactPoints, geometry: Any) -> NDArray[np.float64]:
    """Outward unit normals (3, n) of the obstacle ``geometry`` (its record) at the points
    (``surface_values``)."""
    out = np.empty_like(points.position)
    surface_values(points.position, geometry, np.empty(out.shape[1]), out)
    return out


def _laws(points: ContactPoints, geometry: Any, law: Any) -> tuple[NDArray[np.float64], ...]:
    """Per point the normal stiffness ``k s`` [N/m], normal damping ``c s`` [N s/m] and the
    friction's damping ``mu f_el / rho`` [N s/m] (its largest slope in the tangential speed)
    at the points' present state (``geometry``: the obstacle's record; ``law``: its
    ``ContactParams``)."""
    out = ContactOutput(np.zeros_like(points.position), np.zeros(points.radius.size),
                        np.zeros(points.radius.size))
    contact_forces(points, geometry, law_record(law), out)
    z = -out.gap / law.smoothing_length
    s = np.exp(-np.logaddexp(0.0, -z))  # sigmoid(z), overflow-free
    f_el = law.stiffness * law.smoothing_length * np.logaddexp(0.0, z)
    c = 2.0 * law.damping_ratio * np.sqrt(law.stiffness * points.mass)
    rho = np.hypot(out.slip, law.slip_velocity)
    return law.stiffness * s, c * s, law.friction_coefficient * f_el / rho


def _damped_limit(omega2: NDArray[np.float64], zeta: NDArray[np.float64]) -> float:
    """Largest explicit step [s] over modes ``omega^2`` [1/s^2] with damping ratios ``zeta``,
    the damping taken at the step's start velocity (Position Verlet):
    ``dt < 2 (sqrt(1 + zeta^2) - zeta) / omega``; a pure damper ``2 zeta omega = b``:
    ``dt < 2 / b``."""
    limit = math.inf
    for w2, z in zip(omega2, zeta):
        if w2 > 0.0:
            w = math.sqrt(w2)
            limit = min(limit, 2.0 * (math.sqrt(1.0 + z * z) - z) / w)
    return limit


def _body_matrices(system: Any, points: ContactPoints) -> tuple[Any, Any]:
    """The body's 6x6 mass matrix (lab frame: ``M I``, ``Q^T J Q``) and the points'
    velocity maps ``J_p`` (m, 3, 6): ``v_p = v - [r_p]_x omega``."""
    q = system.director_collection[:, :, 0]
    mass = np.zeros((6, 6))
    mass[:3, :3] = float(np.sum(system.mass)) * np.eye(3)
    mass[3:, 3:] = q.T @ system.mass_second_moment_of_inertia[:, :, 0] @ q
    r = points.position - system.position_collection[:, :1]
    jac = np.zeros((r.shape[1], 3, 6))
    jac[:, :, :3] = np.eye(3)
    zero = np.zeros(r.shape[1])
    jac[:, :, 3:] = -np.stack([np.stack([zero, -r[2], r[1]], -1),
                               np.stack([r[2], zero, -r[0]], -1),
                               np.stack([-r[1], r[0], zero], -1)], 1)
    return mass, jac


def step_limits(op: Any, system: Any) -> tuple[float, float]:
    """The largest step [s] of an explicit (Position Verlet) integration at which the contact
    ``op`` (a ``RodContact``, ``BodyContact`` or ``ObjectContact``: a rod's nodes at their
    velocity relative to the object, with the reduced masses) on ``system`` in its present
    state dissipates:
    ``(normal, friction)``.  Normal: the contact's stiffness ``k s`` with its damping ``c s``
    on each mode, ``dt < 2 (sqrt(1 + zeta^2) - zeta) / omega``; friction: the sticking
    friction's damping ``mu f_el / rho`` (at most ``mu f_el / v_s``), ``dt < 2 / lambda`` with
    ``lambda`` its largest rate.  A rod's nodes count with their own masses (the rod's elastic
    forces not included: its own limit is the time-step check's); a rigid body's points through
    its mass and inertia (6x6; with an object, the two bodies' 12x12 and the points'
    velocities relative to it).  ``inf``: nothing touches."""
    if hasattr(op, "step_limits"):  # a rod against a rod (physics/rod_contact.py)
        return op.step_limits(system)  # type: ignore[no-any-return]
    geometry, law = None, op._law_params()
    if isinstance(op, RodContact):
        pts = _rod_points(system, op.nodes)
    elif hasattr(op, "relative_points"):  # an ObjectContact: relative velocity, reduced mass
        pts, geometry = op.relative_points(system)
    else:
        if op._points is None:
            op._setup(system)
        assert op.local is not None and op._points is not None
        pts = ContactPoints(np.zeros_like(op._points.position),
                            np.zeros_like(op._points.position), op._points.radius,
                            op._points.mass)
        if op.sphere_radius > 0.0:
            sphere_support(system.position_collection, system.director_collection, 0,
                           op.geometry, op.sphere_radius, op.local)
        body_points((system.position_collection, system.velocity_collection,
                     system.omega_collection, system.director_collection), 0, op.local, pts)
    if geometry is None:
        geometry = geometry_record(op.obstacle)
    k_n, c_n, c_t = _laws(pts, geometry, law)
    if not isinstance(op, BodyContact) and getattr(op, "local", None) is None:
        m = pts.mass
        zeta = c_n / (2.0 * np.sqrt(np.maximum(k_n, 1e-300) * m))
        friction = float(np.min(2.0 * m / np.maximum(c_t, 1e-300)))
        return _damped_limit(k_n / m, zeta), friction
    n = _normals(pts, geometry)
    mass, jac = _body_matrices(system, pts)
    if not isinstance(op, BodyContact):  # a body's points on an object: both bodies move
        other, other_jac = _body_matrices(op.body, pts)
        mass = np.block([[mass, np.zeros((6, 6))], [np.zeros((6, 6)), other]])
        jac = np.concatenate([jac, -other_jac], axis=2)
    normal_map = np.einsum("ip,pij->pj", n, jac)  # n_p^T J_p (m, 6)
    tangent_map = jac - n.T[:, :, None] * normal_map[:, None, :]  # (I - n n^T) J_p
    chol_inv = np.linalg.inv(np.linalg.cholesky(mass))

    def reduced(a: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(chol_inv @ a @ chol_inv.T)

    stiff = reduced(np.einsum("p,pi,pj->ij", k_n, normal_map, normal_map))
    damp = reduced(np.einsum("p,pi,pj->ij", c_n, normal_map, normal_map))
    omega2, modes = np.linalg.eigh(stiff)
    zeta = np.einsum("ik,ij,jk->k", modes, damp, modes) / (2.0 * np.sqrt(np.maximum(omega2, 1e-300)))
    rates = np.linalg.eigvalsh(reduced(np.einsum("p,pai,paj->ij", c_t, tangent_map, tangent_map)))
    friction = 2.0 / float(rates.max()) if rates.max() > 0.0 else math.inf
    return _damped_limit(omega2, zeta), friction


def check_placement(system: Any, obstacle: Any, n_rim: int = 16, nodes: Any = None) -> None:
    """``ParameterError`` if ``system`` (a rod's nodes, all or ``nodes``, or a cylinder's rim
    points) starts inside ``obstacle`` deeper than a point's radius plus
    :data:`OVERLAP_SMOOTHING_LENGTHS` smoothing lengths."""
    _check_obstacle("check_placement", obstacle)
    if hasattr(system, "rest_lengths"):  # a rod
        _overlap("RodContact", _rod_points(system, _check_nodes(nodes)), obstacle)
    else:
        BodyContact(obstacle, n_rim=n_rim)._setup(system)


def _compiled_points(op: Any, system: Any) -> ContactPoints:
    """The points of a contact operator (set up as on its first evaluation, placement check
    included), for its row of a :class:`ContactTable`."""
    if isinstance(op, BodyContact):
        if op._points is None:
            op._setup(system)
    else:  # a rod's nodes: RodContact, ObjectContact
        op._setup(system)
    assert op._points is not None
    return op._points


def _row_kind(op: Any) -> int:
    """The ``ContactTable.ids`` system column: 0 a rod's nodes, 1 a body's points (on a fixed
    obstacle, or an ``ObjectContact``'s on an object), 2 a sphere's support point."""
    if not isinstance(op, BodyContact):
        return 0 if getattr(op, "local", None) is None else 1
    return 2 if op.sphere_radius > 0.0 else 1


def contact_table(items: list[tuple[Any, Any, int, int]]) -> ContactTable:
    """The :class:`ContactTable` of contact operators ``(operator, system, start, obj)``: a
    ``RodContact``, ``BodyContact``, ``ObjectContact`` (physics/object_contact.py) or
    ``RodRodContact`` (physics/rod_contact.py, its own row layout); ``start``
    the rod's first node or the body's index in its memory block; ``obj`` the index of the
    body an ``ObjectContact`` touches (the other rod's first node of a ``RodRodContact``), -1
    for a fixed obstacle.  Each operator's sensor arrays
    (``force``, ``gap``, ``slip`` and what derives from them) become views of its row, so that
    they read what the compiled force evaluation wrote last."""
    n = len(items)
    widths = [op.row_width(system) if hasattr(op, "table_row") else
              _compiled_points(op, system).radius.size for op, system, _, _ in items]
    width = max(widths, default=1)
    table = ContactTable(ids=np.zeros((n, 5), dtype=np.int64), params=np.zeros((n, CONTACT_PARAMS)),
                         points=np.zeros((n, 11, width)), output=np.zeros((n, 5, width)))
    for k, (op, system, start, obj) in enumerate(items):
        if hasattr(op, "table_row"):  # a rod against a rod (physics/rod_contact.py)
            op.table_row(system, table, k, (start, obj))
            continue
        p = _compiled_points(op, system)
        m = p.radius.size
        if obj >= 0:  # an object's obstacle: its pose is written at every evaluation
            kind, radius, length = op.shape
            table.params[k, 6:8] = (radius, length)
        else:
            g = op.geometry
            kind = g.kind
            table.params[k, 0:8] = (*g.origin, *g.direction, g.radius, g.length)
            table.params[k, 15:21] = g.box
        table.ids[k] = (start, _row_kind(op), m, kind, obj)
        table.params[k, 8:13] = tuple(op.law)
        if isinstance(op, BodyContact):
            table.params[k, 13] = op.sphere_radius
            table.params[k, 14] = op.rolling_resistance if op.sphere_radius > 0.0 else 0.0
        if getattr(op, "local", None) is not None:  # a body's points, in its frame
            table.points[k, 0:3, :m] = op.local
        table.points[k, 9, :m] = p.radius
        table.points[k, 10, :m] = p.mass
        out = ContactOutput(table.output[k, 0:3, :m], table.output[k, 3, :m],
                            table.output[k, 4, :m])
        if op._out is not None:  # evaluated on the operator path already: keep its outputs
            for dst, src in zip(out, op._out):
                dst[...] = src
        op._out = out
    return table


class ContactRef(OperatorRef[Any]):
    """The contact forcing :func:`add_contact` registered: PyElastica builds it inside
    ``finalize()``; ``instance`` is it afterwards (its sensor attributes); ``system`` the rod or
    body it acts on."""

    system: Any = None


def step_limit_message(refs: Any, dt: float, time: float) -> str | None:
    """The one-line warning for the first contact in ``refs`` (:class:`ContactRef`) whose
    :func:`step_limits` at the present state is below the explicit step ``dt`` [s]; None if
    every contact is within its limits."""
    for ref in refs:
        if not ref.ready or ref.system is None:
            continue
        normal, friction = step_limits(ref.instance, ref.system)
        limit, what = min((normal, "normal contact"), (friction, "sticking friction"))
        if dt > limit:
            body = "rigid body" if isinstance(ref.instance, BodyContact) else "rod"
            other = getattr(ref.instance, "body_name", None) or type(ref.instance.obstacle).__name__
            return (f"at t = {time:.6g} s the step dt = {dt:.3g} s is above the stable step "
                    f"{limit:.3g} s of the {what} between a {body} and a "
                    f"{other}: the contact chatters instead of "
                    "holding (raise its slip_velocity, lower its damping_ratio, shorten dt, or "
                    "use the implicit integrator; docs/contact.md)")
    return None


def add_contact(sim: Any, system: Any, obstacle: Any, **kwargs: Any) -> ContactRef:
    """Check the placement of ``system`` against ``obstacle`` (:func:`check_placement`), then
    register the contact forcing (``RodContact`` with ``kwargs`` (``nodes``) for a rod,
    ``BodyContact`` with ``kwargs`` for a rigid body); the returned reference gives the forcing
    after ``sim.finalize()``."""
    ref = ContactRef()
    ref.system = system
    if hasattr(system, "rest_lengths"):  # a rod
        RodContact(obstacle, **kwargs)._setup(system)
        sim.add_forcing_to(system).using(ref.capture(RodContact), obstacle=obstacle, **kwargs)
    else:
        BodyContact(obstacle, **kwargs)._setup(system)
        sim.add_forcing_to(system).using(ref.capture(BodyContact), obstacle=obstacle, **kwargs)
    return ref
