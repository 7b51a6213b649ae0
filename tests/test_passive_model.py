"""The passive model (``RodParams.coupling_law = "passive"``): the rods' elastic forces and the
auxetic coupling are the exact gradient of one discrete energy, so the robot cannot create
energy (docs/stability.md).

Checked against numbers that do not come from the force kernels: a central finite-difference
gradient of the energy (:func:`~hsa_elastica.physics.energy.rod_elastic_energy` with ``voronoi_power = 0``), the symmetry a conservative stiffness
matrix must have, and conservation of the total energy of an undamped robot.  Each check is
also run on the paper's one-way model, which must fail it (so the checks can fail).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from elastica import CosseratRod
from scipy.spatial.transform import Rotation

from hsa_elastica.engines.statics_kernels import KIND_ELEMENT, KIND_NODE
from hsa_elastica.params import RETARDATION_FIELDS, paper_robot_params
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling
from hsa_elastica.physics.energy import (
    joint_energy,
    rigid_body_kinetic_energy,
    rod_elastic_energy,
    rod_kinetic_energy,
)
from hsa_elastica.robots.builders import build_fast_robot, build_robot
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.statics_api import solve_static, static_solver

NO_KV = {f: 0.0 for f in RETARDATION_FIELDS}


def passive_energy(rod: CosseratRod) -> float:
    """The passive model's energy ``U`` [J] of one rod (variational_rod's module docstring):
    zero rest strains, bend/twist energy without PyElastica's ``1/E^3``."""
    n = rod.rest_lengths.shape[0]
    return float(rod_elastic_energy(
        rod.position_collection, rod.director_collection, rod.rest_lengths,
        rod.rest_voronoi_lengths, rod.shear_matrix, rod.bend_matrix, np.zeros((3, n)),
        np.zeros((3, max(n - 1, 0))), 0,
    ))


def _deformed_rod(seed: int = 0) -> CosseratRod:
    """A 6-element tube, twisted by 0.12 rad per element (the paper robot at pi), bent and
    stretched by random perturbations of 1e-3 m and 1 % (strains ~1e-2)."""
    rng = np.random.default_rng(seed)
    rod = CosseratRod.straight_rod(
        6, np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), 0.1, 0.02,
        1050.0, youngs_modulus=1e7, shear_modulus=6e5,
    )
    for i in range(6):
        turn = Rotation.from_rotvec([*(0.05 * rng.standard_normal(2)), 0.12 * i]).as_matrix()
        rod.director_collection[..., i] = rod.director_collection[..., i] @ turn.T
    rod.position_collection += 1e-3 * rng.standard_normal(rod.position_collection.shape)
    rod.position_collection[2] *= 1.01
    return rod


def _model_and_fd_gradient(reciprocal: bool) -> tuple[np.ndarray, np.ndarray]:
    """(model forces and torques, minus the central-difference gradient of the energy) of
    the deformed rod with an auxetic coupling (C_eps 0.01 m/rad, left-handed, eps in
    [-0.2, 0.5] so that every element is inside the clip range)."""
    rod = _deformed_rod()
    coupling = AuxeticCoupling(handedness=-1, C_eps=0.01, eps_min=-0.2, eps_max=0.5, reciprocal=reciprocal)

    def model() -> np.ndarray:
        rod.external_forces[:] = 0.0
        rod.external_torques[:] = 0.0
        coupling.apply_forces(rod, np.float64(0.0))
        coupling.apply_torques(rod, np.float64(0.0))
        return np.concatenate([
            (rod.internal_forces + rod.external_forces).ravel(),
            (rod.internal_torques + rod.external_torques).ravel(),
        ])

    def energy() -> float:
        coupling.apply_forces(rod, np.float64(0.0))  # rest lengths follow the twist
        return passive_energy(rod)

    got = model()
    h = 1e-7
    x0, q0 = rod.position_collection.copy(), rod.director_collection.copy()
    fd_f = np.zeros_like(rod.position_collection)
    for i in range(x0.shape[1]):
        for a in range(3):
            u = []
            for s in (1.0, -1.0):
                rod.position_collection[:] = x0
                rod.position_collection[a, i] += s * h
                u.append(energy())
            fd_f[a, i] = -(u[0] - u[1]) / (2 * h)
    rod.position_collection[:] = x0
    fd_t = np.zeros((3, q0.shape[2]))
    for k in range(q0.shape[2]):
        for a in range(3):
            u = []
            for s in (1.0, -1.0):
                rod.director_collection[:] = q0
                w = np.zeros(3)
                w[a] = s * h
                # turn element k by w in its own frame: Q -> exp(-[w]) Q (PyElastica's sense)
                rod.director_collection[..., k] = Rotation.from_rotvec(w).as_matrix().T @ q0[..., k]
                u.append(energy())
            fd_t[a, k] = -(u[0] - u[1]) / (2 * h)
    rod.director_collection[:] = q0
    return got, np.concatenate([fd_f.ravel(), fd_t.ravel()])


