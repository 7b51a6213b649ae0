"""``hsa-elastica params``: write the default robot parameters (with units)."""

from __future__ import annotations

import argparse
import sys

from hsa_elastica.cli.common import (
    PROG,
    UsageError,
)

NAME = "params"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``params`` subcommand."""
    d = sub.add_parser(
        "params",
        help="write the default robot parameters (with units) to a file",
        description="Write the default (paper Section II-E) robot parameters as YAML or TOML; "
        "every field's unit is listed in the header comment.",
    )
    d.add_argument("--dump", metavar="FILE", required=True, help="output file (.yaml/.yml/.toml)")


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.params import ParameterError, RobotParams, save_params

    try:
        path = save_params(RobotParams(), args.dump)
    except (ParameterError, OSError) as exc:
        raise UsageError(f"{PROG} params: {exc}") from None
    print(f"default robot parameters written to {path}", file=sys.stderr)
    return 0
