"""Contact between two rods, as a PyElastica forcing (docs/contact.md, "Rod against rod")::

    sim.add_forcing_to(rod_one).using(RodRodContact, other=rod_two, contact=ContactParams(...))

The elements of the two rods are capsules (centre-line segment, the element's radius); every
pair of elements touching within the law's reach pushes with the obstacles' law between their
closest points (kernels: :mod:`hsa_elastica.physics.rod_contact_laws`).  The forcing adds the
force on ``rod_one``'s nodes and the equal and opposite reactions on ``other``'s.  The
instance is a sensor after each step as ``RodContact`` is: ``force`` (3, n) [N] on the nodes of
``rod_one``, per element of ``rod_one`` its smallest ``gap`` [m] to ``other`` and the tangential
speed there, ``in_contact``, ``sliding``, ``sticking``, ``total_force`` (the force on
``rod_one``; ``other`` takes its negative).  :func:`add_rod_contacts` adds one forcing per pair
of rods.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from elastica.external_forces import NoForces
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError
from hsa_elastica.params.environment import ContactParams
from hsa_elastica.physics.contact import (
    OVERLAP_SMOOTHING_LENGTHS,
    ContactRef,
    _ContactSensor,
    _damped_limit,
)
from hsa_elastica.physics.contact_laws import ContactOutput, ContactPoints, law_record
from hsa_elastica.physics.rod_contact_laws import rod_rod_forces

__all__ = ["RodRodContact", "add_rod_contacts", "element_arrays", "ROD_ROD"]

#: the ``ContactTable.ids`` system-kind column of a rod-rod row
ROD_ROD = 3


def _is_rod(system: Any) -> bool:
    return hasattr(system, "rest_lengths") and hasattr(system, "position_collection")


def element_arrays(rod: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The elements' radii [m] and masses [kg] (the mean of their two nodes' masses) of a
    rod, copies: the contact keeps the radii of its first evaluation (as ``RodContact`` does;
    PyElastica rescales a stretched element's radius at every step)."""
    mass = np.asarray(rod.mass, dtype=np.float64)
    return (np.array(rod.radius, dtype=np.float64, copy=True),
            np.ascontiguousarray(0.5 * (mass[:-1] + mass[1:])))


