"""Quadratic fluid drag on a rod's nodes: a compiled law declared in one module.

Each node ``i`` of the rod feels the drag of a fluid at rest (air, water)::

    f_i = -c_i |v_i| v_i,    c_i = 1/2 rho_f C_d D l_i

[N], with ``rho_f`` the fluid's density [kg/m^3], ``C_d`` the drag coefficient of the rod's
section [-] (about 1.2 for a circular cylinder in cross flow at Reynolds numbers 1e3-1e5),
``D`` the rod's outer diameter [m] and ``l_i`` the node's share of the rod's length [m] (half
of each element it bounds, from the rest lengths when the law is built).  This is the cross-flow
drag of a cylinder applied to the whole node velocity: exact for motion across the rod's axis
(a robot's sway and bending), an overestimate for motion along it, where a cylinder's skin
friction is one to two orders of magnitude smaller.  Terminal velocity of a straight rod
falling broadside under its weight ``m g``: ``v_t = sqrt(2 m g / (rho_f C_d D L))``.

The law is declared as :mod:`hsa_elastica.physics.compiled_laws` describes: its table
(:class:`DragTable`, one row per operator), its kernel (:func:`drag_forces`), its exact tangent (:func:`drag_tangent`:
``d f_i / d v_i = -c_i (|v| I + v v^T / |v|)``, no position dependence) and its operator
(:class:`QuadraticDrag`), tied together by one :func:`~hsa_elastica.physics.compiled_laws.register_law`
call; the compiled engines run it without any other change.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from elastica.external_forces import NoForces
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.params.base import ParameterError
from hsa_elastica.physics.compiled_laws import (
    CompiledLaw,
    RodSlot,
    one_rod_slot,
    register_law,
    rod_slot_view,
    slot_rows,
)
from hsa_elastica.physics.mount_kernels import SystemView

__all__ = ["DRAG", "DragTable", "QuadraticDrag", "drag_forces", "drag_table", "drag_tangent"]


class DragTable(NamedTuple):
    """The drag law on its rods: each row's ``slots`` (rows, 4) in the rod block
    (:class:`~hsa_elastica.physics.compiled_laws.RodSlot`), ``start`` (rows,) the row's first
    coefficient in ``c`` and ``c`` every row's node coefficients one after the other [kg/m]
    (``1/2 rho_f C_d D l_i``)."""

    slots: NDArray[np.int64]
    start: NDArray[np.int64]
    c: NDArray[np.float64]


@njit(cache=True)  # type: ignore[misc]
def drag_forces(table: DragTable, row: int, t: float, rod: SystemView) -> None:
    """Adds ``-c_i |v_i| v_i`` [N] to the external forces of row ``row``'s nodes (module
    doc)."""
    s, c0 = table.slots[row, 0], table.start[row]
    for k in range(table.slots[row, 1]):
        vx, vy, vz = rod.velocity[0, s + k], rod.velocity[1, s + k], rod.velocity[2, s + k]
        f = table.c[c0 + k] * math.sqrt(vx * vx + vy * vy + vz * vz)
        rod.external_forces[0, s + k] -= f * vx
        rod.external_forces[1, s + k] -= f * vy
        rod.external_forces[2, s + k] -= f * vz


@njit(cache=True)  # type: ignore[misc]
def drag_tangent(table: DragTable, row: int, t: float, rod: SystemView,
                 dfdx: NDArray[np.float64], dfdv: NDArray[np.float64]) -> None:
    """The derivative of each of row ``row``'s node drags with respect to the node's position
    (zero) and velocity, ``-c (|v| I + v v^T / |v|)`` [N s/m] (zero at rest, where the force
    is flat), into ``dfdx`` / ``dfdv`` (3, 3, n_nodes)."""
    s, c0 = table.slots[row, 0], table.start[row]
    dfdx[:] = 0.0
    for k in range(table.slots[row, 1]):
        speed = math.sqrt(rod.velocity[0, s + k] ** 2 + rod.velocity[1, s + k] ** 2
                          + rod.velocity[2, s + k] ** 2)
        for a in range(3):
            for b in range(3):
                outer = (rod.velocity[a, s + k] * rod.velocity[b, s + k] / speed
                         if speed > 0.0 else 0.0)
                dfdv[a, b, k] = -table.c[c0 + k] * ((speed if a == b else 0.0) + outer)


def _node_lengths(rod: Any) -> NDArray[np.float64]:
    """Each node's share of the rod's rest length [m]: half of each element it bounds."""
    rest = np.asarray(rod.rest_lengths, dtype=np.float64)
    share = np.zeros(rest.shape[0] + 1)
    share[:-1] += 0.5 * rest
    share[1:] += 0.5 * rest
    return share


def drag_table(entries: Sequence[tuple[QuadraticDrag, Any, RodSlot]]) -> DragTable:
    """The :class:`DragTable` of the operators ``entries`` ``(operator, rod, slot)``
    (coefficients from each rod's rest lengths now; no entries: the empty table)."""
    coefficients = []
    for operator, rod, _ in entries:
        d = operator.diameter if operator.diameter is not None else 2.0 * float(np.max(rod.radius))
        coefficients.append(0.5 * operator.density * operator.drag_coefficient * d
                            * _node_lengths(rod))
    start = np.zeros(len(coefficients), dtype=np.int64)
    start[1:] = np.cumsum([c.shape[0] for c in coefficients])[:-1]
    return DragTable(slot_rows([slot for _, _, slot in entries]), start,
                     np.concatenate([np.zeros(0), *coefficients]))


class QuadraticDrag(NoForces):  # type: ignore[misc]
    """Quadratic drag of a fluid at rest on a rod's nodes (module doc), for
    ``sim.add_forcing_to(rod).using(QuadraticDrag, density=..., drag_coefficient=...)``.

    ``density`` [kg/m^3] of the fluid (1.2 air, 1000 water), ``drag_coefficient`` [-] of the
    section, ``diameter`` [m] of the rod (None: twice its largest element radius)."""

    def __init__(self, *, density: float, drag_coefficient: float = 1.2,
                 diameter: float | None = None) -> None:
        super().__init__()
        for name, value, high in (("density", density, 2e4),
                                  ("drag_coefficient", drag_coefficient, 10.0)):
            if not (isinstance(value, (int, float)) and 0.0 <= value <= high):
                raise ParameterError(f"QuadraticDrag.{name} = {value!r} is invalid: must be in "
                                     f"[0, {high:g}]")
        if diameter is not None and not (isinstance(diameter, (int, float)) and 0.0 < diameter <= 1.0):
            raise ParameterError(
                f"QuadraticDrag.diameter = {diameter!r} is invalid: must be in (0, 1] m or None")
        self.density = float(density)
        self.drag_coefficient = float(drag_coefficient)
        self.diameter = None if diameter is None else float(diameter)
        self._table: DragTable | None = None

    def apply_forces(self, system: Any, time: float = 0.0) -> None:
        """The law's kernel on ``system`` (its table built at the first call)."""
        if self._table is None:
            self._table = drag_table([(self, system, one_rod_slot(system))])
        drag_forces(self._table, 0, float(time), rod_slot_view(system))


def _case(rng: np.random.Generator) -> tuple[DragTable, SystemView]:
    """A random valid configuration (the tangent check): 6 nodes, one slow (1 cm/s: the force
    turns on the scale of the speed, so the differences' truncation error there is
    O((1e-6 / 1e-2)^2) relative; at rest both the derivative and the differences vanish)."""
    n = 6
    velocity = rng.normal(0.0, 0.5, (3, n))
    velocity[:, 2] *= 1e-2 / np.linalg.norm(velocity[:, 2])
    view = SystemView(rng.normal(0.0, 0.1, (3, n)), velocity, np.zeros((3, n - 1)),
                      np.zeros((3, 3, n - 1)), np.zeros((3, n)), np.zeros((3, n - 1)))
    return DragTable(slot_rows([RodSlot(0, n, 0, n - 1)]), np.zeros(1, dtype=np.int64),
                     rng.uniform(0.01, 0.1, n)), view


#: the registered law
DRAG = register_law(CompiledLaw("quadratic drag", QuadraticDrag, drag_table, drag_forces,
                                drag_tangent, _case), DragTable)
