"""Hybrid Newton Jacobian of the static residual: the rods' consistent tangents plus a
finite-difference remainder (:mod:`hsa_elastica.engines.statics`, ``jacobian="tangent"``).

The static residual of a free rod unknown is its internal force / couple (the rod's elastic
law, with the one-way auxetic law's rest configuration) plus its external force / couple
(joints to the bodies, gravity, loads, compression law).  The hybrid Jacobian takes

* the internal part from the exact tangent of each rod
  (:func:`~hsa_elastica.physics.rod_tangent.rod_tangent_band`, plus
  :func:`~hsa_elastica.physics.auxetic_tangent.auxetic_tangent_band` for a rod with a one-way
  auxetic coupling and :func:`~hsa_elastica.physics.compression_law.compression_tangent_band`
  for one with the compression law), scattered into the Jacobian's values through a precomputed map
  (:class:`HybridPlan`; held nodes and elements are dropped, partly held elements keep their
  free rotation components, a twist-locked element adds the lock's chain rule:
  :mod:`~hsa_elastica.engines.statics_rods`; a base held on a body by a rigid motor mount
  adds the mount's chain rule, its band columns carried to the body's unknowns and its rows,
  the load the mount's reaction hands over, to the body's rows:
  :mod:`~hsa_elastica.engines.statics_mounts`), and
* the platform joints (Eq. 6-7, ``PlatformJoint`` rows) and compliant motor mounts
  (``MotorMount``, torque-driven ``TwistMount``) from their exact tangents
  (:func:`~hsa_elastica.physics.joint_tangent.joint_force_tangent`,
  :func:`~hsa_elastica.physics.joint_tangent.joint_torque_tangent`,
  :func:`~hsa_elastica.physics.mounts.mount_torque_tangent`,
  :func:`~hsa_elastica.physics.mounts.twist_mount_torque_tangent`; the registry of the laws'
  tangents is :mod:`hsa_elastica.physics.laws`): a 12 x 12 block per joint operation scattered
  through a precomputed map (:func:`joint_tangents`).  With ``make_hybrid(...,
  joint_tangent=False)`` (the oracle, and the way back for a joint law added without a
  tangent) the joints are taken by coloured forward differences of :func:`joint_residual`,
  the joint kernels alone (the bodies' rows couple to every joint, so these need as many
  colours as the whole Jacobian, 30 on the robot, but of this cheap evaluation),
* the contacts from the contact law's tangent, row by row (:mod:`~hsa_elastica.engines.
  statics_contacts`): a 12 x 12 block per point in the joints' layout scattered with theirs
  (``(OP_CONTACT, point)`` rows of ``tangent_ops``), the rod-rod rows' element pairs at their
  four nodes; with :data:`CONTACT_TANGENT` off they all stay in the remainder,
* the laws registered in :mod:`hsa_elastica.physics.compiled_laws` (``OP_LAW`` rows) from
  their node-local tangents, 3 x 3 blocks on the diagonal of their nodes
  (:func:`~hsa_elastica.physics.compiled_laws.add_law_tangents`), when every such law of the
  model has one, and
* the rest (gravity and the loads, which do not depend on the state; with
  ``joint_tangent=False`` the torque-driven mounts too) by coloured
  forward differences of :func:`residual_external`: the force evaluation without those joints
  and contacts (their operations dropped from a copy of the synchronize program) and with the
  rods' internal forces and couples left out of the rod rows (gathered from ``external_*``
  only).  Its base evaluation also writes the auxetic rest configuration the tangents read.
  On the robot, with or without obstacles, and on a stack on compliant or rigid mounts it has
  no state dependence at all (gravity only): no colour.

The rounded clip of the rest strain enters through its slope; a hard clip (``clip_width = 0``)
enters through its one-sided slope at the kink (the finite differences would take the
forward side too).  Laws the tangent does not cover (the passive, reciprocal coupling) keep the
forward-difference Jacobian of the whole residual (:func:`make_hybrid` returns None), as do
torque-driven rigid motor mounts (``TwistMountBC``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.statics_build import rod_ranges, topology_pattern
from hsa_elastica.engines.statics_rods import rod_tangents, tangent_entries
from hsa_elastica.engines.statics_contacts import (
    contact_points,
    node_unknowns,
    pair_tangents,
    point_groups,
)
from hsa_elastica.engines.statics_kernels import (
    KIND_BODY_POS,
    KIND_BODY_ROT,
    KIND_NODE,
    ROTATION_KINDS,
    ForceModel,
    JacobianBuffers,
    JacobianPattern,
    Unknowns,
    perturb_colour,
    residual,
    restore_colour,
    zero_external,
)
from hsa_elastica.physics.borrow import borrowed
from hsa_elastica.physics.compiled_laws import add_law_tangents, has_tangents
from hsa_elastica.physics.joint_tangent import (
    BODY_POS,
    BODY_ROT,
    ELEMENT,
    JOINT_BLOCK,
    NODE,
    joint_force_tangent,
    joint_force_velocity_tangent,
    joint_torque_tangent,
    joint_torque_velocity_tangent,
    tangent_scratch,
)
from hsa_elastica.physics.joints import joint_force_kernel, joint_torque_kernel
from hsa_elastica.physics.mount_kernels import block_view
from hsa_elastica.physics.mounts import (
    mount_rest_orientation,
    mount_torque_tangent,
    twist_mount_torque_tangent,
)
from hsa_elastica.physics.tables import (
    OP_COMPRESSION,
    OP_CONTACT,
    OP_COUPLING,
    OP_GRAVITY_BODY,
    OP_GRAVITY_ROD,
    OP_JOINT_FORCE,
    OP_JOINT_TORQUE,
    OP_LAW,
    OP_LOAD,
    OP_MOUNT_REACTION,
)
from hsa_elastica.physics.point_tangent import contact_point_block

__all__ = ["HybridPlan", "residual_external", "joint_residual", "joint_tangents",
           "hybrid_jacobian", "greedy_colors", "smallest_last", "colour_columns", "make_hybrid",
           "rod_ranges", "rod_tangents", "csc_positions", "part_map", "within", "fd_buffers",
           "joint_pattern", "tangent_entries", "joint_tangent_map", "contact_points",
           "CONTACT_TANGENT", "MOUNT_TANGENT"]

#: the contacts by their exact tangents (True) or in the remainder's differences (False)
CONTACT_TANGENT = True
#: the rigid motor mounts by their chain rule (True, :mod:`~hsa_elastica.engines.statics_mounts`)
#: or the model's whole residual by differences (False: the Jacobian before the chain rule)
MOUNT_TANGENT = True
#: the ``HybridPlan`` fields of the rigid mounts, in order
MOUNT_FIELDS = ("mount_ptr", "mount_motor", "mount_held", "mount_dst", "side_ptr", "side_local",
                "side_dst")


class HybridPlan(NamedTuple):
    """Rod ``r`` spans block indices ``start[r] ..`` (nodes, elements and Voronoi regions
    alike) with ``n_elems[r]`` elements and auxetic coupling row ``coupling[r]`` (-1: none);
    its tangent band's flat entries ``src[ptr[r]:ptr[r+1]]`` add into the Jacobian's CSC values
    at ``dst``; the remainder's CSC values go to ``ext_map`` of the full pattern, the
    differenced joints' to ``joint_map``; ``joint_ops`` the synchronize program's joint
    operations it differences, ``tangent_ops`` those with a tangent, whose 12 x 12 blocks
    (row-major) add into the full pattern's values at ``tangent_dst[p]`` (-1: dropped); the
    rod-rod rows ``pairs`` add at ``indptr`` / ``indices`` through ``node_unknown``."""

    start: NDArray[np.int64]
    n_elems: NDArray[np.int64]
    coupling: NDArray[np.int64]
    ptr: NDArray[np.int64]
    src: NDArray[np.int64]
    dst: NDArray[np.int64]
    ext_map: NDArray[np.int64]
    joint_map: NDArray[np.int64]
    joint_ops: NDArray[np.int64]
    program: NDArray[np.int64]  # the synchronize program without the joint operations
    tangent_ops: NDArray[np.int64]
    tangent_dst: NDArray[np.int64]
    pairs: NDArray[np.int64]
    node_unknown: NDArray[np.int64]
    indptr: NDArray[np.int64]
    indices: NDArray[np.int64]
    swing_ptr: NDArray[np.int64]  # the twist locks' entries (statics_rods), per rod
    swing_src: NDArray[np.int64]
    swing_dst: NDArray[np.int64]
    swing_end: NDArray[np.int64]
    mount_ptr: NDArray[np.int64]  # the rigid motor mounts' entries (statics_mounts), per rod
    mount_motor: NDArray[np.int64]
    mount_held: NDArray[np.int64]
    mount_dst: NDArray[np.int64]
    side_ptr: NDArray[np.int64]
    side_local: NDArray[np.int64]
    side_dst: NDArray[np.int64]


@njit(cache=True)  # type: ignore[misc]
def residual_external(
    angles: NDArray[np.float64], model: ForceModel, unknowns: Unknowns, out: NDArray[np.float64]
) -> bool:
    """:func:`~hsa_elastica.engines.statics_kernels.residual` without the rods' internal
    forces and couples: the rod rows gather ``external_forces`` / ``external_torques`` only."""
    ok = residual(angles, model, unknowns, out)
    rod = model.rod
    kind, index, comp = unknowns
    for j in range(kind.shape[0]):
        k = kind[j]
        if k == KIND_NODE:
            out[j] = rod.external_forces[comp[j], index[j]]
        elif k != KIND_BODY_POS and k != KIND_BODY_ROT:
            out[j] = rod.external_torques[comp[j], index[j]]
    return ok  # type: ignore[no-any-return]


@njit(cache=True)  # type: ignore[misc]
def joint_residual(
    angles: NDArray[np.float64], model: ForceModel, unknowns: Unknowns, ops: NDArray[np.int64],
    out: NDArray[np.float64],
) -> None:
    """Force [N] / couple [N m] of the platform joints and compliant motor mounts ``ops`` (rows
    of the synchronize program) alone on each unknown (external forces of an evaluation of
    only these; a mount's rest orientation turned by its motor angle in ``angles`` [rad])."""
    rod, body = model.rod, model.body
    joints = model.tables.joints
    zero_external(rod, body)
    rod_view = block_view(rod)
    body_view = block_view(body)
    for p in range(ops.shape[0]):
        i = ops[p, 1]
        if ops[p, 0] == OP_JOINT_FORCE:
            joint_force_kernel(rod_view, joints.node[i], body_view, joints.body[i],
                               joints.attachment[i], joints.k_F[i], joints.nu_F[i])
        else:
            if joints.angle_col[i] >= 0:
                mount_rest_orientation(joints.base_orientation[i], angles[joints.angle_col[i]],
                                       joints.rest_orientation[i])
            joint_torque_kernel(rod_view, joints.element[i], body_view, joints.body[i],
                                joints.rest_orientation[i], joints.k_tau[i], joints.nu_tau[i])
    kind, index, comp = unknowns
    for j in range(kind.shape[0]):
        k = kind[j]
        if k == KIND_NODE:
            out[j] = rod.external_forces[comp[j], index[j]]
        elif k == KIND_BODY_POS:
            out[j] = body.external_forces[comp[j], index[j]]
        elif k == KIND_BODY_ROT:
            out[j] = body.external_torques[comp[j], index[j]]
        else:
            out[j] = rod.external_torques[comp[j], index[j]]


@njit(cache=True)  # type: ignore[misc]
def _joint_block(
    angles: NDArray[np.float64], rod_view: Any, body_view: Any, joints: Any, code: int, i: int,
    velocity: bool, block: NDArray[np.float64], work: Any,
) -> None:
    """The 12 x 12 tangent ``block`` of joint operation ``(code, i)``: with respect to the
    unknowns (``velocity`` False: the joint's force, its couple, a motor mount's couple toward
    its rest orientation turned by the motor angle in ``angles`` [rad], a torque-driven
    mount's couples with its motor torque in ``angles`` [N m]) or to their velocities (the
    dampers ``nu_F`` / ``nu_tau``)."""
    if velocity:
        if code == OP_JOINT_FORCE:
            joint_force_velocity_tangent(rod_view, joints.node[i], body_view, joints.body[i],
                                         joints.attachment[i], joints.k_F[i], joints.nu_F[i],
                                         block, work)
        else:
            joint_torque_velocity_tangent(rod_view, joints.element[i], body_view,
                                          joints.body[i], joints.nu_tau[i], block, work)
    elif code == OP_JOINT_FORCE:
        joint_force_tangent(rod_view, joints.node[i], body_view, joints.body[i],
                            joints.attachment[i], joints.k_F[i], joints.nu_F[i], block, work)
    elif joints.angle_col[i] >= 0 and joints.free_twist[i] != 0:
        twist_mount_torque_tangent(rod_view, joints.element[i], body_view, joints.body[i],
                                   joints.base_orientation[i], angles[joints.angle_col[i]],
                                   joints.k_tau[i], joints.nu_tau[i],
                                   joints.rest_orientation[i], block, work)
    elif joints.angle_col[i] >= 0:
        mount_torque_tangent(rod_view, joints.element[i], body_view, joints.body[i],
                             joints.base_orientation[i], angles[joints.angle_col[i]],
                             joints.k_tau[i], joints.nu_tau[i], joints.rest_orientation[i],
                             block, work)
    else:
        joint_torque_tangent(rod_view, joints.element[i], body_view, joints.body[i],
                             joints.rest_orientation[i], joints.k_tau[i], joints.nu_tau[i],
                             block, work)


@njit(cache=True)  # type: ignore[misc]
def joint_tangents(
    angles: NDArray[np.float64], model: ForceModel, ops: NDArray[np.int64],
    dst: NDArray[np.int64], velocity: bool, scale: float, data: NDArray[np.float64],
) -> None:
    """``scale`` times the exact tangents of the joint operations ``ops`` (rows of the
    synchronize program; :func:`_joint_block`: with respect to the unknowns, or with
    ``velocity`` to their velocities) added into the CSC values ``data`` at ``dst`` (one row of
    144 positions per operation, -1: not an entry).  The one scatter of the joints' and the
    contact points' blocks (``(OP_CONTACT, point)`` rows,
    :func:`~hsa_elastica.physics.point_tangent.contact_point_block`): the static solver's
    Jacobian (``velocity`` False, ``scale`` 1) and the implicit integrator's ``K_x + cv K_v``."""
    rod_view = block_view(model.rod)
    body_view = block_view(model.body)
    joints = model.tables.joints
    block = np.empty((JOINT_BLOCK, JOINT_BLOCK))
    flat = block.reshape(JOINT_BLOCK * JOINT_BLOCK)
    work = tangent_scratch()
    for p in range(ops.shape[0]):
        block[:] = 0.0
        if ops[p, 0] != OP_CONTACT:
            _joint_block(angles, rod_view, body_view, joints, ops[p, 0], ops[p, 1], velocity,
                         block, work)
        elif not contact_point_block(rod_view, body_view, model.tables.contacts, ops[p, 1],
                                     velocity, block):
            continue  # a contact point (physics/point_tangent.py) out of reach: no block
        for q in range(JOINT_BLOCK * JOINT_BLOCK):
            d = dst[p, q]
            if d >= 0:
                data[d] += scale * flat[q]


@njit(cache=True)  # type: ignore[misc]
def _fd_part(
    angles: NDArray[np.float64], model: ForceModel, unknowns: Unknowns,
    pattern: JacobianPattern, buffers: JacobianBuffers, ops: NDArray[np.int64], joints: bool,
    base: bool,
) -> None:
    """Coloured forward differences of :func:`joint_residual` (``joints``) or
    :func:`residual_external` into ``buffers.data`` (the CSC pattern of ``pattern``), its
    value at the state first computed into ``buffers.f0`` (``base``; else already there)."""
    if base and joints:
        joint_residual(angles, model, unknowns, ops, buffers.f0)
    elif base:
        residual_external(angles, model, unknowns, buffers.f0)
    for c in range(pattern.color_ptr.shape[0] - 1):
        perturb_colour(model.rod, model.body, unknowns, pattern, c, buffers.saved, buffers.scratch)
        if joints:
            joint_residual(angles, model, unknowns, ops, buffers.f1)
        else:
            residual_external(angles, model, unknowns, buffers.f1)
        restore_colour(model.rod, model.body, unknowns, pattern, c, buffers.saved, buffers.f0,
                       buffers.f1, buffers.data)


@njit(cache=True)  # type: ignore[misc]
def hybrid_jacobian(
    angles: NDArray[np.float64], model: ForceModel, unknowns: Unknowns,
    ext: tuple[JacobianPattern, JacobianBuffers], joint: tuple[JacobianPattern, JacobianBuffers],
    plan: HybridPlan, data: NDArray[np.float64], rest_written: bool,
) -> None:
    """The hybrid Jacobian (module docstring) into the full pattern's CSC values ``data``;
    ``model`` carries the synchronize program without the joint operations, ``ext`` / ``joint``
    the remainder's and the differenced joints' colourings, CSC patterns and buffers.
    ``rest_written``: the caller's last force evaluation was at this state and these
    ``angles`` (it wrote the auxetic rest configuration the tangents read), so a remainder
    without colours needs no evaluation.  The tangents are taken before the remainder's
    colours, which leave the rest configuration of their last perturbed state.  The records
    are borrowed for the call (:func:`~hsa_elastica.physics.borrow.borrowed`)."""
    angles, model, unknowns, ext, joint, plan, data = borrowed(
        (angles, model, unknowns, ext, joint, plan, data))
    data[:] = 0.0
    colours = ext[0].color_ptr.shape[0] > 1
    if colours or not rest_written:
        # the rest configuration of the state (the tangents read it; the remainder's colours
        # rewrite it at their perturbed states) and the remainder's base value
        residual_external(angles, model, unknowns, ext[1].f0)
    rod_tangents(model, plan, data)
    joint_tangents(angles, model, plan.tangent_ops, plan.tangent_dst, False, 1.0, data)
    pair_tangents(model, plan, 1.0, 0.0, data)
    add_law_tangents(model.tables.laws, 0.0, block_view(model.rod),
                     (plan.node_unknown, plan.indptr, plan.indices), (1.0, 0.0), data)
    if colours:
        _fd_part(angles, model, unknowns, ext[0], ext[1], plan.joint_ops, False, False)
        for q in range(plan.ext_map.shape[0]):
            data[plan.ext_map[q]] += ext[1].data[q]
    if joint[0].color_ptr.shape[0] > 1:
        _fd_part(angles, model, unknowns, joint[0], joint[1], plan.joint_ops, True, True)
        for q in range(plan.joint_map.shape[0]):
            data[plan.joint_map[q]] += joint[1].data[q]


# --------------------------------------------------------------------------------------------
# set-up (Python)
# --------------------------------------------------------------------------------------------
def greedy_colors(conflict: sp.csr_matrix, order: NDArray[np.int64]) -> NDArray[np.int64]:
    """Greedy colouring of the columns in ``order``: each takes the smallest colour none of
    its neighbours in ``conflict`` (two columns sharing a row) has."""
    n = conflict.shape[0]
    colors = -np.ones(n, dtype=np.int64)
    for j in order:
        nb = conflict.indices[conflict.indptr[j] : conflict.indptr[j + 1]]
        used = set(colors[nb].tolist())
        c = 0
        while c in used:
            c += 1
        colors[j] = c
    return colors


def smallest_last(conflict: sp.csr_matrix) -> NDArray[np.int64]:
    """Smallest-last order of the columns (Matula & Beck 1983): repeatedly remove the column
    with the fewest neighbours left (the lowest index among equals); colour in the reverse
    order of removal."""
    n = conflict.shape[0]
    degree = np.diff(conflict.indptr).astype(np.int64) - 1  # the diagonal is not a neighbour
    left = np.ones(n, dtype=bool)
    removed = np.empty(n, dtype=np.int64)
    big = np.iinfo(np.int64).max
    for k in range(n):
        j = int(np.argmin(np.where(left, degree, big)))
        removed[k] = j
        left[j] = False
        nb = conflict.indices[conflict.indptr[j] : conflict.indptr[j + 1]]
        degree[nb] -= 1
    return removed[::-1].copy()


def colour_columns(csc: sp.csc_matrix) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(color_ptr, color_cols)`` of a greedy colouring of ``csc``'s columns (columns of one
    colour share no row): in the columns' order or smallest-last (Matula & Beck 1983),
    whichever needs fewer colours (30 against 39 on the robot's full Jacobian)."""
    conflict = (csc.T @ csc).tocsr()
    colors = greedy_colors(conflict, np.arange(csc.shape[1]))
    better = greedy_colors(conflict, smallest_last(conflict))
    if better.max() < colors.max():
        colors = better
    order = np.argsort(colors, kind="stable")
    counts = np.bincount(colors)
    return (np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            order.astype(np.int64))


def csc_positions(solver: Any) -> dict[tuple[int, int], int]:
    """``(row, column) -> position`` in the solver's full CSC pattern."""
    pos = {}
    for j in range(solver.n):
        for q in range(solver.indptr[j], solver.indptr[j + 1]):
            pos[(int(solver.indices[q]), j)] = q
    return pos


def part_map(pos: dict[tuple[int, int], int], csc: sp.csc_matrix) -> NDArray[np.int64] | None:
    """Positions in the full pattern of a part's sorted CSC entries (None if one is not in
    it)."""
    coo = csc.tocoo()  # a sorted CSC's value order
    out = [pos.get((int(r), int(c))) for r, c in zip(coo.row, coo.col)]
    return None if any(q is None for q in out) else np.array(out, dtype=np.int64)


def joint_pattern(solver: Any, ops: NDArray[np.int64]) -> sp.csc_matrix:
    """Sparsity of :func:`joint_residual`: each joint couples the unknowns of its rod node or
    element and of its body, all with all."""
    joints = solver.tables.joints
    kind, index = solver.kind, solver.index
    rows, cols = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for code, i in ops:
        body = np.nonzero(((kind == KIND_BODY_POS) | (kind == KIND_BODY_ROT))
                          & (index == joints.body[i]))[0]
        if code == OP_JOINT_FORCE:
            rod = np.nonzero((kind == KIND_NODE) & (index == joints.node[i]))[0]
        else:
            rod = np.nonzero(np.isin(kind, ROTATION_KINDS) & (index == joints.element[i]))[0]
        u = np.concatenate([rod, body])
        rows.append(np.repeat(u, u.shape[0]))
        cols.append(np.tile(u, u.shape[0]))
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csc_matrix((np.ones(r.shape[0]), (r, c)), shape=(solver.n, solver.n))


def joint_tangent_map(
    solver: Any, pos: dict[tuple[int, int], int], ops: NDArray[np.int64]
) -> NDArray[np.int64]:
    """``(len(ops), 144)``: the full pattern's position of each entry of each joint operation's
    12 x 12 tangent block (row-major, groups of :mod:`~hsa_elastica.physics.joint_tangent`),
    -1 for a held coordinate, an entry the operation does not touch, or one outside the full
    pattern (zero in the whole Jacobian: parts that cancel, as in :func:`within`)."""
    joints = solver.tables.joints
    unknown: dict[tuple[int, int, int], int] = {}
    for j in range(solver.n):
        k, i, a = int(solver.kind[j]), int(solver.index[j]), int(solver.comp[j])
        group = {KIND_NODE: NODE, KIND_BODY_POS: BODY_POS, KIND_BODY_ROT: BODY_ROT}.get(
            k, ELEMENT if k in ROTATION_KINDS else -1)
        unknown[(group, i, a)] = j
    dst = -np.ones((ops.shape[0], JOINT_BLOCK * JOINT_BLOCK), dtype=np.int64)
    for p, (code, i) in enumerate(ops.tolist()):
        if code == OP_CONTACT:  # (slot in the block, group of the unknowns, index)
            local = point_groups(solver.tables.contacts, i)
        elif code == OP_JOINT_FORCE:
            body = int(joints.body[i])
            local = [(NODE, NODE, int(joints.node[i])), (BODY_POS, BODY_POS, body),
                     (BODY_ROT, BODY_ROT, body)]
        else:
            local = [(ELEMENT, ELEMENT, int(joints.element[i])),
                     (BODY_ROT, BODY_ROT, int(joints.body[i]))]
        cells = [(slot + a, unknown.get((g, idx, a))) for slot, g, idx in local for a in range(3)]
        for lr, jr in cells:
            for lc, jc in cells:
                if jr is not None and jc is not None:
                    dst[p, lr * JOINT_BLOCK + lc] = pos.get((jr, jc), -1)
    return dst


def within(part: sp.csc_matrix, full: sp.csc_matrix) -> sp.csc_matrix:
    """``part``'s entries inside the full pattern (sorted CSC): an entry outside it is zero in
    the whole Jacobian, e.g. a body's force against its own rotation, or parts that cancel
    (a motor mount's and a joint's couple on the lower platform against its position)."""
    csc = sp.csc_matrix(part.multiply(full) != 0, dtype=np.float64)
    csc.sort_indices()
    return csc


def _external_pattern(solver: Any, program: NDArray[np.int64]) -> sp.csc_matrix:
    """Sparsity of :func:`residual_external` (synchronize ``program``) from the model's
    topology (:func:`~hsa_elastica.engines.statics_build.topology_pattern`, the rods'
    internal forces left out)."""
    pattern = topology_pattern(solver, program, internal=False)
    csc = sp.csc_matrix(pattern.astype(np.float64))
    csc.sort_indices()
    return csc


def fd_buffers(solver: Any, csc: sp.csc_matrix) -> tuple[JacobianPattern, JacobianBuffers]:
    """Colouring, CSC pattern and work buffers of one finite-difference part: its nonempty
    columns only, and no two rotation components of one element or body in a colour (each
    colour saves and restores the director it turns once)."""
    n = solver.n
    rot = np.isin(solver.kind, ROTATION_KINDS) | (solver.kind == KIND_BODY_ROT)
    group = np.where(solver.kind == KIND_BODY_ROT, -1 - solver.index, solver.index)
    _, entity = np.unique(group[rot], return_inverse=True)
    siblings = sp.csc_matrix((np.ones(int(rot.sum())), (entity, np.nonzero(rot)[0])),
                             shape=(int(entity.max(initial=-1)) + 1, n))
    used = np.diff(csc.indptr) > 0
    color_ptr, color_cols = np.zeros(1, np.int64), np.zeros(0, np.int64)
    if used.any():
        ptr, cols = colour_columns(sp.vstack([csc, siblings]).tocsc())
        colour = np.repeat(np.arange(ptr.shape[0] - 1), np.diff(ptr))
        keep = used[cols]
        counts = np.bincount(colour[keep])
        color_ptr = np.concatenate([[0], np.cumsum(counts[counts > 0])]).astype(np.int64)
        color_cols = cols[keep].astype(np.int64)
    return (JacobianPattern(solver.steps, color_ptr, color_cols, csc.indptr.astype(np.int64),
                            csc.indices.astype(np.int64)),
            JacobianBuffers(np.zeros(n), np.zeros(n), np.zeros((n, 3, 3)), np.zeros(csc.nnz),
                            np.empty((3, 3, 1))))


def make_hybrid(solver: Any, joint_tangent: bool = True, remainder: bool = True
                ) -> tuple[HybridPlan, Any, Any] | None:
    """The hybrid Jacobian's plan and its two finite-difference parts (the remainder's and
    the differenced joints', each ``(JacobianPattern, JacobianBuffers)``) for a
    :class:`~hsa_elastica.engines.statics.StaticSolver` whose full pattern is set; the numbers
    of colours in ``solver.n_colors_external`` / ``solver.n_colors_joints``.  The contact
    points take their exact tangents (:func:`contact_points`), the platform joints and motor
    mounts theirs, or with ``joint_tangent=False`` coloured differences of
    :func:`joint_residual` (the oracle, and the Jacobian before the joints had tangents).
    None (differences of the whole residual) for a model with other operations than the
    auxetic coupling, the joints and mounts, the contacts, gravity, the loads and registered
    laws with a tangent: the passive coupling (its reciprocal couple and exact-gradient forces
    have no tangent here), a rod end held on a body by a torque-driven
    rigid mount (``TwistMountBC``: its twist relative to the body has no chain rule here; the
    angle-driven ``MotorMountBC`` takes its chain rule, :mod:`~hsa_elastica.engines.
    statics_mounts`, unless :data:`MOUNT_TANGENT` is off, or the model also has contacts or
    registered laws, whose rows on a held node it would not hand to the body); or a part
    outside the full pattern.
    ``remainder=False``: a plan without a remainder (the implicit integrator's,
    :mod:`~hsa_elastica.engines.implicit_tangent`), None where the remainder
    depends on the state (its pattern is not empty)."""
    program = solver.tables.sync_program
    joints = solver.tables.joints
    is_law = program[:, 0] == OP_LAW  # the registered laws: their tangents, when all have one
    # gravity and the loads (a lab force on a node, a couple about an element's own axis,
    # ramped in time) do not depend on the state: the remainder has nothing to difference
    covered = np.isin(program[:, 0], (OP_COUPLING, OP_JOINT_FORCE, OP_JOINT_TORQUE,
                                      OP_GRAVITY_ROD, OP_GRAVITY_BODY, OP_LOAD, OP_CONTACT,
                                      OP_COMPRESSION))
    covered |= is_law & has_tangents(solver.tables.laws)
    mounted = solver.tables.motors.body >= 0  # rigid mounts: their chain rule (statics_mounts)
    covered |= program[:, 0] == OP_MOUNT_REACTION
    # the chain rule hands the held base's band rows to the body, not a contact's or a law's
    # rows on the held node: a model with both keeps the differences of the whole residual
    touched = np.isin(program[:, 0], (OP_CONTACT, OP_LAW)).any()
    if (not covered.all() or np.any(mounted & (solver.tables.motors.free_twist != 0))
            or (mounted.any() and (not MOUNT_TANGENT or touched))):
        return None
    points = contact_points(solver, program, CONTACT_TANGENT)  # the others: in the remainder
    is_joint = np.isin(program[:, 0], (OP_JOINT_FORCE, OP_JOINT_TORQUE))
    twist = np.array([bool(j) and joints.free_twist[i] != 0
                      for j, i in zip(is_joint, program[:, 1])], dtype=bool).reshape(-1)
    exact = is_joint & joint_tangent
    differenced_joints = is_joint & ~twist & ~exact  # the torque-driven mounts go to the rest
    ops = np.ascontiguousarray(program[differenced_joints])
    tangent_ops = np.ascontiguousarray(np.concatenate([program[exact], points[0]]))
    kept = ~exact & ~differenced_joints & ~points[2] & ~is_law
    kept &= program[:, 0] != OP_COMPRESSION  # in the rods' bands (statics_rods)
    kept &= program[:, 0] != OP_MOUNT_REACTION
    rest = np.ascontiguousarray(program[kept])
    pos = csc_positions(solver)
    full = sp.csc_matrix((np.ones(solver.indices.shape[0]), solver.indices, solver.indptr),
                         shape=(solver.n, solver.n))
    ext_csc = within(_external_pattern(solver, rest), full)
    if not remainder and ext_csc.nnz > 0:
        return None
    joint_csc = within(joint_pattern(solver, ops), full)
    ext_map, joint_map = part_map(pos, ext_csc), part_map(pos, joint_csc)
    if ext_map is None or joint_map is None:
        return None
    ext, differenced = fd_buffers(solver, ext_csc), fd_buffers(solver, joint_csc)
    solver.n_colors_external = int(ext[0].color_ptr.shape[0] - 1)
    solver.n_colors_joints = int(differenced[0].color_ptr.shape[0] - 1)
    rods = tangent_entries(solver, pos)
    plan = HybridPlan(
        rods["start"], rods["n_elems"], rods["coupling"], rods["ptr"], rods["src"], rods["dst"],
        ext_map, np.ascontiguousarray(joint_map, dtype=np.int64), ops, rest, tangent_ops,
        joint_tangent_map(solver, pos, tangent_ops), points[1], node_unknowns(solver),
        solver.indptr, solver.indices, rods["swing_ptr"], rods["swing_src"], rods["swing_dst"],
        rods["swing_end"], *(rods[k] for k in MOUNT_FIELDS))
    return plan, ext, differenced

