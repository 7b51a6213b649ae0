"""The static solver's hybrid Jacobian (``StaticSolver(jacobian="tangent")``: the rods' and
the joints' consistent tangents plus differences of the rest of the residual) against
central differences of the whole residual, against the forward-difference Jacobian, and the
equilibria Newton reaches with either."""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_hybrid import make_hybrid
from hsa_elastica.params import ParameterError, paper_robot_params
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.stack import build_stack


def _solver(jacobian: str = "tangent", **rod_changes: object) -> StaticSolver:
    p = paper_robot_params()
    if rod_changes:
        p = p.replace(rod=p.rod.replace(**rod_changes))
    solver = StaticSolver(compile_simulator(build_robot(p, [0.0] * 4).simulator), jacobian=jacobian)
    solver.jit = True
    return solver


def _deformed(solver: StaticSolver, seed: int) -> None:
    """A random pose: 5e-4 m of node displacement, 0.05 rad of element rotation (scale)."""
    rng = np.random.default_rng(seed)
    solver.move(np.where(solver.is_torque, 5e-2, 5e-4) * rng.standard_normal(solver.n))


def _central(solver: StaticSolver, a: np.ndarray) -> np.ndarray:
    """Dense central differences of the whole residual (steps 1e-6 m, 1e-5 rad: truncation
    ~1e-10 and round-off ~1e-10 of a column's norm)."""
    pose = solver.pose()
    jac = np.zeros((solver.n, solver.n))
    e = np.zeros(solver.n)
    for j in range(solver.n):
        h = 1e-5 if solver.is_torque[j] else 1e-6
        e[:] = 0.0
        e[j] = h
        solver.move(e)
        fp = solver.evaluate(a).copy()
        solver.set_pose(pose)
        solver.move(e, -1.0)
        fm = solver.evaluate(a).copy()
        solver.set_pose(pose)
        jac[:, j] = (fp - fm) / (2.0 * h)
    return jac


@pytest.mark.parametrize("seed", [3, 11])
def test_hybrid_jacobian_matches_central_and_forward_differences(seed: int) -> None:
    """At a random deformed pose of the paper robot (motor angles on both sides of zero) every
    entry of the hybrid Jacobian is within 1e-6 of its column's norm of central differences
    of the residual (measured 1.2e-7, on a rod's node-node entry: the oracle's truncation,
    step 1e-6 m on 4 mm elements; the entries of the joints, now exact, agree to 7e-10), and
    within 5e-5 of the forward-difference Jacobian (that
    one's own truncation error, measured 1.0e-5 against central differences).  The state is
    left as it was."""
    solver = _solver()
    assert solver.hybrid is not None
    _deformed(solver, seed)
    a = np.array([0.4, -0.3, 0.6, 0.2])
    f0 = solver.evaluate(a).copy()
    pose = solver.pose()
    hybrid = solver.jacobian(a, f0).toarray()
    assert all(np.array_equal(x, y) for x, y in zip(solver.pose(), pose))
    central = _central(solver, a)
    norm = np.linalg.norm(central, axis=0)
    assert np.all(norm > 0.0)
    assert np.max(np.abs(hybrid - central) / norm) < 1e-6
    keep, solver.hybrid = solver.hybrid, None  # the forward-difference Jacobian
    fd = solver.jacobian(a, solver.evaluate(a).copy()).toarray()
    solver.hybrid = keep
    assert np.max(np.abs(hybrid - fd) / norm) < 5e-5


def test_hybrid_jacobian_of_a_stack_on_compliant_mounts() -> None:
    """A two-stage stack on compliant motor mounts (the upper rods' bases sprung to the lower
    platform, turned by their motor angles): the mounts take their tangents with the joints,
    neither they nor the remainder need a colour, and the Jacobian is within 1e-6 of each
    column's norm of central differences (measured 1.3e-7)."""
    p = paper_robot_params()
    stack = build_stack([p, p], [[0.0] * 4, [0.0] * 4], ramp=0.0, record=False, check_dt=False,
                        mount=p.joint)
    solver = StaticSolver(compile_simulator(stack.simulator))
    solver.jit = True
    assert solver.hybrid is not None and solver.n_colors_external == 0
    assert solver.n_colors_joints == 0
    _deformed(solver, 5)
    a = 0.3 * np.random.default_rng(0).standard_normal(solver.n_motors)
    hybrid = solver.jacobian(a, solver.evaluate(a).copy()).toarray()
    central = _central(solver, a)
    assert np.max(np.abs(hybrid - central) / np.linalg.norm(central, axis=0)) < 1e-6


