"""Numba kernels of the implicit integrator (:mod:`hsa_elastica.engines.implicit`).

:func:`dynamic_forces` is the net force [N] / couple [N m] on every unknown of the static
solver's layout (:mod:`hsa_elastica.engines.statics_kernels`) at the present pose *and* at
given velocities of the unknowns: the one force evaluation
(:func:`hsa_elastica.physics.forces.evaluate_forces`: motors, auxetic law Eq. 2-5, rods,
joints Eq. 6-7 with their dampers, gravity) plus the velocity-dependent forces that the
explicit stepper applies as dampers after its kick, here written as forces:

* PyElastica's ``AnalyticalLinearDamper`` (rod nodes/elements) and the body dampers: a
  velocity factor ``f`` per explicit step ``dt_table`` is the decay rate ``c = -ln(f) /
  dt_table``, i.e. the force ``-m c v`` (node), the couple ``-(J/e) c omega`` (element;
  ``f**e`` with PyElastica's dilatation power: ``-(J/e) e c omega``), ``-m c v`` / ``-J c
  omega`` (body);
* the Kelvin-Voigt material damping
  (:func:`hsa_elastica.physics.material_damping.kelvin_voigt_forces`: the damper's own
  stresses ``n_v = T_s S sigma_dot`` per element, ``m_v = T_b B kappa_dot`` per Voronoi
  region, minus the velocity gradient of the Rayleigh function), as a force instead of the
  explicit path's semi-implicit velocity update (the implicit integrator treats it implicitly
  through its Newton iteration);
* the rigid bodies' gyroscopic couple ``(J omega) x omega`` (body frame), which the explicit
  path adds in ``rigid_body_accelerations``.

These laws and their velocity tangents live in :mod:`hsa_elastica.physics.rate_dampers`
(:func:`damper_forces`, :func:`gyroscopic_couples`, re-exported here).

:func:`dynamic_fd_jacobian` is its column-coloured forward-difference Jacobian with respect to
the position increment of each unknown, the velocity moving with it by ``cv`` per unit
increment (the time integrator's ``d v / d q``).  The kernels take records (NamedTuples): the model
(:class:`DynamicModel`, holding the layout's
:class:`~hsa_elastica.physics.tables.ModelTables`), the integrator's terms
(:class:`DynamicTerms`, holding the static solver's
:class:`~hsa_elastica.engines.statics_kernels.Unknowns`), poses, buffers and settings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.statics_kernels import (
    KIND_BODY_POS,
    KIND_BODY_ROT,
    KIND_NODE,
    ForceModel,
    JacobianPattern,
    Unknowns,
    _rotate,
    perturb_translation,
    restore_colour,
    zero_external,
)
from hsa_elastica.engines.statics_linalg import (
    FactorPlan,
    PackedLU,
)
from hsa_elastica.physics.auxetic_law import StepMemory
from hsa_elastica.physics.forces import constrain_rates, constrain_values, evaluate_forces
from hsa_elastica.physics.rate_dampers import damper_forces, gyroscopic_couples
from hsa_elastica.physics.rod_kernels import kinematic_update_inplace
from hsa_elastica.physics.tables import (
    BodyBlockArrays,
    BodyDamperTable,
    ForcingTables,
    Pose,
    RodBlockArrays,
    RodDamperTable,
)

if TYPE_CHECKING:
    from hsa_elastica.engines.implicit_tangent import ImplicitTangent

__all__ = [
    "AlphaState",
    "ChordBuffers",
    "DynamicModel",
    "DynamicTerms",
    "FDBuffers",
    "Increment",
    "JacobianWork",
    "NewtonSettings",
    "Pose",
    "PoseBuffers",
    "dynamic_fd_jacobian",
    "damper_forces",
    "damping_rates",
    "dynamic_forces",
    "gyroscopic_couples",
    "scatter_velocities",
    "set_pose",
]


#: the compiled model as the implicit kernels take it: the static solver's record (state,
#: law tables and programs, the force evaluation's workspace and status)
DynamicModel = ForceModel


class DynamicTerms(NamedTuple):
    """What the implicit integrator adds to the static solver's evaluation: its unknowns, the
    boundary conditions' rates program (motors, rod ends), the dampers' program (applied as
    forces), the step ``dt_table`` [s] the damper tables were built with, and the coupling's
    twist-filter memory (``kappa_vor`` / ``last_time``) at the step's start (empty: no filter),
    the rod and body dampers' tables with their per-step factors ``f`` replaced by the
    decay rates ``-ln(f) / dt_table`` [1/s] (:func:`damping_rates`), and the coupling's creep
    and play memory at the step's start (:class:`~hsa_elastica.physics.auxetic_law.StepMemory`,
    empty: neither law on)."""

    unknowns: Unknowns
    bc_program: NDArray[np.int64]
    damp_program: NDArray[np.int64]
    dt_table: float
    filter_saved: NDArray[np.float64]
    filter_time0: NDArray[np.float64]
    rod_damping: RodDamperTable
    body_damping: BodyDamperTable
    memory_saved: StepMemory  # the creep's and the play's memory at the step's start


class PoseBuffers(NamedTuple):
    """Workspace of :func:`set_pose`: the increments as rod node / element and body
    translations and rotations, and the rotation scratch of the rods and of the bodies."""

    rod_dx: NDArray[np.float64]
    rod_dtheta: NDArray[np.float64]
    body_dx: NDArray[np.float64]
    body_dtheta: NDArray[np.float64]
    rod_rotation: NDArray[np.float64]
    body_rotation: NDArray[np.float64]


class FDBuffers(NamedTuple):
    """Buffers of :func:`dynamic_fd_jacobian`: ``f0`` the forces at the state, ``f1`` /
    ``mass1`` work, ``saved`` (n, 3, 3) / ``vsave`` (n,) the perturbed entries, ``data`` the
    Jacobian's CSC values (output), ``rotation`` a (3, 3, 1) scratch."""

    f0: NDArray[np.float64]
    f1: NDArray[np.float64]
    mass1: NDArray[np.float64]
    saved: NDArray[np.float64]
    vsave: NDArray[np.float64]
    data: NDArray[np.float64]
    rotation: NDArray[np.float64]


