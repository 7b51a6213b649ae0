"""Motors on a moving body (rigid :class:`MotorMountBC` / ``TwistMountBC`` with
``MountReaction``, compliant :class:`MotorMount`), ``build_robot(base=...)`` and multi-segment
stacks.

Reference numbers do not come from the code under test:

* Newton's third law and angular momentum: the mount's forces on the rod and the body sum to
  zero and, without damping, their moments about any point too (the spring force is central).
* The mount's twist spring: a base element turned by ``psi`` about its own axis on a body at
  rest, motor angle ``phi``, feels ``k_tau (phi - psi)`` about its axis (closed form of Eq. 7
  for a pure twist error).
* Rigid-motion invariance: a robot built at a rotated and shifted pose (no gravity, no
  Kelvin-Voigt damping) follows the transformed trajectory of the lab-frame robot (round-off
  only: 1e-12 m, 1e-12).
* Statics of a free stage: with no gravity the upper stage of a stack is in equilibrium only if
  the net wrench it transmits through its mounts is zero, so (i) the lower stage behaves as the
  single robot at its own angles, and (ii) the upper stage's pose relative to the lower platform
  does not depend on the lower stage's angles (bounds: the solver tolerance, 1e-8 N against
  stiffnesses >= 1e2 N/m, i.e. 1e-9 m).
* A stage on a body held fixed against the fixed-base robot: rigid mounts impose what
  MotorAngleBC imposes, so the trajectories agree to round-off (1e-10) and the static poses to
  the solver tolerance (1e-9 m); a compliant mount (the joint of Eq. 6-7) differs by the base
  deflection, first order in 1 / (k_F, k_tau): 100x stiffer mounts must shrink the difference
  about 100x (accepted 50x to 200x), and the paper-gain difference is below 2e-4 m (the motor
  torque over k_tau, ~1.5e-3 rad, times the 0.1 m rod length).
* The rigid mount's reaction: the body receives the held node's force, its moment and the held
  element's couple (Newton's third law).
* The fused stepper and the per-rod operators give the same trajectory on a stack, also with
  commands changed every control interval (1e-10: round-off only, as tests/test_fast.py).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from elastica.rigidbody import Cylinder

from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.params import JointParams, ParameterError, paper_robot_params
from hsa_elastica.physics.actuation import rotate_about_own_axis
from hsa_elastica.physics.mounts import MotorMount
from hsa_elastica.robots.builders import build_robot, make_hsa_rod
from hsa_elastica.robots.stack import build_stack, solve_stack_static, stack_primitive_angles
from hsa_elastica.robots.statics_api import solve_static

TOL = 1e-10
DT = 2e-5
U1 = np.array([0.8, -0.8, 0.8, -0.8])  # elongation of the lower stage
U2 = np.array([0.0, 1.0, 0.0, -1.0])  # a bend of the upper stage


def _params(**sim: object):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    s = dict(dt=DT, ramp_time=0.003, record_fps=500.0)
    s.update(sim)
    return dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, **s))


def _states(systems):  # type: ignore[no-untyped-def]
    return [
        np.concatenate([s.position_collection.ravel(), s.director_collection.ravel()])
        for s in systems
    ]


# --------------------------------------------------------------------------------------------
# the operator
# --------------------------------------------------------------------------------------------
def _rod_and_body():  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    rod = make_hsa_rod(p.rod, base_position=(0.01, 0.02, 0.0015), normal=(1.0, 0.0, 0.0))
    body = Cylinder(
        start=np.array([0.0, 0.0, -0.0015]), direction=np.array([0.0, 0.0, 1.0]),
        normal=np.array([1.0, 0.0, 0.0]), base_length=0.003, base_radius=0.05, density=700.0,
    )
    return rod, body


def _wrench_sums(rod, body):  # type: ignore[no-untyped-def]
    """Total force [N] and total moment about the origin [N m] (lab) on rod + body."""
    force = rod.external_forces.sum(axis=1) + body.external_forces[:, 0]
    moment = np.zeros(3)
    for k in range(rod.n_elems + 1):
        moment += np.cross(rod.position_collection[:, k], rod.external_forces[:, k])
    for k in range(rod.n_elems):
        moment += rod.director_collection[:, :, k].T @ rod.external_torques[:, k]
    moment += np.cross(body.position_collection[:, 0], body.external_forces[:, 0])
    moment += body.director_collection[:, :, 0].T @ body.external_torques[:, 0]
    return force, moment


@pytest.mark.parametrize("damped", [False, True])
def test_mount_reaction_is_equal_and_opposite(damped: bool) -> None:
    rod, body = _rod_and_body()
    nu = 3.0 if damped else 0.0
    mount = MotorMount(k_F=5e5, nu_F=nu, k_tau=20.0, nu_tau=nu, attachment_point=(0.01, 0.02, 0.0015),
                       angle=0.4)
    mount.apply_forces(rod, 0, body, 0, np.float64(0.0))  # captures the rest orientation
    rng = np.random.default_rng(3)
    for _ in range(5):
        rod.external_forces[:] = 0.0
        rod.external_torques[:] = 0.0
        body.external_forces[:] = 0.0
        body.external_torques[:] = 0.0
        rod.position_collection[:, 0] += rng.normal(scale=1e-3, size=3)
        body.position_collection[:, 0] += rng.normal(scale=1e-3, size=3)
        rod.velocity_collection[:, 0] = rng.normal(size=3)
        body.velocity_collection[:, 0] = rng.normal(size=3)
        rod.omega_collection[:, 0] = rng.normal(size=3)
        body.omega_collection[:, 0] = rng.normal(size=3)
        turn = np.empty((3, 3))
        rotate_about_own_axis(np.ascontiguousarray(body.director_collection[:, :, 0]),
                              float(rng.normal(scale=0.3)), turn)
        body.director_collection[:, :, 0] = turn
        mount.apply_forces(rod, 0, body, 0, np.float64(0.1))
        mount.apply_torques(rod, 0, body, 0, np.float64(0.1))
        force, moment = _wrench_sums(rod, body)
        scale = np.abs(body.external_forces).max()
        assert scale > 1.0  # the mount is loaded
        assert np.abs(force).max() < 1e-12 * scale
        np.testing.assert_allclose(rod.external_forces[:, 0], -body.external_forces[:, 0], rtol=1e-14)
        if not damped:  # a central spring force: no net moment either
            assert np.abs(moment).max() < 1e-12 * scale


def test_mount_twist_spring_closed_form() -> None:
    rod, body = _rod_and_body()
    k_tau = 20.0
    mount = MotorMount(k_F=5e5, k_tau=k_tau, attachment_point=(0.01, 0.02, 0.0015), angle=0.0)
    mount.apply_torques(rod, 0, body, 0, np.float64(0.0))  # rest orientation at angle 0
    q0 = np.array(rod.director_collection[:, :, 0])
    for phi, psi in ((0.5, 0.5), (0.5, 0.3), (-1.0, -0.2), (2.0, 2.5)):
        turned = np.empty((3, 3))
        rotate_about_own_axis(q0, psi, turned)
        rod.director_collection[:, :, 0] = turned
        rod.external_torques[:] = 0.0
        body.external_torques[:] = 0.0
        mount.angle = phi
        mount.apply_torques(rod, 0, body, 0, np.float64(1.0))
        tau = rod.external_torques[:, 0]  # local frame: z = the rod's own axis
        np.testing.assert_allclose(tau, [0.0, 0.0, k_tau * (phi - psi)], atol=1e-12)


# --------------------------------------------------------------------------------------------
# build_robot(base=pose)
# --------------------------------------------------------------------------------------------
def _run_fast(robot, steps: int):  # type: ignore[no-untyped-def]
    fast = FastRobot(robot)
    fast.run(steps * robot.dt)
    return robot


def test_identity_pose_is_bit_identical() -> None:
    p = _params()
    a = _run_fast(build_robot(p, U1, record=False), 150)
    b = _run_fast(build_robot(p, U1, record=False, base=np.eye(4)), 150)
    for x, y in zip(_states([*a.rods, a.platform]), _states([*b.rods, b.platform])):
        assert np.array_equal(x, y)


def test_pose_base_is_a_rigid_motion() -> None:
    # Kelvin-Voigt damping off: its semi-implicit solve uses a lab-frame diagonal
    # preconditioner, so its result depends on the orientation at the 1e-7 m level
    p = _params()
    p = dataclasses.replace(p, rod=dataclasses.replace(
        p.rod, retardation_time_axial=0.0, retardation_time_shear=0.0,
        retardation_time_bend=0.0, retardation_time_twist=0.0))
    c, s = math.cos(0.7), math.sin(0.7)
    rz = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    rx = np.array([[1.0, 0.0, 0.0], [0.0, math.cos(0.4), -math.sin(0.4)], [0.0, math.sin(0.4), math.cos(0.4)]])
    rot = rz @ rx
    shift = np.array([0.3, -0.1, 0.25])
    # every rod twisted: with a rod left at 0 the bend compresses it past buckling, and round-off
    # (different in a rotated frame) seeds the buckling mode, growing ~1e8x in 100 steps
    u = np.array([0.3, -1.0, 0.9, -0.4])
    a = _run_fast(build_robot(p, u, record=False), 300)
    b = _run_fast(build_robot(p, u, record=False, base=(shift, rot)), 300)
    moved = False
    for sa, sb in zip([*a.rods, a.platform], [*b.rods, b.platform]):
        np.testing.assert_allclose(
            sb.position_collection, rot @ sa.position_collection + shift[:, None], rtol=0, atol=1e-12
        )
        q = np.einsum("ijk,lj->ilk", sa.director_collection, rot)  # Q R^T per element
        np.testing.assert_allclose(sb.director_collection, q, rtol=0, atol=1e-12)
        moved |= bool(np.abs(sa.velocity_collection).max() > 1e-3)
    assert moved  # the motors were turning


def test_bad_base_is_refused() -> None:
    p = _params()
    with pytest.raises(ParameterError, match="base"):
        build_robot(p, U1, base=np.ones((4, 4)))
    with pytest.raises(ParameterError, match="rotation"):
        build_robot(p, U1, base=(np.zeros(3), 2.0 * np.eye(3)))
    with pytest.raises(ParameterError, match="mount_offset"):
        build_robot(p, U1, mount_offset=(0.0, 0.0, 0.0))


# --------------------------------------------------------------------------------------------
# stacks: dynamics on both paths
# --------------------------------------------------------------------------------------------
def test_stack_layout_and_payload() -> None:
    p = _params()
    stack = build_stack([p, p], [U1, U2], motor_mass=0.07, record=False)
    lower, upper = stack.segments
    disc = p.platform.mass
    assert math.isclose(float(lower.platform.mass[0]), disc + 4 * 0.07, rel_tol=1e-12)
    assert math.isclose(float(upper.platform.mass[0]), disc, rel_tol=1e-12)
    assert upper.base is lower.platform and lower.base is None
    # the upper rods stand on the lower platform's top face, in its frame
    top = lower.platform.position_collection[2, 0] + 0.5 * p.platform.thickness
    for rod, start in zip(upper.rods, upper.rod_bases):
        np.testing.assert_allclose(rod.position_collection[:2, 0], start[:2], atol=1e-15)
        assert math.isclose(rod.position_collection[2, 0], top + p.rod.cap_length_base, abs_tol=1e-15)
    assert len(stack.motors) == 8 and stack.platform is upper.platform
    angles = stack_primitive_angles([("elongation", 0.5), None], [p, p])
    assert np.allclose(angles[1], 0.0) and np.all(np.abs(angles[0]) > 0.0)


def test_fused_matches_operators_on_a_stack() -> None:
    p = _params()
    ref = build_stack([p, p], [U1, U2], motor_mass=0.05, record=False)
    ref.run(120 * DT)
    fast = FastRobot(build_stack([p, p], [U1, U2], motor_mass=0.05, record=False))
    fast.run(120 * DT)
    moved = 0.0
    for x, y in zip(_states([*ref.rods, *ref.platforms]), _states([*fast.rods, *fast.platforms])):
        assert np.abs(x - y).max() < TOL
    for rod in fast.segments[1].rods:
        moved = max(moved, float(np.abs(rod.velocity_collection).max()))
    assert moved > 1e-3


def test_commands_changed_mid_run_same_on_both_paths() -> None:
    p = _params()
    ref = build_stack([p, p], None, record=False)
    fast = FastRobot(build_stack([p, p], None, record=False))
    rng = np.random.default_rng(7)
    for _ in range(3):
        u = rng.uniform(-1.0, 1.0, size=8)
        for robot in (ref, fast):
            robot.set_motor_angles(u)
            robot.step(0.0011)
        sr, sf = ref.state(), fast.state()
        for key in sr:
            assert np.abs(np.asarray(sr[key]) - np.asarray(sf[key])).max() < TOL, key
    assert abs(fast.time - ref.time) < 1e-15
    np.testing.assert_allclose(fast.state()["motor_angles_rad"], u, atol=1e-12)


# --------------------------------------------------------------------------------------------
# stacks: statics (the same force evaluation as the fused stepper)
# --------------------------------------------------------------------------------------------
def _pose_gap(a, b) -> float:  # type: ignore[no-untyped-def]
    """Largest position gap [m] or rotation gap times the 0.1 m rod length."""
    return max(float(np.abs(a[0] - b[0]).max()), 0.1 * float(np.abs(a[1] - b[1]).max()))


def test_free_upper_stage_transmits_no_wrench() -> None:
    p = paper_robot_params()
    both = solve_stack_static([p, p], [U1, U2])
    rest = solve_stack_static([p, p], [np.zeros(4), U2])
    single = solve_static(p, U1)
    assert both.converged and rest.converged and both.stable
    # (i) the lower stage is the single robot at its own angles
    np.testing.assert_allclose(both.poses[0][0], single.platform_position_m, atol=1e-9)
    # rotation: the solver's couple tolerance (1e-9 N m) over the soft twist stiffness of the
    # platform about its axis (~0.04 N m/rad) leaves 2.5e-8 rad
    np.testing.assert_allclose(both.poses[0][1], single.platform_rotation, atol=1e-7)
    # (ii) the upper stage relative to the lower platform ignores the lower angles
    assert _pose_gap(both.relative_poses[1], rest.relative_poses[1]) < 1e-8
    # a lower stage at rest stays at its build pose
    np.testing.assert_allclose(rest.poses[0][0], [0.0, 0.0, 0.1015], atol=1e-9)
    np.testing.assert_allclose(rest.poses[0][1], np.eye(3), atol=1e-7)  # as above


def test_stage_on_a_held_body_is_the_fixed_base_robot_statics() -> None:
    p = paper_robot_params()
    single = solve_static(p, U2)
    lift = np.array([0.0, 0.0, 0.5 * p.platform.thickness])  # mount origin above the platform centre
    expected = (single.platform_position_m + lift, single.platform_rotation)
    # rigid mounts (default): the upper stage on the lower platform at rest is the fixed-base
    # robot; bound 1e-9 m: the solver tolerance (1e-8 N) over stiffnesses >= 1e1 N/m
    rigid = solve_stack_static([p, p], [np.zeros(4), U2])
    assert rigid.converged
    assert _pose_gap(rigid.relative_poses[1], expected) < 1e-9
    # compliant mounts (Eq. 6-7 at the base): first order in 1 / (k_F, k_tau)
    gaps = []
    for mount in (p.joint, JointParams(k_F=5e7, k_tau=2000.0)):
        out = solve_stack_static([p, p], [np.zeros(4), U2], mount=mount)
        assert out.converged
        gaps.append(_pose_gap(out.relative_poses[1], expected))
    assert 1e-6 < gaps[0] < 2e-4
    assert 50.0 < gaps[0] / gaps[1] < 200.0


def test_stage_on_a_held_body_is_the_fixed_base_robot_dynamics() -> None:
    # A body held by PyElastica's FixedConstraint with its top face at the lab origin: the
    # rigid mounts impose the positions and directors MotorAngleBC imposes (to round-off), so
    # the trajectories agree to round-off (1e-10 after 300 steps of a ramped bend).
    from elastica.boundary_conditions import FixedConstraint

    from hsa_elastica.robots.environment import HSASimulator

    p = _params()
    fixed = build_robot(p, U2, record=False)
    sim = HSASimulator()
    body = Cylinder(
        start=np.array([0.0, 0.0, -0.004]), direction=np.array([0.0, 0.0, 1.0]),
        normal=np.array([1.0, 0.0, 0.0]), base_length=0.004, base_radius=0.05, density=700.0,
    )
    sim.append(body)
    sim.constrain(body).using(
        FixedConstraint, constrained_position_idx=(0,), constrained_director_idx=(0,)
    )
    held = build_robot(p, U2, record=False, base=body, simulator=sim)
    for rod_f, rod_h in zip(fixed.rods, held.rods):
        np.testing.assert_allclose(rod_h.position_collection, rod_f.position_collection, atol=1e-15)
    fixed.run(300 * DT)
    held.run(300 * DT)
    moved = 0.0
    for x, y in zip(_states([*fixed.rods, fixed.platform]), _states([*held.rods, held.platform])):
        assert np.abs(x - y).max() < TOL
    for rod in held.rods:
        moved = max(moved, float(np.abs(rod.velocity_collection).max()))
    assert moved > 1e-3  # the ramp moved the rods
    # the measured motor angle of a rigid mount (twist relative to the body) is the lab one
    from hsa_elastica.physics.actuation import base_twist_angle

    for ref, rod_f, rod_h in zip(held.mounts, fixed.rods, held.rods):
        lab = base_twist_angle(rod_f, ref.instance.reference_director)
        assert abs(ref.instance.twist(rod_h) - lab) < 1e-12


def test_rigid_mount_hands_the_base_load_to_the_body() -> None:
    # Newton's third law at the mount: what the rod's internal stresses push on the held base
    # node and element is what the body receives -- force, its moment about the body's centre
    # and the couple -- so rod (held end included) + body carry no net wrench from the mount.
    from hsa_elastica.physics.rigid_mounts import MountReaction

    rod, body = _rod_and_body()
    rng = np.random.default_rng(3)
    rod.position_collection[:] += 1e-3 * rng.standard_normal(rod.position_collection.shape)
    rod.compute_internal_forces_and_torques(np.float64(0.0))
    f0 = np.array(rod.internal_forces[:, 0])
    t0 = rod.director_collection[:, :, 0].T @ rod.internal_torques[:, 0]
    reaction = MountReaction()
    reaction.apply_forces(rod, 0, body, 0, np.float64(0.0))
    np.testing.assert_allclose(body.external_forces[:, 0], f0, rtol=1e-14, atol=0.0)
    lever = rod.position_collection[:, 0] - body.position_collection[:, 0]
    lab_torque = body.director_collection[:, :, 0].T @ body.external_torques[:, 0]
    np.testing.assert_allclose(lab_torque, np.cross(lever, f0) + t0, rtol=1e-12,
                               atol=1e-14 * np.abs(t0).max())


# --------------------------------------------------------------------------------------------
# torque-driven motors on a body (TwistMount)
# --------------------------------------------------------------------------------------------
def test_twist_mount_leaves_twist_free_and_reacts_on_the_body() -> None:
    from hsa_elastica.physics.mounts import TwistMount

    rod, body = _rod_and_body()
    mount = TwistMount(k_F=5e5, k_tau=20.0, attachment_point=(0.01, 0.02, 0.0015), torque=0.0)
    mount.apply_torques(rod, 0, body, 0, np.float64(0.0))  # rest orientation at twist 0
    q0 = np.array(rod.director_collection[:, :, 0])
    turned = np.empty((3, 3))
    rotate_about_own_axis(q0, 0.8, turned)  # a pure twist: no restoring torque
    rod.director_collection[:, :, 0] = turned
    rod.external_torques[:] = 0.0
    body.external_torques[:] = 0.0
    mount.apply_torques(rod, 0, body, 0, np.float64(1.0))
    assert np.abs(rod.external_torques).max() < 1e-12 and np.abs(body.external_torques).max() < 1e-12
    assert math.isclose(mount.twist, 0.8, abs_tol=1e-12)
    # the motor torque about the rod axis, its reaction on the body: no net torque
    mount.torque = 0.05
    mount.apply_torques(rod, 0, body, 0, np.float64(1.0))
    np.testing.assert_allclose(rod.external_torques[:, 0], [0.0, 0.0, 0.05], atol=1e-14)
    _, moment = _wrench_sums(rod, body)
    assert np.abs(moment).max() < 1e-15


@pytest.mark.parametrize("compliant", [False, True])
def test_torque_drive_matches_the_angle_drive(compliant: bool) -> None:
    # At equilibrium a torque-driven base twisted by psi under the torque tau is the
    # angle-driven base at phi = psi: rigid mounts impose the twist itself; a compliant mount's
    # twist spring k_tau in series carries tau, so phi = psi + tau / k_tau.  Same poses, to the
    # solver tolerance.
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.statics import StaticSolver
    from hsa_elastica.physics.actuation import twist_about_axis
    from hsa_elastica.physics.mounts import free_twist_rest_orientation

    p = paper_robot_params()
    mount = p.joint if compliant else None
    taus = np.array([0.02, -0.01, 0.015, -0.02])  # N m
    torque = solve_stack_static([p, p], [U1, taus], drive="torque", mount=mount)
    assert torque.converged and torque.stable
    # the twist of each upper base relative to the lower platform, from the solved state
    stack = build_stack([p, p], [U1, taus], drive="torque", ramp=0.0, record=False,
                        check_dt=False, mount=mount)
    solver = StaticSolver(compile_simulator(stack.simulator))
    order = {id(ref.instance): j for j, ref in enumerate(stack.motors)}
    flat = np.concatenate([U1, taus])
    target = np.array([flat[order[id(bc)]] for bc in solver.model.inputs.motor_bcs])
    assert solver.solve(target, steps=4, check_stability=False).converged
    rod_block, body_block = solver.model.rod_arrays, solver.model.body_arrays
    psi = []
    if compliant:
        j = solver.model.tables.joints
        for row in np.flatnonzero(j.free_twist):
            psi.append(free_twist_rest_orientation(
                j.base_orientation[row], body_block.director, j.body[row], rod_block.director,
                j.element[row], np.empty((3, 3)),
            ))
        phi = np.array(psi) + taus / p.joint.k_tau
    else:
        m = solver.model.tables.motors
        for row in np.flatnonzero(m.free_twist):
            reference = m.reference_director[row] @ body_block.director[:, :, m.body[row]]
            psi.append(twist_about_axis(reference, np.ascontiguousarray(
                rod_block.director[:, :, m.element[row]])))
        phi = np.array(psi)
    angle = solve_stack_static([p, p], [U1, phi], mount=mount)
    assert angle.converged
    assert np.abs(np.array(psi)).max() > 0.05  # the torques twisted the rods
    for a, b in zip(angle.poses, torque.poses):
        assert _pose_gap(a, b) < 1e-8


def test_torque_drive_same_on_both_paths() -> None:
    p = _params()
    taus = [0.02, -0.02, 0.01, -0.01]
    ref = build_stack([p, p], [U1, taus], drive="torque", record=False)
    ref.run(120 * DT)
    fast = FastRobot(build_stack([p, p], [U1, taus], drive="torque", record=False))
    fast.run(120 * DT)
    for x, y in zip(_states([*ref.rods, *ref.platforms]), _states([*fast.rods, *fast.platforms])):
        assert np.abs(x - y).max() < TOL
    # step API: torque commands
    for robot in (ref, fast):
        robot.set_motor_angles(np.concatenate([U1, [0.0, 0.01, 0.0, -0.01]]))
        robot.step(0.001)
    for x, y in zip(_states([*ref.rods, *ref.platforms]), _states([*fast.rods, *fast.platforms])):
        assert np.abs(x - y).max() < TOL
    assert np.isnan(fast.state()["motor_angles_rad"][4:]).all()


# --------------------------------------------------------------------------------------------
# stacks: dynamic steady state against the static one
# --------------------------------------------------------------------------------------------
def test_dynamic_and_static_steady_states_of_a_stack_agree() -> None:
    # Coarse rods (8 elements), a short ramp and damping 20 1/s keep the relaxation under a
    # second of simulated time; gravity and a motor payload make the equilibrium non-trivial.
    # Bound: the dynamic run stops once the static residual is below TOL_STATIC_RESIDUAL
    # (1e-3 N) and speeds below 1e-4 m/s; over a lateral stiffness of the stack of at least
    # ~100 N/m (a guided rod bends at 12 EI / L^3 = 240 N/m, four per stage, two stages in
    # series plus the lower stage's tilt lever) that is <= 1e-5 m: accepted 2e-5 m, and
    # 2e-4 on rotation entries (2e-5 m over the 0.1 m rod length).
    from hsa_elastica.robots.stack_steady_state import solve_stack_steady_state
    from hsa_elastica.robots.steady_state import TOL_STATIC_RESIDUAL

    p = paper_robot_params()
    p = dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=8),
        simulation=dataclasses.replace(p.simulation, dt=4e-5, ramp_time=0.1, damping=20.0,
                                       rotational_damping=20.0, gravity=(0.0, 0.0, -9.81)),
    )
    kw = dict(motor_mass=0.05)
    static = solve_stack_steady_state([p, p], [U1, U2], method="static", **kw)
    dynamic = solve_stack_steady_state([p, p], [U1, U2], record=False, **kw)
    assert static.converged and static.method == "static" and static.stable
    assert dynamic.converged and dynamic.method == "dynamic"
    assert dynamic.residual_force_N < TOL_STATIC_RESIDUAL
    assert 0.1 < dynamic.settle_time_s < dynamic.sim_time_s < 3.1
    assert len(dynamic.segments) == 2 and dynamic.segments[1].rod_tip_positions_m.shape == (4, 3)
    for a, b in zip(dynamic.poses, static.poses):
        assert np.abs(a[0] - b[0]).max() < 2e-5
        assert np.abs(a[1] - b[1]).max() < 2e-4
    for a, b in zip(dynamic.relative_poses, static.relative_poses):
        assert _pose_gap(a, b) < 2e-5
    # the upper stage bent (U2) and rode the elongated lower stage
    assert np.hypot(*static.segments[1].platform_position_m[:2]) > 5e-3
    assert static.segments[1].platform_position_m[2] > 0.2
    with pytest.raises(ParameterError, match="method"):
        solve_stack_steady_state([p, p], [U1, U2], method="newton")
