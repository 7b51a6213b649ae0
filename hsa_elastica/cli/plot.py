"""``hsa-elastica plot``: a run directory's platform pose and motors against time."""

from __future__ import annotations

from hsa_elastica.cli.common import run_output_command

NAME = "plot"
#: written into RUN_DIR when --out is not given
DEFAULT_PLOT = "plot.png"

add_parser, run = run_output_command(
    NAME,
    help="plot a run directory against time (PNG or SVG)",
    description="Plot a run directory written by 'primitive --out' or 'steady-state --out' "
    "against time: platform position (mm), platform tilt and twist (deg), motor angles "
    "(deg) and motor torques (mN m); a stack's top platform and every motor.",
    flag="--out", metavar="FILE.png",
    output_help=f"output figure, .png or .svg (default: RUN_DIR/{DEFAULT_PLOT})",
    default=DEFAULT_PLOT, what="plot", writer="hsa_elastica.io.plot:write_run_plot",
    done="plot written to {}",
)
