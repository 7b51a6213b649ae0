"""``hsa-elastica`` command-line tool: one module per subcommand.

Subcommands: ``primitive``, ``steady-state``, ``dataset``, ``render``, ``view``, ``plot``,
``params``, ``calibrate``, ``compile`` (``hsa-elastica COMMAND --help`` lists each one's
options with their defaults and units).  Each subcommand module has
``NAME``, ``add_parser(subparsers)`` and ``run(args) -> exit code``; the shared argument types,
option groups and the save/render step live in :mod:`hsa_elastica.cli.common` (also used by the
scenario scripts).

Set ``HSA_ELASTICA_DEBUG=1`` to get the traceback of an unexpected error.  ``hsa-elastica
--version`` prints the package version.

Exit codes: 0 success, 1 the simulation failed after it started (diverged, a step the
implicit integrator refused; ``--out`` still receives the run recorded so far, marked
``"converged": false, "diverged": true``), 2 bad input -- parameters,
flags and output paths are all checked before simulating -- always a one-line message on
stderr, no traceback; 130 interrupted (also during start-up).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from hsa_elastica.cli.common import PROG, Parser, UsageError, announce_compile, one_line, start_clock

__all__ = ["build_parser", "import_deferring_interrupts", "main"]

#: subcommand modules, in the order ``--help`` lists them (imported by :func:`build_parser`,
#: inside :func:`main`'s error handling: the simulator's imports take a second or two, and an
#: interrupt then must end in "interrupted", exit 130, like any other)
SUBCOMMANDS: tuple[str, ...] = (
    "hsa_elastica.cli.primitive",
    "hsa_elastica.cli.steady_state",
    "hsa_elastica.cli.dataset",
    "hsa_elastica.cli.render",
    "hsa_elastica.cli.view",
    "hsa_elastica.cli.plot",
    "hsa_elastica.cli.params",
    "hsa_elastica.cli.calibrate",
    "hsa_elastica.cli.compile",
)

#: subcommands that run numba kernels: they report compilation on stderr (unless ``--quiet``)
#: and, on a cold cache, compile their kernels on every core first
#: (:func:`hsa_elastica.engines.precompile.precompile_if_cold`, called by the builders)
COMPILING = frozenset({"primitive", "steady-state", "dataset", "calibrate"})


def _version() -> str:
    """The installed distribution's version (setup.cfg, = ``hsa_elastica.__version__``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("hsa-elastica")
    except PackageNotFoundError:
        return "unknown (not installed)"


def import_deferring_interrupts(names: Sequence[str]) -> list[ModuleType]:
    """Import ``names`` with Ctrl-C deferred until all are imported, then raise
    :class:`KeyboardInterrupt` if one came.

    An interrupt raised inside a C extension's module initialisation (numpy, numba, VTK: a
    second or two of the start-up) surfaces as ``ImportError: initialization failed``, not as
    an interrupt; deferring it keeps "interrupted", exit 130
    (:func:`~hsa_elastica.io.interrupts.deferred_interrupts`)."""
    from hsa_elastica.io.interrupts import deferred_interrupts

    with deferred_interrupts() as pending:
        modules = [importlib.import_module(name) for name in names]
    if pending:
        raise KeyboardInterrupt
    return modules


