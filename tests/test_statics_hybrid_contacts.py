"""Contacts in the Newton matrices from the contact law's tangent
(hsa_elastica/physics/point_tangent.py, scattered by ``statics_hybrid.joint_tangents``): the
implicit integrator's ``K_x + cv K_v`` against the forward differences of the whole dynamic
residual, on the paper robot with a floor, a sphere obstacle, a plane above its platform and a
free ball resting on the floor against its rods (every contact row kind: rod nodes on fixed
obstacles, the platform's rim points, the ball's support point, rod nodes on the ball); the
trajectories of the two Newton matrices; and the static solver's hybrid Jacobian with contacts
against central differences of the whole residual.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from hsa_elastica.engines import statics_hybrid
from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.implicit_kernels import Increment, dynamic_fd_jacobian, dynamic_forces
from hsa_elastica.engines.implicit_tangent import implicit_tangent_jacobian
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_contacts import contact_points, point_groups
from hsa_elastica.engines.statics_kernels import KIND_BODY_POS, KIND_BODY_ROT
from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    PlaneObstacle,
    SphereObstacle,
    paper_robot_params,
)
from hsa_elastica.physics.joint_tangent import BODY_POS, BODY_ROT, ELEMENT, NODE
from hsa_elastica.physics.point_tangent import (
    BODY_OBJECT,
    BODY_POINTS,
    ROD_FIXED,
    ROD_OBJECT,
    SPHERE_SUPPORT,
    row_kind,
)
from hsa_elastica.physics.contact_laws import CAPSULE, PLANE, SPHERE
from hsa_elastica.physics.tables import OP_CONTACT, OP_GRAVITY_ROD, ROD_ROD, Pose
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.compiled import ImplicitRobot
from hsa_elastica.robots.primitives import primitive_angles
from tests.test_statics_hybrid import _central

#: a law whose smoothing length (2 mm) puts every point of the scene within its reach at
#: millimetre gaps, stiff enough (1e5 N/m) that its blocks are of the rods' entries' order
LAW = ContactParams(stiffness=1e5, smoothing_length=2e-3, damping_ratio=0.5,
                    friction_coefficient=0.5, slip_velocity=1e-2)
# the paper robot at 4 elements: rod axes at (+-0.017, +-0.017) m, contact nodes at z = 0.025,
# 0.05, 0.075 m with contact radius 7.5 mm; the platform's top face at z = 0.103 m, rim 47.5 mm
FLOOR = 0.0155  # m: 2 mm below the rods' lowest contact nodes
BALL_R = 0.03  # m: its top 2.4 cm below the platform's east rim
ROLL = 0.2  # the floor's rolling resistance on the ball (rolling test)


def _params(integrator: str = "implicit", ball_at: Any = None):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=4),
                  simulation=p.simulation.replace(integrator=integrator, dt=2e-3,
                                                  gravity=(0.0, 0.0, -9.81)))
    west = np.array([-1.0, 1.0, 0.0]) / np.sqrt(2.0)
    obstacles = (
        PlaneObstacle(point=(0.0, 0.0, FLOOR), normal=(0.0, 0.0, 1.0), contact=LAW),
        # a sphere 2 mm off rod 1's mid node (rod nodes on a curved obstacle)
        SphereObstacle(center=tuple(np.array([-0.017, 0.017, 0.05]) + 0.0295 * west),
                       radius=0.02, contact=LAW),
        # a sphere 2 mm above the platform's west rim (its rim points on a curved obstacle)
        SphereObstacle(center=(-0.0475, 0.0, 0.115), radius=0.01, contact=LAW),
    )
    # the ball 1 mm above the floor and 2 mm off the top contact nodes of rods 0 and 3
    dx = np.sqrt((BALL_R + 0.0095) ** 2 - 0.017 ** 2 - (0.075 - FLOOR - BALL_R - 0.001) ** 2)
    ball = ObjectParams(radius=BALL_R, mass=0.02,
                        position=(0.017 + dx, 0.0, FLOOR + BALL_R + 0.001), contact=LAW)
    if ball_at is not None:  # (radius, x): a ball elsewhere on the floor
        ball = ObjectParams(radius=ball_at[0], mass=0.02, contact=LAW,
                            position=(ball_at[1], 0.0, FLOOR + ball_at[0] + 0.001))
    return p.replace(environment=EnvironmentParams(obstacles=obstacles, objects=(ball,)))


def _robot(jacobian: str = "tangent") -> ImplicitRobot:
    return ImplicitRobot(build_robot(_params(), [0.0] * 4), jacobian=jacobian)


def _deformed(e: ImplicitEngine, seed: int, velocity: float) -> None:
    """A random pose off the start (nodes and bodies 2e-4 m, rotations 2e-2 rad) with random
    velocities (``velocity`` rad/s; nodes and bodies 1/100 of it in m/s)."""
    rng = np.random.default_rng(seed)
    s = e.solver
    s.move(np.where(s.is_torque, 2e-2, 2e-4) * rng.standard_normal(s.n))
    e.start(np.zeros(s.n_motors), np.zeros(s.n_motors))
    e.v[:] = velocity * rng.standard_normal(e.n) * np.where(e._rot_rows, 1.0, 0.01)


def _matrices(e: ImplicitEngine, cv: float) -> tuple[np.ndarray, np.ndarray]:
    """``dF/dq + cv dF/dv`` by the tangents and by the whole residual's forward differences
    at the engine's state."""
    n, zero = e.n, np.zeros(e.solver.n_motors)
    args, aux, jw = e._model_args, e._aux, e._jw
    f, mass = np.zeros(n), np.zeros(n)
    q0 = Pose(*(np.array(a, copy=True) for a in e.model.state.pose))
    assert dynamic_forces(e.time, zero, zero, e.v.copy(), args, aux, f, mass)
    jw.fd.f0[:] = f
    dynamic_fd_jacobian(e.time, zero, zero, e.v.copy(), args, aux, cv, jw.pattern, jw.fd,
                        Increment(np.zeros(n), q0, jw.first))
    fd = jw.fd.data.copy()
    assert dynamic_forces(e.time, zero, zero, e.v.copy(), args, aux, f, mass)
    data = np.zeros_like(fd)
    assert e._tangent is not None
    implicit_tangent_jacobian(e.time, zero, zero, e.v.copy(), args, aux, cv, e._tangent, data)
    return data, fd


