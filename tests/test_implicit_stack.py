"""Stacks (motors of the upper stage mounted on the lower stage's platform, a moving body) on the
implicit integrator (hsa_elastica/engines/implicit.py).

Checked against numbers the integrator's Newton iteration does not produce: a dense
column-by-column finite-difference Jacobian of the same residual, the explicit stepper's
trajectory, and the static solver's equilibrium.
"""

from __future__ import annotations

import numpy as np
import pytest

from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.implicit_kernels import (
    FDBuffers,
    Increment,
    Pose,
    PoseBuffers,
    dynamic_fd_jacobian,
    set_pose,
)
from hsa_elastica.engines.statics_kernels import (
    KIND_BODY_ROT,
    KIND_ELEMENT,
    KIND_SWING,
    KIND_TWIST,
    JacobianPattern,
    Unknowns,
)
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.compiled import FastRobot, ImplicitRobot, compiled_engine
from hsa_elastica.robots.stack import build_stack, solve_stack_static

CMD = [[0.8, 0.3, 0.8, 0.3], [0.3, 0.8, 0.3, 0.8]]


def _first_of_rotation(eng: ImplicitEngine) -> np.ndarray:
    """First unknown of each unknown's element / body (its rotation components are
    consecutive), as :class:`~hsa_elastica.engines.implicit_kernels.Increment` takes it."""
    s = eng.solver
    first = np.arange(eng.n, dtype=np.int64)
    for j in range(1, eng.n):
        if s.kind[j] == s.kind[j - 1] and s.index[j] == s.index[j - 1]:
            first[j] = first[j - 1]
    return first


def _jacobian(eng: ImplicitEngine, pattern: JacobianPattern, t: float, angles: np.ndarray,
              rates: np.ndarray, v: np.ndarray, f0: np.ndarray, x: np.ndarray,
              q0: Pose) -> np.ndarray:
    """The engine's finite-difference Jacobian kernel on ``pattern`` at the increment ``x``
    from the pose ``q0``, as a dense matrix."""
    n = eng.n
    data = np.zeros(pattern.indices.shape[0])
    dynamic_fd_jacobian(
        t, angles, rates, v, eng._model_args, eng._aux, eng.gamma / (eng.beta * eng.dt), pattern,
        FDBuffers(f0.copy(), np.zeros(n), np.zeros(n), np.zeros((n, 3, 3)), np.zeros(n), data,
                  np.empty((3, 3, 1))),
        Increment(np.ascontiguousarray(x), q0, _first_of_rotation(eng)))
    out = np.zeros((n, n))
    for j in range(n):
        rows = pattern.indices[pattern.indptr[j]:pattern.indptr[j + 1]]
        out[rows, j] = data[pattern.indptr[j]:pattern.indptr[j + 1]]
    return out


def test_coloured_jacobian_of_a_moving_stack_equals_the_dense_one() -> None:
    """At the first step's predictor of a stack whose lower platform is kicked (moving and
    turning: the upper motors' mounts move with it, and the pose differs from the step's
    start), the coloured forward-difference Jacobian (``dF/dq + gamma/(beta h) dF/dv``) equals
    the dense one, each column perturbed alone with the same steps, to 1e-9 of each column's
    largest entry: with a complete sparsity pattern the other columns of a colour do not enter
    a column's rows, so both see the same differences (measured: bit for bit).  Before the
    mount's element director was imposed ahead of its rates, the first colour also carried the
    jump of that director from the step's start, entries as large as the column's own.  The
    same holds at random velocities of every unknown: the pattern the static solver finds from
    positions alone holds the couplings of the velocity terms (dampers, Kelvin-Voigt, the
    mounts' rates) too."""
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=4),
                  simulation=p.simulation.replace(dt=2e-3, integrator="implicit"))
    stack = build_stack([p, p], CMD, record=False)
    stack.platforms[0].velocity_collection[:, 0] = (0.05, -0.02, 0.01)
    stack.platforms[0].omega_collection[:, 0] = (3.0, -2.0, 5.0)
    robot = compiled_engine(stack)
    assert isinstance(robot, ImplicitRobot)
    eng = robot.engine
    angles = np.full(8, 0.2)
    rates = np.full(8, 10.0)
    eng.start(angles, rates)
    s, n = eng.solver, eng.n
    rod, body = eng.model.rod_arrays, eng.model.body_arrays
    # the first step's predictor (a_{n+1} = 0, module doc of engines/implicit.py): the pose
    # q0 o exp(x) with x = h v + h^2 (1/2 - beta) a, the velocity v + h (1 - gamma) a
    h, b, g = eng.dt, eng.beta, eng.gamma
    x = h * eng.v + h * h * (0.5 - b) * eng.a
    v1 = eng.v + h * (1.0 - g) * eng.a
    q0 = Pose(rod.position.copy(), rod.director.copy(), body.position.copy(),
              body.director.copy())
    buffers = PoseBuffers(np.zeros_like(rod.position), np.zeros((3, rod.director.shape[2])),
                          np.zeros_like(body.position), np.zeros((3, body.director.shape[2])),
                          np.zeros((3, 3, rod.director.shape[2])),
                          np.zeros((3, 3, body.director.shape[2])))
    set_pose(x, q0, rod, body, Unknowns(s.kind, s.index, s.comp), buffers)
    rot = np.isin(s.kind, (KIND_ELEMENT, KIND_SWING, KIND_TWIST, KIND_BODY_ROT))
    assert np.abs(x[rot]).max() > 1e-3  # the pose has moved from the step's start
    assert s.n_colors < n // 2  # columns do share colours
    coloured_pattern = JacobianPattern(s.steps, s.color_ptr, s.color_cols, s.indptr, s.indices)
    dense_pattern = JacobianPattern(s.steps, np.arange(n + 1), np.arange(n),
                                    np.arange(0, n * n + 1, n), np.tile(np.arange(n), n))
    # the predictor's velocities, then random ones of every unknown (0.1 m/s, 10 rad/s): the
    # pattern found from positions alone must hold the velocity terms' couplings too
    rng = np.random.default_rng(7)
    random_v = np.where(rot, 10.0, 0.1) * rng.standard_normal(n)
    for v in (v1, random_v):
        f0 = eng.forces(h, angles, rates, v).copy()
        coloured = _jacobian(eng, coloured_pattern, h, angles, rates, v, f0, x, q0)
        dense = _jacobian(eng, dense_pattern, h, angles, rates, v, f0, x, q0)
        scale = np.abs(dense).max(axis=0)
        assert np.all(scale > 0.0)
        err = np.abs(coloured - dense).max(axis=0) / scale
        assert err.max() <= 1e-9, (err.max(), eng.describe_unknown(int(np.argmax(err)))
                                   if eng.describe_unknown else "")


