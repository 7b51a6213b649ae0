#!/usr/bin/env python
"""Env steps per second of ``HSAPush-v0`` (hsa_elastica/envs/hsa_push.py) with seeded random
actions, for each integrator: CPU time of the process (``time.process_time``, for the shared
machine), after one warm-up episode of a few steps (numba compilation excluded).

Example::

    python benchmarks/bench_push_env.py --steps 100 --integrators explicit implicit
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def steps_per_second(integrator: str, steps: int, seed: int) -> float:
    """CPU-time env steps/s of ``steps`` random actions (seeded) from a seeded reset; the
    episode restarts if it ends."""
    from hsa_elastica.envs import HSAPushEnv

    env = HSAPushEnv(integrator=integrator)
    env.reset(seed=seed)
    for _ in range(3):  # warm-up: compilation and first-call costs
        env.step(np.zeros(4, np.float32))
    env.reset(seed=seed)
    env.action_space.seed(seed)
    t0 = time.process_time()
    for _ in range(steps):
        _, _, terminated, _, _ = env.step(env.action_space.sample().astype(np.float32))
        if terminated:
            env.reset()
    return steps / (time.process_time() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--steps", type=int, default=100,
                    help="env steps timed per integrator, 1..100000 (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s)")
    ap.add_argument("--integrators", nargs="+", default=["explicit", "implicit"],
                    choices=["explicit", "implicit"], help="(default: %(default)s)")
    args = ap.parse_args(argv)
    if not 1 <= args.steps <= 100_000:
        ap.error(f"--steps = {args.steps} is invalid: must be in [1, 100000]")
    for name in args.integrators:
        rate = steps_per_second(name, args.steps, args.seed)
        print(f"HSAPush-v0 {name:8s} {rate:8.1f} env steps/s (CPU time, {args.steps} random steps)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
