"""``hsa-elastica`` command-line tool: one module per subcommand.

Subcommands: ``primitive``, ``steady-state``, ``dataset``, ``render``, ``view``, ``plot``,
``params``, ``calibrate``, ``compile`` (``hsa-elastica COMMAND --help`` lists each one's
options with their defaults and units).  Each subcommand module has
``NAME``, ``add_parser(subparsers)`` and ``run(args) -> exit code``; the shared argument types,
option groups and the save/render step live in :mod:`hsa_elastica.cli.common` (also used by the
scenario scripts).

Set ``HSA_ELASTICA_DEBUG=1`` to get the traceback of an unexpected error.  ``hsa-elastica
--version`` prints the package version.

Exit codes: 0 success, 1 the simulation failed (diverged; ``--out`` still receives the run
recorded so far, marked ``"converged": false, "diverged": true``), 2 bad input -- parameters,
flags and output paths are all checked before simulating -- always a one-line message on
stderr, no traceback; 130 interrupted (also during start-up).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from hsa_elastica.cli.common import PROG, Parser, UsageError, announce_compile, one_line

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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hsa-elastica`` console script; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        if args.command in COMPILING:
            quiet = bool(getattr(args, "quiet", False))
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
        import os

        if os.environ.get("HSA_ELASTICA_DEBUG"):
            raise
        from hsa_elastica.engines.timeloop import SimulationDiverged

        kind = "simulation failed" if isinstance(exc, SimulationDiverged) else type(exc).__name__
        message = f"{PROG}: {kind}: {exc}"
        saved = getattr(exc, "saved_to", None)
        if saved is not None:
            message += f"; the run so far (not converged) was saved to {saved}"
        print(one_line(message), file=sys.stderr)
        return 1
    finally:
        from hsa_elastica.engines.precompile import enable

        enable(None)  # a later build in this process (a library call) compiles as usual
