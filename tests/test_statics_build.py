"""The static solver's set-up and Jacobian overheads: the sparsity pattern found by
:func:`~hsa_elastica.engines.statics_build.dense_pattern` against the solver kernels' own
differences and against central differences of the residual (robot, stack on compliant
mounts, single rod with the compression law, robot pressed on a plate), and Newton's skip of
the rest-configuration evaluation (only at the state and angles just evaluated)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_build import dense_pattern, topology_pattern
from hsa_elastica.engines.statics_hybrid import hybrid_jacobian
from hsa_elastica.engines.statics_kernels import (
    JacobianBuffers,
    JacobianPattern,
    fd_jacobian,
)
from hsa_elastica.params import paper_robot_params, table1_rod_params
from hsa_elastica.robots.builders import build_robot
from tests.test_statics_hybrid import _central


def _robot() -> StaticSolver:
    p = paper_robot_params()
    return StaticSolver(compile_simulator(build_robot(p, [0.0] * 4).simulator))


def _stack() -> StaticSolver:
    from hsa_elastica.robots.stack import build_stack

    p = paper_robot_params()
    stack = build_stack([p, p], [[0.0] * 4, [0.0] * 4], ramp=0.0, record=False, check_dt=False,
                        mount=p.joint)
    return StaticSolver(compile_simulator(stack.simulator))


def _rod() -> StaticSolver:
    from hsa_elastica.physics.compression_law import AxialLawParams
    from hsa_elastica.robots.rod_statics import RodStaticSolver

    rod = table1_rod_params(6)
    return RodStaticSolver(rod, axial_law=AxialLawParams(compression_ratio=0.6)).solver


def _pressed() -> StaticSolver:
    """The robot pressing its platform on a stiff plate 2 mm above its top face (contact
    active at the motor angles ``press``), at its equilibrium."""
    from hsa_elastica.params import ContactParams, EnvironmentParams, PlaneObstacle

    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=10))
    robot = build_robot(p, [0.0] * 4, record=False, finalize=False)
    top = float(robot.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness + 0.002
    plate = PlaneObstacle(point=(0.0, 0.0, top), normal=(0.0, 0.0, -1.0),
                          contact=ContactParams(stiffness=2e5, smoothing_length=1e-4,
                                                damping_ratio=0.3))
    q = p.replace(environment=EnvironmentParams(obstacles=(plate,)))
    robot = build_robot(q, [0.0] * 4, ramp=0.0, record=False)
    solver = StaticSolver(compile_simulator(robot.simulator))
    press = np.array([0.5, -0.5, 0.5, -0.5])  # rad: free, the platform would rise ~5 mm
    assert solver.solve(press, check_stability=False).converged
    solver.press_angles = press  # type: ignore[attr-defined]
    return solver


def _kernel_pattern(solver: StaticSolver) -> np.ndarray:
    """The pattern as the solver found it before: dense differences by the compiled solver
    kernels (:func:`fd_jacobian`, one column per colour) at the same two seeded poses."""
    return np.logical_or.reduce([jac != 0.0 for jac in _differenced_values(solver)])


@pytest.mark.parametrize("make", [_robot, _stack, _rod, _pressed],
                         ids=["robot", "stack", "rod", "contact"])
def test_pattern_holds_every_nonzero_of_the_differences(make: Any) -> None:
    """The set-up's pattern (numpy gather around the compiled force evaluation) is the one
    the solver kernels' own dense differences give at the same poses, entry for entry, and
    the solver's pattern holds every entry of central differences of the residual at another
    deformed pose above 1e-8 of its column's norm (the central differences' round-off is
    ~1e-10 of it; a missing dependency is an entry of the size of the column)."""
    solver = make()
    solver.jit = True
    assert np.array_equal(dense_pattern(solver), _kernel_pattern(solver))
    a = getattr(solver, "press_angles", 0.2 * np.ones(solver.n_motors))
    rng = np.random.default_rng(7)
    solver.move(np.where(solver.is_torque, 1e-3, 1e-5) * rng.standard_normal(solver.n))
    jac = _central(solver, a)
    norm = np.linalg.norm(jac, axis=0)
    big = np.abs(jac) > 1e-8 * np.maximum(norm, 1e-300)
    full = np.zeros((solver.n, solver.n), dtype=bool)
    for j in range(solver.n):
        full[solver.indices[solver.indptr[j]:solver.indptr[j + 1]], j] = True
    assert big.any()
    missing = big & ~full
    assert not missing.any(), np.argwhere(missing)[:5]


def test_newton_skips_the_rest_evaluation_only_where_it_was_just_made() -> None:
    """Right after an evaluation at the state and angles, the hybrid Jacobian without its
    own rest-configuration evaluation equals the full one bit for bit; after a move, a pose
    set back, or other angles the solver does not claim the evaluation; and skipping after a
    move would be wrong (the rest configuration follows the pose through the auxetic law:
    entries off by more than 1e-6 of the largest)."""
    solver = _robot()
    solver.jit = True
    rng = np.random.default_rng(4)
    dx = np.where(solver.is_torque, 5e-2, 5e-4) * rng.standard_normal(solver.n)
    a = np.array([0.4, -0.3, 0.6, 0.2])
    solver.move(dx)
    f0 = solver.evaluate(a).copy()
    assert solver._evaluated_here(a)
    assert not solver._evaluated_here(a + 0.1)
    skipped = solver._jacobian_values(a, f0, rest_written=True).copy()
    assert solver._evaluated_here(a)  # no colour: the Jacobian left the state alone
    full = solver._jacobian_values(a, f0).copy()
    assert np.array_equal(skipped, full)
    pose = solver.pose()
    solver.set_pose(pose)
    assert not solver._evaluated_here(a)
    # the rest configuration of another pose: the skip would use it
    solver.evaluate(a)
    solver.move(0.2 * dx)
    assert not solver._evaluated_here(a)
    right = solver._jacobian_values(a, f0).copy()
    solver.set_pose(pose)
    solver.evaluate(a)
    solver.move(0.2 * dx)
    stale = solver._jacobian_values(a, f0, rest_written=True).copy()
    assert np.max(np.abs(stale - right)) > 1e-6 * np.max(np.abs(right))


def test_the_compiled_specialisation_is_the_dispatched_kernel() -> None:
    """The Jacobian called through its compiled specialisation (no dispatch) and through the
    numba dispatcher gives the same values bit for bit."""
    solver = _robot()
    solver.jit = True
    rng = np.random.default_rng(5)
    solver.move(np.where(solver.is_torque, 5e-2, 5e-4) * rng.standard_normal(solver.n))
    a = np.array([0.1, 0.2, -0.3, 0.4])
    direct = solver._jacobian_values(a, solver.evaluate(a).copy()).copy()
    kernel, args, _ = solver._hybrid_call()
    assert kernel is not hybrid_jacobian  # the specialisation was found
    out = np.zeros_like(direct)
    hybrid_jacobian(a, *args, out, False)  # type: ignore[call-arg]
    assert np.array_equal(direct, out)


# --------------------------------------------------------------------------------------------
# the pattern from the model's topology against the differenced one (the oracle)
# --------------------------------------------------------------------------------------------
def _passive() -> StaticSolver:
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(coupling_law="passive"))
    return StaticSolver(compile_simulator(build_robot(p, [0.0] * 4).simulator))


def _rigid_stack() -> StaticSolver:
    from hsa_elastica.robots.stack import build_stack

    p = paper_robot_params()
    stack = build_stack([p, p], [[0.0] * 4, [0.0] * 4], ramp=0.0, record=False, check_dt=False)
    return StaticSolver(compile_simulator(stack.simulator))


def _torque_stack() -> StaticSolver:
    from hsa_elastica.robots.stack import build_stack

    p = paper_robot_params()
    stack = build_stack([p, p], [[0.0] * 4, [0.02, -0.01, 0.015, 0.0]], ramp=0.0, record=False,
                        check_dt=False, mount=p.joint, drive="torque")
    return StaticSolver(compile_simulator(stack.simulator))


def _single(base: str, distal: str) -> Any:
    def make() -> StaticSolver:
        from hsa_elastica.robots.rod_statics import RodStaticSolver

        return RodStaticSolver(table1_rod_params(6), base=base, distal=distal).solver
    return make


_SINGLE = [(f"rod-{b}-{d}", _single(b, d)) for b in ("motor", "free_twist")
           for d in ("free", "twist_locked", "fixed")]
#: set-ups whose differences see round-off far along the rod (a free-twist base with the
#: distal twist held): entries below 3e-10 of their column's norm, no dependency of the laws
_ROUNDOFF = {"rod-free_twist-twist_locked", "rod-free_twist-fixed"}


def _differenced_values(solver: StaticSolver) -> list[np.ndarray]:
    """Dense forward differences of the residual (one column per colour) at the two seeded
    poses of :func:`~hsa_elastica.engines.statics_build.dense_pattern`, the clip lifted."""
    n = solver.n
    keep, base = solver.couplings, solver.pose()
    solver.couplings = keep._replace(eps_min=np.full_like(keep.eps_min, -np.inf),
                                     eps_max=np.full_like(keep.eps_max, np.inf))
    dense = JacobianPattern(solver.steps, np.arange(n + 1, dtype=np.int64),
                            np.arange(n, dtype=np.int64),
                            np.arange(0, n * n + 1, n, dtype=np.int64),
                            np.tile(np.arange(n, dtype=np.int64), n))
    data, out = np.zeros(n * n), []
    rng = np.random.default_rng(12345)
    a = np.full(solver.n_motors, 0.3)
    try:
        for _ in range(2):
            solver.set_pose(base)
            solver.move(np.where(solver.is_torque, 1e-2, 1e-4) * rng.standard_normal(n))
            f0 = solver.evaluate(a).copy()
            fd_jacobian(a, *solver._args(), dense,  # type: ignore[call-arg]
                        JacobianBuffers(f0, np.zeros(n), np.zeros((n, 3, 3)), data,
                                        np.empty((3, 3, 1))))
            out.append(data.reshape(n, n).T.copy())
    finally:
        solver.couplings = keep
        solver.set_pose(base)
    return out


@pytest.mark.parametrize(
    "name,make",
    [("robot", _robot), ("passive", _passive), ("stack", _stack), ("rigid", _rigid_stack),
     ("torque", _torque_stack), ("compression", _rod), ("contact", _pressed)] + _SINGLE,
    ids=lambda x: x if isinstance(x, str) else "")
def test_topology_pattern_holds_every_nonzero_of_the_differences(name: str, make: Any) -> None:
    """The pattern read from the model's tables holds every nonzero of the dense
    differences (the oracle, :func:`dense_pattern`, its entries found again here with their
    values) on the robot, the passive robot, stacks on compliant, rigid and torque-driven
    mounts, a rod with the compression law, the robot pressed on a plate and each set-up of
    the single rod.  Two single-rod set-ups (a free-twist base, the distal twist held) see
    round-off along the whole rod: there the entries outside the topology are below 1e-8 of
    their column's norm (measured 2.6e-10; a missing law's entry is of the column's size).
    The remainder of the hybrid Jacobian (``internal=False``, the synchronize program without
    the joints) holds the remainder's differences likewise."""
    solver = make()
    solver.jit = True
    top = topology_pattern(solver) | np.eye(solver.n, dtype=bool)
    full = np.zeros_like(top)
    for j in range(solver.n):
        full[solver.indices[solver.indptr[j]:solver.indptr[j + 1]], j] = True
    assert np.array_equal(full, top)  # the solver's pattern
    oracle = dense_pattern(solver)
    missing = oracle & ~top
    if name in _ROUNDOFF:
        for jac in _differenced_values(solver):
            norm = np.linalg.norm(jac, axis=0)
            assert np.all(np.abs(jac[missing]) < 1e-8 * np.broadcast_to(norm, jac.shape)[missing])
    else:
        assert not missing.any(), np.argwhere(missing)[:5]
    if solver.hybrid is not None:
        plan = solver.hybrid[0]
        rest = topology_pattern(solver, plan.program, internal=False)
        assert not (dense_pattern(solver, plan.program, internal=False) & ~rest).any()


