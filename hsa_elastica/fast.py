"""Fused time stepping of an HSA robot: many Position-Verlet steps in one numba call.

The per-rod operators (``auxetics.AuxeticCoupling``, ``actuation.MotorAngleBC``,
``joints.PlatformJoint``, PyElastica's ``AnalyticalLinearDamper`` and ``GravityForces``) stay
the readable reference.  This module *compiles* a finalized simulator built with them into
one ``@njit`` loop, :func:`advance`, that performs exactly PyElastica 1.0's
``PositionVerlet.step`` sequence on the memory-block arrays (the rods' and the platform's
arrays are views into those blocks)::

    zero-out is done at the end of each step, as PyElastica does
    kinematic half step (rod block, rigid-body block)       kinematic_update_inplace (*)
    t += dt/2;  constrain_values                             MotorAngleBC (numba kernel)
    AuxeticCoupling rest configuration (Eq. 2-5)             auxetics kernels
    internal forces and torques of the rod block            internal_{forces,torques}_inplace (*)
    synchronize: the other forcings and connections in PyElastica's FIFO order
        PlatformJoint (joint kernels, Eq. 6-7), GravityForces
    accelerations + dynamic step (rods: PyElastica kernels; rigid body: same formula)
    constrain_rates, then damping                           MotorAngleBC, AnalyticalLinearDamper
    kinematic half step;  t += dt/2;  constrain_values
    callbacks (recorders) -- called from Python between calls, at their sampling steps
    external forces and torques zeroed

Every kernel called in the loop is the numba function the reference operators call
(PyElastica's rod kernels, ``auxetics``/``joints``/``actuation`` kernels), except the three
marked (*): allocation-free rewrites of PyElastica's ``overload_operator_kinematic_numba``,
``_compute_internal_forces`` and ``_compute_internal_torques`` with the same arithmetic in the
same order (checked against PyElastica's kernels on random data in ``tests/test_fast.py``).
So the physics stays PyElastica's and ours; the Python dispatch and the temporaries are
removed.  The fused path gives the same trajectory as ``Robot.run`` to round-off
(``tests/test_fast.py``: 1e-10).

Usage::

    from hsa_elastica.fast import build_fast_robot
    robot = build_fast_robot(paper_robot_params(), [0.5, -0.5, 0.5, -0.5])
    robot.run(1.0)                 # same interface as robot.Robot
    df = robot.diagnostics()

or wrap a robot built by :func:`hsa_elastica.robot.build_robot` (fresh, finalized):
``FastRobot(build_robot(...))``.  Only the operators listed above are supported; anything else
in the simulator raises :class:`FastPathUnsupported` at construction (use ``Robot.run``).
Motor schedules that are :class:`~hsa_elastica.actuation.Ramp` instances are evaluated inside
numba; other callables are tabulated in Python once per chunk of steps (correct, slower).

State ownership: the fused loop keeps its own copy of the operators' internal state (printed
geometry, twist filter, joint rest orientation); the reference operator instances of the
wrapped simulator are not advanced, so do not mix ``FastRobot.run`` with the wrapped
``Robot.run``.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.dissipation import AnalyticalLinearDamper
from elastica.external_forces import GravityForces
from elastica.rod.cosserat_rod import (
    _update_accelerations,
    _zeroed_out_external_forces_and_torques,
)
from elastica.rod.data_structures import overload_operator_dynamic_numba

from hsa_elastica.actuation import MotorAngleBC, Ramp, rotate_about_own_axis
from hsa_elastica.auxetics import (
    AuxeticCoupling,
    auxetic_rest_lengths,
    average_to_elements,
    clip_strain,
    handed_twist_strain,
    low_pass,
    twist_dependent_stiffness,
)
from hsa_elastica.joints import (
    PlatformJoint,
    joint_force_kernel,
    joint_torque_kernel,
    relative_orientation,
    resolve_joint_indices,
)
from hsa_elastica.params import ParameterError, RobotParams

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hsa_elastica.robot import Robot

__all__ = [
    "FastPathUnsupported",
    "FastRobot",
    "build_fast_robot",
    "advance",
]


#: PyElastica's gravity kernel (a staticmethod: bound to a module name so numba can call it)
_gravity_kernel = GravityForces.compute_gravity_forces


class FastPathUnsupported(TypeError):
    """The simulator holds an operator (or layout) the fused loop does not implement."""


# --------------------------------------------------------------------------------------------
# operator codes of the programs (one row = (code, index into the operator's table))
# --------------------------------------------------------------------------------------------
OP_NOOP = 0
OP_COUPLING = 1
OP_JOINT_FORCE = 2
OP_JOINT_TORQUE = 3
OP_GRAVITY_ROD = 4
OP_GRAVITY_BODY = 5
OP_MOTOR = 6
OP_DAMP_ROD = 7
OP_DAMP_BODY = 8

#: status codes returned by :func:`advance`
STATUS_OK = 0
STATUS_STIFFNESS = 1


# --------------------------------------------------------------------------------------------
# array bundles (numba accepts NamedTuples of arrays)
# --------------------------------------------------------------------------------------------
class RodBlockArrays(NamedTuple):
    """Views of the arrays of PyElastica's ``MemoryBlockCosseratRod`` (all rods, ghosts)."""

    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    omega: NDArray[np.float64]
    director: NDArray[np.float64]
    v_w: NDArray[np.float64]
    dvdt_dwdt: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    alpha: NDArray[np.float64]
    external_forces: NDArray[np.float64]
    external_torques: NDArray[np.float64]
    mass: NDArray[np.float64]
    volume: NDArray[np.float64]
    lengths: NDArray[np.float64]
    tangents: NDArray[np.float64]
    radius: NDArray[np.float64]
    rest_lengths: NDArray[np.float64]
    rest_voronoi_lengths: NDArray[np.float64]
    dilatation: NDArray[np.float64]
    voronoi_dilatation: NDArray[np.float64]
    sigma: NDArray[np.float64]
    rest_sigma: NDArray[np.float64]
    shear_matrix: NDArray[np.float64]
    internal_stress: NDArray[np.float64]
    internal_forces: NDArray[np.float64]
    ghost_elems_idx: NDArray[Any]
    bend_matrix: NDArray[np.float64]
    rest_kappa: NDArray[np.float64]
    kappa: NDArray[np.float64]
    mass_second_moment_of_inertia: NDArray[np.float64]
    inv_mass_second_moment_of_inertia: NDArray[np.float64]
    internal_couple: NDArray[np.float64]
    dilatation_rate: NDArray[np.float64]
    internal_torques: NDArray[np.float64]
    ghost_voronoi_idx: NDArray[Any]


_ROD_FIELDS = {
    "position": "position_collection",
    "velocity": "velocity_collection",
    "omega": "omega_collection",
    "director": "director_collection",
    "v_w": "v_w_collection",
    "dvdt_dwdt": "dvdt_dwdt_collection",
    "acceleration": "acceleration_collection",
    "alpha": "alpha_collection",
}


class BodyBlockArrays(NamedTuple):
    """Views of the arrays of PyElastica's ``MemoryBlockRigidBody``."""

    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    omega: NDArray[np.float64]
    director: NDArray[np.float64]
    v_w: NDArray[np.float64]
    dvdt_dwdt: NDArray[np.float64]
    acceleration: NDArray[np.float64]
    alpha: NDArray[np.float64]
    external_forces: NDArray[np.float64]
    external_torques: NDArray[np.float64]
    mass: NDArray[np.float64]
    mass_second_moment_of_inertia: NDArray[np.float64]
    inv_mass_second_moment_of_inertia: NDArray[np.float64]


