"""``hsa-elastica view``: an interactive 3D view of a saved run directory in the browser."""

from __future__ import annotations

from hsa_elastica.cli.common import run_output_command

NAME = "view"
#: written into RUN_DIR when --html is not given
DEFAULT_HTML = "view.html"

add_parser, run = run_output_command(
    NAME,
    help="interactive 3D view of a run directory (one HTML page)",
    description="Write one self-contained HTML page (plotly, works offline) showing a run "
    "directory written by 'primitive --out' or 'steady-state --out' in 3D: rotate and zoom "
    "with the mouse, a time slider and a play button; rods coloured by handedness, the "
    "platform, a hand at each motor showing its angle, the target if the run has one. "
    "Open the page in a browser.",
    flag="--html", metavar="FILE.html", output_help=f"output page (default: RUN_DIR/{DEFAULT_HTML})",
    default=DEFAULT_HTML, what="page", writer="hsa_elastica.io.view:write_view_html",
    done="view written to {} (open it in a browser)",
)
