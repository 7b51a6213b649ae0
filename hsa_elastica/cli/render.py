"""``hsa-elastica render``: re-render a saved run directory."""

from __future__ import annotations

import argparse

from hsa_elastica.cli.common import (
    PROG,
    UsageError,
    add_video_options,
    check_render_path,
    info,
    progress,
)

NAME = "render"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``render`` subcommand."""
    r = sub.add_parser(
        "render",
        help="re-render a saved run directory",
        description="Render a run directory written by 'primitive --out' or 'steady-state --out'.",
    )
    r.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    r.add_argument("--out", metavar="FILE.mp4", required=True, help="output video")
    r.add_argument("--still", metavar="FILE.png", help="also write a PNG of the final state")
    add_video_options(r)
    r.add_argument(
        "--color-by", default="handedness", metavar="Q",
        help="'handedness' (default), 'elongation' (rest-length strain, Eq. 3) or a recorded "
        "per-element quantity such as sigma_z",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.params import ParameterError
    from hsa_elastica.io.render import render_video
    from hsa_elastica.io.rundir import load_run

    check_render_path(args.out, "video", "--out")
    check_render_path(args.still, "still", "--still")
    try:
        run = load_run(args.run_dir)
    except (FileNotFoundError, ValueError, ParameterError) as exc:
        raise UsageError(f"{PROG} render: {exc}") from None
    try:
        n = render_video(
            run.diagnostics, run.params, args.out, fps=args.fps, still=args.still,
            color_by=args.color_by, window_size=args.size, progress=progress(args.quiet),
        )
    except ValueError as exc:
        raise UsageError(f"{PROG} render: {exc}") from None
    info(args.quiet, f"{n} frames written to {args.out}")
    return 0
