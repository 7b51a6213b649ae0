"""Shared pieces of the ``hsa-elastica`` subcommands: errors, argument types, option groups,
parameter loading and the save/render step of a run (also used by ``scenarios/``)."""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn

from hsa_elastica.params.integrators import INTEGRATOR_NAMES, integrator

PROG = "hsa-elastica"
# a negative number, also in e-notation or with a trailing dot (-1e-3, -.5, -2., -1E+4);
# argparse's own pattern ('^-\d+$|^-\d*\.\d+$') takes "-1e-3" for an option
# "-inf"/"-nan" too, so that float_arg names them as not finite instead of argparse calling
# them unrecognized options
_NEGATIVE_NUMBER = re.compile(r"^-((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|inf|infinity|nan)$", re.IGNORECASE)


class UsageError(Exception):
    """Bad input from the command line (exit code 2)."""


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (no usage dump), exit code 2, and negative
    numbers in e-notation taken as values (``--angles 0 -1e-3 0 0``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


@contextmanager
def usage_errors(where: str, *kinds: type[Exception]) -> Iterator[None]:
    """Turn an exception of ``kinds`` (default ``ParameterError``) raised inside into a
    :class:`UsageError` (exit 2) of one line, ``"{where}: {message}"``."""
    from hsa_elastica.params import ParameterError

    caught = kinds or (ParameterError,)
    try:
        yield
    except caught as exc:
        raise UsageError(f"{where}: {exc}") from None


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
    "fused numba loop (the default: same trajectory to round-off, about 4x faster)"
)
#: ``--params`` of the commands that build one robot
PARAMS_HELP = (
    "robot parameters: a file (.yaml/.yml/.toml, FILE#KEY for per-key files) or a preset name "
    "(paper_robot, fpu_robot_2022) (default: paper_robot)"
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
                        help=f"video frame rate in frames per second, {r.MIN_FPS:g} <= N <= {r.MAX_FPS:g} "
                        f"(default {r.DEFAULT_FPS:g})")
    parser.add_argument("--speed", type=_video_option("speed", float_arg), default=r.DEFAULT_SPEED,
                        metavar="F", help="playback speed relative to real time: 0.25 shows 1 s of simulated "
                        f"time in 4 s of video (default {r.DEFAULT_SPEED:g})")
    parser.add_argument("--hold", type=_video_option("hold", float_arg), default=r.DEFAULT_HOLD, metavar="S",
                        help=f"seconds of video on the final state, 0 <= S <= {r.MAX_HOLD:g} "
                        f"(default {r.DEFAULT_HOLD:g})")
    parser.add_argument("--size", type=_video_option("window_size", size_arg), default=r.DEFAULT_SIZE,
                        metavar="WxH", help=f"video/still size in pixels, {r.MIN_SIZE}..{r.MAX_SIZE} per side "
                        f"(default {r.DEFAULT_SIZE[0]}x{r.DEFAULT_SIZE[1]})")


def add_out_options(parser: argparse.ArgumentParser) -> None:
    """``--out DIR`` and ``--overwrite`` of the subcommands that save a run directory."""
    parser.add_argument("--out", metavar="DIR",
                        help="save a run directory (diagnostics, params, summary); also written "
                        "when the simulation diverges, with what was recorded (default: none)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the run files in a --out directory that is not empty")


# --------------------------------------------------------------------------------------------
# checks done before simulating
# --------------------------------------------------------------------------------------------
def check_output_file(path: str | None, flag: str) -> None:
    """An output file (``-`` is stdout): :func:`hsa_elastica.params.files.output_path_problem`
    (its directory exists and is writable, the name is not too long, the path is not a
    directory, block device or socket; a symbolic link is judged by its target)."""
    if path is None or path == "-":
        return
    from hsa_elastica.params.files import output_path_problem

    problem = output_path_problem(path)
    if problem is not None:
        raise UsageError(f"{PROG}: {flag} {path}: {problem}")


def check_table_output(path: str, overwrite: bool, flag: str = "--out") -> None:
    """An output table: as :func:`check_output_file`, and an existing file only with
    ``--overwrite``."""
    check_output_file(path, flag)
    if not overwrite and Path(path).is_file():
        raise UsageError(f"{PROG}: {flag} {path}: the file exists; choose a new name or pass --overwrite")


