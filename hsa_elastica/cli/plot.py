"""``hsa-elastica plot``: a run directory's platform pose and motors against time."""

from __future__ import annotations

import argparse

from hsa_elastica.cli.common import add_run_output_parser, info, write_from_run

NAME = "plot"
#: written into RUN_DIR when --out is not given
DEFAULT_PLOT = "plot.png"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``plot`` subcommand."""
    add_run_output_parser(
        sub, "plot",
        help="plot a run directory against time (PNG or SVG)",
        description="Plot a run directory written by 'primitive --out' or 'steady-state --out' "
        "against time: platform position (mm), platform tilt and twist (deg), motor angles "
        "(deg) and motor torques (mN m); a stack's top platform and every motor.",
        flag="--out", metavar="FILE.png",
        output_help=f"output figure, .png or .svg (default: RUN_DIR/{DEFAULT_PLOT})",
    )


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.io.plot import write_run_plot

    out = write_from_run("plot", args, flag="--out", default=DEFAULT_PLOT, what="plot",
                         write=write_run_plot)
    info(args.quiet, f"plot written to {out}")
    return 0
