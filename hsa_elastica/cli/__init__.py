"""``hsa-elastica`` command-line tool: one module per subcommand.

Subcommands: ``primitive``, ``steady-state``, ``dataset``, ``render``, ``params`` (``hsa-elastica COMMAND
--help`` lists each one's options with their defaults and units).  Each subcommand module has
``NAME``, ``add_parser(subparsers)`` and ``run(args) -> exit code``; the shared argument types,
option groups and the save/render step live in :mod:`hsa_elastica.cli.common` (also used by the
scenario scripts).

Set ``HSA_ELASTICA_DEBUG=1`` to get the traceback of an unexpected error.

Exit codes: 0 success, 1 the simulation failed (diverged), 2 bad input -- always a one-line
message on stderr, no traceback; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Callable, Sequence

from hsa_elastica.cli import dataset as _dataset
from hsa_elastica.cli import params as _params
from hsa_elastica.cli import primitive as _primitive
from hsa_elastica.cli import render as _render
from hsa_elastica.cli import steady_state as _steady_state
from hsa_elastica.cli.common import PROG, Parser, UsageError, one_line

__all__ = ["main", "build_parser"]

#: subcommand modules, in the order ``--help`` lists them
SUBCOMMANDS: tuple[ModuleType, ...] = (_primitive, _steady_state, _dataset, _render, _params)
_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {m.NAME: m.run for m in SUBCOMMANDS}


def build_parser() -> argparse.ArgumentParser:
    """The ``hsa-elastica`` argument parser with every subcommand."""
    parser = Parser(
        prog=PROG,
        description="Simulate Handed Shearing Auxetic (HSA) robots (PyElastica plugin). "
        "SI units: angles in rad, lengths in m, times in s.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


#: subcommands that run a simulation (and may have to compile the numba kernels first)
_SIMULATING = frozenset({_primitive.NAME, _steady_state.NAME})


def _announce_compile() -> None:
    """Say so on stderr when the numba cache is cold (the first run compiles for a minute+)."""
    from hsa_elastica.engines.fused import COMPILE_NOTICE, kernels_cached

    if not kernels_cached():
        print(COMPILE_NOTICE, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hsa-elastica`` console script; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        if args.command in _SIMULATING and not getattr(args, "quiet", False):
            _announce_compile()
        return _COMMANDS[args.command](args)
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
        print(one_line(f"{PROG}: {kind}: {exc}"), file=sys.stderr)
        return 1