class CouplingTable(NamedTuple):
    """Parameters and state of the auxetic couplings (one row per coupling)."""

    elem_start: NDArray[np.int64]  # first element of the rod in the block
    vor_start: NDArray[np.int64]  # first Voronoi entry of the rod in the block
    handedness: NDArray[np.float64]
    C_eps: NDArray[np.float64]  # m/rad
    C_eps2: NDArray[np.float64]  # m^2/rad^2, optional quadratic rest-length law (0 = paper)
    eps_min: NDArray[np.float64]
    eps_max: NDArray[np.float64]
    kappa_min: NDArray[np.float64]  # rad/m, clip range of the stiffness law
    kappa_max: NDArray[np.float64]
    area: NDArray[np.float64]  # m^2
    E_slope: NDArray[np.float64]
    G_slope: NDArray[np.float64]
    bend_slope: NDArray[np.float64]
    twist_slope: NDArray[np.float64]
    E_quad: NDArray[np.float64]  # Pa m^2/rad^2, optional quadratic terms (0 = paper's Eq. 5)
    twist_quad: NDArray[np.float64]  # N m^2 m^2/rad^2
    filter_time: NDArray[np.float64]  # s, 0 = off
    printed_lengths: NDArray[np.float64]  # (n, ne)
    printed_voronoi: NDArray[np.float64]  # (n, nv)
    printed_shear: NDArray[np.float64]  # (n, 3, 3, ne)
    printed_bend: NDArray[np.float64]  # (n, 3, 3, nv)
    kappa_vor_raw: NDArray[np.float64]  # (n, nv) state / work
    kappa_vor: NDArray[np.float64]
    kappa_vor_clipped: NDArray[np.float64]
    kappa_elem: NDArray[np.float64]  # (n, ne)
    kappa_elem_clipped: NDArray[np.float64]
    eps: NDArray[np.float64]
    last_time: NDArray[np.float64]
    initialized: NDArray[np.int64]


class JointTable(NamedTuple):
    node: NDArray[np.int64]  # rod node index in the block
    element: NDArray[np.int64]  # rod element index in the block
    body: NDArray[np.int64]  # body index in the rigid-body block
    attachment: NDArray[np.float64]  # (n, 3) m, body frame
    k_F: NDArray[np.float64]
    nu_F: NDArray[np.float64]
    k_tau: NDArray[np.float64]
    nu_tau: NDArray[np.float64]
    rest_orientation: NDArray[np.float64]  # (n, 3, 3), set at the first call
    initialized: NDArray[np.int64]


class MotorTable(NamedTuple):
    node: NDArray[np.int64]
    element: NDArray[np.int64]
    fixed_position: NDArray[np.float64]  # (n, 3)
    reference_director: NDArray[np.float64]  # (n, 3, 3)
    has_rate: NDArray[np.int64]
    work: NDArray[np.float64]  # (3, 3)


class RodDamperTable(NamedTuple):
    node_start: NDArray[np.int64]
    elem_start: NDArray[np.int64]
    translational: NDArray[np.float64]  # (n, n_nodes) factor per step
    rotational: NDArray[np.float64]  # (n, 3, n_elems) factor (per step, ** dilatation if power)
    power: NDArray[np.int64]


class BodyDamperTable(NamedTuple):
    body: NDArray[np.int64]
    translational: NDArray[np.float64]
    rotational: NDArray[np.float64]


class GravityTable(NamedTuple):
    start: NDArray[np.int64]  # first node (rods) / body index
    size: NDArray[np.int64]  # number of nodes / bodies
    acceleration: NDArray[np.float64]  # (n, 3) m/s^2


# --------------------------------------------------------------------------------------------
# numba kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def ramp_table(
    times: NDArray[np.float64],
    start: float,
    target: float,
    duration: float,
    delay: float,
    smooth: bool,
    values: NDArray[np.float64],
    rates: NDArray[np.float64],
) -> None:
    """:class:`~hsa_elastica.actuation.Ramp` value and rate at each of ``times`` [s].

    Same formulas as ``Ramp.__call__`` / ``Ramp.rate`` (linear, or the quintic smoothstep
    ``10 x^3 - 15 x^4 + 6 x^5``; a step when ``duration == 0``), written into
    ``values`` [unit] and ``rates`` [unit/s].
    """
    span = target - start
    for k in range(times.shape[0]):
        t = times[k]
        if duration == 0.0:
            s = 1.0 if t >= delay else 0.0
            ds = 0.0
        else:
            x = (t - delay) / duration
            if x <= 0.0:
                s = 0.0
                ds = 0.0
            elif x >= 1.0:
                s = 1.0
                ds = 0.0
            elif not smooth:
                s = x
                ds = 1.0 / duration
            else:
                s = x * x * x * (10.0 + x * (-15.0 + 6.0 * x))
                ds = 30.0 * x * x * (1.0 - x) * (1.0 - x) / duration
        values[k] = start + span * s
        rates[k] = span * ds


@njit(cache=True)  # type: ignore[misc]
def step_times(
    time: float, dt: float, t_half: NDArray[np.float64], t_full: NDArray[np.float64]
) -> None:
    """Times [s] at which PyElastica's PositionVerlet calls the operators in each step.

    ``t_half[s]`` (after the first half kinematic step: constrain_values, forcing, rates)
    and ``t_full[s]`` (end of the step), accumulated in float64 exactly as
    ``SymplecticStepperMixin.step`` does (``time += 0.5 * dt`` twice per step).
    """
    half = 0.5 * dt
    t = time
    for s in range(t_half.shape[0]):
        t += half
        t_half[s] = t
        t += half
        t_full[s] = t


@njit(cache=True)  # type: ignore[misc]
def _rigid_body_accelerations(body: BodyBlockArrays) -> None:
    """``RigidBodyBase.update_accelerations`` (PyElastica 1.0) for the rigid-body block.

    ``a = F / m`` [m/s^2] and ``alpha = J^-1 ((J omega) x omega + tau)`` [rad/s^2] (body
    frame), with the products summed in ``_batch_matvec`` / ``_batch_cross`` order, without
    temporaries.
    """
    n = body.mass.shape[0]
    for i in range(3):
        for k in range(n):
            body.acceleration[i, k] = body.external_forces[i, k] / body.mass[k]
    J = body.mass_second_moment_of_inertia
    Ji = body.inv_mass_second_moment_of_inertia
    w = body.omega
    tau = body.external_torques
    for k in range(n):
        w0 = w[0, k]
        w1 = w[1, k]
        w2 = w[2, k]
        jw0 = ((0.0 + J[0, 0, k] * w0) + J[0, 1, k] * w1) + J[0, 2, k] * w2
        jw1 = ((0.0 + J[1, 0, k] * w0) + J[1, 1, k] * w1) + J[1, 2, k] * w2
        jw2 = ((0.0 + J[2, 0, k] * w0) + J[2, 1, k] * w1) + J[2, 2, k] * w2
        r0 = (jw1 * w2 - jw2 * w1) + tau[0, k]
        r1 = (jw2 * w0 - jw0 * w2) + tau[1, k]
        r2 = (jw0 * w1 - jw1 * w0) + tau[2, k]
        body.alpha[0, k] = ((0.0 + Ji[0, 0, k] * r0) + Ji[0, 1, k] * r1) + Ji[0, 2, k] * r2
        body.alpha[1, k] = ((0.0 + Ji[1, 0, k] * r0) + Ji[1, 1, k] * r1) + Ji[1, 2, k] * r2
        body.alpha[2, k] = ((0.0 + Ji[2, 0, k] * r0) + Ji[2, 1, k] * r1) + Ji[2, 2, k] * r2


@njit(cache=True)  # type: ignore[misc]
def _apply_coupling(c: CouplingTable, i: int, t: float, rod: RodBlockArrays) -> float:
    """``AuxeticCoupling.apply_forces`` on rod ``i`` of the block; returns the smallest
    stiffness written (the caller checks > 0)."""
    ne = c.printed_lengths.shape[1]
    nv = c.printed_voronoi.shape[1]
    e0 = c.elem_start[i]
    v0 = c.vor_start[i]
    director = rod.director[:, :, e0 : e0 + ne]
    rest_lengths = rod.rest_lengths[e0 : e0 + ne]
    rest_voronoi = rod.rest_voronoi_lengths[v0 : v0 + nv]
    if c.initialized[i] == 0:
        # first application: the twist filter starts from the present strain
        handed_twist_strain(director, c.printed_voronoi[i], c.handedness[i], c.kappa_vor[i])
        c.last_time[i] = t
        c.initialized[i] = 1
    if c.filter_time[i] > 0.0:
        handed_twist_strain(director, c.printed_voronoi[i], c.handedness[i], c.kappa_vor_raw[i])
        dt = max(t - c.last_time[i], 0.0)
        blend = 1.0 - math.exp(-dt / c.filter_time[i])
        low_pass(c.kappa_vor_raw[i], blend, c.kappa_vor[i])
    else:
        handed_twist_strain(director, c.printed_voronoi[i], c.handedness[i], c.kappa_vor[i])
    c.last_time[i] = t
    average_to_elements(c.kappa_vor[i], c.kappa_elem[i])
    auxetic_rest_lengths(
        c.kappa_elem[i],
        c.C_eps[i],
        c.C_eps2[i],
        c.kappa_min[i],
        c.kappa_max[i],
        c.eps_min[i],
        c.eps_max[i],
        c.printed_lengths[i],
        c.eps[i],
        rest_lengths,
        rest_voronoi,
    )
    clip_strain(c.kappa_elem[i], c.kappa_min[i], c.kappa_max[i], c.kappa_elem_clipped[i])
    clip_strain(c.kappa_vor[i], c.kappa_min[i], c.kappa_max[i], c.kappa_vor_clipped[i])
    return twist_dependent_stiffness(  # type: ignore[no-any-return]
        c.kappa_elem_clipped[i],
        c.kappa_vor_clipped[i],
        c.area[i],
        c.E_slope[i],
        c.G_slope[i],
        c.bend_slope[i],
        c.twist_slope[i],
        c.E_quad[i],
        c.twist_quad[i],
        c.printed_shear[i],
        c.printed_bend[i],
        c.printed_voronoi[i],
        rest_voronoi,
        rod.shear_matrix[:, :, e0 : e0 + ne],
        rod.bend_matrix[:, :, v0 : v0 + nv],
    )