class RodRodContact(NoForces, _ContactSensor):
    """Contact of the elements of the rod this forcing is added to with those of ``other`` (a
    rod of the same simulator) under the law ``contact`` (:class:`ContactParams`; the normal
    damping on the reduced mass of the two elements):
    ``sim.add_forcing_to(rod).using(RodRodContact, other=rod_two, contact=ContactParams())``."""

    def __init__(self, other: Any, contact: Any = None) -> None:
        super().__init__()
        if not _is_rod(other):
            raise ParameterError(f"RodRodContact.other = {type(other).__name__} is invalid: must "
                                 "be a rod (a CosseratRod of the same simulator)")
        if contact is None:
            contact = ContactParams()
        if not isinstance(contact, ContactParams):
            raise ParameterError(f"RodRodContact.contact = {type(contact).__name__} is invalid: "
                                 "must be a ContactParams")
        self.other = other
        self.contact = contact
        self.law = law_record(contact)
        self.pairs = 0  # element pairs past the broad phase at the last evaluation
        self._a: ContactPoints | None = None
        self._b: ContactPoints | None = None
        self._source: Any = None

    def _law_params(self) -> ContactParams:
        return self.contact

    @property
    def body_name(self) -> str:
        """The other system as the messages name it."""
        return f"rod with {self.other.position_collection.shape[1]} nodes"

    def _setup(self, rod: Any) -> None:
        if self._a is not None and self._source is rod.position_collection:
            return
        if not _is_rod(rod):
            raise ParameterError(f"RodRodContact on a {type(rod).__name__} is invalid: it acts "
                                 "on a rod (add_forcing_to(rod))")
        if rod is self.other:
            raise ParameterError("RodRodContact.other is the rod it is added to: must be "
                                 "another rod")
        ra, ma = element_arrays(rod)
        rb, mb = element_arrays(self.other)
        b = self.other
        self._a = ContactPoints(rod.position_collection, rod.velocity_collection, ra, ma)
        self._b = ContactPoints(b.position_collection, b.velocity_collection, rb, mb)
        n = rod.position_collection.shape[1]
        self._out = ContactOutput(np.zeros((3, n)), np.zeros(n - 1), np.zeros(n - 1))
        self._source = rod.position_collection
        self.check_overlap()

    def check_overlap(self) -> None:
        """``ParameterError`` naming the element if an element of the rod starts deeper in
        ``other`` than its radius plus :data:`OVERLAP_SMOOTHING_LENGTHS` smoothing lengths."""
        assert self._a is not None and self._b is not None and self._out is not None
        scratch = np.zeros_like(self._b.position)
        rod_rod_forces(self._a, self._b, self.law, scratch, self._out)
        limit = self._a.radius + OVERLAP_SMOOTHING_LENGTHS * self.contact.smoothing_length
        deep = np.flatnonzero(self._out.gap < -limit)
        if deep.size:
            e = int(deep[0])
            raise ParameterError(
                f"RodRodContact: element {e} of the rod starts {-self._out.gap[e]:.3g} m inside "
                f"the other rod: the initial placement must penetrate at most {limit[e]:.3g} m "
                f"(the element's radius + {OVERLAP_SMOOTHING_LENGTHS:g} smoothing lengths)")

    def apply_forces(self, system: Any, time: np.float64 = np.float64(0.0)) -> None:
        self._setup(system)
        assert self._a is not None and self._b is not None and self._out is not None
        self.pairs = rod_rod_forces(self._a, self._b, self.law, self.other.external_forces,
                                    self._out)
        system.external_forces += self._out.force

    def row_width(self, rod: Any) -> int:
        """Columns its ``ContactTable`` row needs: the larger node count of the two rods."""
        return int(max(rod.position_collection.shape[1], self.other.position_collection.shape[1]))

    def table_row(self, rod: Any, table: Any, k: int, start: tuple[int, int]) -> None:
        """Write row ``k`` of a ``ContactTable`` (physics/tables.py) for this contact on
        ``rod``; ``start``: the first nodes of ``rod`` and ``other`` in the rod block.  The
        row: ``ids`` = (A's first node, :data:`ROD_ROD`, A's node count, B's first node, B's
        node count); ``params[8:13]`` the law; ``points`` rows 0-3: A's element radii, B's
        element radii, A's element masses, B's element masses; ``output``: the force on A's
        nodes (rows 0-2), per element of A the smallest gap (row 3) and its tangential speed
        (row 4).  The sensor arrays become views of the row."""
        self._setup(rod)
        assert self._a is not None and self._b is not None and self._out is not None
        na, nb = self._a.position.shape[1], self._b.position.shape[1]
        table.ids[k] = (start[0], ROD_ROD, na, start[1], nb)
        table.params[k, 8:13] = tuple(self.law)
        table.points[k, 0, : na - 1] = self._a.radius
        table.points[k, 1, : nb - 1] = self._b.radius
        table.points[k, 2, : na - 1] = self._a.mass
        table.points[k, 3, : nb - 1] = self._b.mass
        out = ContactOutput(table.output[k, 0:3, :na], table.output[k, 3, : na - 1],
                            table.output[k, 4, : na - 1])
        for dst, src in zip(out, self._out):
            dst[...] = src
        self._out = out

    def step_limits(self, rod: Any) -> tuple[float, float]:
        """``contact.step_limits`` of this contact at the present state: each element of the
        rod at its smallest gap, its stiffness ``k s``, damping ``c s`` and sticking friction's
        damping ``mu f_el / rho`` on the reduced mass with the other rod's lightest element
        (the smaller mass: the shorter limit)."""
        self._setup(rod)
        assert self._a is not None and self._b is not None and self._out is not None
        rod_rod_forces(self._a, self._b, self.law, np.zeros_like(self._b.position), self._out)
        c = self.contact
        z = -self._out.gap / c.smoothing_length
        s = np.exp(-np.logaddexp(0.0, -z))
        f_el = c.stiffness * c.smoothing_length * np.logaddexp(0.0, z)
        mb = float(self._b.mass.min())
        m = self._a.mass * mb / (self._a.mass + mb)
        k_n, c_n = c.stiffness * s, 2.0 * c.damping_ratio * np.sqrt(c.stiffness * m) * s
        c_t = c.friction_coefficient * f_el / np.hypot(self._out.slip, c.slip_velocity)
        zeta = c_n / (2.0 * np.sqrt(np.maximum(k_n, 1e-300) * m))
        friction = float(np.min(2.0 * m / np.maximum(c_t, 1e-300)))
        return _damped_limit(k_n / m, zeta), friction


def add_rod_contacts(sim: Any, rods: list[Any], contact: ContactParams) -> list[ContactRef]:
    """One :class:`RodRodContact` per pair of ``rods`` (the first of the pair carries it),
    each checked for overlap first; the references give the forcings after
    ``sim.finalize()`` (``ref.system``: the pair's first rod)."""
    refs = []
    for one, two in itertools.combinations(rods, 2):
        RodRodContact(two, contact)._setup(one)
        ref = ContactRef()
        ref.system = one
        sim.add_forcing_to(one).using(ref.capture(RodRodContact), other=two, contact=contact)
        refs.append(ref)
    return refs