def test_hybrid_jacobian_of_a_stack_on_torque_driven_mounts() -> None:
    """The upper stage's motors torque-driven (free-twist mounts: the rest orientation follows
    the base's twist, the motor torque reacts on the lower platform): their couples take the
    twist mount's tangent, nothing is differenced, and the Jacobian is within 1e-6 of each
    column's norm of central differences (measured 1.7e-7); the differenced
    mounts (``joint_tangent=False``) put them back into the remainder's colours."""
    p = paper_robot_params()
    stack = build_stack([p, p], [[0.0] * 4, [0.02, -0.01, 0.015, 0.0]], ramp=0.0, record=False,
                        check_dt=False, mount=p.joint, drive="torque")
    solver = StaticSolver(compile_simulator(stack.simulator))
    solver.jit = True
    assert solver.hybrid is not None
    assert solver.n_colors_external == 0 and solver.n_colors_joints == 0
    _deformed(solver, 9)
    a = np.concatenate([0.3 * np.random.default_rng(1).standard_normal(4),
                        [0.02, -0.01, 0.015, 0.0]])
    hybrid = solver.jacobian(a, solver.evaluate(a).copy()).toarray()
    central = _central(solver, a)
    norm = np.linalg.norm(central, axis=0)
    assert np.max(np.abs(hybrid - central) / norm) < 1e-6
    make_hybrid(solver, joint_tangent=False)
    assert solver.n_colors_external > 0


def _rigid_stack(jacobian: str = "tangent") -> StaticSolver:
    """A two-stage stack on rigid motor mounts (the upper rods' bases held on the lower
    platform), 4 elements per rod."""
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=4))
    stack = build_stack([p, p], [[0.0] * 4, [0.0] * 4], ramp=0.0, record=False, check_dt=False)
    solver = StaticSolver(compile_simulator(stack.simulator), jacobian=jacobian)
    solver.jit = True
    return solver


def test_hybrid_jacobian_of_a_stack_on_rigid_mounts() -> None:
    """A two-stage stack on rigid motor mounts (the upper rods' base node and element held in
    the lower platform's frame, engines/statics_mounts.py): the chain rule carries the band's
    held columns to the platform's unknowns and the reaction's rows to its rows, nothing is
    differenced, and every entry is within 1e-6 of its column's largest entry of central
    differences of the whole residual (the bound of the robot's case: the oracle's truncation
    and round-off, steps 1e-6 m / 1e-5 rad; measured 1.8e-9).  Without the chain rule (the
    mounts' entries dropped from the plan) the platform's columns and rows are missing: the
    error is of the order of the column itself (printed)."""
    solver = _rigid_stack()
    assert solver.hybrid is not None
    assert solver.n_colors_external == 0 and solver.n_colors_joints == 0
    _deformed(solver, 5)
    a = 0.3 * np.random.default_rng(0).standard_normal(solver.n_motors)
    f0 = solver.evaluate(a).copy()
    hybrid = solver.jacobian(a, f0).toarray()
    central = _central(solver, a)
    scale = np.abs(central).max(axis=0)
    assert np.all(scale > 0.0)
    err = np.max(np.abs(hybrid - central) / scale)
    plan, ext, joint = solver.hybrid
    solver.hybrid = (plan._replace(mount_ptr=np.zeros_like(plan.mount_ptr)), ext, joint)
    without = np.max(np.abs(solver.jacobian(a, f0).toarray() - central) / scale)
    print(f"rigid stack: hybrid against central differences {err:.2g}, "
          f"without the mounts' chain rule {without:.2g}")
    assert err < 1e-6
    assert without > 0.1


def test_stack_on_rigid_mounts_reaches_the_equilibrium_of_the_differences() -> None:
    """A static stack solve (both stages' motors turned) with the hybrid Jacobian and with
    the differences of the whole residual converge to the same pose: both stop at the force /
    couple tolerance (1e-8 N, 1e-9 N m), so within ~1e-9 m / rad (as on the robot)."""
    angles = np.array([0.3, -0.2, 0.4, 0.1, -0.3, 0.2, 0.1, -0.4])
    poses = []
    for kind in ("tangent", "fd"):
        solver = _rigid_stack(kind)
        assert (solver.hybrid is not None) == (kind == "tangent")
        out = solver.solve(angles)
        assert out.converged
        poses.append(solver.pose())
    for x, y in zip(*poses):
        assert np.max(np.abs(x - y)) < 1e-9


