"""Multi-segment HSA robots: stages stacked platform on platform (paper Section II-D/E, each
stage the robot of :func:`~hsa_elastica.robots.builders.build_robot`).

:func:`build_stack` builds segment 0 on the base plate (lab frame, or a given pose) and segment
``k >= 1`` on the platform of segment ``k - 1``: its motors are bolted to that platform (one
:class:`~hsa_elastica.physics.rigid_mounts.MotorMountBC` per rod, the rod's base held relative
to the platform and turned by the motor angle, and a ``MountReaction`` handing its load to the
platform; ``mount=JointParams(...)`` for compliant mounts), its rods stand on the
platform's top face in the platform's frame, and the motors' mass is a payload of that platform
(``motor_mass`` per motor, at its centre, as ``PlatformParams.payload_mass``)::

    stack = build_stack([paper_robot_params(), paper_robot_params()],
                        [[0.5, -0.5, 0.5, -0.5], [0.0, 0.0, 0.0, 0.0]])
    FastRobot(stack).run(2.0)            # or stack.run(2.0): the per-rod operators
    stack.segment_poses()                # (position, rotation) of each platform, lab frame

The :class:`Stack` handle runs the whole assembly (one simulator, one clock) with the interface
of :class:`~hsa_elastica.robots.handles.Robot` (``run``, ``diagnostics``, the step API with one
angle per rod of all segments, segment 0 first; ``platform`` is the top platform); its
``segments`` are the per-stage :class:`Robot` handles (rods, platform, motors, parameters) for
reading, not for running.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from elastica import CosseratRod
from elastica.rigidbody import Cylinder
from elastica.timestepper.symplectic_steppers import PositionVerlet

from hsa_elastica.engines.control import ControlMixin
from hsa_elastica.params import JointParams, ParameterError, RobotParams
from hsa_elastica.robots.builders import (
    _assemble_robot,
    _motor_schedules,
    announce_kernels,
    check_ramp,
    check_time_steps,
)
from hsa_elastica.robots.placement import _base_frame
from hsa_elastica.robots.environment import HSASimulator
from hsa_elastica.robots.handles import OperatorRef, Robot, _run
from hsa_elastica.robots.primitives import primitive_angles

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "Stack",
    "StackStaticResult",
    "build_stack",
    "relative_pose",
    "solve_stack_static",
    "stack_primitive_angles",
]


def relative_pose(
    lower: tuple[NDArray[np.float64], NDArray[np.float64]],
    upper: tuple[NDArray[np.float64], NDArray[np.float64]],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Pose of ``upper`` in the frame of ``lower``; poses are ``(position (3,) [m], rotation
    (3, 3) body -> lab)``: ``(R_l^T (p_u - p_l), R_l^T R_u)``."""
    p_l, r_l = lower
    p_u, r_u = upper
    return r_l.T @ (p_u - p_l), r_l.T @ r_u


