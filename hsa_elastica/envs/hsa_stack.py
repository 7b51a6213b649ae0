"""``HSAStack-v1``: a two-segment HSA stack (two paper robots, the upper one's motors on the
lower platform, :func:`hsa_elastica.robots.stack.build_stack`) as a Gymnasium environment.

Same task and conventions as ``HSARobot-v1`` (:mod:`hsa_elastica.envs.hsa_robot`), for the
top platform; the same defaults (the implicit integrator, here at :data:`STACK_IMPLICIT_DT`,
and motors limited to :data:`~hsa_elastica.envs.hsa_robot.MX28_SPEED`), and ``HSAStack-v0``
registered with the earlier ones (the explicit stepper, no motor speed limit):

* **action** ``(n_motors,)`` float32 in ``[-1, 1]``: the normalised commands of all stages'
  motors, stage 0 first, each mapped onto its rod's elongating range as in ``HSARobot-v1``
  (``phi_i = h_i * phi_max * (a_i + 1) / 2`` [rad]); motors turn linearly over ``control_dt``
  (at most ``motor_speed`` [rad/s], default the servos' ``MX28_SPEED``; None: no limit).
* **observation** float32, bounded (:func:`~hsa_elastica.envs.hsa_robot.observation_bounds`
  with the reach of the whole stack): top platform position (3) [m], quaternion
  ``(x, y, z, w)`` (4), velocity (3) [m/s], angular velocity in its frame (3) [rad/s], target
  (3) [m], and with ``motor_torques=True`` the motor torques of all stages [N m].
* **reward**: ``-|p_top - p_target|`` [m]; **episode** (``TimeLimit`` of 150 steps from the
  spec), **divergence**: as ``HSARobot-v1``.
* **target**: uniform in a cylinder of radius ``target_radius`` [m] at heights
  ``target_height`` [m] above the rest pose of the top platform centre, or
  ``reset(options={"target": (x, y, z)})``.
* ``motor_mass`` [kg]: mass of one motor of the upper stage, a payload of the lower platform
  (default 0.07 kg); ``segments``: the stages' :class:`RobotParams` (default two paper robots).

``render_mode="rgb_array"``: an off-screen pyvista image of every stage (rods and platforms)
and the target (a red sphere).

``discretization`` as in ``HSARobot-v1``: ``"coarse"`` (10 elements per rod, dt = 6e-5 s) is
the default for the two paper robots (``segments=None``): with the explicit stepper 77 env
steps/s of CPU time against 23 with ``"full"`` (``benchmarks/bench_stack.py``) (the paper's 25 elements, dt = 3e-5 s), measured on one core of the shared
machine; ``"full"`` is the default when ``segments`` are given.  With
``integrator="implicit"`` the internal step is :data:`STACK_IMPLICIT_DT` (1e-3 s) unless ``dt`` is
given.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.envs.hsa_robot import MX28_SPEED, HSARobotEnv, check_steps, discretized
from hsa_elastica.params import ParameterError, RobotParams, paper_robot_params
from hsa_elastica.params import INTEGRATOR_NAMES
from hsa_elastica.params import integrator as integrator_record
from hsa_elastica.robots.primitives import DEFAULT_PHI_MAX
from hsa_elastica.robots.stack import build_stack

__all__ = ["HSAStackEnv", "STACK_IMPLICIT_DT"]

#: the stack's internal step [s] on the implicit integrator (when ``dt`` is not given), half
#: the single robot's ``IMPLICIT_DT``: at a 20 ms control step (coarse, ``benchmarks/
#: bench_envs.py --steps 100``, side by side with the explicit stepper) it is at least as fast
#: as 2e-3 s for smooth and servo-speed commands (1.42-1.53x the explicit stepper against
#: 1.29-1.38x), faster for unlimited random ones (0.20-0.23x against 0.09x: fewer Newton
#: iterations and Jacobians per step outweigh twice the steps), and closer to the explicit
#: run (platform 0.055 against 0.18 mm apart after 100 servo-speed steps)
STACK_IMPLICIT_DT = 1e-3


class HSAStackEnv(HSARobotEnv):
    """Top-platform reaching task of a two-segment HSA stack (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}

    def __init__(
        self,
        segments: Sequence[RobotParams] | None = None,
        *,
        control_dt: float = 0.02,
        phi_max: float = DEFAULT_PHI_MAX,
        motor_torques: bool = False,
        motor_mass: float = 0.07,
        target_radius: float = 0.015,
        target_height: tuple[float, float] = (0.010, 0.030),
        fast: bool = True,
        n_elements: int | None = None,
        dt: float | None = None,
        render_mode: str | None = None,
        render_size: tuple[int, int] = (480, 360),
        discretization: str | None = None,
        max_steps: Any = None,
        integrator: str | None = "implicit",
        motor_speed: float | None = MX28_SPEED,
    ) -> None:
        segs = [paper_robot_params()] * 2 if segments is None else list(segments)
        if not segs or not all(isinstance(p, RobotParams) for p in segs):
            raise ParameterError(
                f"HSAStackEnv.segments = {segments!r} is invalid: must be a sequence of RobotParams"
            )
        dt_given = dt is not None
        chosen = integrator or segs[0].simulation.integrator  # an unknown name: refused below
        if dt is None and chosen in INTEGRATOR_NAMES and integrator_record(chosen).default_dt is not None:
            dt = STACK_IMPLICIT_DT
        discretization, segs = discretized(
            segs, "HSAStackEnv", discretization=discretization, given=segments is not None,
            integrator=integrator, n_elements=n_elements, dt=dt,
        )
        check_steps("HSAStackEnv", segs, control_dt, dt_given)  # every stage's step, at construction
        super().__init__(
            segs[-1], control_dt=control_dt, max_steps=max_steps, phi_max=phi_max,
            motor_torques=motor_torques, target_radius=target_radius,
            target_height=target_height, fast=fast, render_mode=render_mode,
            render_size=render_size, discretization="full", dt=segs[-1].simulation.dt,
            motor_speed=motor_speed, integrator=None,  # segs carry the integrator already
        )
        self.discretization = discretization
        self.segments = segs
        m = float(motor_mass) if not isinstance(motor_mass, bool) else math.nan
        if not (math.isfinite(m) and m >= 0.0):
            raise ParameterError(f"HSAStackEnv.motor_mass = {motor_mass!r} is invalid: must be >= 0 (kg)")
        self.motor_mass = m
        self._set_spaces(segs)
        # rest pose of the top platform centre: each stage's rods (caps included) + platforms
        height = sum(
            p.rod.cap_length_base + p.rod.length + p.rod.cap_length_top + p.platform.thickness
            for p in segs
        )
        self.rest_position = np.array([0.0, 0.0, height - 0.5 * segs[-1].platform.thickness])
        self.target = self.rest_position.copy()

    def _build(self) -> Any:
        return build_stack(self.segments, None, motor_mass=self.motor_mass, record=False)

    def render(self) -> NDArray[np.uint8] | None:
        if self.render_mode != "rgb_array" or self.robot is None:
            return None
        platforms = {"platform": self.robot.platforms[-1]}
        for k, body in enumerate(self.robot.platforms[:-1]):
            platforms[f"platform{k}"] = body
        from hsa_elastica.io.render_data import RodsView

        return self._render_image(platforms, RodsView.of_stack(self.segments))
