"""``hsa-elastica render``: re-render a saved run directory."""

from __future__ import annotations

import argparse

from hsa_elastica.cli.common import (
    PROG,
    add_video_options,
    info,
    next_to_run,
    progress,
    usage_errors,
)

NAME = "render"
#: written into RUN_DIR when neither --out nor --still is given
DEFAULT_VIDEO = "render.mp4"
DEFAULT_STILL = "render.png"


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register the ``render`` subcommand."""
    r = sub.add_parser(
        "render",
        help="re-render a saved run directory",
        description="Render a run directory written by 'primitive --out' or 'steady-state --out' "
        "to an mp4 video (--out) and/or a PNG of the final state (--still). The video shows the "
        "run at --speed times real time, then holds the final state for --hold seconds. With "
        f"neither flag it writes RUN_DIR/{DEFAULT_VIDEO} and RUN_DIR/{DEFAULT_STILL}.",
    )
    r.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    r.add_argument("--out", metavar="FILE.mp4",
                   help=f"output video, H.264 .mp4 (default: RUN_DIR/{DEFAULT_VIDEO} when --still "
                   "is not given either)")
    r.add_argument("--still", metavar="FILE.png",
                   help=f"also write a PNG of the final state (default: RUN_DIR/{DEFAULT_STILL} "
                   "when --out is not given either)")
    add_video_options(r)
    r.add_argument(
        "--color-by", default="handedness", metavar="Q",
        help="'handedness', 'elongation' (rest-length strain, Eq. 3) or a recorded per-element "
        "quantity such as sigma_z (default: handedness)",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar or messages on the terminal")


def run(args: argparse.Namespace) -> int:
    from hsa_elastica.io.render import check_output_path, render_still, render_video
    from hsa_elastica.io.rundir import load_run

    if args.out is None and args.still is None:  # next to the run
        args.out, args.still = next_to_run("render", args.run_dir, DEFAULT_VIDEO, DEFAULT_STILL)
    where = f"{PROG} render"
    with usage_errors(where, ValueError):  # before reading the run: refuse what cannot be written
        if args.out is not None:
            check_output_path(args.out, "video", flag="--out")
        if args.still is not None:
            check_output_path(args.still, "still", flag="--still")
    with usage_errors(where, FileNotFoundError, ValueError):  # ParameterError too
        run = load_run(args.run_dir)
    # said before the renderer starts (a still takes 1-2 s with nothing else on the terminal)
    info(args.quiet, f"rendering {args.run_dir} to "
         f"{' and '.join(str(f) for f in (args.out, args.still) if f is not None)}")
    df, params = run.diagnostics, run.params
    from hsa_elastica.io.render_data import run_title

    title = run_title(run.summary)
    with usage_errors(where, ValueError):
        if run.segments:  # a multi-segment stack: all rods and platforms in the robot format
            from hsa_elastica.io.render_data import stack_frame

            df, params = stack_frame(df, run.segments)
        if args.out is not None:
            n = render_video(
                df, params, args.out, fps=args.fps, speed=args.speed, hold=args.hold,
                still=args.still, color_by=args.color_by, window_size=args.size,
                progress=progress(args.quiet), title=title,
            )
            info(args.quiet, f"{n} frames ({n / args.fps:.1f} s) written to {args.out}")
        else:
            render_still(df, params, args.still, color_by=args.color_by, window_size=args.size,
                         title=title)
        if args.still is not None:
            info(args.quiet, f"still written to {args.still}")
    return 0
