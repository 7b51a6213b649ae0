"""Contact of a rod's nodes with a free rigid object (a PyElastica ``Sphere`` or ``Cylinder``),
as a PyElastica forcing (docs/contact.md, "Moving objects")::

    sim.add_forcing_to(rod).using(ObjectContact, body=sphere, contact=ContactParams(...))

The rod's nodes touch the obstacle the body carries (a ``Sphere``: the sphere; a
``Cylinder``: the capsule of its radius about its axis, the flat ends rounded) with the law of
the fixed obstacles, at their velocity relative to the body's surface (spin included); the body
takes the equal and opposite forces and their couple.  The kernels are in
:mod:`hsa_elastica.physics.object_contact_laws`.  The instance is a sensor after each step as
``RodContact`` is (``force``, ``gap``, ``in_contact``, ``sliding``, ``sticking``,
``total_force``: the force on the rod; the body takes its negative).
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
)
from hsa_elastica.physics.contact_laws import (
    CAPSULE,
    SPHERE,
    ContactOutput,
    ContactPoints,
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


class ObjectContact(NoForces, _ContactSensor):
    """Contact of the nodes of a rod (every node, or ``nodes = (start, stop)``, a Python slice)
    with the free rigid ``body`` (a ``Sphere`` or ``Cylinder`` in the same simulator) under the
    law ``contact`` (:class:`ContactParams`; the normal damping on the reduced mass of node
    and body):
    ``sim.add_forcing_to(rod).using(ObjectContact, body=sphere, contact=ContactParams(...))``."""

    def __init__(self, body: Any, contact: Any = None, nodes: Any = None) -> None:
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
        self.law = law_record(contact)
        self._points: ContactPoints | None = None
        self._source: Any = None  # the rod's position array the points are views of
        self._frame = np.zeros(6)
        self._rel = np.zeros((3, 0))

    def _law_params(self) -> ContactParams:
        return self.contact

    @property
    def body_name(self) -> str:
        """The body as the messages name it (kind and initial centre)."""
        return f"{type(self.body).__name__} at {np.round(self.body.position_collection[:, 0], 6).tolist()} m"

    def node_range(self, rod: Any) -> tuple[int, int]:
        """First node and one past the last of ``rod`` that touch the body."""
        return _node_range(rod, self.nodes)

    def _setup(self, rod: Any) -> None:
        if self._points is not None and self._source is rod.position_collection:
            return
        if not hasattr(rod, "rest_lengths"):
            raise ParameterError(f"ObjectContact on a {type(rod).__name__} is invalid: it acts on "
                                 "a rod's nodes (add_forcing_to(rod))")
        nodes = _rod_points(rod, self.nodes)
        mass = reduced_masses(nodes.mass, float(np.sum(self.body.mass)))
        points = ContactPoints(nodes.position, nodes.velocity, nodes.radius, mass)
        n = points.radius.size
        self._rel = np.zeros((3, n))
        out = ContactOutput(np.zeros((3, n)), np.zeros(n), np.zeros(n))
        self.check_overlap(rod, points, out)
        self._points, self._source, self._out = points, rod.position_collection, out

    def check_overlap(self, rod: Any, points: ContactPoints, out: ContactOutput) -> None:
        """``ParameterError`` naming the node and the body if a node starts deeper in the body
        than its radius plus :data:`OVERLAP_SMOOTHING_LENGTHS` smoothing lengths."""
        scratch = (*body_arrays(self.body)[:4], np.zeros((3, 1)), np.zeros((3, 1)))
        object_contact_forces(points, scratch, 0, self.shape, self.law, self._frame,
                              np.zeros((3, points.radius.size)), out)
        limit = points.radius + OVERLAP_SMOOTHING_LENGTHS * self.contact.smoothing_length
        deep = np.flatnonzero(out.gap < -limit)
        if deep.size:
            p = int(deep[0])
            node = self.node_range(rod)[0] + p
            raise ParameterError(
                f"ObjectContact: node {node} of the rod starts {-out.gap[p]:.3g} m inside the "
                f"{self.body_name}: the initial placement must penetrate at most "
                f"{limit[p]:.3g} m (the node's radius + {OVERLAP_SMOOTHING_LENGTHS:g} "
                "smoothing lengths)")

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        self._setup(system)
        assert self._out is not None and self._points is not None
        object_contact_forces(self._points, body_arrays(self.body), 0, self.shape, self.law,
                              self._frame, self._rel, self._out)
        a = self._points.radius.size
        start = self.node_range(system)[0]
        system.external_forces[:, start : start + a] += self._out.force

    def relative_points(self, rod: Any) -> tuple[ContactPoints, Any]:
        """The rod's contact nodes with their velocities relative to the body's surface and the
        reduced masses, and the obstacle's record, at the present state (for ``step_limits``)."""
        self._setup(rod)
        assert self._points is not None
        b = self.body
        geometry = object_geometry(b.position_collection, b.director_collection, 0, self.shape,
                                   np.zeros(6))
        rel = np.zeros_like(self._points.position)
        relative_velocity(self._points, body_arrays(b), 0, geometry, rel)
        return ContactPoints(self._points.position, rel, self._points.radius,
                             self._points.mass), geometry


def add_object_contact(sim: Any, rod: Any, body: Any, contact: Any = None,
                       nodes: Any = None) -> ContactRef:
    """Check the placement of ``rod`` against ``body`` (``ParameterError`` naming the node and
    the body), then register ``ObjectContact`` on the rod; the returned reference gives the
    forcing after ``sim.finalize()`` (``ref.system``: the rod)."""
    ObjectContact(body, contact, nodes)._setup(rod)
    ref = ContactRef()
    ref.system = rod
    sim.add_forcing_to(rod).using(ref.capture(ObjectContact), body=body, contact=contact,
                                  nodes=nodes)
    return ref