class Increment(NamedTuple):
    """The present increments ``x`` of a step (``q = q0 o exp(x)``), the step-start pose and
    the first unknown of each unknown's element / body (rotation components are consecutive)."""

    x: NDArray[np.float64]
    q0: Pose
    first: NDArray[np.int64]


class AlphaState(NamedTuple):
    """The generalized-alpha state of the unknowns: velocity ``v``, algorithmic acceleration
    ``a``, true acceleration ``vdot`` and the algorithmic acceleration of the step before."""

    v: NDArray[np.float64]
    a: NDArray[np.float64]
    vdot: NDArray[np.float64]
    a_prev: NDArray[np.float64]


class NewtonSettings(NamedTuple):
    """``coef`` = (alpha_m, alpha_f, gamma, beta, slow_contraction, max_iter, the contraction
    rate carried between steps (updated in place), its lower bound); ``tol`` = (force [N],
    couple [N m], position [m], rotation [rad]); ``is_rot`` the rotational rows; ``counts[0]``
    += force evaluations."""

    coef: NDArray[np.float64]
    tol: NDArray[np.float64]
    is_rot: NDArray[np.bool_]
    counts: NDArray[np.int64]


class ChordBuffers(NamedTuple):
    """Work vectors of :func:`newton_steps` (one entry per unknown) and :func:`set_pose`'s."""

    base: NDArray[np.float64]
    x: NDArray[np.float64]
    a1: NDArray[np.float64]
    v1: NDArray[np.float64]
    vd1: NDArray[np.float64]
    f: NDArray[np.float64]
    mass: NDArray[np.float64]
    r: NDArray[np.float64]
    dx: NDArray[np.float64]
    work: NDArray[np.float64]
    pose: PoseBuffers


def damping_rates(dr: RodDamperTable, db: BodyDamperTable, dt_table: float
                  ) -> tuple[RodDamperTable, BodyDamperTable]:
    """The damper tables with each per-step velocity factor ``f`` (of the explicit step
    ``dt_table`` [s]) replaced by its decay rate ``-ln(f) / dt_table`` [1/s] (once per engine,
    not per force evaluation)."""
    inv = 1.0 / dt_table
    return (dr._replace(translational=-np.log(dr.translational) * inv,
                        rotational=-np.log(dr.rotational) * inv),
            db._replace(translational=-np.log(db.translational) * inv,
                        rotational=-np.log(db.rotational) * inv))