def _contact_columns(e: ImplicitEngine) -> list[int]:
    """The columns a contact point's block has entries in."""
    s, tan = e.solver, e._tangent
    assert tan is not None
    cols = set()
    for p in np.nonzero(tan.plan.tangent_ops[:, 0] == OP_CONTACT)[0]:
        for q in tan.plan.tangent_dst[p][tan.plan.tangent_dst[p] >= 0]:
            cols.add(int(np.searchsorted(s.indptr, q, side="right") - 1))
    return sorted(cols)


def _column_error(e: ImplicitEngine, cols: list[int], data: np.ndarray, fd: np.ndarray,
                  ca: float) -> float:
    """Largest difference of a column of ``cols`` relative to that column's largest entry of
    the Newton matrix, its inertia shift ``ca M`` included (what the factorisation sees)."""
    s = e.solver
    worst = 0.0
    for j in cols:
        sl = slice(s.indptr[j], s.indptr[j + 1])
        scale = max(np.abs(fd[sl]).max(), ca * e.mass[j])
        worst = max(worst, float(np.abs(data[sl] - fd[sl]).max() / scale))
    return worst


def test_every_contact_row_kind_is_in_the_scene_and_within_reach() -> None:
    """Each row kind has a point within 2.5 smoothing lengths of its obstacle (the law's
    stiffness there is above 0.07 k): the matrices below see every kind's block."""
    e = _robot().engine
    ids = e.model.tables.contacts.ids
    assert e.jacobian == "tangent"
    e.solver.evaluate(np.zeros(e.solver.n_motors))
    gaps = e.model.tables.contacts.output[:, 3, :]
    nearest: dict[int, float] = {}
    for i in range(ids.shape[0]):
        k = int(row_kind(ids, i))
        nearest[k] = min(nearest.get(k, np.inf), float(gaps[i, : ids[i, 2]].min()))
    # the platform's rims on the ball (BODY_OBJECT) are far apart here: their block is
    # checked with a ball on the platform (test_newton_matrix_with_a_ball_on_the_platform...)
    assert nearest.pop(BODY_OBJECT) > 10.0 * LAW.smoothing_length
    assert set(nearest) == {ROD_FIXED, BODY_POINTS, SPHERE_SUPPORT, ROD_OBJECT}
    assert max(nearest.values()) < 2.5 * LAW.smoothing_length, nearest


