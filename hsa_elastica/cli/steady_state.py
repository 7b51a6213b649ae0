"""``hsa-elastica steady-state``: the steady state of the robot for given motor angles."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hsa_elastica.cli.common import (
    PROG,
    REFERENCE_HELP,
    UsageError,
    describe,
    finish_run,
    float_arg,
    load_robot_params,
    progress,
)

NAME = "steady-state"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``steady-state`` subcommand."""
    s = sub.add_parser(
        "steady-state",
        help="steady state of the robot for given motor angles",
        description="Run the robot from rest to the given motor angles (ramped) and stop once "
        "all node and platform speeds stay below tolerance for the settling window.",
    )
    s.add_argument(
        "--angles", type=float_arg, nargs="+", required=True, metavar="A",
        help="one motor angle per rod in RADIANS (rotation of each rod base about its own +z "
        "axis, right-hand rule; rods at 45, 135, 225, 315 deg, handedness R, L, R, L)",
    )
    s.add_argument("--params", metavar="FILE", help="robot parameters: a file (.yaml/.yml/.toml, FILE#KEY for per-key files) or a preset name (paper_robot, fpu_robot_2022)")
    s.add_argument(
        "--json", metavar="PATH", help="write the result as one JSON object to PATH ('-' = stdout)"
    )
    s.add_argument("--out", metavar="DIR", help="save a run directory (diagnostics, params, summary)")
    s.add_argument(
        "--max-time", type=float_arg, metavar="S",
        help="give up after S simulated seconds (default: ramp time + 3 s)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    s.add_argument("--reference", action="store_true", help=REFERENCE_HELP)


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.robots.steady_state import solve_steady_state

    params = load_robot_params(args.params)
    if len(args.angles) != params.n_rods:
        raise UsageError(
            f"{PROG} steady-state: --angles needs exactly {params.n_rods} values (one per rod, rad), "
            f"got {len(args.angles)}"
        )
    if args.max_time is not None and not args.max_time > 0:
        raise UsageError(f"{PROG} steady-state: --max-time = {args.max_time} is invalid: must be > 0 (s)")
    result = solve_steady_state(
        params,
        args.angles,
        max_time=args.max_time,
        record=args.out is not None,
        progress=progress(args.quiet),
        fast=not args.reference,
    )
    payload = json.dumps(result.to_json_dict())
    if args.json == "-":
        print(payload)
    elif args.json is not None:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(payload + "\n", encoding="utf-8")
    if args.json != "-" and not args.quiet:
        print(describe(result))
    finish_run(result, params, out=args.out, quiet=args.quiet or args.json == "-")
    return 0
