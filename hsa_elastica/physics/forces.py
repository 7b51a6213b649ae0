"""One force evaluation of a compiled HSA model: every law, once, in PyElastica's order.

:func:`evaluate_forces` is the single place where the model's forces are summed for the
compiled engines -- the fused stepper (:mod:`hsa_elastica.engines.fused`) calls it once per
step and the static solver calls it for its residual.  It applies, in the order PyElastica 1.0
calls the operators of an :class:`~hsa_elastica.robots.builders.HSASimulator`:

1. the motor-angle boundary conditions (Section II-D; :func:`constrain_values`,
   kernel :func:`~hsa_elastica.physics.actuation.rotate_about_own_axis`) and the rod-end
   constraints of the single-rod experiments (fixed end, distal twist lock, free-twist base;
   :func:`constrain_end`);
2. the auxetic rest configuration (Eq. 2-5; :func:`apply_couplings`: the sequence of
   :func:`~hsa_elastica.physics.auxetic_law.auxetic_update` on each row's records,
   :func:`~hsa_elastica.physics.auxetic_law.update_of_rows`);
3. the rods' internal forces and torques (:mod:`hsa_elastica.physics.rod_kernels`);
4. the forcings and connections in FIFO order: platform joints (Eq. 6-7, kernels of
   :mod:`hsa_elastica.physics.joints`), gravity (PyElastica's kernel), point forces and base
   torques (:func:`apply_load`), the compression-softening axial law
   (:func:`apply_compression`) and the contacts with obstacles, free objects and other rods
   (:func:`~hsa_elastica.physics.contact_rows.apply_contact_run`: a run of consecutive
   contact rows in one call).

External forces and torques are *added* (the caller zeroes them, as PyElastica does at the end
of a step).  :func:`constrain_rates` is the velocity half of the boundary conditions and the
dampers (linear velocity damping and the Kelvin-Voigt material damping,
:func:`~hsa_elastica.physics.material_damping.kelvin_voigt_damp`).  The operator classes (``AuxeticCoupling``, ``MotorAngleBC``, ``PlatformJoint``) call the
same kernels on single systems.

Inside :func:`evaluate_forces`: the rotation vectors ``log(Q_{k+1} Q_k^T)`` of the whole rod
block are computed once (the coupling's twist strain, Eq. 4, and the internal torques' curvature
both read them); the auxetic couplings run before the single internal-force evaluation (the
operator rewrites the rest configuration and recomputes the internal forces: the same state at
half the cost); then PyElastica's ``synchronize``, forcings and connections in FIFO order.  That
loop, its joint rows included, is written in the function, not in helpers: a numba call passes
every array of its records as a separate argument, and an inlined one copies the records (one
reference count per array); either cost 1-1.6 us per step
(``benchmarks/profile_fused_kernels.py``; a helper per joint row measured 3-8 % slower steps of
the paper robot).  For the same reason the tables arrive as the few records the steps take, not
as one :class:`~hsa_elastica.physics.tables.ModelTables` (~1 us per step).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.external_forces import GravityForces

from hsa_elastica.physics.actuation import free_twist_director, remove_twist, rotate_about_own_axis
from hsa_elastica.physics.auxetic_law import (
    handed_twist_from_rotation,
    reciprocal_twist_couple,
    rest_length_row,
    stiffness_row,
    twist_row,
    update_of_rows,
)
from hsa_elastica.physics.compiled_laws import apply_laws
from hsa_elastica.physics.compression_law import compression_law_forces, compression_row
from hsa_elastica.physics.contact_rows import apply_contact, apply_contact_run
from hsa_elastica.physics.joints import joint_force_kernel, joint_torque_kernel
from hsa_elastica.physics.mount_kernels import (
    SystemView,
    block_view,
    motor_torque_kernel,
    relative_orientation,
)
from hsa_elastica.physics.mounts import free_twist_rest_orientation, mount_rest_orientation
from hsa_elastica.physics.material_damping import kelvin_voigt_damp
from hsa_elastica.physics.rigid_mounts import mount_rates, mount_reaction, mount_values
from hsa_elastica.physics.variational_rod import ElasticState, variational_correction
from hsa_elastica.physics.rod_kernels import (
    RodWork,
    internal_forces_inplace,
    internal_torques_inplace,
    rotation_log_inplace,
)
from hsa_elastica.physics.tables import (
    END_FIXED, END_TWIST_LOCK, OP_COMPRESSION, OP_CONTACT, OP_COUPLING, OP_COUPLING_TORQUE, OP_DAMP_BODY,
    OP_DAMP_ROD, OP_END, OP_GRAVITY_BODY, OP_GRAVITY_ROD, OP_JOINT_FORCE, OP_JOINT_TORQUE,
    OP_LOAD, OP_MATERIAL_DAMPING, OP_MOTOR, OP_MOUNT_REACTION, STATUS_STIFFNESS,
    BodyBlockArrays, BodyDamperTable, CompressionTable, CouplingTable, EndTable,
    ForcingTables, GravityTable, LoadTable, JointTable, MaterialDampingTable, MotorTable,
    RodBlockArrays, RodDamperTable,
)

__all__ = [
    "evaluate_forces",
    "apply_couplings",
    "initialize_couplings",
    "apply_reciprocal_couple",
    "apply_material_damping",
    "constrain_values",
    "constrain_rates",
    "constrain_end",
    "apply_load",
    "apply_compression",
    "apply_contact",
    "apply_gravity",
]

#: PyElastica's gravity kernel (a staticmethod: bound to a module name so numba can call it)
_gravity_kernel = GravityForces.compute_gravity_forces


@njit(cache=True)  # type: ignore[misc]
def initialize_couplings(
    program: NDArray[np.int64], c: CouplingTable, t: float, rotation: NDArray[np.float64]
) -> None:
    """First application of the couplings of ``program`` not applied yet: the twist filter
    starts from the present strain (Eq. 4 from ``rotation``, see :func:`apply_couplings`) at
    time ``t`` [s].  Kept out of :func:`apply_couplings`: a cold branch there costs ~0.3 us per
    call in numba's generated code."""
    nv = c.printed_voronoi.shape[1]
    for p in range(program.shape[0]):
        if program[p, 0] != OP_COUPLING:
            continue
        i = program[p, 1]
        if c.initialized[i] == 0:
            v0 = c.vor_start[i]
            handed_twist_from_rotation(
                rotation[:, v0 : v0 + nv], c.printed_voronoi[i], c.handedness[i], c.kappa_vor[i]
            )
            c.last_time[i] = t
            c.initialized[i] = 1


