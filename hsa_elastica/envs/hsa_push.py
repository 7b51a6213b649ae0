"""``HSAPush-v0``: the paper robot pushes a ball along a rough floor to a target.

The scene of ``scenarios/push_object.py`` (:func:`push_scene`): the paper robot (10 elements
per rod, gravity), a rough floor (:data:`FLOOR` m, a ``PlaneObstacle``) and a free ball of
radius :data:`BALL_RADIUS` m and :data:`BALL_MASS` kg resting on it :data:`BALL_GAP` m east
of the platform's rim (docs/contact.md, "Moving objects").  Bending east, the platform tilts
and its rim knocks the ball (the rods do not reach it); it then rolls on the floor (its
``ContactParams.rolling_resistance`` is 0: a knocked ball rolls on at a nearly constant
speed).  ``render()`` draws the floor and the ball with the robot and the target.

Conventions as ``HSARobot-v1`` (:mod:`hsa_elastica.envs.hsa_robot`): the same **action**
(``(4,)`` normalised motor commands in ``[-1, 1]`` mapped onto the rods' elongating ranges),
``control_dt`` (20 ms), ``motor_speed`` (default the servos' ``MX28_SPEED``), ``fast``,
``render_mode``, ``get_state`` / ``set_state``, ``ParameterError`` for bad input:

* **observation** float32, bounded: the robot env's (platform position, quaternion, velocity,
  angular velocity; ``target_position_m`` is the ball's target; with ``motor_torques`` the
  motor torques), then the ball's centre ``ball_position_m_{x,y,z}`` [m] (within the region
  grown by :data:`POSITION_MARGIN`) and velocity ``ball_velocity_m_s_{x,y,z}`` [m/s] (within
  +-``MAX_SPEED``); ``env.observation_names`` names them.
* **target**: on the floor (the ball centre's height), ``target_distance`` [m] east of the
  ball's start (uniform in the interval) and ``target_offset`` [m] north or south of it
  (uniform in ``[-offset, offset]``), or ``reset(options={"target": (x, y, z)})`` inside the
  region.  The default distances (5-15 mm east, on the line of the push) are reached by the
  ``bend_east`` command held (``tests/test_env_push.py``).
* **reward**: the decrease of the ball-target distance over the step [m] (dense; the sum over
  an episode is the total approach), plus ``success_bonus`` when the ball's centre comes within
  ``success_tolerance`` [m] of the target, which ends the episode (``terminated``,
  ``info["is_success"]``).  The episode also ends (``terminated``, no bonus) when the ball's
  centre leaves the region: ``region`` = ((x_min, x_max), (y_min, y_max)) [m] in the robot
  frame.  A diverged simulation ends it with reward -1 (``info["diverged"]``).
* **episode**: ``gym.make`` truncates with the spec's ``max_episode_steps = 250`` (5 s).
* **info** (:class:`~hsa_elastica.envs.hsa_robot.EnvInfo`): ``sim_time_s``, ``distance_m``
  (ball centre to target), ``target_position_m``, ``motor_angles_rad``,
  ``observation_clipped``, ``ball_position_m``, ``is_success``.
* ``integrator``: ``"implicit"`` (default, internal step
  :data:`~hsa_elastica.envs.hsa_robot.IMPLICIT_DT`: 13x the explicit stepper's env steps/s
  here, the held push within 0.3 mm of it) or ``"explicit"`` (the fused Position-Verlet
  stepper at the scene's :data:`PUSH_DT`); docs/control.md, "Gymnasium environment
  HSAPush-v0".
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from hsa_elastica.engines.control import imposed_motor_angles
from hsa_elastica.envs.hsa_robot import (
    MAX_SPEED,
    MX28_SPEED,
    EnvInfo,
    HSARobotEnv,
    observation_bounds,
    observation_names,
)
from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    ParameterError,
    PlaneObstacle,
    RobotParams,
    paper_robot_params,
)
from hsa_elastica.robots.primitives import DEFAULT_PHI_MAX

__all__ = ["HSAPushEnv", "push_scene", "FLOOR", "BALL_RADIUS", "BALL_MASS", "BALL_GAP", "PUSH_DT",
           "POSITION_MARGIN", "BALL_NAMES"]

#: height of the floor [m] (below the rods' lowest contact nodes), as scenarios/push_object.py
FLOOR = -0.01
#: the ball's radius [m] and mass [kg]
BALL_RADIUS, BALL_MASS = 0.05, 0.02
#: the ball's start east of the platform's rim [m] (horizontal gap, at rest): out of the rods'
#: reach, within the sweep of the platform's rim when the robot bends east
BALL_GAP = 0.0125
#: the explicit stepper's step [s] in the scene (scenarios/push_object.py): below the stable
#: step of the sticking friction between the platform's rim and the ball, 2.6e-5 s when it
#: presses on it (``contact.step_limits``; at 5e-5 s the explicit push ended 4.5 mm off)
PUSH_DT = 2e-5
#: margin [m] around the region in the bound of the ball position in the observation (the
#: ball leaves the region by less than ``MAX_SPEED * control_dt`` before the episode ends)
POSITION_MARGIN = 0.5
#: column names of the ball's entries in the observation
BALL_NAMES = tuple(f"ball_{q}_{c}" for q in ("position_m", "velocity_m_s") for c in "xyz")


def push_scene() -> RobotParams:
    """The paper robot (10 elements per rod, dt :data:`PUSH_DT`, gravity) with the rough floor
    and the ball :data:`BALL_GAP` east of the platform's rim: ``scenarios/push_object.py``'s
    scene."""
    p = paper_robot_params()
    p = dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=10),
        simulation=dataclasses.replace(p.simulation, dt=PUSH_DT, gravity=(0.0, 0.0, -9.81)))
    floor = PlaneObstacle(point=(0.0, 0.0, FLOOR), normal=(0.0, 0.0, 1.0), contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5, friction_coefficient=0.5,
        slip_velocity=1e-2))
    ball = ObjectParams(radius=BALL_RADIUS, mass=BALL_MASS,
                        position=(p.platform.radius + BALL_RADIUS + BALL_GAP, 0.0,
                                  FLOOR + BALL_RADIUS),
                        contact=ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                              damping_ratio=0.5, friction_coefficient=0.3,
                                              slip_velocity=1e-2))
    return dataclasses.replace(p, environment=EnvironmentParams(obstacles=(floor,), objects=(ball,)))


def _interval(name: str, value: Any, low: float) -> tuple[float, float]:
    """``value`` as (lo, hi) with ``low <= lo <= hi`` finite; ParameterError naming ``name``."""
    try:
        lo, hi = (float(value[0]), float(value[1]))
        ok = len(value) == 2 and math.isfinite(lo) and math.isfinite(hi) and low <= lo <= hi
    except (TypeError, ValueError, IndexError):
        ok = False
    if not ok:
        raise ParameterError(f"HSAPushEnv.{name} = {value!r} is invalid: must be (low, high) "
                             f"with {low:g} <= low <= high, finite (m)")
    return lo, hi


def _nonnegative(name: str, value: Any, unit: str) -> float:
    v = math.nan if isinstance(value, bool) else float(value)
    if not (math.isfinite(v) and v >= 0.0):
        raise ParameterError(f"HSAPushEnv.{name} = {value!r} is invalid: must be a finite number >= 0 ({unit})")
    return v


class HSAPushEnv(HSARobotEnv):
    """Push the ball to a target with the paper robot (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(
        self,
        params: RobotParams | None = None,
        *,
        control_dt: float = 0.02,
        phi_max: float = DEFAULT_PHI_MAX,
        motor_torques: bool = False,
        target_distance: tuple[float, float] = (0.005, 0.015),
        target_offset: float = 0.0,
        success_tolerance: float = 0.002,
        success_bonus: float = 1.0,
        region: tuple[tuple[float, float], tuple[float, float]] = ((0.06, 0.2), (-0.05, 0.05)),
        fast: bool = True,
        dt: float | None = None,
        render_mode: str | None = None,
        render_size: tuple[int, int] = (480, 360),
        integrator: str | None = "implicit",
        motor_speed: float | None = MX28_SPEED,
    ) -> None:
        p = push_scene() if params is None else params
        if not isinstance(p, RobotParams) or not p.environment.objects:
            raise ParameterError(f"HSAPushEnv.params = {params!r} is invalid: must be a RobotParams "
                                 f"with at least one object in environment.objects (the ball)")
        super().__init__(
            p, control_dt=control_dt, phi_max=phi_max, motor_torques=motor_torques, fast=fast,
            discretization="full", dt=dt, render_mode=render_mode, render_size=render_size,
            integrator=integrator, motor_speed=motor_speed,
        )
        try:
            rx, ry = (_interval("region", region[0], -math.inf), _interval("region", region[1], -math.inf))
        except (TypeError, IndexError):
            rx = ry = _interval("region", None, -math.inf)
        self.region = (rx, ry)
        self.target_distance = _interval("target_distance", target_distance, 0.0)
        self.target_offset = _nonnegative("target_offset", target_offset, "m")
        self.success_tolerance = _nonnegative("success_tolerance", success_tolerance, "m")
        self.success_bonus = _nonnegative("success_bonus", success_bonus, "reward units")
        ball = p.environment.objects[0]
        self.ball_start = np.array(ball.position, dtype=np.float64)
        if not self._in_region(self.ball_start):
            raise ParameterError(f"HSAPushEnv.region = {region!r} is invalid: must contain the "
                                 f"ball's start {tuple(self.ball_start[:2])} (m)")
        far = self.ball_start + np.array([self.target_distance[1], self.target_offset, 0.0])
        near = self.ball_start + np.array([self.target_distance[0], -self.target_offset, 0.0])
        if not (self._in_region(far) and self._in_region(near)):
            raise ParameterError(
                f"HSAPushEnv.target_distance = {target_distance!r} / target_offset = "
                f"{target_offset!r} is invalid: the targets must lie inside region {region!r} (m)")
        self._set_spaces([self.params])  # with the region's bound of the ball position
        self.target = far
        self.ball: Any = None
        self._distance = 0.0

    def _build(self) -> Any:
        """A fresh robot at rest with the scene's contacts; keeps its ball (the first object)."""
        from hsa_elastica.physics.object_contact import ObjectContact

        robot = super()._build()
        self.ball = next(r.instance.body for r in robot.contacts
                         if isinstance(r.instance, ObjectContact))
        return robot

    def _in_region(self, x: NDArray[np.float64]) -> bool:
        (x0, x1), (y0, y1) = self.region
        return bool(x0 <= x[0] <= x1 and y0 <= x[1] <= y1)

    def _set_spaces(self, segments: Any) -> None:
        super()._set_spaces(segments)
        low, high = observation_bounds(segments, self.phi_max, self.with_torques)
        region = getattr(self, "region", ((-1.0, 1.0), (-1.0, 1.0)))
        extent = max(abs(v) for pair in region for v in pair) + POSITION_MARGIN
        ball_high = np.concatenate([np.full(3, extent), np.full(3, MAX_SPEED)]).astype(np.float32)
        self.observation_space = spaces.Box(np.concatenate([low, -ball_high]),
                                            np.concatenate([high, ball_high]), dtype=np.float32)
        # _obs_low / _obs_high (the parent's _observation) stay the robot's part
        self._ball_high = ball_high
        self.observation_names = observation_names(self.n_rods, self.with_torques) + BALL_NAMES

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        gym.Env.reset(self, seed=seed)
        given = None if options is None else options.get("target")
        if given is None:
            dx = float(self.np_random.uniform(*self.target_distance))
            dy = float(self.np_random.uniform(-self.target_offset, self.target_offset))
            target = self.ball_start + np.array([dx, dy, 0.0])
        else:
            try:
                target = np.array(given, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                target = np.array([np.nan])
            if target.shape != (3,) or not np.isfinite(target).all() or not self._in_region(target):
                text = repr(given)
                raise ParameterError(
                    f"reset(): options['target'] = {text if len(text) <= 60 else text[:50] + '...'} "
                    f"is invalid: must be 3 finite numbers (m), x and y inside region {self.region}")
        self.target = target
        self.robot = self._robot_at_rest()
        obs, self._distance, info = self._outcome()
        return obs, info

    def step(
        self, action: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        diverged = self._advance(action)
        if diverged is not None:
            assert self._last_obs is not None
            info = self._ball_info(self._distance, clipped=False)
            info["diverged"] = diverged
            return self._last_obs.copy(), -1.0, True, False, info
        before = self._distance
        obs, self._distance, info = self._outcome()
        reward = before - self._distance
        success = bool(info["is_success"])
        if success:
            reward += self.success_bonus
        left = not self._in_region(self.ball.position_collection[:, 0])
        return obs, reward, success or left, False, info

    def render(self) -> NDArray[np.uint8] | None:
        """As :meth:`HSARobotEnv.render`, with the world of the scene: the floor and the ball
        at its present pose (recorded as ``object0``, drawn by
        :mod:`~hsa_elastica.io.render_world`), and the target."""
        if self.render_mode != "rgb_array" or self.robot is None:
            return None
        return self._render_image({"platform": self.robot.platform, "object0": self.ball},
                                  self.params)

    # -- snapshots -------------------------------------------------------------------------------
    def get_state(self) -> dict[str, Any]:
        """As :meth:`HSARobotEnv.get_state`, with the ball-target distance of the last step."""
        state = super().get_state()
        state["distance"] = self._distance
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict) or "distance" not in state:
            raise ParameterError("state is invalid: must be a HSAPushEnv.get_state()")
        rest = {k: v for k, v in state.items() if k != "distance"}
        super().set_state(rest)
        self._distance = float(state["distance"])

    # -- helpers -------------------------------------------------------------------------------
    def _ball_info(self, distance: float, *, clipped: bool) -> dict[str, Any]:
        return EnvInfo({
            "sim_time_s": float(self.robot.time),
            "distance_m": distance,
            "target_position_m": self.target.copy(),
            "motor_angles_rad": self._motor_angles.copy(),
            "observation_clipped": clipped,
            "ball_position_m": self.ball.position_collection[:, 0].copy(),
            "is_success": distance <= self.success_tolerance,
        })

    def _outcome(self) -> tuple[NDArray[np.float32], float, dict[str, Any]]:
        """The observation, the ball-target distance [m] and the info after a reset or a step."""
        robot_obs, clipped = self._observation()
        ball = self.ball
        part = np.concatenate([ball.position_collection[:, 0], ball.velocity_collection[:, 0]])
        high = self._ball_high
        if (np.abs(part) > high).any():
            clipped = True
            part = np.clip(part, -high, high)
        obs = np.concatenate([robot_obs, part.astype(np.float32)])
        self._last_obs = obs
        self._motor_angles = imposed_motor_angles(self.robot)
        distance = float(np.linalg.norm(ball.position_collection[:, 0] - self.target))
        return obs, distance, self._ball_info(distance, clipped=clipped)
