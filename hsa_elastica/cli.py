"""``hsa-elastica`` command-line tool.

Subcommands::

    hsa-elastica primitive NAME [--magnitude F] [--params FILE] [--out DIR] [--render FILE.mp4]
                                [--still FILE.png] [--duration S] [--fps N] [--quiet] [--reference]
    hsa-elastica steady-state --angles A0 A1 A2 A3 [--params FILE] [--json PATH|-] [--out DIR]
                              [--reference]
    hsa-elastica render RUN_DIR --out FILE.mp4 [--fps N] [--still FILE.png]
    hsa-elastica params --dump FILE

Set ``HSA_ELASTICA_DEBUG=1`` to get the traceback of an unexpected error.

Exit codes: 0 success, 1 the simulation failed (diverged), 2 bad input (unknown primitive,
magnitude outside [0, 1], wrong number of angles, unreadable parameter file or run directory) --
always a one-line message on stderr, no traceback.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

__all__ = ["main", "build_parser"]

PROG = "hsa-elastica"


class UsageError(Exception):
    """Bad input from the command line (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return v


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (pixels)") from None
    if w < 16 or h < 16:
        raise argparse.ArgumentTypeError(f"{text!r}: width and height must be >= 16 pixels")
    return w, h


_REFERENCE_HELP = (
    "step the robot with the per-rod reference operators (PyElastica's stepper) instead of the "
    "fused numba loop (default; same trajectory to round-off, about 4x faster)"
)


def _add_video_options(parser: argparse.ArgumentParser) -> None:
    """``--fps`` and ``--size`` of the subcommands that render."""
    parser.add_argument("--fps", type=_float, default=30.0, metavar="N", help="video frame rate (default 30)")
    parser.add_argument("--size", type=_size, default=(960, 720), metavar="WxH",
                        help="video/still size in pixels (default 960x720)")


def build_parser() -> argparse.ArgumentParser:
    from .primitives import PRIMITIVES

    parser = _Parser(
        prog=PROG,
        description="Simulate Handed Shearing Auxetic (HSA) robots (PyElastica plugin). "
        "SI units: angles in rad, lengths in m, times in s.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser(
        "primitive",
        help="run one of the motion primitives of Fig. 2 (to a steady state)",
        description="Run a motion primitive of Fig. 2(a) from rest: the motor angles ramp to "
        "their targets and the run stops once the robot has settled (or after --duration). "
        f"Primitives: {', '.join(PRIMITIVES)}.",
    )
    p.add_argument("name", metavar="NAME", help=f"primitive: one of {', '.join(PRIMITIVES)}")
    p.add_argument(
        "--magnitude", type=_float, default=1.0,
        help="fraction of the maximum motor angle phi_max = pi rad, in [0, 1] (default 1)",
    )
    p.add_argument("--params", metavar="FILE", help="robot parameters (.yaml/.yml/.toml)")
    p.add_argument("--out", metavar="DIR", help="save a run directory (diagnostics, params, summary)")
    p.add_argument("--render", metavar="FILE.mp4", help="render the run to an mp4 video")
    p.add_argument("--still", metavar="FILE.png", help="write a PNG of the final state")
    p.add_argument(
        "--duration", type=_float, metavar="S",
        help="simulate exactly S seconds instead of stopping when settled",
    )
    _add_video_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    p.add_argument("--reference", action="store_true", help=_REFERENCE_HELP)

    s = sub.add_parser(
        "steady-state",
        help="steady state of the robot for given motor angles",
        description="Run the robot from rest to the given motor angles (ramped) and stop once "
        "all node and platform speeds stay below tolerance for the settling window.",
    )
    s.add_argument(
        "--angles", type=_float, nargs="+", required=True, metavar="A",
        help="one motor angle per rod in RADIANS (rotation of each rod base about its own +z "
        "axis, right-hand rule; rods at 45, 135, 225, 315 deg, handedness R, L, R, L)",
    )
    s.add_argument("--params", metavar="FILE", help="robot parameters (.yaml/.yml/.toml)")
    s.add_argument(
        "--json", metavar="PATH", help="write the result as one JSON object to PATH ('-' = stdout)"
    )
    s.add_argument("--out", metavar="DIR", help="save a run directory (diagnostics, params, summary)")
    s.add_argument(
        "--max-time", type=_float, metavar="S",
        help="give up after S simulated seconds (default: ramp time + 3 s)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar or summary on the terminal")
    s.add_argument("--reference", action="store_true", help=_REFERENCE_HELP)

    r = sub.add_parser(
        "render",
        help="re-render a saved run directory",
        description="Render a run directory written by 'primitive --out' or 'steady-state --out'.",
    )
    r.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
    r.add_argument("--out", metavar="FILE.mp4", required=True, help="output video")
    r.add_argument("--still", metavar="FILE.png", help="also write a PNG of the final state")
    _add_video_options(r)
    r.add_argument(
        "--color-by", default="handedness", metavar="Q",
        help="'handedness' (default), 'elongation' (rest-length strain, Eq. 3) or a recorded "
        "per-element quantity such as sigma_z",
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar")

    d = sub.add_parser(
        "params",
        help="write the default robot parameters (with units) to a file",
        description="Write the default (paper Section II-E) robot parameters as YAML or TOML; "
        "every field's unit is listed in the header comment.",
    )
    d.add_argument("--dump", metavar="FILE", required=True, help="output file (.yaml/.yml/.toml)")
    return parser


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _load_params(path: str | None) -> Any:
    from .params import ParameterError, RobotParams, load_params

    if path is None:
        return RobotParams()
    try:
        return load_params(path, RobotParams)
    except ParameterError as exc:
        raise UsageError(f"{PROG}: --params: {exc}") from None


def _progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def _info(quiet: bool, text: str) -> None:
    if not quiet:
        print(text, file=sys.stderr)


def _describe(result: Any) -> str:
    p = result.platform_position_m
    return (
        f"{'converged' if result.converged else 'NOT converged'} at t = {result.sim_time_s:.3f} s "
        f"(wall {result.wall_time_s:.1f} s): platform at ({p[0] * 1e3:.2f}, {p[1] * 1e3:.2f}, "
        f"{p[2] * 1e3:.2f}) mm, tilt {math.degrees(result.platform_tilt_rad):.2f} deg, "
        f"twist {math.degrees(result.platform_twist_rad):.2f} deg"
    )


def _finish_run(
    result: Any,
    params: Any,
    *,
    out: str | None,
    quiet: bool,
    render: str | None = None,
    still: str | None = None,
    fps: float = 30.0,
    size: tuple[int, int] = (960, 720),
    extra: dict[str, Any] | None = None,
) -> None:
    """Save the run directory and render the video/still that were asked for."""
    if out is not None:
        from .rundir import save_run

        summary = result.summary()
        summary.update(extra or {})
        save_run(out, result.diagnostics, params, summary)
        _info(quiet, f"run saved to {out}")
    if render is not None:
        from .render import render_video

        n = render_video(
            result.diagnostics, params, render, fps=fps, still=still, window_size=size,
            progress=_progress(quiet),
        )
        _info(quiet, f"{n} frames written to {render}")
    elif still is not None:
        from .render import render_still

        render_still(result.diagnostics, params, still, window_size=size)
        _info(quiet, f"still written to {still}")


# --------------------------------------------------------------------------------------------
# subcommands
# --------------------------------------------------------------------------------------------
def _cmd_primitive(args: argparse.Namespace) -> int:
    from .primitives import primitive_angles
    from .steady_state import solve_steady_state

    params = _load_params(args.params)
    try:
        angles = primitive_angles(args.name, args.magnitude, params)
    except ValueError as exc:
        raise UsageError(f"{PROG} primitive: {exc}") from None
    if args.duration is not None and not args.duration > 0:
        raise UsageError(f"{PROG} primitive: --duration = {args.duration} is invalid: must be > 0 (s)")
    if not args.fps > 0:
        raise UsageError(f"{PROG} primitive: --fps = {args.fps} is invalid: must be > 0")
    record = args.out is not None or args.render is not None or args.still is not None
    result = solve_steady_state(
        params,
        angles,
        max_time=args.duration,
        stop_when_settled=args.duration is None,
        record=record,
        progress=_progress(args.quiet),
        fast=not args.reference,
    )
    if not args.quiet:
        print(f"{args.name} (magnitude {args.magnitude:g}): {_describe(result)}")
    _finish_run(
        result, params, out=args.out, render=args.render, still=args.still, fps=args.fps,
        quiet=args.quiet, extra={"primitive": args.name, "magnitude": args.magnitude},
        size=args.size,
    )
    return 0


def _cmd_steady_state(args: argparse.Namespace) -> int:
    from .steady_state import solve_steady_state

    params = _load_params(args.params)
    if len(args.angles) != params.n_rods:
        raise UsageError(
            f"{PROG} steady-state: --angles needs exactly {params.n_rods} values (one per rod, rad), "
            f"got {len(args.angles)}"
        )
    if args.max_time is not None and not args.max_time > 0:
        raise UsageError(f"{PROG} steady-state: --max-time = {args.max_time} is invalid: must be > 0 (s)")
    result = solve_steady_state(
        params,
        args.angles,
        max_time=args.max_time,
        record=args.out is not None,
        progress=_progress(args.quiet),
        fast=not args.reference,
    )
    payload = json.dumps(result.to_json_dict())
    if args.json == "-":
        print(payload)
    elif args.json is not None:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(payload + "\n", encoding="utf-8")
    if args.json != "-" and not args.quiet:
        print(_describe(result))
    _finish_run(result, params, out=args.out, quiet=args.quiet or args.json == "-")
    return 0


def _cmd_render(args: argparse.Namespace) -> int:
    from .params import ParameterError
    from .render import render_video
    from .rundir import load_run

    if not args.fps > 0:
        raise UsageError(f"{PROG} render: --fps = {args.fps} is invalid: must be > 0")
    try:
        run = load_run(args.run_dir)
    except (FileNotFoundError, ValueError, ParameterError) as exc:
        raise UsageError(f"{PROG} render: {exc}") from None
    try:
        n = render_video(
            run.diagnostics, run.params, args.out, fps=args.fps, still=args.still,
            color_by=args.color_by, window_size=args.size, progress=_progress(args.quiet),
        )
    except ValueError as exc:
        raise UsageError(f"{PROG} render: {exc}") from None
    _info(args.quiet, f"{n} frames written to {args.out}")
    return 0


def _cmd_params(args: argparse.Namespace) -> int:
    from .params import ParameterError, RobotParams, save_params

    try:
        path = save_params(RobotParams(), args.dump)
    except (ParameterError, OSError) as exc:
        raise UsageError(f"{PROG} params: {exc}") from None
    print(f"default robot parameters written to {path}", file=sys.stderr)
    return 0


def _one_line(text: str) -> str:
    """Collapse a (possibly multi-line, e.g. YAML parser) message to one line."""
    return " ".join(text.split())


_COMMANDS = {
    "primitive": _cmd_primitive,
    "steady-state": _cmd_steady_state,
    "render": _cmd_render,
    "params": _cmd_params,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hsa-elastica`` console script; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        return _COMMANDS[args.command](args)
    except UsageError as exc:
        print(_one_line(str(exc)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, no traceback (a failed simulation, I/O error, ...)
        import os

        if os.environ.get("HSA_ELASTICA_DEBUG"):
            raise
        from .simulation import SimulationDiverged

        kind = "simulation failed" if isinstance(exc, SimulationDiverged) else type(exc).__name__
        print(_one_line(f"{PROG}: {kind}: {exc}"), file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