def check_render_path(path: str | None, kind: str, flag: str) -> None:
    """``--render``/``--still`` (``kind`` "video"/"still"): the renderer's own check
    (:func:`hsa_elastica.io.render.check_output_path`: extension, directory, writable)."""
    if path is None:
        return
    from hsa_elastica.io.render import check_output_path

    with usage_errors(PROG, ValueError):
        check_output_path(path, kind, flag=flag)


def next_to_run(command: str, run_dir: str, *names: str) -> list[str]:
    """Default outputs of ``render`` / ``view`` / ``plot``: ``RUN_DIR/name`` for each name;
    exit 2 with one line if ``run_dir`` is a file or does not exist."""
    path = Path(run_dir)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{PROG} {command}: {run_dir!r} is not a run directory (it is a file)")
    if not path.is_dir():
        raise UsageError(f"{PROG} {command}: run directory {run_dir!r} does not exist")
    return [str(path / name) for name in names]


def run_output_command(
    name: str, *, help: str, description: str, flag: str, metavar: str, output_help: str,
    default: str, what: str, writer: str, done: str,
) -> tuple[Callable[[Any], None], Callable[[argparse.Namespace], int]]:
    """``(add_parser, run)`` of a subcommand that reads a run directory and writes one file
    (``view``, ``plot``): arguments ``RUN_DIR``, the output option ``flag`` and ``--quiet``.
    ``run`` imports ``writer`` (``"module:function"``), checks the output (``flag``'s value,
    else ``RUN_DIR/default``; a ``what`` of :func:`hsa_elastica.io.render.check_output_path`)
    before the run is read, then calls ``writer(run, output)``; a missing or unreadable run or
    a bad output exits 2 with one line.  ``done`` (``{}``: the output) is printed unless
    ``--quiet``."""

    def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
        p = sub.add_parser(name, help=help, description=description)
        p.add_argument("run_dir", metavar="RUN_DIR", help="run directory")
        p.add_argument(flag, metavar=metavar, help=output_help)
        p.add_argument("--quiet", action="store_true", help="no message on the terminal")

    def run(args: argparse.Namespace) -> int:
        from hsa_elastica.io.render import check_output_path
        from hsa_elastica.io.rundir import load_run

        module, _, function = writer.partition(":")
        write = getattr(importlib.import_module(module), function)
        out = getattr(args, flag.lstrip("-").replace("-", "_"))
        if out is None:
            (out,) = next_to_run(name, args.run_dir, default)
        with usage_errors(f"{PROG} {name}", FileNotFoundError, ValueError):  # ParameterError too
            check_output_path(out, what, flag=flag)
            write(load_run(args.run_dir), out)
        info(args.quiet, done.format(out))
        return 0

    return add_parser, run


def check_run_dir(path: str | None, overwrite: bool) -> None:
    """``--out DIR``: a new directory in an existing writable parent, or an existing
    directory that is empty (or ``--overwrite``) and writable."""
    if path is None:
        return
    from hsa_elastica.io.rundir import run_dir_problem

    problem = run_dir_problem(path, overwrite=overwrite)
    if problem is not None:
        raise UsageError(f"{PROG}: --out {path}: {problem}")


@contextmanager
def claimed_run_dir(path: str | None, overwrite: bool) -> Iterator[None]:
    """Hold ``--out DIR`` while the run is simulated and saved
    (:func:`hsa_elastica.io.rundir.claimed`): a second command into the same directory is
    refused (exit 2) until this one ends; nothing is held for ``path`` None."""
    if path is None:
        yield
        return
    from hsa_elastica.io.rundir import RunDirBusy, claimed

    try:
        with claimed(path, overwrite=overwrite):
            yield
    except RunDirBusy as exc:
        raise UsageError(f"{PROG}: --out {path}: {exc}") from None


def add_integrator_option(parser: argparse.ArgumentParser) -> None:
    """``--integrator explicit|implicit`` (default: the params' ``simulation.integrator``)."""
    parser.add_argument(
        "--integrator", choices=INTEGRATOR_NAMES, default=None,
        help="time integrator of the compiled engine (default: simulation.integrator of the "
        f"params, explicit); 'implicit' on explicit params also sets dt = "
        f"{integrator('implicit').default_dt:g} s",
    )


