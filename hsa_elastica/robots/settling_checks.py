"""The tests a settling run applies after each check (:mod:`hsa_elastica.robots.settling`,
:mod:`hsa_elastica.robots.settling_watch`): the creep bound of the dampers, the static residual
of the pose, lost turns of twist, and the outcome of a run (:class:`Relaxation`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from hsa_elastica.engines.timeloop import SimulationFailed
from hsa_elastica.physics.actuation import MotorAngleBC, winding_defect
from hsa_elastica.physics.rotations import rotation_matrix_to_quaternion

__all__ = [
    "TOL_STATIC_RESIDUAL",
    "TOL_WINDING",
    "Relaxation",
    "creep_factor",
    "describe_lost",
    "equilibrium_residual_ok",
    "lost_twist",
    "lost_twist_model",
    "settling_state",
    "stack_settling_state",
]


def creep_factor(rate: float, dt: float) -> float:
    """``(exp(c dt) - 1) / dt`` [1/s]: the acceleration [m/s^2] per unit speed that the damper
    ``v *= exp(-c dt)`` removes each step, i.e. the residual force per unit mass of a robot
    creeping at that speed (``~ c`` for ``c dt << 1``)."""
    x = rate * dt
    return math.inf if x > 700.0 else math.expm1(x) / dt


#: N (or N m); largest net force on a free node / couple on an element or the platform at a
#: converged pose.  A robot within the default speed bounds (1e-4 m/s at 50 1/s) still feels
#: damping forces m c v of ~4e-6 N per rod node and ~8e-5 N on the platform; 1e-3 N leaves a
#: factor >10 for that and is ~1e-3 of the joint forces of an actuated pose.
TOL_STATIC_RESIDUAL = 1e-3


def equilibrium_residual_ok(robot: Any, tol: float = TOL_STATIC_RESIDUAL) -> bool:
    """The force balance holds at the current pose: the static residual
    (:meth:`~hsa_elastica.robots.compiled.FastRobot.static_residual`, velocities set to zero)
    of a robot stepped by a compiled engine is below ``tol`` [N, N m].  Robots stepped by the reference operators are
    not compiled for it (True: the speed and damper-balance bounds decide)."""
    from hsa_elastica.engines.compile import CompiledModel

    if not isinstance(getattr(robot, "model", None), CompiledModel):
        return True
    forces, couples = robot.static_residual()
    return max(forces, couples) < tol  # (nan: not below)


#: rad; largest magnitude of the twist defect
#: (:func:`~hsa_elastica.physics.actuation.winding_defect`) of an intact rod.  A rod that lost a turn has a defect of 2 pi; an intact one only the writhe of
#: its centreline (3e-3 rad for the paper robot's bend primitive at 2 pi, 0.08 rad during the
#: 1 s elongation ramp), so pi separates the two.
TOL_WINDING = math.pi


def lost_twist(robot: Any, angles: Any = None) -> list[tuple[int, float]]:
    """``(rod index, defect [rad])`` of each rod of ``robot`` whose twist no longer matches its
    motor (:func:`~hsa_elastica.physics.actuation.winding_defect` beyond :data:`TOL_WINDING`).

    Every rod held by a :class:`MotorAngleBC` in the lab is checked (a robot's rods, a stack's
    bottom stage; rods on motor mounts are not); ``angles`` [rad] are their motor angles
    (default: the motors' schedules at the robot's present time).  The discrete rod stores the
    rotation between neighbouring elements modulo a full turn, so a rod that was wrenched by
    more than pi between two elements (a violent buckle in the dynamics, a continuation step of
    more than pi in the statics) settles on an equilibrium of the same equations with whole
    turns of twist missing: the platform pose of a smaller motor angle, reported as if it were
    the commanded one.  An empty list: every checked rod is intact.
    """
    segments = getattr(robot, "segments", None) or [robot]
    t = float(getattr(robot, "time", 0.0))
    out: list[tuple[int, float]] = []
    k = 0
    for seg in segments:
        for rod, ref in zip(seg.rods, seg.motors):
            bc = getattr(ref, "instance", ref)
            if isinstance(bc, MotorAngleBC):
                phi = float(bc.angle(t)) if angles is None else float(angles[k])
                d = float(winding_defect(
                    bc.reference_director, np.ascontiguousarray(rod.director_collection), phi
                ))
                if not abs(d) < TOL_WINDING:
                    out.append((k, d))
            k += 1
    return out


def lost_twist_model(model: Any, angles: Any) -> list[tuple[int, float]]:
    """:func:`lost_twist` on the arrays of a compiled model (the static solver's state):
    ``(motor row, defect [rad])`` of each rod held by a motor in the lab
    (``MotorTable.body == -1``) whose twist does not match its motor angle ``angles[row]``
    [rad] (the rows of ``model.tables.motors``, as :meth:`CompiledModel.commands`)."""
    rod, m = model.rod_arrays, model.tables.motors
    ghosts = np.asarray(rod.ghost_elems_idx, dtype=np.int64).ravel()
    n_el = rod.director.shape[2]
    out: list[tuple[int, float]] = []
    for i in range(len(m.element)):
        if int(m.body[i]) >= 0:
            continue
        e0 = int(m.element[i])
        later = ghosts[ghosts > e0]
        end = int(later.min()) if later.size else n_el
        d = float(winding_defect(
            np.ascontiguousarray(m.reference_director[i]),
            np.ascontiguousarray(rod.director[:, :, e0:end]), float(angles[i]),
        ))
        if not abs(d) < TOL_WINDING:
            out.append((i, d))
    return out


def describe_lost(lost: list[tuple[int, float]]) -> str:
    """``"rod 0 lost +1.00 turns of twist; ..."`` for the entries of :func:`lost_twist`."""
    return "; ".join(f"rod {i} lost {d / (2 * math.pi):+.2f} turns of twist" for i, d in lost)


@dataclass
class Relaxation:
    """Outcome of :func:`relax`: the stopping time [s], steps taken, the start of the final
    settling window [s] (None if none), whether the window was completed, the last
    ``state_fn`` state, the divergence that stopped the run (None if none), the rods found
    with lost turns of twist (:func:`lost_twist`; the run stops there, not converged), and
    the wall-clock times [s] of the simulation loop (``wall_time_s``: the steps, checks and
    recordings) and of what :func:`~hsa_elastica.robots.settling.settle` did before it
    (``setup_wall_time_s``: the compiled model, the engine, loading the kernels, and the
    build under :func:`~hsa_elastica.robots.settling.build_and_settle`; nan when not
    measured)."""

    t: float
    n_steps: int
    settled_since: float | None
    converged: bool
    state: dict[str, Any]
    divergence: SimulationFailed | None
    lost: list[tuple[int, float]] | None = None
    wall_time_s: float = math.nan
    setup_wall_time_s: float = math.nan


def settling_state(robot: Any) -> dict[str, Any]:
    """Current pose and speeds of ``robot``, what a settling run watches: platform position
    [m], quaternion (xyzw, body -> lab), rod tip positions (n_rods, 3) [m], max node/platform
    speed [m/s], platform ``|omega|``.  (Not the step API's ``state()``, which is
    :func:`hsa_elastica.engines.control.robot_state`; this one was called ``robot_state`` too
    until the name was given to that one alone.)"""
    plat = robot.platform
    q = rotation_matrix_to_quaternion(np.ascontiguousarray(plat.director_collection[:, :, 0].T))
    speeds = [float(np.max(np.linalg.norm(r.velocity_collection, axis=0))) for r in robot.rods]
    speeds.append(float(np.linalg.norm(plat.velocity_collection[:, 0])))
    return {
        "platform_position_m": np.array(plat.position_collection[:, 0], dtype=np.float64),
        "platform_quaternion_xyzw": np.array(q, dtype=np.float64),
        "rod_tip_positions_m": np.array(
            [r.position_collection[:, -1] for r in robot.rods], dtype=np.float64
        ),
        "max_speed": max(speeds),
        "platform_omega": float(np.linalg.norm(plat.omega_collection[:, 0])),
    }


def stack_settling_state(robot: Any) -> dict[str, Any]:
    """:func:`settling_state` of every segment of a stack, and the largest speeds over all of
    them (what a stack's settling run watches)."""
    per = [settling_state(seg) for seg in robot.segments]
    return {
        "segments": per,
        "max_speed": max(s["max_speed"] for s in per),
        "platform_omega": max(s["platform_omega"] for s in per),
    }