def test_topology_pattern_needs_no_evaluation() -> None:
    """The pattern is read, not measured: building a solver of a new model evaluates the differences' residual not once (they would ~1200 times on the
    robot), and gives the pattern of the first build."""
    from hsa_elastica.engines import statics_build

    first = _robot()
    calls = []
    keep = statics_build._residual

    def counted(*args: Any) -> None:
        calls.append(1)
        keep(*args)

    statics_build._residual = counted  # type: ignore[assignment]
    try:
        again = _robot()
    finally:
        statics_build._residual = keep  # type: ignore[assignment]
    assert not calls
    assert np.array_equal(again.indices, first.indices)
    assert np.array_equal(again.indptr, first.indptr)


def test_static_results_unchanged_by_the_topology_pattern(monkeypatch: Any) -> None:
    """The robot's static solve of bend east with the pattern from the topology and with the
    differenced one: same colours, same Newton iterations, equilibria within 1e-12 m / rad
    (the topology adds explicit zeros to the band LU's pattern, which changes its round-off;
    measured 1.1e-15)."""
    from hsa_elastica.engines import statics
    from hsa_elastica.robots.primitives import primitive_angles

    a = np.asarray(primitive_angles("bend_east", 1.0, paper_robot_params()), dtype=np.float64)
    out = {}
    for way in ("topology", "differenced"):
        if way == "differenced":
            monkeypatch.setattr(statics, "topology_pattern",
                                lambda s, program=None, internal=True: dense_pattern(s))
        solver = _robot()
        result = solver.solve(a)
        assert result.converged and result.stable
        out[way] = (solver.n_colors, result.iterations, solver.pose())
    assert out["topology"][:2] == out["differenced"][:2]
    for x, y in zip(out["topology"][2], out["differenced"][2]):
        assert np.max(np.abs(x - y), initial=0.0) < 1e-12
