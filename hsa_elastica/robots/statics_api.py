"""Steady states by solving the static equations: :func:`solve_static`, its batch form and
:func:`static_residual`.

The equilibrium solved is the one of the discrete model the dynamic paths integrate (same
force evaluation, :mod:`hsa_elastica.engines.statics`), so a solved pose is the pose that
:func:`~hsa_elastica.robots.steady_state.solve_steady_state` settles to, without the time
integration: milliseconds instead of about a second per pose.

Branches.  The twist primitives buckle: past a critical twist the symmetric pose is an unstable
equilibrium and the robot settles on one of two mirror-image tilted poses.  The solver tests the
stability of every solution (eigenvalues of ``M^-1 K``, see
:meth:`~hsa_elastica.engines.statics.StaticSolver.stability`) and, on an unstable one, follows
the unstable mode in both directions to the stable poses.  Which mirror pose the dynamics reach
is decided by round-off-level asymmetries of the run (it changes with the twist magnitude), so
no rule predicts it: by default the solver then runs the dynamic relaxation once and keeps the
static pose nearest to the one the dynamics settled on (``mirror_branch="+y"`` skips that and
takes the pose with the platform further toward +y).  Symmetric commands are always solved from
the straight pose, so that the instability is seen.  A solve that does not converge, or ends on
an unstable pose with no stable neighbour, falls back to dynamic relaxation
(``method = "dynamic"`` in the result, and a warning is logged).
"""

from __future__ import annotations

import logging
import math
import time as _time
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.compile import CompiledModel, compile_simulator
from hsa_elastica.engines.statics import StaticOutcome, StaticSolver, model_residual
from hsa_elastica.engines.timeloop import check_time_step
from hsa_elastica.io.held_messages import held_warnings
from hsa_elastica.params import (
    ParameterError,
    RobotParams,
    check_motor_angles,
    warn_mass_without_gravity,
)
from hsa_elastica.physics.joints import rotation_matrix_to_quaternion
from hsa_elastica.robots.settling import describe_lost, lost_twist_model
from hsa_elastica.robots.static_cache import pose_stability as pose_stability
from hsa_elastica.robots.static_cache import static_solver as static_solver
from hsa_elastica.robots.steady_state import SteadyStateResult, solve_steady_state

__all__ = [
    "solve_static", "solve_static_batch", "solve_static_near", "static_residual", "static_solver",
    "linearize", "pose_stability",
]

log = logging.getLogger(__name__)

#: load steps of the continuation from the straight pose
CONTINUATION_STEPS = 4

#: values of ``mirror_branch`` (:func:`solve_static`): how a buckled symmetric twist pose picks
#: one of its two mirror-image branches
MIRROR_BRANCHES = ("dynamic", "gravity", "+y")
#: the note of a ``mirror_branch="dynamic"`` pick the dynamics did not decide
UNDECIDED = ("the dynamic relaxation asked to choose between two mirror-image branches stayed "
             "on the unstable symmetric pose, so round-off chose the branch")

def _mirror_symmetric(params: RobotParams, angles: NDArray[np.float64]) -> bool:
    """The command maps to itself under a rotation of the robot about its axis (the half turn
    of the paper robot: rod ``i`` -> rod ``i + n/2``, same handedness) that its rods'
    imperfections keep too (:func:`~hsa_elastica.robots.symmetry.command_symmetries`): the
    pose may buckle onto one of two mirror branches."""
    from hsa_elastica.robots.symmetry import command_symmetries

    return any(s.det == 1 for s in command_symmetries(params, angles))


