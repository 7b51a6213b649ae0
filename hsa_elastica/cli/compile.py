"""``hsa-elastica compile``: fill numba's cache with the package's kernels, on every core."""

from __future__ import annotations

import argparse
import os
import sys

NAME = "compile"
#: most worker processes ``--workers`` accepts
MAX_WORKERS = 256


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(
            f"invalid value {text!r}: must be an integer in [1, {MAX_WORKERS}]")
    return value


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``compile`` subcommand."""
    from hsa_elastica.engines.precompile import COMMANDS

    s = sub.add_parser(
        NAME,
        help="compile the numba kernels now, on every core (a first run does it for itself)",
        description="Compile the package's numba kernels into numba's on-disk cache "
        "(NUMBA_CACHE_DIR, else next to the package's files) in worker processes, one per core, "
        "so that no later command compiles. Kernels already cached are skipped. The simulating "
        "commands do the same for their own kernels when they find the cache empty.",
    )
    s.add_argument("--command", dest="for_command", choices=sorted(COMMANDS), metavar="NAME",
                   help="only the kernels of this command: " + ", ".join(sorted(COMMANDS))
                   + " (default: all)")
    s.add_argument("--workers", type=_workers, metavar="W",
                   help=f"worker processes, 1 to {MAX_WORKERS} (default: one per core)")
    s.add_argument("--quiet", action="store_true", help="no progress, only errors")


def run(args: argparse.Namespace) -> int:
    """Compile; exit 1 if a kernel failed to compile (it then compiles on first use)."""
    from hsa_elastica.engines.precompile import precompile

    summary = precompile(args.for_command, workers=args.workers, quiet=args.quiet)
    if summary.failed:
        name, error = next(iter(summary.failed.items()))
        print(f"hsa-elastica compile: {len(summary.failed)} kernel(s) failed to compile, "
              f"e.g. {name}: {error}", file=sys.stderr)
        return 1
    if not args.quiet:
        where = os.environ.get("NUMBA_CACHE_DIR") or "next to the package's modules"
        if summary.compiled == 0:
            print(f"all {summary.cached} kernels already cached (numba cache: {where})",
                  file=sys.stderr)
        else:
            print(f"{summary.compiled} kernels compiled in {summary.seconds:.1f} s on "
                  f"{summary.workers} processes, {summary.cached} already cached "
                  f"(numba cache: {where})", file=sys.stderr)
    return 0
