"""The implicit integrator's Newton matrix from the laws' consistent tangents
(:class:`~hsa_elastica.engines.implicit.ImplicitEngine` with ``jacobian="tangent"``).

The Newton matrix of a generalized-alpha step is ``dF/dq + cv dF/dv - ca M`` (module doc of
:mod:`hsa_elastica.engines.implicit`; the inertia shift ``ca M`` is added at the factorisation).
:func:`implicit_tangent_jacobian` assembles ``dF/dq + cv dF/dv`` from

* the rods' elastic internal forces and couples, with the one-way auxetic law's rest
  configuration: their exact tangents
  (:func:`~hsa_elastica.physics.rod_tangent.rod_tangent_band`,
  :func:`~hsa_elastica.physics.auxetic_tangent.auxetic_tangent_band`), scattered as the static
  solver's hybrid Jacobian does (:func:`~hsa_elastica.engines.statics_hybrid.rod_tangents`),
  with the chain rule of a base held on a body by a rigid motor mount
  (:mod:`~hsa_elastica.engines.statics_mounts`: the band's columns of the held node and
  element carried to the body's unknowns, the load the mount hands over to its rows);
* the platform joints and compliant motor mounts (Eq. 6-7, with their dampers ``nu_F`` /
  ``nu_tau``): their exact tangents ``K_x + cv K_v``, ``K_x`` the derivative wrt the pose at
  the present velocities (:func:`~hsa_elastica.engines.statics_hybrid.joint_tangents`, the
  static solver's), ``K_v`` wrt the unknowns' velocities
  (:func:`~hsa_elastica.physics.joint_tangent.joint_force_velocity_tangent`,
  :func:`~hsa_elastica.physics.joint_tangent.joint_torque_velocity_tangent`) and ``cv =
  gamma / (beta h)`` the derivative of a velocity wrt its position unknown in the step's
  update (module doc of :mod:`hsa_elastica.engines.implicit`).  With ``joint_tangent=False``
  (:func:`make_implicit_tangent`, or :data:`JOINT_TANGENT` at the engine's construction) they
  are coloured forward differences of the joint kernels alone
  (:func:`~hsa_elastica.engines.statics_hybrid.joint_residual`), each colour's positions moved
  by the step and its velocities by ``cv`` times it (30 colours on the robot): the oracle of
  the tangents, and the Newton matrix before the joints had them;
* the contacts with fixed obstacles and free objects (rod nodes, a body's rim points, a
  sphere's support point and its rolling couple, rod nodes on a free sphere or ``Cylinder``):
  the contact law's exact ``K_x + cv K_v`` per point, a 12 x 12 block in the joints' layout
  scattered with theirs (:func:`~hsa_elastica.physics.point_tangent.contact_point_block`; the
  point's kinematics on its body or relative to the object it touches by the chain rule).  Its friction and damping
  are velocity dependent, so ``K_v`` is the larger part where a point slides or presses in;
  the rod-rod contacts' element pairs at their four nodes
  (:func:`~hsa_elastica.engines.statics_contacts.pair_tangents`);
* the laws registered in :mod:`hsa_elastica.physics.compiled_laws` (a model's
  ``ModelTables.laws``): each law's node-local ``K_x + cv K_v``
  (:func:`~hsa_elastica.physics.compiled_laws.add_law_tangents`), when every such law of the
  model has a tangent (else the whole residual is differenced);
* the velocity-proportional forces of :func:`rate_forces` (PyElastica's linear dampers, the
  Kelvin-Voigt material damping, the body dampers and the bodies' gyroscopic couple): ``cv``
  times their exact velocity tangents, from the kernels beside their forces
  (:func:`~hsa_elastica.physics.rate_dampers.damper_tangent`,
  :func:`~hsa_elastica.physics.rate_dampers.gyroscopic_tangent`: 3 x 3 blocks on a node, an
  element or a body; :func:`~hsa_elastica.physics.material_damping.kelvin_voigt_tangent`: a
  band over the rod's unknowns, scattered as the rods' tangents, a rigidly mounted base's
  columns carried to its body's velocities by the mount's chain rule).  With
  ``rate_tangent=False`` (:func:`make_implicit_tangent`, or :data:`RATE_TANGENT`), or a
  damper without a tangent, they are ``cv`` times coloured forward differences of
  :func:`rate_forces` in the velocities (15 colours on the robot): the oracle.  The laws are
  linear in the velocities at a fixed pose (the gyroscopic couple is quadratic; its
  difference error is ``J`` times the velocity step, 1e-3 rad/s), so both agree up to the
  differences' rounding (``tests/test_implicit_tangent.py``).

Left out, against the whole residual's differences (:func:`~hsa_elastica.engines.
implicit_kernels.dynamic_fd_jacobian`, ``jacobian="fd"``): the pose dependence of the
velocity-proportional forces of :func:`rate_forces` (the joints' dampers have theirs in
``K_x``) and PyElastica's Lagrangian-transport and unsteady-dilatation
couples (both vanish at rest and grow with the velocities), and the rotation unknowns'
parametrisation: the tangents are with respect to a turn of the present director
(``exp(d) exp(x) Q0``), Newton moves along ``exp(x + d) Q0`` (they differ by about ``|x| /
2`` relative, ``x`` the step's rotation increment).  Newton's solution is that of the exact
residual either way; these only change its contraction rate (``tests/test_implicit_tangent.py``
measures the difference of the matrices, ``benchmarks/bench_jacobian.py --implicit`` the
evaluations per step).

A model the tangents do not cover keeps the differences of the whole residual
(:func:`make_implicit_tangent` returns None): whatever
:func:`~hsa_elastica.engines.statics_hybrid.make_hybrid` does not cover (the passive coupling,
torque-driven rigid mounts), torque-driven compliant mounts and the
coupling's twist filter.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.implicit_kernels import (
    DynamicModel,
    DynamicTerms,
    damper_forces,
    gyroscopic_couples,
    scatter_velocities,
)
from hsa_elastica.engines.statics_kernels import KIND_BODY_POS, KIND_BODY_ROT, KIND_NODE
from hsa_elastica.engines.statics_contacts import pair_tangents
from hsa_elastica.engines.statics_hybrid import (
    HybridPlan,
    csc_positions,
    fd_buffers,
    joint_residual,
    joint_tangents,
    make_hybrid,
    part_map,
    rod_tangents,
    within,
)
from hsa_elastica.engines.statics_mounts import mount_chain
from hsa_elastica.engines.statics_rods import WIDTH
from hsa_elastica.engines.statics_kernels import (
    JacobianBuffers,
    JacobianPattern,
    gather_forces,
    perturb_colour,
    restore_colour,
    zero_external,
)
from hsa_elastica.physics.compiled_laws import add_law_tangents, law_rows
from hsa_elastica.physics.forces import constrain_rates
from hsa_elastica.physics.mount_kernels import block_view
from hsa_elastica.physics.joint_tangent import JOINT_BLOCK
from hsa_elastica.physics.material_damping import kelvin_voigt_tangent
from hsa_elastica.physics.rate_dampers import (
    GROUP_BODY_POS,
    GROUP_BODY_ROT,
    GROUP_ELEMENT,
    GROUP_NODE,
    damper_tangent,
    gyroscopic_tangent,
)
from hsa_elastica.physics.tables import OP_DAMP_BODY, OP_DAMP_ROD, OP_MATERIAL_DAMPING

__all__ = ["ImplicitTangent", "VELOCITY_STEP", "JOINT_TANGENT", "RATE_TANGENT",
           "implicit_tangent_jacobian", "make_implicit_tangent", "rate_forces", "empty_tangent"]

#: velocity step of the rate forces' differences [m/s, rad/s]: they are linear in it (the
#: gyroscopic couple's error is ``J`` times this)
VELOCITY_STEP = 1e-3

#: the joints' part of the Newton matrix by their exact tangents (True) or by coloured
#: differences (False); read when an engine is built (:func:`make_implicit_tangent`)
JOINT_TANGENT = True

#: the velocity-proportional forces' part by their exact velocity tangents (True) or by
#: coloured differences of :func:`rate_forces` (False); read when an engine is built
RATE_TANGENT = True


class ImplicitTangent(NamedTuple):
    """What :func:`implicit_tangent_jacobian` needs: ``enabled`` (0: the engine differences
    the whole residual and the rest is empty), the static solver's hybrid plan (rod tangents'
    scatter, the joints' operations and where their tangents or differences go), the
    differenced joints' colouring / buffers (empty with the joints' tangents) and a velocity
    save per column, the rate forces' colouring / buffers and their map into the full
    pattern (empty with their tangents), ``rate_exact`` (1: the rate forces by their
    tangents) and the full pattern's positions ``block_dst[g, i, a, b]`` of their blocks
    (:mod:`~hsa_elastica.physics.rate_dampers`; -1: not an entry)."""

    enabled: NDArray[np.int64]
    plan: HybridPlan
    joint_pattern: JacobianPattern
    joint_buf: JacobianBuffers
    vsave: NDArray[np.float64]
    rate_pattern: JacobianPattern
    rate_buf: JacobianBuffers
    rate_map: NDArray[np.int64]
    rate_exact: NDArray[np.int64]
    block_dst: NDArray[np.int64]


@njit(cache=True)  # type: ignore[misc]
def rate_forces(
    rates: NDArray[np.float64], vel: NDArray[np.float64], model: DynamicModel,
    terms: DynamicTerms, out: NDArray[np.float64],
) -> None:
    """Force [N] / couple [N m] on every unknown of the velocity-proportional laws alone (the
    dampers of ``terms.damp_program`` and the bodies' gyroscopic couple), the unknowns moving
    at ``vel`` and the held ends at the motors' ``rates`` [rad/s], at the present pose and the
    strains of the last evaluation."""
    rod, body, tables = model.rod, model.body, model.tables
    unknowns = terms.unknowns
    scatter_velocities(vel, rod, body, unknowns)
    constrain_rates(terms.bc_program, tables.motors, rates, terms.rod_damping,
                    terms.body_damping, tables.material, rod, body, tables.ends)
    zero_external(rod, body)
    damper_forces(terms.damp_program, terms.rod_damping, terms.body_damping, tables.material,
                  rod, body)
    gyroscopic_couples(body)
    gather_forces(rod, body, unknowns, out)


@njit(cache=True)  # type: ignore[misc]
def _joint_part(
    angles: NDArray[np.float64], rates: NDArray[np.float64], vel: NDArray[np.float64],
    model: DynamicModel, terms: DynamicTerms, cv: float, tan: ImplicitTangent,
    data: NDArray[np.float64],
) -> None:
    """Coloured forward differences of the joints (positions by the steps, velocities by
    ``cv`` times them) added into ``data``."""
    rod, body = model.rod, model.body
    tables = model.tables
    unknowns = terms.unknowns
    pattern, buf, ops = tan.joint_pattern, tan.joint_buf, tan.plan.joint_ops
    if ops.shape[0] == 0:
        return
    scatter_velocities(vel, rod, body, unknowns)
    constrain_rates(terms.bc_program, tables.motors, rates, terms.rod_damping,
                    terms.body_damping, tables.material, rod, body, tables.ends)
    joint_residual(angles, model, unknowns, ops, buf.f0)
    for c in range(pattern.color_ptr.shape[0] - 1):
        for p in range(pattern.color_ptr[c], pattern.color_ptr[c + 1]):
            j = pattern.color_cols[p]
            tan.vsave[p] = vel[j]
            vel[j] += cv * pattern.steps[j]
        perturb_colour(rod, body, unknowns, pattern, c, buf.saved, buf.scratch)
        scatter_velocities(vel, rod, body, unknowns)
        constrain_rates(terms.bc_program, tables.motors, rates, terms.rod_damping,
                        terms.body_damping, tables.material, rod, body, tables.ends)
        joint_residual(angles, model, unknowns, ops, buf.f1)
        for p in range(pattern.color_ptr[c], pattern.color_ptr[c + 1]):
            vel[pattern.color_cols[p]] = tan.vsave[p]
        restore_colour(rod, body, unknowns, pattern, c, buf.saved, buf.f0, buf.f1, buf.data)
    jm = tan.plan.joint_map
    for q in range(jm.shape[0]):
        data[jm[q]] += buf.data[q]


@njit(cache=True)  # type: ignore[misc]
def _joint_tangent_part(
    t: float, angles: NDArray[np.float64], rates: NDArray[np.float64],
    vel: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms, cv: float,
    tan: ImplicitTangent, data: NDArray[np.float64],
) -> None:
    """The exact ``K_x + cv K_v`` (module doc) of the joints, the contacts and the registered
    laws at time ``t`` [s] and the velocities ``vel`` added into ``data``."""
    plan = tan.plan
    ops, dst = plan.tangent_ops, plan.tangent_dst
    rod, body, tables = model.rod, model.body, model.tables
    if ops.shape[0] == 0 and plan.pairs.shape[0] == 0 and law_rows(tables.laws) == 0:
        return
    scatter_velocities(vel, rod, body, terms.unknowns)
    constrain_rates(terms.bc_program, tables.motors, rates, terms.rod_damping,
                    terms.body_damping, tables.material, rod, body, tables.ends)
    joint_tangents(angles, model, ops, dst, False, 1.0, data)
    joint_tangents(angles, model, ops, dst, True, cv, data)
    pair_tangents(model, plan, 1.0, cv, data)  # the rod-rod contacts
    add_law_tangents(tables.laws, t, block_view(rod),
                     (plan.node_unknown, plan.indptr, plan.indices), (1.0, cv), data)


@njit(cache=True)  # type: ignore[misc]
def _rate_part(
    rates: NDArray[np.float64], vel: NDArray[np.float64], model: DynamicModel,
    terms: DynamicTerms, cv: float, tan: ImplicitTangent, data: NDArray[np.float64],
) -> None:
    """``cv`` times the coloured differences of :func:`rate_forces` in the velocities added
    into ``data``."""
    pattern, buf = tan.rate_pattern, tan.rate_buf
    indptr, indices = pattern.indptr, pattern.indices
    rate_forces(rates, vel, model, terms, buf.f0)
    for c in range(pattern.color_ptr.shape[0] - 1):
        c0, c1 = pattern.color_ptr[c], pattern.color_ptr[c + 1]
        for p in range(c0, c1):
            j = pattern.color_cols[p]
            tan.vsave[p] = vel[j]
            vel[j] += VELOCITY_STEP
        rate_forces(rates, vel, model, terms, buf.f1)
        for p in range(c0, c1):
            j = pattern.color_cols[p]
            vel[j] = tan.vsave[p]
            for q in range(indptr[j], indptr[j + 1]):
                r = indices[q]
                buf.data[q] = (buf.f1[r] - buf.f0[r]) * (cv / VELOCITY_STEP)
    rm = tan.rate_map
    for q in range(rm.shape[0]):
        data[rm[q]] += buf.data[q]


@njit(cache=True)  # type: ignore[misc]
def _rate_tangent_part(
    rates: NDArray[np.float64], vel: NDArray[np.float64], model: DynamicModel,
    terms: DynamicTerms, cv: float, tan: ImplicitTangent, data: NDArray[np.float64],
) -> None:
    """``cv`` times the exact velocity tangents of :func:`rate_forces`' laws (the linear and
    body dampers' and the gyroscopic couple's blocks, the Kelvin-Voigt damping's band
    scattered as the rods' tangents) added into ``data``."""
    rod, body, tables = model.rod, model.body, model.tables
    plan, program = tan.plan, terms.damp_program
    scatter_velocities(vel, rod, body, terms.unknowns)
    constrain_rates(terms.bc_program, tables.motors, rates, terms.rod_damping,
                    terms.body_damping, tables.material, rod, body, tables.ends)
    damper_tangent(program, terms.rod_damping, terms.body_damping, rod, body, cv,
                   tan.block_dst, data)
    gyroscopic_tangent(body, cv, tan.block_dst, data)
    ne_max = 0
    for r in range(plan.n_elems.shape[0]):
        ne_max = max(ne_max, plan.n_elems[r])
    band = np.empty((6 * ne_max + 3, WIDTH))
    for p in range(program.shape[0]):
        if program[p, 0] != OP_MATERIAL_DAMPING:
            continue
        i = program[p, 1]
        for r in range(plan.start.shape[0]):
            if plan.start[r] == tables.material.elem_start[i]:
                rows = band[: 6 * plan.n_elems[r] + 3]
                rows[:] = 0.0
                kelvin_voigt_tangent(rod, tables.material, i, rows)
                flat = rows.ravel()
                for q in range(plan.ptr[r], plan.ptr[r + 1]):
                    data[plan.dst[q]] += cv * flat[plan.src[q]]
                mount_chain(model, plan, r, rows, cv, False, data)  # a base held on a body


@njit(cache=True)  # type: ignore[misc]
def implicit_tangent_jacobian(
    t: float, angles: NDArray[np.float64], rates: NDArray[np.float64],
    vel: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms, cv: float,
    tan: ImplicitTangent, data: NDArray[np.float64],
) -> None:
    """``dF/dq + cv dF/dv`` (module doc) into the CSC values ``data`` of the static solver's
    pattern, at time ``t`` [s] and the present pose, the unknowns moving at ``vel``, motors at
    ``angles`` [rad] turning at ``rates`` [rad/s].  The last force evaluation must have been at this state
    (its auxetic rest configuration and strains are read); the pose is left as found, the
    velocity arrays as :func:`rate_forces` leaves them (every evaluation sets them)."""
    data[:] = 0.0
    rod_tangents(model, tan.plan, data)
    if tan.rate_exact[0] != 0:
        _rate_tangent_part(rates, vel, model, terms, cv, tan, data)
    else:
        _rate_part(rates, vel, model, terms, cv, tan, data)
    _joint_tangent_part(t, angles, rates, vel, model, terms, cv, tan, data)
    _joint_part(angles, rates, vel, model, terms, cv, tan, data)


# --------------------------------------------------------------------------------------------
# set-up (Python)
# --------------------------------------------------------------------------------------------
def _rate_pattern(engine: Any) -> sp.csc_matrix:
    """Sparsity of :func:`rate_forces` in the velocities: dense differences at random
    velocities of two randomly perturbed poses (the straight pose hides entries, as the
    static solver finds its pattern); the pose and the laws' memory are put back."""
    n, s = engine.n, engine.solver
    rng = np.random.default_rng(2024)
    rates = np.zeros(s.n_motors)
    f0, f1 = np.zeros(n), np.zeros(n)
    pattern = np.zeros((n, n), dtype=bool)
    args = (engine._model_args, engine._aux)
    base = s.pose()
    try:
        for _ in range(2):
            s.set_pose(base)
            s.move(np.where(s.is_torque, 1e-2, 1e-4) * rng.standard_normal(n))
            s.evaluate(np.zeros(s.n_motors))  # the strains the damping reads
            vel = rng.standard_normal(n)
            rate_forces(rates, vel, *args, f0)
            for j in range(n):
                keep = vel[j]
                vel[j] = keep + 1.0
                rate_forces(rates, vel, *args, f1)
                vel[j] = keep
                pattern[:, j] |= f1 != f0
    finally:
        s.set_pose(base)
        s.evaluate(np.zeros(s.n_motors))
    csc = sp.csc_matrix(pattern.astype(np.float64))
    csc.sort_indices()
    return csc


def empty_tangent(n: int) -> ImplicitTangent:
    """The record of an engine without tangents (the kernel's argument types kept)."""
    i0, f0 = np.zeros(0, np.int64), np.zeros(0)
    pat = JacobianPattern(np.zeros(n), np.zeros(1, np.int64), i0, np.zeros(n + 1, np.int64), i0)
    buf = JacobianBuffers(np.zeros(n), np.zeros(n), np.zeros((0, 3, 3)), f0, np.empty((3, 3, 1)))
    i2 = np.zeros((0, 2), np.int64)
    plan = HybridPlan(i0, i0, i0, np.zeros(1, np.int64), i0, i0, i0, i0, i2, i2, i2,
                      np.zeros((0, JOINT_BLOCK * JOINT_BLOCK), np.int64), i0,
                      np.zeros((0, 3), np.int64), np.zeros(n + 1, np.int64), i0,
                      np.zeros(1, np.int64), i0, np.zeros((0, 2), np.int64), i0,
                      np.zeros(1, np.int64), i0, np.zeros((0, 6), np.int64),
                      np.zeros((0, 36), np.int64), np.zeros(1, np.int64), i0,
                      np.zeros((0, 12), np.int64))
    return ImplicitTangent(np.zeros(1, np.int64), plan, pat, buf, np.zeros(n), pat, buf, i0,
                           np.zeros(1, np.int64), -np.ones((4, 1, 3, 3), np.int64))


def _block_destinations(s: Any, pos: dict[tuple[int, int], int]) -> NDArray[np.int64]:
    """``dst[g, i, a, b]``: the full pattern's position of the entry (unknown of group ``g``,
    index ``i``, component ``a``; the same group and index, component ``b``), -1 where either
    is not an unknown or the entry not in the pattern; ``i`` spans every node, element and
    body of the blocks (the dampers' indices)."""
    rod, body = s.state.rod, s.state.body
    size = max(rod.position.shape[1], rod.director.shape[2], body.mass.shape[0], 1)
    unknown = -np.ones((4, size, 3), dtype=np.int64)
    groups = {KIND_NODE: GROUP_NODE, KIND_BODY_POS: GROUP_BODY_POS, KIND_BODY_ROT: GROUP_BODY_ROT}
    for j in range(s.n):
        g = groups.get(int(s.kind[j]), GROUP_ELEMENT)
        unknown[g, int(s.index[j]), int(s.comp[j])] = j
    dst = -np.ones((4, size, 3, 3), dtype=np.int64)
    for g, i in zip(*np.nonzero((unknown >= 0).any(axis=2))):
        for a in range(3):
            for b in range(3):
                r, c = unknown[g, i, a], unknown[g, i, b]
                if r >= 0 and c >= 0:
                    dst[g, i, a, b] = pos.get((int(r), int(c)), -1)
    return dst


def _rates_covered(engine: Any, plan: HybridPlan) -> bool:
    """Every operation of the dampers' program has its tangent: linear, body and Kelvin-Voigt
    dampers, the last on a rod of the plan."""
    program = engine._aux.damp_program
    material = engine.solver.tables.material
    for code, i in program[:, :2]:
        if code == OP_MATERIAL_DAMPING:
            if not np.any(plan.start == material.elem_start[i]):
                return False
        elif code not in (OP_DAMP_ROD, OP_DAMP_BODY):
            return False
    return True


def make_implicit_tangent(engine: Any, joint_tangent: bool | None = None,
                          rate_tangent: bool | None = None) -> ImplicitTangent | None:
    """The tangent record of an :class:`~hsa_elastica.engines.implicit.ImplicitEngine`; None
    where the module doc says the whole residual is differenced.  ``joint_tangent``: the
    joints by their exact tangents (True) or coloured differences (False); None:
    :data:`JOINT_TANGENT`; ``rate_tangent`` the same for the velocity-proportional forces
    (their differences also where one of them has no tangent), None: :data:`RATE_TANGENT`."""
    joint_tangent = JOINT_TANGENT if joint_tangent is None else bool(joint_tangent)
    rate_tangent = RATE_TANGENT if rate_tangent is None else bool(rate_tangent)
    if engine.filtered:
        return None
    s = engine.solver
    joints = s.tables.joints
    if np.any((joints.angle_col >= 0) & (joints.free_twist != 0)):
        return None  # torque-driven mounts
    hybrid = make_hybrid(s, joint_tangent, remainder=False)
    if hybrid is None:
        return None
    plan, _, joint = hybrid
    full = sp.csc_matrix((np.ones(s.indices.shape[0]), s.indices, s.indptr), shape=(s.n, s.n))
    pos = csc_positions(s)
    exact = rate_tangent and _rates_covered(engine, plan)
    rate_csc = within(sp.csc_matrix((s.n, s.n)) if exact else _rate_pattern(engine), full)
    rate_map = part_map(pos, rate_csc)
    if rate_map is None:
        return None
    rate_pattern, rate_buf = fd_buffers(s, rate_csc)
    engine.n_colors_rates = int(rate_pattern.color_ptr.shape[0] - 1)
    engine.n_colors_joints = int(joint[0].color_ptr.shape[0] - 1)
    return ImplicitTangent(np.ones(1, np.int64), plan, joint[0], joint[1], np.zeros(s.n),
                           rate_pattern, rate_buf, rate_map,
                           np.full(1, int(exact), np.int64), _block_destinations(s, pos))
