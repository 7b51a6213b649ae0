"""Set-up of a :class:`~hsa_elastica.engines.statics.StaticSolver`: the sparsity pattern of its
Jacobian and the compiled specialisation of a kernel, called without the dispatcher.

The pattern is read from the model's topology (:func:`topology_pattern`): each law couples
known blocks of unknowns -- a rod's elastic forces (with its auxetic coupling, compression law
and passive couple) the band of half-bandwidth
:data:`~hsa_elastica.physics.rod_tangent.HALF_BANDWIDTH` along the rod (the passive couple
elements :data:`PASSIVE_REACH` apart too), a joint or compliant mount its rod node or element
with its body's position and rotation, a rigid motor mount the rod unknowns within
:data:`MOUNT_REACH` nodes and elements of its held base with its body, a contact point its node
or its body (a rod node touching a free object: the node with the object's body); gravity,
loads and the dampers (zero velocities) couple nothing.  No evaluation: milliseconds, and the
same pattern for every parameter value.

The pattern from dense differences (:func:`dense_pattern`) is the oracle of that one
(``tests/test_statics_build.py``: every nonzero it finds is in the topology's).  The dense
differences perturb each unknown alone (n columns, at two poses) and evaluate the
residual: the compiled force evaluation
(:func:`~hsa_elastica.physics.forces.evaluate_forces`), its results gathered onto the unknowns
by numpy fancy indexing, and a column's nonzeros read as ``f1 != f0``.  The same kernels as
:func:`~hsa_elastica.engines.statics_kernels.residual` in the same order (so the same values
bit for bit), without compiling the solver's own kernels on a cold start nor running their
gather loop as Python (~1 s on the robot, two passes of 594 columns).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.statics_kernels import (
    KIND_BODY_POS,
    KIND_BODY_ROT,
    KIND_NODE,
    ForceModel,
    JacobianPattern,
    perturb_colour,
    restore_colour,
)
from hsa_elastica.engines.statics_kernels import ROTATION_KINDS
from hsa_elastica.physics.compiled_laws import law_slot
from hsa_elastica.physics.forces import evaluate_forces
from hsa_elastica.physics.rod_tangent import HALF_BANDWIDTH
from hsa_elastica.physics.tables import (
    OP_COMPRESSION,
    OP_LAW,
    OP_CONTACT,
    OP_COUPLING,
    OP_COUPLING_TORQUE,
    OP_JOINT_FORCE,
    OP_JOINT_TORQUE,
    OP_MOUNT_REACTION,
    ROD_ROD,
    ForcingTables,
)

__all__ = ["dense_pattern", "specialisation", "topology_pattern"]

#: elements apart whose rotations the passive coupling's reciprocal couple and exact-gradient
#: forces couple (every component), beyond the rod's band (measured on the robot: 3)
PASSIVE_REACH = 3

#: nodes and elements on either side of a rigidly mounted base whose unknowns the load handed
#: to the body (the base's internal force and couple) and the rows that follow the body reach:
#: the internal force of a node reads its two elements and their nodes, the couple of an
#: element its neighbours and the Voronoi lengths (measured on a stack: 2)
MOUNT_REACH = 2

def specialisation(kernel: Any, args: tuple[Any, ...]) -> Any:
    """The compiled specialisation of the numba ``kernel`` for arguments of the types of
    ``args`` (compiled or loaded from numba's cache if needed): a callable that takes
    arguments of exactly those types without the dispatcher's typing of them (~35 us a call
    on the robot's model record), or ``kernel`` itself when there is none.  The caller keeps
    the types: the same records, C-contiguous float64 arrays where ``args`` had them."""
    from numba import typeof

    try:
        sig = tuple(typeof(x) for x in args)
        cres = kernel.overloads.get(sig)
        if cres is None:
            kernel.compile(sig)
            cres = kernel.overloads.get(sig)
        return kernel if cres is None else cres.entry_point
    except Exception:  # noqa: BLE001 -- any failure: the dispatcher (types checked per call)
        return kernel


class _Gather:
    """Where each unknown's residual is in the force arrays (:func:`gather_forces` as numpy
    fancy indexing); ``internal=False`` leaves the rods' internal forces and couples out (as
    :func:`~hsa_elastica.engines.statics_hybrid.residual_external`)."""

    def __init__(self, kind: NDArray[np.int64], index: NDArray[np.int64],
                 comp: NDArray[np.int64], internal: bool) -> None:
        self.internal = internal
        self.parts = []
        for name, sel in (("node", kind == KIND_NODE), ("body_pos", kind == KIND_BODY_POS),
                          ("body_rot", kind == KIND_BODY_ROT),
                          ("element", (kind != KIND_NODE) & (kind != KIND_BODY_POS)
                           & (kind != KIND_BODY_ROT))):
            rows = np.nonzero(sel)[0]
            self.parts.append((name, rows, comp[rows], index[rows]))

    def __call__(self, model: ForceModel, out: NDArray[np.float64]) -> None:
        rod, body = model.rod, model.body
        for name, rows, a, i in self.parts:
            if name == "node":
                out[rows] = (rod.internal_forces[a, i] + rod.external_forces[a, i]
                             if self.internal else rod.external_forces[a, i])
            elif name == "body_pos":
                out[rows] = body.external_forces[a, i]
            elif name == "body_rot":
                out[rows] = body.external_torques[a, i]
            else:
                out[rows] = (rod.internal_torques[a, i] + rod.external_torques[a, i]
                             if self.internal else rod.external_torques[a, i])


def _residual(angles: NDArray[np.float64], model: ForceModel, gather: _Gather,
              out: NDArray[np.float64]) -> None:
    """:func:`~hsa_elastica.engines.statics_kernels.residual` (or ``residual_external``) with
    the compiled force evaluation and a numpy gather."""
    rod, body, tables, work, status = model
    for arr in (rod.external_forces, rod.external_torques, body.external_forces,
                body.external_torques):
        arr[:] = 0.0
    evaluate_forces(
        0.0, angles, rod, body, tables.couplings, tables.joints, tables.motors, tables.ends,
        ForcingTables(tables.rod_gravity, tables.body_gravity, tables.loads, tables.compression,
                      tables.contacts, tables.laws),
        (tables.sync_program, tables.values_program), work, status,
    )
    gather(model, out)


def dense_pattern(solver: Any, program: NDArray[np.int64] | None = None,
                  internal: bool = True) -> NDArray[np.bool_]:
    """``(n, n)`` sparsity of the solver's residual (``program``: the synchronize program
    instead of the model's; ``internal=False``: the rods' internal forces left out) from
    forward differences of each unknown alone at two randomly perturbed poses (seeded), the
    strain clipping of the coupling lifted so that no dependency hides behind a clip; the
    solver's pose and couplings are put back.  The oracle of :func:`topology_pattern` (tests
    only: n columns of two evaluations each)."""
    n = solver.n
    keep, base = solver.couplings, solver.pose()
    solver.couplings = keep._replace(eps_min=np.full_like(keep.eps_min, -np.inf),
                                     eps_max=np.full_like(keep.eps_max, np.inf))
    # one column per colour; an empty CSC pattern: restore_colour only puts the pose back
    single = JacobianPattern(solver.steps, np.arange(n + 1, dtype=np.int64),
                             np.arange(n, dtype=np.int64), np.zeros(n + 1, dtype=np.int64),
                             np.zeros(0, dtype=np.int64))
    f0, f1, none = np.zeros(n), np.zeros(n), np.zeros(0)
    saved = np.zeros((n, 3, 3))
    perturb, restore = solver._kernel(perturb_colour), solver._kernel(restore_colour)
    gather = _Gather(solver.kind, solver.index, solver.comp, internal)
    angles = np.full(solver.n_motors, 0.3)
    pattern = np.zeros((n, n), dtype=bool)
    rng = np.random.default_rng(12345)
    try:
        for _ in range(2):
            solver.set_pose(base)
            solver.move(np.where(solver.is_torque, 1e-2, 1e-4) * rng.standard_normal(n))
            model, unknowns = solver._args()
            if program is not None:
                model = model._replace(tables=model.tables._replace(sync_program=program))
            _residual(angles, model, gather, f0)
            for c in range(n):
                perturb(model.rod, model.body, unknowns, single, c, saved, solver.scratch)
                _residual(angles, model, gather, f1)
                restore(model.rod, model.body, unknowns, single, c, saved, f0, f1, none)
                pattern[:, c] |= f1 != f0
    finally:
        solver.couplings = keep
        solver.set_pose(base)
    return pattern


# --------------------------------------------------------------------------------------------
# the pattern from the topology
# --------------------------------------------------------------------------------------------
def rod_ranges(ghost_elems: NDArray[np.int64], n_elems_block: int) -> list[tuple[int, int]]:
    """``(start, n_elems)`` of each rod of the block (runs of non-ghost elements; a rod's
    nodes, elements and Voronoi regions start at the same block index)."""
    real = np.ones(n_elems_block, dtype=bool)
    real[ghost_elems] = False
    out, k = [], 0
    while k < n_elems_block:
        if not real[k]:
            k += 1
            continue
        s = k
        while k < n_elems_block and real[k]:
            k += 1
        out.append((s, k - s))
    return out


def rod_locals(solver: Any) -> list[tuple[int, int, NDArray[np.int64]]]:
    """Per rod of the block: ``(start, n_elems, local)``, ``local[6 k + a]`` the unknown of
    component ``a`` of the rod's node ``k`` and ``local[6 k + 3 + a]`` of its element ``k``
    (the rod tangent's band layout), -1 where held."""
    rod = solver.state.rod
    kind, index, comp = solver.kind, solver.index, solver.comp
    node = kind == KIND_NODE
    rot = np.isin(kind, ROTATION_KINDS)
    out = []
    for s, ne in rod_ranges(np.asarray(rod.ghost_elems_idx, dtype=np.int64),
                            rod.director.shape[2]):
        local = -np.ones(6 * ne + 3, dtype=np.int64)
        sel = np.nonzero(node & (index >= s) & (index <= s + ne))[0]
        local[6 * (index[sel] - s) + comp[sel]] = sel
        sel = np.nonzero(rot & (index >= s) & (index < s + ne))[0]
        local[6 * (index[sel] - s) + 3 + comp[sel]] = sel
        out.append((s, ne, local))
    return out


def _band(local: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(rows, columns) of the unknowns of ``local`` within :data:`HALF_BANDWIDTH` of each
    other."""
    m = local.shape[0]
    off = np.arange(-HALF_BANDWIDTH, HALF_BANDWIDTH + 1)
    r = np.repeat(np.arange(m), off.shape[0])
    c = (np.arange(m)[:, None] + off[None, :]).ravel()
    ok = (c >= 0) & (c < m)
    r, c = local[r[ok]], local[c[ok]]
    ok = (r >= 0) & (c >= 0)
    return r[ok], c[ok]


def _element_reach(local: NDArray[np.int64], reach: int
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(rows, columns) of the rotation unknowns of ``local``'s elements at most ``reach``
    elements apart, every component with every component."""
    ne = (local.shape[0] - 3) // 6
    elem = np.arange(ne)
    pairs = [(k, k + d) for d in range(-reach, reach + 1) for k in elem if 0 <= k + d < ne]
    k, q = (np.array(x, dtype=np.int64) for x in zip(*pairs))
    a = np.arange(3)
    r = local[(6 * k + 3)[:, None, None] + a[None, :, None] + 0 * a[None, None, :]].ravel()
    c = local[(6 * q + 3)[:, None, None] + 0 * a[None, :, None] + a[None, None, :]].ravel()
    ok = (r >= 0) & (c >= 0)
    return r[ok], c[ok]


def topology_pattern(solver: Any, program: NDArray[np.int64] | None = None,
                     internal: bool = True) -> NDArray[np.bool_]:
    """``(n, n)`` sparsity of the solver's residual read from the model's tables (module
    doc; ``program``: the synchronize program instead of the model's; ``internal=False``:
    the rods' internal forces left out, as :func:`dense_pattern`).  Holds every entry the
    laws can make nonzero, for any parameter values (the diagonal of an unknown no law
    acts on left out)."""
    n = solver.n
    tables = solver.tables
    program = tables.sync_program if program is None else program
    kind, index = solver.kind, solver.index
    pattern = np.zeros((n, n), dtype=bool)
    rods = rod_locals(solver)

    def block(rows: NDArray[np.int64], cols: NDArray[np.int64]) -> None:
        pattern[np.ix_(rows, cols)] = True

    def body(b: int) -> NDArray[np.int64]:
        return np.nonzero(((kind == KIND_BODY_POS) | (kind == KIND_BODY_ROT)) & (index == b))[0]

    def rod_of(element: int) -> NDArray[np.int64]:
        for s, ne, local in rods:
            if s <= element < s + ne:
                return local
        return np.zeros(0, dtype=np.int64)

    banded = {id(loc): loc for _, _, loc in rods} if internal else {}
    joints, motors, contacts = tables.joints, tables.motors, tables.contacts
    for code, i in program.tolist():
        if code == OP_COUPLING and not internal:
            continue  # the rest configuration acts through the internal forces only
        if code in (OP_COUPLING, OP_COUPLING_TORQUE, OP_COMPRESSION, OP_LAW):  # the rod's band
            start = (law_slot(tables.laws, i).elem_start if code == OP_LAW else
                     (tables.compression if code == OP_COMPRESSION else solver.couplings).elem_start[i])
            local = rod_of(int(start))
            banded[id(local)] = local
            if code == OP_COUPLING_TORQUE:
                r, c = _element_reach(local, PASSIVE_REACH)
                pattern[r, c] = True
        elif code in (OP_JOINT_FORCE, OP_JOINT_TORQUE):
            own = ((kind == KIND_NODE) & (index == joints.node[i]) if code == OP_JOINT_FORCE
                   else np.isin(kind, ROTATION_KINDS) & (index == joints.element[i]))
            u = np.concatenate([np.nonzero(own)[0], body(int(joints.body[i]))])
            block(u, u)
        elif code == OP_CONTACT:
            system, is_body, m = (int(x) for x in contacts.ids[i, :3])
            if is_body == ROD_ROD:  # every node of rod A with every node of rod B
                sb, mb = (int(x) for x in contacts.ids[i, 3:5])
                nodes = np.r_[system : system + m, sb : sb + mb]
                u = np.nonzero((kind == KIND_NODE) & np.isin(index, nodes))[0]
                block(u, u)
                continue
            obj = int(contacts.ids[i, 4])  # a free object: each node with the object's body
            carrier = body(obj) if obj >= 0 else np.zeros(0, dtype=np.int64)
            if is_body:  # a body's points (on an object: with the object's body)
                u = np.concatenate([body(system), carrier])
                block(u, u)
            else:
                for k in range(system, system + m):
                    u = np.concatenate([np.nonzero((kind == KIND_NODE) & (index == k))[0],
                                        carrier])
                    block(u, u)
    for local in banded.values():
        r, c = _band(local)
        pattern[r, c] = True
    mounted = [int(i) for code, i in program.tolist() if code == OP_MOUNT_REACTION]
    if internal:  # the held base moves with its body: the rod's band around it follows
        mounted += [int(i) for i in np.nonzero(motors.body >= 0)[0]]
    for i in sorted(set(mounted)):
        local = rod_of(int(motors.element[i]))
        s = next(s0 for s0, _, loc in rods if loc is local)
        k = 6 * (int(motors.element[i]) - s)  # the held node's and element's local rows
        near = local[max(0, k - 6 * MOUNT_REACH) : k + 6 * (MOUNT_REACH + 1)]
        near = near[near >= 0]
        b = body(int(motors.body[i]))
        block(near, b)
        block(b, near)
        block(b, b)
    return pattern
