"""Fused time stepping of an HSA robot: many Position-Verlet steps in one numba call.

The per-rod operators (``auxetics.AuxeticCoupling``, ``actuation.MotorAngleBC``,
``joints.PlatformJoint``, PyElastica's ``AnalyticalLinearDamper`` and ``GravityForces``) stay
the readable reference.  This module *compiles* a finalized simulator built with them into
one ``@njit`` loop, :func:`advance`, that performs exactly PyElastica 1.0's
``PositionVerlet.step`` sequence on the memory-block arrays (the rods' and the platform's
arrays are views into those blocks)::

    zero-out is done at the end of each step, as PyElastica does
    kinematic half step (rod block, rigid-body block)       kinematic_update_inplace (*)
    t += dt/2;  constrain_values                             MotorAngleBC (numba kernel)
    AuxeticCoupling rest configuration (Eq. 2-5)             auxetics kernels
    internal forces and torques of the rod block            internal_{forces,torques}_inplace (*)
    synchronize: the other forcings and connections in PyElastica's FIFO order
        PlatformJoint (joint kernels, Eq. 6-7), GravityForces
    accelerations + dynamic step (rods: PyElastica kernels; rigid body: same formula)
    constrain_rates, then damping                           MotorAngleBC, AnalyticalLinearDamper
    kinematic half step;  t += dt/2;  constrain_values
    callbacks (recorders) -- called from Python between calls, at their sampling steps
    external forces and torques zeroed

The forces of a step come from :func:`hsa_elastica.physics.forces.evaluate_forces` (the same
evaluation the static solver uses); the tables are built by
:func:`hsa_elastica.engines.compile.compile_simulator`.  Every kernel called in the loop is the
numba function the reference operators call
(PyElastica's rod kernels, ``auxetics``/``joints``/``actuation`` kernels), except the three
marked (*): allocation-free rewrites of PyElastica's ``overload_operator_kinematic_numba``,
``_compute_internal_forces`` and ``_compute_internal_torques`` with the same arithmetic in the
same order (checked against PyElastica's kernels on random data in ``tests/test_fast.py``).
So the physics stays PyElastica's and ours; the Python dispatch and the temporaries are
removed.  The fused path gives the same trajectory as ``Robot.run`` to round-off
(``tests/test_fast.py``: 1e-10).

Usage::

    from hsa_elastica.engines.fused import build_fast_robot
    robot = build_fast_robot(paper_robot_params(), [0.5, -0.5, 0.5, -0.5])
    robot.run(1.0)                 # same interface as robot.Robot
    df = robot.diagnostics()

or wrap a robot built by :func:`hsa_elastica.robots.builders.build_robot` (fresh, finalized):
``FastRobot(build_robot(...))``.  Only the operators listed above are supported; anything else
in the simulator raises :class:`FastPathUnsupported` at construction (use ``Robot.run``).
Motor schedules are read from the ``MotorAngleBC`` instances at every call of :func:`advance`
(so ``robot.motors[i].instance.angle = ...`` between runs is followed) and tabulated at the
exact mid-step and end-of-step times of every step of the call: :class:`~hsa_elastica.physics.actuation.Ramp`
instances inside numba, other callables in Python (same values, slower).

State ownership: the fused loop keeps its own copy of the operators' internal state (printed
geometry, twist filter, joint rest orientation); the reference operator instances of the
wrapped simulator are not advanced, so do not mix ``FastRobot.run`` with the wrapped
``Robot.run``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.rod.data_structures import overload_operator_dynamic_numba

from hsa_elastica.compat import update_accelerations, zeroed_out_external_forces_and_torques
from hsa_elastica.engines.control import ControlMixin
from hsa_elastica.engines.compile import CompiledModel, FastPathUnsupported, compile_simulator
from hsa_elastica.engines.timeloop import (
    DEFAULT_MAX_SPEED,
    DEFAULT_MAX_STRETCH,
    SimulationDiverged,
    check_bound,
    find_runaway,
)
from hsa_elastica.params import ParameterError
from hsa_elastica.physics.actuation import Ramp
from hsa_elastica.physics.forces import constrain_rates, constrain_values, evaluate_forces
from hsa_elastica.physics.rod_kernels import (
    kinematic_update_inplace,
    rigid_body_accelerations,
    rod_work,
)
from hsa_elastica.physics.tables import (
    OP_COUPLING_TORQUE,
    STATUS_STIFFNESS,
    BodyBlockArrays,
    ModelTables,
    ForcingTables,
    MotorSchedule,
    RodBlockArrays,
)

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hsa_elastica.robots.builders import Robot
    from hsa_elastica.robots.stack import Stack

__all__ = [
    "FastPathUnsupported",
    "FastRobot",
    "advance",
    "step_times",
    "ramp_table",
    "kernels_cached",
]

@njit(cache=True)  # type: ignore[misc]
def ramp_table(
    times: NDArray[np.float64],
    start: float,
    target: float,
    duration: float,
    delay: float,
    smooth: bool,
    values: NDArray[np.float64],
    rates: NDArray[np.float64],
) -> None:
    """:class:`~hsa_elastica.physics.actuation.Ramp` value and rate at each of ``times`` [s].

    Same formulas as ``Ramp.__call__`` / ``Ramp.rate`` (linear, or the quintic smoothstep
    ``10 x^3 - 15 x^4 + 6 x^5``; a step when ``duration == 0``), written into
    ``values`` [unit] and ``rates`` [unit/s].
    """
    span = target - start
    for k in range(times.shape[0]):
        t = times[k]
        if duration == 0.0:
            s = 1.0 if t >= delay else 0.0
            ds = 0.0
        else:
            x = (t - delay) / duration
            if x <= 0.0:
                s = 0.0
                ds = 0.0
            elif x >= 1.0:
                s = 1.0
                ds = 0.0
            elif not smooth:
                s = x
                ds = 1.0 / duration
            else:
                s = x * x * x * (10.0 + x * (-15.0 + 6.0 * x))
                ds = 30.0 * x * x * (1.0 - x) * (1.0 - x) / duration
        values[k] = start + span * s
        rates[k] = span * ds


@njit(cache=True)  # type: ignore[misc]
def step_times(
    time: float, dt: float, t_half: NDArray[np.float64], t_full: NDArray[np.float64]
) -> None:
    """Times [s] at which PyElastica's PositionVerlet calls the operators in each step.

    ``t_half[s]`` (after the first half kinematic step: constrain_values, forcing, rates)
    and ``t_full[s]`` (end of the step), accumulated in float64 exactly as
    ``SymplecticStepperMixin.step`` does (``time += 0.5 * dt`` twice per step).
    """
    half = 0.5 * dt
    t = time
    for s in range(t_half.shape[0]):
        t += half
        t_half[s] = t
        t += half
        t_full[s] = t


@njit(cache=True)  # type: ignore[misc]
def advance(
    n_steps: int,
    dt: float,
    time: float,
    schedule: MotorSchedule,
    rod: RodBlockArrays,
    body: BodyBlockArrays,
    tables: ModelTables,
    status: NDArray[np.float64],
) -> float:
    """Advance the robot by ``n_steps`` Position-Verlet steps of ``dt`` [s] from ``time`` [s].

    ``schedule``: the motor commands at the mid-step and end-of-step times of every step (see
    :func:`step_times` and :class:`~hsa_elastica.physics.tables.MotorSchedule`); ``rod`` /
    ``body``: the state (memory-block arrays); ``tables``: the model's law tables and
    programs (the programs list the operators in the order PyElastica calls them, rows
    ``(code, index)``).  Returns the new time; ``status[0]`` is set to
    ``STATUS_STIFFNESS`` (with ``status[1]`` = coupling index, ``status[2]`` = smallest
    stiffness, ``status[3]`` = time) and the loop stops when a stiffness law gives a
    non-positive stiffness.  Forces come from
    :func:`hsa_elastica.physics.forces.evaluate_forces`, the evaluation the static solver uses.
    """
    # unpacked once: an array taken out of a record is reference-counted at every use
    angle_half, angle_full, rate_half = schedule
    (couplings, joints, motors, rod_dampers, body_dampers, rod_gravity, body_gravity, material,
     ends, loads, compression, sync_program, values_program, rates_program) = tables
    forcings = ForcingTables(rod_gravity, body_gravity, loads, compression)
    programs = (sync_program, values_program)
    half = np.float64(0.5 * dt)
    full = np.float64(dt)
    t = time
    work = rod_work(rod.lengths.shape[0], body.mass.shape[0])
    for s in range(n_steps):
        # ---- first half kinematic step --------------------------------------------------
        kinematic_update_inplace(
            half, rod.position, rod.director, rod.velocity, rod.omega, work.rotation
        )
        kinematic_update_inplace(
            half, body.position, body.director, body.velocity, body.omega, work.rotation
        )
        t += half
        # ---- every force of the model (motors, coupling, rods, joints, gravity) ----------
        if not evaluate_forces(
            t, angle_half[s], rod, body, couplings, joints, motors, ends, forcings, programs,
            work, status,
        ):
            return t
        # ---- dynamic step -----------------------------------------------------------------
        update_accelerations(
            rod.acceleration,
            rod.internal_forces,
            rod.external_forces,
            rod.mass,
            rod.alpha,
            rod.inv_mass_second_moment_of_inertia,
            rod.internal_torques,
            rod.external_torques,
            rod.dilatation,
        )
        overload_operator_dynamic_numba(full, rod.v_w, rod.dvdt_dwdt)
        rigid_body_accelerations(body)
        overload_operator_dynamic_numba(full, body.v_w, body.dvdt_dwdt)
        constrain_rates(
            rates_program, motors, rate_half[s], rod_dampers, body_dampers, material, rod, body,
            ends,
        )
        # ---- second half kinematic step ---------------------------------------------------
        kinematic_update_inplace(
            half, rod.position, rod.director, rod.velocity, rod.omega, work.rotation
        )
        kinematic_update_inplace(
            half, body.position, body.director, body.velocity, body.omega, work.rotation
        )
        t += half
        constrain_values(values_program, motors, angle_full[s], rod, ends, body)
        # (callbacks: called by the Python driver between calls)
        zeroed_out_external_forces_and_torques(rod.external_forces, rod.external_torques)
        zeroed_out_external_forces_and_torques(body.external_forces, body.external_torques)
    return t


def kernels_cached() -> bool:
    """True if numba's cache holds the compiled fused loop (:func:`advance`), i.e. a run will
    not spend a minute or more compiling the kernels first."""
    from hsa_elastica import compat

    return compat.numba_cache_has_entry(advance)


def _schedule_table(
    schedule: Callable[[float], float],
    rate: Callable[[float], float] | None,
    times: NDArray[np.float64],
    values: NDArray[np.float64],
    rates: NDArray[np.float64],
) -> None:
    """Values [rad] (and rates [rad/s]) of a motor schedule at ``times`` [s]."""
    if isinstance(schedule, Ramp) and (
        rate is None or getattr(rate, "__self__", None) is schedule
    ):
        ramp_table(
            times,
            schedule.start,
            schedule.target,
            schedule.duration,
            schedule.delay,
            schedule.shape == "smooth",
            values,
            rates,
        )
        if rate is None:
            rates[:] = 0.0
        return
    for k, t in enumerate(times):
        values[k] = float(schedule(float(t)))
        rates[k] = float(rate(float(t))) if rate is not None else 0.0



class FastRobot(ControlMixin):
    """A robot built by :func:`hsa_elastica.robots.builders.build_robot` (or a stack built by
    :func:`hsa_elastica.robots.stack.build_stack`), stepped by :func:`advance`.

    Step API as the wrapped robot (:class:`~hsa_elastica.engines.control.ControlMixin`):
    ``set_motor_angles(u)``, ``step(dt_control)``, ``state()``.

    Same interface as :class:`hsa_elastica.robots.builders.Robot` for running and reading results:
    :meth:`run`, :meth:`diagnostics`, :attr:`time`, and the wrapped handle's attributes listed
    in :data:`HANDLE_ATTRIBUTES` (``rods``, ``platform``, ``params``, ``recorders``,
    ``simulator``, ...; read only).  ``chunk`` is the largest number of steps per numba call (also the
    divergence-check period unless :meth:`run` gets ``check_every``).  The tables are compiled
    once, by :func:`hsa_elastica.engines.compile.compile_simulator`.
    """

    def __init__(self, robot: "Robot | Stack", *, chunk: int = 500) -> None:
        if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
            raise ParameterError(f"FastRobot.chunk = {chunk!r} is invalid: must be an integer >= 1")
        self.robot = robot
        self.chunk = int(chunk)
        self.dt = float(robot.dt)
        if robot.time != 0.0:
            raise FastPathUnsupported(
                "FastRobot needs a fresh robot (time 0): the operators' state is captured "
                "at their first application"
            )
        model = compile_simulator(robot.simulator)
        if model.scheduled_loads:
            raise FastPathUnsupported("BaseTwistTorque schedules are not supported by FastRobot")
        self.model: CompiledModel = model
        self.rod_arrays = model.rod_arrays
        self.body_arrays = model.body_arrays
        self.couplings = model.couplings
        self.joints = model.joints
        # the motor table; ``self.motors`` stays the wrapped robot's operator handles
        self.motor_table = model.motors
        self._motor_bcs = model.motor_bcs
        self.rod_dampers = model.rod_dampers
        self.body_dampers = model.body_dampers
        self.rod_gravity = model.rod_gravity
        self.body_gravity = model.body_gravity
        self.material = model.material
        self.sync_program = model.sync_program
        self.values_program = model.values_program
        self.rates_program = model.rates_program
        self._callback_every = model.callback_every
        self._callbacks = model.callbacks
        self._status = np.zeros(4)
        # rod -> its row of the coupling table (fixed by the compilation)
        self._couple_of_rod = self._twist_couple_reader(self.robot)
        self._bind_sensors()

    def _bind_sensors(self) -> None:
        """Point the sensor recorders (of the robot, or of each segment of a stack) at the
        joint table of this stepper: the fused loop keeps the joints' rest orientations there,
        not in the operators."""
        from hsa_elastica import compat

        joints = self.joints
        for robot in getattr(self.robot, "segments", None) or [self.robot]:
            sensors = getattr(robot, "recorders", {}).get("sensors")
            if sensors is None or not hasattr(sensors, "bind"):
                continue
            rows: list[int] = []
            for rod in robot.rods:
                tip = compat.block_offset(rod.director_collection, self.rod_arrays.director)
                tip += rod.director_collection.shape[2] - 1
                match = np.flatnonzero(joints.element == tip)
                if match.size != 1:
                    raise FastPathUnsupported("sensor recorder: a rod has no single tip joint")
                rows.append(int(match[0]))
            sensors.bind(
                robot, joint_rest=self._joint_rest_reader(rows),
                twist_couple=self._twist_couple_reader(robot),
            )

    def _twist_couple_reader(self, robot: Any) -> Callable[[int], NDArray[np.float64] | None]:
        """Rod ``i`` of ``robot`` -> the reciprocal twist couple of its coupling in the table
        of this stepper (the fused loop keeps it there, not in the operator), None for a
        one-way coupling or none."""
        from hsa_elastica import compat

        reciprocal = {int(i) for code, i in self.sync_program if code == OP_COUPLING_TORQUE}
        rows: list[int] = []
        for rod in robot.rods:
            e0 = compat.block_offset(rod.director_collection, self.rod_arrays.director)
            match = np.flatnonzero(self.couplings.elem_start == e0)
            rows.append(int(match[0]) if match.size == 1 and int(match[0]) in reciprocal else -1)
        couple = self.couplings.couple

        def twist_couple(i: int) -> NDArray[np.float64] | None:
            return couple[rows[i]] if rows[i] >= 0 else None

        return twist_couple

    def twist_couple(self, i: int) -> NDArray[np.float64] | None:
        """Reciprocal twist couple [N m] of rod ``i``'s passive coupling in the last step, from
        this stepper's coupling table (None for the one-way law)."""
        return self._couple_of_rod(i)

    def _joint_rest_reader(self, rows: list[int]) -> Callable[[int], NDArray[np.float64] | None]:
        joints = self.joints

        def joint_rest(i: int) -> NDArray[np.float64] | None:
            k = rows[i]
            return joints.rest_orientation[k] if joints.initialized[k] != 0 else None

        return joint_rest

    def _state_arrays(self) -> dict[str, NDArray[Any]]:
        """The state of the fused loop: the memory blocks and every array of its tables (the
        operators of the wrapped simulator are not advanced by it)."""
        out: dict[str, NDArray[Any]] = {}
        named: dict[str, Any] = {"rod": self.rod_arrays, "body": self.body_arrays}
        named.update(self.model.tables._asdict())
        for prefix, record in named.items():
            if isinstance(record, np.ndarray):
                out[prefix] = record
                continue
            for name, value in record._asdict().items():
                if isinstance(value, np.ndarray) and value.flags.writeable:
                    out[f"{prefix}.{name}"] = value
        return out

    def _state_objects(self) -> list[Any]:
        return []

    def _schedule_holders(self) -> list[Any]:
        return list(self._motor_bcs)

    @property
    def time(self) -> float:
        """Simulated time [s] reached."""
        return float(self.robot.time)

    @time.setter
    def time(self, value: float) -> None:
        self.robot.time = float(value)

    def _advance(self, n: int, t: float) -> float:
        # the schedules are read from the operators now (they may have been reassigned since
        # the last call) and tabulated at the exact operator times of each of the n steps
        m = len(self._motor_bcs)
        t_half = np.empty(n)
        t_full = np.empty(n)
        step_times(t, self.dt, t_half, t_full)
        a_half = np.empty((n, m))
        a_full = np.empty((n, m))
        r_half = np.empty((n, m))
        scratch = np.empty(n)
        for i, bc in enumerate(self._motor_bcs):
            # a TwistMount's column is its torque [N m]
            angle, rate = (bc.angle, bc.angle_rate) if hasattr(bc, "angle") else (bc.torque, None)
            if i < self.motor_table.has_rate.shape[0]:  # mounts (after the BCs) use no rate
                self.motor_table.has_rate[i] = rate is not None
            values = np.empty(n)
            _schedule_table(angle, rate, t_half, values, scratch)
            a_half[:, i] = values
            r_half[:, i] = scratch
            _schedule_table(angle, None, t_full, values, scratch)
            a_full[:, i] = values
        self._status[:] = 0.0
        t_new = advance(
            n, self.dt, t, MotorSchedule(a_half, a_full, r_half), self.rod_arrays,
            self.body_arrays, self.model.tables, self._status,
        )
        if self._status[0] == STATUS_STIFFNESS:
            i = int(self._status[1])
            raise FloatingPointError(
                f"AuxeticCoupling.stiffness of coupling {i} gave a non-positive stiffness "
                f"({self._status[2]:.6g}) at t = {self._status[3]:.6g} s"
            )
        return float(t_new)

    def run(
        self,
        duration: float,
        *,
        check_every: int | None = None,
        systems_names: Sequence[str] | None = None,
        progress: bool = False,
        max_speed: float | None = None,
        max_stretch: float | None = None,
    ) -> float:
        """Advance by ``duration`` [s] from :attr:`time`; returns the new simulated time [s].

        ``ceil(duration / dt)`` steps (as :func:`hsa_elastica.engines.timeloop.run`), callbacks at
        their sampling steps, a non-finite check every ``min(check_every, chunk)`` steps
        (default ``chunk``; memory per call is O(chunk), never O(duration / dt)) raising :class:`hsa_elastica.engines.timeloop.SimulationDiverged` on a blow-up
        (non-finite state, speed above ``max_speed`` [m/s], rod longer than ``max_stretch``
        times its rest length; defaults and meaning as :func:`hsa_elastica.engines.timeloop.run`).
        ``progress`` is accepted for interface compatibility and ignored.
        """
        v_max = check_bound("max_speed", DEFAULT_MAX_SPEED if max_speed is None else max_speed, "m/s")
        stretch = check_bound(
            "max_stretch",
            DEFAULT_MAX_STRETCH if max_stretch is None else max_stretch,
            "dimensionless ratio",
        )

        duration = float(duration)
        if not (math.isfinite(duration) and duration >= 0.0):
            raise ParameterError(
                f"run(): duration = {duration!r} is invalid: must be a finite number >= 0 (s)"
            )
        if check_every is not None and (
            isinstance(check_every, bool) or not isinstance(check_every, (int, np.integer)) or check_every < 1
        ):
            raise ParameterError(
                f"run(): check_every = {check_every!r} is invalid: must be an integer >= 1 (steps)"
            )
        # steps per numba call: at most ``chunk`` whatever ``check_every`` asks, so that the
        # per-call schedule tables of _advance (O(n) floats) never scale with duration / dt
        limit = self.chunk if check_every is None else min(int(check_every), self.chunk)
        dt = self.dt
        n_steps = int(math.ceil(duration / dt * (1.0 - 1e-9)))
        t = self.time
        last_good = t
        done = 0
        cb = self._callback_every
        sim = self.robot.simulator
        named = getattr(self.robot, "named_systems", None)
        systems: list[Any]
        if callable(named):  # a multi-segment stack names its rods and platforms
            table = named()
            systems, default_names = list(table), list(table.values())
        else:
            systems = [*self.robot.rods, self.robot.platform]
            default_names = [f"rod{i}" for i in range(len(self.robot.rods))] + ["platform"]
        names = list(systems_names) if systems_names is not None else default_names
        while done < n_steps:
            n = min(limit, n_steps - done)
            step_now = int(round(t / dt))
            next_callback = self._next_callback_step(step_now + 1) if cb > 0 else -1
            if next_callback > 0:
                n = min(n, next_callback - step_now)
            t = self._advance(n, t)
            done += n
            self.time = t
            if cb > 0:
                step = round(np.float64(t) / np.float64(dt))
                if step == next_callback:
                    sim.apply_callbacks(np.float64(t), step)
            bad = find_runaway(systems, max_speed=v_max, max_stretch=stretch)
            if bad is not None:
                k = bad[0]
                name = names[k] if k < len(names) else f"system {k}"
                raise SimulationDiverged(t, name, last_good, bad[1])
            last_good = t
        return self.time

    def _next_callback_step(self, step: int) -> int:
        """First step ``>= step`` at which a callback samples (recorders tell their own
        sampling steps; other callbacks sample every ``every`` steps, or every step)."""
        best = -1
        for target in self._callbacks:
            if hasattr(target, "next_sample_step"):
                s = int(target.next_sample_step(step))
            else:
                every = getattr(target, "every", 1)
                every = int(every) if isinstance(every, (int, np.integer)) and every >= 1 else 1
                s = -(-step // every) * every
            best = s if best < 0 else min(best, s)
        return best

    def diagnostics(self) -> "pd.DataFrame":
        """Recorded samples, as :meth:`hsa_elastica.robots.builders.Robot.diagnostics`."""
        return self.robot.diagnostics()



def _handle_attribute(name: str) -> property:
    def get(self: FastRobot) -> Any:
        return getattr(self.robot, name)

    return property(get, doc=f"``{name}`` of the wrapped robot handle (read only).")


#: the wrapped handle's attributes a FastRobot exposes (a fixed list: no catch-all proxy, an
#: attribute of neither raises AttributeError)
HANDLE_ATTRIBUTES = (
    "simulator", "params", "rods", "platform", "platforms", "segments", "motors", "mounts",
    "base", "recorders", "timestepper", "rod_bases", "attachment_points", "motor_angles",
    "named_systems", "render_frame", "segment_poses", "relative_poses", "split_angles",
)  # (``couplings`` / ``joints`` of a FastRobot are its tables)
for _name in HANDLE_ATTRIBUTES:
    setattr(FastRobot, _name, _handle_attribute(_name))

