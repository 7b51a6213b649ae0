"""A built robot or stack stepped by a compiled engine: the handle around an engine of
``(model, dt)``.

The engines (:class:`~hsa_elastica.engines.fused.FusedEngine`, the explicit fused loop, and
:class:`~hsa_elastica.engines.implicit.ImplicitEngine`, the implicit integrator) know only the
:class:`~hsa_elastica.engines.compile.CompiledModel` that
:func:`~hsa_elastica.engines.compile.compile_simulator` makes of the built simulator, and
advance its state by whole steps (:class:`~hsa_elastica.engines.fused.Engine`).  This module
puts the robot around one: :class:`FastRobot` compiles a fresh
:class:`~hsa_elastica.robots.handles.Robot` or :class:`~hsa_elastica.robots.stack.Stack`, runs
the engine in chunks with the recorders called at their sampling steps and a divergence check
after every chunk, and carries the step API (:class:`~hsa_elastica.engines.control.ControlMixin`:
``set_motor_angles``, ``step``, ``state``, snapshots)::

    from hsa_elastica import build_robot, paper_robot_params
    from hsa_elastica.robots.compiled import FastRobot
    robot = FastRobot(build_robot(paper_robot_params(), [0.5, -0.5, 0.5, -0.5], record=False))
    robot.run(0.01)

:class:`ImplicitRobot` is the same handle on the implicit integrator; :func:`compiled_engine`
picks the one ``simulation.integrator`` selects (what ``build_fast_robot``, the steady-state
solvers and the Gymnasium envs call).

State ownership: the engine keeps the operators' internal state (printed geometry, twist
filter, joint rest orientation) in the model's tables; the operator instances of the wrapped
simulator are not advanced, so do not mix ``FastRobot.run`` with the wrapped ``Robot.run``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.engines.compile import CompiledModel, FastPathUnsupported, compile_simulator
from hsa_elastica.engines.control import ControlMixin
from hsa_elastica.engines.fused import Engine, FusedEngine
from hsa_elastica.engines.implicit import DEFAULT_RHO_INF, ImplicitEngine, ImplicitStepFailed
from hsa_elastica.engines.residual_check import ResidualCheck
from hsa_elastica.engines.statics_kernels import KIND_BODY_POS, KIND_BODY_ROT, KIND_NODE
from hsa_elastica.engines.timeloop import (
    DEFAULT_MAX_SPEED,
    DEFAULT_MAX_STRETCH,
    SimulationDiverged,
    check_bound,
    find_runaway,
    runaway_suspect,
)
from hsa_elastica.io.sensors import JointRests
from hsa_elastica.params import MAX_STEPS, ParameterError, check_run_length, integrator
from hsa_elastica.params.integrators import register_handle

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from hsa_elastica.robots.handles import Robot, SingleRod
    from hsa_elastica.robots.stack import Stack

__all__ = ["FastRobot", "HANDLE_ATTRIBUTES", "ImplicitRobot", "compiled_engine"]


class FastRobot(ControlMixin):
    """A robot built by :func:`hsa_elastica.robots.builders.build_robot` (or a stack built by
    :func:`hsa_elastica.robots.stack.build_stack`), stepped by the fused explicit engine
    (:class:`~hsa_elastica.engines.fused.FusedEngine`) of its compiled model.

    Step API as the wrapped robot (:class:`~hsa_elastica.engines.control.ControlMixin`):
    ``set_motor_angles(u)``, ``step(dt_control)``, ``state()``.

    Same interface as :class:`hsa_elastica.robots.handles.Robot` for running and reading results:
    :meth:`run`, :meth:`diagnostics`, :attr:`time`, and the wrapped handle's attributes listed
    in :data:`HANDLE_ATTRIBUTES` (``rods``, ``platform``, ``params``, ``recorders``,
    ``simulator``, ...; read only).  ``model`` is the compiled model, ``engine`` the engine;
    ``couplings``, ``joints``, ``motor_table``, ``rod_arrays``, ``body_arrays``,
    ``sync_program`` are the model's tables.  ``chunk`` is the largest number of steps per
    engine call (also the divergence-check period unless :meth:`run` gets ``check_every``).
    """

    def __init__(self, robot: "Robot | Stack | SingleRod", *, chunk: int = 500) -> None:
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
        self.model: CompiledModel = model
        self.engine: Any = self._make_engine(model)
        self.rod_arrays = model.rod_arrays
        self.body_arrays = model.body_arrays
        self.couplings = model.tables.couplings
        self.joints = model.tables.joints
        # the motor table; ``self.motors`` stays the wrapped robot's operator handles
        self.motor_table = model.tables.motors
        self.sync_program = model.tables.sync_program
        self._motor_bcs = model.inputs.motor_bcs
        self._couple_of_rod = self._twist_couple_reader(self.robot)
        self._bind_sensors()
        self._residual_check: ResidualCheck | None = None

    def _make_engine(self, model: CompiledModel) -> Engine:
        """The engine that advances ``model`` (the fused explicit loop)."""
        return FusedEngine(model, self.dt)

    def _bind_sensors(self) -> None:
        """Point the sensor recorders (of the robot, or of each segment of a stack) at the
        joint table of the model: the engine keeps the joints' rest orientations there, not in
        the operators."""
        joints = self.joints
        for robot in getattr(self.robot, "segments", None) or [self.robot]:
            sensors = getattr(robot, "recorders", {}).get("sensors")
            if sensors is None or not hasattr(sensors, "bind"):
                continue
            rows = [self.model.tip_joint_row(rod.director_collection) for rod in robot.rods]
            sensors.bind(robot, joint_rest=JointRests(joints.rest_orientation,
                                                      joints.initialized, rows),
                         twist_couple=self._twist_couple_reader(robot),
                         blocks=(self.rod_arrays, self.body_arrays))

    def _twist_couple_reader(self, robot: Any) -> Callable[[int], NDArray[np.float64] | None]:
        """Rod ``i`` of ``robot`` -> the reciprocal twist couple of its coupling in the model's
        table (the engine keeps it there, not in the operator), None for a one-way coupling or
        none."""
        rows = [self.model.reciprocal_coupling_row(rod.director_collection) for rod in robot.rods]
        couple = self.couplings.couple

        def twist_couple(i: int) -> NDArray[np.float64] | None:
            return couple[rows[i]] if rows[i] >= 0 else None

        return twist_couple

    def twist_couple(self, i: int) -> NDArray[np.float64] | None:
        """Reciprocal twist couple [N m] of rod ``i``'s passive coupling in the last step, from
        the model's coupling table (None for the one-way law)."""
        return self._couple_of_rod(i)

    def static_residual(self) -> tuple[float, float]:
        """Max-norms (forces [N], couples [N m]) of the static residual of the present pose
        (velocities taken as zero) at the motors' present commands: the settling test's force
        balance.  Evaluated on a workspace made at the first call and reused
        (:class:`~hsa_elastica.engines.residual_check.ResidualCheck`); the state is only read."""
        return self.residual_check().norms(self.model.commands(self.time))

    def residual_check(self) -> ResidualCheck:
        """The workspace of :meth:`static_residual` (made at the first call)."""
        if self._residual_check is None:
            self._residual_check = ResidualCheck(self.model)
        return self._residual_check

    # -- snapshots (engines/snapshot.py): the model's arrays, no operator state ------------------
    def _state_arrays(self) -> dict[str, NDArray[Any]]:
        return self.model.state_arrays()

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
        """``n`` engine steps from ``t`` [s]; the new time [s]."""
        return float(self.engine.run_steps(n, t))

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
        if duration > MAX_STEPS * self.dt:
            check_run_length(duration, self.dt, "run(): duration")  # the one cap on a run's length
        if check_every is not None and (
            isinstance(check_every, bool) or not isinstance(check_every, (int, np.integer)) or check_every < 1
        ):
            raise ParameterError(
                f"run(): check_every = {check_every!r} is invalid: must be an integer >= 1 (steps)"
            )
        # steps per engine call: at most ``chunk`` whatever ``check_every`` asks, so that the
        # per-call schedule tables (O(n) floats) never scale with duration / dt
        limit = self.chunk if check_every is None else min(int(check_every), self.chunk)
        n_steps = int(math.ceil(duration / self.dt * (1.0 - 1e-9)))
        systems, names = self._checked_systems(systems_names)
        self._run_steps(n_steps, limit, systems, names, v_max, stretch)
        self._check_contact_steps()
        return self.time

    #: an explicit engine's contacts are checked against their stable step
    #: (:func:`~hsa_elastica.physics.contact.step_limits`) at most every this much simulated
    #: time [s] (about 1 ms of Python a check on the robot)
    contact_check_interval = 0.1
    _explicit = True
    _contact_warned = False  # (per instance once set)
    _contact_checked = -math.inf  # s, simulated time of the last check

    def _check_contact_steps(self) -> None:
        """Warn once (:class:`~hsa_elastica.physics.contact.ContactStepWarning`, one line) if
        the explicit step is above a contact's dissipation limit at the present state: friction
        or a normal contact then chatters instead of holding (docs/contact.md)."""
        refs = getattr(self.robot, "contacts", None)
        if not refs or not self._explicit or self._contact_warned:
            return
        if self.time - self._contact_checked < self.contact_check_interval:
            return
        self._contact_checked = self.time
        import warnings

        from hsa_elastica.physics.contact import ContactStepWarning, step_limit_message

        message = step_limit_message(refs, self.dt, self.time)
        if message is not None:
            self._contact_warned = True
            warnings.warn(message, ContactStepWarning, stacklevel=3)

    def _checked_systems(self, systems_names: Sequence[str] | None) -> tuple[list[Any], list[str]]:
        """The systems of the divergence check and their names (a stack names its own)."""
        named = getattr(self.robot, "named_systems", None)
        systems: list[Any]
        if callable(named):  # a multi-segment stack names its rods and platforms
            table = named()
            systems, default_names = list(table), list(table.values())
        else:  # a robot (a single rod and a stack name their systems)
            robot: Any = self.robot
            systems = [*robot.rods, robot.platform]
            default_names = [f"rod{i}" for i in range(len(robot.rods))] + ["platform"]
        return systems, list(systems_names) if systems_names is not None else default_names

    def _run_steps(self, n_steps: int, limit: int, systems: list[Any], names: list[str],
                   v_max: float, stretch: float) -> None:
        """``n_steps`` steps in engine calls of at most ``limit`` steps, callbacks at their
        sampling steps, a divergence check after every call."""
        dt = self.dt
        t = self.time
        last_good = t
        done = 0
        cb = self.model.inputs.callback_every
        sim = self.robot.simulator
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
            v2_max = v_max * v_max
            suspect = False
            for s in systems:
                rest = getattr(s, "rest_lengths", None)
                # contiguous copies (a rod's arrays are views into its block): one
                # specialisation of the kernel for rods and bodies, not two (~0.5 s of
                # compilation on a cold start; a copy costs about a microsecond)
                if runaway_suspect(np.ascontiguousarray(s.position_collection),
                                   np.ascontiguousarray(s.velocity_collection),
                                   _NO_REST if rest is None else rest, v2_max, stretch):
                    suspect = True
                    break
            bad = find_runaway(systems, max_speed=v_max, max_stretch=stretch) if suspect else None
            if bad is not None:
                k = bad[0]
                name = names[k] if k < len(names) else f"system {k}"
                raise SimulationDiverged(t, name, last_good, bad[1])
            last_good = t

    def load_kernels(self) -> None:
        """Load the kernels :meth:`run` and a settling run call from numba's cache (or compile
        them) now, without advancing: an engine call of no steps (an implicit engine starts
        there, at the robot's time, as its first call would), the divergence pre-check, the
        static residual and the recorders' kernels, which only read the state.  In a fresh process this is a one-time
        cost of about a second that a timed run then does not include."""
        self._advance(0, self.time)
        systems, _ = self._checked_systems(None)
        for s in systems[-1:] + systems[:1]:  # a body and a rod (one specialisation)
            rest = getattr(s, "rest_lengths", None)
            runaway_suspect(np.ascontiguousarray(s.position_collection),
                            np.ascontiguousarray(s.velocity_collection),
                            _NO_REST if rest is None else rest, 1.0, 2.0)
        self.static_residual()
        self.load_recorder_kernels()

    def load_recorder_kernels(self) -> None:
        """Load the kernels the recorders call at a sample (each recorder's ``load_kernels``,
        on a scratch row: nothing is recorded)."""
        for target in self.model.inputs.callbacks:
            load = getattr(target, "load_kernels", None)
            if callable(load):
                load()

    def _next_callback_step(self, step: int) -> int:
        """First step ``>= step`` at which a callback samples (recorders tell their own
        sampling steps; other callbacks sample every ``every`` steps, or every step)."""
        best = -1
        for target in self.model.inputs.callbacks:
            if hasattr(target, "next_sample_step"):
                s = int(target.next_sample_step(step))
            else:
                every = getattr(target, "every", 1)
                every = int(every) if isinstance(every, (int, np.integer)) and every >= 1 else 1
                s = -(-step // every) * every
            best = s if best < 0 else min(best, s)
        return best

    def _callback_steps(self, first: int, last: int) -> NDArray[np.int64]:
        """The steps in ``[first, last]`` at which a callback samples, ascending (the steps
        :meth:`_next_callback_step` finds one by one)."""
        found = []
        for target in self.model.inputs.callbacks:
            if hasattr(target, "sample_steps"):
                found.append(np.asarray(target.sample_steps(first, last), dtype=np.int64))
            elif hasattr(target, "next_sample_step"):  # a recorder of another kind
                s, steps = int(target.next_sample_step(first)), []
                while s <= last:
                    steps.append(s)
                    s = int(target.next_sample_step(s + 1))
                found.append(np.array(steps, dtype=np.int64))
            else:
                every = getattr(target, "every", 1)
                every = int(every) if isinstance(every, (int, np.integer)) and every >= 1 else 1
                found.append(np.arange(-(-first // every) * every, last + 1, every, dtype=np.int64))
        return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)

    def diagnostics(self) -> "pd.DataFrame":
        """Recorded samples, as :meth:`hsa_elastica.robots.handles.Robot.diagnostics`."""
        return self.robot.diagnostics()


class ImplicitRobot(FastRobot):
    """A robot, a stack or a single rod built by the builders, stepped by
    :class:`~hsa_elastica.engines.implicit.ImplicitEngine` at the robot's ``dt``: same
    interface as :class:`FastRobot` (``run``, ``set_motor_angles``/``step``/``state``,
    recorders, divergence checks; a refused step names the unknown with the largest residual by
    the handle's system names).

    ``rho_inf``: spectral radius of the generalized-alpha scheme; ``dt_table``: the step the
    damper tables were built with (default the robot's ``dt``); other keyword arguments go to
    :class:`~hsa_elastica.engines.implicit.ImplicitEngine`.
    """

    engine: ImplicitEngine
    _explicit = False  # (no explicit step limit on contacts)

    def __init__(self, robot: "Robot | Stack | SingleRod", *, rho_inf: float = DEFAULT_RHO_INF,
                 chunk: int = 500, dt_table: float | None = None, **kwargs: Any) -> None:
        self._engine_kwargs = dict(rho_inf=rho_inf, dt_table=dt_table, **kwargs)
        super().__init__(robot, chunk=chunk)
        self.engine.describe_unknown = self._unknown_names()

    def _unknown_names(self) -> Callable[[int], str]:
        """Unknown index -> ``"<system> node i"`` / ``"<system> element i"`` / ``"<body>"``,
        with the names divergence reports use (``named_systems()`` of the handle, else
        ``rod{i}`` / ``platform``)."""
        from hsa_elastica import compat

        named = getattr(self.robot, "named_systems", None)
        if callable(named):
            table = dict(named())
        else:  # a robot (a single rod and a stack name their systems)
            robot: Any = self.robot
            table = {rod: f"rod{i}" for i, rod in enumerate(robot.rods)}
            table[robot.platform] = "platform"
        rod, body = self.rod_arrays, self.body_arrays
        rods: list[tuple[int, int, int, int, str]] = []
        bodies: dict[int, str] = {}
        for system, name in table.items():
            if hasattr(system, "rest_lengths"):  # a rod (a rigid body has n_elems too)
                n0 = compat.block_offset(system.position_collection, rod.position)
                e0 = compat.block_offset(system.director_collection, rod.director)
                ne = int(system.n_elems)
                rods.append((n0, n0 + ne + 1, e0, e0 + ne, name))
            elif system is not None and body.position.shape[1]:
                bodies[compat.block_offset(system.position_collection, body.position)] = name
        s = self.engine.solver
        kind, index = s.kind, s.index

        def describe(j: int) -> str:
            k, i = int(kind[j]), int(index[j])
            if k in (KIND_BODY_POS, KIND_BODY_ROT):
                return bodies.get(i, f"body {i}")
            node = k == KIND_NODE
            for n0, n1, e0, e1, name in rods:
                if node and n0 <= i < n1:
                    return f"{name} node {i - n0}"
                if not node and e0 <= i < e1:
                    return f"{name} element {i - e0}"
            return f"{'node' if node else 'element'} {i} of the rod block"

        return describe

    def _advance(self, n: int, t: float) -> float:
        try:
            return super()._advance(n, t)
        except ImplicitStepFailed:
            # the state is at the start of the refused step: so is the handle's time
            self.time = self.engine.time
            raise

    def _make_engine(self, model: CompiledModel) -> Engine:
        kw = dict(self._engine_kwargs)
        dt_table = kw.pop("dt_table")
        return ImplicitEngine(model, self.dt, dt_table=self.dt if dt_table is None else float(dt_table),
                              **kw)

    def extra_state(self) -> dict[str, np.ndarray]:
        """See :meth:`~hsa_elastica.engines.implicit.ImplicitEngine.extra_state`."""
        return self.engine.extra_state()

    def set_extra_state(self, d: dict[str, np.ndarray]) -> None:
        """See :meth:`~hsa_elastica.engines.implicit.ImplicitEngine.set_extra_state`."""
        self.engine.set_extra_state(d)


#: the rest lengths passed to :func:`runaway_suspect` for a rigid body
_NO_REST = np.zeros(0)

#: the wrapped handle's attributes a FastRobot exposes (a fixed list: no catch-all proxy, an
#: attribute of neither raises AttributeError)
HANDLE_ATTRIBUTES = (
    "simulator", "params", "rods", "platform", "platforms", "segments", "motors", "mounts",
    "base", "recorders", "timestepper", "rod_bases", "attachment_points", "motor_angles",
    "named_systems", "render_frame", "segment_poses", "relative_poses", "split_angles",
)  # (``couplings`` / ``joints`` of a FastRobot are its model's tables)


def _handle_attribute(name: str) -> property:
    def get(self: FastRobot) -> Any:
        return getattr(self.robot, name)

    return property(get, doc=f"``{name}`` of the wrapped robot handle (read only).")


for _name in HANDLE_ATTRIBUTES:
    setattr(FastRobot, _name, _handle_attribute(_name))


def _simulation_params(robot: Any) -> Any:
    """The ``SimulationParams`` of a robot (``params.simulation``), of a stack's first
    segment (``params[0].simulation``) or of a single rod (``sim_params``); None if it has
    none."""
    if getattr(robot, "sim_params", None) is not None:
        return robot.sim_params
    p = getattr(robot, "params", None)
    if isinstance(p, (tuple, list)) and p:
        p = p[0]
    return getattr(p, "simulation", None)


def compiled_engine(robot: "Robot | Stack | SingleRod", *, chunk: int = 500) -> FastRobot:
    """``robot`` stepped by the compiled engine its ``simulation.integrator`` (a single rod's
    ``sim_params.integrator``) selects: a
    :class:`FastRobot` (``"explicit"``) or an :class:`ImplicitRobot` with
    ``simulation.implicit_rho_inf``, ``simulation.max_halvings`` and Newton's tolerances
    ``simulation.implicit_tol_position`` / ``implicit_tol_rotation`` (``"implicit"``)."""
    sim = _simulation_params(robot)
    handle: FastRobot = integrator(sim).build(robot, sim, chunk=chunk)
    return handle


def _implicit_handle(robot: "Robot | Stack | SingleRod", sim: Any, chunk: int) -> ImplicitRobot:
    return ImplicitRobot(robot, rho_inf=float(sim.implicit_rho_inf), chunk=chunk,
                         max_halvings=int(sim.max_halvings),
                         tol_position=float(sim.implicit_tol_position),
                         tol_rotation=float(sim.implicit_tol_rotation))


# the compiled handle of each integrator of the registry (params/integrators.py)
register_handle("explicit", lambda robot, sim, chunk: FastRobot(robot, chunk=chunk))
register_handle("implicit", _implicit_handle)
