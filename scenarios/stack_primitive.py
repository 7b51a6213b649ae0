"""Two paper robots stacked (``build_stack``): one motion primitive per stage, run on the fused
stepper from rest to a steady state, printed per stage and rendered to a PNG.

The static equilibrium of the same commands (``solve_stack_static``) is printed alongside: the
dynamic run settles onto it.

Usage::

    python scenarios/stack_primitive.py                      # bend_north below, twist_ccw above
    python scenarios/stack_primitive.py --lower elongation --upper bend_east --png stack.png
"""

from __future__ import annotations

import argparse

import numpy as np

from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.io.render import render_still
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import PRIMITIVES
from hsa_elastica.robots.stack import build_stack, solve_stack_static, stack_primitive_angles


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lower", default="bend_north", choices=list(PRIMITIVES), metavar="NAME",
                    help=f"primitive of the lower stage: one of {', '.join(PRIMITIVES)} "
                    "(default bend_north)")
    ap.add_argument("--upper", default="twist_ccw", choices=list(PRIMITIVES), metavar="NAME",
                    help="primitive of the upper stage, as --lower (default twist_ccw)")
    ap.add_argument("--magnitude", type=float, default=1.0, metavar="F",
                    help="fraction of the maximum motor angle, in [0, 1], both stages (default 1)")
    ap.add_argument("--motor-mass", type=float, default=0.07, metavar="KG",
                    help="mass of each upper-stage motor [kg], a payload on the lower platform "
                    "(default 0.07)")
    ap.add_argument("--duration", type=float, default=2.0, metavar="S",
                    help="simulated time [s] (default 2)")
    ap.add_argument("--png", default="stack_primitive.png", metavar="FILE.png",
                    help="still of the final state (default stack_primitive.png)")
    args = ap.parse_args()

    p = paper_robot_params()
    angles = stack_primitive_angles(
        [(args.lower, args.magnitude), (args.upper, args.magnitude)], [p, p]
    )
    stack = build_stack([p, p], angles, motor_mass=args.motor_mass, record=True)
    FastRobot(stack).run(args.duration)
    static = solve_stack_static([p, p], angles, motor_mass=args.motor_mass)
    for k, ((pos, rot), (spos, _)) in enumerate(zip(stack.relative_poses(), static.relative_poses)):
        frame = "robot_base" if k == 0 else f"platform {k - 1}"
        print(
            f"stage {k}: platform at {np.round(pos * 1e3, 2)} mm ({frame} frame), "
            f"static solver {np.round(spos * 1e3, 2)} mm, "
            f"tilt {np.degrees(np.arccos(np.clip(rot[2, 2], -1, 1))):.1f} deg"
        )
    df, view = stack.render_frame()
    title = f"{args.lower} / {args.upper}, magnitude {args.magnitude:g}"  # bottom / top
    out = render_still(df, view, args.png, window_size=(480, 600), title=title)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