@njit(cache=True)  # type: ignore[misc]
def _constrain_values(
    program: NDArray[np.int64], m: MotorTable, angles: NDArray[np.float64], rod: RodBlockArrays
) -> None:
    """``MotorAngleBC.constrain_values``: base node fixed, base element turned by ``phi``."""
    for p in range(program.shape[0]):
        if program[p, 0] != OP_MOTOR:
            continue
        i = program[p, 1]
        rotate_about_own_axis(m.reference_director[i], angles[i], m.work)
        node = m.node[i]
        elem = m.element[i]
        for a in range(3):
            rod.position[a, node] = m.fixed_position[i, a]
        for a in range(3):
            for b in range(3):
                rod.director[a, b, elem] = m.work[a, b]


@njit(cache=True)  # type: ignore[misc]
def _constrain_rates(
    program: NDArray[np.int64],
    m: MotorTable,
    rates: NDArray[np.float64],
    dr: RodDamperTable,
    db: BodyDamperTable,
    rod: RodBlockArrays,
    body: BodyBlockArrays,
) -> None:
    """``MotorAngleBC.constrain_rates`` then the dampers, in PyElastica's order."""
    for p in range(program.shape[0]):
        code = program[p, 0]
        i = program[p, 1]
        if code == OP_MOTOR:
            node = m.node[i]
            elem = m.element[i]
            for a in range(3):
                rod.velocity[a, node] = 0.0
                rod.omega[a, elem] = 0.0
            if m.has_rate[i] != 0:
                rod.omega[2, elem] = rates[i]
        elif code == OP_DAMP_ROD:
            n0 = dr.node_start[i]
            e0 = dr.elem_start[i]
            nn = dr.translational.shape[1]
            ne = dr.rotational.shape[2]
            for a in range(3):
                for k in range(nn):
                    rod.velocity[a, n0 + k] *= dr.translational[i, k]
            if dr.power[i] != 0:
                for a in range(3):
                    for k in range(ne):
                        rod.omega[a, e0 + k] *= dr.rotational[i, a, k] ** rod.dilatation[e0 + k]
            else:
                for a in range(3):
                    for k in range(ne):
                        rod.omega[a, e0 + k] *= dr.rotational[i, a, k]
        elif code == OP_DAMP_BODY:
            b = db.body[i]
            for a in range(3):
                body.velocity[a, b] *= db.translational[i]
            for a in range(3):
                body.omega[a, b] *= db.rotational[i]


# --------------------------------------------------------------------------------------------
# allocation-free rod kernels used inside the fused loop
#
# Same arithmetic, in the same order, as PyElastica 1.0's kernels (named in each docstring),
# but writing into the block's arrays and a per-call workspace instead of allocating a dozen
# temporaries per call.  PyElastica's kernels remain the reference (``Robot.run`` uses them);
# tests/test_fast.py compares each kernel with PyElastica's on random data.
# --------------------------------------------------------------------------------------------
class RodWork(NamedTuple):
    """Scratch arrays of the fused rod kernels (allocated once per :func:`advance` call)."""

    elem3: NDArray[np.float64]  # (3, n_elems)
    elem3b: NDArray[np.float64]  # (3, n_elems)
    vor3: NDArray[np.float64]  # (3, n_voronoi)
    vor3b: NDArray[np.float64]  # (3, n_voronoi)
    vor1: NDArray[np.float64]  # (n_voronoi,)
    rotation: NDArray[np.float64]  # (3, 3, max(n_elems, n_bodies))


@njit(cache=True)  # type: ignore[misc]
def rod_work(n_elems: int, n_bodies: int) -> RodWork:
    """:class:`RodWork` for a rod block of ``n_elems`` elements (ghosts included) and a
    rigid-body block of ``n_bodies`` bodies."""
    nv = max(n_elems - 1, 0)
    return RodWork(
        np.empty((3, n_elems)), np.empty((3, n_elems)), np.empty((3, nv)), np.empty((3, nv)),
        np.empty(nv), np.empty((3, 3, max(n_elems, n_bodies))),
    )


@njit(cache=True)  # type: ignore[misc]
def kinematic_update_inplace(
    prefac: float,
    position: NDArray[np.float64],
    director: NDArray[np.float64],
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    rotation: NDArray[np.float64],
) -> None:
    """PyElastica's ``overload_operator_kinematic_numba`` without temporaries.

    ``x += prefac v`` [m]; ``Q <- R(prefac omega) Q`` with Rodrigues' formula for the rotation
    of angle ``prefac |omega|`` [rad] about ``omega / (|omega| + 1e-14)`` (as
    ``_get_rotation_matrix``), the 3x3 product summed in ``_batch_matmul``'s order.
    ``rotation`` (3, 3, >= n_elems) is scratch space (the loops run along the last, contiguous
    axis so that LLVM vectorises them).
    """
    for i in range(3):
        for k in range(position.shape[1]):
            position[i, k] += prefac * velocity[i, k]
    n = director.shape[2]
    for k in range(n):
        v0 = omega[0, k]
        v1 = omega[1, k]
        v2 = omega[2, k]
        theta = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        v0 /= theta + 1e-14
        v1 /= theta + 1e-14
        v2 /= theta + 1e-14
        theta *= prefac
        u = math.sin(theta)
        w = 1.0 - math.cos(theta)
        rotation[0, 0, k] = 1.0 - w * (v1 * v1 + v2 * v2)
        rotation[1, 1, k] = 1.0 - w * (v0 * v0 + v2 * v2)
        rotation[2, 2, k] = 1.0 - w * (v0 * v0 + v1 * v1)
        rotation[0, 1, k] = u * v2 + w * v0 * v1
        rotation[1, 0, k] = -u * v2 + w * v0 * v1
        rotation[0, 2, k] = -u * v1 + w * v0 * v2
        rotation[2, 0, k] = u * v1 + w * v0 * v2
        rotation[1, 2, k] = u * v0 + w * v1 * v2
        rotation[2, 1, k] = -u * v0 + w * v1 * v2
    for m in range(3):
        for k in range(n):
            d0 = director[0, m, k]
            d1 = director[1, m, k]
            d2 = director[2, m, k]
            director[0, m, k] = (
                (0.0 + rotation[0, 0, k] * d0) + rotation[0, 1, k] * d1
            ) + rotation[0, 2, k] * d2
            director[1, m, k] = (
                (0.0 + rotation[1, 0, k] * d0) + rotation[1, 1, k] * d1
            ) + rotation[1, 2, k] * d2
            director[2, m, k] = (
                (0.0 + rotation[2, 0, k] * d0) + rotation[2, 1, k] * d1
            ) + rotation[2, 2, k] * d2


@njit(cache=True)  # type: ignore[misc]
def _row_dot(director: NDArray[np.float64], i: int, j: int, k: int) -> float:
    """``Q_{k+1}[i, :] . Q_k[j, :]`` summed left to right (``_batch_matmul``'s order)."""
    return (
        director[i, 0, k + 1] * director[j, 0, k]
        + director[i, 1, k + 1] * director[j, 1, k]
        + director[i, 2, k + 1] * director[j, 2, k]
    )