@pytest.mark.parametrize("base", ["motor", "free_twist"])
def test_hybrid_jacobian_of_a_loaded_single_rod(base: str) -> None:
    """A single rod with a tip force (the characterization's set-up: ``EndpointForces``), on
    its motor or torque-driven (``FreeTwistBC`` + ``BaseTwistTorque``, a load row too): the
    loads do not depend on the state, so nothing is differenced, and the Jacobian is within
    1e-6 of each column's norm of central differences (measured 9.6e-8 and 1.1e-7, the
    oracle's truncation, as on the robot)."""
    from hsa_elastica.robots.single_rod import build_single_rod

    p = paper_robot_params()
    rod = build_single_rod(p.rod, p.simulation, base=base, angle=0.4, torque=0.05,
                           distal="twist_locked", tip_force=(0.3, -0.2, -1.5), record=False)
    solver = StaticSolver(compile_simulator(rod.simulator))
    solver.jit = True
    assert solver.hybrid is not None and solver.n_colors_external == 0
    _deformed(solver, 13)
    a = np.full(solver.n_motors, 0.4)
    hybrid = solver.jacobian(a, solver.evaluate(a).copy()).toarray()
    central = _central(solver, a)
    err = np.max(np.abs(hybrid - central) / np.linalg.norm(central, axis=0))
    print(f"{base}: hybrid against central differences {err:.2g}")
    assert err < 1e-6


def _compression_rod(jacobian: str = "tangent", distal: str = "twist_locked") -> StaticSolver:
    """The Table I rod (6 rows) with the compression law (``r_c = 0.6 + 0.002 m/rad *
    kappa_h``) on its motor, its tip twist-locked or fixed (the characterization's
    set-ups)."""
    from hsa_elastica.params import table1_rod_params
    from hsa_elastica.physics.compression_law import AxialLawParams
    from hsa_elastica.robots.rod_statics import RodStaticSolver

    law = AxialLawParams(compression_ratio=0.6, compression_ratio_slope=0.002)
    solver = RodStaticSolver(table1_rod_params(6), axial_law=law, distal=distal).solver
    if jacobian != "tangent":
        solver = StaticSolver(solver.model, jacobian=jacobian)
    solver.jit = True
    return solver


def test_hybrid_jacobian_of_a_rod_with_the_compression_law() -> None:
    """The compression law's tangent (``compression_tangent_band``) goes into the rod's band:
    nothing is differenced (no colour), and at a twisted pose pushed together along the rod
    (most elements compressed, their ratio following the twist) the Jacobian is within 1e-6 of
    each column's norm of central differences (the oracle's truncation, as above)."""
    solver = _compression_rod()
    assert solver.hybrid is not None and solver.n_colors_external == 0
    rng = np.random.default_rng(5)
    a = np.full(solver.n_motors, 1.2)
    solver.move(np.where(solver.is_torque, 2e-2, 2e-4) * rng.standard_normal(solver.n))
    pos = solver.model.rod_arrays.position
    pos[2] *= 0.97  # 3 % shorter: compressed against any twisted rest length below 3 %
    f0 = solver.evaluate(a).copy()
    work = solver.model.tables.compression.work[0]
    n = solver.model.tables.compression.n_elems[0]
    assert np.count_nonzero(work[4, :n] < 1.0) >= n // 2  # compressed, r_c from the twist
    assert np.ptp(work[4, :n][work[4, :n] < 1.0]) > 0.0
    hybrid = solver.jacobian(a, f0).toarray()
    central = _central(solver, a)
    err = np.max(np.abs(hybrid - central) / np.linalg.norm(central, axis=0))
    print(f"compression law: hybrid against central differences {err:.2g}")
    assert err < 1e-6


def test_rod_with_the_compression_law_reaches_the_equilibrium_of_the_differences() -> None:
    """Blocked at its printed length and twisted (the blocked-force experiment: compressed
    against its longer rest length), Newton with the tangent and with the whole residual
    differenced reach the same equilibrium (to 1e-9 m / rad, the force tolerance over the
    stiffness, as on the robot)."""
    poses = []
    for kind in ("tangent", "fd"):
        solver = _compression_rod(kind, distal="fixed")
        assert (solver.hybrid is None) == (kind == "fd")
        out = solver.solve(np.full(solver.n_motors, 1.5))
        assert out.converged
        poses.append(solver.pose())
    law = solver.model.tables.compression.work[0]
    assert np.count_nonzero(law[4] < 1.0) > 0  # the law acts at the equilibrium
    for x, y in zip(*poses):
        assert np.max(np.abs(x - y), initial=0.0) < 1e-9


