"""The implicit integrator's Newton matrix from the laws' tangents
(hsa_elastica/engines/implicit_tangent.py) against its oracle, the forward differences of the
whole dynamic residual (``jacobian="fd"``, ``implicit_kernels.dynamic_fd_jacobian``), and the
trajectories of the two Newton matrices against each other.
"""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.implicit_kernels import Increment, dynamic_fd_jacobian, dynamic_forces
from hsa_elastica.engines.implicit_tangent import (
    implicit_tangent_jacobian,
    make_implicit_tangent,
)
from hsa_elastica.params import JointParams, ParameterError, paper_robot_params
from hsa_elastica.physics.tables import Pose
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.compiled import ImplicitRobot
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.single_rod import build_single_rod
from hsa_elastica.robots.stack import build_stack


def _robot_params(n_elements: int = 6):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    return p.replace(rod=p.rod.replace(n_elements=n_elements),
                     simulation=p.simulation.replace(integrator="implicit", dt=2e-3))


def _jacobians(engine: ImplicitEngine, angles: np.ndarray, rates: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """``dF/dq + cv dF/dv`` at the engine's present state (increment 0, velocities
    ``engine.v``) by the tangents and by the whole residual's forward differences."""
    n, h = engine.n, engine.dt
    cv = engine.gamma / (engine.beta * h)
    args, aux = engine._model_args, engine._aux
    t = engine.time
    f, mass = np.zeros(n), np.zeros(n)
    m = engine.model
    q0 = Pose(*(np.array(a, copy=True) for a in m.state.pose))
    jw = engine._jw
    assert dynamic_forces(t, angles, rates, engine.v.copy(), args, aux, f, mass)
    jw.fd.f0[:] = f
    dynamic_fd_jacobian(t, angles, rates, engine.v.copy(), args, aux, cv, jw.pattern, jw.fd,
                        Increment(np.zeros(n), q0, jw.first))
    fd = jw.fd.data.copy()
    assert dynamic_forces(t, angles, rates, engine.v.copy(), args, aux, f, mass)
    data = np.zeros_like(fd)
    assert engine._tangent is not None
    implicit_tangent_jacobian(t, angles, rates, engine.v.copy(), args, aux, cv, engine._tangent,
                              data)
    return data, fd


def _column_error(engine: ImplicitEngine, data: np.ndarray, fd: np.ndarray) -> float:
    """Largest difference of a column, relative to that column's largest entry of the
    Newton matrix (its inertia shift included: what the factorisation sees)."""
    s = engine.solver
    ca = (1.0 - engine.alpha_m) / ((1.0 - engine.alpha_f) * engine.beta * engine.dt ** 2)
    worst = 0.0
    for j in range(engine.n):
        sl = slice(s.indptr[j], s.indptr[j + 1])
        scale = max(np.abs(fd[sl]).max(), ca * engine.mass[j])
        worst = max(worst, float(np.abs(data[sl] - fd[sl]).max() / scale))
    return worst


def test_bad_option_is_one_line_parameter_error() -> None:
    model = compile_simulator(build_robot(_robot_params(), [0.0] * 4).simulator)
    with pytest.raises(ParameterError, match=r"^jacobian = 'exact' is invalid: must be one of "
                                             r"'tangent', 'fd'$"):
        ImplicitEngine(model, 2e-3, dt_table=2e-3, jacobian="exact")


def _deformed(robot: ImplicitRobot, seed: int, velocity: float) -> ImplicitEngine:
    """The robot's engine at a random pose off the straight one (rotations 5e-2 rad,
    positions 5e-4 m: no element at the zero-twist kink of the hard clip, where the forward
    differences take one side and the tangent the other) and random velocities of the
    unknowns (``velocity`` rad/s; nodes and bodies 1/100 of it in m/s)."""
    e = robot.engine
    rng = np.random.default_rng(seed)
    s = e.solver
    s.move(np.where(s.is_torque, 5e-2, 5e-4) * rng.standard_normal(s.n))
    e.start(np.zeros(s.n_motors), np.zeros(s.n_motors))
    e.v[:] = velocity * rng.standard_normal(e.n) * np.where(e._rot_rows, 1.0, 0.01)
    return e


def _stack(**kw):  # type: ignore[no-untyped-def]
    p = _robot_params(4)
    return build_stack([p, p], [[0.0] * 4, [0.0] * 4], record=False, **kw)


def _rod_with_compression_law():  # type: ignore[no-untyped-def]
    """The characterization's set-up with the compression law (ratio 0.6 at zero twist,
    softening less as the rod twists): its tangent is in the rod's band."""
    from hsa_elastica.physics.compression_law import AxialCompressionLaw, AxialLawParams

    p = _robot_params()
    law = AxialLawParams(compression_ratio=0.6, compression_ratio_slope=0.001)
    h = build_single_rod(p.rod, p.simulation, angle=0.3, distal="twist_locked",
                         tip_force=(0.3, -0.2, -1.5), record=False, finalize=False)
    h.simulator.add_forcing_to(h.rod).using(AxialCompressionLaw,
                                            **AxialCompressionLaw.kwargs_for(p.rod, law))
    h.simulator.finalize()
    return h


CASES = {
    "robot": lambda: build_robot(_robot_params(), [0.0] * 4),
    "single rod with the compression law": _rod_with_compression_law,
    "single rod": lambda: build_single_rod(
        _robot_params().rod, _robot_params().simulation, angle=0.3, distal="free",
        record=False),
    "stack on compliant mounts": lambda: _stack(mount=JointParams()),
    # the upper rods' bases held on the lower platform (the mounts' chain rule,
    # engines/statics_mounts.py)
    "stack on rigid mounts": lambda: _stack(),
    # the characterization's set-up: the distal element's twist locked (the lock's chain rule,
    # engines/statics_rods.py), a tip force (a load row: no state dependence)
    "single rod, locked tip, tip force": lambda: build_single_rod(
        _robot_params().rod, _robot_params().simulation, angle=0.3, distal="twist_locked",
        tip_force=(0.3, -0.2, -1.5), record=False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_newton_matrix_equals_the_differences(case: str) -> None:
    """At rest the tangent Newton matrix is the forward differences' to their own error
    (1e-8 m / 1e-7 rad steps against entries up to 4e6 N/m: measured 1.4e-6 to 4.3e-6 of a
    column's largest entry, inertia shift included; bound 1e-4; the stack on rigid mounts
    1.9e-6, and 1.0 without the mounts' chain rule).  Moving at 1 rad/s (0.01 m/s) it
    differs by the velocity-proportional forces' pose dependence it leaves out (module doc;
    measured 0.0035 to 0.011; bound 0.05)."""
    robot = ImplicitRobot(CASES[case]())
    assert robot.engine.jacobian == "tangent"
    e = _deformed(robot, 3, 0.0)
    zero = np.zeros(e.solver.n_motors)
    data, fd = _jacobians(e, zero, zero)
    assert np.abs(fd).max() > 1e3  # a stiffness, not an empty matrix
    assert _column_error(e, data, fd) < 1e-4
    e.v[:] = np.random.default_rng(4).standard_normal(e.n) * np.where(e._rot_rows, 1.0, 0.01)
    data, fd = _jacobians(e, zero, zero)
    assert _column_error(e, data, fd) < 5e-2


#: joint dampers whose share of the Newton matrix is of the springs' (cv nu_F = 1e5 N/m
#: against k_F = 5e5 N/m, cv nu_tau = 20 N m/rad = k_tau at cv = 990 1/s): the paper's are 0
DAMPED = JointParams(nu_F=100.0, nu_tau=0.02)
DAMPED_CASES = {
    "robot, damped joints": lambda: build_robot(_robot_params().replace(joint=DAMPED),
                                                [0.0] * 4),
    "stack on damped compliant mounts": lambda: _stack(mount=DAMPED),
}


def _own_column_error(engine: ImplicitEngine, data: np.ndarray, ref: np.ndarray) -> float:
    """Largest difference of a column relative to that column's largest entry of ``ref``."""
    s = engine.solver
    worst = 0.0
    for j in range(engine.n):
        sl = slice(s.indptr[j], s.indptr[j + 1])
        scale = np.abs(ref[sl]).max()
        if scale > 0.0:
            worst = max(worst, float(np.abs(data[sl] - ref[sl]).max() / scale))
    return worst


@pytest.mark.parametrize("case", list(DAMPED_CASES))
def test_joint_tangents_equal_the_joints_differences(case: str) -> None:
    """The joints' exact ``K_x + cv K_v`` against their coloured differences (the same
    Newton matrix otherwise), moving at 1 rad/s (0.01 m/s) with dampers: the differences'
    own error (1e-8 m / 1e-7 rad forward steps; measured 1.4e-7 / 1.5e-7 of a column's
    largest entry; bound 1e-5).  The velocity parts alone (the matrices at ``2 cv`` less
    those at ``cv``) agree as closely (measured 1.0e-7), and leaving out the joints' velocity
    part errs by a whole column: the check sees ``K_v``."""
    robot = ImplicitRobot(DAMPED_CASES[case]())
    e = _deformed(robot, 3, 1.0)
    differenced = make_implicit_tangent(e, joint_tangent=False)
    assert differenced is not None and differenced.plan.tangent_ops.shape[0] == 0
    assert e._tangent is not None and e._tangent.plan.joint_ops.shape[0] == 0
    assert e._tangent.plan.tangent_ops.shape[0] > 0
    zero = np.zeros(e.solver.n_motors)
    cv = e.gamma / (e.beta * e.dt)

    def matrix(tan, c: float) -> np.ndarray:  # type: ignore[no-untyped-def]
        f, mass = np.zeros(e.n), np.zeros(e.n)
        assert dynamic_forces(e.time, zero, zero, e.v.copy(), e._model_args, e._aux, f, mass)
        data = np.zeros(e.solver.indices.shape[0])
        implicit_tangent_jacobian(e.time, zero, zero, e.v.copy(), e._model_args, e._aux, c, tan,
                                  data)
        return data

    exact, fd = matrix(e._tangent, cv), matrix(differenced, cv)
    assert _own_column_error(e, exact, fd) < 1e-5
    v_exact, v_fd = matrix(e._tangent, 2 * cv) - exact, matrix(differenced, 2 * cv) - fd
    assert _own_column_error(e, v_exact, v_fd) < 1e-5
    no_joints = differenced._replace(plan=differenced.plan._replace(
        joint_ops=differenced.plan.joint_ops[:0]))
    v_none = matrix(no_joints, 2 * cv) - matrix(no_joints, cv)
    assert _own_column_error(e, v_none, v_fd) > 0.5


def _matrix(e: ImplicitEngine, tan, cv: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The Newton matrix's ``dF/dq + cv dF/dv`` of the tangent record ``tan`` at the engine's
    state (motors at 0, resting)."""
    zero = np.zeros(e.solver.n_motors)
    f, mass = np.zeros(e.n), np.zeros(e.n)
    assert dynamic_forces(e.time, zero, zero, e.v.copy(), e._model_args, e._aux, f, mass)
    data = np.zeros(e.solver.indices.shape[0])
    implicit_tangent_jacobian(e.time, zero, zero, e.v.copy(), e._model_args, e._aux, cv, tan,
                              data)
    return data


@pytest.mark.parametrize("case", list(CASES))
def test_rate_tangents_equal_the_rate_differences(case: str) -> None:
    """The velocity-proportional forces' exact velocity tangents (the linear, body and
    Kelvin-Voigt dampers and the gyroscopic couple) against their coloured forward differences
    (``make_implicit_tangent(rate_tangent=False)``, the Newton matrix before; the same matrix
    otherwise), moving at 1 rad/s (0.01 m/s): the laws are linear in the velocities (the
    gyroscopic couple quadratic: ``J`` times the 1e-3 rad/s step), so the differences are
    exact up to round-off and the step's error (measured 1.2e-9 to 3.2e-9 of a column's
    largest entry; bound 1e-6), for the whole matrix and for the velocity parts alone (the
    matrices at ``2 cv`` less those at ``cv``; measured 6.4e-9 to 1.3e-8).  Leaving the rate
    part out errs by a whole column.  The engine's record takes no colours for them."""
    robot = ImplicitRobot(CASES[case]())
    e = _deformed(robot, 3, 1.0)
    assert e._tangent is not None and e._tangent.rate_exact[0] == 1
    assert e.n_colors_rates == 0
    differenced = make_implicit_tangent(e, rate_tangent=False)
    assert differenced is not None and differenced.rate_exact[0] == 0
    assert e.n_colors_rates > 0  # the differences' colours, for the comparison
    cv = e.gamma / (e.beta * e.dt)
    exact, fd = _matrix(e, e._tangent, cv), _matrix(e, differenced, cv)
    v_exact = _matrix(e, e._tangent, 2 * cv) - exact
    v_fd = _matrix(e, differenced, 2 * cv) - fd
    assert _own_column_error(e, exact, fd) < 1e-6
    assert _own_column_error(e, v_exact, v_fd) < 1e-6
    no_rates = differenced._replace(rate_map=differenced.rate_map[:0])
    v_none = _matrix(e, no_rates, 2 * cv) - _matrix(e, no_rates, cv)
    assert _own_column_error(e, v_none, v_fd) > 0.5


def test_models_without_tangents_keep_the_differences() -> None:
    p = _robot_params()
    passive = p.replace(rod=p.rod.replace(coupling_law="passive"))
    assert ImplicitRobot(build_robot(passive, [0.0] * 4)).engine.jacobian == "fd"
    assert ImplicitRobot(_stack()).engine.jacobian == "tangent"  # rigid motor mounts
    torque = _stack(mount=_robot_params(4).joint, drive="torque")  # torque-driven mounts
    assert ImplicitRobot(torque).engine.jacobian == "fd"
    assert ImplicitRobot(_stack(mount=_robot_params(4).joint)).engine.jacobian == "tangent"
    assert ImplicitRobot(build_robot(p, [0.0] * 4), jacobian="fd").engine.jacobian == "fd"


@pytest.mark.parametrize("name", ["bend_north", "twist_cw", "elongation"])
def test_primitive_trajectories_agree_with_the_differences(name: str) -> None:
    """0.2 s of a primitive (motors ramped over 0.1 s) with either Newton matrix.  Both solve
    the same residual; a step's solutions differ by the iteration's stopping point, within
    the increment tolerance (1e-7 m, 1e-5 rad); over 100 steps we allow 1e-5 m for the
    platform and the rod nodes (measured: at most 7.7e-7 m, elongation)."""
    p = _robot_params()
    target = np.asarray(primitive_angles(name, 1.0, p))
    out = {}
    for jac in ("tangent", "fd"):
        robot = ImplicitRobot(build_robot(p, [0.0] * 4), jacobian=jac)
        start = np.array(robot.engine.model.body_arrays.position, copy=True)
        for k in range(1, 11):
            robot.set_motor_angles(target * min(1.0, k / 5))
            robot.step(0.02)
        out[jac] = (np.array(robot.engine.model.rod_arrays.position, copy=True),
                    np.array(robot.engine.model.body_arrays.position, copy=True),
                    robot.engine.n_jacobians)
    assert np.abs(out["tangent"][0] - out["fd"][0]).max() < 1e-5
    assert np.abs(out["tangent"][1] - out["fd"][1]).max() < 1e-5
    assert np.abs(out["fd"][1] - start).max() > 5e-3  # the platform moved (11-43 mm)


def test_damped_joints_trajectory_agrees_with_the_differences() -> None:
    """bend north as above on the robot with joint dampers (:data:`DAMPED`), whose Newton
    matrix takes the joints' velocity tangents: within the increment tolerance of the whole
    residual's differences (bound 1e-5 m as above; measured 8.9e-9 m; the platform moves
    43 mm)."""
    p = _robot_params().replace(joint=DAMPED)
    target = np.asarray(primitive_angles("bend_north", 1.0, p))
    out = {}
    for jac in ("tangent", "fd"):
        robot = ImplicitRobot(build_robot(p, [0.0] * 4), jacobian=jac)
        assert robot.engine.jacobian == jac
        for k in range(1, 11):
            robot.set_motor_angles(target * min(1.0, k / 5))
            robot.step(0.02)
        out[jac] = (np.array(robot.engine.model.rod_arrays.position, copy=True),
                    np.array(robot.engine.model.body_arrays.position, copy=True))
    assert np.abs(out["tangent"][0] - out["fd"][0]).max() < 1e-5
    assert np.abs(out["tangent"][1] - out["fd"][1]).max() < 1e-5


def test_trajectory_unchanged_by_the_topology_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.2 s of bend east (motors ramped over 0.1 s) with the Newton matrix's sparsity
    pattern from the model's topology and from dense differences (the way before): the same
    colours of the dampers' differences, the same Newton matrices counted, and states within
    1e-12 m (explicit zeros in the band LU's pattern change only its round-off, ~1e-15 m in
    the static solve of ``tests/test_statics_build.py``)."""
    from hsa_elastica.engines import statics
    from hsa_elastica.engines.statics_build import dense_pattern

    p = _robot_params()
    target = np.asarray(primitive_angles("bend_east", 1.0, p))
    out = {}
    for way in ("topology", "differenced"):
        if way == "differenced":
            monkeypatch.setattr(statics, "topology_pattern",
                                lambda s, program=None, internal=True: dense_pattern(s))
        robot = ImplicitRobot(build_robot(p, [0.0] * 4))
        assert robot.engine.jacobian == "tangent"
        for k in range(1, 11):
            robot.set_motor_angles(target * min(1.0, k / 5))
            robot.step(0.02)
        out[way] = (np.array(robot.engine.model.rod_arrays.position, copy=True),
                    np.array(robot.engine.model.body_arrays.position, copy=True),
                    robot.engine.n_jacobians, robot.engine.n_colors_rates)
    assert out["topology"][2:] == out["differenced"][2:]
    assert np.abs(out["topology"][0] - out["differenced"][0]).max() < 1e-12
    assert np.abs(out["topology"][1] - out["differenced"][1]).max() < 1e-12
