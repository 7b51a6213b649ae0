"""``hsa-elastica calibrate``: fit robot parameters to measured steady states (motion capture)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from hsa_elastica.cli.common import (
    PROG, UsageError, check_output_file, float_arg, load_robot_params, usage_errors,
)
from hsa_elastica.params.files import write_text_atomic

NAME = "calibrate"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``calibrate`` subcommand."""
    c = sub.add_parser(
        "calibrate",
        help="fit robot parameters to measured steady states (motion capture)",
        description="Nonlinear least squares (scipy) of the --free parameters against measured "
        "steady states: measured motor angles in, platform marker position and orientation out "
        "(residual weights 1 mm and 1 deg).  Prints per-run RMS before/after and 1-sigma "
        "uncertainties from the Jacobian; writes the fitted parameters to --out.  A worked "
        "example on the shipped data: docs/calibration.md.",
    )
    c.add_argument(
        "--data", nargs="+", required=True, metavar="FILE.csv",
        help="run CSVs with motor_angle_rad_j, platform_{x,y,z}_m, platform_q{x,y,z,w} "
        "(or a shipped run name: elongation, twisting)",
    )
    c.add_argument(
        "--params", required=True, metavar="START",
        help="start parameters: a file (.yaml/.yml/.toml) or a preset name "
        "(paper_robot, fpu_robot_2022)",
    )
    c.add_argument(
        "--free", nargs="+", required=True, metavar="NAME",
        help="dotted parameter names to fit, e.g. rod.C_eps rod.twist_rigidity "
        "rod.cap_length_top platform.marker_offset.z mocap.yaw",
    )
    c.add_argument("--out", required=True, metavar="FITTED.yaml", help="fitted parameters (.yaml/.toml)")
    c.add_argument(
        "--bounds", nargs=3, action="append", default=[], metavar=("NAME", "LO", "HI"),
        help="bounds of a free parameter in SI units, repeatable (default: [start/10, 10 start], "
        "unbounded for a start of 0, [-pi, pi] rad for mocap.yaw)",
    )
    c.add_argument(
        "--max-poses", type=int, metavar="N",
        help="use at most N poses per run, evenly spread (default: all)",
    )
    c.add_argument(
        "--max-evaluations", type=int, default=30, metavar="N",
        help="at most N model evaluations of all poses (default 30)",
    )
    c.add_argument(
        "--mirror-branch", default="dynamic", metavar="RULE", type=_mirror_branch,
        help="which of two mirror-image poses a buckled pose takes: past a critical twist the "
        "straight pose of a symmetric twisting command (twist_cw, twist_ccw) is unstable and "
        "the robot tilts to one of two mirror-image buckled poses, which round-off decides in "
        "a simulation.  RULE: 'dynamic' (default) runs the dynamic relaxation once per such "
        "pose and keeps the static pose nearest to where it settles; 'gravity' keeps the pose "
        "whose platform lies further along the lateral component of gravity (the side a tilted "
        "or hanging mount loads, no dynamics; as 'dynamic' when gravity has no lateral "
        "component); '+y' keeps the pose whose platform lies further toward +y (no dynamics).",
    )
    c.add_argument("--json", metavar="PATH",
                   help="write the report as JSON to PATH ('-' = stdout; default: none)")
    c.add_argument("--quiet", action="store_true", help="no per-evaluation progress")


def _mirror_branch(text: str) -> str:
    from hsa_elastica.robots.statics_api import MIRROR_BRANCHES

    if text not in MIRROR_BRANCHES:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a rule: choose {', '.join(repr(b) for b in MIRROR_BRANCHES)}"
        )
    return text


def _bounds(args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for name, lo, hi in args.bounds:
        with usage_errors(f"{PROG} calibrate: --bounds {name}", argparse.ArgumentTypeError):
            out[name] = (float_arg(lo), float_arg(hi))
    return out


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.experiments.calibration import CalibrationError, calibrate, check_names, load_runs
    from hsa_elastica.params import ParameterError, save_params

    params = load_robot_params(args.params)
    if args.max_poses is not None and args.max_poses < 1:
        raise UsageError(f"{PROG} calibrate: --max-poses = {args.max_poses} is invalid: must be >= 1")
    if args.max_evaluations < 1:
        raise UsageError(
            f"{PROG} calibrate: --max-evaluations = {args.max_evaluations} is invalid: must be >= 1"
        )
    if Path(args.out).suffix.lower() not in (".yaml", ".yml", ".toml"):
        raise UsageError(f"{PROG} calibrate: --out {args.out!r}: use a .yaml, .yml or .toml file")
    # every output is checked before the fit (minutes): a bad path must not waste it
    check_output_file(args.out, "--out")
    check_output_file(args.json, "--json")
    with usage_errors(f"{PROG} calibrate", CalibrationError, ParameterError):
        check_names(params, args.free)
        runs = [r.every(args.max_poses) for r in load_runs(args.data, params.n_rods)]
        result = calibrate(
            params, runs, args.free, bounds=_bounds(args), max_nfev=args.max_evaluations,
            verbose=not args.quiet, mirror_branch=args.mirror_branch,
        )
    with usage_errors(f"{PROG} calibrate: --out", ParameterError, OSError):
        save_params(result.params, args.out)
    print(result.report())
    if "mocap.yaw" in result.names:
        yaw = result.fitted["mocap.yaw"]
        print(f"mocap.yaw = {math.degrees(yaw):.3f} deg (motion-capture frame, not a robot "
              "parameter: not written to --out)")
    if args.json is not None:
        text = json.dumps(result.to_json_dict(), indent=1, allow_nan=False) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            write_text_atomic(args.json, text)
    print(f"fitted parameters written to {args.out}", file=sys.stderr)
    return 0