def _branch_rule(params: RobotParams, angles: NDArray[np.float64], mirror_branch: str,
                 notes: list[str] | None = None) -> Any:
    """Picks among the stable states found on both sides of an unstable symmetric pose;
    appends to ``notes`` what the caller should tell about the pick (once per reason)."""
    notes = [] if notes is None else notes

    def by_y(solver: StaticSolver, candidates: list[tuple[NDArray[np.float64], ...]]) -> int:
        keys = [(round(float(c[2][1, 0]), 9), round(float(c[2][0, 0]), 9)) for c in candidates]
        return int(max(range(len(keys)), key=lambda i: keys[i]))

    def by_dynamics(solver: StaticSolver, candidates: list[tuple[NDArray[np.float64], ...]]) -> int:
        if len(candidates) == 1:
            return 0
        log.info("mirror branches at %s: asking the dynamic relaxation which one it reaches",
                 np.array2string(angles, precision=4))
        with held_warnings():  # about the relaxation's own pose, not the result: told below
            dyn = solve_steady_state(params, angles, record=False)
        if dyn.stable is False and UNDECIDED not in notes:
            # it stayed on the symmetric pose: both branches are equally near, round-off picks
            notes.append(UNDECIDED)
        dist = [float(np.linalg.norm(c[2][:, 0] - dyn.platform_position_m)) for c in candidates]
        return int(np.argmin(dist))

    def by_gravity(solver: StaticSolver, candidates: list[tuple[NDArray[np.float64], ...]]) -> int:
        g = params.simulation.gravity
        lateral = np.array([g[0], g[1]]) if g is not None else np.zeros(2)
        if not np.any(lateral):
            return by_dynamics(solver, candidates)
        keys = [round(float(c[2][:2, 0] @ lateral), 12) for c in candidates]
        return int(max(range(len(keys)), key=lambda i: keys[i]))

    rules = {"dynamic": by_dynamics, "+y": by_y, "gravity": by_gravity}
    if mirror_branch not in rules:
        raise ParameterError(
            f"mirror_branch = {mirror_branch!r} is invalid: must be one of "
            f"{', '.join(repr(b) for b in MIRROR_BRANCHES)}"
        )
    return rules[mirror_branch]


def _result(solver: StaticSolver, params: RobotParams, angles: NDArray[np.float64],
            out: StaticOutcome, wall: float, cpu: float) -> SteadyStateResult:
    body = solver.model.body_arrays
    rod = solver.model.rod_arrays
    q = rotation_matrix_to_quaternion(np.ascontiguousarray(body.director[:, :, 0].T))
    tips = rod.position[:, np.asarray(solver.model.tables.joints.node)].T.copy()
    result = SteadyStateResult(
        converged=bool(out.converged),
        sim_time_s=0.0,
        wall_time_s=float(wall),
        motor_angles_rad=angles.copy(),
        platform_position_m=body.position[:, 0].copy(),
        platform_quaternion_xyzw=np.array(q, dtype=np.float64),
        rod_tip_positions_m=tips,
        max_node_speed_m_s=0.0,
        max_platform_omega_rad_s=0.0,
        settle_time_s=float("nan"),
        n_steps=0,
        params=params,
        method="static",
        iterations=int(out.iterations),
        stable=out.stable,
        state=(angles.copy(), solver.pose()),
        cpu_time_s=float(cpu),
    )
    result.check_symmetry()
    return result


def _checked(solver: StaticSolver, out: StaticOutcome) -> StaticOutcome:
    """``out``, marked not converged if a rod of the solved state lost a turn of twist
    (:func:`~hsa_elastica.robots.settling.lost_twist_model`): the equations hold there, but
    for motor angles a whole turn away from the commanded ones."""
    if out.converged:
        lost = lost_twist_model(solver.model, out.angles)
        if lost:
            out.converged = False
            out.message = describe_lost(lost)
    return out


def _solve_one(solver: StaticSolver, straight: tuple[NDArray[np.float64], ...],
               params: RobotParams, angles: NDArray[np.float64], warm: Any,
               check_stability: bool, fallback: bool, mirror_branch: str) -> SteadyStateResult:
    wall0 = _time.perf_counter()
    cpu0 = _time.process_time()
    out: StaticOutcome | None = None
    notes: list[str] = []
    rule = _branch_rule(params, angles, mirror_branch, notes)
    if warm is not None and not (check_stability and _mirror_symmetric(params, angles)):
        # (a symmetric command is solved from the straight pose: continuing from a tilted
        # neighbour could land on either mirror branch without any instability to detect)
        solver.set_pose(warm[1])
        out = _checked(solver, solver.solve(angles, start=warm[0], steps=1, max_halvings=3,
                                            check_stability=check_stability, branch_rule=rule))
    if out is None or not out.converged:
        solver.set_pose(straight)
        out = _checked(solver, solver.solve(angles, start=np.zeros_like(angles),
                                            steps=CONTINUATION_STEPS,
                                            check_stability=check_stability, branch_rule=rule))
    def static_result() -> SteadyStateResult:
        res = _result(solver, params, angles, out, _time.perf_counter() - wall0,
                      _time.process_time() - cpu0)
        res.converged = res.converged and out.stable is not False
        return res

    if (out.converged and out.stable is not False) or not fallback:
        res = static_result()
        _report(angles, notes, res)
        return res
    notes.append(f"the static solve stopped: {out.message or 'not converged'}")
    try:
        check_time_step(params.simulation.dt, params)
    except ParameterError as exc:  # no dynamics to fall back on: the static result, not converged
        notes.append(f"no dynamic fallback ({exc})")
        res = static_result()
        _report(angles, notes, res)
        return res
    with held_warnings() as inner:  # about the fallback's pose: the result, told in one line
        dyn = solve_steady_state(params, angles, record=False)
    dyn.wall_time_s = _time.perf_counter() - wall0
    dyn.iterations = int(out.iterations)
    notes.append("retried by dynamic relaxation from rest")
    _report(angles, notes + inner, dyn)
    return dyn