def test_stack_follows_fast_commands_on_the_implicit_integrator() -> None:
    """A 20 ms ramp (motors at up to 40 rad/s, as a 20 ms control step of HSAStack-v0) at the
    env's implicit step 2e-3 s is not refused.  During the whip (3.8 mm of platform motion,
    platforms up to 43 mm/s) the platforms stay within 0.3 mm of the explicit stepper's at its
    own step (the scheme's phase error on the ~20 Hz sway at omega h ~ 0.25, a few per cent of
    the motion; measured 0.14 mm), and after 0.5 s of damped settling they are at the static
    solver's equilibrium within 1 um (measured 0.08 um; the rest is the remaining settling,
    platform speeds ~1e-5 m/s)."""
    p = paper_robot_params()
    p = p.replace(rod=p.rod.replace(n_elements=6),
                  simulation=p.simulation.replace(ramp_time=0.02, damping=30.0,
                                                  rotational_damping=30.0))
    q = p.replace(simulation=p.simulation.replace(dt=2e-3, integrator="implicit"))
    ex = FastRobot(build_stack([p, p], CMD, record=False))
    im = compiled_engine(build_stack([q, q], CMD, record=False))
    assert isinstance(im, ImplicitRobot)
    start = ex.body_arrays.position.copy()
    worst, motion = 0.0, 0.0
    for _ in range(25):
        ex.run(0.02)
        im.run(0.02)
        motion = max(motion, float(np.abs(ex.body_arrays.position - start).max()))
        worst = max(worst, float(np.abs(ex.body_arrays.position - im.body_arrays.position).max()))
    assert motion > 3e-3
    assert worst < 3e-4, worst
    static = solve_stack_static([p, p], CMD)
    assert static.converged
    for k, (position, _) in enumerate(static.poses):
        assert np.abs(im.body_arrays.position[:, k] - position).max() < 1e-6


def test_stack_env_takes_random_commands_on_the_implicit_integrator() -> None:
    """``HSAStack-v1`` with ``integrator="implicit"`` (coarse, internal step STACK_IMPLICIT_DT)
    takes unlimited random commands (every motor may turn its whole range in one 20 ms
    interval), which refused it at its first step before; the top platform stays finite and
    within the stack's reach."""
    import gymnasium as gym

    import hsa_elastica  # noqa: F401  (registers the envs)
    from hsa_elastica.envs.hsa_stack import STACK_IMPLICIT_DT

    env = gym.make("HSAStack-v1", integrator="implicit", motor_speed=None)
    env.reset(seed=0)
    robot = env.unwrapped.robot
    assert isinstance(robot, ImplicitRobot) and robot.dt == STACK_IMPLICIT_DT
    rng = np.random.default_rng(0)
    for _ in range(5):
        obs, _, terminated, _, _ = env.step(rng.uniform(-1.0, 1.0, 8).astype(np.float32))
        assert not terminated and np.all(np.isfinite(obs))
    assert robot.time == pytest.approx(0.1)
    assert np.linalg.norm(obs[:3]) < 0.428  # the stack's reach (docs/control.md)
    env.close()
