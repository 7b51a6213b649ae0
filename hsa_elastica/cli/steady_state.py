"""``hsa-elastica steady-state``: the steady state of the robot for given motor angles.

By default the static equations are solved (:func:`hsa_elastica.robots.steady_state_api.steady_state`, ``method="static"``,
milliseconds per pose, falling back to dynamic relaxation if Newton fails); ``--dynamic`` runs
the dynamic relaxation (``method="dynamic"``).  A run
directory (``--out DIR`` with ``--angles``) holds the recorded time series, so it implies
``--dynamic``.  Batch mode: ``--angles-csv FILE --out FILE.csv|.parquet`` solves one pose per row
(columns ``angle_0 .. angle_{n-1}`` or ``motor_angles_rad_0 ..``) and writes the JSON fields
flattened by the schema's suffix rule (:func:`hsa_elastica.io.columns.flatten`), one row per
pose; a Parquet file carries each column's unit and frame.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from hsa_elastica.cli.common import (
    PROG,
    PARAMS_HELP,
    REFERENCE_HELP,
    UsageError,
    add_integrator_option,
    apply_integrator,
    check_angles,
    check_duration,
    check_output_file,
    check_params,
    check_table_output,
    check_run_dir,
    claimed_run_dir,
    describe,
    finish_run,
    float_arg,
    load_robot_params,
    progress,
    solve,
    usage_errors,
)

NAME = "steady-state"
TABLE_SUFFIXES = (".csv", ".parquet")


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``steady-state`` subcommand."""
    s = sub.add_parser(
        "steady-state",
        help="steady state of the robot for given motor angles",
        description="Solve the static equilibrium of the robot at the given motor angles "
        "(default), or run it from rest to those angles and stop once all node and platform "
        "speeds stay below tolerance (--dynamic).",
    )
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--angles", type=float_arg, nargs="+", metavar="A",
        help="one motor angle per rod in RADIANS (rotation of each rod base about its own +z "
        "axis, right-hand rule; rods at 45, 135, 225, 315 deg, handedness R, L, R, L)",
    )
    src.add_argument(
        "--angles-csv", metavar="FILE",
        help="batch mode: a CSV with columns angle_0 .. angle_{n-1} (or motor_angles_rad_0 ..) "
        "[rad], one pose per row; needs --out FILE.csv or FILE.parquet",
    )
    s.add_argument("--params", metavar="FILE", help=PARAMS_HELP)
    s.add_argument(
        "--json", metavar="PATH",
        help="write the result as one JSON object to PATH ('-' = stdout) (default: only a summary "
        "line on stdout)",
    )
    s.add_argument(
        "--out", metavar="PATH",
        help="with --angles: save a run directory (diagnostics, params, summary; implies "
        "--dynamic); with --angles-csv: the result table (.csv or .parquet; CSV into a device "
        "or named pipe without either extension) (default: none)",
    )
    s.add_argument(
        "--overwrite", action="store_true",
        help="replace the run files in a --out directory that is not empty, or an existing "
        "--out table (batch mode)",
    )
    s.add_argument(
        "--dynamic", action="store_true",
        help="dynamic relaxation instead of the static solver (slower, about 1 s per pose)",
    )
    s.add_argument(
        "--max-time", type=float_arg, metavar="S",
        help="--dynamic: give up after S simulated seconds (default: ramp time + 3 s)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    s.add_argument("--reference", action="store_true", help=REFERENCE_HELP + "; implies --dynamic")
    add_integrator_option(s)


def _batch(args: argparse.Namespace, params: Any) -> int:
    import pandas as pd

    from hsa_elastica.io.csv_input import check_angle_rows, read_csv_columns
    from hsa_elastica.io.progress import progress_bar
    from hsa_elastica.params.files import atomic_output, is_stream

    if args.out is None or (Path(args.out).suffix.lower() not in TABLE_SUFFIXES
                            and not is_stream(args.out)):  # a device or FIFO takes CSV
        raise UsageError(f"{PROG} steady-state: --angles-csv needs --out FILE.csv or FILE.parquet")
    check_table_output(args.out, args.overwrite)
    from hsa_elastica.io.csv_input import angle_columns

    with usage_errors(f"{PROG} steady-state"):
        cols = angle_columns(args.angles_csv, params.n_rods)
        table = read_csv_columns(args.angles_csv, cols, what="--angles-csv")
        angles = check_angle_rows(table, cols, what=f"--angles-csv {args.angles_csv}")
    from hsa_elastica.robots.steady_state_api import steady_state

    if args.dynamic or args.reference:
        check_params(params, _duration(args, params), False)

        results = [steady_state(params, a, method="dynamic", max_time=args.max_time,
                                record=False, fast=not args.reference).detail
                   for a in progress_bar(angles, desc="steady states", unit="pose",
                                         enabled=not args.quiet)]
    else:
        with usage_errors(f"{PROG} steady-state: --params"), progress_bar(
            total=len(angles), desc="steady states", unit="pose", enabled=not args.quiet
        ) as bar:
            results = [r.detail for r in steady_state(params, angles, on_pose=lambda: bar.update(1))]
    from hsa_elastica.io.columns import flatten, write_parquet

    # the JSON fields flattened by the schema's suffix rule (platform_position_m_x, ...)
    df = pd.DataFrame([flatten(r.to_json_dict()) for r in results])
    out = Path(args.out)
    with atomic_output(out, create_parents=True) as tmp:
        if out.suffix.lower() != ".parquet":
            df.to_csv(tmp, index=False)
        else:
            write_parquet(df, tmp)  # each column's unit and frame in the Arrow schema
    if not args.quiet:
        n_static = sum(r.method == "static" for r in results)
        print(f"{len(results)} poses ({n_static} static, {len(results) - n_static} dynamic) -> {out}")
    return 0


def _duration(args: argparse.Namespace, params: Any) -> float:
    """Simulated time [s] of a dynamic run: --max-time or ramp + 3 s."""
    return args.max_time if args.max_time is not None else params.simulation.ramp_time + 3.0


def run(args: argparse.Namespace) -> int:
    params = apply_integrator(args, load_robot_params(args.params))
    check_duration(args.max_time, params.simulation.dt, "--max-time")
    if args.angles_csv is not None:
        return _batch(args, params)
    if len(args.angles) != params.n_rods:
        raise UsageError(
            f"{PROG} steady-state: --angles needs exactly {params.n_rods} values (one per rod, rad), "
            f"got {len(args.angles)}"
        )
    check_angles(args.angles, "--angles", params.n_rods)
    if args.out is not None and Path(args.out).suffix.lower() in TABLE_SUFFIXES:
        raise UsageError(f"{PROG} steady-state: --out {args.out}: a table needs --angles-csv")
    # every input and output is checked before solving
    check_output_file(args.json, "--json")
    if args.dynamic or args.reference or args.out is not None:
        check_run_dir(args.out, args.overwrite)
        check_params(params, _duration(args, params), args.out is not None)
        with claimed_run_dir(args.out, args.overwrite):  # no second command into --out meanwhile
            result = _dynamic(args, params)
            _finish(args, result, params)
        return 0
    from hsa_elastica.robots.steady_state_api import steady_state

    with usage_errors(f"{PROG} steady-state: --params"):  # e.g. the fallback's time step
        result = steady_state(params, args.angles).detail
    _finish(args, result, params)
    return 0


def _dynamic(args: argparse.Namespace, params: Any) -> Any:
    """The dynamic steady state of ``--angles`` (a failed run still writes its JSON)."""
    try:
        return solve(
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


def _finish(args: argparse.Namespace, result: Any, params: Any) -> None:
    """``--json``, the summary line and the run directory of ``result``."""
    _write_json(args.json, result)
    if args.json != "-" and not args.quiet:
        print(describe(result) + f" [{result.method}]")
        if getattr(result, "symmetry", None) is not None and result.symmetry.is_broken:
            print(result.symmetry.describe(result.platform_position_m))
    finish_run(result, params, out=args.out, quiet=args.quiet or args.json == "-")


def _write_json(path: str | None, result: Any) -> None:
    """The ``--json`` object to stdout (``-``) or, written atomically, to ``path``."""
    if path is None:
        return
    payload = json.dumps(result.to_json_dict())
    if path == "-":
        print(payload)
        return
    from hsa_elastica.params.files import write_text_atomic

    write_text_atomic(path, payload + "\n")
