"""Gymnasium envs: env steps/s with the explicit and the implicit integrator, side by side.

One process, CPU time (``time.process_time``) of ``env.step`` only (reset and the first,
compiling step excluded), 20 ms control step.  Rows: ``HSARobot-v0`` coarse (10 elements per
rod) and full (25), ``HSAStack-v0`` coarse; policies

* ``random``: uniform random actions (seeded; each motor may turn its whole range in one 20 ms
  interval, up to 157 rad/s),
* ``random-servo``: the same actions with the env's ``motor_speed = MX28_SPEED`` (5.76 rad/s,
  the paper robot's servos; at most 0.115 rad per interval),
* ``smooth``: ``a_i = 0.8 sin(2 pi k / 50 + i pi / 2)`` (1 Hz, motors up to 16 rad/s).

Each row prints env steps/s of both integrators measured in the same run and their ratio, the
implicit integrator's force evaluations per internal step (Newton iterations; Jacobian columns
counted separately as Jacobians per env step), and the platform distance between the two
runs after the last step [mm] (same actions; a measure of agreement, not of accuracy: the
random policy drives the robot chaotically).  An implicit step that Newton cannot take is
printed as refused (never counted).

Usage::

    python benchmarks/bench_envs.py              # 300 env steps per row
    python benchmarks/bench_envs.py --steps 100  # shorter
    python benchmarks/bench_envs.py --implicit-dt 1e-3
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np


def _action(policy: str, k: int, n: int, rng: np.random.Generator) -> np.ndarray:
    if policy.startswith("random"):
        return rng.uniform(-1.0, 1.0, n).astype(np.float32)
    return (0.8 * np.sin(2 * math.pi * k / 50 + np.arange(n) * math.pi / 2)).astype(np.float32)


def run_env(env_id: str, disc: str, policy: str, integrator: str, n_steps: int,
            dt: float | None) -> dict[str, Any]:
    """Env steps/s [1/s] of ``n_steps`` steps (after one warm-up step), the final platform
    position [m], and for the implicit integrator its Newton statistics."""
    import gymnasium as gym

    import hsa_elastica  # noqa: F401  (registers the envs)
    from hsa_elastica.engines.implicit import ImplicitStepFailed

    from hsa_elastica.envs.hsa_robot import MX28_SPEED

    kw: dict[str, Any] = {"discretization": disc, "integrator": integrator}
    if policy == "random-servo":
        kw["motor_speed"] = MX28_SPEED
    if dt is not None:
        kw["dt"] = dt
    env = gym.make(env_id, **kw)
    env.reset(seed=0)
    n = env.action_space.shape[0]
    rng = np.random.default_rng(0)
    out: dict[str, Any] = {"dt": env.unwrapped.params.simulation.dt}
    try:
        env.step(_action(policy, 0, n, rng))  # compile / warm up
        robot = env.unwrapped.robot
        eng = getattr(robot, "engine", None)
        if not hasattr(eng, "evaluations"):  # the fused stepper has no Newton statistics
            eng = None
        e0 = (eng.evaluations, eng.n_jacobians, eng.n_steps) if eng is not None else None
        t0 = time.process_time()
        for k in range(1, n_steps + 1):
            _, _, term, trunc, info = env.step(_action(policy, k, n, rng))
            if term:
                raise RuntimeError(f"{env_id} diverged: {info.get('diverged')}")
        out["rate"] = n_steps / (time.process_time() - t0)
        out["position"] = np.array(robot.state()["platform_position_m"])
        if eng is not None and e0 is not None:
            steps = eng.n_steps - e0[2]
            out["evals"] = (eng.evaluations - e0[0]) / steps
            out["jac"] = (eng.n_jacobians - e0[1]) / n_steps
    except ImplicitStepFailed as exc:
        out["refused"] = exc.time
    env.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300, help="env steps per row (default 300)")
    ap.add_argument("--implicit-dt", type=float, default=None,
                    help="internal step of the implicit rows [s] (default: the env's own, "
                         "IMPLICIT_DT / STACK_IMPLICIT_DT)")
    ap.add_argument("--rows", default="robot-coarse,robot-full,stack-coarse",
                    help="comma-separated subset of robot-coarse, robot-full, stack-coarse")
    args = ap.parse_args()
    rows = {"robot-coarse": ("HSARobot-v0", "coarse"), "robot-full": ("HSARobot-v0", "full"),
            "stack-coarse": ("HSAStack-v0", "coarse")}
    print(f"# bench_envs: 20 ms control step, {args.steps} env steps per row, CPU time of one process")
    print("| env | discretization | policy | explicit env steps/s (dt) | implicit env steps/s (dt) "
          "| implicit / explicit | evals / step | Jacobians / env step | end distance [mm] |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for key in args.rows.split(","):
        env_id, disc = rows[key]
        for policy in ("random", "random-servo", "smooth"):
            ex = run_env(env_id, disc, policy, "explicit", args.steps, None)
            im = run_env(env_id, disc, policy, "implicit", args.steps, args.implicit_dt)
            if "refused" in im:
                print(f"| {env_id} | {disc} | {policy} | {ex['rate']:.0f} ({ex['dt']:g}) | refused at "
                      f"t = {im['refused']:.3f} s ({im['dt']:g}) | | | | |", flush=True)
                continue
            d = np.linalg.norm(ex["position"] - im["position"]) * 1e3
            print(f"| {env_id} | {disc} | {policy} | {ex['rate']:.0f} ({ex['dt']:g}) | "
                  f"{im['rate']:.0f} ({im['dt']:g}) | {im['rate'] / ex['rate']:.2f} | "
                  f"{im['evals']:.2f} | {im['jac']:.3f} | {d:.3f} |", flush=True)


if __name__ == "__main__":
    main()