def test_hybrid_jacobian_needs_no_colour_on_the_robot() -> None:
    """On the paper robot everything but the rods' elasticity and the platform joints is
    gravity (constant): neither the remainder nor the joints (exact tangents) need a colour.
    Differencing the joints instead (``joint_tangent=False``, the oracle) takes the 30 colours
    of the bodies' rows (4 joints x (3 node + 3 rotation unknowns) + 6 of the platform) and
    gives the same Jacobian to the forward differences' error (1e-6 of a column's norm:
    steps 1e-8 m / 1e-7 rad, measured 6.7e-8)."""
    solver = _solver()
    assert solver.n_colors_external == 0
    assert solver.n_colors_joints == 0
    exact = solver.hybrid
    _deformed(solver, 7)
    a = np.array([0.2, 0.5, -0.4, 0.1])
    f0 = solver.evaluate(a).copy()
    tangent = solver.jacobian(a, f0).toarray()
    solver.hybrid = make_hybrid(solver, joint_tangent=False)
    assert solver.n_colors_joints == 30
    differenced = solver.jacobian(a, f0).toarray()
    solver.hybrid = exact
    norm = np.linalg.norm(differenced, axis=0)
    assert np.max(np.abs(tangent - differenced) / norm) < 1e-6


def test_newton_with_either_jacobian_reaches_the_same_equilibrium() -> None:
    """The Jacobian is only Newton's iteration matrix: both solvers converge to the force /
    couple tolerance (1e-8 N, 1e-9 N m), so their equilibria agree to ~1e-9 m / rad (a
    residual of 1e-8 N over a stiffness of ~10 N/m)."""
    p = paper_robot_params()
    poses = []
    for kind in ("tangent", "fd"):
        solver = _solver(kind)
        out = solver.solve(np.asarray(primitive_angles("bend_east", 1.0, p), dtype=np.float64))
        assert out.converged and out.stable
        poses.append(solver.pose())
    for x, y in zip(*poses):
        assert np.max(np.abs(x - y)) < 1e-9


def test_passive_coupling_keeps_the_difference_jacobian() -> None:
    """The passive law's reciprocal couple has no tangent here: the whole residual is
    differenced."""
    assert _solver(coupling_law="passive").hybrid is None
    assert _solver("fd").hybrid is None


def test_unknown_jacobian_kind_is_a_parameter_error() -> None:
    model = compile_simulator(build_robot(paper_robot_params(), [0.0] * 4).simulator)
    with pytest.raises(ParameterError, match="jacobian"):
        StaticSolver(model, jacobian="exact")


def test_rod_tangents_read_the_rest_configuration_of_the_state() -> None:
    """With the remainder differenced (torque-driven mounts, ``joint_tangent=False``: its
    colours perturb the state and rewrite the auxetic rest configuration), the rods'
    tangents still read the rest configuration of the state itself, whichever colour comes
    last: the Jacobian's entries only the rods' tangents write equal those of the plan
    without colours (the joints' tangents) at the same state, bit for bit (read after a last
    colour that turns a rod's base element, they were off by up to ~1e-7 of the entry)."""
    p = paper_robot_params()
    stack = build_stack([p, p], [[0.0] * 4, [0.02, -0.01, 0.015, 0.0]], ramp=0.0, record=False,
                        check_dt=False, mount=p.joint, drive="torque")
    solver = StaticSolver(compile_simulator(stack.simulator))
    solver.jit = True
    _deformed(solver, 13)
    a = np.concatenate([0.3 * np.random.default_rng(2).standard_normal(4),
                        [0.02, -0.01, 0.015, 0.0]])
    exact = solver.hybrid
    assert exact is not None
    f0 = solver.evaluate(a).copy()
    plain = solver._jacobian_values(a, f0).copy()
    differenced = make_hybrid(solver, joint_tangent=False)
    assert differenced is not None and solver.n_colors_external > 1
    other = np.zeros(plain.shape[0], dtype=bool)
    for plan in (exact[0], differenced[0]):
        for m in (plan.ext_map, plan.joint_map, plan.tangent_dst.ravel()):
            other[m[m >= 0]] = True
    rods = np.zeros_like(other)
    rods[exact[0].dst] = True
    only = rods & ~other
    assert only.sum() > 1000
    plan, (pattern, buffers), joint = differenced
    ptr, cols = pattern.color_ptr, pattern.color_cols
    segments = [cols[ptr[c]:ptr[c + 1]] for c in range(ptr.shape[0] - 1)]
    for last in range(len(segments)):  # each colour last once
        order = [seg for c, seg in enumerate(segments) if c != last] + [segments[last]]
        turned = pattern._replace(
            color_ptr=np.concatenate([[0], np.cumsum([x.shape[0] for x in order])]).astype(np.int64),
            color_cols=np.concatenate(order).astype(np.int64))
        solver.hybrid = (plan, (turned, buffers), joint)
        solver.evaluate(a)
        mixed = solver._jacobian_values(a, f0).copy()
        assert np.array_equal(mixed[only], plain[only]), last
    solver.hybrid = exact
