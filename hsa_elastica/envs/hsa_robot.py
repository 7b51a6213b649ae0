"""``HSARobot-v1``: the four-rod HSA robot of the paper as a Gymnasium environment.

Task: bring the platform centre to a target position (sampled at :meth:`HSARobotEnv.reset`).
``import hsa_elastica`` registers the ids (``gym.make("HSARobot-v1")``, with gymnasium
installed: the extra ``rl``):

* ``HSARobot-v1``: the class's defaults, the implicit integrator at :data:`IMPLICIT_DT` and
  motors limited to :data:`MX28_SPEED`, the speed of the paper robot's servos;
* ``HSARobot-v0``: the earlier defaults, ``integrator=None`` (the params' integrator: the
  explicit stepper for the paper robot) and ``motor_speed=None`` (no limit), so that results
  obtained with ``-v0`` reproduce.  Gymnasium warns that the id is out of date.

* **action** ``(n_rods,)`` float32 in ``[-1, 1]``: one normalised motor command per rod, mapped
  affinely onto the rod's elongating range (Section II-E),
  ``phi_i = h_i * phi_max * (a_i + 1) / 2`` [rad] with ``h_i = +1`` for right-handed and ``-1``
  for left-handed rods and ``phi_max = pi``: ``a = -1`` is the motor at rest (0 rad), ``a = 0``
  half way, ``a = +1`` the full elongating twist.  Finite values outside ``[-1, 1]`` are clipped
  to it; a scalar, a wrong length, NaN or inf raise :class:`ParameterError`.
  :meth:`HSARobotEnv.action_to_angles` / :meth:`HSARobotEnv.angles_to_action` convert.  During
  one control interval of ``control_dt`` [s] (default 20 ms) each motor turns linearly from its
  present angle to the target (:meth:`hsa_elastica.engines.control.ControlMixin.step`).
  ``motor_speed`` [rad/s] (default :data:`MX28_SPEED`, 5.76 rad/s, the no-load speed of the
  paper robot's servos) limits each motor's speed as a servo's does: the angle reached at the
  end of the interval is the command clipped to ``+-motor_speed * control_dt`` from the
  present angle (0.115 rad per 20 ms); both integrators see the same schedule.  ``None``: no
  limit, each motor reaches any command within the interval (up to 157 rad/s, a motion the
  robot's servos cannot make).
* **observation** float32, bounded (:func:`observation_bounds`): platform position (3) [m],
  quaternion ``(x, y, z, w)`` (4), velocity (3) [m/s], angular velocity in the platform frame
  (3) [rad/s], target position (3) [m], and with ``motor_torques=True`` the motor torques
  (n_rods) [N m]; ``env.observation_names`` gives each entry's column name in the output
  schema (``platform_position_m_x``, ..., docs/outputs.md).  Positions lie within the robot's geometric reach, a bound the physics
  guarantees; velocities and torques are clipped to stated maxima well above anything
  measured (``info["observation_clipped"]`` says when a value was clipped).
* **info** (:class:`EnvInfo`): ``sim_time_s``, ``distance_m``, ``target_position_m``,
  ``motor_angles_rad``, ``observation_clipped`` (schema names).
* **reward**: ``-|p_platform - p_target|`` [m] after the interval.
* **episode**: the env never truncates by itself; ``gym.make`` wraps it in gymnasium's
  ``TimeLimit`` with the spec's ``max_episode_steps = 150`` (3 s; ``gym.make(...,
  max_episode_steps=N)`` changes it).  ``terminated`` only when the simulation diverges
  (``info["diverged"]``, reward -1).  The first reset builds the robot and its engine; later
  resets restore its state at rest into that engine (bitwise a new env's start); after an
  episode that diverged or raised, the next reset builds anew.
* **target**: uniform in a cylinder above the rest pose that the paper robot reaches (radius
  ``target_radius`` [m], heights ``target_height`` [m] above the rest platform centre), or
  ``reset(options={"target": (x, y, z)})`` (within the observation bounds).
* ``render_mode="rgb_array"``: an off-screen pyvista image of the robot with the target as a
  red sphere (:class:`hsa_elastica.io.render.RobotScene`; needs a working VTK/EGL, optional).
* ``discretization``: the rods' elements and the explicit stepper's internal step (the
  implicit integrator takes :data:`IMPLICIT_DT`).  ``"coarse"``: 10 elements
  per rod, dt = 6e-5 s -- the default for the paper robot (``params=None``): about 3x the
  throughput of the paper's discretization (benchmarks/bench_control.py), steady poses within
  0.4 mm of the 25-element model (bend_north at full magnitude: 43.82 vs 44.17 mm sideways;
  elongation 132.67 vs 132.69 mm high).  The step is 87 % of the stable limit of 10-element
  rods (``max_stable_dt``: 6.9e-5 s; the paper's 3e-5 s is 86 % of its 3.5e-5 s); at 6e-5 s
  the seven primitives and 25 random motor-angle sets settle over a 10 s hold
  (``benchmarks/robot_hold.py --elements 10 --dt 6e-5``), 7e-5 s diverges.  The implicit
  integrator's Newton tolerances are :data:`COARSE_NEWTON_TOLERANCES` there (1e-6 m, 1e-4 rad,
  against the library's 1e-7 m, 1e-5 rad).  ``"full"``: the discretization of
  ``params`` as given (the paper robot: 25 elements, dt = 3e-5 s explicit) --
  the default when ``params`` is given, so a model passed in is never coarsened silently.
  ``n_elements`` / ``dt`` override either.
* ``integrator``: ``"implicit"`` (default; :mod:`hsa_elastica.engines.implicit`, internal
  step :data:`IMPLICIT_DT` unless ``dt`` is given) or ``"explicit"`` (the fused
  Position-Verlet stepper at the discretization's step); None keeps
  ``params.simulation.integrator``.  Which is faster depends on the motor commands
  (docs/performance.md, "Environments"): the implicit integrator for motors turning at servo
  speeds (the default), the explicit stepper for unlimited random commands.  An internal
  step Newton cannot take is taken again as two half steps, down to 1/16 of the step
  (``params.simulation.max_halvings``, default
  :data:`~hsa_elastica.engines.implicit.ENV_MAX_HALVINGS` = 4), so one abrupt command does not
  end a training run; only a step refused at 1/16 raises ``ImplicitStepFailed``.

The fused stepper (:class:`hsa_elastica.robots.compiled.FastRobot`) is used unless
``fast=False`` (per-rod operators; same trajectory, ~6x slower).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from hsa_elastica.engines.control import imposed_motor_angles, motor_torques
from hsa_elastica.engines.timeloop import SimulationDiverged
from hsa_elastica.envs.discretization import COARSE_NEWTON_TOLERANCES as COARSE_NEWTON_TOLERANCES
from hsa_elastica.envs.discretization import DISCRETIZATIONS as DISCRETIZATIONS
from hsa_elastica.envs.discretization import IMPLICIT_DT as IMPLICIT_DT
from hsa_elastica.envs.discretization import check_steps as check_steps
from hsa_elastica.envs.discretization import discretized as discretized
from hsa_elastica.io.columns import JsonObject, flat_columns
from hsa_elastica.params import integrator as integrator_record
from hsa_elastica.physics.joints import rotation_matrix_to_quaternion
from hsa_elastica.params import (
    MAX_MOTOR_ANGLE,
    ParameterError,
    RobotParams,
    paper_robot_params,
)
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.primitives import DEFAULT_PHI_MAX, rod_layout

# DISCRETIZATIONS, IMPLICIT_DT, COARSE_NEWTON_TOLERANCES, check_steps, discretized: documented
# in hsa_elastica.envs.discretization, importable from here as before
__all__ = [
    "HSARobotEnv", "observation_bounds", "observation_names", "EnvInfo",
    "OLD_INFO_KEYS", "platform_reach", "MAX_SPEED",
    "MAX_ANGULAR_SPEED", "TORQUE_BOUND_FACTOR", "STRETCH_MARGIN", "MX28_SPEED",
]

#: no-load speed [rad/s] of the DYNAMIXEL MX-28T servos of the paper robot (datasheet:
#: 55 rev/min at 12 V), a value for ``motor_speed``
MX28_SPEED = 55.0 * 2.0 * math.pi / 60.0

#: colour of the target sphere in the rendered images
TARGET_COLOR = "#e31a1c"
#: bound of each platform velocity component in the observation [m/s].  The most violent
#: policy tried -- every motor jumping between the ends of its range at random every 20 ms (the
#: coarse paper robot for 10 s, the coarse stack until it diverged after 5.2 s) -- reached
#: 9.5 m/s (robot) and 10.1 m/s (stack).
MAX_SPEED = 20.0
#: bound of each angular velocity component in the observation [rad/s] (same policy: 251 rad/s)
MAX_ANGULAR_SPEED = 1000.0
#: motor torque bound, in units of the static torque of a rod twisted by ``phi_max``,
#: ``B_z phi_max / L`` (0.44 N m for the paper rod; the policy above reached 0.83 N m = 1.9x)
TORQUE_BOUND_FACTOR = 10.0
#: axial stretch of the rods beyond their longest rest length admitted in the position bound
#: (axial stiffness EA ~ 1.75 kN for the paper rod: 10 % takes ~180 N of tension)
STRETCH_MARGIN = 0.10


def _positive(name: str, value: float, unit: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0.0):
        raise ParameterError(f"HSARobotEnv.{name} = {value!r} is invalid: must be a finite number > 0 ({unit})")
    return v


def platform_reach(segments: Sequence[RobotParams]) -> float:
    """Upper bound [m] of the distance from the base centre to the centre of the top platform
    of ``segments`` stacked (one: the single robot), from the geometry alone.

    Per stage: the rod's base lies ``circle_radius`` from the stage's base centre; the rod (caps
    included) is at most ``(cap_base + L (1 + eps_max) + cap_top) (1 + STRETCH_MARGIN)`` long
    along its arc (the auxetic rest strain is clipped to ``eps_max``, Eq. 3); its tip is held by
    the joint (Eq. 6) at ``sqrt(circle_radius^2 + (thickness / 2)^2)`` from the platform centre;
    the next stage stands ``thickness / 2`` above that centre.  Summed over the stages.
    """
    reach = 0.0
    for k, p in enumerate(segments):
        rod = p.rod
        length = rod.cap_length_base + rod.length * (1.0 + max(rod.eps_max, 0.0)) + rod.cap_length_top
        reach += (
            p.circle_radius
            + length * (1.0 + STRETCH_MARGIN)
            + math.hypot(p.circle_radius, 0.5 * p.platform.thickness)
            + (0.5 * segments[k - 1].platform.thickness if k > 0 else 0.0)
        )
    return reach


#: renamed ``info`` keys (old -> schema name), still read with a warning
OLD_INFO_KEYS = {"time": "sim_time_s", "distance": "distance_m", "target": "target_position_m",
                 "motor_angles": "motor_angles_rad"}


class EnvInfo(JsonObject):
    """The ``info`` of :meth:`HSARobotEnv.reset` / :meth:`HSARobotEnv.step`: ``sim_time_s``
    [s], ``distance_m`` [m] platform centre to target, ``target_position_m`` (3,) [m],
    ``motor_angles_rad`` (n_rods,) [rad], ``observation_clipped`` (and ``diverged``, the
    message, when the simulation blew up).  The earlier keys (:data:`OLD_INFO_KEYS`) still read
    with a ``DeprecationWarning`` on this dict (a vector env's merged infos have only the new
    ones)."""

    old_keys = OLD_INFO_KEYS
    what = "info key"


def observation_names(n_rods: int, motor_torques: bool = False) -> tuple[str, ...]:
    """The output schema's column name of each entry of the observation, in order
    (:func:`hsa_elastica.io.columns.flat_columns`): ``platform_position_m_{x,y,z}``,
    ``platform_quaternion_xyzw_{x,y,z,w}``, ``platform_velocity_m_s_{x,y,z}``,
    ``platform_omega_rad_s_{x,y,z}``, ``target_position_m_{x,y,z}`` and with
    ``motor_torques`` ``motor_torques_nm_{i}``."""
    names = ["platform_position_m", "platform_quaternion_xyzw", "platform_velocity_m_s",
             "platform_omega_rad_s", "target_position_m"]
    if motor_torques:
        names.append("motor_torques_nm")
    return tuple(c for name in names for c in flat_columns(name, n_rods))


def observation_bounds(
    segments: Sequence[RobotParams], phi_max: float, with_torques: bool
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """(low, high) of the observation of the top platform of ``segments``: position and target
    within ``+-platform_reach`` [m] on each axis, quaternion within +-1, velocity within
    +-:data:`MAX_SPEED`, angular velocity within +-:data:`MAX_ANGULAR_SPEED`, and the motor
    torques (all stages' motors) within ``+-TORQUE_BOUND_FACTOR * B_z * phi_max / L`` [N m]
    (the largest over the stages)."""
    reach = platform_reach(segments)
    parts = [
        np.full(3, reach), np.ones(4), np.full(3, MAX_SPEED), np.full(3, MAX_ANGULAR_SPEED),
        np.full(3, reach),
    ]
    if with_torques:
        tau = max(TORQUE_BOUND_FACTOR * p.rod.B_z * phi_max / p.rod.length for p in segments)
        parts.append(np.full(sum(p.n_rods for p in segments), tau))
    high = np.concatenate(parts).astype(np.float32)
    return -high, high


class HSARobotEnv(gym.Env):  # type: ignore[misc]
    """Platform-reaching task of the paper's four-rod HSA robot (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(
        self,
        params: RobotParams | None = None,
        *,
        control_dt: float = 0.02,
        phi_max: float = DEFAULT_PHI_MAX,
        motor_torques: bool = False,
        target_radius: float = 0.010,
        target_height: tuple[float, float] = (0.008, 0.020),
        fast: bool = True,
        discretization: str | None = None,
        n_elements: int | None = None,
        dt: float | None = None,
        render_mode: str | None = None,
        render_size: tuple[int, int] = (480, 360),
        max_steps: Any = None,
        integrator: str | None = "implicit",
        motor_speed: float | None = MX28_SPEED,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        self.motor_speed = None if motor_speed is None else _positive(
            "motor_speed", motor_speed, "rad/s")
        if max_steps is not None:
            raise ParameterError(
                f"{name}.max_steps = {max_steps!r} is no longer accepted: episodes are truncated by "
                f"gymnasium's TimeLimit, gym.make(id, max_episode_steps=N) (default 150)"
            )
        p = paper_robot_params() if params is None else params
        if not isinstance(p, RobotParams):
            raise ParameterError(f"HSARobotEnv.params = {params!r} is invalid: must be a RobotParams")
        self.discretization, (self.params,) = discretized(
            [p], name, discretization=discretization, given=params is not None,
            integrator=integrator, n_elements=n_elements, dt=dt,
        )
        self.control_dt = check_steps(name, [self.params], control_dt, dt is not None)
        scheme = self.params.simulation.integrator
        if not fast and not integrator_record(scheme).operator_path:
            raise ParameterError(
                f"{name}.fast = False is invalid with integrator {scheme!r}: the per-rod "
                f"operators step explicitly; pass integrator='explicit' (or fast=True)"
            )
        self.phi_max = _positive("phi_max", phi_max, "rad")
        if self.phi_max > MAX_MOTOR_ANGLE:
            raise ParameterError(
                f"{name}.phi_max = {phi_max!r} is invalid: must be in (0, {MAX_MOTOR_ANGLE:.6g}] (rad)"
            )
        self.target_radius = float(target_radius)
        lo, hi = (float(target_height[0]), float(target_height[1]))
        if not (math.isfinite(self.target_radius) and self.target_radius >= 0.0 and 0.0 <= lo <= hi < math.inf):
            raise ParameterError(
                f"HSARobotEnv target_radius = {target_radius!r} / target_height = {target_height!r} "
                f"is invalid: radius >= 0 (m), 0 <= low <= high (m)"
            )
        self.target_height = (lo, hi)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ParameterError(f"HSARobotEnv.render_mode = {render_mode!r} is invalid: must be None or 'rgb_array'")
        self.render_mode = render_mode
        self.metadata = {**type(self).metadata, "render_fps": 1.0 / self.control_dt}
        self.render_size = (int(render_size[0]), int(render_size[1]))
        self.fast = bool(fast)
        self.with_torques = bool(motor_torques)
        self._set_spaces([self.params])
        # rest pose of the platform centre: rods of printed length + half the platform
        self.rest_position = np.array(
            [0.0, 0.0, self.params.rod.length + 0.5 * self.params.platform.thickness]
        )
        self.robot: Any = None
        #: the robot's snapshot as built (:meth:`_robot_at_rest`); None until the first reset
        #: and after an episode that diverged
        self._at_rest: Any = None
        self.target = self.rest_position.copy()
        self._last_obs: NDArray[np.float32] | None = None
        #: the motors' imposed angles [rad] at the robot's present time (set by reset, step
        #: and set_state: the start of the next interval's servo-limited ramp)
        self._motor_angles = np.zeros(self.n_rods)
        self._servo_reach = None if self.motor_speed is None else self.motor_speed * self.control_dt

    def _set_spaces(self, segments: Sequence[RobotParams]) -> None:
        """Action and observation spaces of the motors of ``segments`` (stage 0 first)."""
        self.handedness = np.concatenate([rod_layout(p)[1].astype(np.float64) for p in segments])
        self.n_rods = int(self.handedness.shape[0])
        self.action_space: spaces.Box = spaces.Box(-1.0, 1.0, shape=(self.n_rods,), dtype=np.float32)
        self.reach = platform_reach(segments)
        low, high = observation_bounds(segments, self.phi_max, self.with_torques)
        self.observation_space: spaces.Box = spaces.Box(low, high, dtype=np.float32)
        self._obs_low, self._obs_high = self.observation_space.low, self.observation_space.high
        #: the output schema's column name of each observation entry (docs/outputs.md)
        self.observation_names: tuple[str, ...] = observation_names(self.n_rods, self.with_torques)

    # -- actions <-> motor angles ----------------------------------------------------------------
    def action_to_angles(self, action: Any) -> NDArray[np.float64]:
        """Motor angles [rad] of a normalised action: ``h_i * phi_max * (a_i + 1) / 2`` with
        ``a`` clipped to ``[-1, 1]``; ``ParameterError`` for anything but ``n_rods`` finite
        numbers."""
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            a = None
        if a is None or a.shape != (self.n_rods,) or not np.isfinite(a).all():
            got = "not numbers" if a is None else (
                f"shape {a.shape}" if a.shape != (self.n_rods,) else "a NaN or inf entry")
            raise ParameterError(
                f"{type(self).__name__}.step(): action has {got}: must be shape ({self.n_rods},), "
                f"finite, each in [-1, 1] (finite values outside are clipped)"
            )
        # np.minimum / np.maximum: np.clip's dispatch costs more than the clipping of 4 numbers
        return self.handedness * self.phi_max * 0.5 * (np.minimum(np.maximum(a, -1.0), 1.0) + 1.0)

    def angles_to_action(self, angles: Any) -> NDArray[np.float32]:
        """The action commanding motor angles ``angles`` [rad] (the inverse of
        :meth:`action_to_angles`; angles outside the elongating ranges give entries outside
        ``[-1, 1]``, which :meth:`step` clips)."""
        phi = np.asarray(angles, dtype=np.float64).reshape(self.n_rods)
        return (2.0 * phi / (self.handedness * self.phi_max) - 1.0).astype(np.float32)

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        super().reset(seed=seed)
        target = given = None if options is None else options.get("target")
        if target is None:
            r = self.target_radius * math.sqrt(float(self.np_random.uniform()))
            a = float(self.np_random.uniform(0.0, 2.0 * math.pi))
            dz = float(self.np_random.uniform(*self.target_height))
            target = self.rest_position + np.array([r * math.cos(a), r * math.sin(a), dz])
        try:
            target = np.array(target, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            target = np.array([np.nan])
        reach = self.reach
        if target.shape != (3,) or not np.all(np.abs(target) <= reach):
            text = repr(given)
            raise ParameterError(
                f"reset(): options['target'] = {text if len(text) <= 60 else text[:50] + '...'} is "
                f"invalid: must be 3 finite numbers within +-{reach:.4g} m (the robot's reach)"
            )
        self.target = target
        self.robot = self._robot_at_rest()
        obs, _, info = self._outcome()
        return obs, info

    @property
    def kernel_command(self) -> str:
        """The kernel table's command whose kernels this env's compiled engine runs
        (:mod:`hsa_elastica.engines.precompile`): ``"envs"`` on the implicit integrator,
        ``"primitive"`` (the fused explicit loop) on the explicit one.  On a cold numba cache the
        first reset compiles them on every core (``hsa-elastica compile --command NAME`` does
        it ahead of time)."""
        return "primitive" if integrator_record(self.params.simulation).kernel_table is None \
            else "envs"

    def _robot_at_rest(self) -> Any:
        """The robot at rest for a new episode.  The first reset (and the first after an
        episode that diverged) builds the robot and its engine and keeps a snapshot of it
        (:meth:`~hsa_elastica.engines.control.ControlMixin.get_state`); any other reset
        restores that snapshot into the engine already built, so the episode starts from
        bitwise the same state as a fresh build without building the model, the Newton
        matrix's pattern and the handles again (docs/performance.md, "Environments")."""
        if self.robot is not None and self._at_rest is not None:
            self.robot.set_state(self._at_rest)
            return self.robot
        if self.fast:
            from hsa_elastica.engines.precompile import precompile_first_use

            precompile_first_use(self.kernel_command)
        robot: Any = self._build()
        if self.fast:
            from hsa_elastica.robots.compiled import compiled_engine

            # one numba call per control interval (the divergence check runs after it); the
            # engine is the one simulation.integrator selects (implicit: a refused step is
            # retried in halves, simulation.max_halvings, rather than ending the episode)
            robot = compiled_engine(
                robot, chunk=max(500, int(math.ceil(self.control_dt / robot.dt)) + 1))
        self._at_rest = robot.get_state()
        return robot

    def step(
        self, action: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        diverged = self._advance(action)
        if diverged is not None:
            assert self._last_obs is not None
            info = self._info(clipped=False)
            info["diverged"] = diverged
            return self._last_obs.copy(), -1.0, True, False, info
        obs, distance, info = self._outcome()
        return obs, -distance, False, False, info

    def _advance(self, action: NDArray[np.float32]) -> str | None:
        """One control interval: the action's motor angles (through the servo's speed limit,
        if any) held for ``control_dt``.  The divergence message if the run diverged (the
        imposed angles then read back from the robot), else None."""
        if self.robot is None:
            raise RuntimeError(f"{type(self).__name__}.step() called before reset()")
        angles = self.action_to_angles(action)
        reach = self._servo_reach
        if reach is not None:  # a servo's speed limit over the interval
            now = self._motor_angles
            angles = now + np.minimum(np.maximum(angles - now, -reach), reach)
        self.robot.set_motor_angles(angles)
        # an interval that raises (diverged, a step refused, interrupted) leaves the next
        # reset to build the robot anew rather than restore into this engine
        at_rest, self._at_rest = self._at_rest, None
        try:
            self.robot.step(self.control_dt)
        except (SimulationDiverged, FloatingPointError) as exc:
            self._motor_angles = imposed_motor_angles(self.robot)
            return str(exc)
        self._at_rest = at_rest
        return None

    def render(self) -> NDArray[np.uint8] | None:
        if self.render_mode != "rgb_array" or self.robot is None:
            return None
        return self._render_image({"platform": self.robot.platform}, self.params)

    # -- snapshots (MPC-style rollouts from one state) -----------------------------------------
    def get_state(self) -> dict[str, Any]:
        """A copy of the episode's state: the robot's snapshot
        (:meth:`~hsa_elastica.engines.control.ControlMixin.get_state`), the target and the last
        observation.  Call through ``env.unwrapped`` (the ``TimeLimit`` wrapper's step count is
        the wrapper's own)."""
        if self.robot is None or self._last_obs is None:
            raise RuntimeError(f"{type(self).__name__}.get_state() called before reset()")
        return {"robot": self.robot.get_state(), "target": self.target.copy(),
                "last_obs": self._last_obs.copy()}

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`get_state` of this env's current episode: the following steps are
        bitwise those that followed the snapshot."""
        if self.robot is None:
            raise RuntimeError(f"{type(self).__name__}.set_state() called before reset()")
        if not isinstance(state, dict) or set(state) != {"robot", "target", "last_obs"}:
            raise ParameterError(f"state is invalid: must be a {type(self).__name__}.get_state()")
        self.robot.set_state(state["robot"])
        self.target = np.array(state["target"], dtype=np.float64)
        self._last_obs = np.array(state["last_obs"], dtype=np.float32)
        self._motor_angles = imposed_motor_angles(self.robot)

    def _render_image(self, platforms: dict[str, Any], view: Any) -> NDArray[np.uint8]:
        """Off-screen image of the present state: every rod of the robot (``rod0 ...``), the
        rigid bodies ``platforms`` (renderer keys ``platform``, ``platform0`` ...), drawn with
        the rod layout of ``view`` (a ``RobotParams``, or a stack's
        :class:`~hsa_elastica.io.render_data.RodsView`), and the target as a red sphere (radius 6 % of the platform
        diameter)."""
        from hsa_elastica.io.recording import RigidBodyRecorder, RodRecorder, combine
        from hsa_elastica.io.render import RobotScene
        from hsa_elastica.io.render_scene import prepare_offscreen

        t = float(self.robot.time)
        frames = {}
        for i, rod in enumerate(self.robot.rods):
            rec = RodRecorder(every=1)
            rec.record(rod, t)
            frames[f"rod{i}"] = rec.to_dataframe()
        for key, body in platforms.items():
            rec_p = RigidBodyRecorder(every=1)
            rec_p.record(body, t)
            frames[key] = rec_p.to_dataframe()
        pv = prepare_offscreen()
        with RobotScene(combine(frames), view, window_size=self.render_size, show_frames=False) as scene:
            marker = pv.Sphere(radius=0.06 * view.platform.diameter, center=tuple(self.target))
            scene.plotter.add_mesh(marker, color=TARGET_COLOR)
            scene.update(0)
            return scene.image()  # type: ignore[no-any-return]

    # -- helpers -------------------------------------------------------------------------------
    def _build(self) -> Any:
        """A fresh robot at rest (motors at 0), per-rod handle."""
        return build_robot(self.params, [0.0] * self.n_rods, record=False)

    def _outcome(self) -> tuple[NDArray[np.float32], float, dict[str, Any]]:
        """After a reset or a step: the observation, the distance [m] of the platform centre to
        the target and the info; keeps the observation and the motors' imposed angles."""
        obs, clipped = self._observation()
        self._last_obs = obs
        self._motor_angles = angles = imposed_motor_angles(self.robot)
        p = self.robot.platform.position_collection[:, 0]
        distance = float(np.linalg.norm(p - self.target))
        info = EnvInfo({
            "sim_time_s": float(self.robot.time),
            "distance_m": distance,
            "target_position_m": self.target.copy(),
            "motor_angles_rad": angles,
            "observation_clipped": clipped,
        })
        return obs, distance, info

    def _observation(self) -> tuple[NDArray[np.float32], bool]:
        """The observation inside ``observation_space`` and whether anything was clipped: the
        entries of ``robot.state()`` (:func:`~hsa_elastica.engines.control.robot_state`) read
        from the platform's arrays without the rest of the state."""
        plat = self.robot.platform
        director = np.ascontiguousarray(plat.director_collection[:, :, 0].T)
        parts = [
            plat.position_collection[:, 0],
            rotation_matrix_to_quaternion(director),
            plat.velocity_collection[:, 0],
            plat.omega_collection[:, 0],
            self.target,
        ]
        if self.with_torques:
            robot = self.robot
            parts.append(motor_torques(
                robot.rods, [robot.twist_couple(i) for i in range(len(robot.rods))]
                if hasattr(robot, "twist_couple") else None,
            ))
        obs = np.concatenate(parts).astype(np.float32)
        low, high = self._obs_low, self._obs_high
        clipped = bool((obs < low).any() or (obs > high).any())
        if clipped:
            obs = np.clip(obs, low, high)
        return obs, clipped

    def _info(self, state: dict[str, Any] | None = None, *, clipped: bool) -> dict[str, Any]:
        s = self.robot.state() if state is None else state
        return EnvInfo({
            "sim_time_s": float(s["sim_time_s"]),
            "distance_m": float(np.linalg.norm(s["platform_position_m"] - self.target)),
            "target_position_m": self.target.copy(),
            "motor_angles_rad": s["motor_angles_rad"],
            "observation_clipped": clipped,
        })