def build_parser() -> argparse.ArgumentParser:
    """The ``hsa-elastica`` argument parser with every subcommand."""
    parser = Parser(
        prog=PROG,
        description="Simulate Handed Shearing Auxetic (HSA) robots (PyElastica plugin). "
        "SI units: angles in rad, lengths in m, times in s.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    modules = import_deferring_interrupts(SUBCOMMANDS)
    for module in modules:
        module.add_parser(sub)
    parser.set_defaults(commands={m.NAME: m.run for m in modules})
    return parser


def _one_line_warnings() -> None:
    """Show the package's warnings about the input (:class:`~hsa_elastica.params.
    MassWithoutGravityWarning`) as one line on stderr, ``hsa-elastica: warning: ...``, not as
    Python's two lines with a file name; other warnings are shown as before."""
    import warnings

    from hsa_elastica.params import ContactStepWarning, MassWithoutGravityWarning

    shown = warnings.showwarning
    if getattr(shown, "one_line", False):
        return

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        if issubclass(category, (MassWithoutGravityWarning, ContactStepWarning)):
            print(one_line(f"{PROG}: warning: {message}"), file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    show.one_line = True  # type: ignore[attr-defined]
    warnings.showwarning = show


#: commands whose process ends without the interpreter's teardown when run as the console
#: script (:func:`_end_process`)
QUICK_EXIT = frozenset({"primitive", "steady-state"})
_RAN: list[str] = []  # the command :func:`main` parsed last


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hsa-elastica`` console script; returns the exit code.

    Run as the console script (``argv`` None) a ``primitive`` or ``steady-state`` command
    ends its process once its output is written (:func:`_end_process`)."""
    code = _main(argv)
    if argv is None and _RAN and _RAN[-1] in QUICK_EXIT:
        _end_process(code)
    return code


def _end_process(code: int) -> None:
    """End the process with ``code`` after the exit handlers (``atexit``) and with the
    standard streams flushed, without the interpreter's teardown of its modules: after a
    simulation that teardown (numba's and llvmlite's objects) takes seconds of wall time on a
    loaded machine, more than the simulation loop of a short run (``benchmarks/
    bench_commands.py``, column "rest").  Only with no other thread running (a thread would be
    cut short); the files a command writes are closed before it returns."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: what the normal exit would meet too
            pass
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    """:func:`main` up to its exit code."""
    from hsa_elastica.io.interrupts import recorded_interrupts

    start_clock()
    printable_output()
    _one_line_warnings()
    with recorded_interrupts() as interrupts:
        try:
            args = build_parser().parse_args(argv)
            _RAN[:] = [args.command]
            if args.command in COMPILING:  # (the others import no kernel)
                quiet = bool(getattr(args, "quiet", False))
                writable_kernel_cache()
                announce_compile(quiet)
                from hsa_elastica.engines.precompile import enable

                enable(args.command, quiet)
            return int(args.commands[args.command](args))
        except UsageError as exc:
            print(one_line(str(exc)), file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            return 130
        except Exception as exc:  # one line, no traceback (a failed simulation, I/O error, ...)
            if interrupts:  # Ctrl-C inside C code: "ImportError: initialization failed", ...
                print(f"{PROG}: interrupted", file=sys.stderr)
                return 130
            import os

            if os.environ.get("HSA_ELASTICA_DEBUG"):
                raise
            return _failed(exc)
        finally:
            precompile = sys.modules.get("hsa_elastica.engines.precompile")
            if precompile is not None:
                precompile.enable(None)  # a later build in this process compiles as usual


def _failed(exc: Exception) -> int:
    """Report ``exc``, a failure after the command started, in one line; exit code 1."""
    # (the module is not imported here: a failure may come from importing it)
    timeloop = sys.modules.get("hsa_elastica.engines.timeloop")
    failed = timeloop is not None and isinstance(exc, timeloop.SimulationFailed)
    message = f"{PROG}: {'simulation failed' if failed else type(exc).__name__}: {exc}"
    saved = getattr(exc, "saved_to", None)
    if saved is not None:
        message += f"; the run so far (not converged) was saved to {saved}"
    print(one_line(message), file=sys.stderr)
    return 1


def writable_kernel_cache() -> None:
    """A numba cache that cannot be written means compiling in every run, with one warning
    line (:func:`hsa_elastica.io.numba_cache.ensure_writable_cache`), not a traceback."""
    from hsa_elastica.io.numba_cache import ensure_writable_cache

    warning = ensure_writable_cache()
    if warning is not None:
        print(f"{PROG}: {warning}", file=sys.stderr)


def printable_output() -> None:
    """Messages that name a path print in any locale: on a stream whose encoding cannot take
    a character, undecodable bytes of a file name (held as surrogate escapes) are written
    back as they were and other characters as backslash escapes, instead of raising
    ``UnicodeEncodeError`` after the work is done."""
    import codecs

    def escape(error: UnicodeError) -> tuple[str, int]:
        if not isinstance(error, UnicodeEncodeError):
            raise error
        chunk = error.object[error.start:error.end]
        name = "surrogateescape" if all("\udc80" <= c <= "\udcff" for c in chunk) else "backslashreplace"
        return codecs.lookup_error(name)(error)  # type: ignore[return-value]

    try:
        codecs.lookup_error(_ERRORS)
    except LookupError:
        codecs.register_error(_ERRORS, escape)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) in ("strict", "surrogateescape"):
            try:
                reconfigure(errors=_ERRORS)
            except (ValueError, OSError):  # a stream that cannot change (already written to)
                pass


#: the error handler of :func:`printable_output`
_ERRORS = "hsa-elastica-printable"