def _report(angles: NDArray[np.float64], notes: list[str], result: SteadyStateResult) -> None:
    """One warning line for a pose whose solve needed more than one attempt or whose branch
    round-off chose: what happened, then what the returned result is."""
    if not notes:
        return
    p = result.platform_position_m * 1e3
    if result.converged:
        outcome = f"converged ({result.method}), platform at ({p[0]:.2f}, {p[1]:.2f}, {p[2]:.2f}) mm"
        if result.symmetry_broken:
            outcome += "; its mirror image is an equally valid equilibrium"
    else:
        outcome = f"NOT converged ({result.method})"
    log.warning("motor angles %s: %s; result: %s", np.array2string(angles, precision=4),
                "; ".join(notes), outcome)


def solve_static(
    params: RobotParams,
    motor_angles: Sequence[float] | NDArray[np.float64],
    *,
    initial: SteadyStateResult | None = None,
    check_stability: bool = True,
    fallback: bool = True,
    mirror_branch: str = "dynamic",
) -> SteadyStateResult:
    """Static equilibrium of the robot ``params`` at ``motor_angles`` [rad] (one per rod).

    Continuation from the straight pose in :data:`CONTINUATION_STEPS` load steps, or, with
    ``initial`` (a result of this function for the same ``params``), Newton from that pose.
    ``check_stability`` tests the solution and moves off unstable (symmetric buckling) poses;
    ``fallback`` runs :func:`solve_steady_state` when the static solve fails (then
    ``method = "dynamic"``).  ``mirror_branch``: how to choose between two mirror-image
    buckled poses (symmetric twist commands): ``"dynamic"`` (default) runs the dynamic
    relaxation once and keeps the static pose nearest to it, ``"+y"`` takes the pose whose
    platform lies further toward +y without running the dynamics, ``"gravity"`` the pose whose
    platform lies further along the lateral component of gravity (the side a tilted mount
    loads; as ``"dynamic"`` when gravity has no lateral component).  Returns a :class:`SteadyStateResult` with ``method = "static"``,
    ``sim_time_s = 0``, ``iterations`` and ``stable``.

    Raises ``ParameterError`` for invalid ``params`` or angles (wrong count, not finite, beyond
    ``+-MAX_MOTOR_ANGLE``: :func:`~hsa_elastica.params.check_motor_angles`) before any work.
    A solution on which a rod has lost a whole turn of twist against its motor
    (:func:`~hsa_elastica.robots.settling.lost_twist_model`) is not converged.  The static
    solve needs no time step: ``simulation.dt`` is only checked before a dynamic fallback
    (without a valid one the unconverged static result is returned, ``converged = False``).
    """
    if not isinstance(params, RobotParams):
        raise ParameterError(f"params = {params!r} is invalid: must be a RobotParams")
    angles = check_motor_angles(motor_angles, params.n_rods, ndim=1)
    warn_mass_without_gravity(params)
    solver, straight = static_solver(params)
    warm = None
    if initial is not None:
        if not isinstance(initial, SteadyStateResult) or initial.state is None:
            raise ParameterError(
                f"initial = {initial!r} is invalid: must be a result of solve_static"
            )
        if initial.params != params:
            raise ParameterError("initial is invalid: it was solved for other params")
        warm = initial.state
    return _solve_one(solver, straight, params, angles, warm, check_stability, fallback,
                      mirror_branch)


