"""``hsa-elastica primitive``: a motion primitive of Fig. 2 from rest to its steady state."""

from __future__ import annotations

import argparse

from hsa_elastica.robots.primitives import PRIMITIVES

from hsa_elastica.cli.common import (
    PROG,
    REFERENCE_HELP,
    UsageError,
    add_out_options,
    add_video_options,
    check_params,
    check_render_path,
    check_run_dir,
    describe,
    finish_run,
    float_arg,
    load_robot_params,
    progress,
    solve,
)

NAME = "primitive"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``primitive`` subcommand."""
    p = sub.add_parser(
        "primitive",
        help="run one of the motion primitives of Fig. 2 (to a steady state)",
        description="Run a motion primitive of Fig. 2(a) from rest: the motor angles ramp to "
        "their targets and the run stops once the robot has settled (or after --duration). "
        f"Primitives: {', '.join(PRIMITIVES)}.",
    )
    p.add_argument("name", metavar="NAME", help=f"primitive: one of {', '.join(PRIMITIVES)}")
    p.add_argument(
        "--magnitude", type=float_arg, default=1.0,
        help="fraction of the maximum motor angle phi_max = pi rad, in [0, 1] (default 1)",
    )
    p.add_argument("--params", metavar="FILE", help="robot parameters: a file (.yaml/.yml/.toml, FILE#KEY for per-key files) or a preset name (paper_robot, fpu_robot_2022)")
    add_out_options(p)
    p.add_argument("--render", metavar="FILE.mp4", help="render the run to an mp4 video")
    p.add_argument("--still", metavar="FILE.png", help="write a PNG of the final state")
    p.add_argument(
        "--duration", type=float_arg, metavar="S",
        help="simulate exactly S seconds instead of stopping when settled",
    )
    add_video_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    p.add_argument("--reference", action="store_true", help=REFERENCE_HELP)


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.robots.primitives import primitive_angles

    params = load_robot_params(args.params)
    try:
        angles = primitive_angles(args.name, args.magnitude, params)
    except ValueError as exc:
        raise UsageError(f"{PROG} primitive: {exc}") from None
    if args.duration is not None and not args.duration > 0:
        raise UsageError(f"{PROG} primitive: --duration = {args.duration} is invalid: must be > 0 (s)")
    # every input and output is checked before simulating
    check_run_dir(args.out, args.overwrite)
    check_render_path(args.render, "video", "--render")
    check_render_path(args.still, "still", "--still")
    record = args.out is not None or args.render is not None or args.still is not None
    duration = args.duration if args.duration is not None else params.simulation.ramp_time + 3.0
    check_params(params, duration, record)
    extra = {"primitive": args.name, "magnitude": args.magnitude}
    result = solve(
        params,
        angles,
        out=args.out,
        quiet=args.quiet,
        extra=extra,
        max_time=args.duration,
        stop_when_settled=args.duration is None,
        record=record,
        progress=progress(args.quiet),
        fast=not args.reference,
    )
    if not args.quiet:
        print(f"{args.name} (magnitude {args.magnitude:g}): {describe(result)}")
    finish_run(
        result, params, out=args.out, render=args.render, still=args.still, fps=args.fps,
        quiet=args.quiet, extra=extra, size=args.size, speed=args.speed, hold=args.hold,
    )
    return 0
