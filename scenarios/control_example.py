#!/usr/bin/env python
"""Closed-loop control of the paper's HSA robot through the ``HSARobot-v1`` environment.

A proportional controller in velocity form (no learning): every 20 ms control step it moves
the platform-level commands -- elongation ``e`` and bending ``(b_x, b_y)`` of
:func:`hsa_elastica.robots.primitives.platform_to_commands` -- by ``gain`` times the platform's
position error, scaled by the quasi-static sensitivities of the paper robot (full elongation
raises the platform 31 mm, a full bend moves it 44 mm sideways; docs/primitives.md), and sends
the resulting motor angles as the action, normalised to ``[-1, 1]`` by the env's
``angles_to_action`` (``a_i = 2 phi_i / (h_i phi_max) - 1``).  Prints the distance to the target
every 0.2 s and the final error.

Example::

    python scenarios/control_example.py --seed 0
    python scenarios/control_example.py --target 0.005 -0.004 0.115 --steps 200

Requires gymnasium (``pip install 'hsa-elastica[rl]'``).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

#: m of platform motion per unit command (quasi-static, paper robot, docs/primitives.md)
ELONGATION_SENSITIVITY = 0.031
BEND_SENSITIVITY = 0.044


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="seed of the target sampled by reset() (default 0)")
    ap.add_argument("--target", type=float, nargs=3, default=None, metavar=("X", "Y", "Z"),
                    help="target platform position [m] instead of a sampled one (default: sampled)")
    ap.add_argument("--steps", type=int, default=50, help="number of control steps of 20 ms (default 50)")
    ap.add_argument("--gain", type=float, default=0.2, help="fraction of the position error corrected per control step [-] (default 0.2: the servos turn at most 0.115 rad per step, so a larger gain overshoots)")
    ap.add_argument("--reference", action="store_true", help="step with the per-rod operators instead of the fused numba loop (the default)")
    args = ap.parse_args(argv)

    import gymnasium as gym

    import hsa_elastica  # noqa: F401  (registers HSARobot-v1)
    from hsa_elastica.robots.primitives import commands_to_angles, platform_to_commands

    # --reference: the per-rod operators, which step explicitly
    kw = {"fast": False, "integrator": "explicit"} if args.reference else {}
    env = gym.make("HSARobot-v1", max_episode_steps=args.steps, **kw)
    options = None if args.target is None else {"target": args.target}
    obs, info = env.reset(seed=args.seed, options=options)
    params = env.unwrapped.params
    target = info["target_position_m"]
    print(f"target platform position: {np.round(target * 1e3, 2)} mm "
          f"(start {np.round(obs[:3] * 1e3, 2)} mm, distance {info['distance_m'] * 1e3:.2f} mm)")
    e = bx = by = 0.0
    wall = time.perf_counter()
    for k in range(1, args.steps + 1):
        err = target - obs[:3].astype(np.float64)
        e = float(np.clip(e + args.gain * err[2] / ELONGATION_SENSITIVITY, 0.0, 1.0))
        bx = float(np.clip(bx + args.gain * err[0] / BEND_SENSITIVITY, -1.0, 1.0))
        by = float(np.clip(by + args.gain * err[1] / BEND_SENSITIVITY, -1.0, 1.0))
        angles = commands_to_angles(platform_to_commands(e, bx, by, 0.0, params), params)
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.angles_to_action(angles))
        if k % 10 == 0 or terminated or truncated:
            print(f"t = {info['sim_time_s']:5.2f} s  distance {info['distance_m'] * 1e3:7.3f} mm  "
                  f"commands e={e:.3f} b=({bx:+.3f}, {by:+.3f})")
        if terminated or truncated:
            break
    wall = time.perf_counter() - wall
    print(f"final error: {info['distance_m'] * 1e3:.3f} mm after {info['sim_time_s']:.2f} s simulated "
          f"({k / wall:.0f} env steps/s)")
    env.close()
    return 0 if not terminated else 1


if __name__ == "__main__":
    sys.exit(main())
