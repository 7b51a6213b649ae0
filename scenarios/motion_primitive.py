#!/usr/bin/env python
"""Motion primitive of an HSA robot (paper Fig. 2): run to the steady state, save, render.

Example::

    python scenarios/motion_primitive.py bend_north --magnitude 1.0 \
        --out runs/bend_north --render renders/bend_north.mp4 --still renders/bend_north.png

The motor angles come from ``hsa_elastica.robots.primitives.primitive_angles`` (see docs/primitives.md
for the sign conventions); the run stops once all node and platform speeds have stayed below
``--tol`` for the settling window (``hsa_elastica.robots.steady_state``).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

# the checks and the save/render step of `hsa-elastica primitive`
from hsa_elastica.cli.common import UsageError, check_render_path, check_run_dir
from hsa_elastica.cli.common import finish_run as _finish_run
from hsa_elastica.params import RobotParams, load_params
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles
from hsa_elastica.robots.steady_state import solve_steady_state


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name", choices=list(PRIMITIVES), help="motion primitive (Fig. 2(a))")
    ap.add_argument("--magnitude", type=float, default=1.0, help="fraction of phi_max = pi rad, in [0, 1]")
    ap.add_argument("--params", help="robot parameter file (.yaml/.toml); default: paper robot")
    ap.add_argument("--tol", type=float, default=1e-4, help="settling speed tolerance [m/s]")
    ap.add_argument("--max-time", type=float, default=None, help="give up after this simulated time [s]")
    ap.add_argument("--out", help="save a run directory here")
    ap.add_argument("--render", help="write an mp4 video here")
    ap.add_argument("--still", help="write a PNG of the final state here")
    ap.add_argument("--fps", type=float, default=30.0, help="video frame rate [1/s]")
    args = ap.parse_args(argv)

    params = RobotParams() if args.params is None else load_params(args.params, RobotParams)
    angles = primitive_angles(args.name, args.magnitude, params)
    try:  # output paths are checked before simulating
        check_run_dir(args.out, overwrite=False)
        check_render_path(args.render, "video", "--render")
        check_render_path(args.still, "still", "--still")
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{args.name} at magnitude {args.magnitude}: motor angles [rad] = {np.round(angles, 4).tolist()}")
    res = solve_steady_state(
        params, angles, tol_velocity=args.tol, max_time=args.max_time,
        record=bool(args.out or args.render or args.still), progress=sys.stderr.isatty(),
    )
    p = res.platform_position_m
    print(f"converged: {res.converged} at t = {res.sim_time_s:.3f} s (wall {res.wall_time_s:.1f} s)")
    print(f"platform centre [mm]: ({p[0]*1e3:.2f}, {p[1]*1e3:.2f}, {p[2]*1e3:.2f}); rise "
          f"{(p[2] - params.rod.length - 0.5*params.platform.thickness)*1e3:.2f} mm")
    print(f"platform tilt {math.degrees(res.platform_tilt_rad):.2f} deg, twist "
          f"{math.degrees(res.platform_twist_rad):.2f} deg")
    _finish_run(
        res, params, out=args.out, render=args.render, still=args.still, fps=args.fps, quiet=False,
        extra={"primitive": args.name, "magnitude": args.magnitude},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