def apply_integrator(args: argparse.Namespace, params: Any) -> Any:
    """The params with ``--integrator`` applied; ``--reference`` (the per-rod operators,
    always explicit) with the implicit integrator is refused."""
    choice = getattr(args, "integrator", None)
    if choice is not None and choice != params.simulation.integrator:
        sim = params.simulation.replace(integrator=choice)
        step = integrator(choice).default_dt
        if step is not None:
            sim = sim.replace(dt=max(sim.dt, step))
        params = params.replace(simulation=sim)
    if getattr(args, "reference", False) and not integrator(params.simulation).operator_path:
        raise UsageError(f"{PROG}: --reference runs the explicit per-rod operators: it cannot "
                         "be combined with the implicit integrator (--integrator / "
                         "simulation.integrator)")
    return params


def check_params(params: Any, duration: float, record: bool) -> None:
    """Refuse a time step above the stability limit and a recording too large for memory."""
    from hsa_elastica.engines.timeloop import check_time_step

    with usage_errors(f"{PROG}: --params"):
        check_time_step(params.simulation.dt, params)
        if record:
            from hsa_elastica.io.recording import check_recording_size

            check_recording_size(params, duration)


def check_duration(duration: float | None, dt: float, flag: str) -> None:
    """``--duration``/``--max-time`` [s]: finite, > 0 and at most
    :data:`hsa_elastica.params.MAX_STEPS` steps (the cap the Python API applies too)."""
    if duration is None:
        return
    from hsa_elastica.params import check_run_length

    with usage_errors(PROG):
        check_run_length(duration, dt, flag)


def check_angles(angles: Any, flag: str, n: int | None = None) -> None:
    """The motor angles of ``flag`` [rad] pass :func:`hsa_elastica.params.check_motor_angles`
    (``n`` finite numbers within +-MAX_MOTOR_ANGLE), else a :class:`UsageError` (exit 2)."""
    from hsa_elastica.params import check_motor_angles

    with usage_errors(PROG):
        check_motor_angles(angles, n, field=flag)


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def load_robot_params(path: str | None) -> Any:
    from hsa_elastica.params import RobotParams, resolve_params

    if path is None:
        return RobotParams()
    with usage_errors(f"{PROG}: --params"):
        return resolve_params(path, RobotParams)


def load_segments(path: str | None) -> list[Any] | None:
    """The stages of a multi-segment stack when ``--params`` lists several, comma-separated
    (each a preset name or a file, bottom stage first); None for a single robot."""
    if path is None or "," not in path:
        return None
    items = [item.strip() for item in path.split(",")]
    if any(not item for item in items):
        raise UsageError(f"{PROG}: --params: {path!r} has an empty entry in its list of segments")
    return [load_robot_params(item) for item in items]


def announce_compile(quiet: bool) -> None:
    """Report numba compilations on stderr from now on (what compiles, elapsed time, a summary;
    :mod:`hsa_elastica.io.compile_notice`), unless ``quiet``.  Idempotent."""
    from hsa_elastica.io import compile_notice

    if quiet:
        compile_notice.suppress()  # nor the builders' automatic one (announce_if_cold)
        return
    compile_notice.announce_compilation()


def dynamic_steady_state(params: Any, angles: Any, **kwargs: Any) -> Any:
    """The solver's own result of ``steady_state(params, angles, method="dynamic", **kwargs)``
    (a ``SteadyStateResult`` for a robot, a ``StackSteadyStateResult`` for a stack)."""
    from hsa_elastica.robots.steady_state_api import steady_state

    return steady_state(params, angles, method="dynamic", **kwargs).detail


def solve(params: Any, angles: Any, *, out: str | None, quiet: bool,
          extra: dict[str, Any] | None = None, solver: Any = None, **kwargs: Any) -> Any:
    """``solver(params, angles, **kwargs)`` (default :func:`dynamic_steady_state`: the dynamic
    :func:`~hsa_elastica.robots.steady_state_api.steady_state` of a robot, or of a stack with
    ``params`` the segments); when the run fails after it started (a divergence, a step the
    implicit integrator refused, a failed force law: ``SimulationFailed``, exit 1) the partial
    run is saved to ``out`` (summary ``"converged": false, "diverged": true``) before
    re-raising."""
    from hsa_elastica.engines.timeloop import SimulationFailed
    from hsa_elastica.params import ParameterError

    if solver is None:
        solver = dynamic_steady_state
    announce_compile(quiet)
    try:
        return solver(params, angles, **kwargs)
    except ParameterError as exc:
        raise UsageError(f"{PROG}: {exc}") from None
    except SimulationFailed as exc:  # a blow-up, a refused implicit step, a failed force law
        result = exc.result
        if out is not None and result is not None and result.diagnostics is not None:
            save_result(out, result, params, extra)
            exc.saved_to = out  # type: ignore[attr-defined]  # named in the one-line message
        raise