@pytest.mark.parametrize("velocity", [0.0, 1.0])
def test_newton_matrix_with_contacts_equals_the_differences(velocity: float) -> None:
    """Over the columns of the contacts' unknowns, the tangent Newton matrix against the
    whole residual's forward differences (1e-8 m / 1e-7 rad steps): at rest their own error
    (the law's curvature k / l = 5e7 N/m^2 times 1e-8 m is 0.5 N/m against entries of 1e4 to
    4e6 N/m; measured 4.4e-6 over 48 columns; bound 1e-4).  Moving (1 rad/s, 0.01 m/s: the
    contacts' friction and damping act) it leaves out the pose dependence of the dampers
    (module doc of implicit_tangent.py; measured 1.5e-3; bound 5e-2 as for the robot without
    contacts).  Taking the contact
    blocks out errs by more than 0.1: the check sees them."""
    robot = _robot()
    e = robot.engine
    _deformed(e, 5, velocity)
    cv = e.gamma / (e.beta * e.dt)
    ca = (1.0 - e.alpha_m) / ((1.0 - e.alpha_f) * e.beta * e.dt ** 2)
    data, fd = _matrices(e, cv)
    cols = _contact_columns(e)
    err = _column_error(e, cols, data, fd, ca)
    print("velocity", velocity, "error", err, "columns", len(cols))
    assert err < (1e-4 if velocity == 0.0 else 5e-2)
    _assert_contact_blocks_matter(e, cols, cv, ca)


def _assert_contact_blocks_matter(e: Any, cols: Any, cv: float, ca: float) -> None:
    """The Newton matrix without the contact rows' tangent blocks misses the differences by
    more than 0.1 over ``cols`` (the check above can fail); the engine's tangent put back."""
    tan = e._tangent
    assert tan is not None
    keep = tan.plan.tangent_ops[:, 0] != OP_CONTACT
    e._tangent = tan._replace(plan=tan.plan._replace(
        tangent_ops=np.ascontiguousarray(tan.plan.tangent_ops[keep]),
        tangent_dst=np.ascontiguousarray(tan.plan.tangent_dst[keep])))
    data, fd = _matrices(e, cv)
    assert _column_error(e, cols, data, fd, ca) > 0.1
    e._tangent = tan


def test_contact_velocity_tangent_equals_the_differences() -> None:
    """The velocity part alone over the contacts' columns (the matrices at ``2 cv`` less
    those at ``cv``: ``cv dF/dv``, the contacts' damping and friction with the dampers)
    against the differences'.  Their forward velocity step ``cv 1e-8 m`` = 1e-5 m/s against
    the friction's regularising slip velocity 1e-2 m/s truncates by about 1e-3 of an entry
    (measured 2.1e-3 of a column's largest entry, 5e-6 at rest where the friction is
    linear; bound 1e-2); without the contacts' velocity
    blocks the part errs by more than 0.1."""
    e = _robot().engine
    _deformed(e, 7, 1.0)
    cv = e.gamma / (e.beta * e.dt)
    cols = _contact_columns(e)

    def velocity_part_error() -> float:
        t1, f1 = _matrices(e, cv)
        t2, f2 = _matrices(e, 2 * cv)
        vt, vf = t2 - t1, f2 - f1
        worst = 0.0
        for j in cols:
            sl = slice(e.solver.indptr[j], e.solver.indptr[j + 1])
            worst = max(worst, float(np.abs(vt[sl] - vf[sl]).max() / np.abs(vf[sl]).max()))
        return worst

    err = velocity_part_error()
    print("velocity part error", err)
    assert err < 1e-2
    tan = e._tangent
    assert tan is not None
    plan = tan.plan
    blocks = plan.tangent_dst.copy()
    blocks[plan.tangent_ops[:, 0] == OP_CONTACT] = -1  # the contacts' blocks scatter nowhere
    e._tangent = tan._replace(plan=plan._replace(tangent_dst=blocks))
    assert velocity_part_error() > 0.1


