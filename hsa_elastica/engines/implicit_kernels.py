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

:func:`dynamic_fd_jacobian` is its column-coloured forward-difference Jacobian with respect to
the position increment of each unknown, the velocity moving with it by ``cv`` per unit
increment (the time integrator's ``d v / d q``).  The kernels take records (NamedTuples): the model
(:class:`DynamicModel`, holding the layout's
:class:`~hsa_elastica.physics.tables.ModelTables`), the integrator's terms
(:class:`DynamicTerms`, holding the static solver's
:class:`~hsa_elastica.engines.statics_kernels.Unknowns`), poses, buffers and settings.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

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
    gather_forces,
    perturb_translation,
    restore_colour,
    zero_external,
)
from hsa_elastica.engines.statics_linalg import (
    FactorPlan,
    PackedLU,
    band_factor,
    band_solve,
    bordered_factor,
    bordered_solve,
)
from hsa_elastica.physics.forces import constrain_rates, constrain_values, evaluate_forces
from hsa_elastica.physics.material_damping import kelvin_voigt_forces
from hsa_elastica.physics.rod_kernels import kinematic_update_inplace
from hsa_elastica.physics.tables import (
    OP_DAMP_BODY,
    OP_DAMP_ROD,
    OP_MATERIAL_DAMPING,
    STATUS_STIFFNESS,
    BodyBlockArrays,
    BodyDamperTable,
    ForcingTables,
    MaterialDampingTable,
    RodBlockArrays,
    RodDamperTable,
)

