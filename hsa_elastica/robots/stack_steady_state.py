"""Steady states of multi-segment stacks (:func:`~hsa_elastica.robots.stack.build_stack`): by
dynamic relaxation or by the static solver, with the conventions of the single robot's
:func:`~hsa_elastica.robots.steady_state.solve_steady_state` and
:func:`~hsa_elastica.robots.statics_api.solve_static`.

``method="dynamic"`` runs the whole stack from rest (motors ramped to their targets) with the
fused stepper (or the per-rod operators, ``fast=False``) and stops once the settling test of
:mod:`hsa_elastica.robots.steady_state` has held for ``window`` seconds: every rod node and
every platform slower than ``tol_velocity``, every platform's angular speed below
``tol_omega``, the damper-balance (creep) bound, and, on the fused path, the static residual of
the whole stack below :data:`~hsa_elastica.robots.settling.TOL_STATIC_RESIDUAL`.
``method="static"`` solves the static equations of the same compiled model
(:func:`~hsa_elastica.robots.stack.solve_stack_static`).  Both return a
:class:`StackSteadyStateResult` with one
:class:`~hsa_elastica.robots.steady_state.SteadyStateResult` per segment (poses in the lab
frame) and the pose of each platform relative to the one below::

    res = solve_stack_steady_state([p, p], [[0.8, -0.8, 0.8, -0.8], [0.0, 1.0, 0.0, -1.0]])
    res.segments[1].platform_position_m      # top platform, lab frame [m]
    res.relative_poses[1]                    # (position, rotation) in platform 0's frame
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io.columns import JsonObject
from hsa_elastica.params import JointParams, ParameterError, RobotParams, warn_mass_without_gravity
from hsa_elastica.physics.rotations import rotation_matrix_to_quaternion
from hsa_elastica.robots.stack import Pose, build_stack, _motor_schedules, _solve_static_stack
from hsa_elastica.robots import settling
from hsa_elastica.robots.settling import DEFAULT_SETTLE, Relaxation, SettleOptions
from hsa_elastica.robots.settling_checks import stack_settling_state
from hsa_elastica.robots.steady_state import (
    SteadyStateResult,
    real_time_factor,
    timing_keys,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["StackSteadyStateResult", "solve_stack_steady_state"]

METHODS = ("dynamic", "static")


@dataclass
class StackSteadyStateResult:
    """Outcome of :func:`solve_stack_steady_state` (SI units, frame ``robot_base``: segment 0's
    base plate).

    ``segments[k]``: segment ``k`` as a :class:`SteadyStateResult` (its motor commands in
    ``motor_angles_rad``: [rad], or [N m] for the upper stages when ``drive == "torque"``; its
    platform's pose and marker and its rod tips in the robot_base frame; ``converged``, times and
    ``method`` are the stack's); ``relative_poses[k]``: ``(position (3,) [m], rotation (3, 3))``
    of platform ``k`` in the frame of platform ``k - 1`` (segment 0: in robot_base).
    ``max_node_speed_m_s`` / ``max_platform_omega_rad_s``: over all segments at the stop;
    ``residual_force_N`` / ``residual_torque_Nm``: max-norms of the static residual of the
    whole stack at the reported pose (nan on the per-rod path, which is not compiled);
    ``diverged`` / ``divergence``, ``wall_time_s`` (a dynamic run: its simulation loop) and
    ``setup_wall_time_s`` as :class:`SteadyStateResult`.
    """

    converged: bool
    method: str
    sim_time_s: float
    wall_time_s: float
    segments: list[SteadyStateResult]
    relative_poses: list[Pose]
    settle_time_s: float
    n_steps: int
    max_node_speed_m_s: float
    max_platform_omega_rad_s: float
    residual_force_N: float
    residual_torque_Nm: float
    params: tuple[RobotParams, ...]
    motor_mass_kg: float = 0.0
    drive: str = "angle"
    diagnostics: "pd.DataFrame | None" = field(default=None, repr=False)
    diverged: bool = False
    divergence: dict[str, Any] | None = None
    stable: bool | None = None
    message: str = ""
    setup_wall_time_s: float = float("nan")

    @property
    def real_time_factor(self) -> float | None:
        """``sim_time_s / wall_time_s`` of a dynamic run (None: a static solve)."""
        return real_time_factor(self.method, self.sim_time_s, self.wall_time_s)

    @property
    def poses(self) -> list[Pose]:
        """``(position (3,) [m], rotation (3, 3) platform -> lab)`` of each platform."""
        return [(s.platform_position_m, s.platform_rotation) for s in self.segments]

    def summary(self) -> dict[str, Any]:
        """Run-directory summary: the single robot's keys for the whole stack (the top
        platform; every motor and rod tip, segment 0 first) and ``segments``, one object per
        segment ``k`` (the ``seg{k}/`` columns of the diagnostics)."""
        top = self.segments[-1]
        per_segment = []
        for k, (seg, (pos, rot)) in enumerate(zip(self.segments, self.relative_poses)):
            entry = {"segment": k, "base": "robot_base" if k == 0 else f"platform of segment {k - 1}"}
            entry.update(seg.to_json_dict())
            for key in ("converged", "sim_time_s", "wall_time_s", "method"):
                entry.pop(key)
            entry.update(
                relative_position_m=[float(v) for v in pos],
                relative_quaternion_xyzw=[
                    float(v) for v in rotation_matrix_to_quaternion(np.ascontiguousarray(rot))
                ],
                platform_tilt_rad=seg.platform_tilt_rad,
                platform_twist_rad=seg.platform_twist_rad,
                max_node_speed_m_s=float(seg.max_node_speed_m_s),
                max_platform_omega_rad_s=float(seg.max_platform_omega_rad_s),
            )
            per_segment.append(entry)
        out: dict[str, Any] = JsonObject({
            "motor_angles_rad": [float(a) for s in self.segments for a in s.motor_angles_rad],
            "platform_position_m": [float(v) for v in top.platform_position_m],
            "platform_marker_position_m": [float(v) for v in np.asarray(top.platform_marker_position_m)],
            "platform_quaternion_xyzw": [float(v) for v in top.platform_quaternion_xyzw],
            "rod_tip_positions_m": [
                [float(v) for v in row] for s in self.segments for row in s.rod_tip_positions_m
            ],
            "converged": bool(self.converged),
            "sim_time_s": float(self.sim_time_s),
            "wall_time_s": float(self.wall_time_s),
            "method": self.method,
            "n_segments": len(self.segments),
            "drive": self.drive,
            "motor_mass_kg": float(self.motor_mass_kg),
            "max_node_speed_m_s": float(self.max_node_speed_m_s),
            "max_platform_omega_rad_s": float(self.max_platform_omega_rad_s),
            "settle_time_s": None if math.isnan(self.settle_time_s) else float(self.settle_time_s),
            "residual_force_N": self.residual_force_N,
            "residual_torque_Nm": self.residual_torque_Nm,
            "n_steps": int(self.n_steps),
            "diverged": bool(self.diverged),
            "stable": self.stable,
            **timing_keys(self.method, self.sim_time_s, self.wall_time_s, self.setup_wall_time_s),
            "segments": per_segment,
        })
        if self.divergence is not None:
            out["divergence"] = dict(self.divergence)
        return out


def solve_stack_steady_state(
    segments: Sequence[RobotParams],
    motor_angles: Sequence[Sequence[float]],
    *,
    method: str = "dynamic",
    motor_mass: float = 0.0,
    mount: JointParams | None = None,
    drive: str = "angle",
    settle: SettleOptions = DEFAULT_SETTLE,
    ramp: float | Callable[[float], float] | None = None,
    stop_when_settled: bool = True,
    record: bool = True,
    progress: bool = False,
    fast: bool = True,
    steps: int = 4,
    check_stability: bool = True,
) -> StackSteadyStateResult:
    """Steady state of the stack of ``segments`` at ``motor_angles`` (one sequence of
    ``n_rods`` numbers per segment, bottom first; [rad], or [N m] for the upper stages with
    ``drive="torque"``).

    ``method="dynamic"`` (default): run from rest and stop once settled; ``settle`` (the
    settling test and its limits, :class:`~hsa_elastica.robots.settling.SettleOptions`;
    ``max_time`` None: the longest ramp + 3 s), ``ramp``, ``stop_when_settled``, ``record``,
    ``progress`` and ``fast`` mean what they mean for
    :func:`~hsa_elastica.robots.steady_state.solve_steady_state`, applied to every rod and
    platform of the stack (the creep bound with the largest damping of the segments).
    ``method="static"``: :func:`~hsa_elastica.robots.stack.solve_stack_static` with ``steps``
    continuation steps and ``check_stability`` (``sim_time_s = 0``, no diagnostics).
    ``motor_mass``, ``mount``, ``drive`` as :func:`~hsa_elastica.robots.stack.build_stack`.

    Raises ``ParameterError`` on bad input before simulating, and
    ``SimulationFailed`` (a blow-up, a refused implicit step) with the partial
    :class:`StackSteadyStateResult` (``diverged=True``,
    the diagnostics recorded so far) as its ``result`` attribute.
    """
    if method not in METHODS:
        raise ParameterError(f"method = {method!r} is invalid: must be 'dynamic' or 'static'")
    params, commands = _commands(segments, motor_angles, drive)
    warn_mass_without_gravity(params, motor_mass if isinstance(motor_mass, (int, float)) else 0.0)
    if method == "static":
        return _static(params, commands, motor_mass, mount, drive, steps, check_stability)
    span = settling.settle_span(settle, ramp=ramp,
                                ramp_time=max(p.simulation.ramp_time for p in params),
                                dt=params[0].simulation.dt)
    dampings = (max(p.simulation.damping for p in params),
                max(p.simulation.rotational_damping for p in params))
    robot, relaxed, diagnostics = settling.build_and_settle(
        lambda: build_stack(params, [list(u) for u in commands], ramp=ramp, motor_mass=motor_mass,
                            record=record, mount=mount, drive=drive),
        params, stack_settling_state, settle, span, fast=fast, dampings=dampings, record=record,
        stop_when_settled=stop_when_settled, progress=progress,
    )
    residual = (math.nan, math.nan)
    if fast and relaxed.divergence is None:
        residual = robot.static_residual()
    result = _dynamic_result(relaxed, params, commands, residual, motor_mass=motor_mass,
                             drive=drive, diagnostics=diagnostics)
    settling.raise_divergence(relaxed, result)
    return result


def _commands(segments: Sequence[RobotParams], motor_angles: Sequence[Sequence[float]],
              drive: str) -> tuple[list[RobotParams], list[NDArray[np.float64]]]:
    """The segments' parameters and motor commands, checked (``ParameterError`` naming the
    argument: not a non-empty sequence of RobotParams, not one command sequence per segment,
    or a bad command)."""
    params = list(segments)
    if not params or not all(isinstance(p, RobotParams) for p in params):
        raise ParameterError(f"segments = {segments!r} is invalid: must be a non-empty sequence of RobotParams")
    if len(motor_angles) != len(params):
        raise ParameterError(
            f"motor_angles has {len(motor_angles)} entries: must be one per segment ({len(params)})"
        )
    commands = [np.array(_motor_schedules(a, p.n_rods, angles=k == 0 or drive == "angle",
                                          field=f"motor_angles[{k}]"), dtype=np.float64)
                for k, (a, p) in enumerate(zip(motor_angles, params))]
    return params, commands


def _result(
    state: dict[str, Any], params: list[RobotParams], commands: list[NDArray[np.float64]],
    relative_poses: list[Pose], *, speeds: tuple[float, float], residual: tuple[float, float],
    motor_mass: float, drive: str, **common: Any,
) -> StackSteadyStateResult:
    """The :class:`StackSteadyStateResult` of the stack's ``state``; ``common``: the fields
    the stack and its segments share (``converged``, ``method``, times, ``n_steps``,
    ``stable``, ``diverged``, ``divergence``), plus the stack's own ``diagnostics`` or
    ``message``."""
    own = {key: common.pop(key) for key in ("diagnostics", "message") if key in common}
    segments = [
        SteadyStateResult(
            motor_angles_rad=np.array(u, dtype=np.float64),
            platform_position_m=s["platform_position_m"],
            platform_quaternion_xyzw=s["platform_quaternion_xyzw"],
            rod_tip_positions_m=s["rod_tip_positions_m"],
            max_node_speed_m_s=float(s["max_speed"]),
            max_platform_omega_rad_s=float(s["platform_omega"]),
            params=p,
            **common,
        )
        for s, p, u in zip(state["segments"], params, commands)
    ]
    return StackSteadyStateResult(
        segments=segments, relative_poses=relative_poses, max_node_speed_m_s=float(speeds[0]),
        max_platform_omega_rad_s=float(speeds[1]), residual_force_N=float(residual[0]),
        residual_torque_Nm=float(residual[1]), params=tuple(params),
        motor_mass_kg=float(motor_mass), drive=drive, **common, **own,
    )


def _dynamic_result(
    relaxed: Relaxation, params: list[RobotParams], commands: list[NDArray[np.float64]],
    residual: tuple[float, float], *, motor_mass: float, drive: str,
    diagnostics: "pd.DataFrame | None",
) -> StackSteadyStateResult:
    """The :class:`StackSteadyStateResult` of a dynamic run (its wall times: the
    relaxation's)."""
    divergence = relaxed.divergence
    state = relaxed.state
    return _result(
        state, params, commands, _relative(state),
        speeds=(state["max_speed"], state["platform_omega"]), residual=residual,
        motor_mass=motor_mass, drive=drive, converged=bool(relaxed.converged), method="dynamic",
        sim_time_s=float(relaxed.t) if divergence is None else divergence.time,
        wall_time_s=float(relaxed.wall_time_s),
        setup_wall_time_s=float(relaxed.setup_wall_time_s),
        settle_time_s=math.nan if relaxed.settled_since is None else float(relaxed.settled_since),
        n_steps=relaxed.n_steps, diverged=divergence is not None,
        divergence=settling.divergence_summary(divergence), diagnostics=diagnostics,
    )


def _relative(state: dict[str, Any]) -> list[Pose]:
    from hsa_elastica.io.render import quaternion_to_matrix
    from hsa_elastica.robots.stack import relative_pose

    poses = [(s["platform_position_m"], quaternion_to_matrix(s["platform_quaternion_xyzw"]))
             for s in state["segments"]]
    return [poses[0]] + [relative_pose(lower, upper) for lower, upper in zip(poses, poses[1:])]


def _static(params: list[RobotParams], commands: list[NDArray[np.float64]], motor_mass: float,
            mount: JointParams | None, drive: str, steps: int,
            check_stability: bool) -> StackSteadyStateResult:
    wall0 = _time.perf_counter()
    stack, out, _ = _solve_static_stack(
        params, commands, motor_mass=motor_mass, mount=mount, drive=drive, steps=steps,
        check_stability=check_stability,
    )
    state = stack_settling_state(stack)
    return _result(
        state, params, commands, stack.relative_poses(), speeds=(0.0, 0.0),
        residual=(out.residual_force_N, out.residual_torque_Nm), motor_mass=motor_mass,
        drive=drive, converged=bool(out.converged), method="static", sim_time_s=0.0,
        wall_time_s=_time.perf_counter() - wall0, settle_time_s=math.nan, n_steps=0,
        stable=out.stable, message=str(out.message),
    )
