#!/usr/bin/env python
"""Cost of each part of one fused step of the paper robot, measured inside numba.

cProfile sees the fused loop as one opaque call; this script times each part of
:func:`hsa_elastica.engines.fused.advance` in its own ``@njit`` loop of ``--steps`` calls, on
the compiled model of a robot in motion (mid-ramp), and prints µs per step next to the whole
step (the parts do not add up exactly: the loop's memory traffic overlaps differently).  CPU
time of this process, best of 10 repetitions (robust on a shared machine).

Usage::

    python benchmarks/profile_fused_kernels.py [--elements 25] [--dt 3e-5] [--steps 20000]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
from numba import njit

from elastica.rod.data_structures import overload_operator_dynamic_numba

from hsa_elastica.compat import update_accelerations, zeroed_out_external_forces_and_torques
from hsa_elastica.engines import fused
from hsa_elastica.physics.forces import (
    apply_couplings,
    apply_material_damping,
    constrain_rates,
    constrain_values,
    evaluate_forces,
)
from hsa_elastica.physics.joints import joint_force_kernel, joint_torque_kernel
from hsa_elastica.physics.mount_kernels import block_view
from hsa_elastica.physics.rod_kernels import (
    internal_forces_inplace,
    internal_torques_inplace,
    kinematic_update_inplace,
    rigid_body_accelerations,
    rod_work,
    rotation_log_inplace,
)
from hsa_elastica.physics.tables import OP_MATERIAL_DAMPING, ForcingTables


@njit
def _kinematics(n, dt, rod, body, work):  # type: ignore[no-untyped-def]
    for _ in range(n):
        kinematic_update_inplace(0.0 * dt, rod.position, rod.director, rod.velocity, rod.omega, work.rotation)
        kinematic_update_inplace(0.0 * dt, body.position, body.director, body.velocity, body.omega, work.rotation)
        kinematic_update_inplace(0.0 * dt, rod.position, rod.director, rod.velocity, rod.omega, work.rotation)
        kinematic_update_inplace(0.0 * dt, body.position, body.director, body.velocity, body.omega, work.rotation)


@njit
def _motors(n, program, motors, angles, rod, ends, body):  # type: ignore[no-untyped-def]
    for _ in range(n):
        constrain_values(program, motors, angles, rod, ends, body)


@njit
def _couplings(n, t, program, couplings, rod, work):  # type: ignore[no-untyped-def]
    status = np.zeros(4)
    for _ in range(n):
        apply_couplings(program, couplings, t, rod, work.vor3, status)


@njit
def _rotation_log(n, rod, work):  # type: ignore[no-untyped-def]
    for _ in range(n):
        rotation_log_inplace(rod.director, work.vor3)


@njit
def _internal_forces(n, rod, work):  # type: ignore[no-untyped-def]
    for _ in range(n):
        internal_forces_inplace(rod, work)


@njit
def _internal_torques(n, rod, work):  # type: ignore[no-untyped-def]
    for _ in range(n):
        internal_torques_inplace(rod, work)


@njit
def _joints(n, rod, body, joints):  # type: ignore[no-untyped-def]
    rv = block_view(rod)
    bv = block_view(body)
    for _ in range(n):
        for i in range(joints.node.shape[0]):
            joint_force_kernel(
                rv, joints.node[i], bv, joints.body[i], joints.attachment[i], joints.k_F[i],
                joints.nu_F[i],
            )
            joint_torque_kernel(
                rv, joints.element[i], bv, joints.body[i], joints.rest_orientation[i],
                joints.k_tau[i], joints.nu_tau[i],
            )
        zeroed_out_external_forces_and_torques(rod.external_forces, rod.external_torques)
        zeroed_out_external_forces_and_torques(body.external_forces, body.external_torques)


@njit
def _forces(n, t, angles, rod, body, couplings, joints, motors, ends, forcings, programs,  # type: ignore[no-untyped-def]
            work, status):
    for _ in range(n):
        evaluate_forces(t, angles, rod, body, couplings, joints, motors, ends, forcings, programs,
                        work, status)
        zeroed_out_external_forces_and_torques(rod.external_forces, rod.external_torques)
        zeroed_out_external_forces_and_torques(body.external_forces, body.external_torques)


@njit
def _dynamics(n, dt, rod, body):  # type: ignore[no-untyped-def]
    for _ in range(n):
        update_accelerations(
            rod.acceleration, rod.internal_forces, rod.external_forces, rod.mass, rod.alpha,
            rod.inv_mass_second_moment_of_inertia, rod.internal_torques, rod.external_torques,
            rod.dilatation,
        )
        overload_operator_dynamic_numba(0.0 * dt, rod.v_w, rod.dvdt_dwdt)
        rigid_body_accelerations(body)
        overload_operator_dynamic_numba(0.0 * dt, body.v_w, body.dvdt_dwdt)


@njit
def _rates(n, program, motors, rates, rd, bd, material, rod, body, ends):  # type: ignore[no-untyped-def]
    for _ in range(n):
        constrain_rates(program, motors, rates, rd, bd, material, rod, body, ends)


@njit
def _material(n, material, rod):  # type: ignore[no-untyped-def]
    for _ in range(n):
        for i in range(material.n_elems.shape[0]):
            apply_material_damping(material, i, rod)


def timed(fn, *args) -> float:  # type: ignore[no-untyped-def]
    """Best of 10 timings of ``steps / 10`` calls, CPU time of this process [us per call]."""
    fn(1, *args)  # compile
    n = max(1, args_steps[0] // 10)
    best = float("inf")
    for _ in range(10):
        t0 = time.process_time()
        fn(n, *args)
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


args_steps = [0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--elements", type=int, default=25)
    ap.add_argument("--dt", type=float, default=3e-5)
    ap.add_argument("--steps", type=int, default=20000)
    a = ap.parse_args()
    args_steps[0] = a.steps
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot

    p = paper_robot_params()
    p = dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=a.elements),
        simulation=dataclasses.replace(p.simulation, dt=a.dt),
    )
    robot = build_fast_robot(p, [1.0, -1.0, 1.0, -1.0], record=False)
    robot.run(0.05)  # mid-ramp: moving rods, initialised operators
    m = robot.model.tables  # the law tables and programs
    rod, body = robot.model.rod_arrays, robot.model.body_arrays
    work = rod_work(rod.lengths.shape[0], body.mass.shape[0])
    angles = np.array([0.3, -0.3, 0.3, -0.3])
    rates = np.zeros(4)
    t = robot.time
    # the whole step (fused.advance), then each part
    whole = timed(lambda n: robot._advance(n, robot.time))  # type: ignore[arg-type]
    no_material = m.rates_program[m.rates_program[:, 0] != OP_MATERIAL_DAMPING]
    parts = {
        "kinematic updates (4)": timed(_kinematics, a.dt, rod, body, work),
        "motors (constrain_values)": timed(_motors, m.values_program, m.motors, angles, rod, m.ends, body),
        "rotation log of the block (shared)": timed(_rotation_log, rod, work),
        "auxetic couplings (Eq. 2-5)": timed(_couplings, t, m.sync_program, m.couplings, rod, work),
        "rod internal forces": timed(_internal_forces, rod, work),
        "rod internal torques": timed(_internal_torques, rod, work),
        "joints (Eq. 6-7)": timed(_joints, rod, body, m.joints),
        "evaluate_forces (all of the above)": timed(
            _forces, t, angles, rod, body, m.couplings, m.joints, m.motors, m.ends,
            ForcingTables(m.rod_gravity, m.body_gravity, m.loads, m.compression, m.contacts, m.laws),
            (m.sync_program, m.values_program), work, np.zeros(4),
        ),
        "accelerations + dynamic step": timed(_dynamics, a.dt, rod, body),
        "constrain_rates (motors, dampers, KV)": timed(
            _rates, m.rates_program, m.motors, rates, m.rod_dampers, m.body_dampers, m.material,
            rod, body, m.ends,
        ),
        "constrain_rates without KV": timed(
            _rates, no_material, m.motors, rates, m.rod_dampers, m.body_dampers, m.material,
            rod, body, m.ends,
        ),
        "Kelvin-Voigt damping (4 rods)": timed(_material, m.material, rod),
    }
    print(f"paper robot, {a.elements} elements/rod, dt = {a.dt:g} s, {a.steps} calls each")
    print(f"{'whole step (advance, incl. Python per 1 call)':45s} {whole:8.2f} us/step")
    for k, v in parts.items():
        print(f"  {k:43s} {v:8.2f} us  ({v / whole * 100:5.1f} %)")
    _ = fused


if __name__ == "__main__":
    main()