@njit(cache=True)  # type: ignore[misc]
def apply_couplings(
    program: NDArray[np.int64], c: CouplingTable, t: float, rod: RodBlockArrays,
    rotation: NDArray[np.float64], status: NDArray[np.float64],
) -> bool:
    """``AuxeticCoupling.apply_forces`` on every coupling row of ``program`` in its order, in
    one call, at time ``t`` [s]: :func:`~hsa_elastica.physics.auxetic_law.update_of_rows` on
    the row's rod slice of the block, ``rotation`` (3, Voronoi entries of the block) holding
    ``log(Q_{k+1} Q_k^T)`` [rad] of the present directors
    (:func:`~hsa_elastica.physics.rod_kernels.rotation_log_inplace`); the couplings must have
    been initialised (:func:`initialize_couplings`).  The row's records are read here, in the
    loop, and the table passed once per evaluation, not once per coupling (a kernel given a
    record reference-counts its arrays; :class:`~hsa_elastica.physics.tables.TwistRow`).
    Returns False at the first non-positive stiffness, with ``status`` =
    (``STATUS_STIFFNESS``, the coupling, the smallest stiffness, ``t``)."""
    ne = c.printed_lengths.shape[1]
    nv = c.printed_voronoi.shape[1]
    for p in range(program.shape[0]):
        if program[p, 0] != OP_COUPLING:
            continue
        i = program[p, 1]
        e0 = c.elem_start[i]
        v0 = c.vor_start[i]
        filter_time = c.filter_time[i]
        last = c.last_time[i]
        c.last_time[i] = t  # before the rows: the creep and the play read this evaluation's time
        twist, rest, stiffness = twist_row(c, i), rest_length_row(c, i), stiffness_row(c, i)
        blend = -1.0
        if filter_time > 0.0:
            blend = 1.0 - math.exp(-max(t - last, 0.0) / filter_time)
        smallest = update_of_rows(
            rotation[:, v0 : v0 + nv], twist, rest, stiffness, blend,
            rod.rest_lengths[e0 : e0 + ne], rod.rest_voronoi_lengths[v0 : v0 + nv],
            rod.shear_matrix[:, :, e0 : e0 + ne], rod.bend_matrix[:, :, v0 : v0 + nv],
        )
        if not smallest > 0.0:
            status[0] = STATUS_STIFFNESS
            status[1] = i
            status[2] = smallest
            status[3] = t
            return False
    return True