def _push_scene():  # type: ignore[no-untyped-def]
    """``scenarios/push_object.py``'s scene (the robot bends east into a ball on a rough
    floor; its soft law, k = 1e3 N/m, l = 1e-5 m) on the implicit integrator at dt = 2 ms."""
    path = Path(__file__).resolve().parents[1] / "scenarios" / "push_object.py"
    spec = importlib.util.spec_from_file_location("push_object_scene", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    params, angles = module.scene_params(1.0)
    return params.replace(simulation=params.simulation.replace(integrator="implicit",
                                                               dt=2e-3)), angles


def test_pushing_trajectory_agrees_with_the_differences() -> None:
    """1.2 s of the push scene (the platform's rim knocks the ball at about 0.7 s and rolls it
    about 4 cm) on either Newton matrix, Newton iterated to tight tolerances (1e-9 N, 1e-11
    m): the same residual's solution, so the states agree to the tolerances' accumulation
    (measured 2.7e-8 m rods, 2.6e-8 m bodies; bound 1e-5 m)."""
    params, angles = _push_scene()
    tight: dict[str, Any] = dict(tol_force=1e-9, tol_torque=1e-11, tol_position=1e-11,
                                 tol_rotation=1e-9)
    out = {}
    for jac in ("tangent", "fd"):
        robot = ImplicitRobot(build_robot(params, angles), jacobian=jac, **tight)
        assert robot.engine.jacobian == jac
        ball = np.array(robot.engine.model.body_arrays.position[:, -1], copy=True)
        robot.run(1.2)
        m = robot.engine.model
        out[jac] = (np.array(m.rod_arrays.position, copy=True),
                    np.array(m.body_arrays.position, copy=True))
        travel = np.linalg.norm(m.body_arrays.position[:, -1] - ball)
        assert travel > 1e-3, travel  # the ball was pushed
    d_rod = np.abs(out["tangent"][0] - out["fd"][0]).max()
    d_body = np.abs(out["tangent"][1] - out["fd"][1]).max()
    print("rods", d_rod, "bodies", d_body)
    assert d_rod < 1e-5 and d_body < 1e-5


# --------------------------------------------------------------------------------------------
# the static solver
# --------------------------------------------------------------------------------------------
def _static_params():  # type: ignore[no-untyped-def]
    p = _params("implicit")
    env = dataclasses.replace(p.environment, objects=())  # statics refuses free objects
    return p.replace(environment=env)


def _remainder_colours(solver: StaticSolver) -> int:
    """Colours of the hybrid Jacobian's remainder (its differenced part)."""
    assert solver.hybrid is not None
    return int(solver.hybrid[1][0].color_ptr.shape[0] - 1)


def test_static_hybrid_jacobian_with_contacts_matches_central_differences() -> None:
    """The static solver's hybrid Jacobian with the contacts' tangents (no remainder colour
    left: gravity only) against central differences of the whole residual at a deformed
    pose: within 1e-6 of a column's norm as without contacts (the law's third derivative
    k / l^2 = 2.5e10 N/m^3 times (1e-6 m)^2 is 2.5e-2 N/m of truncation against columns of
    1e4 N/m and more; measured 4e-9)."""
    model = compile_simulator(build_robot(_static_params(), [0.0] * 4).simulator)
    solver = StaticSolver(model, jacobian="tangent")
    solver.jit = True
    assert solver.hybrid is not None and _remainder_colours(solver) == 0
    rng = np.random.default_rng(3)
    solver.move(np.where(solver.is_torque, 2e-2, 2e-4) * rng.standard_normal(solver.n))
    a = np.array([0.4, -0.3, 0.6, 0.2])
    hybrid = solver.jacobian(a, solver.evaluate(a).copy()).toarray()
    central = _central(solver, a)
    norm = np.linalg.norm(central, axis=0)
    print("static error", np.max(np.abs(hybrid - central) / norm))
    assert np.max(np.abs(hybrid - central) / norm) < 1e-6


def test_static_equilibrium_with_contacts_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equilibrium of bend east with the contacts by their tangents and by the
    remainder's differences (:data:`statics_hybrid.CONTACT_TANGENT` off): the same residual's
    root, within the solver's tolerance (1e-9 N on the residual: 1e-9 m at the rods'
    stiffness; measured 1e-15; bound 1e-8 m)."""
    p = _static_params()
    a = np.asarray(primitive_angles("bend_east", 0.5, p))
    out = {}
    for exact in (True, False):
        monkeypatch.setattr(statics_hybrid, "CONTACT_TANGENT", exact)
        solver = StaticSolver(compile_simulator(build_robot(p, [0.0] * 4).simulator))
        assert solver.hybrid is not None
        assert (_remainder_colours(solver) == 0) == exact
        solver.solve(a)
        out[exact] = np.concatenate([x.ravel() for x in solver.pose()])
    print("static difference", np.abs(out[True] - out[False]).max())
    assert np.abs(out[True] - out[False]).max() < 1e-8


# --------------------------------------------------------------------------------------------
# rod against rod, row by row
# --------------------------------------------------------------------------------------------
#: a rod-rod law reaching across the robot's 19 mm gaps between neighbouring rods (its 5 mm
#: smoothing length: g / l = 3.8, a pair's stiffness k sigmoid(-3.8) = 2e3 N/m, of the rods'
#: entries' order)
ROD_LAW = ContactParams(stiffness=1e5, smoothing_length=5e-3, damping_ratio=0.5,
                        friction_coefficient=0.5, slip_velocity=1e-2)


def _with_rod_contact(p):  # type: ignore[no-untyped-def]
    return p.replace(environment=dataclasses.replace(p.environment, rod_contact=ROD_LAW))


def test_static_hybrid_jacobian_with_rod_contacts_matches_central_differences(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Plane, spheres and the six rod-rod rows: every contact by its tangent (no remainder
    colour), the hybrid Jacobian against central differences of the whole residual at a
    deformed pose within 1e-6 of a column's norm (truncation as in the test above; measured
    4.5e-9); 48 remainder colours with the contacts' tangents off; without the rod-rod pairs' tangents it errs by more than 0.1 (measured 0.49).
    With the contacts' tangents off the remainder differences them all (the Jacobian before
    rod-rod rows had a tangent: one row without a block sent every contact there)."""
    p = _with_rod_contact(_static_params())
    solver = StaticSolver(compile_simulator(build_robot(p, [0.0] * 4).simulator))
    solver.jit = True
    assert solver.hybrid is not None and _remainder_colours(solver) == 0
    plan = solver.hybrid[0]
    ids = solver.tables.contacts.ids
    assert plan.pairs.shape[0] == 6 and np.all(ids[plan.pairs, 1] == ROD_ROD)
    rng = np.random.default_rng(3)
    solver.move(np.where(solver.is_torque, 2e-2, 2e-4) * rng.standard_normal(solver.n))
    a = np.array([0.4, -0.3, 0.6, 0.2])
    central = _central(solver, a)
    norm = np.linalg.norm(central, axis=0)

    def error() -> float:
        jac = solver.jacobian(a, solver.evaluate(a).copy()).toarray()
        return float(np.max(np.abs(jac - central) / norm))

    err = error()
    print("static error with rod contacts", err)
    assert err < 1e-6
    solver.hybrid = (plan._replace(pairs=np.zeros(0, np.int64)),) + tuple(solver.hybrid[1:])
    assert error() > 0.1
    monkeypatch.setattr(statics_hybrid, "CONTACT_TANGENT", False)
    off = StaticSolver(compile_simulator(build_robot(p, [0.0] * 4).simulator))
    print("remainder colours, contacts differenced:", _remainder_colours(off))
    assert _remainder_colours(off) > 0


