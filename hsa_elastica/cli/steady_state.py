"""``hsa-elastica steady-state``: the steady state of the robot for given motor angles."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hsa_elastica.cli.common import (
    PROG,
    REFERENCE_HELP,
    UsageError,
    add_out_options,
    check_angles,
    check_output_file,
    check_params,
    check_run_dir,
    describe,
    finish_run,
    float_arg,
    load_robot_params,
    progress,
    solve,
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
    s.add_argument("--params", metavar="FILE", help="robot parameters (.yaml/.yml/.toml)")
    s.add_argument(
        "--json", metavar="PATH", help="write the result as one JSON object to PATH ('-' = stdout)"
    )
    add_out_options(s)
    s.add_argument(
        "--max-time", type=float_arg, metavar="S",
        help="give up after S simulated seconds (default: ramp time + 3 s)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    s.add_argument("--reference", action="store_true", help=REFERENCE_HELP)


def run(args: argparse.Namespace) -> int:
    params = load_robot_params(args.params)
    if len(args.angles) != params.n_rods:
        raise UsageError(
            f"{PROG} steady-state: --angles needs exactly {params.n_rods} values (one per rod, rad), "
            f"got {len(args.angles)}"
        )
    check_angles(args.angles, "--angles")
    if args.max_time is not None and not args.max_time > 0:
        raise UsageError(f"{PROG} steady-state: --max-time = {args.max_time} is invalid: must be > 0 (s)")
    # every input and output is checked before simulating
    check_output_file(args.json, "--json")
    check_run_dir(args.out, args.overwrite)
    duration = args.max_time if args.max_time is not None else params.simulation.ramp_time + 3.0
    check_params(params, duration, args.out is not None)
    try:
        result = solve(
            params,
            args.angles,
            out=args.out,
            quiet=args.quiet,
            max_time=args.max_time,
            record=args.out is not None,
            progress=progress(args.quiet),
            fast=not args.reference,
        )
    except Exception as exc:  # a diverged run still writes its (not converged) JSON
        partial = getattr(exc, "result", None)
        if partial is not None:
            _write_json(args.json, partial)
        raise
    _write_json(args.json, result)
    if args.json != "-" and not args.quiet:
        print(describe(result))
    finish_run(result, params, out=args.out, quiet=args.quiet or args.json == "-")
    return 0


def _write_json(path: str | None, result: object) -> None:
    """The ``--json`` object to stdout (``-``) or, written atomically, to ``path``."""
    if path is None:
        return
    payload = json.dumps(result.to_json_dict())  # type: ignore[attr-defined]
    if path == "-":
        print(payload)
        return
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(payload + "\n", encoding="utf-8")
    tmp.replace(target)
