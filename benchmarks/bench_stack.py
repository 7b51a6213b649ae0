"""Speed of a two-segment HSA stack: per-rod operators vs the fused stepper.

The assembly: two paper robots stacked with :func:`hsa_elastica.robots.stack.build_stack`
(8 rods, 2 platforms; the upper stage's motors are rigid :class:`MotorMountBC` mounts on the lower
platform), motors turning (a short ramp, so every operator is active), no recording.  Both
paths are timed in ONE run on one core, each the best of ``--repeat`` repetitions of
``--steps`` steps after a warm-up (numba cache warm), and printed side by side with their
ratio (target: fused >= 5x fewer us/step) and the real-time factor at dt.

Usage::

    python benchmarks/bench_stack.py             # ~1 min with a warm numba cache
    python benchmarks/bench_stack.py --steps 500 --repeat 2
    python benchmarks/bench_stack.py --cpu-time  # on a shared machine
"""

from __future__ import annotations

import argparse
import time
from typing import Any

ANGLES = [[0.6, -0.6, 0.6, -0.6], [0.0, 0.8, 0.0, -0.8]]


def _stack(fast: bool) -> Any:
    from hsa_elastica.robots.compiled import FastRobot
    from hsa_elastica.params.presets import paper_robot_params
    from hsa_elastica.robots.stack import build_stack

    p = paper_robot_params()
    stack = build_stack([p, p], ANGLES, ramp=0.05, motor_mass=0.07, record=False)
    return FastRobot(stack) if fast else stack


def us_per_step(fast: bool, steps: int, repeat: int, clock: Any = time.perf_counter) -> float:
    """Best time per step [us] over ``repeat`` runs of ``steps`` steps (after warm-up), by
    ``clock`` (wall time by default; ``time.process_time`` for ``--cpu-time``)."""
    robot = _stack(fast)
    dt = robot.dt
    robot.run(20 * dt)  # warm-up: compiles / loads the kernels, first application of operators
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        robot.run(steps * dt)
        best = min(best, (clock() - t0) / steps)
    return best * 1e6


def env_steps_per_second(discretization: str, steps: int, repeat: int) -> float:
    """``HSAStack-v0`` (explicit stepper) env steps per CPU second (20 ms control step, a new random action in
    ``[-1, 1]`` every step: motor angles uniform over their elongating ranges), best of ``repeat``
    runs of ``steps`` steps after a reset and a warm-up."""
    import numpy as np

    from hsa_elastica.envs.hsa_stack import HSAStackEnv

    # the fused explicit loop (HSAStack-v0's dynamics); the env itself never truncates
    env = HSAStackEnv(discretization=discretization, integrator="explicit", motor_speed=None)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    low, high = env.action_space.low, env.action_space.high
    env.step(rng.uniform(low, high).astype(np.float32))  # warm-up
    best = float("inf")
    for _ in range(repeat):
        env.reset(seed=0)
        t0 = time.process_time()
        for _ in range(steps):
            env.step(rng.uniform(low, high).astype(np.float32))
        best = min(best, time.process_time() - t0)
    return steps / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000, help="steps per timed repetition")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions (best is kept)")
    ap.add_argument("--env-steps", type=int, default=25,
                    help="HSAStack-v0 control steps per timed repetition (0: skip the env)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time the steps with the process's CPU time instead of wall time (a "
                    "shared machine: other processes then do not inflate the numbers)")
    args = ap.parse_args()
    clock = time.process_time if args.cpu_time else time.perf_counter
    dt = _stack(False).dt
    ref = us_per_step(False, args.steps, args.repeat, clock)
    fused = us_per_step(True, args.steps, args.repeat, clock)
    print(f"two-segment stack, 8 rods + 2 platforms, dt = {dt:g} s, {args.steps} steps x "
          f"{args.repeat}, {'CPU' if args.cpu_time else 'wall'} time")
    print(f"{'path':<24}{'us/step':>12}{'real-time factor':>20}")
    for name, us in (("per-rod operators", ref), ("fused stepper", fused)):
        print(f"{name:<24}{us:>12.1f}{dt / (us * 1e-6):>20.4f}")
    print(f"fused vs per-rod: {ref / fused:.1f}x fewer us/step (target >= 5x)")
    if args.env_steps > 0:
        print(f"HSAStack-v0, {args.env_steps} control steps of 20 ms x {args.repeat}, CPU time:")
        rates = {d: env_steps_per_second(d, args.env_steps, args.repeat) for d in ("full", "coarse")}
        for d, rate in rates.items():
            print(f"  discretization={d!r:<10}{rate:>8.1f} env steps/s  real-time x {rate * 0.02:.2f}")
        print(f"  coarse vs full: {rates['coarse'] / rates['full']:.1f}x (target: >= 40 env steps/s)")


if __name__ == "__main__":
    main()
