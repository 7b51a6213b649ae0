"""Static equilibrium solver: residual of settled dynamics, static = dynamic,
the buckled twist branch, a closed-form elongation and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_linalg import BorderedBandSolver
from hsa_elastica.params import ParameterError, RobotParams, paper_robot_params
from hsa_elastica.robots.builders import build_fast_robot, build_robot
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.statics_api import (
    nearest_neighbour_order,
    solve_static,
    solve_static_batch,
    static_residual,
)
from hsa_elastica.robots.steady_state import solve_steady_state


def _tilt_deg(quat: np.ndarray) -> float:
    x, y, z, w = quat
    r22 = 1.0 - 2.0 * (x * x + y * y)
    return math.degrees(math.acos(max(-1.0, min(1.0, r22))))


def _angle_between_deg(q1: np.ndarray, q2: np.ndarray) -> float:
    d = abs(float(np.dot(q1, q2)))
    return math.degrees(2.0 * math.acos(min(1.0, d)))


def test_residual_small_at_dynamically_settled_pose() -> None:
    # After the ramp (0.5 s) and 0.7 s of damped settling every node moves slower than
    # ~1e-4 m/s: the net force left on a node is its damping + inertia, c m v ~ 50 1/s *
    # 15 g (platform) * 1e-4 m/s ~ 1e-4 N, so the static residual must be below ~1e-3 N,
    # while the same angles applied to the straight robot leave hundreds of N.
    p = paper_robot_params()
    angles = [2.0, -1.0, 1.5, -0.5]
    robot = build_fast_robot(p, angles, record=False)
    assert static_residual(robot.model, angles) > 10.0  # straight pose, twisted bases
    robot.run(1.2)
    assert static_residual(robot) < 1e-3


def test_static_equals_dynamic_on_primitives() -> None:
    # Same discrete model and equations, only the route differs: the dynamics stop when all
    # speeds are < 1e-4 m/s, which leaves the pose ~1e-7 m from rest; 0.05 mm / 0.05 deg are
    # the agreement targets.
    p = RobotParams()
    for name, mag in (("bend_east", 1.0), ("elongation", 0.5)):
        a = primitive_angles(name, mag, p)
        st = solve_static(p, a)
        dyn = solve_steady_state(p, a, record=False)
        assert st.method == "static" and st.converged and st.stable and dyn.converged
        assert np.max(np.abs(st.platform_position_m - dyn.platform_position_m)) < 5e-5, name
        assert _angle_between_deg(st.platform_quaternion_xyzw, dyn.platform_quaternion_xyzw) < 0.05


def test_buckled_twist_on_stable_branch_as_dynamics() -> None:
    # twist_ccw at full magnitude: the symmetric pose (platform on the axis) is an equilibrium
    # with a negative eigenvalue of M^-1 K; the dynamics settle ~17 deg tilted, and so must
    # the static solver.
    p = RobotParams()
    a = primitive_angles("twist_ccw", 1.0, p)
    solver = StaticSolver(compile_simulator(build_robot(p, [0.0] * 4, ramp=0.0, record=False).simulator))
    sym = solver.solve(a, start=np.zeros(4), steps=4, check_stability=False)
    assert sym.converged
    assert np.hypot(*solver.model.body_arrays.position[:2, 0]) < 1e-9  # the symmetric pose
    lam, _ = solver.stability(a, vectors=False)
    assert lam < 0.0
    # "+y" picks the +y mirror pose without running the dynamics; the dynamics reach one of
    # the two mirror poses (which one depends on round-off of the symmetric start), the other
    # is the first turned by 180 deg about the robot axis z (x, y -> -x, -y)
    st = solve_static(p, a, mirror_branch="+y")
    assert st.method == "static" and st.stable
    assert 15.0 < _tilt_deg(st.platform_quaternion_xyzw) < 19.0
    dyn = solve_steady_state(p, a, record=False)
    pos, quat = dyn.platform_position_m.copy(), np.asarray(dyn.platform_quaternion_xyzw, float)
    if pos[1] < 0.0:
        pos[:2] *= -1.0
        x, y, z, w = quat  # q -> q_z(pi) q q_z(pi)^-1: the mirror turns the platform frame too
        quat = np.array([-x, -y, z, w])
    assert np.max(np.abs(st.platform_position_m - pos)) < 5e-5
    assert _angle_between_deg(st.platform_quaternion_xyzw, quat) < 0.05


def _elongation_by_hand(p: RobotParams, phi: float) -> float:
    """Platform rise [m] of the paper robot under pure elongation (no gravity), by hand.

    No axial load acts, so every element sits at its auxetic rest length and the rise is
    ``sum(l_i - l0) = C_eps * sum(theta_v)`` (Eq. 3 with the zero-padded element average,
    which conserves the sum; ``theta_v`` the twist across Voronoi domain ``v``).  The base
    twist ``phi`` is shared, in series, by the ``n - 1`` Voronoi twist springs of the rod
    (couple ``B_z theta_v / l0``: the twist rigidity is scaled with the rest Voronoi length,
    so the spring stays the printed one) and the joint's torsion spring ``k_tau`` (Eq. 7;
    the platform does not turn, the R and L rods cancel):
    ``T ((n - 1) l0 / B_z + 1 / k_tau) = phi``.
    """
    rod = p.rod
    n = rod.n_elements
    l0 = rod.length / n
    torque = phi / ((n - 1) * l0 / rod.twist_rigidity + 1.0 / p.joint.k_tau)
    theta_rod = torque * (n - 1) * l0 / rod.twist_rigidity
    return float(rod.C_eps * theta_rod)


def test_pure_elongation_matches_hand_calculation() -> None:
    p = paper_robot_params()
    phi = 0.75 * math.pi
    a = np.array(p.handedness, dtype=float) * phi
    z0 = solve_static(p, np.zeros(4)).platform_position_m[2]
    res = solve_static(p, a)
    rise = res.platform_position_m[2] - z0
    expected = _elongation_by_hand(p, phi)
    # the hand calculation is exact for this discrete model; 1e-7 m covers the solver's
    # residual tolerance (1e-8 N on axial stiffnesses ~1e4 N/m -> 1e-12 m) with a wide margin,
    # and is 300x smaller than the joint-compliance correction it checks (phi B_z/(L k_tau) C_eps)
    assert abs(rise - expected) < 1e-7
    assert abs(rise - p.rod.C_eps * phi) > 1e-4  # the joint compliance is visible
    np.testing.assert_allclose(res.platform_position_m[:2], 0.0, atol=1e-9)


@pytest.mark.parametrize(
    "angles, needle",
    [([0.1, 0.2, float("nan"), 0.0], "motor_angles"), ([0.1, 0.2, 0.3], "motor_angles")],
)
def test_bad_angles_named(angles: list[float], needle: str) -> None:
    with pytest.raises(ParameterError, match=needle):
        solve_static(RobotParams(), angles)


def test_batch_bad_row_named_and_matches_single() -> None:
    p = RobotParams()
    with pytest.raises(ParameterError, match=r"angles_array \(row 1, angle 1\)"):
        solve_static_batch(p, [[0.0] * 4, [0.0, float("inf"), 0.0, 0.0]])
    rows = np.array([[1.0, -0.5, 0.5, -1.0], [1.2, -0.4, 0.6, -1.1]])
    batch = solve_static_batch(p, rows)
    single = solve_static(p, rows[1])
    # two Newton routes to one equilibrium: equal to the solver tolerance (~1e-12 m)
    np.testing.assert_allclose(batch[1].platform_position_m, single.platform_position_m, atol=1e-9)
    # the nearest-neighbour tour solves row 1 first here; results still come in row order
    given = solve_static_batch(p, rows[::-1], order="given")
    np.testing.assert_allclose(given[0].platform_position_m, batch[1].platform_position_m,
                               atol=1e-9)
    assert list(nearest_neighbour_order(np.array([[3.0], [0.5], [2.0], [0.1]]))) == [3, 1, 2, 0]


def test_bordered_band_lu_solves_arrow_systems() -> None:
    # Three banded blocks (kl = 2, ku = 3) coupled only through a 4-unknown border, random
    # entries, unknowns interleaved in the global numbering: the solution must satisfy the
    # system to round-off (checked against the matrix itself, and numpy's dense solver).
    rng = np.random.default_rng(7)
    nblk, m, nb = 3, 20, 4
    n = nblk * m + nb
    perm = rng.permutation(n)  # global position of (block unknowns..., border)
    a = np.zeros((n, n))
    for k in range(nblk):
        for i in range(m):
            for j in range(max(0, i - 2), min(m, i + 4)):
                a[perm[k * m + i], perm[k * m + j]] = rng.standard_normal()
            a[perm[k * m + i], perm[k * m + i]] += 8.0
        for i in (m - 2, m - 1):  # the rod ends touch the body
            for b in range(nb):
                a[perm[k * m + i], perm[nblk * m + b]] = rng.standard_normal()
                a[perm[nblk * m + b], perm[k * m + i]] = rng.standard_normal()
    for b in range(nb):
        for c in range(nb):
            a[perm[nblk * m + b], perm[nblk * m + c]] = rng.standard_normal() + 8.0 * (b == c)
    csc = sp.csc_matrix(a)
    csc.sort_indices()
    border = np.zeros(n, dtype=bool)
    border[perm[nblk * m:]] = True
    solver = BorderedBandSolver(csc.indptr.astype(np.int64), csc.indices.astype(np.int64), border)
    assert sorted(len(idx) for idx, _, _ in solver.blocks) == [m] * nblk
    rhs = rng.standard_normal(n)
    x = solver.factor(csc.data).solve(rhs)
    np.testing.assert_allclose(a @ x, rhs, atol=1e-10)
    np.testing.assert_allclose(x, np.linalg.solve(a, rhs), atol=1e-10)
    shift = rng.uniform(0.0, 3.0, n)
    x = solver.factor(csc.data, shift).solve(rhs)
    np.testing.assert_allclose((a - np.diag(shift)) @ x, rhs, atol=1e-10)


@pytest.mark.parametrize("variant", ["gravity_sideways", "three_rods"])
def test_static_equals_dynamic_other_robots(variant: str) -> None:
    # gravity in another direction than the rods, and another rod count: same agreement
    # bound as above (issue targets 0.05 mm / 0.05 deg)
    p0 = RobotParams()
    if variant == "gravity_sideways":
        p = p0.replace(simulation=p0.simulation.replace(gravity=(9.81, 0.0, 0.0)))
        a = [1.0, -1.0, 1.0, -1.0]
    else:
        p = p0.replace(n_rods=3, handedness=(1, -1, 1))
        a = [2.0, -1.0, 0.5]
    st = solve_static(p, a)
    dyn = solve_steady_state(p, a, record=False)
    assert st.method == "static" and st.stable and dyn.converged
    assert np.max(np.abs(st.platform_position_m - dyn.platform_position_m)) < 5e-5
    assert _angle_between_deg(st.platform_quaternion_xyzw, dyn.platform_quaternion_xyzw) < 0.05


def test_one_off_evaluations_are_the_compiled_kernels_bit_for_bit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that only checks a pose runs residual / Jacobian / increment kernels that are
    not compiled yet as their Python functions (a shorter cold start): the same IEEE operations,
    so the residual, the Jacobian and the moved state equal the compiled kernels' exactly, and
    the Jacobian puts the state back exactly (the reference is the compiled kernels, which
    test_static_equals_dynamic_* check against the dynamics)."""
    from hsa_elastica.engines import uncompiled

    solver = StaticSolver(compile_simulator(build_robot(paper_robot_params(), [0.0] * 4).simulator),
                          jacobian="fd")  # the one-off path differences the whole residual
    a = np.full(solver.n_motors, 0.3)
    dx = np.where(solver.is_torque, 1e-2, 1e-4) * np.random.default_rng(1).standard_normal(solver.n)
    start = solver.pose()
    results = []
    for jit in (False, True):
        monkeypatch.setattr(uncompiled, "ready", lambda kernel: False)  # neither compiled nor cached
        monkeypatch.setattr(solver, "jit", jit)
        solver.set_pose(start)
        solver.move(dx, 0.5)
        moved = solver.pose()
        f = solver.evaluate(a).copy()  # (sets the motor-held elements: compare after it)
        evaluated = solver.pose()
        jac = solver.jacobian(a, f).toarray()
        after = solver.pose()
        results.append((moved, f, jac))
        assert all(np.array_equal(x, y) for x, y in zip(after, evaluated))
    (m0, f0, j0), (m1, f1, j1) = results
    assert all(np.array_equal(x, y) for x, y in zip(m0, m1))
    assert np.array_equal(f0, f1) and np.array_equal(j0, j1)
    assert np.count_nonzero(j0) > solver.n  # a real Jacobian, not an empty pattern


