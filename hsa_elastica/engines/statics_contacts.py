"""The contacts' part of the hybrid Newton Jacobian (:mod:`hsa_elastica.engines.statics_hybrid`)
and of the implicit integrator's Newton matrix (:mod:`hsa_elastica.engines.implicit_tangent`):
which contact rows take an exact tangent, and the rod-rod contacts' scatter.

Row by row (:func:`contact_points`): a row with a point block (rod nodes on fixed obstacles,
on a free sphere or a free ``Cylinder``, a body's rim points, a sphere's support point with
its rolling couple, a body's points on a free object:
:func:`~hsa_elastica.physics.point_tangent.row_kind`) is scattered with
the joints' 12 x 12 blocks; a rod-rod row (``tables.ROD_ROD``: every element pair within
reach couples the four nodes of its two segments) adds its pairs' 12 x 12 tangents into the
Jacobian's values at those nodes (:func:`pair_tangents`, through :func:`node_unknowns` and
the full pattern).  Every contact row kind has its tangent, so no contact row is left to the
remainder's coloured differences; a row kind added without one would be (``done`` False),
without sending the others there.  Which unknowns a point's block touches (its slots, the
unknowns' groups and indices) is :func:`point_groups`; the scatter's operation list
:func:`point_ops`, the rod-rod rows :func:`pair_rows`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.statics_kernels import KIND_NODE
from hsa_elastica.physics.mount_kernels import block_view
from hsa_elastica.physics.joint_tangent import BODY_POS, BODY_ROT, NODE
from hsa_elastica.physics.point_tangent import (
    OWN_POS,
    OWN_ROT,
    point_row,
    rod_pair_tangents,
    row_kind,
)
from hsa_elastica.physics.tables import OP_CONTACT, ROD_ROD

__all__ = ["contact_points", "node_unknowns", "pair_tangents", "point_groups", "point_ops",
           "pair_rows"]


@njit(cache=True)  # type: ignore[misc]
def pair_tangents(model: Any, plan: Any, sx: float, sv: float,
                  data: NDArray[np.float64]) -> None:
    """``sx K_x + sv K_v`` of the rod-rod contact rows ``plan.pairs`` (a ``HybridPlan``) at
    the rods' present positions and velocities added into the full pattern's CSC values
    ``data`` (``model``: a ``ForceModel``)."""
    if plan.pairs.shape[0] > 0:
        rod_pair_tangents(block_view(model.rod), model.tables.contacts, plan.pairs,
                          (plan.node_unknown, plan.indptr, plan.indices), (sx, sv), data)


def contact_points(
    solver: Any, program: NDArray[np.int64], enabled: bool,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """``(ops, pairs, done)`` of the synchronize ``program``'s contact rows: the points with a
    block as the joint scatter's operations (``(OP_CONTACT, point)``), the rod-rod rows, and a
    mask of ``program``'s operations these take (the rest is differenced); all empty unless
    ``enabled`` (``statics_hybrid.CONTACT_TANGENT``)."""
    c = solver.tables.contacts
    is_contact = program[:, 0] == OP_CONTACT
    rows = program[is_contact, 1] if enabled else np.zeros(0, np.int64)
    ops, pairs = point_ops(c, rows), pair_rows(c, rows)
    width = int(c.points.shape[2])
    done = is_contact & np.isin(program[:, 1], np.union1d(ops[:, 1] // width, pairs))
    return ops, pairs, done


def node_unknowns(solver: Any) -> NDArray[np.int64]:
    """``(n_nodes, 3)``: the unknown of each rod node's component, -1 where it is held."""
    out = -np.ones((solver.state.rod.position.shape[1], 3), dtype=np.int64)
    nodes = np.nonzero(solver.kind == KIND_NODE)[0]
    out[solver.index[nodes], solver.comp[nodes]] = nodes
    return out


def point_groups(contacts: Any, flat: int) -> list[tuple[int, int, int]]:
    """``(slot, group, index)`` of the unknowns of contact point ``flat`` (:func:`point_row`):
    the block's slot, the unknowns' group (``NODE``, ``BODY_POS``, ``BODY_ROT``) and the
    node's or body's index, one branch per row kind (:func:`row_kind`)."""
    i, p = point_row(int(contacts.points.shape[2]), int(flat))
    system, kind, obj = (int(contacts.ids[i, k]) for k in (0, 1, 4))
    if kind != 0 and obj >= 0:  # a body's point on a free object (OWN_POS / OWN_ROT slots)
        return [(OWN_POS, BODY_POS, system), (OWN_ROT, BODY_ROT, system),
                (BODY_POS, BODY_POS, obj), (BODY_ROT, BODY_ROT, obj)]
    if kind != 0:  # a body's own points or its support point
        return [(BODY_POS, BODY_POS, system), (BODY_ROT, BODY_ROT, system)]
    if obj >= 0:  # a rod's node and a free object
        return [(NODE, NODE, system + p), (BODY_POS, BODY_POS, obj), (BODY_ROT, BODY_ROT, obj)]
    return [(NODE, NODE, system + p)]


def point_ops(contacts: Any, rows: NDArray[np.int64]) -> NDArray[np.int64]:
    """``(OP_CONTACT, row * width + point)`` for every point of the contact ``rows`` that
    have a point block (:func:`row_kind`; the joint scatter's operations); the other rows
    are left out (:func:`pair_rows`, or the remainder's differences)."""
    width = int(contacts.points.shape[2])
    flat = [int(i) * width + p for i in rows if row_kind(contacts.ids, int(i)) >= 0
            for p in range(int(contacts.ids[i, 2]))]
    return np.array([(OP_CONTACT, f) for f in flat], dtype=np.int64).reshape(-1, 2)


def pair_rows(contacts: Any, rows: NDArray[np.int64]) -> NDArray[np.int64]:
    """The rod-rod rows (``tables.ROD_ROD``) among the contact ``rows``
    (:func:`rod_pair_tangents`)."""
    rows = np.asarray(rows, dtype=np.int64)
    return np.ascontiguousarray(rows[contacts.ids[rows, 1] == ROD_ROD]) if rows.size else rows
