"""``HSARobot-v0``: the four-rod HSA robot of the paper as a Gymnasium environment.

Task: bring the platform centre to a target position (sampled at :meth:`HSARobotEnv.reset`).

* **action** ``(n_rods,)`` float32 [rad]: motor angle targets, each within its rod's
  elongating range ``[0, phi_max]`` (right-handed rods) or ``[-phi_max, 0]`` (left-handed),
  ``phi_max = pi`` (Section II-E).  Out-of-range actions are clipped.  During one control
  interval of ``control_dt`` [s] (default 20 ms) each motor turns linearly from its present
  angle to the target (:meth:`hsa_elastica.engines.control.ControlMixin.step`).
* **observation** float32: platform position (3) [m], quaternion ``(x, y, z, w)`` (4),
  velocity (3) [m/s], angular velocity in the platform frame (3) [rad/s], target position (3)
  [m], and with ``motor_torques=True`` the motor torques (n_rods) [N m].
* **reward**: ``-|p_platform - p_target|`` [m] after the interval.
* **episode**: ``max_steps`` intervals (default 150 = 3 s), then ``truncated``; ``terminated``
  only when the simulation diverges (``info["diverged"]``, reward -1).
* **target**: uniform in a cylinder above the rest pose that the paper robot reaches (radius
  ``target_radius`` [m], heights ``target_height`` [m] above the rest platform centre), or
  ``reset(options={"target": (x, y, z)})``.
* ``render_mode="rgb_array"``: an off-screen pyvista image of the robot
  (:class:`hsa_elastica.io.render.RobotScene`; needs a working VTK/EGL, optional).
* ``discretization``: the rods' elements and the internal step.  ``"coarse"``: 10 elements
  per rod, dt = 6e-5 s -- the default for the paper robot (``params=None``): about 3x the
  throughput of the paper's discretization (benchmarks/bench_control.py), steady poses within
  0.4 mm of the 25-element model (bend_north at full magnitude: 43.82 vs 44.17 mm sideways;
  elongation 132.67 vs 132.69 mm high).  The step is 87 % of the stable limit of 10-element
  rods (``max_stable_dt``: 6.9e-5 s; the paper's 3e-5 s is 86 % of its 3.5e-5 s); at 6e-5 s
  the seven primitives and 25 random motor-angle sets settle over a 10 s hold
  (``benchmarks/robot_hold.py --elements 10 --dt 6e-5``), 7e-5 s diverges.  ``"full"``: the discretization of
  ``params`` as given (the paper robot: 25 elements, dt = 3e-5 s, about 46 env steps/s) --
  the default when ``params`` is given, so a model passed in is never coarsened silently.
  ``n_elements`` / ``dt`` override either.

The fused stepper (:class:`hsa_elastica.engines.fused.FastRobot`) is used unless
``fast=False`` (per-rod operators; same trajectory, ~6x slower).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from hsa_elastica.engines.timeloop import SimulationDiverged
from hsa_elastica.params import ParameterError, RobotParams, paper_robot_params
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.primitives import DEFAULT_PHI_MAX, rod_layout

__all__ = ["HSARobotEnv", "DISCRETIZATIONS"]

#: ``discretization`` -> (elements per rod, internal step [s]); None: as in the params
DISCRETIZATIONS: dict[str, tuple[int | None, float | None]] = {
    "coarse": (10, 6e-5),
    "full": (None, None),
}


def _positive(name: str, value: float, unit: str) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0.0):
        raise ParameterError(f"HSARobotEnv.{name} = {value!r} is invalid: must be a finite number > 0 ({unit})")
    return v


class HSARobotEnv(gym.Env):  # type: ignore[misc]
    """Platform-reaching task of the paper's four-rod HSA robot (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(
        self,
        params: RobotParams | None = None,
        *,
        control_dt: float = 0.02,
        max_steps: int = 150,
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
    ) -> None:
        super().__init__()
        p = paper_robot_params() if params is None else params
        if not isinstance(p, RobotParams):
            raise ParameterError(f"HSARobotEnv.params = {params!r} is invalid: must be a RobotParams")
        if discretization is None:
            discretization = "coarse" if params is None else "full"
        if discretization not in DISCRETIZATIONS:
            raise ParameterError(
                f"HSARobotEnv.discretization = {discretization!r} is invalid: must be one of "
                f"{', '.join(repr(k) for k in DISCRETIZATIONS)}"
            )
        self.discretization = discretization
        default_elements, default_dt = DISCRETIZATIONS[discretization]
        n_elements = default_elements if n_elements is None else n_elements
        dt = default_dt if dt is None else dt
        if n_elements is not None:  # RodParams validates it
            p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, n_elements=n_elements))
        if dt is not None:
            p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, dt=dt))
        self.params = p
        self.control_dt = _positive("control_dt", control_dt, "s")
        if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
            raise ParameterError(f"HSARobotEnv.max_steps = {max_steps!r} is invalid: must be an integer >= 1")
        self.max_steps = int(max_steps)
        self.phi_max = _positive("phi_max", phi_max, "rad")
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
        self.render_size = (int(render_size[0]), int(render_size[1]))
        self.fast = bool(fast)
        self.with_torques = bool(motor_torques)

        _, handedness = rod_layout(self.params)
        self.n_rods = int(self.params.n_rods)
        ends = handedness.astype(np.float64) * self.phi_max
        self.action_space: spaces.Box = spaces.Box(
            low=np.minimum(ends, 0.0).astype(np.float32),
            high=np.maximum(ends, 0.0).astype(np.float32),
            dtype=np.float32,
        )
        n_obs = 16 + (self.n_rods if self.with_torques else 0)
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(n_obs,), dtype=np.float32)
        # rest pose of the platform centre: rods of printed length + half the platform
        self.rest_position = np.array(
            [0.0, 0.0, self.params.rod.length + 0.5 * self.params.platform.thickness]
        )
        self.robot: Any = None
        self.target = self.rest_position.copy()
        self._steps = 0
        self._last_obs: NDArray[np.float32] | None = None

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        super().reset(seed=seed)
        target = None if options is None else options.get("target")
        if target is None:
            r = self.target_radius * math.sqrt(float(self.np_random.uniform()))
            a = float(self.np_random.uniform(0.0, 2.0 * math.pi))
            dz = float(self.np_random.uniform(*self.target_height))
            target = self.rest_position + np.array([r * math.cos(a), r * math.sin(a), dz])
        target = np.array(target, dtype=np.float64).reshape(-1)
        if target.shape != (3,) or not np.all(np.isfinite(target)):
            raise ParameterError(f"reset(): options['target'] = {target!r} is invalid: must be 3 finite numbers (m)")
        self.target = target
        robot: Any = self._build()
        if self.fast:
            from hsa_elastica.engines.fused import FastRobot

            # one numba call per control interval (the divergence check runs after it)
            robot = FastRobot(robot, chunk=max(500, int(math.ceil(self.control_dt / robot.dt)) + 1))
        self.robot = robot
        self._steps = 0
        obs = self._observation(robot.state())
        self._last_obs = obs
        return obs, self._info()

    def step(
        self, action: NDArray[np.float32]
    ) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        if self.robot is None:
            raise RuntimeError("HSARobotEnv.step() called before reset()")
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(-1), self.action_space.low, self.action_space.high)
        self.robot.set_motor_angles(a)
        self._steps += 1
        truncated = self._steps >= self.max_steps
        try:
            self.robot.step(self.control_dt)
        except (SimulationDiverged, FloatingPointError) as exc:
            assert self._last_obs is not None
            info = self._info()
            info["diverged"] = str(exc)
            return self._last_obs, -1.0, True, truncated, info
        state = self.robot.state()
        obs = self._observation(state)
        self._last_obs = obs
        reward = -float(np.linalg.norm(state["platform_position"] - self.target))
        return obs, reward, False, truncated, self._info(state)

    def render(self) -> NDArray[np.uint8] | None:
        if self.render_mode != "rgb_array" or self.robot is None:
            return None
        return self._render_image({"platform": self.robot.platform}, self.params)

    def _render_image(self, platforms: dict[str, Any], view: RobotParams) -> NDArray[np.uint8]:
        """Off-screen image of the present state: every rod of the robot (``rod0 ...``) and the
        rigid bodies ``platforms`` (renderer keys ``platform``, ``platform0`` ...), drawn with
        the rod layout of ``view``."""
        from hsa_elastica.io.recording import RigidBodyRecorder, RodRecorder, combine
        from hsa_elastica.io.render import RobotScene

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
        with RobotScene(combine(frames), view, window_size=self.render_size, show_frames=False) as scene:
            scene.update(0)
            return scene.image()  # type: ignore[no-any-return]

    # -- helpers -------------------------------------------------------------------------------
    def _build(self) -> Any:
        """A fresh robot at rest (motors at 0), per-rod handle."""
        return build_robot(self.params, [0.0] * self.n_rods, record=False)

    def _observation(self, state: dict[str, Any]) -> NDArray[np.float32]:
        parts = [
            state["platform_position"],
            state["platform_quaternion"],
            state["platform_velocity"],
            state["platform_omega"],
            self.target,
        ]
        if self.with_torques:
            parts.append(state["motor_torques"])
        return np.concatenate(parts).astype(np.float32)

    def _info(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        s = self.robot.state() if state is None else state
        return {
            "time": float(s["time"]),
            "distance": float(np.linalg.norm(s["platform_position"] - self.target)),
            "target": self.target.copy(),
            "motor_angles": s["motor_angles"],
        }