def test_passive_rod_forces_are_the_gradient_of_its_energy() -> None:
    """Every force and torque of a twisted, bent, stretched, auxetically coupled rod equals
    minus the finite-difference gradient of the energy: measured 1e-8 relative (the
    central-difference error at h = 1e-7); tolerance 1e-5.  PyElastica's rod with the
    one-way law differs by tens of percent (its 1/e, 1/E^3 factors and the missing
    conjugate couple)."""
    got, fd = _model_and_fd_gradient(reciprocal=True)
    scale = np.abs(fd).max()
    assert np.abs(got - fd).max() < 1e-5 * scale
    one_way, fd1 = _model_and_fd_gradient(reciprocal=False)
    assert np.abs(one_way - fd1).max() > 0.05 * np.abs(fd1).max()


def _robot(law: str, n: int = 6, **rod_changes: float):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=n, coupling_law=law, **rod_changes))
    return p


def test_passive_static_stiffness_is_symmetric() -> None:
    """At a static pose of a conservative model the stiffness matrix (the static solver's
    finite-difference Jacobian of forces and couples) is symmetric.  bend_north of the paper
    robot (8 elements): the passive model's antisymmetric part is at the finite-difference
    noise (measured 1e-6 of the symmetric part; tolerance 1e-4); the one-way law's is ~1e-3
    overall and ~0.9 in the force-twist block (it couples twist into force, not back)."""
    angles = np.array(primitive_angles("bend_north", 1.0))

    def asymmetry(law: str) -> tuple[float, float]:
        params = _robot(law, 8)
        solve_static(params, angles)
        solver, _ = static_solver(params)
        jac = solver.jacobian(angles, solver.evaluate(angles).copy()).toarray()
        anti, sym = jac - jac.T, jac + jac.T
        block = np.outer(solver.kind == KIND_NODE, solver.kind == KIND_ELEMENT)
        return (float(np.linalg.norm(anti) / np.linalg.norm(sym)),
                float(np.linalg.norm(anti[block]) / np.linalg.norm(sym[block])))

    total, block = asymmetry("passive")
    assert total < 1e-4 and block < 1e-4
    total, block = asymmetry("one_way")
    assert block > 0.1


def _total_energy(robot) -> float:  # type: ignore[no-untyped-def]
    """Kinetic + elastic energy [J] of rods (the passive model's energy), platform, joints."""
    total = 0.0
    for r in robot.rods:
        total += rod_kinetic_energy(
            r.position_collection, r.velocity_collection, r.omega_collection, r.mass,
            r.mass_second_moment_of_inertia, r.rest_lengths,
        )
        total += passive_energy(r)
    p = robot.platform
    total += rigid_body_kinetic_energy(
        p.velocity_collection, p.omega_collection, np.atleast_1d(p.mass),
        p.mass_second_moment_of_inertia,
    )
    j, ra, ba = robot.joints, robot.rod_arrays, robot.body_arrays
    for i in range(j.node.shape[0]):
        total += joint_energy(
            ra.position, ra.director, int(j.node[i]), int(j.element[i]), ba.position,
            ba.director, int(j.body[i]), j.attachment[i], j.rest_orientation[i],
            float(j.k_F[i]), float(j.k_tau[i]),
        )
    return float(total)