@pytest.mark.parametrize("velocity", [0.0, 1.0])
def test_newton_matrix_with_rod_contacts_equals_the_differences(velocity: float) -> None:
    """The implicit integrator's tangent Newton matrix with every contact row kind and the
    rod-rod rows, over the rods' node columns, against the whole residual's forward
    differences (bounds as for the contacts above: 1e-4 at rest, 5e-2 moving; measured
    2.1e-6 and 6.1e-4 over the 48 node columns); without the rod-rod pairs' tangents the
    error is above 0.1.  (Before the rod-rod rows had a tangent, such a model took the whole
    residual's differences.)"""
    e = ImplicitRobot(build_robot(_with_rod_contact(_params()), [0.0] * 4)).engine
    tan = e._tangent
    assert tan is not None and tan.plan.pairs.shape[0] == 6
    _deformed(e, 5, velocity)
    cv = e.gamma / (e.beta * e.dt)
    ca = (1.0 - e.alpha_m) / ((1.0 - e.alpha_f) * e.beta * e.dt ** 2)
    cols = sorted(int(j) for j in tan.plan.node_unknown.ravel() if j >= 0)
    data, fd = _matrices(e, cv)
    err = _column_error(e, cols, data, fd, ca)
    print("velocity", velocity, "rod-rod error", err, "columns", len(cols))
    assert err < (1e-4 if velocity == 0.0 else 5e-2)
    e._tangent = tan._replace(plan=tan.plan._replace(pairs=np.zeros(0, np.int64)))
    data, fd = _matrices(e, cv)
    assert _column_error(e, cols, data, fd, ca) > 0.1
    e._tangent = tan


def test_every_contact_row_takes_its_tangent() -> None:
    """A program of six contact rows (ids as ``ContactTable`` lays them out: a rod's nodes on
    a plane, a body's rim points, a sphere's support point, a rod on a ``Cylinder`` object --
    a capsule about the object --, a rod against a rod, a body's points on a sphere object):
    the points of the five with a block become scatter operations (3 + 2 + 1 + 3 + 2
    points), the rod-rod row a pair row, and no contact row is left for the remainder's
    differences (only gravity's operation)."""
    ids = np.array([[0, 0, 3, PLANE, -1],  # rod nodes 0..2 on a plane
                    [0, 1, 2, SPHERE, -1],  # body 0's two rim points on a sphere obstacle
                    [1, 2, 1, PLANE, -1],  # sphere body 1's support point on a plane
                    [4, 0, 3, CAPSULE, 2],  # rod nodes 4..6 on the Cylinder object (body 2)
                    [0, ROD_ROD, 4, 4, 4],
                    [0, 1, 2, SPHERE, 1]], dtype=np.int64)  # body 0's points on sphere body 1
    contacts = SimpleNamespace(ids=ids, points=np.zeros((6, 11, 4)))
    solver = SimpleNamespace(tables=SimpleNamespace(contacts=contacts))
    program = np.array([[OP_CONTACT, i] for i in range(6)] + [[OP_GRAVITY_ROD, 0]],
                       dtype=np.int64)
    ops, pairs, done = contact_points(solver, program, True)
    assert [row_kind(ids, i) for i in range(6)] == [ROD_FIXED, BODY_POINTS, SPHERE_SUPPORT,
                                                     ROD_OBJECT, -1, BODY_OBJECT]
    # row * width + point, width 4
    assert ops[:, 1].tolist() == [0, 1, 2, 4, 5, 8, 12, 13, 14, 20, 21]
    assert pairs.tolist() == [4]
    assert done.tolist() == [True, True, True, True, True, True, False]
    # the body-object block: the body's own unknowns in the NODE / ELEMENT slots
    assert point_groups(contacts, 21) == [(NODE, BODY_POS, 0), (ELEMENT, BODY_ROT, 0),
                                          (BODY_POS, BODY_POS, 1), (BODY_ROT, BODY_ROT, 1)]
    ops, pairs, done = contact_points(solver, program, False)
    assert ops.shape == (0, 2) and pairs.shape == (0,) and not done.any()