def test_check_only_stability_uses_superlu_to_round_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stability test of a pose check factorises with SuperLU while the band LU kernels
    are not compiled (a shorter cold start): the same smallest eigenvalue of M^-1 K as with the
    band LU, to round-off (1e-8 relative: both are LU solves of the same matrix inside
    ARPACK's shift-invert iteration, converged to tol 1e-6 on the Ritz values' residual but
    from the same start vector, so the two runs differ only by the solves' round-off)."""
    from hsa_elastica.engines import uncompiled

    solver = StaticSolver(compile_simulator(build_robot(paper_robot_params(), [0.0] * 4).simulator),
                          jacobian="fd")  # one Jacobian both ways: only the LU differs
    a = np.zeros(solver.n_motors)
    start = solver.pose()
    lams = []
    ready = uncompiled.ready
    for cold in (True, False):
        monkeypatch.setattr(uncompiled, "ready", (lambda kernel: False) if cold else ready)
        solver.set_pose(start)
        solver._lu = None
        if cold:
            assert isinstance(solver.factorize(solver.jacobian(a, solver.evaluate(a).copy())),
                              spla.SuperLU)
        solver._lu = None
        if not cold:
            monkeypatch.setattr(solver, "jit", True)  # the band LU
        lams.append(solver.stability(a, 3, vectors=False)[0])
    assert lams[0] > 0.0
    assert lams[0] == pytest.approx(lams[1], rel=1e-8)


def test_a_free_rigid_twist_is_neutral_not_unstable() -> None:
    """A rod whose base turns freely and whose far end is free can turn about its own (vertical)
    axis at no cost: one eigenvalue of ``M^-1 K`` is exactly zero, its computed sign round-off
    (-1.2e-11 1/s^2 here).  That mode is neutral: the straight rod is a stable pose and the
    reported eigenvalue is the next mode's (thousands of 1/s^2, not round-off)."""
    from hsa_elastica.engines.statics_stability import stability
    from hsa_elastica.params.presets import table1_rod_params
    from hsa_elastica.robots.rod_statics import RodStaticSolver

    setup = RodStaticSolver(table1_rod_params(6), base="free_twist", distal="free")
    out = setup.solve(torque=0.0)
    assert out.converged and out.stable
    lam, vec = stability(setup.solver, np.zeros(1), 4)
    assert lam > 1.0  # 1/s^2: the first deformation mode, not the rigid twist
    assert vec.shape == (setup.solver.n,)