__all__ = [
    "AlphaState",
    "ChordBuffers",
    "DynamicModel",
    "DynamicTerms",
    "FDBuffers",
    "FactorPlan",
    "Increment",
    "JacobianWork",
    "NewtonSettings",
    "PackedLU",
    "Pose",
    "PoseBuffers",
    "band_factor",
    "band_solve",
    "bordered_factor",
    "bordered_solve",
    "dynamic_fd_jacobian",
    "damping_rates",
    "dynamic_forces",
    "newton_steps",
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
    and the rod and body dampers' tables with their per-step factors ``f`` replaced by the
    decay rates ``-ln(f) / dt_table`` [1/s] (:func:`damping_rates`)."""

    unknowns: Unknowns
    bc_program: NDArray[np.int64]
    damp_program: NDArray[np.int64]
    dt_table: float
    filter_saved: NDArray[np.float64]
    filter_time0: NDArray[np.float64]
    rod_damping: RodDamperTable
    body_damping: BodyDamperTable


class Pose(NamedTuple):
    """A pose of the model: rod node positions [m], directors, body positions [m], directors."""

    rod_position: NDArray[np.float64]
    rod_director: NDArray[np.float64]
    body_position: NDArray[np.float64]
    body_director: NDArray[np.float64]


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
def _damper_forces(
    program: NDArray[np.int64], dr: RodDamperTable, db: BodyDamperTable,
    material: MaterialDampingTable, rod: RodBlockArrays, body: BodyBlockArrays,
) -> None:
    """The dampers of the rates program as forces (see the module doc); ``dr`` / ``db``
    hold decay rates [1/s] (:func:`damping_rates`)."""
    for p in range(program.shape[0]):
        code = program[p, 0]
        i = program[p, 1]
        if code == OP_DAMP_ROD:
            n0 = dr.node_start[i]
            e0 = dr.elem_start[i]
            nn = dr.translational.shape[1]
            ne = dr.rotational.shape[2]
            for k in range(nn):
                c = dr.translational[i, k] * rod.mass[n0 + k]
                for a in range(3):
                    rod.external_forces[a, n0 + k] -= c * rod.velocity[a, n0 + k]
            for k in range(ne):
                e_ = e0 + k
                ie = 1.0 / rod.dilatation[e_]
                for a in range(3):
                    c = dr.rotational[i, a, k]
                    if dr.power[i] != 0:
                        c *= rod.dilatation[e_]
                    rod.external_torques[a, e_] -= (
                        c * rod.mass_second_moment_of_inertia[a, a, e_] * ie * rod.omega[a, e_]
                    )
        elif code == OP_MATERIAL_DAMPING:
            kelvin_voigt_forces(rod, material, i)
        elif code == OP_DAMP_BODY:
            b = db.body[i]
            ct = db.translational[i]
            cr = db.rotational[i]
            for a in range(3):
                body.external_forces[a, b] -= ct * body.mass[b] * body.velocity[a, b]
            for a in range(3):
                s = 0.0
                for c3 in range(3):
                    s += body.mass_second_moment_of_inertia[a, c3, b] * body.omega[c3, b]
                body.external_torques[a, b] -= cr * s


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
     compression, sync_program, values_program, _rates_program) = tables
    (unknowns, bc_program, damp_program, _dt_table, filter_saved, filter_time0, dr_rates,
     db_rates) = terms
    kind, index, comp = unknowns
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
    ok = evaluate_forces(
        t, angles, rod, body, couplings, joints, motors, ends,
        ForcingTables(rod_gravity, body_gravity, loads, compression),
        (sync_program, values_program), work, status,
    )
    if not ok:
        return False
    _damper_forces(damp_program, dr_rates, db_rates, material, rod, body)
    # gyroscopic couple of the bodies (J omega) x omega, body frame
    J = body.mass_second_moment_of_inertia
    w = body.omega
    for b in range(body.mass.shape[0]):
        jw0 = J[0, 0, b] * w[0, b] + J[0, 1, b] * w[1, b] + J[0, 2, b] * w[2, b]
        jw1 = J[1, 0, b] * w[0, b] + J[1, 1, b] * w[1, b] + J[1, 2, b] * w[2, b]
        jw2 = J[2, 0, b] * w[0, b] + J[2, 1, b] * w[1, b] + J[2, 2, b] * w[2, b]
        body.external_torques[0, b] += jw1 * w[2, b] - jw2 * w[1, b]
        body.external_torques[1, b] += jw2 * w[0, b] - jw0 * w[2, b]
        body.external_torques[2, b] += jw0 * w[1, b] - jw1 * w[0, b]
    gather_forces(rod, body, unknowns, out)
    for j in range(kind.shape[0]):
        i = index[j]
        a = comp[j]
        k = kind[j]
        if k == KIND_NODE:
            mass[j] = rod.mass[i]
        elif k == KIND_BODY_POS:
            mass[j] = body.mass[i]
        elif k == KIND_BODY_ROT:
            mass[j] = body.mass_second_moment_of_inertia[a, a, i]
        else:
            mass[j] = rod.mass_second_moment_of_inertia[a, a, i] / rod.dilatation[i]
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


@njit(cache=True, inline="always")  # type: ignore[misc]
def _save_pose(q0: Pose, rod: RodBlockArrays, body: BodyBlockArrays) -> None:
    """The present pose into ``q0``."""
    q0.rod_position[:] = rod.position
    q0.rod_director[:] = rod.director
    q0.body_position[:] = body.position
    q0.body_director[:] = body.director


@njit(cache=True, inline="always")  # type: ignore[misc]
def _residual(f: NDArray[np.float64], mass: NDArray[np.float64], vdot: NDArray[np.float64],
              is_rot: NDArray[np.bool_], r: NDArray[np.float64]) -> tuple[float, float, float]:
    """``r = f - M vdot``; returns the max-norms of its force [N] and couple [N m] rows and
    the merit (max of the force rows and 100 x the couple rows)."""
    fmax = 0.0
    tmax = 0.0
    merit = 0.0
    for j in range(r.shape[0]):
        r[j] = f[j] - mass[j] * vdot[j]
        ar = abs(r[j])
        if is_rot[j]:
            tmax = max(tmax, ar)
            merit = max(merit, 100.0 * ar)
        else:
            fmax = max(fmax, ar)
            merit = max(merit, ar)
    return fmax, tmax, merit


@njit(cache=True, inline="always")  # type: ignore[misc]
def too_slow(theta: float, w: float, it: int, slow: float, max_iter: int) -> bool:
    """Whether a chord iteration contracting the scaled increment by ``theta`` per iteration
    (0: not measured yet), the last increment ``w`` (in units of the tolerance) after ``it``
    iterations, should get a fresh Jacobian: ``theta >= slow``, or convergence (``w theta^m /
    (1 - theta) <= 1``) predicted to need more than ``max_iter`` iterations in all."""
    if theta <= 0.0:
        return False
    if theta >= slow:
        return True
    need = w * theta / (1.0 - theta)
    if need <= 1.0:
        return False
    return it + math.log(need) / -math.log(theta) > max_iter


@njit(cache=True, inline="always")  # type: ignore[misc]
def _alpha_update(x: NDArray[np.float64], base: NDArray[np.float64], v: NDArray[np.float64],
                  a: NDArray[np.float64], vd: NDArray[np.float64], coef: NDArray[np.float64],
                  h: float, a1: NDArray[np.float64], v1: NDArray[np.float64],
                  vd1: NDArray[np.float64]) -> None:
    """Algorithmic acceleration, velocity and true acceleration at the end of the step from
    the increment ``x`` (the generalized-alpha relations of :mod:`hsa_elastica.engines.
    implicit`; ``coef[0:4]`` = ``alpha_m, alpha_f, gamma, beta`` of the settings)."""
    am = coef[0]
    af = coef[1]
    g = coef[2]
    b = coef[3]
    for j in range(x.shape[0]):
        a1[j] = (x[j] - base[j]) / (b * h * h)
        v1[j] = v[j] + h * (1.0 - g) * a[j] + h * g * a1[j]
        vd1[j] = ((1.0 - am) * a1[j] + am * a[j] - af * vd[j]) / (1.0 - af)


class JacobianWork(NamedTuple):
    """What :func:`newton_steps` needs to refresh its Jacobian: the pattern and colouring,
    the forward-difference buffers (``fd.data``: the Jacobian's CSC values, kept for
    snapshots), the first unknown of each element / body, the packing plan, the inertia shift
    of the factorisation (kept for snapshots), the last accepted Newton iterate ``x_acc``, and ``info`` (int64): [0] a factorisation is held, [1] its
    age [steps], [2] Jacobians made, [3] refresh after this many steps anyway, [4] status of
    the last call (0 ok, 1 not converged, 2 singular Jacobian, 3 force evaluation failed),
    [5] iterations of the last step; ``lu`` the factorisation itself."""

    pattern: JacobianPattern
    fd: FDBuffers
    first: NDArray[np.int64]
    plan: FactorPlan
    shift: NDArray[np.float64]
    x_acc: NDArray[np.float64]
    info: NDArray[np.int64]
    lu: PackedLU


@njit(cache=True, inline="always")  # type: ignore[misc]
def _restore_start(q0: Pose, rod: RodBlockArrays, body: BodyBlockArrays, couplings: Any,
                   filtered: bool, filt_saved: NDArray[np.float64],
                   filt_t0: NDArray[np.float64]) -> None:
    """Pose (and the twist filter's memory) back to the step's start."""
    rod.position[:] = q0.rod_position
    rod.director[:] = q0.rod_director
    body.position[:] = q0.body_position
    body.director[:] = q0.body_director
    if filtered:
        couplings.kappa_vor[:] = filt_saved
        couplings.last_time[:] = filt_t0


@njit(cache=True, inline="always")  # type: ignore[misc]
def _predictor(stage: int, h: float, b: float, base: NDArray[np.float64],
               v: NDArray[np.float64], a: NDArray[np.float64], x: NDArray[np.float64]) -> None:
    """Predictor ``stage`` of a step (see :mod:`hsa_elastica.engines.implicit`): 0 ``a_{n+1}
    = 0``, 1 ``a_{n+1} = a_n``, 2 constant velocity."""
    for j in range(x.shape[0]):
        if stage == 0:
            x[j] = base[j]
        elif stage == 1:
            x[j] = base[j] + h * h * b * a[j]
        else:
            x[j] = h * v[j]


@njit(cache=True)  # type: ignore[misc]
def newton_steps(
    n_steps: int, h: float, t0: float, angles: NDArray[np.float64],
    rates: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
    settings: NewtonSettings, q0: Pose, buf: ChordBuffers, jw: JacobianWork,
) -> int:
    """Up to ``n_steps`` generalized-alpha steps of ``h`` [s] from ``t0``, each solved by
    Newton with the Jacobian reused across steps (the one Newton iteration of the implicit
    integrator; the rules are in :mod:`hsa_elastica.engines.implicit`).  ``angles``/``rates``
    rows ``k + 1``: the motors at the end of step ``k``; ``ga`` updated in place.  A fresh
    Jacobian (:func:`dynamic_fd_jacobian`) is factorised here (:func:`bordered_factor`, into
    ``jw.lu``).  Returns the number of steps done; fewer than ``n_steps`` when a step failed
    (``jw.info[4]`` says why; the state is at that step's start, the residual of its last
    iterate in ``buf.r``)."""
    jw.info[4] = 0
    for s in range(n_steps):
        t1 = t0 + (s + 1) * h
        if not _newton_step(h, t1, angles[s + 1], rates[s + 1], model, terms, ga, settings,
                            q0, buf, jw):
            return s
    return n_steps


@njit(cache=True, inline="always")  # type: ignore[misc]
def _begin_step(h: float, b: float, model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
                q0: Pose, buf: ChordBuffers) -> None:
    """Keep the step's start (pose, twist-filter memory), ``base = h v_n + h^2 (1/2 - beta)
    a_n`` and the first predictor ``a_{n+1} = 0`` in ``buf.x``."""
    _save_pose(q0, model.rod, model.body)
    if terms.filter_saved.shape[0] > 0:
        terms.filter_saved[:] = model.tables.couplings.kappa_vor
        terms.filter_time0[:] = model.tables.couplings.last_time
    v, a = ga.v, ga.a
    base = buf.base
    for j in range(v.shape[0]):
        base[j] = h * v[j] + h * h * (0.5 - b) * a[j]
    _predictor(0, h, b, base, v, a, buf.x)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _fail(code: int, it: int, q0: Pose, model: DynamicModel, terms: DynamicTerms,
          info: NDArray[np.int64]) -> bool:
    """A refused step: the state back to its start, ``info[4] = code``; returns False."""
    saved = terms.filter_saved
    _restore_start(q0, model.rod, model.body, model.tables.couplings, saved.shape[0] > 0, saved,
                   terms.filter_time0)
    info[4] = code
    info[5] = it
    return False


@njit(cache=True, inline="always")  # type: ignore[misc]
def _merit(ok: bool, r: NDArray[np.float64], is_rot: NDArray[np.bool_]) -> float:
    """Weighted 2-norm of the residual (couples x 100); inf if the evaluation failed."""
    merit = 0.0
    for j in range(r.shape[0]):
        rj = 100.0 * r[j] if is_rot[j] else r[j]
        merit += rj * rj
    merit = math.sqrt(merit)
    if not ok or not np.isfinite(merit):
        merit = np.inf
    return merit


@njit(cache=True, inline="always")  # type: ignore[misc]
def _refresh(t1: float, ang: NDArray[np.float64], rat: NDArray[np.float64], model: DynamicModel,
             terms: DynamicTerms, cv: float, ca: float, q0: Pose, buf: ChordBuffers,
             jw: JacobianWork) -> bool:
    """A fresh Jacobian at the iterate ``buf.x`` (residual ``buf.f``), factorised into
    ``jw.lu``; False if the factorisation is singular."""
    info = jw.info
    jw.fd.f0[:] = buf.f
    dynamic_fd_jacobian(t1, ang, rat, buf.v1, model, terms, cv, jw.pattern, jw.fd,
                        Increment(buf.x, q0, jw.first))
    mass = buf.mass
    for j in range(mass.shape[0]):
        jw.shift[j] = ca * mass[j]
    info[2] += 1
    info[1] = 0
    if not bordered_factor(jw.fd.data, jw.shift, jw.plan, jw.lu):
        info[0] = 0
        return False
    info[0] = 1
    return True


@njit(cache=True, inline="always")  # type: ignore[misc]
def _newton_update(buf: ChordBuffers, jw: JacobianWork, is_rot: NDArray[np.bool_],
                   inv_pos: float, inv_rot: float) -> float:
    """``dx = -J^-1 r``, the iterate kept in ``jw.x_acc``, ``x += dx``; returns the max-norm of
    the scaled increment."""
    r, dx, x = buf.r, buf.dx, buf.x
    n = r.shape[0]
    for j in range(n):
        r[j] = -r[j]
    bordered_solve(jw.lu, r, dx, buf.work)
    for j in range(n):
        r[j] = -r[j]
    jw.x_acc[:] = x
    w = 0.0
    for j in range(n):
        x[j] += dx[j]
        w = max(w, abs(dx[j]) * (inv_rot if is_rot[j] else inv_pos))
    return w


@njit(cache=True, inline="always")  # type: ignore[misc]
def _end_step(h: float, ang: NDArray[np.float64], model: DynamicModel, terms: DynamicTerms,
              ga: AlphaState, coef: NDArray[np.float64], q0: Pose, buf: ChordBuffers) -> None:
    """The accepted iterate's pose, with the imposed values (motor bases, rod ends) at the
    step's end as an evaluation leaves them (``set_pose`` put back the step start's), and its
    end-of-step accelerations and velocity."""
    tables = model.tables
    set_pose(buf.x, q0, model.rod, model.body, terms.unknowns, buf.pose)
    constrain_values(tables.values_program, tables.motors, ang, model.rod, tables.ends,
                     model.body)
    _alpha_update(buf.x, buf.base, ga.v, ga.a, ga.vdot, coef, h, buf.a1, buf.v1, buf.vd1)


@njit(cache=True)  # type: ignore[misc]
def _newton_step(h: float, t1: float, ang: NDArray[np.float64], rat: NDArray[np.float64],
                 model: DynamicModel, terms: DynamicTerms, ga: AlphaState,
                 settings: NewtonSettings, q0: Pose, buf: ChordBuffers, jw: JacobianWork,
                 ) -> bool:
    """One step of :func:`newton_steps` ending at ``t1`` [s], motors ``ang`` [rad] / ``rat``
    [rad/s]; False (and ``jw.info[4]``) if it is refused."""
    coef, tol, is_rot, counts = settings
    b = coef[3]
    slow = coef[4]
    max_iter = int(coef[5])
    cv = coef[2] / (b * h)
    ca = (1.0 - coef[0]) / ((1.0 - coef[1]) * b * h * h)
    x, f, r, dx = buf.x, buf.f, buf.r, buf.dx
    info = jw.info
    _begin_step(h, b, model, terms, ga, q0, buf)
    stage = 0
    fresh_at_acc = False  # the factorisation was made at x_acc (dx is a Newton step)
    stale = False  # refresh the Jacobian at the next iterate
    have_acc = False
    merit_acc = np.inf
    alpha = 1.0
    theta = coef[6]
    theta_step = 0.0  # the contraction measured in this step (0: not yet)
    w_prev = np.inf
    it = 0
    while True:
        set_pose(x, q0, model.rod, model.body, terms.unknowns, buf.pose)
        _alpha_update(x, buf.base, ga.v, ga.a, ga.vdot, coef, h, buf.a1, buf.v1, buf.vd1)
        ok = dynamic_forces(t1, ang, rat, buf.v1, model, terms, f, buf.mass)
        counts[0] += 1
        fmax, tmax, _ = _residual(f, buf.mass, buf.vd1, is_rot, r)
        if ok and fmax <= tol[0] and tmax <= tol[1]:
            break
        if not ok and model.status[0] == STATUS_STIFFNESS:  # a law refused the state
            return _fail(3, it, q0, model, terms, info)
        merit = _merit(ok, r, is_rot)
        if have_acc and not merit < merit_acc:
            if not fresh_at_acc:
                # the chord direction made things worse: back to the last iterate and a
                # Jacobian there (a Newton step)
                x[:] = jw.x_acc
                have_acc, merit_acc, alpha, stale = False, np.inf, 1.0, True
                continue
            alpha *= 0.5  # damped Newton: halve the step along the Newton direction
            if alpha >= 1.0 / 64.0:
                for j in range(x.shape[0]):
                    x[j] = jw.x_acc[j] + alpha * dx[j]
                continue
            merit = np.inf
        if not np.isfinite(merit) or it >= max_iter:
            if stage + 1 >= 3:
                return _fail(1, it, q0, model, terms, info)
            stage += 1  # again from the next predictor with a fresh Jacobian
            _predictor(stage, h, b, buf.base, ga.v, ga.a, x)
            info[0] = 0
            have_acc, merit_acc, alpha, it, w_prev, theta_step = False, np.inf, 1.0, 0, np.inf, 0.0
            continue
        fresh_at_acc = False
        if info[0] == 0 or stale or info[1] >= info[3] or too_slow(
                theta_step, w_prev, it, slow, max_iter):
            if not _refresh(t1, ang, rat, model, terms, cv, ca, q0, buf, jw):
                return _fail(2, it, q0, model, terms, info)
            fresh_at_acc, stale, w_prev, theta_step = True, False, np.inf, 0.0
        w = _newton_update(buf, jw, is_rot, 1.0 / tol[2], 1.0 / tol[3])
        merit_acc, alpha, have_acc = merit, 1.0, True
        it += 1
        # increment test (Hairer & Wanner, Solving ODEs II, Sec. IV.8): the error left
        # after this update is about theta / (1 - theta) |dx| in the scaled norm
        if w_prev < np.inf and w_prev > 0.0:
            theta = w / w_prev
            theta_step = theta
        if theta < 1.0 and w * theta / (1.0 - theta) <= 1.0 and np.isfinite(w):
            _end_step(h, ang, model, terms, ga, coef, q0, buf)
            break
        w_prev = w
    coef[6] = min(max(theta, coef[7]), 0.99)
    info[1] += 1
    info[5] = it
    v, a, vd, a_prev = ga
    for j in range(v.shape[0]):
        v[j] = buf.v1[j]
        a_prev[j] = a[j]
        a[j] = buf.a1[j]
        vd[j] = buf.vd1[j]
    return True
