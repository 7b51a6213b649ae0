"""Contact of a rod's nodes, or of points fixed on a rigid body (the platform), with a free
rigid object (a PyElastica ``Sphere`` or ``Cylinder``), as a PyElastica forcing
(docs/contact.md, "Moving objects")::

    sim.add_forcing_to(rod).using(ObjectContact, body=sphere, contact=ContactParams(...))
    sim.add_forcing_to(platform).using(ObjectContact, body=sphere, contact=ContactParams(...))

The points touch the obstacle the object carries (a ``Sphere``: the sphere; a ``Cylinder``: the
capsule of its radius about its axis, the flat ends rounded) with the law of the fixed
obstacles, at their velocity relative to the object's surface (spin included); the object takes
the equal and opposite forces and their couple.  A rigid body's points are, as a
``BodyContact``'s, the rims of a ``Cylinder``'s end discs (``n_rim`` each) or the given
``points`` in its frame; the body takes their forces and couple.  The kernels are in
:mod:`hsa_elastica.physics.object_contact_laws`.  The instance is a sensor after each step as
``RodContact`` is (``force``, ``gap``, ``in_contact``, ``sliding``, ``sticking``,
``total_force``: the force on the rod or the body; the object takes its negative).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from elastica import Cylinder, Sphere
from elastica.external_forces import NoForces
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError
from hsa_elastica.params.environment import ContactParams
from hsa_elastica.physics.contact import (
    OVERLAP_SMOOTHING_LENGTHS,
    ContactRef,
    _check_nodes,
    _ContactSensor,
    _node_range,
    _rod_points,
    check_body_points,
    check_n_rim,
    cylinder_rims,
)
from hsa_elastica.physics.contact_laws import (
    CAPSULE,
    SPHERE,
    ContactOutput,
    ContactPoints,
    body_points,
    body_wrench,
    law_record,
)
from hsa_elastica.physics.object_contact_laws import (
    object_contact_forces,
    object_geometry,
    reduced_masses,
    relative_velocity,
)

__all__ = ["ObjectContact", "add_object_contact", "object_shape", "body_arrays"]


def object_shape(body: Any, owner: str = "ObjectContact") -> tuple[int, float, float]:
    """``(kind, radius, length)`` of the obstacle a body carries: a ``Sphere`` -> (SPHERE,
    radius, 0); a ``Cylinder`` -> (CAPSULE, radius, length).  ``ParameterError`` otherwise."""
    if isinstance(body, Sphere):
        return SPHERE, float(np.ravel(body.radius)[0]), 0.0
    if isinstance(body, Cylinder):
        return CAPSULE, float(np.ravel(body.radius)[0]), float(np.ravel(body.length)[0])
    raise ParameterError(f"{owner}.body = {type(body).__name__} is invalid: must be a PyElastica "
                         "Sphere or Cylinder (a free rigid body of the simulator)")


def body_arrays(body: Any) -> tuple[NDArray[np.float64], ...]:
    """``(x, v, omega, Q, external_forces, external_torques)`` of a rigid body (its index 0)."""
    return (body.position_collection, body.velocity_collection, body.omega_collection,
            body.director_collection, body.external_forces, body.external_torques)


def _is_rod(system: Any) -> bool:
    return hasattr(system, "rest_lengths")


def _kinematics(body: Any) -> tuple[Any, ...]:
    """``(x, v, omega, Q)`` of a rigid body (its index 0), what ``body_points`` reads."""
    return (body.position_collection, body.velocity_collection, body.omega_collection,
            body.director_collection)


class ObjectContact(NoForces, _ContactSensor):
    """Contact with the free rigid ``body`` (a ``Sphere`` or ``Cylinder`` in the same
    simulator) under the law ``contact`` (:class:`ContactParams`; the normal damping on the
    reduced mass of each point and the body), of

    * the nodes of a rod (every node, or ``nodes = (start, stop)``, a Python slice):
      ``sim.add_forcing_to(rod).using(ObjectContact, body=sphere, contact=ContactParams(...))``;
    * or points fixed on a rigid body, the platform for one (as ``BodyContact``'s: by default
      the rims of a ``Cylinder``'s end discs, ``n_rim`` points each, or ``points`` (3, m) [m]
      in its frame; each point carries ``mass / m``):
      ``sim.add_forcing_to(platform).using(ObjectContact, body=sphere, contact=...)``.
      A disc's face between its rims does not touch: a small object on a face needs
      ``points`` spread over it."""

    def __init__(self, body: Any, contact: Any = None, nodes: Any = None, n_rim: int = 16,
                 points: Any = None) -> None:
        super().__init__()
        self.shape = object_shape(body)
        if contact is None:
            contact = ContactParams()
        if not isinstance(contact, ContactParams):
            raise ParameterError(f"ObjectContact.contact = {type(contact).__name__} is invalid: "
                                 "must be a ContactParams")
        self.body = body
        self.contact = contact
        self.nodes = _check_nodes(nodes, "ObjectContact")
        self.n_rim = check_n_rim(n_rim, "ObjectContact")
        #: a rigid body's points in its frame (3, m) [m]; None on a rod
        self.local: NDArray[np.float64] | None = (
            None if points is None else check_body_points(points, "ObjectContact"))
        self.law = law_record(contact)
        self._points: ContactPoints | None = None
        self._source: Any = None  # the rod's position array the points are views of

    def _law_params(self) -> ContactParams:
        return self.contact

    @property
    def body_name(self) -> str:
        """The body as the messages name it (kind and initial centre)."""
        return f"{type(self.body).__name__} at {np.round(self.body.position_collection[:, 0], 6).tolist()} m"

    def node_range(self, rod: Any) -> tuple[int, int]:
        """First node and one past the last of ``rod`` that touch the body."""
        return _node_range(rod, self.nodes)

    def _setup(self, system: Any) -> None:
        if self._points is not None and self._source is system.position_collection:
            return
        if system is self.body:
            raise ParameterError(f"ObjectContact of the {self.body_name} with itself is invalid: "
                                 "add it to another rod or body")
        if _is_rod(system):
            if self.local is not None:
                raise ParameterError("ObjectContact.points on a rod is invalid: a rod touches with "
                                     "its nodes (nodes = (start, stop))")
            nodes = _rod_points(system, self.nodes)
            own_mass, position, velocity, radius = (nodes.mass, nodes.position, nodes.velocity,
                                                    nodes.radius)
        else:
            self._body_setup(system)
            assert self.local is not None
            m = self.local.shape[1]
            own_mass = np.full(m, float(np.sum(system.mass)) / m)
            position, velocity, radius = np.zeros((3, m)), np.zeros((3, m)), np.zeros(m)
        mass = reduced_masses(own_mass, float(np.sum(self.body.mass)))
        points = ContactPoints(position, velocity, radius, mass)
        n = points.radius.size
        out = ContactOutput(np.zeros((3, n)), np.zeros(n), np.zeros(n))
        if self.local is not None:
            body_points(_kinematics(system), 0, self.local, points)
        self.check_overlap(system, points, out)
        self._points, self._source, self._out = points, system.position_collection, out

    def _body_setup(self, system: Any) -> None:
        """A rigid body's points: the given ones, or a ``Cylinder``'s rims."""
        if not hasattr(system, "director_collection") or not hasattr(system, "mass"):
            raise ParameterError(f"ObjectContact on a {type(system).__name__} is invalid: it acts "
                                 "on a rod's nodes or a rigid body's points")
        if self.nodes is not None:
            raise ParameterError("ObjectContact.nodes on a rigid body is invalid: a body touches "
                                 "with its points (points = (3, m) array, or a Cylinder's rims)")
        if self.local is None:
            self.local = cylinder_rims(system, self.n_rim, "ObjectContact")

    def check_overlap(self, system: Any, points: ContactPoints, out: ContactOutput) -> None:
        """``ParameterError`` naming the node (or the body's point) and the object if one
        starts deeper in the object than its radius plus :data:`OVERLAP_SMOOTHING_LENGTHS`
        smoothing lengths."""
        scratch = (*body_arrays(self.body)[:4], np.zeros((3, 1)), np.zeros((3, 1)))
        object_contact_forces(points, scratch, 0, self.shape, self.law, out)
        limit = points.radius + OVERLAP_SMOOTHING_LENGTHS * self.contact.smoothing_length
        deep = np.flatnonzero(out.gap < -limit)
        if deep.size:
            p = int(deep[0])
            what = (f"node {self.node_range(system)[0] + p} of the rod" if _is_rod(system)
                    else f"point {p} of the {type(system).__name__}")
            raise ParameterError(
                f"ObjectContact: {what} starts {-out.gap[p]:.3g} m inside the "
                f"{self.body_name}: the initial placement must penetrate at most "
                f"{limit[p]:.3g} m (the point's radius + {OVERLAP_SMOOTHING_LENGTHS:g} "
                "smoothing lengths)")

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        self._setup(system)
        assert self._out is not None and self._points is not None
        local = self.local
        if local is not None:  # a body's points at its present state
            body_points(_kinematics(system), 0, local, self._points)
        object_contact_forces(self._points, body_arrays(self.body), 0, self.shape, self.law,
                              self._out)
        if local is not None:
            body_wrench((system.position_collection, system.director_collection,
                         system.external_forces, system.external_torques), 0, self._points,
                        self._out.force)
            return
        a = self._points.radius.size
        start = self.node_range(system)[0]
        system.external_forces[:, start : start + a] += self._out.force

    def relative_points(self, system: Any) -> tuple[ContactPoints, Any]:
        """The contact nodes (or the body's points) with their velocities relative to the
        object's surface and the reduced masses, and the obstacle's record, at the present
        state (for ``step_limits``)."""
        self._setup(system)
        assert self._points is not None
        if self.local is not None:
            body_points(_kinematics(system), 0, self.local, self._points)
        b = self.body
        geometry = object_geometry(b.position_collection, b.director_collection, 0, self.shape,
                                   np.zeros(6))
        rel = np.zeros_like(self._points.position)
        relative_velocity(self._points, body_arrays(b), 0, geometry, rel)
        return ContactPoints(self._points.position, rel, self._points.radius,
                             self._points.mass), geometry


def add_object_contact(sim: Any, system: Any, body: Any, contact: Any = None,
                       nodes: Any = None, **kwargs: Any) -> ContactRef:
    """Check the placement of ``system`` (a rod, or a rigid body: ``kwargs`` ``n_rim`` /
    ``points``) against ``body`` (``ParameterError`` naming the node or point and the body),
    then register ``ObjectContact`` on it; the returned reference gives the forcing after
    ``sim.finalize()`` (``ref.system``: the rod or body)."""
    ObjectContact(body, contact, nodes, **kwargs)._setup(system)
    ref = ContactRef()
    ref.system = system
    sim.add_forcing_to(system).using(ref.capture(ObjectContact), body=body, contact=contact,
                                     nodes=nodes, **kwargs)
    return ref