def solve_static_batch(
    params: RobotParams,
    angles_array: Sequence[Sequence[float]] | NDArray[np.float64],
    *,
    check_stability: bool = True,
    fallback: bool = True,
    mirror_branch: str = "dynamic",
    order: str = "nearest",
    initial: Sequence[SteadyStateResult | None] | None = None,
    on_pose: Callable[[], object] | None = None,
) -> list[SteadyStateResult]:
    """:func:`solve_static` for each row of ``angles_array`` ((n_poses, n_rods) [rad]), each
    started from the previous solution (from the straight pose if that fails).

    ``on_pose`` (optional) is called after every pose (a progress bar's update).

    ``initial`` (optional, one entry per row): Newton starts pose ``k`` from ``initial[k]``, a
    static result of a robot with the same discretisation (e.g. the same pose solved for
    slightly different parameters, as in a calibration's finite differences), instead of from
    the previous pose; None entries use the previous pose.

    ``order``: ``"nearest"`` (default) solves the poses along a greedy nearest-neighbour tour
    (max-norm of the angle difference, starting next to the straight pose), so that each
    Newton solve starts close to its solution; ``"given"`` keeps the rows' order.  Results
    are returned in the rows' order either way.
    """
    if not isinstance(params, RobotParams):
        raise ParameterError(f"params = {params!r} is invalid: must be a RobotParams")
    rows = np.array(check_motor_angles(angles_array, params.n_rods, field="angles_array", ndim=2))
    checked = list(rows)
    solver, straight = static_solver(params)
    starts = _initial_states(solver, initial, len(checked))
    if order == "nearest":
        sequence = nearest_neighbour_order(rows)
    elif order == "given":
        sequence = np.arange(len(checked))
    else:
        raise ParameterError(f"order = {order!r} is invalid: must be 'nearest' or 'given'")
    results: list[SteadyStateResult | None] = [None] * len(checked)
    warm = None
    for k in sequence:
        start = starts[k] if starts[k] is not None else warm
        res = _solve_one(solver, straight, params, checked[k], start, check_stability, fallback,
                         mirror_branch)
        warm = res.state if res.method == "static" and res.converged else None
        results[k] = res
        if on_pose is not None:
            on_pose()
    return [r for r in results if r is not None]


def linearize(params: RobotParams, result: SteadyStateResult) -> Any:
    """The factorised static Jacobian ``dF/dx`` at the converged static pose ``result`` of
    the robot ``params`` (an object with ``.solve(b)``), for :func:`solve_static_near`."""
    solver, _ = static_solver(params)
    state = _initial_states(solver, [result], 1)[0]
    if state is None:
        raise ParameterError("result is invalid: must be a converged static result")
    solver.set_pose(state[1])
    a = np.asarray(state[0], dtype=np.float64)
    return solver.factorize(solver.jacobian(a, solver.evaluate(a).copy()))


def solve_static_near(
    params: RobotParams,
    initial: Sequence[SteadyStateResult],
    factorizations: Sequence[Any],
    *,
    max_iter: int = 30,
) -> list[SteadyStateResult | None]:
    """Equilibria of the robot ``params`` close to known ones: pose ``k`` is solved at the motor
    angles of ``initial[k]`` (a converged static result of a robot with the same
    discretisation, e.g. slightly different parameters) by chord iterations (Newton with the
    fixed Jacobian ``factorizations[k]`` of :func:`linearize` at ``initial[k]``), which stay on
    the branch of ``initial[k]``.  For small parameter changes (finite differences of a
    calibration) each iteration divides the residual by about the inverse relative change,
    at the cost of a residual evaluation instead of a Jacobian.  The tolerance is the
    solver's (:class:`~hsa_elastica.engines.statics.StaticSolver`).  Entries that do not
    converge in ``max_iter`` iterations are None (solve them with :func:`solve_static_batch`).
    """
    if not isinstance(params, RobotParams):
        raise ParameterError(f"params = {params!r} is invalid: must be a RobotParams")
    for k, res in enumerate(initial):
        angles = getattr(res, "motor_angles_rad", None)
        if angles is not None:
            check_motor_angles(angles, params.n_rods, field=f"initial[{k}].motor_angles_rad")
    solver, _ = static_solver(params)
    solver.jit = True  # chord iterations: many evaluations (compile the kernels)
    states = _initial_states(solver, list(initial), len(initial))
    if len(factorizations) != len(initial):
        raise ParameterError("factorizations must have one entry per initial result")
    out: list[SteadyStateResult | None] = []
    for state, lu in zip(states, factorizations):
        wall0, cpu0 = _time.perf_counter(), _time.process_time()
        if state is None:
            out.append(None)
            continue
        solver.set_pose(state[1])
        a = np.asarray(state[0], dtype=np.float64)
        f = solver.evaluate(a)
        it = 0
        while not solver.converged(f) and it < max_iter and np.all(np.isfinite(f)):
            solver.move(lu.solve(-f))
            f = solver.evaluate(a)
            it += 1
        if not solver.converged(f):
            out.append(None)
            continue
        fn, tn = solver.norms(f)
        res = _result(solver, params, a, StaticOutcome(True, it, fn, tn, angles=a),
                      _time.perf_counter() - wall0, _time.process_time() - cpu0)
        out.append(res)
    return out


