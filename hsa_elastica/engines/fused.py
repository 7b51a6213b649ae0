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

Usage: the engine is a small class of the compiled model, :class:`FusedEngine` ``(model, dt)``
(see :class:`Engine`); ``FusedEngine(compile_simulator(sim), dt).run_steps(n, t)`` advances the
model's state by ``n`` steps.  The robot handle with the step API, recorders and divergence
checks around it is :class:`hsa_elastica.robots.compiled.FastRobot`::

    from hsa_elastica import build_fast_robot, paper_robot_params
    robot = build_fast_robot(paper_robot_params(), [0.5, -0.5, 0.5, -0.5], record=False)
    robot.run(0.01)                # same interface as robots.handles.Robot

Only the operators listed above are supported; anything else in the simulator raises
:class:`FastPathUnsupported` at compilation (use ``Robot.run``).
Motor schedules are read from the model's command holders (``model.inputs.motor_bcs``: the
``MotorAngleBC`` instances, ...) at every :meth:`FusedEngine.run_steps` (so
``robot.motors[i].instance.angle = ...`` between runs is followed) and tabulated at the
exact mid-step and end-of-step times of every step of the call (:func:`motor_schedule`):
:class:`~hsa_elastica.physics.actuation.Ramp` instances inside numba, other callables in Python
(same values, slower).

State ownership: the fused loop keeps its own copy of the operators' internal state (printed
geometry, twist filter, joint rest orientation); the reference operator instances of the
compiled simulator are not advanced, so do not mix ``FastRobot.run`` with the wrapped
``Robot.run``.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np
from numba import njit
from numpy.typing import NDArray

from elastica.rod.data_structures import overload_operator_dynamic_numba

from hsa_elastica.compat import update_accelerations, zeroed_out_external_forces_and_torques
from hsa_elastica.engines.compile import CompiledModel, FastPathUnsupported
from hsa_elastica.physics.actuation import Ramp
from hsa_elastica.physics.borrow import borrowed
from hsa_elastica.physics.forces import constrain_rates, constrain_values, evaluate_forces
from hsa_elastica.physics.rod_kernels import (
    kinematic_update_inplace,
    rigid_body_accelerations,
    rod_work,
)
from hsa_elastica.physics.tables import (
    STATUS_STIFFNESS,
    BodyBlockArrays,
    ModelTables,
    ForcingTables,
    MotorSchedule,
    RodBlockArrays,
)

__all__ = [
    "Engine",
    "FastPathUnsupported",
    "FusedEngine",
    "advance",
    "motor_schedule",
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


# nogil: released for the call (envs stepped on threads, hsa_elastica.envs.vector)
@njit(cache=True, nogil=True)  # type: ignore[misc]
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
    # borrowed (no reference counts in the loop, hsa_elastica.physics.borrow), unpacked once
    schedule, rod, body, tables, status = borrowed((schedule, rod, body, tables, status))
    angle_half, angle_full, rate_half = schedule
    (couplings, joints, motors, rod_dampers, body_dampers, rod_gravity, body_gravity, material,
     ends, loads, compression, contacts, laws, sync_program, values_program, rates_program) = tables
    forcings = ForcingTables(rod_gravity, body_gravity, loads, compression, contacts, laws)
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



class Engine(Protocol):
    """What the robot handle's step API (:class:`hsa_elastica.robots.compiled.FastRobot`) needs
    of an engine: advance the state of its :class:`CompiledModel` by whole steps of ``dt``.

    ``run_steps(n, t)``: ``n`` steps from time ``t`` [s] under the motor schedules held by
    ``model.inputs.motor_bcs`` (read at every call, so a schedule reassigned between calls is
    followed); returns the new time [s].  An engine with state beyond the model's arrays adds
    ``extra_state()`` / ``set_extra_state(d)`` (see :mod:`hsa_elastica.engines.snapshot`).
    """

    model: CompiledModel
    dt: float

    def run_steps(self, n: int, t: float) -> float: ...


def motor_schedule(model: CompiledModel, dt: float, n: int, t: float) -> MotorSchedule:
    """The motor commands of ``model`` at the mid-step and end-of-step times of ``n`` steps of
    ``dt`` [s] from ``t`` [s] (the schedules are read from ``model.inputs.motor_bcs`` now; the motor
    table's ``has_rate`` follows them)."""
    m = len(model.inputs.motor_bcs)
    t_half = np.empty(n)
    t_full = np.empty(n)
    step_times(t, dt, t_half, t_full)
    a_half = np.empty((n, m))
    a_full = np.empty((n, m))
    r_half = np.empty((n, m))
    scratch = np.empty(n)
    for i, (angle, rate) in enumerate(model.motor_schedules()):  # a TwistMount's: torque [N m]
        values = np.empty(n)
        _schedule_table(angle, rate, t_half, values, scratch)
        a_half[:, i] = values
        r_half[:, i] = scratch
        _schedule_table(angle, None, t_full, values, scratch)
        a_full[:, i] = values
    return MotorSchedule(a_half, a_full, r_half)


class FusedEngine:
    """The explicit fused stepper of one :class:`CompiledModel` at the step ``dt`` [s]: the
    :class:`Engine` whose :meth:`run_steps` calls :func:`advance`.  Its state is the model's
    (memory blocks and tables)."""

    def __init__(self, model: CompiledModel, dt: float) -> None:
        self.model = model
        self.dt = float(dt)
        self._status = np.zeros(4)

    def run_steps(self, n: int, t: float) -> float:
        """``n`` Position-Verlet steps from ``t`` [s] (see :class:`Engine`); raises
        FloatingPointError when a stiffness law gives a non-positive stiffness."""
        schedule = motor_schedule(self.model, self.dt, n, t)
        self._status[:] = 0.0
        if self.model.inputs.scheduled_loads:
            # a BaseTwistTorque schedule (single-rod set-ups): its load row holds the torque
            # at the mid-step, where the operator path reads it; one step per call
            t_half = np.empty(n)
            t_full = np.empty(n)
            step_times(t, self.dt, t_half, t_full)
            loads = self.model.tables.loads
            t_new = t
            for k in range(n):
                for row, op in self.model.inputs.scheduled_loads:
                    loads.torque[row] = float(op.torque(float(t_half[k])))
                t_new = advance(
                    1, self.dt, t_new,
                    MotorSchedule(schedule.angle_half[k:k + 1], schedule.angle_full[k:k + 1],
                                  schedule.rate_half[k:k + 1]),
                    self.model.rod_arrays, self.model.body_arrays, self.model.tables,
                    self._status,
                )
                if self._status[0] == STATUS_STIFFNESS:
                    break
        else:
            t_new = advance(
                n, self.dt, t, schedule, self.model.rod_arrays, self.model.body_arrays,
                self.model.tables, self._status,
            )
        if self._status[0] == STATUS_STIFFNESS:
            i = int(self._status[1])
            raise FloatingPointError(
                f"AuxeticCoupling.stiffness of coupling {i} gave a non-positive stiffness "
                f"({self._status[2]:.6g}) at t = {self._status[3]:.6g} s"
            )
        return float(t_new)