@njit(cache=True)  # type: ignore[misc]
def rotation_log_inplace(director: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """PyElastica's ``_inv_rotate`` written into ``out`` (3, n-1): the rotation vector [rad]
    ``log(Q_{k+1} Q_k^T)`` (axis times angle, with ``theta = arccos((tr - 1) / 2) + 1e-14``
    and the trace clipped to [-1, 3]) between consecutive directors."""
    for k in range(director.shape[2] - 1):
        a0 = _row_dot(director, 2, 1, k) - _row_dot(director, 1, 2, k)
        a1 = _row_dot(director, 0, 2, k) - _row_dot(director, 2, 0, k)
        a2 = _row_dot(director, 1, 0, k) - _row_dot(director, 0, 1, k)
        trace = _row_dot(director, 0, 0, k) + _row_dot(director, 1, 1, k) + _row_dot(director, 2, 2, k)
        trace = min(trace, 3.0)
        trace = max(trace, -1.0)
        theta = math.acos(0.5 * trace - 0.5) + 1e-14
        magnitude = -0.5 * theta / math.sin(theta)
        out[0, k] = a0 * magnitude
        out[1, k] = a1 * magnitude
        out[2, k] = a2 * magnitude


@njit(cache=True)  # type: ignore[misc]
def internal_forces_inplace(rod: RodBlockArrays, work: RodWork) -> None:
    """PyElastica's ``_compute_internal_forces`` (Gazzola et al. 2018, Eq. 3.3-3.4 and the
    shear/stretch force ``Delta(Q^T S (sigma - sigma_0) / e)``) without temporaries.

    Updates ``lengths`` [m], ``tangents``, ``radius`` [m] (volume conserved), ``dilatation``,
    ``voronoi_dilatation``, ``sigma``, ``internal_stress`` [N] and ``internal_forces`` [N].
    """
    x = rod.position
    q = rod.director
    ne = rod.lengths.shape[0]
    for k in range(ne):
        d0 = 0.0 + (x[0, k + 1] - x[0, k])
        d1 = 0.0 + (x[1, k + 1] - x[1, k])
        d2 = 0.0 + (x[2, k + 1] - x[2, k])
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) + 1e-14
        rod.lengths[k] = length
        t0 = d0 / length
        t1 = d1 / length
        t2 = d2 / length
        rod.tangents[0, k] = t0
        rod.tangents[1, k] = t1
        rod.tangents[2, k] = t2
        rod.radius[k] = np.sqrt(rod.volume[k] / length / np.pi)
        e = length / rod.rest_lengths[k]
        rod.dilatation[k] = e
        # sigma = e Q t - d3;  n = S (sigma - sigma_0)
        s0 = e * (((0.0 + q[0, 0, k] * t0) + q[0, 1, k] * t1) + q[0, 2, k] * t2) - 0.0
        s1 = e * (((0.0 + q[1, 0, k] * t0) + q[1, 1, k] * t1) + q[1, 2, k] * t2) - 0.0
        s2 = e * (((0.0 + q[2, 0, k] * t0) + q[2, 1, k] * t1) + q[2, 2, k] * t2) - 1.0
        rod.sigma[0, k] = s0
        rod.sigma[1, k] = s1
        rod.sigma[2, k] = s2
        r0 = s0 - rod.rest_sigma[0, k]
        r1 = s1 - rod.rest_sigma[1, k]
        r2 = s2 - rod.rest_sigma[2, k]
        sm = rod.shear_matrix
        n0 = ((0.0 + sm[0, 0, k] * r0) + sm[0, 1, k] * r1) + sm[0, 2, k] * r2
        n1 = ((0.0 + sm[1, 0, k] * r0) + sm[1, 1, k] * r1) + sm[1, 2, k] * r2
        n2 = ((0.0 + sm[2, 0, k] * r0) + sm[2, 1, k] * r1) + sm[2, 2, k] * r2
        rod.internal_stress[0, k] = n0
        rod.internal_stress[1, k] = n1
        rod.internal_stress[2, k] = n2
        # Q^T n / e
        c = work.elem3
        c[0, k] = (((0.0 + q[0, 0, k] * n0) + q[1, 0, k] * n1) + q[2, 0, k] * n2) / e
        c[1, k] = (((0.0 + q[0, 1, k] * n0) + q[1, 1, k] * n1) + q[2, 1, k] * n2) / e
        c[2, k] = (((0.0 + q[0, 2, k] * n0) + q[1, 2, k] * n1) + q[2, 2, k] * n2) / e
    for k in range(ne - 1):
        rod.voronoi_dilatation[k] = (0.5 * (rod.lengths[k + 1] + rod.lengths[k])) / rod.rest_voronoi_lengths[k]
    _two_point_difference_into(work.elem3, rod.ghost_elems_idx, rod.internal_forces)


@njit(cache=True)  # type: ignore[misc]
def _two_point_difference_into(
    a: NDArray[np.float64], ghost_idx: NDArray[Any], out: NDArray[np.float64]
) -> None:
    """``_two_point_difference_for_block_structure(a, ghost_idx)`` written into ``out``
    (ghost entries of ``a`` are zeroed first, as PyElastica does)."""
    n = a.shape[1]
    for g in range(ghost_idx.shape[0]):
        for i in range(3):
            a[i, ghost_idx[g]] = 0.0
    for i in range(3):
        out[i, 0] = a[i, 0]
        out[i, n] = -a[i, n - 1]
        for k in range(1, n):
            out[i, k] = a[i, k] - a[i, k - 1]


@njit(cache=True)  # type: ignore[misc]
def _trapezoidal_into(
    a: NDArray[np.float64], ghost_idx: NDArray[Any], out: NDArray[np.float64]
) -> None:
    """``_trapezoidal_for_block_structure(a, ghost_idx)`` written into ``out``."""
    n = a.shape[1]
    for g in range(ghost_idx.shape[0]):
        for i in range(3):
            a[i, ghost_idx[g]] = 0.0
    for i in range(3):
        out[i, 0] = 0.5 * a[i, 0]
        out[i, n] = 0.5 * a[i, n - 1]
        for k in range(1, n):
            out[i, k] = 0.5 * (a[i, k] + a[i, k - 1])