def _body_pose(body: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    return (
        np.array(body.position_collection[:, 0], dtype=np.float64),
        np.array(body.director_collection[:, :, 0], dtype=np.float64).T,
    )


@dataclass
class Stack(ControlMixin):
    """Handle of a multi-segment robot built by :func:`build_stack`.

    ``segments[k]`` is the :class:`Robot` handle of stage ``k`` (its ``base`` is the platform it
    stands on, None for the bottom stage); ``rods``, ``motors`` and ``platforms`` list every
    segment's, segment 0 first; ``platform`` is the top platform.  ``recorders`` maps
    ``"seg{k}/rod{i}"`` / ``"seg{k}/platform"`` to the recorders.  Run the stack (its
    :attr:`time` is the one clock), not a segment.
    """

    simulator: HSASimulator
    segments: list[Robot]
    params: tuple[RobotParams, ...]
    timestepper: PositionVerlet
    dt: float
    recorders: dict[str, Any]
    rods: list[CosseratRod] = field(default_factory=list)
    platforms: list[Cylinder] = field(default_factory=list)
    motors: list[OperatorRef[Any]] = field(default_factory=list)
    time: float = 0.0

    @property
    def platform(self) -> Cylinder:
        """The top platform (the end effector)."""
        return self.platforms[-1]

    def finalize(self) -> None:
        """``simulator.finalize()`` (done by the builder unless ``finalize=False``)."""
        self.simulator.finalize()

    def named_systems(self) -> dict[Any, str]:
        """``{system: name}``: ``"seg{k}/rod{i}"`` and ``"seg{k}/platform"``."""
        names: dict[Any, str] = {}
        for k, seg in enumerate(self.segments):
            for i, rod in enumerate(seg.rods):
                names[rod] = f"seg{k}/rod{i}"
            names[seg.platform] = f"seg{k}/platform"
        return names

    def run(self, duration: float, **kwargs: Any) -> float:
        """Advance by ``duration`` [s] from :attr:`time` with
        :func:`hsa_elastica.engines.timeloop.run`; returns the new simulated time [s]."""
        return _run(self, duration, self.named_systems(), **kwargs)

    def diagnostics(self) -> "pd.DataFrame":
        """All recorders in one DataFrame (columns prefixed ``seg{k}/rod{i}/``,
        ``seg{k}/platform/``)."""
        if not self.recorders:
            raise RuntimeError("built with record=False: nothing was recorded")
        from hsa_elastica.io.recording import combine

        return combine({key: rec.to_dataframe() for key, rec in self.recorders.items()})

    def render_frame(self) -> "tuple[pd.DataFrame, RobotParams]":
        """The recorded samples in the renderer's robot format, and parameters describing all
        rods, for :func:`hsa_elastica.io.render.render_still` / ``render_video``: rods
        renumbered ``rod0 ... rod{n-1}`` (segment 0 first), the top platform as ``platform/``,
        the lower ones as ``platform{k}/``."""
        from hsa_elastica.io.render_data import stack_frame

        return stack_frame(self.diagnostics(), self.params)  # type: ignore[no-any-return]

    def segment_poses(self) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """``(position (3,) [m], rotation (3, 3) platform -> lab)`` of each segment's platform."""
        return [_body_pose(p) for p in self.platforms]

    def relative_poses(self) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
        """Pose of platform ``k`` in the frame of platform ``k - 1`` (segment 0: in the lab)."""
        poses = self.segment_poses()
        return [poses[0]] + [relative_pose(lower, upper) for lower, upper in zip(poses, poses[1:])]

    def split_angles(self, angles: Sequence[float] | NDArray[np.float64]) -> list[NDArray[np.float64]]:
        """All motors' values (segment 0 first) split per segment."""
        a = np.asarray(angles, dtype=np.float64).reshape(-1)
        counts = [len(s.motors) for s in self.segments]
        if a.shape[0] != sum(counts):
            raise ParameterError(
                f"angles has {a.shape[0]} entries: the stack has {sum(counts)} motors {counts}"
            )
        return np.split(a, np.cumsum(counts)[:-1])


def _payload(params: RobotParams, extra: float) -> RobotParams:
    """``params`` with ``extra`` [kg] added to the platform payload."""
    if extra == 0.0:
        return params
    platform = dataclasses.replace(
        params.platform, payload_mass=params.platform.payload_mass + extra
    )
    return dataclasses.replace(params, platform=platform)


def build_stack(
    segments: Sequence[RobotParams],
    motor_angles: Sequence[Sequence[Any]] | None = None,
    *,
    ramp: float | Callable[[float], float] | None = None,
    motor_mass: float = 0.0,
    record: bool = True,
    finalize: bool = True,
    check_dt: bool = True,
    base: Any = None,
    mount: JointParams | None = None,
    drive: str = "angle",
) -> Stack:
    """Build a robot of ``len(segments)`` stages, stage ``k`` on the platform of stage ``k - 1``.

    Parameters
    ----------
    segments : sequence of RobotParams
        One per stage, bottom first.  All stages share one time step (``simulation.dt`` must be
        equal); each keeps its own damping, gravity, ramp and recording settings.
    motor_angles : per segment, ``n_rods`` floats [rad] or callables ``t -> phi``
        As :func:`~hsa_elastica.robots.builders.build_robot` (default: all zero).
    ramp : as :func:`~hsa_elastica.robots.builders.build_robot`, for every segment.
    motor_mass : kg
        Mass of one motor (with its horn and mounting); the ``n_rods`` motors of stage ``k``
        are a payload of the platform of stage ``k - 1`` (at its centre).  The bottom stage's
        motors sit on the base plate.
    record, finalize, check_dt
        As :func:`~hsa_elastica.robots.builders.build_robot`.
    base : None or a pose
        Pose of the bottom stage's base plate (see ``build_robot``'s ``base``).
    mount : JointParams or None
        Gains of the motor mounts of the stages ``k >= 1`` (default: each stage's
        ``joint``, see ``build_robot``'s ``mount``).
    drive : ``"angle"`` | ``"torque"``
        How the motors of the stages ``k >= 1`` are driven (see ``build_robot``'s ``drive``;
        their entries of ``motor_angles`` are then torques [N m]); stage 0 is angle-driven.
    """
    params, schedules = _stack_inputs(segments, motor_angles, motor_mass, drive)
    announce_kernels(params[0].simulation)
    check_ramp(ramp)
    if check_dt:  # (the mounts' springs on the base nodes of the stages k >= 1)
        for k, p in enumerate(params):
            check_time_steps(p, mount if k > 0 else None)
    sim = HSASimulator()
    frame, body = _base_frame(base, None)
    if drive not in ("angle", "torque"):
        raise ParameterError(f"drive = {drive!r} is invalid: must be 'angle' or 'torque'")
    if body is not None:
        raise ParameterError("build_stack: base must be None or a pose (the bottom motors are fixed)")
    robots: list[Robot] = []
    for k, p in enumerate(params):
        if k > 0:
            below = robots[-1].platform
            frame, body = _base_frame(below, None)
        robots.append(_assemble_robot(
            sim, p, schedules[k], ramp, record, frame, body, mount, drive if k > 0 else "angle"
        ))
    stack = Stack(
        simulator=sim,
        segments=robots,
        params=tuple(params),
        timestepper=PositionVerlet(),
        dt=float(params[0].simulation.dt),
        recorders={f"seg{k}/{key}": rec for k, r in enumerate(robots) for key, rec in r.recorders.items()},
        rods=[rod for r in robots for rod in r.rods],
        platforms=[r.platform for r in robots],
        motors=[mot for r in robots for mot in r.motors],
    )
    if finalize:
        sim.finalize()
    return stack


def _stack_inputs(
    segments: Sequence[RobotParams], motor_angles: Sequence[Sequence[Any]] | None,
    motor_mass: float, drive: str,
) -> tuple[list[RobotParams], list[list[Any]]]:
    """:func:`build_stack`'s segments, checked (``ParameterError`` naming the argument), with
    the motors of stage ``k`` as a payload of the platform of stage ``k - 1``, and the motor
    schedules per segment (default: all motors at 0)."""
    params = list(segments) if not isinstance(segments, RobotParams) else [segments]
    if not params or not all(isinstance(p, RobotParams) for p in params):
        raise ParameterError(
            f"segments = {segments!r} is invalid: must be a non-empty sequence of RobotParams"
        )
    m = float(motor_mass) if not isinstance(motor_mass, bool) else math.nan
    if not (math.isfinite(m) and m >= 0.0):
        raise ParameterError(f"motor_mass = {motor_mass!r} is invalid: must be a finite number >= 0 (kg)")
    dts = {p.simulation.dt for p in params}
    if len(dts) != 1:
        raise ParameterError(
            f"segments: simulation.dt = {sorted(dts)} differ: the stages share one time step"
        )
    if motor_angles is None:
        motor_angles = [[0.0] * p.n_rods for p in params]
    angles = list(motor_angles)
    if len(angles) != len(params):
        raise ParameterError(
            f"motor_angles has {len(angles)} entries: must be one sequence per segment "
            f"({len(params)})"
        )
    schedules = [
        _motor_schedules(a, p.n_rods, angles=k == 0 or drive == "angle",
                         field=f"motor_angles[{k}]")
        for k, (a, p) in enumerate(zip(angles, params))
    ]
    # the motors of stage k ride the platform of stage k - 1
    return [
        _payload(p, m * params[k + 1].n_rods if k + 1 < len(params) else 0.0)
        for k, p in enumerate(params)
    ], schedules


def stack_primitive_angles(
    primitives: Sequence[tuple[str, float] | None],
    segments: Sequence[RobotParams],
) -> list[NDArray[np.float64]]:
    """Motor angles [rad] per segment of one motion primitive per segment.

    ``primitives[k]`` is ``(name, magnitude)`` (see
    :func:`~hsa_elastica.robots.primitives.primitive_angles`; the primitive is in segment
    ``k``'s own frame, i.e. relative to the platform it stands on) or None (motors at 0).
    """
    if len(primitives) != len(segments):
        raise ParameterError(
            f"primitives has {len(primitives)} entries: must be one per segment ({len(segments)})"
        )
    out = []
    for prim, p in zip(primitives, segments):
        if prim is None:
            out.append(np.zeros(p.n_rods))
        else:
            name, magnitude = prim
            out.append(primitive_angles(name, magnitude, p))
    return out


# --------------------------------------------------------------------------------------------
# static equilibrium per segment
# --------------------------------------------------------------------------------------------
Pose = tuple[NDArray[np.float64], NDArray[np.float64]]


@dataclass
class StackStaticResult:
    """Static equilibrium of a stack (:func:`solve_stack_static`).

    ``poses[k]``: ``(position (3,) [m], rotation (3, 3) platform -> lab)`` of segment ``k``'s
    platform in the lab; ``relative_poses[k]``: the same in the frame of platform ``k - 1``
    (segment 0: in the lab); ``residual_force_N`` / ``residual_torque_Nm``: max-norms of the
    static residual; ``stable``: the equilibrium's stability (None when not checked).
    """

    converged: bool
    stable: bool | None
    residual_force_N: float
    residual_torque_Nm: float
    motor_angles: list[NDArray[np.float64]]
    poses: list[Pose]
    relative_poses: list[Pose]
    message: str = ""


def solve_stack_static(
    segments: Sequence[RobotParams],
    motor_angles: Sequence[Sequence[float]],
    *,
    motor_mass: float = 0.0,
    mount: JointParams | None = None,
    drive: str = "angle",
    steps: int = 4,
    check_stability: bool = True,
) -> StackStaticResult:
    """Static equilibrium of the stack of ``segments`` at ``motor_angles`` [rad] (one sequence
    of ``n_rods`` floats per segment), by the static solver of the compiled model
    (:class:`hsa_elastica.engines.statics.StaticSolver`: the same force evaluation as the fused
    stepper, motor mounts included) with ``steps`` continuation steps from the straight pose.
    ``motor_mass``, ``mount`` and ``drive`` as :func:`build_stack` (with ``drive="torque"``
    the upper stages' entries are motor torques [N m])."""
    stack, out, per_segment = _solve_static_stack(
        segments, motor_angles, motor_mass=motor_mass, mount=mount, drive=drive, steps=steps,
        check_stability=check_stability,
    )
    return StackStaticResult(
        converged=out.converged,
        stable=out.stable,
        residual_force_N=out.residual_force_N,
        residual_torque_Nm=out.residual_torque_Nm,
        motor_angles=per_segment,
        poses=stack.segment_poses(),
        relative_poses=stack.relative_poses(),
        message=out.message,
    )


def _solve_static_stack(
    segments: Sequence[RobotParams],
    motor_angles: Sequence[Sequence[float] | NDArray[np.float64]],
    *,
    motor_mass: float,
    mount: JointParams | None,
    drive: str,
    steps: int,
    check_stability: bool,
) -> tuple[Stack, Any, list[NDArray[np.float64]]]:
    """:func:`solve_stack_static`'s solve: the stack (its systems hold the solved state), the
    solver's outcome and the commands per segment."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.statics import StaticSolver

    params = list(segments)
    if len(motor_angles) != len(params):
        raise ParameterError(
            f"motor_angles has {len(motor_angles)} entries: must be one per segment ({len(params)})"
        )
    per_segment = []
    for k, (a, p) in enumerate(zip(motor_angles, params)):
        values = _motor_schedules(a, p.n_rods, angles=k == 0 or drive == "angle",
                                  field=f"motor_angles[{k}]")
        if any(callable(v) for v in values):
            raise ParameterError("solve_stack_static: motor_angles must be numbers (rad)")
        per_segment.append(np.array(values, dtype=np.float64))
    stack = build_stack(
        params, None, ramp=0.0, motor_mass=motor_mass, record=False, mount=mount, drive=drive,
        check_dt=False,  # no time stepping
    )
    solver = StaticSolver(compile_simulator(stack.simulator))
    solver.stability_modes = 8 * len(params)  # the soft modes of every stage
    solver.branch_kicks = (0.02, 0.1, 0.2)  # a stage's buckling mode moves the stages above it
    flat = np.concatenate(per_segment)
    order = {id(ref.instance): j for j, ref in enumerate(stack.motors)}
    target = np.array([flat[order[id(bc)]] for bc in solver.model.inputs.motor_bcs])
    out = solver.solve(target, steps=steps, check_stability=check_stability)
    return stack, out, per_segment
