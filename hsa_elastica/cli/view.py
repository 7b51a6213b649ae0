"""``hsa-elastica view``: an interactive 3D view of a saved run directory in the browser."""

from __future__ import annotations

import argparse

from hsa_elastica.cli.common import add_run_output_parser, info, write_from_run

NAME = "view"
#: written into RUN_DIR when --html is not given
DEFAULT_HTML = "view.html"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``view`` subcommand."""
    add_run_output_parser(
        sub, "view",
        help="interactive 3D view of a run directory (one HTML page)",
        description="Write one self-contained HTML page (plotly, works offline) showing a run "
        "directory written by 'primitive --out' or 'steady-state --out' in 3D: rotate and zoom "
        "with the mouse, a time slider and a play button; rods coloured by handedness, the "
        "platform, a hand at each motor showing its angle, the target if the run has one. "
        "Open the page in a browser.",
        flag="--html", metavar="FILE.html",
        output_help=f"output page (default: RUN_DIR/{DEFAULT_HTML})",
    )


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.io.view import write_view_html

    html = write_from_run("view", args, flag="--html", default=DEFAULT_HTML, what="page",
                          write=write_view_html)
    info(args.quiet, f"view written to {html} (open it in a browser)")
    return 0