@njit(cache=True)  # type: ignore[misc]
def apply_reciprocal_couple(c: CouplingTable, i: int, rod: RodBlockArrays) -> None:
    """``AuxeticCoupling.apply_torques`` of the passive model (``reciprocal=True``) on coupling
    ``i``: the twist couple conjugate to the rest-length law
    (:func:`~hsa_elastica.physics.auxetic_law.reciprocal_twist_couple`) and the exact-gradient
    rod forces (:func:`~hsa_elastica.physics.variational_rod.variational_correction`), from this
    step's strains and stresses, added to the rod's external forces [N] and torques [N m]."""
    ne = c.printed_lengths.shape[1]
    nv = c.printed_voronoi.shape[1]
    e0 = c.elem_start[i]
    v0 = c.vor_start[i]
    n0 = c.node_start[i]
    reciprocal_twist_couple(
        rod.sigma[:, e0 : e0 + ne], rod.dilatation[e0 : e0 + ne], rod.kappa[:, v0 : v0 + nv],
        rod.shear_matrix[:, :, e0 : e0 + ne], rod.bend_matrix[:, :, v0 : v0 + nv], c, i,
    )
    variational_correction(
        ElasticState(
            rod.director[:, :, e0 : e0 + ne], rod.rest_lengths[e0 : e0 + ne],
            rod.rest_voronoi_lengths[v0 : v0 + nv], rod.shear_matrix[:, :, e0 : e0 + ne],
            rod.bend_matrix[:, :, v0 : v0 + nv], rod.sigma[:, e0 : e0 + ne],
            rod.dilatation[e0 : e0 + ne], rod.voronoi_dilatation[v0 : v0 + nv],
            rod.kappa[:, v0 : v0 + nv], rod.internal_stress[:, e0 : e0 + ne],
        ),
        c.couple[i], rod.external_forces[:, n0 : n0 + ne + 1],
        rod.external_torques[:, e0 : e0 + ne], c.work[i],
    )


@njit(cache=True, error_model="numpy")  # type: ignore[misc]
def apply_material_damping(m: MaterialDampingTable, i: int, rod: RodBlockArrays) -> None:
    """``KelvinVoigtDamping.dampen_rates`` on row ``i`` of the table (its rod's block slice)."""
    kelvin_voigt_damp(rod, m, i)


@njit(cache=True)  # type: ignore[misc]
def constrain_end(e: EndTable, i: int, rod: RodBlockArrays) -> None:
    """``constrain_values`` of row ``i`` of the rod-end table: ``FixedConstraint`` (node and
    element held), ``DistalTwistLockBC`` (kernel :func:`remove_twist`) or ``FreeTwistBC``
    (kernel :func:`free_twist_director`)."""
    kind = e.kind[i]
    node = e.node[i]
    elem = e.element[i]
    if node >= 0 and kind != END_TWIST_LOCK:
        for a in range(3):
            rod.position[a, node] = e.position[i, a]
    if elem < 0:
        return
    if kind == END_FIXED:
        for a in range(3):
            for b in range(3):
                rod.director[a, b, elem] = e.director[i, a, b]
        return
    current = rod.director[:, :, elem].copy()
    if kind == END_TWIST_LOCK:
        remove_twist(e.director[i], current, e.work)
    else:
        free_twist_director(e.director[i], current, e.work)
    for a in range(3):
        for b in range(3):
            rod.director[a, b, elem] = e.work[a, b]


