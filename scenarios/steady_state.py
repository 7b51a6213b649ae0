#!/usr/bin/env python
"""Steady state of an HSA robot for given motor angles; prints the result as JSON.

Example (elongation at full magnitude: +pi on the right-handed, -pi on the left-handed rods)::

    python scenarios/steady_state.py --angles 3.1416 -3.1416 3.1416 -3.1416

Angles are in radians about each rod's own +z axis (rods at 45, 135, 225, 315 deg, handedness
R, L, R, L).  Give ``--degrees`` to enter them in degrees.  Output keys: actuation_angles_rad,
platform_position_m, platform_quaternion_xyzw, rod_tip_positions_m, converged, sim_time_s,
wall_time_s (SI units, robot base frame).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from hsa_elastica.params import RobotParams, load_params
from hsa_elastica.robots.steady_state import solve_steady_state


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--angles", type=float, nargs="+", required=True, help="motor angles, one per rod [rad]")
    ap.add_argument("--degrees", action="store_true", help="--angles are in degrees")
    ap.add_argument("--params", help="robot parameter file (.yaml/.toml); default: paper robot")
    ap.add_argument("--tol", type=float, default=1e-4, help="settling speed tolerance [m/s]")
    ap.add_argument("--window", type=float, default=0.05, help="settling window [s]")
    ap.add_argument("--max-time", type=float, default=None, help="give up after this simulated time [s]")
    args = ap.parse_args(argv)

    params = RobotParams() if args.params is None else load_params(args.params, RobotParams)
    if len(args.angles) != params.n_rods:
        ap.error(f"--angles needs {params.n_rods} values, got {len(args.angles)}")
    angles = [math.radians(a) for a in args.angles] if args.degrees else list(args.angles)
    res = solve_steady_state(
        params, angles, tol_velocity=args.tol, window=args.window, max_time=args.max_time,
        record=False, progress=sys.stderr.isatty(),
    )
    print(json.dumps(res.to_json_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
