"""``hsa-elastica plot``: a run directory's platform pose and motors against time."""

from __future__ import annotations

import argparse

from hsa_elastica.cli.common import PROG, UsageError, info, next_to_run

NAME = "plot"
#: written into RUN_DIR when --out is not given
DEFAULT_PLOT = "plot.png"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``plot`` subcommand."""
    p = sub.add_parser(
        "plot",
        help="plot a run directory against time (PNG or SVG)",
        description="Plot a run directory written by 'primitive --out' or 'steady-state --out' "
        "against time: platform position (mm), platform tilt and twist (deg), motor angles "
        "(deg) and motor torques (mN m); a stack's top platform and every motor.",
    )
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    p.add_argument("--out", metavar="FILE.png",
                   help=f"output figure, .png or .svg (default: RUN_DIR/{DEFAULT_PLOT})")
    p.add_argument("--quiet", action="store_true", help="no message on the terminal")


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.io.plot import write_run_plot
    from hsa_elastica.io.render import check_output_path
    from hsa_elastica.io.rundir import load_run
    from hsa_elastica.params import ParameterError

    out = args.out
    if out is None:
        (out,) = next_to_run("plot", args.run_dir, DEFAULT_PLOT)
    try:
        check_output_path(out, "plot", flag="--out")
        run = load_run(args.run_dir)
        write_run_plot(run, out)
    except (FileNotFoundError, ValueError, ParameterError) as exc:
        raise UsageError(f"{PROG} plot: {exc}") from None
    info(args.quiet, f"plot written to {out}")
    return 0