@njit(cache=True)  # type: ignore[misc]
def internal_torques_inplace(rod: RodBlockArrays, work: RodWork) -> None:
    """PyElastica's ``_compute_internal_torques`` (Gazzola et al. 2018, Eq. 2.14: bend/twist
    couple ``Delta(B (kappa - kappa_0) / E^3) + A(kappa x tau D / E^3)``, shear couple
    ``(Q t x n) l0``, Lagrangian transport and unsteady dilatation) without temporaries.

    Needs ``lengths``, ``tangents``, ``dilatation``, ``voronoi_dilatation`` and
    ``internal_stress`` from :func:`internal_forces_inplace` (as PyElastica's pair).  Updates
    ``kappa`` [1/m], ``internal_couple`` [N m], ``dilatation_rate`` [1/s] and
    ``internal_torques`` [N m].
    """
    q = rod.director
    x = rod.position
    v = rod.velocity
    nv = rod.rest_voronoi_lengths.shape[0]
    ne = rod.lengths.shape[0]
    rotation_log_inplace(q, work.vor3)
    inv_cube = work.vor1
    a = work.vor3  # becomes the bend/twist couple / E^3
    b = work.vor3b  # kappa x tau * D / E^3
    bm = rod.bend_matrix
    for k in range(nv):
        rv = rod.rest_voronoi_lengths[k]
        k0 = a[0, k] / rv
        k1 = a[1, k] / rv
        k2 = a[2, k] / rv
        rod.kappa[0, k] = k0
        rod.kappa[1, k] = k1
        rod.kappa[2, k] = k2
        r0 = k0 - rod.rest_kappa[0, k]
        r1 = k1 - rod.rest_kappa[1, k]
        r2 = k2 - rod.rest_kappa[2, k]
        c0 = ((0.0 + bm[0, 0, k] * r0) + bm[0, 1, k] * r1) + bm[0, 2, k] * r2
        c1 = ((0.0 + bm[1, 0, k] * r0) + bm[1, 1, k] * r1) + bm[1, 2, k] * r2
        c2 = ((0.0 + bm[2, 0, k] * r0) + bm[2, 1, k] * r1) + bm[2, 2, k] * r2
        rod.internal_couple[0, k] = c0
        rod.internal_couple[1, k] = c1
        rod.internal_couple[2, k] = c2
        ic = 1.0 / rod.voronoi_dilatation[k] ** 3
        inv_cube[k] = ic
        a[0, k] = c0 * ic
        a[1, k] = c1 * ic
        a[2, k] = c2 * ic
        b[0, k] = ((k1 * c2 - k2 * c1) * rv) * ic
        b[1, k] = ((k2 * c0 - k0 * c2) * rv) * ic
        b[2, k] = ((k0 * c1 - k1 * c0) * rv) * ic
    couple_2d = work.elem3
    couple_3d = work.elem3b
    _two_point_difference_into(a, rod.ghost_voronoi_idx, couple_2d)
    _trapezoidal_into(b, rod.ghost_voronoi_idx, couple_3d)
    J = rod.mass_second_moment_of_inertia
    w = rod.omega
    n = rod.internal_stress
    for k in range(ne):
        r_dot_v = ((0.0 + x[0, k] * v[0, k]) + x[1, k] * v[1, k]) + x[2, k] * v[2, k]
        r1_dot_v1 = ((0.0 + x[0, k + 1] * v[0, k + 1]) + x[1, k + 1] * v[1, k + 1]) + x[2, k + 1] * v[2, k + 1]
        r_dot_v1 = ((0.0 + x[0, k] * v[0, k + 1]) + x[1, k] * v[1, k + 1]) + x[2, k] * v[2, k + 1]
        r1_dot_v = ((0.0 + x[0, k + 1] * v[0, k]) + x[1, k + 1] * v[1, k]) + x[2, k + 1] * v[2, k]
        e = rod.dilatation[k]
        e_rate = (r_dot_v + r1_dot_v1 - r_dot_v1 - r1_dot_v) / rod.lengths[k] / rod.rest_lengths[k]
        rod.dilatation_rate[k] = e_rate
        t0 = rod.tangents[0, k]
        t1 = rod.tangents[1, k]
        t2 = rod.tangents[2, k]
        qt0 = ((0.0 + q[0, 0, k] * t0) + q[0, 1, k] * t1) + q[0, 2, k] * t2
        qt1 = ((0.0 + q[1, 0, k] * t0) + q[1, 1, k] * t1) + q[1, 2, k] * t2
        qt2 = ((0.0 + q[2, 0, k] * t0) + q[2, 1, k] * t1) + q[2, 2, k] * t2
        l0 = rod.rest_lengths[k]
        ss0 = (qt1 * n[2, k] - qt2 * n[1, k]) * l0
        ss1 = (qt2 * n[0, k] - qt0 * n[2, k]) * l0
        ss2 = (qt0 * n[1, k] - qt1 * n[0, k]) * l0
        w0 = w[0, k]
        w1 = w[1, k]
        w2 = w[2, k]
        jw0 = (((0.0 + J[0, 0, k] * w0) + J[0, 1, k] * w1) + J[0, 2, k] * w2) / e
        jw1 = (((0.0 + J[1, 0, k] * w0) + J[1, 1, k] * w1) + J[1, 2, k] * w2) / e
        jw2 = (((0.0 + J[2, 0, k] * w0) + J[2, 1, k] * w1) + J[2, 2, k] * w2) / e
        lt0 = jw1 * w2 - jw2 * w1
        lt1 = jw2 * w0 - jw0 * w2
        lt2 = jw0 * w1 - jw1 * w0
        rod.internal_torques[0, k] = couple_2d[0, k] + couple_3d[0, k] + ss0 + lt0 + jw0 * e_rate / e
        rod.internal_torques[1, k] = couple_2d[1, k] + couple_3d[1, k] + ss1 + lt1 + jw1 * e_rate / e
        rod.internal_torques[2, k] = couple_2d[2, k] + couple_3d[2, k] + ss2 + lt2 + jw2 * e_rate / e


@njit(cache=True)  # type: ignore[misc]
def advance(
    n_steps: int,
    dt: float,
    time: float,
    angle_half: NDArray[np.float64],
    angle_full: NDArray[np.float64],
    rate_half: NDArray[np.float64],
    rod: RodBlockArrays,
    body: BodyBlockArrays,
    couplings: CouplingTable,
    joints: JointTable,
    motors: MotorTable,
    rod_dampers: RodDamperTable,
    body_dampers: BodyDamperTable,
    rod_gravity: GravityTable,
    body_gravity: GravityTable,
    sync_program: NDArray[np.int64],
    values_program: NDArray[np.int64],
    rates_program: NDArray[np.int64],
    status: NDArray[np.float64],
) -> float:
    """Advance the robot by ``n_steps`` Position-Verlet steps of ``dt`` [s] from ``time`` [s].

    ``angle_half[s, i]`` / ``angle_full[s, i]`` are motor ``i``'s angle [rad] at the
    mid-step / end-of-step times of step ``s`` (see :func:`step_times`), ``rate_half[s, i]``
    its rate [rad/s] at mid-step.  The programs list the operators in the order PyElastica
    calls them (rows ``(code, index)``).  Returns the new time; ``status[0]`` is set to
    ``STATUS_STIFFNESS`` (with ``status[1]`` = coupling index, ``status[2]`` = smallest
    stiffness, ``status[3]`` = time) and the loop stops when a stiffness law gives a
    non-positive stiffness.
    """
    half = np.float64(0.5 * dt)
    full = np.float64(dt)
    t = time
    work = rod_work(rod.lengths.shape[0], body.mass.shape[0])
    for s in range(n_steps):
        # ---- first half kinematic step --------------------------------------------------
        kinematic_update_inplace(
            half, rod.position, rod.director, rod.velocity, rod.omega, work.rotation
        )
        kinematic_update_inplace(
            half, body.position, body.director, body.velocity, body.omega, work.rotation
        )
        t += half
        _constrain_values(values_program, motors, angle_half[s], rod)
        # ---- auxetic coupling (Eq. 2-5) -----------------------------------------------------
        # AuxeticCoupling.apply_forces rewrites the rest configuration and then recomputes the
        # rod's internal forces; applying it here, before the single internal-force evaluation,
        # gives the same state at half the internal-force cost.
        for p in range(sync_program.shape[0]):
            if sync_program[p, 0] == OP_COUPLING:
                i = sync_program[p, 1]
                smallest = _apply_coupling(couplings, i, t, rod)
                if not smallest > 0.0:
                    status[0] = STATUS_STIFFNESS
                    status[1] = i
                    status[2] = smallest
                    status[3] = t
                    return t
        # ---- internal forces (rods) -------------------------------------------------------
        # allocation-free equivalents of PyElastica's _compute_internal_forces/_torques
        internal_forces_inplace(rod, work)
        internal_torques_inplace(rod, work)
        # ---- synchronize: forcing and connections in FIFO order ---------------------------
        for p in range(sync_program.shape[0]):
            code = sync_program[p, 0]
            i = sync_program[p, 1]
            if code == OP_COUPLING:
                continue  # applied before the internal forces (above)
            elif code == OP_JOINT_FORCE or code == OP_JOINT_TORQUE:
                if joints.initialized[i] == 0:
                    joints.rest_orientation[i] = relative_orientation(
                        body.director, joints.body[i], rod.director, joints.element[i]
                    )
                    joints.initialized[i] = 1
                if code == OP_JOINT_FORCE:
                    joint_force_kernel(
                        rod.position,
                        rod.velocity,
                        rod.external_forces,
                        joints.node[i],
                        body.position,
                        body.velocity,
                        body.director,
                        body.omega,
                        body.external_forces,
                        body.external_torques,
                        joints.body[i],
                        joints.attachment[i],
                        joints.k_F[i],
                        joints.nu_F[i],
                    )
                else:
                    joint_torque_kernel(
                        rod.director,
                        rod.omega,
                        rod.external_torques,
                        joints.element[i],
                        body.director,
                        body.omega,
                        body.external_torques,
                        joints.body[i],
                        joints.rest_orientation[i],
                        joints.k_tau[i],
                        joints.nu_tau[i],
                    )
            elif code == OP_GRAVITY_ROD:
                n0 = rod_gravity.start[i]
                n1 = n0 + rod_gravity.size[i]
                _gravity_kernel(
                    rod_gravity.acceleration[i], rod.mass[n0:n1], rod.external_forces[:, n0:n1]
                )
            elif code == OP_GRAVITY_BODY:
                b0 = body_gravity.start[i]
                b1 = b0 + body_gravity.size[i]
                _gravity_kernel(
                    body_gravity.acceleration[i],
                    body.mass[b0:b1],
                    body.external_forces[:, b0:b1],
                )
        # ---- dynamic step -----------------------------------------------------------------
        _update_accelerations(
            rod.acceleration,
            rod.internal_forces,
            rod.external_forces,
            rod.mass,
            rod.alpha,
            rod.inv_mass_second_moment_of_inertia,
            rod.internal_torques,
            rod.external_torques,
            rod.dilatation,
        )
        overload_operator_dynamic_numba(full, rod.v_w, rod.dvdt_dwdt)
        _rigid_body_accelerations(body)
        overload_operator_dynamic_numba(full, body.v_w, body.dvdt_dwdt)
        _constrain_rates(rates_program, motors, rate_half[s], rod_dampers, body_dampers, rod, body)
        # ---- second half kinematic step ---------------------------------------------------
        kinematic_update_inplace(
            half, rod.position, rod.director, rod.velocity, rod.omega, work.rotation
        )
        kinematic_update_inplace(
            half, body.position, body.director, body.velocity, body.omega, work.rotation
        )
        t += half
        _constrain_values(values_program, motors, angle_full[s], rod)
        # (callbacks: called by the Python driver between calls)
        _zeroed_out_external_forces_and_torques(rod.external_forces, rod.external_torques)
        _zeroed_out_external_forces_and_torques(body.external_forces, body.external_torques)
    return t


