"""The cached static solver of a robot (:func:`static_solver`) and the stability of a pose of
the robot (:func:`pose_stability`), shared by the static API
(:mod:`hsa_elastica.robots.statics_api`) and the dynamic steady states
(:mod:`hsa_elastica.robots.steady_state`, which test a settled pose with it)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.compile import CompiledModel, compile_simulator
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.params import ParameterError, RobotParams
from hsa_elastica.physics.tables import Pose
from hsa_elastica.robots.builders import build_robot

__all__ = ["static_solver", "pose_stability"]

_CACHE: "OrderedDict[RobotParams, tuple[StaticSolver, Pose]]" = OrderedDict()


def check_static_model(params: RobotParams) -> None:
    """``ParameterError`` (one line) if the robot ``params`` has no static equilibrium problem
    the solver can pose: free objects (``environment.objects``) have no stiffness in their
    rotation and their sliding, so the Jacobian is singular (docs/contact.md)."""
    if params.environment.objects:
        raise ParameterError(
            f"RobotParams.environment.objects = {len(params.environment.objects)} free "
            "object(s) is invalid for a static solve: must be none (a free object has no "
            "stiffness in its rotation and sliding); solve such a robot dynamically")


def static_solver(params: RobotParams) -> tuple[StaticSolver, Pose]:
    """A :class:`StaticSolver` of the robot ``params`` and its straight (assembly) pose,
    cached (the last four parameter sets)."""
    if not isinstance(params, RobotParams):
        raise ParameterError(f"params = {params!r} is invalid: must be a RobotParams")
    check_static_model(params)
    hit = _CACHE.get(params)
    if hit is not None:
        _CACHE.move_to_end(params)
        return hit
    # no time step in a static solve: simulation.dt is not checked here (the dynamic fallback
    # checks it when it runs)
    robot = build_robot(params, [0.0] * params.n_rods, ramp=0.0, record=False, finalize=True,
                        check_dt=False)
    solver = StaticSolver(compile_simulator(robot.simulator))
    entry = (solver, solver.pose())
    _CACHE[params] = entry
    while len(_CACHE) > 4:
        _CACHE.popitem(last=False)
    return entry


def _memory_of(model: CompiledModel) -> dict[str, NDArray[np.float64]]:
    """The creep strain [-] and the play's memory [rad/m] of ``model``'s present state as the
    static solver reads them: the play's output at its latest evaluation (the memory of the
    next time; the memory itself before any evaluation)."""
    c = model.state.memory["couplings"]
    n = c["play"].shape[1]
    play = np.where(np.isfinite(c["play_last"])[:, None], c["play_trial"][:, n:], c["play"])
    return {"eps_creep": c["eps_creep"], "play": play}


def pose_stability(params: RobotParams, model: CompiledModel,
                   angles: NDArray[np.float64]) -> float:
    """Smallest real part [1/s^2] of the eigenvalues of ``M^-1 K`` near zero at the present
    state of ``model`` (a compiled robot of ``params``, e.g. a settled dynamic run) for motor
    ``angles`` [rad] (:meth:`~hsa_elastica.engines.statics.StaticSolver.stability` on the
    cached solver of ``params``, whose own state is put back afterwards): the pose and the
    memory of the material laws (the creep strain, the hysteresis play's memory) are the
    model's.  Negative: the pose is an unstable equilibrium (a buckling mode grows from any
    disturbance)."""
    solver, _ = static_solver(params)
    own, pose = solver.pose(), model.state.pose
    if [a.shape for a in pose] != [a.shape for a in own]:
        raise ParameterError("model is invalid: it is not a robot of params")
    laws = solver.state.memory["couplings"]
    memory = _memory_of(model)
    if [laws[f].shape for f in memory] != [a.shape for a in memory.values()]:
        raise ParameterError("model is invalid: it is not a robot of params")
    own_memory = {f: laws[f].copy() for f in memory}
    try:
        for f, a in memory.items():
            laws[f][:] = a
        solver.set_pose(pose)
        solver._lu = None  # a factorisation of the solver's own memory is not this state's
        lam, _ = solver.stability(np.asarray(angles, dtype=np.float64), solver.stability_modes,
                                  vectors=False)
    finally:
        for f, a in own_memory.items():
            laws[f][:] = a
        solver.set_pose(own)
        solver._lu = None
    return lam
