"""``hsa-elastica primitive``: a motion primitive of Fig. 2 from rest to its steady state."""

from __future__ import annotations

import argparse
import math
from typing import Any

from hsa_elastica.robots.primitives import PRIMITIVES

from hsa_elastica.cli.common import (
    PROG,
    PARAMS_HELP,
    REFERENCE_HELP,
    UsageError,
    add_integrator_option,
    add_out_options,
    add_video_options,
    apply_integrator,
    check_duration,
    check_params,
    check_render_path,
    check_run_dir,
    claimed_run_dir,
    describe,
    finish_run,
    float_arg,
    info,
    load_robot_params,
    load_segments,
    progress,
    solve,
    usage_errors,
    wall_times,
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
    p.add_argument("--params", metavar="FILE", help=PARAMS_HELP + "; a comma-separated list "
                   "(bottom first) builds a multi-segment stack, each stage on the platform below, and NAME "
                   "may then list one primitive per stage (NAME1,NAME2)")
    add_out_options(p)
    p.add_argument("--render", metavar="FILE.mp4", help="render the run to an mp4 video (default: none)")
    p.add_argument("--still", metavar="FILE.png", help="write a PNG of the final state (default: none)")
    p.add_argument(
        "--duration", type=float_arg, metavar="S",
        help="simulate exactly S seconds instead of stopping when settled (default: stop when "
        "settled, at the latest after the ramp time + 3 s)",
    )
    add_video_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    p.add_argument("--reference", action="store_true", help=REFERENCE_HELP)
    add_integrator_option(p)


def _check_outputs(args: argparse.Namespace) -> bool:
    """Check ``--out``, ``--render`` and ``--still``; True if any is given (record the run)."""
    check_run_dir(args.out, args.overwrite)
    check_render_path(args.render, "video", "--render")
    check_render_path(args.still, "still", "--still")
    return args.out is not None or args.render is not None or args.still is not None


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.robots.primitives import primitive_angles

    segments = load_segments(args.params)
    if segments is None:
        params = apply_integrator(args, load_robot_params(args.params))
        with usage_errors(f"{PROG} primitive", ValueError):
            angles = primitive_angles(args.name, args.magnitude, params)
        system: Any = params
        group, name = [params], args.name
    else:  # a multi-segment stack: a primitive per stage
        group = [apply_integrator(args, sp) for sp in segments]
        names, angles = _stack_angles(args, group)
        system, name = group, ",".join(names)
    check_duration(args.duration, min(p.simulation.dt for p in group), "--duration")
    record = _check_outputs(args)  # every input and output is checked before simulating
    ramp = max(p.simulation.ramp_time for p in group)
    duration = args.duration if args.duration is not None else ramp + 3.0
    for p in group:
        check_params(p, duration, record)  # (a stack's segments together: by the solver, before it builds)
    extra: dict[str, Any] = {"primitive": name, "magnitude": args.magnitude}
    with claimed_run_dir(args.out, args.overwrite):  # no second command into --out meanwhile
        info(args.quiet, _plan(args, group, duration))
        result = solve(
            system, angles, out=args.out, quiet=args.quiet, extra=extra, max_time=args.duration,
            stop_when_settled=args.duration is None, record=record, progress=progress(args.quiet),
            fast=not args.reference,
        )
        if segments is not None:
            _stack_static(args, group, angles, names, result, extra)
        elif not args.quiet:
            print(f"{args.name} (magnitude {args.magnitude:g}): {describe(result)}")
        finish_run(
            result, system, out=args.out, render=args.render, still=args.still, fps=args.fps,
            quiet=args.quiet, extra=extra, size=args.size, speed=args.speed, hold=args.hold,
        )
    return 0


def _plan(args: argparse.Namespace, segments: list[Any], duration: float) -> str:
    """The line said before simulating (on stderr, so that a run is never silent while it
    builds the robot and loads its kernels): what runs, with which integrator and step."""
    sims = [p.simulation for p in segments]
    integrators = (["explicit (operator loop)"] if args.reference
                   else sorted({s.integrator for s in sims}))
    until = (f"for {duration:g} s" if args.duration is not None
             else f"until settled (at most {duration:g} s)")
    what = f"{len(segments)} segments" if len(segments) > 1 else "robot"
    return (f"{args.name} (magnitude {args.magnitude:g}): simulating the {what} {until}, "
            f"{'/'.join(integrators)} integrator, dt = {min(s.dt for s in sims):g} s")


def _stack_angles(args: argparse.Namespace, segments: list[Any]) -> tuple[list[str], Any]:
    """The primitive of each stage (NAME, or NAME1,NAME2,... one per stage) and its angles."""
    from hsa_elastica.robots.stack import stack_primitive_angles

    names = [n.strip() for n in args.name.split(",")]
    if len(names) == 1:
        names = names * len(segments)
    if len(names) != len(segments):
        raise UsageError(
            f"{PROG} primitive: {len(names)} primitives for {len(segments)} segments: give one "
            f"name, or one per segment (NAME1,NAME2,...)"
        )
    with usage_errors(f"{PROG} primitive", ValueError):
        return names, stack_primitive_angles([(n, args.magnitude) for n in names], segments)


def _stack_static(args: argparse.Namespace, segments: list[Any], angles: Any, names: list[str],
                  result: Any, extra: dict[str, Any]) -> None:
    """The static equilibrium of a stack next to its run: into ``extra`` (the summary) and,
    per segment (relative to the platform below), on the terminal."""
    from hsa_elastica.robots.stack import solve_stack_static

    static = solve_stack_static(segments, angles, check_stability=True)
    extra["static_relative_positions_m"] = [[float(v) for v in pos] for pos, _ in static.relative_poses]
    extra["static_converged"] = bool(static.converged)
    if args.quiet:
        return
    state = "converged" if result.converged else "NOT converged"
    print(f"{args.name} (magnitude {args.magnitude:g}): {state} at t = {result.sim_time_s:.3f} s "
          f"({wall_times(result)})")
    for k, ((pos, rot), (s_pos, _)) in enumerate(zip(result.relative_poses, static.relative_poses)):
        frame = "robot_base" if k == 0 else f"platform {k - 1}"
        tilt = math.degrees(math.acos(max(-1.0, min(1.0, float(rot[2, 2])))))
        print(
            f"segment {k} {names[k]}: platform at ({pos[0] * 1e3:.2f}, {pos[1] * 1e3:.2f}, "
            f"{pos[2] * 1e3:.2f}) mm in the {frame} frame, tilt {tilt:.2f} deg; static "
            f"equilibrium ({s_pos[0] * 1e3:.2f}, {s_pos[1] * 1e3:.2f}, {s_pos[2] * 1e3:.2f}) mm"
        )
