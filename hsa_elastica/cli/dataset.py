"""``hsa-elastica dataset``: steady states of many poses into a resumable Parquet dataset."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Callable

from hsa_elastica.cli.common import (
    PARAMS_HELP,
    PROG,
    UsageError,
    check_params,
    float_arg,
    info,
    load_robot_params,
    progress,
    usage_errors,
)

NAME = "dataset"


def _int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (one-line message otherwise)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be >= {minimum}")
        return v

    return parse


_positive_int = _int_at_least(1)
_seed = _int_at_least(0)


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``dataset`` subcommand."""
    s = sub.add_parser(
        NAME,
        help="steady states of many poses (random, grid or CSV) into a Parquet dataset",
        description="Compute the steady states of many motor-angle sets on a Dask cluster (local "
        "by default) and write DIR/dataset.json plus one Parquet file per chunk under "
        "DIR/chunks/. Rerunning the same command computes only the missing chunks. Random and "
        "grid angles lie in each rod's elongating range: h_i * [0, phi_max] rad.",
    )
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--random", type=_positive_int, metavar="N", help="N random poses (needs --seed)")
    g.add_argument("--grid", type=_positive_int, metavar="K", help="K values per rod (K^n_rods poses)")
    g.add_argument("--angles-csv", metavar="FILE", help="poses from a CSV with columns angle_0 .. angle_{n-1} (or motor_angles_rad_0 ..) "
                   "[rad], one pose per row")
    s.add_argument("--seed", type=_seed, metavar="S", help="seed of --random, an integer >= 0 (default: none; --random needs one)")
    s.add_argument("--phi-max", type=float_arg, default=math.pi, metavar="RAD",
                   help="largest motor angle magnitude of --random/--grid (default pi rad; at "
                   "most the motor-angle limit)")
    s.add_argument("--params", metavar="FILE", help=PARAMS_HELP)
    s.add_argument("--shapes", action="store_true",
                   help="also store every rod's node positions and curvatures (list columns)")
    s.add_argument("--workers", type=_positive_int, metavar="W",
                   help="local Dask worker processes (default: all cores; at most 4 per core)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on an existing Dask cluster (e.g. tcp://host:8786) instead of local "
                   "workers; it must answer within 10 s (default: local workers)")
    s.add_argument("--chunk-size", type=_positive_int, metavar="C",
                   help="poses per chunk, the unit of work (default: N/64, between 1 and 100)")
    s.add_argument("--dynamic", action="store_true",
                   help="dynamic relaxation instead of the static solver")
    s.add_argument("--overwrite", action="store_true",
                   help="replace a different dataset already in DIR, or rebuild a damaged dataset.json "
                   "(chunk files of this command are verified and kept)")
    s.add_argument("--out", metavar="DIR", required=True, help="dataset directory")
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary")


def _check(where: str, check: object, *args: object) -> None:
    with usage_errors(where):
        check(*args)  # type: ignore[operator]


def _angles(args: argparse.Namespace, params: object) -> tuple[object, dict[str, object]]:
    from hsa_elastica.experiments import datasets as ds

    where = f"{PROG} {NAME}"
    if args.random is not None and args.seed is None:
        raise UsageError(f"{where}: --random needs --seed S")
    if args.random is None and args.seed is not None:
        raise UsageError(f"{where}: --seed only applies to --random")
    _check(where, ds.check_phi_max, args.phi_max, "--phi-max")
    n_rods = params.n_rods  # type: ignore[attr-defined]
    if args.random is not None:
        _check(where, ds.check_n_samples, args.random, "--random")
        sampling = ds.describe_sampling("random", n=args.random, seed=args.seed, phi_max=args.phi_max)
    elif args.grid is not None:
        _check(where, ds.check_n_samples, args.grid ** n_rods, f"--grid {args.grid}: K^{n_rods}")
        sampling = ds.describe_sampling("grid", k=args.grid, phi_max=args.phi_max)
    else:
        # (the inner one names a ParameterError, the outer any other OSError or ValueError)
        with usage_errors(f"{where}: --angles-csv", OSError, ValueError), usage_errors(where):
            angles = ds.read_angles_csv(args.angles_csv, n_rods)
        return angles, ds.describe_sampling("csv", file=str(args.angles_csv), n=len(angles))
    return ds.sampled_angles(params, sampling), sampling  # type: ignore[arg-type]


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.experiments import datasets as ds
    from hsa_elastica.params import ParameterError

    where = f"{PROG} {NAME}"
    if args.scheduler is not None and args.workers is not None:
        raise UsageError(f"{where}: --workers does not apply with --scheduler")
    _check(where, ds.check_workers, args.workers, "--workers")
    _check(where, ds.check_scheduler_address, args.scheduler, "--scheduler")
    _check(where, ds.check_out_dir, args.out, "--out")
    params = load_robot_params(args.params)
    # both solvers may run dynamic relaxation (the static one falls back to it and uses it to
    # pick between mirror-image poses): the time step must be stable
    check_params(params, 0.0, record=False)
    angles, sampling = _angles(args, params)
    if args.scheduler is None:  # local workers read this machine's cache: fill it on every core
        from hsa_elastica.engines.precompile import precompile_if_cold

        precompile_if_cold()
    client = None
    try:
        if args.scheduler is not None:  # reached before anything is written
            client = ds.connect_scheduler(args.scheduler, "--scheduler")
        summary = ds.build_dataset(
            args.out, params, angles, sampling,  # type: ignore[arg-type]
            solver="dynamic" if args.dynamic else "auto", shapes=args.shapes,
            workers=args.workers, scheduler=client, chunk_size=args.chunk_size,
            overwrite=args.overwrite, progress=progress(args.quiet),
            report=lambda line: print(f"{PROG}: {line}", file=sys.stderr, flush=True),
        )
    except (ds.DatasetMismatch, ds.DatasetLocked, ParameterError) as exc:
        raise UsageError(f"{where}: {exc}") from None
    finally:
        if client is not None:
            client.close()
    info(args.quiet, summary.line())
    return 0