def _initial_states(solver: StaticSolver, initial: Any, n: int) -> list[Any]:
    """The start states of ``initial`` (see :func:`solve_static_batch`), checked against the
    solver's layout."""
    if initial is None:
        return [None] * n
    if len(initial) != n:
        raise ParameterError(f"initial has {len(initial)} entries: must be one per pose ({n})")
    shapes = [a.shape for a in solver.pose()]
    out: list[Any] = []
    for k, res in enumerate(initial):
        state = getattr(res, "state", None) if res is not None else None
        if res is not None and res.method == "static" and res.converged and state is not None:
            if [a.shape for a in state[1]] != shapes:
                raise ParameterError(
                    f"initial[{k}] is invalid: it was solved for a robot of another discretisation"
                )
            out.append(state)
        else:
            out.append(None)
    return out


def nearest_neighbour_order(rows: NDArray[np.float64], ord: float | None = np.inf) -> NDArray[np.int64]:
    """Greedy nearest-neighbour tour through the rows of ``rows`` ((n, m) angles [rad]),
    starting from the row nearest to zero, distances in the ``ord`` norm of
    ``numpy.linalg.norm`` (default the max-norm; ties: the lowest row): each pose follows a
    near one, so the previous solution is a good start.  O(n^2) time, O(n) memory."""
    n = rows.shape[0]
    left = np.ones(n, dtype=bool)
    out = np.empty(n, dtype=np.int64)
    cur = np.zeros(rows.shape[1])
    for k in range(n):
        d = np.linalg.norm(rows - cur, ord=ord, axis=1)
        d[~left] = np.inf
        j = int(np.argmin(d))
        out[k] = j
        left[j] = False
        cur = rows[j]
    return out


def static_residual(robot_or_model: Any, motor_angles: Sequence[float] | None = None) -> float:
    """Max-norm of the static residual at the current pose of a robot [N and N m].

    ``robot_or_model``: a :class:`~hsa_elastica.robots.compiled.FastRobot` (after ``run``), a
    fresh :class:`~hsa_elastica.robots.builders.Robot`, or a :class:`CompiledModel`.  The
    residual is the largest net force on a free node [N] or net couple on a free element /
    the platform [N m] with the velocities set to zero (on a copy; the robot is untouched),
    at ``motor_angles`` [rad] (default: the motor schedules at the robot's present time).
    A settled dynamic state has a residual of the order of the damping forces it still feels.
    """
    t = float(getattr(robot_or_model, "time", 0.0))
    if isinstance(robot_or_model, CompiledModel):
        model = robot_or_model
    elif isinstance(getattr(robot_or_model, "model", None), CompiledModel):
        model = robot_or_model.model
    elif hasattr(robot_or_model, "simulator"):
        model = compile_simulator(robot_or_model.simulator)
    else:
        raise ParameterError(
            f"robot_or_model = {robot_or_model!r} is invalid: must be a FastRobot, Robot or "
            "CompiledModel"
        )
    if motor_angles is None:
        angles = model.commands(t)
    else:
        angles = np.asarray(motor_angles, dtype=np.float64)
        if angles.shape != (len(model.inputs.motor_bcs),) or not np.all(np.isfinite(angles)):
            raise ParameterError(
                f"motor_angles = {motor_angles!r} is invalid: must be one finite angle per motor"
            )
    check = getattr(robot_or_model, "residual_check", None)  # a compiled handle's workspace
    fn, tn = check().norms(angles) if check is not None else model_residual(model, angles)
    return float(max(fn, tn)) if math.isfinite(fn + tn) else math.inf