#: ``time.perf_counter()`` at the start of the command :func:`hsa_elastica.cli.main` runs
_CLOCK: dict[str, float] = {}


def start_clock() -> None:
    """Mark the start of a command: the summary's ``command_wall_time_s`` counts from here."""
    _CLOCK["start"] = time.perf_counter()


def save_result(out: str, result: Any, params: Any, extra: dict[str, Any] | None = None) -> None:
    """Write the run directory of ``result`` (a steady-state result of a robot or a stack;
    ``params`` its RobotParams or the stack's segments) with ``extra`` keys in the summary;
    the directory was checked before simulating (:func:`check_run_dir`).  The summary's
    ``command_wall_time_s`` is the time since :func:`start_clock`, taken once the data files
    are written."""
    from hsa_elastica.io.rundir import save_run

    summary = result.summary()
    summary.update(extra or {})
    start = _CLOCK.get("start")

    def stamped() -> dict[str, Any]:
        if start is not None:
            summary["command_wall_time_s"] = time.perf_counter() - start
        return summary

    save_run(out, result.diagnostics, params, stamped, overwrite=True)


def progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


def info(quiet: bool, text: str) -> None:
    if not quiet:
        print(text, file=sys.stderr)


def wall_times(result: Any) -> str:
    """``"wall 0.2 s, 9.8x real time, set-up 0.9 s"`` of a dynamic result (the simulation
    loop's wall time and real-time factor, then the set-up's), ``"wall 0.1 s"`` of a static one."""
    text = f"wall {result.wall_time_s:.2g} s"
    rtf = getattr(result, "real_time_factor", None)
    if rtf is not None:
        text += f", {rtf:.3g}x real time"
    setup = getattr(result, "setup_wall_time_s", math.nan)
    if not math.isnan(setup):
        text += f", set-up {setup:.2g} s"
    return text


def describe(result: Any) -> str:
    p = result.platform_position_m
    return (
        f"{'converged' if result.converged else 'NOT converged'} at t = {result.sim_time_s:.3f} s "
        f"({wall_times(result)}): platform at ({p[0] * 1e3:.2f}, {p[1] * 1e3:.2f}, "
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
    ``hold``: see ``--speed``/``--hold``; None = the renderer's default), titled with the
    primitive in ``extra`` or else the motor angles.  ``params``: the robot's RobotParams, or
    a list of them for a multi-segment stack (its segments, bottom first)."""
    if out is not None:
        save_result(out, result, params, extra)
        info(quiet, f"run saved to {out} (3D view in the browser: {PROG} view {out})")
    if render is None and still is None:
        return
    from hsa_elastica.io.render_data import run_title, stack_frame

    angles = getattr(result, "motor_angles_rad", None)
    title = run_title({"motor_angles_rad": [float(a) for a in angles] if angles is not None else None,
                       **(extra or {})})
    data, view = stack_frame(result.diagnostics, params) if isinstance(params, list) else (
        result.diagnostics, params)
    if render is not None:
        from hsa_elastica.io.render import DEFAULT_HOLD, DEFAULT_SPEED, render_video

        n = render_video(
            data, view, render, fps=fps, still=still, window_size=size,
            speed=DEFAULT_SPEED if speed is None else speed, hold=DEFAULT_HOLD if hold is None else hold,
            progress=progress(quiet), title=title,
        )
        info(quiet, f"{n} frames written to {render}")
    elif still is not None:
        from hsa_elastica.io.render import render_still

        render_still(data, view, still, window_size=size, title=title)
        info(quiet, f"still written to {still}")


def one_line(text: str) -> str:
    """Collapse a (possibly multi-line, e.g. YAML parser) message to one line."""
    return " ".join(text.split())