@njit(cache=True)  # type: ignore[misc]
def scatter_velocities(
    vel: NDArray[np.float64], rod: RodBlockArrays, body: BodyBlockArrays, unknowns: Unknowns,
) -> None:
    """Velocities of the unknowns into the state (every other velocity zero; the boundary
    conditions' rates are set by the caller)."""
    kind, index, comp = unknowns
    rod.velocity[:] = 0.0
    rod.omega[:] = 0.0
    body.velocity[:] = 0.0
    body.omega[:] = 0.0
    for j in range(kind.shape[0]):
        k = kind[j]
        i = index[j]
        a = comp[j]
        if k == KIND_NODE:
            rod.velocity[a, i] = vel[j]
        elif k == KIND_BODY_POS:
            body.velocity[a, i] = vel[j]
        elif k == KIND_BODY_ROT:
            body.omega[a, i] = vel[j]
        else:
            rod.omega[a, i] = vel[j]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _gather_with_inertia(
    rod: RodBlockArrays, body: BodyBlockArrays, unknowns: Unknowns, out: NDArray[np.float64],
    mass: NDArray[np.float64],
) -> None:
    """:func:`~hsa_elastica.engines.statics_kernels.gather_forces` into ``out`` and each
    unknown's inertia into ``mass`` (node mass [kg]; element ``J_aa / e``, body ``m``,
    ``J_aa`` [kg m^2]) in one pass over the unknowns (one branch on the kind per unknown)."""
    kind, index, comp = unknowns
    for j in range(kind.shape[0]):
        i = index[j]
        a = comp[j]
        k = kind[j]
        if k == KIND_NODE:
            out[j] = rod.internal_forces[a, i] + rod.external_forces[a, i]
            mass[j] = rod.mass[i]
        elif k == KIND_BODY_POS:
            out[j] = body.external_forces[a, i]
            mass[j] = body.mass[i]
        elif k == KIND_BODY_ROT:
            out[j] = body.external_torques[a, i]
            mass[j] = body.mass_second_moment_of_inertia[a, a, i]
        else:  # a rod element's rotation
            out[j] = rod.internal_torques[a, i] + rod.external_torques[a, i]
            mass[j] = rod.mass_second_moment_of_inertia[a, a, i] / rod.dilatation[i]


@njit(cache=True)  # type: ignore[misc]
def dynamic_forces(
    t: float, angles: NDArray[np.float64], rates: NDArray[np.float64],
    vel: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms,
    out: NDArray[np.float64], mass: NDArray[np.float64],
) -> bool:
    """Net force [N] / couple [N m] on every unknown at the present pose, the unknowns moving
    at ``vel`` (motors at ``angles`` [rad] turning at ``rates`` [rad/s] at time ``t`` [s]), and
    each unknown's inertia at this pose in ``mass`` (node mass [kg]; element ``J_aa / e``,
    body ``m``, ``J_aa`` [kg m^2]).

    The coupling's twist filter state is restored from ``terms.filter_saved`` (last times
    ``terms.filter_time0``, one per coupling) first, so that every evaluation of one step
    advances the filter from the step's start."""
    rod, body, tables, work, status = model
    # unpacked once (an array taken out of a record is reference-counted at every use)
    (couplings, joints, motors, dr, db, rod_gravity, body_gravity, material, ends, loads,
     compression, contacts, laws, sync_program, values_program, _rates_program) = tables
    (unknowns, bc_program, damp_program, _dt_table, filter_saved, filter_time0, dr_rates,
     db_rates, _memory_saved) = terms
    if filter_saved.shape[0] > 0:
        couplings.kappa_vor[:] = filter_saved
        couplings.last_time[:] = filter_time0
    # the held ends' values first (as PyElastica's step: constrain_values after the kinematic
    # update, constrain_rates after the dynamic one): a base mounted on a body turns with the
    # body's present director, and its angular velocity (mount_rates) is projected on that
    # element's director -- read before this, it would be the one the last evaluation left
    # (the step's start after set_pose, a neighbouring colour inside the Jacobian), a hidden
    # dependence on the previous evaluation that made Newton stall on stacks
    constrain_values(values_program, motors, angles, rod, ends, body)
    scatter_velocities(vel, rod, body, unknowns)
    constrain_rates(bc_program, motors, rates, dr, db, material, rod, body, ends)
    zero_external(rod, body)
    # the values are imposed above: evaluate_forces gets an empty values program (imposing
    # them again on the same pose wrote the same numbers for motors on a fixed base)
    ok = evaluate_forces(
        t, angles, rod, body, couplings, joints, motors, ends,
        ForcingTables(rod_gravity, body_gravity, loads, compression, contacts, laws),
        (sync_program, values_program[:0]), work, status,
    )
    if not ok:
        return False
    damper_forces(damp_program, dr_rates, db_rates, material, rod, body)
    gyroscopic_couples(body)
    _gather_with_inertia(rod, body, unknowns, out, mass)
    return True


