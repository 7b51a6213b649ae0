"""``hsa-elastica params``: write the default robot parameters (with units)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hsa_elastica.cli.common import PROG, UsageError, check_output_file, usage_errors

NAME = "params"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``params`` subcommand."""
    d = sub.add_parser(
        "params",
        help="write the default robot parameters (with units) to a file",
        description="Write the default (paper Section II-E) robot parameters as YAML or TOML; "
        "every field's unit is listed in the header comment.",
    )
    d.add_argument("--dump", metavar="FILE", required=True,
                   help="output file (.yaml/.yml/.toml, written atomically); '-' writes YAML to stdout")
    d.add_argument(
        "--preset", metavar="NAME",
        help="write a named preset instead of the defaults: paper_robot (Section II-E) or "
        "fpu_robot_2022 (the real robot calibrated on motion capture) (default: paper_robot, "
        "the package defaults)",
    )


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.params import PRESETS, ParameterError, RobotParams, resolve_params, save_params
    from hsa_elastica.params.io import params_text

    if args.preset is not None and args.preset not in PRESETS:
        raise UsageError(
            f"{PROG} params: --preset {args.preset!r} is unknown; choose one of {', '.join(PRESETS)}"
        )
    if args.dump != "-":
        from hsa_elastica.params.files import is_stream

        if Path(args.dump).suffix.lower() not in (".yaml", ".yml", ".toml") and not is_stream(args.dump):
            raise UsageError(f"{PROG} params: --dump {args.dump}: use a .yaml, .yml or .toml file, "
                             "or '-' for YAML on stdout (a device or FIFO takes YAML)")
        check_output_file(args.dump, "--dump")
    with usage_errors(f"{PROG} params", ParameterError, OSError):
        params = RobotParams() if args.preset is None else resolve_params(args.preset)
    if args.dump == "-":
        sys.stdout.write(params_text(params, "yaml"))
        return 0
    with usage_errors(f"{PROG} params", ParameterError):  # a failed write (disk full): exit 1
        path = save_params(params, args.dump)
    what = "default robot parameters" if args.preset is None else f"preset {args.preset}"
    print(f"{what} written to {path}", file=sys.stderr)
    return 0
