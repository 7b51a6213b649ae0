"""Shared pieces of the ``hsa-elastica`` subcommands: errors, argument types, option groups,
parameter loading and the save/render step of a run (also used by ``scenarios/``)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, NoReturn

PROG = "hsa-elastica"


class UsageError(Exception):
    """Bad input from the command line (exit code 2)."""


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage dump) and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def float_arg(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return v


def size_arg(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT (pixels)") from None
    if w < 16 or h < 16:
        raise argparse.ArgumentTypeError(f"{text!r}: width and height must be >= 16 pixels")
    return w, h


REFERENCE_HELP = (
    "step the robot with the per-rod reference operators (PyElastica's stepper) instead of the "
    "fused numba loop (default; same trajectory to round-off, about 4x faster)"
)


def _video_option(name: str, parse: Any) -> Any:
    """An argparse type: ``parse(text)`` then the range check of ``render.check_video_options``."""

    def convert(text: str) -> Any:
        from hsa_elastica.io.render import check_video_options

        value = parse(text)
        try:
            check_video_options(**{name: value})
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(" is invalid: ")[-1]) from None
        return value

    convert.__name__ = name  # argparse names the type in "invalid <name> value" messages
    return convert


def add_video_options(parser: argparse.ArgumentParser) -> None:
    """``--fps``, ``--speed``, ``--hold`` and ``--size`` of the subcommands that render (defaults
    and ranges from :mod:`hsa_elastica.io.render`, checked while parsing)."""
    from hsa_elastica.io import render as r

    parser.add_argument("--fps", type=_video_option("fps", float_arg), default=r.DEFAULT_FPS, metavar="N",
                        help=f"video frame rate, {r.MIN_FPS:g} <= N <= {r.MAX_FPS:g} (default {r.DEFAULT_FPS:g})")
    parser.add_argument("--speed", type=_video_option("speed", float_arg), default=r.DEFAULT_SPEED,
                        metavar="F", help="playback speed relative to real time: 0.25 shows 1 s of simulated "
                        f"time in 4 s of video (default {r.DEFAULT_SPEED:g})")
    parser.add_argument("--hold", type=_video_option("hold", float_arg), default=r.DEFAULT_HOLD, metavar="S",
                        help=f"seconds of video on the final state, 0 <= S <= {r.MAX_HOLD:g} "
                        f"(default {r.DEFAULT_HOLD:g})")
    parser.add_argument("--size", type=_video_option("window_size", size_arg), default=r.DEFAULT_SIZE,
                        metavar="WxH", help=f"video/still size in pixels, {r.MIN_SIZE}..{r.MAX_SIZE} per side "
                        f"(default {r.DEFAULT_SIZE[0]}x{r.DEFAULT_SIZE[1]})")


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def load_robot_params(path: str | None) -> Any:
    from hsa_elastica.params import ParameterError, RobotParams, load_params

    if path is None:
        return RobotParams()
    try:
        return load_params(path, RobotParams)
    except ParameterError as exc:
        raise UsageError(f"{PROG}: --params: {exc}") from None


def progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def info(quiet: bool, text: str) -> None:
    if not quiet:
        print(text, file=sys.stderr)


def describe(result: Any) -> str:
    p = result.platform_position_m
    return (
        f"{'converged' if result.converged else 'NOT converged'} at t = {result.sim_time_s:.3f} s "
        f"(wall {result.wall_time_s:.1f} s): platform at ({p[0] * 1e3:.2f}, {p[1] * 1e3:.2f}, "
        f"{p[2] * 1e3:.2f}) mm, tilt {math.degrees(result.platform_tilt_rad):.2f} deg, "
        f"twist {math.degrees(result.platform_twist_rad):.2f} deg"
    )


def finish_run(
    result: Any,
    params: Any,
    *,
    out: str | None,
    quiet: bool,
    render: str | None = None,
    still: str | None = None,
    fps: float = 30.0,
    size: tuple[int, int] = (960, 720),
    speed: float | None = None,
    hold: float | None = None,
    extra: dict[str, Any] | None = None,
) -> None:
    """Save the run directory and render the video/still that were asked for (``speed``,
    ``hold``: see ``--speed``/``--hold``; None = the renderer's default)."""
    if out is not None:
        from hsa_elastica.io.rundir import save_run

        summary = result.summary()
        summary.update(extra or {})
        save_run(out, result.diagnostics, params, summary)
        info(quiet, f"run saved to {out}")
    if render is not None:
        from hsa_elastica.io.render import DEFAULT_HOLD, DEFAULT_SPEED, render_video

        n = render_video(
            result.diagnostics, params, render, fps=fps, still=still, window_size=size,
            speed=DEFAULT_SPEED if speed is None else speed, hold=DEFAULT_HOLD if hold is None else hold,
            progress=progress(quiet),
        )
        info(quiet, f"{n} frames written to {render}")
    elif still is not None:
        from hsa_elastica.io.render import render_still

        render_still(result.diagnostics, params, still, window_size=size)
        info(quiet, f"still written to {still}")


def one_line(text: str) -> str:
    """Collapse a (possibly multi-line, e.g. YAML parser) message to one line."""
    return " ".join(text.split())