@njit(cache=True)  # type: ignore[misc]
def dynamic_fd_jacobian(
    t: float, angles: NDArray[np.float64], rates: NDArray[np.float64],
    vel: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms, cv: float,
    pattern: JacobianPattern, buffers: FDBuffers, incr: Increment,
) -> None:
    """Forward-difference ``d F / d q + cv d F / d v`` of :func:`dynamic_forces` into
    ``buffers.data`` (CSC values of the static solver's ``pattern``), ``buffers.f0`` the
    forces at the present state.  Columns of one colour share no row and are perturbed
    together (position by ``steps[j]``, velocity by ``cv * steps[j]``); the state is restored
    exactly after each colour.  ``incr``: the present increments of the step, the step-start
    pose and the first unknown of each unknown's element/body: a rotation column is perturbed
    in the increment, ``exp(x + h e_a) Q0``, the parametrisation Newton moves along (not
    ``exp(h e_a) exp(x) Q0``, which differs by the tangent map of ``x``, e.g. 10 % at 0.2
    rad)."""
    rod = model.rod
    body = model.body
    kind, index, comp = terms.unknowns
    steps, color_ptr, color_cols, _, _ = pattern
    f0, f1, mass1, saved, vsave, data, rscratch = buffers
    x, q0, first = incr
    for c in range(color_ptr.shape[0] - 1):
        for p in range(color_ptr[c], color_ptr[c + 1]):
            j = color_cols[p]
            i = index[j]
            a = comp[j]
            h = steps[j]
            k = kind[j]
            vsave[p] = vel[j]
            vel[j] += cv * h
            if not perturb_translation(rod, body, k, i, a, h, saved[p]):
                w = np.zeros(3)
                j0 = first[j]
                for q in range(j0, j0 + 3):
                    if q < kind.shape[0] and kind[q] == k and index[q] == i:
                        w[comp[q]] = x[q]
                w[a] += h
                if k != KIND_BODY_ROT:
                    saved[p] = rod.director[:, :, i]
                    rod.director[:, :, i] = q0.rod_director[:, :, i]
                    _rotate(rod.director, i, w[0], w[1], w[2], rscratch)
                else:
                    saved[p] = body.director[:, :, i]
                    body.director[:, :, i] = q0.body_director[:, :, i]
                    _rotate(body.director, i, w[0], w[1], w[2], rscratch)
        dynamic_forces(t, angles, rates, vel, model, terms, f1, mass1)
        for p in range(color_ptr[c], color_ptr[c + 1]):
            vel[color_cols[p]] = vsave[p]
        restore_colour(rod, body, terms.unknowns, pattern, c, saved, f0, f1, data)


@njit(cache=True)  # type: ignore[misc]
def set_pose(x: NDArray[np.float64], q0: Pose, rod: RodBlockArrays, body: BodyBlockArrays,
             unknowns: Unknowns, dbuf: PoseBuffers) -> None:
    """State = step-start pose ``q0`` moved by the increments ``x`` of the ``unknowns`` (one
    kinematic update of the whole block with the increments as velocities and prefactor 1: the
    arithmetic of :func:`~hsa_elastica.engines.statics_kernels.apply_increment`)."""
    kind, index, comp = unknowns
    rdx, rdw, bdx, bdw, rot_r, rot_b = dbuf
    rod.position[:] = q0.rod_position
    rod.director[:] = q0.rod_director
    body.position[:] = q0.body_position
    body.director[:] = q0.body_director
    rdx[:] = 0.0
    rdw[:] = 0.0
    bdx[:] = 0.0
    bdw[:] = 0.0
    for j in range(kind.shape[0]):
        k = kind[j]
        i = index[j]
        a = comp[j]
        if k == KIND_NODE:
            rdx[a, i] = x[j]
        elif k == KIND_BODY_POS:
            bdx[a, i] = x[j]
        elif k == KIND_BODY_ROT:
            bdw[a, i] = x[j]
        else:
            rdw[a, i] = x[j]
    kinematic_update_inplace(1.0, rod.position, rod.director, rdx, rdw, rot_r)
    kinematic_update_inplace(1.0, body.position, body.director, bdx, bdw, rot_b)


class JacobianWork(NamedTuple):
    """What :func:`newton_steps` needs to refresh its Jacobian: the pattern and colouring,
    the forward-difference buffers (``fd.data``: the Jacobian's CSC values, kept for
    snapshots), the first unknown of each element / body, the packing plan, the inertia shift
    of the factorisation (kept for snapshots), the last accepted Newton iterate ``x_acc``, and ``info`` (int64): [0] a factorisation is held, [1] its
    age [steps], [2] Jacobians made, [3] refresh after this many steps anyway, [4] status of
    the last call (0 ok, 1 not converged, 2 singular Jacobian, 3 force evaluation failed),
    [5] iterations of the last step; ``lu`` the factorisation itself; ``tangent`` the
    tangents' record (:mod:`hsa_elastica.engines.implicit_tangent`; ``enabled[0]`` 0: the
    Jacobian is :func:`dynamic_fd_jacobian`)."""

    pattern: JacobianPattern
    fd: FDBuffers
    first: NDArray[np.int64]
    plan: FactorPlan
    shift: NDArray[np.float64]
    x_acc: NDArray[np.float64]
    info: NDArray[np.int64]
    lu: PackedLU
    tangent: ImplicitTangent