# --------------------------------------------------------------------------------------------
# compiling a simulator into tables and programs
# --------------------------------------------------------------------------------------------
def _feature_group(simulator: Any, name: str) -> list[Any]:
    """The bound operators of one of PyElastica 1.0's feature groups, in call order."""
    group = getattr(simulator, name, None)
    if group is None:
        raise FastPathUnsupported(
            f"the simulator has no PyElastica 1.0 feature group {name!r} "
            "(fast path written against pyelastica 1.0)"
        )
    return list(group)


def _bound(op: Any) -> tuple[Any, str, dict[str, Any]]:
    """``functools.partial(instance.method, **kwargs)`` -> (instance, method name, kwargs)."""
    if not isinstance(op, functools.partial) or not hasattr(op.func, "__self__"):
        raise FastPathUnsupported(f"unrecognised operator {op!r}")
    return op.func.__self__, op.func.__name__, dict(op.keywords)


def _offset(view: NDArray[np.float64], block: NDArray[np.float64]) -> int:
    """Index offset along the last axis of ``view`` inside ``block`` (both C-ordered rows)."""
    if not np.shares_memory(view, block):
        raise FastPathUnsupported("a system's arrays are not views into its memory block")
    delta = view.__array_interface__["data"][0] - block.__array_interface__["data"][0]
    offset, rest = divmod(delta, block.strides[-1])
    if rest != 0 or not 0 <= offset < block.shape[-1]:
        raise FastPathUnsupported("unexpected memory-block layout")
    return int(offset)


def _schedule_table(
    schedule: Callable[[float], float],
    rate: Callable[[float], float] | None,
    times: NDArray[np.float64],
    values: NDArray[np.float64],
    rates: NDArray[np.float64],
) -> None:
    """Values [rad] (and rates [rad/s]) of a motor schedule at ``times`` [s]."""
    if isinstance(schedule, Ramp) and (
        rate is None or getattr(rate, "__self__", None) is schedule
    ):
        ramp_table(
            times,
            schedule.start,
            schedule.target,
            schedule.duration,
            schedule.delay,
            schedule.shape == "smooth",
            values,
            rates,
        )
        if rate is None:
            rates[:] = 0.0
        return
    for k, t in enumerate(times):
        values[k] = float(schedule(float(t)))
        rates[k] = float(rate(float(t))) if rate is not None else 0.0


def _gravity_table(rows: list[tuple[int, int, NDArray[np.float64]]]) -> GravityTable:
    """:class:`GravityTable` of ``(start, size, g)`` rows."""
    return GravityTable(
        start=np.array([r[0] for r in rows], dtype=np.int64),
        size=np.array([r[1] for r in rows], dtype=np.int64),
        acceleration=np.array([r[2] for r in rows], dtype=np.float64).reshape(-1, 3),
    )


