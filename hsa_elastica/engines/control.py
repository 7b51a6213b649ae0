"""Step API of an HSA robot: set motor angles, advance one control interval, read the state.

Implemented once, in :class:`ControlMixin`, on top of a handle that can ``run(duration)``: the
operator time loop (:class:`hsa_elastica.robots.handles.Robot`, :class:`~hsa_elastica.robots.stack.Stack`)
and the compiled engines (:class:`hsa_elastica.robots.compiled.FastRobot`, whose ``run``
advances an engine of ``(model, dt)``: the fused loop or the implicit integrator)::

    robot = build_fast_robot(paper_robot_params(), [0, 0, 0, 0])   # or build_robot(...)
    for k in range(50):
        robot.set_motor_angles(u)          # rad, one per rod (right-hand rule about +z)
        robot.step(0.02)                   # one 20 ms control interval
        s = robot.state()                  # schema-named arrays: s["platform_position_m"], ...

How a command acts: :meth:`ControlMixin.step` replaces each rod's ``MotorAngleBC.angle`` by a
:class:`~hsa_elastica.physics.actuation.Ramp` over the interval -- linear from the angle the
motor has at the start of the interval to the command at its end (``interpolate=True``, the
default: a motor turning at constant speed), or the command held from the start
(``interpolate=False``: a step of the imposed angle, which the rods feel as an impulse).  A Ramp
is evaluated inside numba by the fused loop, so a command change costs one tabulation per
control interval and no Python work per internal step, and both paths see the same angles at
the same times: same command sequence, same trajectory (``tests/test_step_api.py``: 1e-10).

Control intervals are whole internal steps: interval ``k`` ends at the internal step nearest
to the nominal time ``t_0 + k * dt_control`` (so 20 ms intervals at ``dt = 3e-5`` s alternate
667 and 666 steps and do not drift).

Motor torque (:func:`motor_torques`): the torque [N m] the motor applies to the rod about the
rod's axis (right-hand rule about +z, base -> tip) to hold its base element, the quasi-static
reaction ``-internal_torques[2, 0]`` of :func:`hsa_elastica.physics.sensors.motor_reaction_torque`
(the torque the rest of the rod exerts on the base element at the last force evaluation, the
mid-step of the last internal step), plus with the passive coupling law the rest of the
passive rod's elastic torque on that element (:func:`hsa_elastica.physics.sensors.motor_torque`).
It neglects the base element's own rotational inertia.
The same reading is recorded as ``sensors/motor_torque_{i}`` (:mod:`hsa_elastica.io.sensors`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io.columns import STATE_KEYS, StateDict
from hsa_elastica.params import ParameterError, check_motor_angles, check_run_length
from hsa_elastica.physics.actuation import Ramp
from hsa_elastica.physics.joints import rotation_matrix_to_quaternion
from hsa_elastica.physics.sensors import motor_torque

__all__ = ["ControlMixin", "imposed_motor_angles", "motor_torques", "robot_state", "STATE_KEYS"]

#: attributes of a motor's command holder that hold its schedule (restored by reference:
#: schedules are immutable callables of the time)
_SCHEDULE_ATTRS = ("_angle", "angle_rate", "_torque")



def motor_torques(
    rods: Sequence[Any], twist_couples: Sequence[NDArray[np.float64] | None] | None = None
) -> NDArray[np.float64]:
    """Torque [N m] each motor applies to its rod about the rod's axis (see the module doc).

    :func:`~hsa_elastica.physics.sensors.motor_torque` of element 0 of each rod: positive when
    the motor twists the rod counter-clockwise (seen from the tip) against a resisting rod.
    ``twist_couples[i]``: the reciprocal twist couple of rod ``i``'s passive coupling (None or
    missing: the one-way law).  0 for a one-element rod (no Voronoi domain, no internal couple).
    """
    couples = list(twist_couples) if twist_couples is not None else [None] * len(rods)
    return np.array([motor_torque(rod, 0, c) for rod, c in zip(rods, couples)], dtype=np.float64)


def _motor_angle(bc: Any, t: float) -> float:
    """The imposed motor angle [rad]; NaN for a torque-driven mount (``MountReaction`` with a
    torque, or ``TwistMount``: no angle is imposed)."""
    if hasattr(bc, "angle"):
        return float(bc.angle(t))
    return math.nan


def imposed_motor_angles(robot: Any) -> NDArray[np.float64]:
    """The imposed motor angles [rad] of ``robot`` now (NaN for a torque-driven motor): the
    ``motor_angles_rad`` of :func:`robot_state` without the rest of the state."""
    t = float(robot.time)
    return np.array([_motor_angle(m.instance, t) for m in robot.motors])


def robot_state(robot: Any) -> StateDict:
    """State of ``robot`` (rods, platform, motors) as arrays, SI units, keyed by the output
    schema's names (:data:`~hsa_elastica.io.columns.STATE_KEYS`, docs/outputs.md).

    ``sim_time_s`` [s]; ``platform_position_m`` (3,) [m] centre of mass, robot_base frame;
    ``platform_quaternion_xyzw`` (4,) ``(x, y, z, w)``, ``w >= 0``, of the body -> robot_base
    rotation; ``platform_velocity_m_s`` (3,) [m/s] robot_base frame; ``platform_omega_rad_s``
    (3,) [rad/s] BODY frame (PyElastica's convention, as the recorder's ``omega`` columns);
    ``rod_tip_positions_m`` (n, 3) [m]; ``motor_angles_rad`` (n,) [rad] the imposed motor
    angles now (NaN for a torque-driven motor); ``motor_torques_nm`` (n,) [N m]
    (:func:`motor_torques`).  The earlier keys (``time``, ``platform_position``, ...) still
    read, with a ``DeprecationWarning``.
    """
    plat = robot.platform
    t = float(robot.time)
    director = np.ascontiguousarray(plat.director_collection[:, :, 0].T)
    return StateDict({
        "sim_time_s": t,
        "platform_position_m": np.array(plat.position_collection[:, 0], dtype=np.float64),
        "platform_quaternion_xyzw": np.array(rotation_matrix_to_quaternion(director), dtype=np.float64),
        "platform_velocity_m_s": np.array(plat.velocity_collection[:, 0], dtype=np.float64),
        "platform_omega_rad_s": np.array(plat.omega_collection[:, 0], dtype=np.float64),
        "rod_tip_positions_m": np.array([r.position_collection[:, -1] for r in robot.rods],
                                        dtype=np.float64),
        "motor_angles_rad": imposed_motor_angles(robot),
        "motor_torques_nm": motor_torques(
            robot.rods, [robot.twist_couple(i) for i in range(len(robot.rods))]
            if hasattr(robot, "twist_couple") else None,
        ),
    })


class ControlMixin:
    """:meth:`set_motor_angles`, :meth:`step`, :meth:`state` for a robot handle.

    The handle provides ``rods``, ``platform``, ``motors`` (``OperatorRef`` of
    ``MotorAngleBC``), ``dt`` [s], ``time`` [s] and ``run(duration)``.
    """

    # set by the methods; class-level defaults so dataclass handles need no extra fields
    _command: NDArray[np.float64] | None = None
    _control_clock: float | None = None
    _checked_interval: tuple[Any, float, float] | None = None

    def set_motor_angles(self, angles: Sequence[float] | NDArray[np.float64]) -> None:
        """Command the motor angles [rad] (one per rod, right-hand rule about the rod's +z) for
        the next :meth:`step`; they stay commanded until the next call.  A torque-driven motor
        on a body (:class:`~hsa_elastica.physics.rigid_mounts.TwistMountBC`, or the compliant
        :class:`~hsa_elastica.physics.mounts.TwistMount`) takes its entry as a torque [N m]."""
        n = len(self.motors)  # type: ignore[attr-defined]
        try:
            u = np.array(angles, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            u = np.array([])
        if u.shape != (n,):
            raise ParameterError(
                f"set_motor_angles(): angles = {angles!r} is invalid: must be n_rods = {n} "
                f"finite numbers (rad)"
            )
        # the angle-driven motors' entries: the one motor-angle check (finite, within
        # +-MAX_MOTOR_ANGLE); a torque-driven motor's entry: a finite torque
        is_angle = [hasattr(m.instance, "angle") for m in self.motors]  # type: ignore[attr-defined]
        check_motor_angles(np.where(is_angle, u, 0.0), n, field="set_motor_angles(): angles")
        bad = np.flatnonzero(~np.isfinite(u))
        if bad.size:
            i = int(bad[0])
            raise ParameterError(
                f"set_motor_angles(): angles[{i}] = {u[i]!r} is invalid: must be a finite "
                f"torque (N m)"
            )
        self._command = u

    def step(self, dt_control: float, *, interpolate: bool = True) -> float:
        """Advance by one control interval of ``dt_control`` [s] (whole internal steps, see the
        module doc) under the commanded angles; returns the new simulated time [s].

        ``interpolate=True``: each motor turns linearly from its angle at the start of the
        interval to the command at the end; ``False``: the command is imposed from the start.
        Without a command the motors keep their schedules (e.g. the builder's ramps).
        ``dt_control`` must be finite, at least the internal step ``dt`` and at most
        :data:`hsa_elastica.params.MAX_STEPS` internal steps (the command line's cap on a run);
        else ``ParameterError`` naming it, before any work.
        """
        dt = float(self.dt)  # type: ignore[attr-defined]
        # at least one internal step, at most the run length every entry point is capped at
        # (checked once per (dt_control, dt): an env passes the same interval every step)
        checked = self._checked_interval
        if checked is not None and checked[0] is dt_control and checked[1] == dt:
            h = checked[2]
        else:
            h = check_run_length(dt_control, dt, "step(): dt_control", minimum=dt)
            self._checked_interval = (dt_control, dt, h)
        t0 = float(self.time)  # type: ignore[attr-defined]
        clock = self._control_clock
        if clock is None or abs(clock - t0) > dt:  # first call, or run() was used in between
            clock = t0
        target = clock + h
        n = max(1, int(round(target / dt)) - int(round(t0 / dt)))
        if self._command is not None:
            duration = n * dt if interpolate else 0.0
            for motor, u in zip(self.motors, self._command):  # type: ignore[attr-defined]
                bc = motor.instance
                # a torque-driven mount (TwistMount) takes the command as its torque [N m]
                name = "angle" if hasattr(bc, "angle") else "torque"
                start = float(getattr(bc, name)(t0)) if interpolate else float(u)
                setattr(bc, name, Ramp(
                    target=float(u), start=start, duration=duration, delay=t0, shape="linear"
                ))
        self.run(n * dt)  # type: ignore[attr-defined]
        self._control_clock = target
        return float(self.time)  # type: ignore[attr-defined]

    def state(self) -> StateDict:
        """Platform pose and twist, rod tips, motor angles and torques, keyed by the output
        schema's names (see :func:`robot_state`)."""
        return robot_state(self)

    # -- snapshots (engines/snapshot.py) -------------------------------------------------------
    def _state_arrays(self) -> dict[str, NDArray[Any]]:
        """The live arrays of the state, by name (operator time loop: every array of the
        simulator's memory blocks; the fused stepper overrides this)."""
        from hsa_elastica import compat

        out: dict[str, NDArray[Any]] = {}
        for b, block in enumerate(compat.memory_blocks(self.simulator)):  # type: ignore[attr-defined]
            for name, value in vars(block).items():
                if isinstance(value, np.ndarray) and value.flags.writeable:
                    out[f"block{b}.{name}"] = value
        return out

    def _state_objects(self) -> list[Any]:
        """Objects whose attributes carry state between steps (the operators of the simulator;
        none for the fused stepper, which keeps that state in its tables)."""
        from hsa_elastica import compat

        seen: dict[int, Any] = {}
        for role in ("synchronize", "constrain_values", "constrain_rates", "damping"):
            for op in compat.feature_group(self.simulator, role):  # type: ignore[attr-defined]
                inst = compat.bound_operator(op)[0]
                seen.setdefault(id(inst), inst)
        return list(seen.values())

    def _schedule_holders(self) -> list[Any]:
        """The motors' command holders (their angle / torque schedules are state)."""
        return [m.instance for m in self.motors]  # type: ignore[attr-defined]

    def get_state(self) -> Any:
        """A copy of everything that determines the future of this robot (a
        :class:`~hsa_elastica.engines.snapshot.Snapshot`: state arrays, the engine's internal
        state, time, motor schedules, the step API's command; ``extra_state()`` if the engine
        has that hook).  ``set_state`` of it, then stepping, gives bitwise the trajectory of
        never having stopped."""
        from hsa_elastica.engines import snapshot

        extra = getattr(self, "extra_state", None)
        return snapshot.Snapshot(
            time=float(self.time),  # type: ignore[attr-defined]
            arrays=snapshot.copy_arrays(self._state_arrays()),
            objects=[snapshot.copy_attributes(o) for o in self._state_objects()],
            schedules=[
                {k: v for k, v in vars(h).items() if k in _SCHEDULE_ATTRS}
                for h in self._schedule_holders()
            ],
            control={"_command": None if self._command is None else self._command.copy(),
                     "_control_clock": self._control_clock},
            extra=snapshot.copy_arrays(extra()) if callable(extra) else {},
            engine=type(self).__name__,
            model=getattr(self, "params", None),
        )

    def set_state(self, state: Any) -> None:
        """Restore a :meth:`get_state` snapshot of this robot (in place: arrays, engine state,
        time, schedules, command)."""
        from hsa_elastica.engines import snapshot

        if not isinstance(state, snapshot.Snapshot):
            raise ParameterError(f"state = {state!r} is invalid: must be a Snapshot (get_state())")
        if state.engine != type(self).__name__:
            raise ParameterError(
                f"state is invalid: it was taken from a {state.engine}, this is a "
                f"{type(self).__name__}"
            )
        snapshot.check_model(state.model, getattr(self, "params", None))
        objects = self._state_objects()
        holders = self._schedule_holders()
        if len(objects) != len(state.objects) or len(holders) != len(state.schedules):
            raise ParameterError("state is invalid: it was taken from another model (operators differ)")
        snapshot.restore_arrays(self._state_arrays(), state.arrays)
        for obj, saved in zip(objects, state.objects):
            snapshot.restore_attributes(obj, saved)
        for holder, saved in zip(holders, state.schedules):
            vars(holder).update(saved)
        self._command = None if state.control["_command"] is None else state.control["_command"].copy()
        self._control_clock = state.control["_control_clock"]
        self.time = float(state.time)  # type: ignore[attr-defined]
        restore_extra = getattr(self, "set_extra_state", None)
        if callable(restore_extra):
            restore_extra(snapshot.copy_arrays(state.extra))

    def save_state(self, path: Any) -> None:
        """Write :meth:`get_state` to ``path`` (an ``.npz`` archive of arrays and JSON metadata,
        no pickle; motor schedules must be numbers or ``Ramp``)."""
        from hsa_elastica.engines import snapshot

        snapshot.save(self.get_state(), path)

    def load_state(self, path: Any) -> None:
        """:meth:`set_state` of the snapshot :meth:`save_state` wrote to ``path`` (a file that is
        not one, or one of another model, raises ``ParameterError``; nothing in it is executed)."""
        from hsa_elastica.engines import snapshot

        self.set_state(snapshot.load(path))

    def twist_couple(self, i: int) -> NDArray[np.float64] | None:
        """Reciprocal twist couple [N m] per Voronoi domain of rod ``i``'s auxetic coupling in
        its last step if the coupling is passive (``RodParams.coupling_law = "passive"``),
        else None.  Read by the motor-torque sensor."""
        segments = getattr(self, "segments", None)
        if segments:  # a stack: rod i of the stack is rod j of a segment
            for seg in segments:
                if i < len(seg.rods):
                    return seg.twist_couple(i)  # type: ignore[no-any-return]
                i -= len(seg.rods)
            raise IndexError("rod index out of range")
        inst = self.couplings[i].instance  # type: ignore[attr-defined]
        return inst.reciprocal_couple if getattr(inst, "reciprocal", False) else None