def _undamped_hold(law: str) -> tuple[float, float]:
    """Motor angles (1, -1, 3, -3) rad (a north bend with every rod twisted, so that no
    element sits at the kink of the clipped rest-length law at zero twist, where the force is
    discontinuous) ramped in 0.3 s, platform kicked, 2 s of undamped hold (no velocity or
    material damping), 6 elements, dt 1e-5 s.  Returns (largest |E(t) - E0| over the hold,
    kick energy) [J]; inf if the run diverged."""
    params = _robot(law, 6, **NO_KV)
    params = params.replace(simulation=params.simulation.replace(
        dt=1e-5, damping=0.0, rotational_damping=0.0, ramp_time=0.3))
    robot = build_fast_robot(params, [1.0, -1.0, 3.0, -3.0], record=False)
    robot.run(0.3)
    before = _total_energy(robot)
    robot.platform.velocity_collection[:, 0] += (0.2, -0.1, 0.1)
    robot.platform.omega_collection[:, 0] += (5.0, 3.0, 8.0)
    e0 = _total_energy(robot)
    worst = 0.0
    try:
        for _ in range(20):
            robot.run(0.1)
            worst = max(worst, abs(_total_energy(robot) - e0))
    except Exception:  # SimulationDiverged: the energy grew without bound
        return math.inf, e0 - before
    return worst, e0 - before


def test_undamped_passive_robot_conserves_energy() -> None:
    """With no damping at all, the passive robot's total energy stays constant: within 1 % of
    the kick energy over 2 s (measured 0.27 % at dt 1e-5 s and 1 % at 2e-5 s: Position
    Verlet's O((omega dt)^2) modified energy); the one-way law under the same kick gains
    energy (flutter: measured divergence at 1.8 s) -- more than the kick itself."""
    drift, kick = _undamped_hold("passive")
    assert kick > 1e-5
    assert drift < 0.01 * kick, (drift, kick)
    drift, kick = _undamped_hold("one_way")
    assert drift > kick


def test_passive_compiled_path_equals_operator_path() -> None:
    """The fused stepper and PyElastica's operator path run the same passive model: same
    state after 400 steps to 1e-10 (round-off of a different summation order)."""
    params = _robot("passive", 6)
    params = params.replace(simulation=params.simulation.replace(
        damping=0.0, rotational_damping=0.0, ramp_time=0.01))
    angles = (0.9, -0.4, 0.3, -0.7)
    ref = build_robot(params, angles, record=False)
    fast = build_fast_robot(params, angles, record=False, chunk=97)
    ref.run(400 * params.simulation.dt)
    fast.run(400 * params.simulation.dt)
    for a, b in zip(ref.rods, fast.rods):
        for name in ("position_collection", "velocity_collection", "omega_collection"):
            assert np.max(np.abs(getattr(a, name) - getattr(b, name))) <= 1e-10
    assert np.max(np.abs(fast.rods[0].velocity_collection)) > 1e-4  # it moved


def test_passive_law_keeps_the_free_rod_length() -> None:
    """Unloaded rods: the conjugate couple vanishes at zero axial stress, so the passive robot
    at rest with equal twists (elongation) has the one-way model's height within 0.01 mm (the
    rods carry only the platform's joint forces; measured 1e-4 mm)."""
    angles = np.array(primitive_angles("elongation", 1.0))
    z = [solve_static(_robot(law, 8), angles).platform_position_m[2] for law in ("one_way", "passive")]
    assert z[0] == pytest.approx(z[1], abs=1e-5)
