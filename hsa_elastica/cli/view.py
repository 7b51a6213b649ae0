"""``hsa-elastica view``: an interactive 3D view of a saved run directory in the browser."""

from __future__ import annotations

import argparse

from hsa_elastica.cli.common import PROG, UsageError, info, next_to_run

NAME = "view"
#: written into RUN_DIR when --html is not given
DEFAULT_HTML = "view.html"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``view`` subcommand."""
    v = sub.add_parser(
        "view",
        help="interactive 3D view of a run directory (one HTML page)",
        description="Write one self-contained HTML page (plotly, works offline) showing a run "
        "directory written by 'primitive --out' or 'steady-state --out' in 3D: rotate and zoom "
        "with the mouse, a time slider and a play button; rods coloured by handedness, the "
        "platform, a hand at each motor showing its angle, the target if the run has one. "
        "Open the page in a browser.",
    )
    v.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    v.add_argument("--html", metavar="FILE.html",
                   help=f"output page (default: RUN_DIR/{DEFAULT_HTML})")
    v.add_argument("--quiet", action="store_true", help="no message on the terminal")


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.io.render import check_output_path
    from hsa_elastica.io.rundir import load_run
    from hsa_elastica.io.view import write_view_html
    from hsa_elastica.params import ParameterError

    html = args.html
    if html is None:
        (html,) = next_to_run("view", args.run_dir, DEFAULT_HTML)
    try:
        check_output_path(html, "page", flag="--html")
        run = load_run(args.run_dir)
        write_view_html(run, html)
    except (FileNotFoundError, ValueError, ParameterError) as exc:
        raise UsageError(f"{PROG} view: {exc}") from None
    info(args.quiet, f"view written to {html} (open it in a browser)")
    return 0
