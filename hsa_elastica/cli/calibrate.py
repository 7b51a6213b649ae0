"""``hsa-elastica calibrate``: fit robot parameters to measured steady states (motion capture),
or with ``--timeseries`` to the logged time series of runs (replays on the implicit
integrator)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

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
        "uncertainties from the Jacobian; writes the fitted parameters to --out.  With "
        "--timeseries: the same residuals at every logged row of time series replayed on the "
        "implicit integrator (the only way to fit a time constant such as rod.creep_time).  "
        "Worked examples on the shipped data: docs/calibration.md.",
    )
    source = c.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data", nargs="+", metavar="FILE.csv",
        help="run CSVs with motor_angle_rad_j, platform_{x,y,z}_m, platform_q{x,y,z,w} "
        "(or a shipped run name: elongation, twisting)",
    )
    source.add_argument(
        "--timeseries", nargs="+", metavar="RUN",
        help="fit to time series instead of steady states: time-series CSVs with "
        "t_experiment_s, motor_angle_rad_j, platform_{x,y,z}_m, platform_q{x,y,z,w} (or a "
        "shipped run name: elongation, twisting), each replayed on the implicit integrator; "
        "free parameters from: " + ", ".join(_timeseries_names()),
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
        "unbounded for a start of 0, [-pi, pi] rad for mocap.yaw; rod.creep_fraction [0, 1], "
        "rod.creep_time [start/10, min(10 start, 1e5)] s)",
    )
    c.add_argument(
        "--start", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
        help="start value of a parameter in SI units, repeatable: a free one starts there, "
        "another stays there (default: its value in --params; e.g. --start "
        "rod.creep_fraction 0.05 --start rod.creep_time 100)",
    )
    _add_timeseries_options(c)
    c.add_argument(
        "--max-poses", type=int, metavar="N",
        help="use at most N poses per run, evenly spread (default: all)",
    )
    c.add_argument(
        "--max-evaluations", type=int, default=30, metavar="N",
        help="at most N model evaluations of all poses (default 30; with --timeseries: "
        "N evaluations of the replays besides those of the Jacobian, one replay of each run "
        "per free parameter and iteration)",
    )
    c.add_argument(
        "--mirror-branch", default=None, metavar="RULE", type=_mirror_branch,
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


def _add_timeseries_options(c: argparse.ArgumentParser) -> None:
    """The options of ``--timeseries`` (refused with ``--data``)."""
    ts = c.add_argument_group("time series (--timeseries only)")
    ts.add_argument("--dt", type=float, default=None, metavar="S",
                    help="implicit integrator step [s], 0 < dt <= 0.05 (default 0.02)")
    ts.add_argument("--settle", type=float, default=None, metavar="S",
                    help="seconds at the first row's angles before each replay, in [0, 60] "
                    "(default 2)")
    ts.add_argument("--every", type=int, default=None, metavar="K",
                    help="objective on every K-th logged row (the replay still follows every "
                    "row's angles; default 1: all rows)")
    ts.add_argument("--duration", type=float, default=None, metavar="S",
                    help="use only the first S seconds of each run (default: all)")


def _timeseries_names() -> tuple[str, ...]:
    from hsa_elastica.experiments.calibration_timeseries import TIMESERIES_NAMES

    return TIMESERIES_NAMES


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


def _values(args: argparse.Namespace) -> dict[str, float]:
    out: dict[str, float] = {}
    for name, value in args.start:
        with usage_errors(f"{PROG} calibrate: --start {name}", argparse.ArgumentTypeError):
            out[name] = float_arg(value)
    return out


_TIMESERIES_ONLY = ("dt", "settle", "every", "duration")


def _check_mode(args: argparse.Namespace) -> None:
    """Options of the other mode are refused, not ignored."""
    if args.timeseries is None:
        given = [o for o in _TIMESERIES_ONLY if getattr(args, o) is not None]
        if given:
            raise UsageError(f"{PROG} calibrate: --{given[0]} is an option of --timeseries (not of --data)")
    else:
        for opt in ("max_poses", "mirror_branch"):
            if getattr(args, opt) is not None:
                flag = "--" + opt.replace("_", "-")
                raise UsageError(f"{PROG} calibrate: {flag} is an option of --data (not of --timeseries)")


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.experiments.calibration import CalibrationError
    from hsa_elastica.params import ParameterError, save_params

    params = load_robot_params(args.params)
    _check_mode(args)
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
        result = _fit_timeseries(params, args) if args.timeseries else _fit_steady(params, args)
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


def _fit_steady(params: Any, args: argparse.Namespace) -> Any:
    from hsa_elastica.experiments.calibration import calibrate, check_names, load_runs

    check_names(params, args.free)
    start = _values(args)
    runs = [r.every(args.max_poses) for r in load_runs(args.data, params.n_rods)]
    return calibrate(
        params, runs, args.free, bounds=_bounds(args), start=start or None,
        max_nfev=args.max_evaluations, verbose=not args.quiet,
        mirror_branch=args.mirror_branch or "dynamic",
    )


def _fit_timeseries(params: Any, args: argparse.Namespace) -> Any:
    from hsa_elastica.experiments import calibration_timeseries as ct
    from hsa_elastica.experiments.timeseries import load_series

    settings = {
        "dt": ct.DEFAULT_TIMESERIES_DT if args.dt is None else args.dt,
        "settle": ct.DEFAULT_SETTLE_S if args.settle is None else args.settle,
        "every": 1 if args.every is None else args.every,
    }
    for flag, value, ok, allowed in (
        ("--dt", settings["dt"], 0.0 < settings["dt"] <= 0.05, "(0, 0.05] s"),
        ("--settle", settings["settle"], 0.0 <= settings["settle"] <= 60.0, "[0, 60] s"),
        ("--every", settings["every"], settings["every"] >= 1, "an integer >= 1"),
        ("--duration", args.duration, args.duration is None or 0.0 < args.duration <= 1e5,
         "(0, 100000] s"),
    ):
        if not ok:  # (NaN fails every comparison)
            raise UsageError(f"{PROG} calibrate: {flag} = {value} is invalid: must be in {allowed}")
    bounds, start = _bounds(args), _values(args)
    # names, start values and bounds before the data files, and all of them before a replay
    p0, _, creep = ct.start_values(params, args.free, start)
    ct.check_timeseries_names(p0, args.free, creep["rod.creep_time"])
    ct.timeseries_bounds(p0, args.free, bounds, creep)
    series = load_series(args.timeseries, params.n_rods, duration=args.duration)
    return ct.calibrate_timeseries(
        params, series, args.free, bounds=bounds, start=start or None,
        max_nfev=args.max_evaluations, verbose=not args.quiet, dt=float(settings["dt"]),
        settle=float(settings["settle"]), every=int(settings["every"]),
    )