class FastRobot:
    """A robot built by :func:`hsa_elastica.robot.build_robot`, stepped by :func:`advance`.

    Same interface as :class:`hsa_elastica.robot.Robot` for running and reading results:
    :meth:`run`, :meth:`diagnostics`, :attr:`time`, and every other attribute of the wrapped
    robot (``rods``, ``platform``, ``params``, ``recorders``, ``simulator``, ...) by
    delegation.  ``chunk`` is the largest number of steps per numba call (also the
    divergence-check period unless :meth:`run` gets ``check_every``).
    """

    def __init__(self, robot: "Robot", *, chunk: int = 500) -> None:
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ParameterError(f"FastRobot.chunk = {chunk!r} is invalid: must be an integer >= 1")
        self.robot = robot
        self.chunk = int(chunk)
        self.dt = float(robot.dt)
        if robot.time != 0.0:
            raise FastPathUnsupported(
                "FastRobot needs a fresh robot (time 0): the operators' state is captured "
                "at their first application"
            )
        sim = robot.simulator
        blocks = list(sim.final_systems())
        rod_blocks = [b for b in blocks if hasattr(b, "ghost_elems_idx")]
        body_blocks = [b for b in blocks if not hasattr(b, "ghost_elems_idx")]
        if len(rod_blocks) != 1 or len(body_blocks) != 1 or len(blocks) != 2:
            raise FastPathUnsupported(
                "the fast path needs exactly one rod memory block and one rigid-body block "
                "(straight CosseratRods + Cylinder/Sphere bodies)"
            )
        rb, bb = rod_blocks[0], body_blocks[0]
        if getattr(rb, "ring_rod_flag", False):
            raise FastPathUnsupported("ring rods are not supported by the fast path")
        self._rod_block, self._body_block = rb, bb
        self.rod_arrays = RodBlockArrays(
            **{
                f: getattr(rb, _ROD_FIELDS.get(f, f))
                for f in RodBlockArrays._fields
            }
        )
        self.body_arrays = BodyBlockArrays(
            **{f: getattr(bb, _ROD_FIELDS.get(f, f)) for f in BodyBlockArrays._fields}
        )
        for arr in (*self.rod_arrays, *self.body_arrays):
            if arr.dtype.kind == "f" and arr.dtype != np.float64:
                raise FastPathUnsupported("memory-block arrays must be float64")
        self._compile(sim)
        self._callback_every = self._callback_period(sim)

    # -- compilation ---------------------------------------------------------------------
    def _rod_offsets(self, rod: Any) -> tuple[int, int, int]:
        r = self.rod_arrays
        return (
            _offset(rod.position_collection, r.position),
            _offset(rod.director_collection, r.director),
            _offset(rod.bend_matrix, r.bend_matrix),
        )

    def _body_index(self, body: Any) -> int:
        return _offset(body.position_collection, self.body_arrays.position)

    def _is_rod(self, system: Any) -> bool:
        return hasattr(system, "rest_lengths") and np.shares_memory(
            system.position_collection, self.rod_arrays.position
        )

    def _is_body(self, system: Any) -> bool:
        return not hasattr(system, "rest_lengths") and np.shares_memory(
            system.position_collection, self.body_arrays.position
        )

    def _compile(self, sim: Any) -> None:
        couplings: list[tuple[AuxeticCoupling, Any]] = []
        joints: list[tuple[PlatformJoint, Any, Any, Any, Any]] = []
        # gravity rows: (first node / body index in the block, node / body count, g [m/s^2])
        rod_gravity: list[tuple[int, int, NDArray[np.float64]]] = []
        body_gravity: list[tuple[int, int, NDArray[np.float64]]] = []
        sync: list[tuple[int, int]] = []
        seen: dict[int, int] = {}
        for op in _feature_group(sim, "_feature_group_synchronize"):
            inst, method, kw = _bound(op)
            if isinstance(inst, AuxeticCoupling):
                if getattr(inst, "reciprocal", False):
                    raise FastPathUnsupported(
                        "AuxeticCoupling(reciprocal=True) is not supported by the fast path"
                    )
                if method == "apply_torques":
                    continue  # without the reciprocal couple the coupling applies no torque
                if not self._is_rod(kw["system"]):
                    raise FastPathUnsupported("AuxeticCoupling on a system outside the rod block")
                if inst.eps is not None:
                    raise FastPathUnsupported("AuxeticCoupling was already applied (not fresh)")
                sync.append((OP_COUPLING, len(couplings)))
                couplings.append((inst, kw["system"]))
            elif isinstance(inst, PlatformJoint):
                key = id(inst)
                if key not in seen:
                    if inst.rest_relative_orientation is not None:
                        raise FastPathUnsupported("PlatformJoint was already applied (not fresh)")
                    seen[key] = len(joints)
                    joints.append(
                        (inst, kw["system_one"], kw["index_one"], kw["system_two"], kw["index_two"])
                    )
                code = OP_JOINT_FORCE if method == "apply_forces" else OP_JOINT_TORQUE
                sync.append((code, seen[key]))
            elif isinstance(inst, GravityForces):
                if method == "apply_torques":
                    continue
                system = kw["system"]
                g = np.array(inst.acc_gravity, dtype=np.float64).reshape(3)
                if self._is_rod(system):
                    sync.append((OP_GRAVITY_ROD, len(rod_gravity)))
                    rod_gravity.append(
                        (self._rod_offsets(system)[0], system.position_collection.shape[1], g)
                    )
                elif self._is_body(system):
                    sync.append((OP_GRAVITY_BODY, len(body_gravity)))
                    body_gravity.append((self._body_index(system), 1, g))
                else:
                    raise FastPathUnsupported("GravityForces on an unknown system")
            else:
                raise FastPathUnsupported(
                    f"forcing/connection {type(inst).__name__} is not supported by the fast path"
                )

        motors: list[tuple[MotorAngleBC, Any]] = []
        values: list[tuple[int, int]] = []
        motor_of: dict[int, int] = {}
        for op in _feature_group(sim, "_feature_group_constrain_values"):
            inst, method, kw = _bound(op)
            if not isinstance(inst, MotorAngleBC) or not self._is_rod(kw["system"]):
                raise FastPathUnsupported(
                    f"constraint {type(inst).__name__} is not supported by the fast path"
                )
            motor_of[id(inst)] = len(motors)
            values.append((OP_MOTOR, len(motors)))
            motors.append((inst, kw["system"]))

        rates: list[tuple[int, int]] = []
        for op in _feature_group(sim, "_feature_group_constrain_rates"):
            inst, method, kw = _bound(op)
            if id(inst) not in motor_of:
                raise FastPathUnsupported(
                    f"constraint {type(inst).__name__} is not supported by the fast path"
                )
            rates.append((OP_MOTOR, motor_of[id(inst)]))
        rod_dampers: list[tuple[Any, Any, Any, bool]] = []
        body_dampers: list[tuple[Any, float, float]] = []
        for op in _feature_group(sim, "_feature_group_damping"):
            inst, method, kw = _bound(op)
            system = kw["system"]
            if isinstance(inst, AnalyticalLinearDamper):
                ct = inst._translational_damping_coefficient
                cr = inst._rotational_damping_coefficient
            elif hasattr(inst, "_ct") and hasattr(inst, "_cr"):  # robot._RigidBodyRateDamper
                ct, cr = inst._ct, inst._cr
            else:
                raise FastPathUnsupported(
                    f"damper {type(inst).__name__} is not supported by the fast path"
                )
            if self._is_rod(system):
                rates.append((OP_DAMP_ROD, len(rod_dampers)))
                rod_dampers.append((system, ct, cr, np.ndim(cr) > 0))
            elif self._is_body(system) and np.ndim(ct) == 0 and np.ndim(cr) == 0:
                rates.append((OP_DAMP_BODY, len(body_dampers)))
                body_dampers.append((system, float(ct), float(cr)))
            else:
                raise FastPathUnsupported("damper on an unsupported system")

        # ---- tables ----------------------------------------------------------------------
        self.couplings = self._coupling_table(couplings)
        self.joints = self._joint_table(joints)
        self.motors = self._motor_table(motors)
        self._schedules = [(bc.angle, bc.angle_rate) for bc, _ in motors]
        self.rod_dampers = self._rod_damper_table(rod_dampers)
        self.body_dampers = BodyDamperTable(
            body=np.array([self._body_index(s) for s, _, _ in body_dampers], dtype=np.int64),
            translational=np.array([c for _, c, _ in body_dampers], dtype=np.float64),
            rotational=np.array([c for _, _, c in body_dampers], dtype=np.float64),
        )
        self.rod_gravity = _gravity_table(rod_gravity)
        self.body_gravity = _gravity_table(body_gravity)
        self.sync_program = np.array(sync, dtype=np.int64).reshape(-1, 2)
        self.values_program = np.array(values, dtype=np.int64).reshape(-1, 2)
        self.rates_program = np.array(rates, dtype=np.int64).reshape(-1, 2)
        self._status = np.zeros(4)

    def _coupling_table(self, items: list[tuple[AuxeticCoupling, Any]]) -> CouplingTable:
        n = len(items)
        if n == 0:
            ne = nv = 1
        else:
            sizes = {int(rod.n_elems) for _, rod in items}
            if len(sizes) != 1:
                raise FastPathUnsupported("the fast path needs rods with equal element counts")
            ne = sizes.pop()
            nv = ne - 1
        offsets = [self._rod_offsets(rod) for _, rod in items]

        def col(f: Callable[[AuxeticCoupling], float]) -> NDArray[np.float64]:
            return np.array([f(c) for c, _ in items], dtype=np.float64)

        areas = []
        for c, rod in items:
            if c.area is None:
                areas.append(float(np.mean(np.asarray(rod.volume) / np.asarray(rod.rest_lengths))))
            else:
                areas.append(float(c.area))
        z = lambda *shape: np.zeros((n, *shape))  # noqa: E731
        return CouplingTable(
            elem_start=np.array([o[1] for o in offsets], dtype=np.int64),
            vor_start=np.array([o[2] for o in offsets], dtype=np.int64),
            handedness=col(lambda c: float(c.handedness)),
            C_eps=col(lambda c: c.C_eps),
            C_eps2=col(lambda c: float(getattr(c, "C_eps2", 0.0))),
            eps_min=col(lambda c: c.eps_min),
            eps_max=col(lambda c: c.eps_max),
            kappa_min=col(lambda c: c.kappa_h_min),
            kappa_max=col(lambda c: c.kappa_h_max),
            area=np.array(areas, dtype=np.float64),
            E_slope=col(lambda c: c.stiffness.E_slope),
            G_slope=col(lambda c: c.stiffness.G_slope),
            bend_slope=col(lambda c: c.stiffness.bend_rigidity_slope),
            twist_slope=col(lambda c: c.stiffness.twist_rigidity_slope),
            E_quad=col(lambda c: c.stiffness.E_quad),
            twist_quad=col(lambda c: c.stiffness.twist_rigidity_quad),
            filter_time=col(lambda c: float(getattr(c, "twist_filter_time", 0.0))),
            printed_lengths=np.array([np.array(r.rest_lengths) for _, r in items]).reshape(n, ne),
            printed_voronoi=np.array([np.array(r.rest_voronoi_lengths) for _, r in items]).reshape(n, nv),
            printed_shear=np.array([np.array(r.shear_matrix) for _, r in items]).reshape(n, 3, 3, ne),
            printed_bend=np.array([np.array(r.bend_matrix) for _, r in items]).reshape(n, 3, 3, nv),
            kappa_vor_raw=z(nv),
            kappa_vor=z(nv),
            kappa_vor_clipped=z(nv),
            kappa_elem=z(ne),
            kappa_elem_clipped=z(ne),
            eps=z(ne),
            last_time=np.zeros(n),
            initialized=np.zeros(n, dtype=np.int64),
        )

    def _joint_table(self, items: list[tuple[PlatformJoint, Any, Any, Any, Any]]) -> JointTable:
        nodes, elems, bodies = [], [], []
        for joint, one, idx_one, two, idx_two in items:
            if not self._is_rod(one) or not self._is_body(two):
                raise FastPathUnsupported("PlatformJoint must connect a rod (first) to a body")
            node, elem, body = resolve_joint_indices(one, idx_one, two, idx_two)
            n0, e0, _ = self._rod_offsets(one)
            nodes.append(n0 + node)
            elems.append(e0 + elem)
            bodies.append(self._body_index(two) + body)
        n = len(items)
        return JointTable(
            node=np.array(nodes, dtype=np.int64),
            element=np.array(elems, dtype=np.int64),
            body=np.array(bodies, dtype=np.int64),
            attachment=np.array([j.attachment_point for j, *_ in items], dtype=np.float64).reshape(n, 3),
            k_F=np.array([j.k_F for j, *_ in items], dtype=np.float64),
            nu_F=np.array([j.nu_F for j, *_ in items], dtype=np.float64),
            k_tau=np.array([j.k_tau for j, *_ in items], dtype=np.float64),
            nu_tau=np.array([j.nu_tau for j, *_ in items], dtype=np.float64),
            rest_orientation=np.zeros((n, 3, 3)),
            initialized=np.zeros(n, dtype=np.int64),
        )

    def _motor_table(self, items: list[tuple[MotorAngleBC, Any]]) -> MotorTable:
        nodes, elems = [], []
        for bc, rod in items:
            n0, e0, _ = self._rod_offsets(rod)
            pos_idx = int(np.asarray(bc.constrained_position_idx).reshape(-1)[0])
            dir_idx = int(np.asarray(bc.constrained_director_idx).reshape(-1)[0])
            nodes.append(n0 + pos_idx % rod.position_collection.shape[1])
            elems.append(e0 + dir_idx % rod.director_collection.shape[2])
        n = len(items)
        return MotorTable(
            node=np.array(nodes, dtype=np.int64),
            element=np.array(elems, dtype=np.int64),
            fixed_position=np.array([bc.fixed_position for bc, _ in items], dtype=np.float64).reshape(n, 3),
            reference_director=np.array(
                [bc.reference_director for bc, _ in items], dtype=np.float64
            ).reshape(n, 3, 3),
            has_rate=np.array([bc.angle_rate is not None for bc, _ in items], dtype=np.int64),
            work=np.zeros((3, 3)),
        )

    def _rod_damper_table(self, items: list[tuple[Any, Any, Any, bool]]) -> RodDamperTable:
        n = len(items)
        if n == 0:
            return RodDamperTable(
                node_start=np.zeros(0, dtype=np.int64),
                elem_start=np.zeros(0, dtype=np.int64),
                translational=np.zeros((0, 1)),
                rotational=np.zeros((0, 3, 1)),
                power=np.zeros(0, dtype=np.int64),
            )
        nn = {rod.position_collection.shape[1] for rod, *_ in items}
        if len(nn) != 1:
            raise FastPathUnsupported("the fast path needs rods with equal element counts")
        n_nodes = nn.pop()
        n_elems = n_nodes - 1
        trans = np.empty((n, n_nodes))
        rot = np.empty((n, 3, n_elems))
        starts_n, starts_e = [], []
        for k, (rod, ct, cr, _) in enumerate(items):
            n0, e0, _ = self._rod_offsets(rod)
            starts_n.append(n0)
            starts_e.append(e0)
            trans[k] = np.broadcast_to(np.asarray(ct, dtype=np.float64), (n_nodes,))
            rot[k] = np.broadcast_to(np.asarray(cr, dtype=np.float64), (3, n_elems))
        return RodDamperTable(
            node_start=np.array(starts_n, dtype=np.int64),
            elem_start=np.array(starts_e, dtype=np.int64),
            translational=trans,
            rotational=rot,
            power=np.array([p for *_, p in items], dtype=np.int64),
        )

    def _callback_period(self, sim: Any) -> int:
        """Steps between callback calls: the gcd of the recorders' ``every`` (1 if unknown)."""
        period = 0
        for op in _feature_group(sim, "_feature_group_callback"):
            inst = getattr(op, "func", None)
            inst = getattr(inst, "__self__", None)
            target = getattr(inst, "target", inst)
            every = getattr(target, "every", None)
            if not isinstance(every, (int, np.integer)) or every < 1:
                return 1
            period = math.gcd(period, int(every))
        return period  # 0: no callbacks

    # -- running -------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Simulated time [s] reached."""
        return float(self.robot.time)

    @time.setter
    def time(self, value: float) -> None:
        self.robot.time = float(value)

    def _advance(self, n: int, t: float) -> float:
        m = len(self._schedules)
        t_half = np.empty(n)
        t_full = np.empty(n)
        step_times(t, self.dt, t_half, t_full)
        a_half = np.empty((n, m))
        a_full = np.empty((n, m))
        r_half = np.empty((n, m))
        scratch = np.empty(n)
        for i, (angle, rate) in enumerate(self._schedules):
            values = np.empty(n)
            _schedule_table(angle, rate, t_half, values, scratch)
            a_half[:, i] = values
            r_half[:, i] = scratch
            _schedule_table(angle, None, t_full, values, scratch)
            a_full[:, i] = values
        self._status[:] = 0.0
        t_new = advance(
            n,
            self.dt,
            t,
            a_half,
            a_full,
            r_half,
            self.rod_arrays,
            self.body_arrays,
            self.couplings,
            self.joints,
            self.motors,
            self.rod_dampers,
            self.body_dampers,
            self.rod_gravity,
            self.body_gravity,
            self.sync_program,
            self.values_program,
            self.rates_program,
            self._status,
        )
        if self._status[0] == STATUS_STIFFNESS:
            i = int(self._status[1])
            raise FloatingPointError(
                f"AuxeticCoupling.stiffness of coupling {i} gave a non-positive stiffness "
                f"({self._status[2]:.6g}) at t = {self._status[3]:.6g} s"
            )
        return float(t_new)

    def run(
        self,
        duration: float,
        *,
        check_every: int | None = None,
        systems_names: Sequence[str] | None = None,
        progress: bool = False,
        max_speed: float | None = None,
        max_stretch: float | None = None,
    ) -> float:
        """Advance by ``duration`` [s] from :attr:`time`; returns the new simulated time [s].

        ``ceil(duration / dt)`` steps (as :func:`hsa_elastica.simulation.run`), callbacks at
        their sampling steps, a non-finite check every ``check_every`` steps (default
        ``chunk``) raising :class:`hsa_elastica.simulation.SimulationDiverged` on a blow-up
        (non-finite state, speed above ``max_speed`` [m/s], rod longer than ``max_stretch``
        times its rest length; defaults and meaning as :func:`hsa_elastica.simulation.run`).
        ``progress`` is accepted for interface compatibility and ignored.
        """
        from hsa_elastica.simulation import (
            DEFAULT_MAX_SPEED,
            DEFAULT_MAX_STRETCH,
            SimulationDiverged,
            find_runaway,
        )
        from hsa_elastica.simulation import _bound as _checked_bound  # not this module's _bound

        v_max = _checked_bound("max_speed", DEFAULT_MAX_SPEED if max_speed is None else max_speed, "m/s")
        stretch = _checked_bound(
            "max_stretch",
            DEFAULT_MAX_STRETCH if max_stretch is None else max_stretch,
            "dimensionless ratio",
        )

        duration = float(duration)
        if not (math.isfinite(duration) and duration >= 0.0):
            raise ParameterError(
                f"run(): duration = {duration!r} is invalid: must be a finite number >= 0 (s)"
            )
        if check_every is not None and (
            isinstance(check_every, bool) or not isinstance(check_every, (int, np.integer)) or check_every < 1
        ):
            raise ParameterError(
                f"run(): check_every = {check_every!r} is invalid: must be an integer >= 1 (steps)"
            )
        limit = self.chunk if check_every is None else int(check_every)
        dt = self.dt
        n_steps = int(math.ceil(duration / dt * (1.0 - 1e-9)))
        t = self.time
        last_good = t
        done = 0
        cb = self._callback_every
        sim = self.robot.simulator
        names = list(systems_names) if systems_names is not None else (
            [f"rod{i}" for i in range(len(self.robot.rods))] + ["platform"]
        )
        systems: list[Any] = [*self.robot.rods, self.robot.platform]
        while done < n_steps:
            n = min(limit, n_steps - done)
            step_now = int(round(t / dt))
            if cb > 0:
                to_callback = cb - (step_now % cb)
                n = min(n, to_callback)
            t = self._advance(n, t)
            done += n
            self.time = t
            if cb > 0:
                step = round(np.float64(t) / np.float64(dt))
                if step % cb == 0:
                    sim.apply_callbacks(np.float64(t), step)
            bad = find_runaway(systems, max_speed=v_max, max_stretch=stretch)
            if bad is not None:
                k = bad[0]
                name = names[k] if k < len(names) else f"system {k}"
                raise SimulationDiverged(t, name, last_good, bad[1])
            last_good = t
        return self.time

    def diagnostics(self) -> "pd.DataFrame":
        """Recorded samples, as :meth:`hsa_elastica.robot.Robot.diagnostics`."""
        return self.robot.diagnostics()

    def __getattr__(self, name: str) -> Any:
        # delegate rods, platform, params, recorders, simulator, ... to the wrapped Robot
        if name == "robot":
            raise AttributeError(name)
        return getattr(self.robot, name)


def build_fast_robot(
    robot_params: RobotParams,
    motor_angles: Sequence[float],
    *,
    ramp: float | Callable[[float], float] | None = None,
    record: bool = True,
    chunk: int = 500,
) -> FastRobot:
    """:func:`hsa_elastica.robot.build_robot` stepped by the fused loop (same arguments)."""
    from hsa_elastica.robot import build_robot

    robot = build_robot(robot_params, motor_angles, ramp=ramp, record=record, finalize=True)
    return FastRobot(robot, chunk=chunk)
