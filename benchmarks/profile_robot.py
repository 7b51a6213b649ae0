"""cProfile of the four-rod robot, per-rod operators (before) vs the fused path (after).

Usage::

    python benchmarks/profile_robot.py [--steps 2000] [--top 15]

Prints, for each path, the wall time per step and the functions with the largest
cumulative/own time.  Numba-compiled code shows as one opaque call (its internals are not
visible to cProfile): in the fused path the whole step is inside ``advance``.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import pstats
import time

from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.builders import build_robot


def profile(fast: bool, steps: int, top: int) -> None:
    p = paper_robot_params()
    p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, dt=2e-5))
    angles = [float(a) for a in primitive_angles("bend_north", 1.0, p)]
    robot = (build_fast_robot if fast else build_robot)(p, angles, record=True)
    robot.run(20 * p.simulation.dt)  # warm-up (numba dispatch, first operator calls)
    prof = cProfile.Profile()
    w = time.perf_counter()
    prof.enable()
    robot.run(steps * p.simulation.dt)
    prof.disable()
    wall = time.perf_counter() - w
    name = "fused path (FastRobot.run)" if fast else "per-rod operators (Robot.run)"
    print(f"=== {name}: {steps} steps, {wall / steps * 1e6:.1f} µs/step under cProfile ===")
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats(key).print_stats(top)
        text = out.getvalue()
        start = text.find("   ncalls")
        print(f"--- sorted by {key} ---")
        print(text[start:].rstrip())
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    profile(False, args.steps, args.top)
    profile(True, 10 * args.steps, args.top)


if __name__ == "__main__":
    main()