@njit(cache=True)  # type: ignore[misc]
def _end_rates(e: EndTable, i: int, rod: RodBlockArrays) -> None:
    """``constrain_rates`` of row ``i`` of the rod-end table."""
    kind = e.kind[i]
    node = e.node[i]
    elem = e.element[i]
    if node >= 0 and kind != END_TWIST_LOCK:
        for a in range(3):
            rod.velocity[a, node] = 0.0
    if elem < 0:
        return
    if kind == END_FIXED:
        for a in range(3):
            rod.omega[a, elem] = 0.0
    elif kind == END_TWIST_LOCK:
        rod.omega[2, elem] = 0.0
    else:
        rod.omega[0, elem] = 0.0
        rod.omega[1, elem] = 0.0


@njit(cache=True)  # type: ignore[misc]
def apply_load(loads: LoadTable, i: int, t: float, rod: RodBlockArrays) -> None:
    """Row ``i`` of the load table at time ``t`` [s]: ``EndpointForces`` (force [N] on a node,
    ramped ``min(1, t / ramp)``) and ``BaseTwistTorque`` (torque [N m] about local z)."""
    factor = 1.0
    if loads.ramp[i] > 0.0:
        factor = min(1.0, t / loads.ramp[i])
    node = loads.node[i]
    if node >= 0:
        for a in range(3):
            rod.external_forces[a, node] += loads.force[i, a] * factor
    elem = loads.element[i]
    if elem >= 0:
        rod.external_torques[2, elem] += loads.torque[i] * factor


@njit(cache=True)  # type: ignore[misc]
def apply_compression(c: CompressionTable, i: int, rod: RodBlockArrays) -> None:
    """``AxialCompressionLaw.apply_forces`` on row ``i`` (kernel
    :func:`~hsa_elastica.physics.compression_law.compression_law_forces`)."""
    ne = c.n_elems[i]
    n0 = c.node_start[i]
    e0 = c.elem_start[i]
    e1 = e0 + ne
    compression_law_forces(
        rod.director[:, :, e0:e1], rod.sigma[:, e0:e1], rod.rest_sigma[:, e0:e1],
        rod.internal_stress[:, e0:e1], rod.dilatation[e0:e1],
        rod.external_forces[:, n0 : n0 + ne + 1], compression_row(c, i), c.work[i],
    )


@njit(cache=True)  # type: ignore[misc]
def constrain_values(
    program: NDArray[np.int64], m: MotorTable, angles: NDArray[np.float64], rod: RodBlockArrays,
    ends: EndTable, body: BodyBlockArrays,
) -> None:
    """``MotorAngleBC.constrain_values`` (base node fixed, base element turned by ``phi``),
    the rigid motor mounts' (``MotorMountBC`` / ``TwistMountBC``: the same relative to a body,
    kernel :func:`~hsa_elastica.physics.rigid_mounts.mount_values`) and the rod-end
    constraints (:func:`constrain_end`), in the program's order."""
    for p in range(program.shape[0]):
        if program[p, 0] == OP_END:
            constrain_end(ends, program[p, 1], rod)
            continue
        if program[p, 0] != OP_MOTOR:
            continue
        i = program[p, 1]
        node = m.node[i]
        elem = m.element[i]
        if m.body[i] >= 0:
            mount_values(
                block_view(body), m.body[i], m.offset[i], m.reference_director[i], angles[i],
                m.free_twist[i] != 0, block_view(rod), node, elem, m.mount_work,
            )
            continue
        rotate_about_own_axis(m.reference_director[i], angles[i], m.work)
        for a in range(3):
            rod.position[a, node] = m.fixed_position[i, a]
        for a in range(3):
            for b in range(3):
                rod.director[a, b, elem] = m.work[a, b]