# --------------------------------------------------------------------------------------------
# a ball carried on the platform's rim
# --------------------------------------------------------------------------------------------
PLATFORM_TOP, PLATFORM_RIM = 0.103, 0.0475  # m (module's robot at 4 elements)


def _platform_ball_robot() -> ImplicitRobot:
    """The robot of :func:`_params` with the floor and the sphere beside rod 1 only, and a
    free ball (radius 6 cm, 20 g) resting on the platform's top rim with a gap of 1 mm (half a
    smoothing length; ``build_robot`` adds the platform's ``ObjectContact`` on it)."""
    p = _params()
    rb = 0.06
    z = PLATFORM_TOP + np.sqrt((rb + 0.001) ** 2 - PLATFORM_RIM ** 2)
    ball = ObjectParams(radius=rb, mass=0.02, position=(0.0, 0.0, z), contact=LAW)
    env = EnvironmentParams(obstacles=p.environment.obstacles[:2], objects=(ball,))
    return ImplicitRobot(build_robot(p.replace(environment=env), [0.0] * 4))


@pytest.mark.parametrize("velocity", [0.0, 1.0])
def test_newton_matrix_with_a_ball_on_the_platform_equals_the_differences(
        velocity: float) -> None:
    """The platform's rim points on the free ball (row kind ``BODY_OBJECT``: a block coupling
    two bodies) in the implicit Newton matrix over the contacts' columns, against the whole
    residual's forward differences; bounds as for the other contacts (1e-4 at rest, 5e-2
    moving); without the contact blocks the error exceeds 0.1."""
    e = _platform_ball_robot().engine
    ids = e.model.tables.contacts.ids
    rows = [i for i in range(ids.shape[0]) if row_kind(ids, i) == BODY_OBJECT]
    assert len(rows) == 1 and e.jacobian == "tangent"
    e.solver.evaluate(np.zeros(e.solver.n_motors))
    gap = e.model.tables.contacts.output[rows[0], 3, : ids[rows[0], 2]]
    assert gap.min() < 1.0 * LAW.smoothing_length  # the top rim within reach
    cv, ca = _deformed_error(e, velocity, "platform-ball")
    # without the platform-ball blocks alone, the ball's and the platform's columns miss
    s, tan = e.solver, e._tangent
    assert tan is not None
    bodies = (int(ids[rows[0], 0]), int(ids[rows[0], 4]))
    own = [j for j in range(s.n) if s.kind[j] in (KIND_BODY_POS, KIND_BODY_ROT)
           and int(s.index[j]) in bodies]
    width = e.model.tables.contacts.points.shape[2]
    keep = ~((tan.plan.tangent_ops[:, 0] == OP_CONTACT)
             & (tan.plan.tangent_ops[:, 1] // width == rows[0]))
    e._tangent = tan._replace(plan=tan.plan._replace(
        tangent_ops=np.ascontiguousarray(tan.plan.tangent_ops[keep]),
        tangent_dst=np.ascontiguousarray(tan.plan.tangent_dst[keep])))
    data, fd = _matrices(e, cv)
    without = _column_error(e, own, data, fd, ca)
    print("without the platform-ball blocks", without, "over", len(own), "columns")
    assert without > 0.1


# --------------------------------------------------------------------------------------------
# a free Cylinder touched by the rods; a ball rolling with resistance
# --------------------------------------------------------------------------------------------
CYL_R, CYL_L = 0.02, 0.06  # m


def _cylinder_robot(objects: bool = True):  # type: ignore[no-untyped-def]
    """The robot of :func:`_params` without the ball, with a free ``Cylinder`` (radius 2 cm,
    6 cm long, 10 g, axis along y) lying 1 mm east of the east rods' mid contact nodes (its
    side within half a smoothing length of both) and touched by every rod (end nodes left
    out, as the builders do)."""
    from hsa_elastica.physics.object_contact import add_object_contact
    from hsa_elastica.robots.environment import solid_cylinder

    p = _params()
    p = p.replace(environment=dataclasses.replace(p.environment, objects=()))
    robot = build_robot(p, [0.0] * 4, finalize=False)
    x = 0.017 + 0.0075 + 0.001 + CYL_R
    density = 0.01 / (np.pi * CYL_R**2 * CYL_L)
    cyl = solid_cylinder(np.array([x, -0.5 * CYL_L, 0.05]), np.array([0.0, 1.0, 0.0]),
                         np.array([0.0, 0.0, 1.0]), CYL_L, CYL_R, density)
    robot.simulator.append(cyl)
    for rod in robot.rods:
        add_object_contact(robot.simulator, rod, cyl, LAW, nodes=(1, -1))
    robot.finalize()
    return robot


def _without_capsule_tangents(monkeypatch: pytest.MonkeyPatch) -> None:
    """``contact_points`` as before the capsule had a point block: its rows (an object's
    capsule) left to the remainder's differences."""
    real = statics_hybrid.contact_points

    def before(solver, program, enabled):  # type: ignore[no-untyped-def]
        ops, pairs, done = real(solver, program, enabled)
        c = solver.tables.contacts
        width = int(c.points.shape[2])
        rows = ops[:, 1] // width
        capsule = (c.ids[rows, 4] >= 0) & (c.ids[rows, 3] == CAPSULE)
        done = done & ~np.isin(program[:, 1], rows[capsule])
        return np.ascontiguousarray(ops[~capsule]), pairs, done

    monkeypatch.setattr(statics_hybrid, "contact_points", before)


def test_a_cylinder_object_leaves_no_contact_row_to_the_differences(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a ``Cylinder`` touched by the rods every contact row has its tangent: the static
    solver's hybrid Jacobian has no remainder colour (gravity only) and the implicit
    integrator keeps its tangent Newton matrix; with the capsule's rows differenced as before
    its tangent the static Jacobian took 42 colours of differences (measured) and the implicit
    integrator fell back to the whole residual's differences."""
    robot = _cylinder_robot()
    model = compile_simulator(robot.simulator)
    ids = model.tables.contacts.ids
    rows = [i for i in range(ids.shape[0]) if ids[i, 4] >= 0]
    assert len(rows) == 4 and all(ids[i, 3] == CAPSULE for i in rows)
    solver = StaticSolver(model, jacobian="tangent")
    _, _, done = contact_points(solver, solver.tables.sync_program, True)
    program = solver.tables.sync_program
    assert done[program[:, 0] == OP_CONTACT].all()
    assert _remainder_colours(solver) == 0
    assert ImplicitRobot(_cylinder_robot()).engine.jacobian == "tangent"
    _without_capsule_tangents(monkeypatch)
    before = StaticSolver(compile_simulator(_cylinder_robot().simulator), jacobian="tangent")
    print("remainder colours with the capsule differenced:", _remainder_colours(before))
    assert _remainder_colours(before) > 0
    assert ImplicitRobot(_cylinder_robot()).engine.jacobian == "fd"


@pytest.mark.parametrize("velocity", [0.0, 1.0])
def test_newton_matrix_with_a_cylinder_equals_the_differences(velocity: float) -> None:
    """The implicit Newton matrix over the contacts' columns (the cylinder's among them)
    against the whole residual's forward differences, bounds as for the other contacts
    (1e-4 at rest, 5e-2 moving; measured 4.3e-6 and 1.5e-3 over 48 columns; the cylinder's
    side 1 mm from the east rods' mid nodes, gap / l = 0.5); without the contact blocks the
    error exceeds 0.1."""
    e = ImplicitRobot(_cylinder_robot()).engine
    assert e._tangent is not None
    cv, ca = _deformed_error(e, velocity, "cylinder")
    _assert_contact_blocks_matter(e, _contact_columns(e), cv, ca)


def _deformed_error(e: Any, velocity: float, what: str) -> tuple[float, float]:
    """The engine moved to a random pose (seed 5) at ``velocity``: the Newton matrix over the
    contacts' columns within 1e-4 (at rest) / 5e-2 (moving) of the whole residual's
    differences; returns the integrator's ``(cv, ca)``."""
    _deformed(e, 5, velocity)
    cv = e.gamma / (e.beta * e.dt)
    ca = (1.0 - e.alpha_m) / ((1.0 - e.alpha_f) * e.beta * e.dt ** 2)
    cols = _contact_columns(e)
    data, fd = _matrices(e, cv)
    err = _column_error(e, cols, data, fd, ca)
    print("velocity", velocity, what, "error", err, "columns", len(cols))
    assert err < (1e-4 if velocity == 0.0 else 5e-2)
    return cv, ca


def test_newton_matrix_with_rolling_resistance_equals_the_differences() -> None:
    """The scene of :func:`_params` with the floor's rolling resistance ``c_rr = 0.2`` on a
    ball of 5 cm away from the robot, moving (the ball rolls and spins: its couple acts), over the ball's six columns:
    the tangent Newton matrix against the whole residual's forward differences (their
    truncation over the friction's and the couple's smoothing, ``v_s`` = 1 cm/s and ``v_s /
    R`` = 0.2 rad/s: measured 1.4e-4 of a column; bound 1e-3); with the couple's tangent left
    out (the same scene's matrix at ``c_rr = 0``) it misses by more than 1e-2 (measured
    3.2e-2)."""
    p = _params(ball_at=(0.05, 0.12))  # 5 cm: 3 cm off the platform, 5 cm off the rods
    floor = p.environment.obstacles[0]
    floor = floor.replace(contact=floor.contact.replace(rolling_resistance=ROLL))
    p = p.replace(environment=dataclasses.replace(
        p.environment, obstacles=(floor,) + tuple(p.environment.obstacles[1:])))
    e = ImplicitRobot(build_robot(p, [0.0] * 4)).engine
    assert e._tangent is not None
    _deformed(e, 5, 1.0)
    cv = e.gamma / (e.beta * e.dt)
    ca = (1.0 - e.alpha_m) / ((1.0 - e.alpha_f) * e.beta * e.dt ** 2)
    s = e.solver
    ball = int(e.model.tables.contacts.ids[-1, 4])
    cols = [j for j in range(s.n) if s.kind[j] in (KIND_BODY_POS, KIND_BODY_ROT)
            and s.index[j] == ball]
    assert len(cols) == 6
    data, fd = _matrices(e, cv)
    err = _column_error(e, cols, data, fd, ca)
    print("rolling error", err)
    assert err < 1e-3
    c = e.model.tables.contacts
    rows = [i for i in range(c.ids.shape[0]) if c.params[i, 14] > 0.0]
    assert len(rows) == 1
    c.params[rows[0], 14] = 0.0
    without = _matrices(e, cv)[0]
    c.params[rows[0], 14] = ROLL
    print("without the couple's tangent", _column_error(e, cols, without, fd, ca))
    assert _column_error(e, cols, without, fd, ca) > 1e-2


def test_a_rolling_sphere_slows_at_five_sevenths_of_c_rr_g_on_the_implicit_engine() -> None:
    """``tests/test_contact_objects.py``'s rolling sphere (``c_rr = 0.05``, 0.3 m/s, ``mu =
    0.5``) on the implicit integrator (``dt`` = 1 ms: 11 steps per period of the
    sphere on the floor's contact spring), whose Newton matrix takes the rolling couple's
    tangent: the speed's slope over 0.1-0.4 s is ``-(5/7) c_rr g`` within 2 % as on the
    explicit step (measured 0.35055 against 0.35036 m/s^2)."""
    from elastica.external_forces import GravityForces

    from hsa_elastica.physics.contact import add_contact
    from tests.test_contact_objects import R_S, G, _floor, _rod, _Sim, _sphere

    v0, crr, dt = 0.3, 0.05, 1e-3
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, R_S])
    sphere.velocity_collection[0, 0] = v0
    sphere.omega_collection[1, 0] = v0 / R_S
    sim.append(sphere)
    sim.add_forcing_to(sphere).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    floor = _floor(mu=0.5)
    add_contact(sim, sphere, floor.replace(contact=floor.contact.replace(rolling_resistance=crr)))
    sim.append(_rod([0.0, 1.0, 0.5]))  # the compiled model needs a rod: one far away, at rest
    sim.finalize()
    engine = ImplicitEngine(compile_simulator(sim), dt, dt_table=dt)
    assert engine.jacobian == "tangent"
    v, t = [], 0.0
    for _ in range(int(round(0.4 / dt))):
        engine.run_steps(1, t)
        t += dt
        v.append(float(sphere.velocity_collection[0, 0]))
    times = (np.arange(len(v)) + 1) * dt
    window = times >= 0.1
    slope = np.polyfit(times[window], np.array(v)[window], 1)[0]
    print("implicit deceleration", -slope, "closed form", 5.0 / 7.0 * crr * G)
    assert -slope == pytest.approx(5.0 / 7.0 * crr * G, rel=0.02)