@njit(cache=True)  # type: ignore[misc]
def constrain_rates(
    program: NDArray[np.int64],
    m: MotorTable,
    rates: NDArray[np.float64],
    dr: RodDamperTable,
    db: BodyDamperTable,
    material: MaterialDampingTable,
    rod: RodBlockArrays,
    body: BodyBlockArrays,
    ends: EndTable,
) -> None:
    """``MotorAngleBC.constrain_rates``, the rod-end constraints' rates, then the dampers, in
    PyElastica's order."""
    for p in range(program.shape[0]):
        code = program[p, 0]
        i = program[p, 1]
        if code == OP_END:
            _end_rates(ends, i, rod)
        elif code == OP_MOTOR:
            node = m.node[i]
            elem = m.element[i]
            if m.body[i] >= 0:
                mount_rates(
                    block_view(body), m.body[i], m.offset[i],
                    rates[i] if m.has_rate[i] != 0 else 0.0, m.free_twist[i] != 0,
                    block_view(rod), node, elem,
                )
                continue
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
        elif code == OP_MATERIAL_DAMPING:
            apply_material_damping(material, i, rod)
        elif code == OP_DAMP_BODY:
            b = db.body[i]
            for a in range(3):
                body.velocity[a, b] *= db.translational[i]
            for a in range(3):
                body.omega[a, b] *= db.rotational[i]


@njit(cache=True)  # type: ignore[misc]
def _turn_mount(joints: JointTable, i: int, angles: NDArray[np.float64]) -> None:
    """``MotorMount.apply_torques``' rest orientation: joint row ``i`` turned by its motor's
    angle (``angles[joints.angle_col[i]]``, rad; kernel :func:`mount_rest_orientation`)."""
    mount_rest_orientation(
        joints.base_orientation[i], angles[joints.angle_col[i]], joints.rest_orientation[i]
    )


@njit(cache=True)  # type: ignore[misc]
def _free_twist_mount(
    joints: JointTable, i: int, rod: SystemView, body: SystemView
) -> None:
    """``TwistMount.apply_torques``' rest orientation: joint row ``i`` following the present
    twist of its rod element (kernel :func:`free_twist_rest_orientation`)."""
    free_twist_rest_orientation(
        joints.base_orientation[i], body.director, joints.body[i], rod.director,
        joints.element[i], joints.rest_orientation[i],
    )


@njit(cache=True)  # type: ignore[misc]
def _init_joint(
    joints: JointTable, i: int, rod_director: NDArray[np.float64],
    body_director: NDArray[np.float64],
) -> None:
    """First call of joint row ``i``: its rest orientation (and a motor mount's base
    orientation) from the present directors."""
    joints.rest_orientation[i] = relative_orientation(
        body_director, joints.body[i], rod_director, joints.element[i]
    )
    joints.initialized[i] = 1
    joints.base_orientation[i] = joints.rest_orientation[i]


@njit(cache=True)  # type: ignore[misc]
def apply_gravity(
    g: GravityTable, i: int, mass: NDArray[np.float64], external_forces: NDArray[np.float64]
) -> None:
    """``GravityForces.apply_forces`` of row ``i`` (rod nodes or rigid bodies ``start ..
    start + size`` of the block whose ``mass`` [kg] and ``external_forces`` [N] are given)."""
    n0 = g.start[i]
    n1 = n0 + g.size[i]
    _gravity_kernel(g.acceleration[i], mass[n0:n1], external_forces[:, n0:n1])


@njit(cache=True)  # type: ignore[misc]
def evaluate_forces(
    t: float, angles: NDArray[np.float64], rod: RodBlockArrays, body: BodyBlockArrays,
    couplings: CouplingTable, joints: JointTable, motors: MotorTable, ends: EndTable,
    forcings: ForcingTables, programs: tuple[NDArray[np.int64], NDArray[np.int64]],
    work: RodWork, status: NDArray[np.float64],
) -> bool:
    """All forces and torques of the model at time ``t`` [s] with motor angles ``angles`` [rad].

    ``angles`` holds the :class:`MotorAngleBC` rows of ``motors`` first, then the motor mounts (joint rows with
    ``angle_col >= 0``, :class:`~hsa_elastica.physics.mounts.MotorMount`: the Eq. 7 rest orientation turned by the
    motor angle; with ``free_twist`` set, :class:`~hsa_elastica.physics.mounts.TwistMount`: the entry is the motor
    torque [N m]).  ``programs`` = ``(sync_program, values_program)`` of the model.

    Imposes the motor angles (positions and directors of the rod bases), writes the auxetic rest configuration,
    computes the rods' ``internal_forces`` [N] / ``internal_torques`` [N m] and *adds* the joints', gravity's, the
    contacts' and the registered compiled laws' (``forcings.laws``) contributions to ``external_forces`` /
    ``external_torques`` of the rod and rigid-body blocks.  Returns False (with ``status[0] = STATUS_STIFFNESS``,
    ``status[1]`` the coupling, ``status[2]`` the smallest stiffness, ``status[3] = t``) if a stiffness law gave a
    non-positive stiffness; then nothing after the coupling is evaluated.  Its steps, and why its loop is not split
    into helpers: the module docstring.
    """
    sync_program, values_program = programs
    constrain_values(values_program, motors, angles, rod, ends, body)
    rotation_log_inplace(rod.director, work.vor3)
    if couplings.initialized.shape[0] > 0 and couplings.initialized.min() == 0:
        initialize_couplings(sync_program, couplings, t, work.vor3)
    if not apply_couplings(sync_program, couplings, t, rod, work.vor3, status):
        return False
    internal_forces_inplace(rod, work)
    internal_torques_inplace(rod, work, True)  # the rotation vectors are in work.vor3
    # synchronize: forcing and connections in FIFO order (block views made once: a block
    # record passed by value costs a reference count per array and call)
    rod_view = block_view(rod)
    body_view = block_view(body)
    for p in range(sync_program.shape[0]):
        code = sync_program[p, 0]
        i = sync_program[p, 1]
        if code == OP_COUPLING_TORQUE:
            apply_reciprocal_couple(couplings, i, rod)
        elif code == OP_JOINT_FORCE or code == OP_JOINT_TORQUE:
            if joints.initialized[i] == 0:
                _init_joint(joints, i, rod.director, body.director)
            if code == OP_JOINT_TORQUE and joints.angle_col[i] >= 0:
                if joints.free_twist[i] != 0:
                    _free_twist_mount(joints, i, rod_view, body_view)
                else:
                    _turn_mount(joints, i, angles)
            if code == OP_JOINT_FORCE:
                joint_force_kernel(
                    rod_view, joints.node[i], body_view, joints.body[i],
                    joints.attachment[i], joints.k_F[i], joints.nu_F[i],
                )
            else:
                joint_torque_kernel(
                    rod_view, joints.element[i], body_view, joints.body[i],
                    joints.rest_orientation[i], joints.k_tau[i], joints.nu_tau[i],
                )
                if joints.angle_col[i] >= 0 and joints.free_twist[i] != 0:
                    motor_torque_kernel(
                        rod_view, joints.element[i], body_view, joints.body[i],
                        angles[joints.angle_col[i]],
                    )
        elif code == OP_MOUNT_REACTION:
            mount_reaction(
                rod_view, rod.internal_forces, rod.internal_torques, motors.node[i],
                motors.element[i], body_view, motors.body[i], motors.free_twist[i] != 0,
                angles[i],
            )
        elif code == OP_GRAVITY_ROD:
            apply_gravity(forcings.rod_gravity, i, rod.mass, rod.external_forces)
        elif code == OP_LOAD:
            apply_load(forcings.loads, i, t, rod)
        elif code == OP_COMPRESSION:
            apply_compression(forcings.compression, i, rod)
        elif code == OP_GRAVITY_BODY:
            apply_gravity(forcings.body_gravity, i, body.mass, body.external_forces)
        elif code == OP_CONTACT and (p == 0 or sync_program[p - 1, 0] != OP_CONTACT):
            # a run of contact rows in one call (the rows of the run after its first skip)
            apply_contact_run(forcings.contacts, sync_program, p, rod_view, body_view)
    apply_laws(forcings.laws, t, rod_view, sync_program)  # the registered laws (OP_LAW rows)
    return True
