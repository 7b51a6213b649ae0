"""Warnings of the package held back while a step runs whose outcome they do not describe.

A solve that runs another solve as a means to an end (the static solver asking the dynamic
relaxation which mirror branch it reaches, a dynamic fallback, a dataset's warm-up pose) gets
that inner solve's warnings (e.g. "settled on an unstable equilibrium: not converged") about a
result that is not the one returned.  :func:`held_warnings` collects them instead of showing
them; the caller then reports, in one line, what happened to the result it returns (or drops
them, for a result it discards).  Records below ``WARNING`` are passed on unchanged when the
block ends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PACKAGE_LOGGER", "held_warnings"]

#: the logger every module of the package logs under (``logging.getLogger(__name__)``)
PACKAGE_LOGGER = "hsa_elastica"


class _Hold(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def held_warnings() -> Iterator[list[str]]:
    """Inside the block the package's log records reach no handler; the texts of its warnings
    (and errors) are appended to the yielded list, in order, and the records below ``WARNING``
    are handled as usual when the block ends (single-threaded use: the package logger's
    handlers and propagation are swapped for the block)."""
    logger = logging.getLogger(PACKAGE_LOGGER)
    hold = _Hold()
    saved = (logger.handlers[:], logger.propagate)
    logger.handlers = [hold]
    logger.propagate = False
    texts: list[str] = []
    try:
        yield texts
    finally:
        logger.handlers, logger.propagate = saved
        for record in hold.records:
            if record.levelno >= logging.WARNING:
                texts.append(record.getMessage())
            else:
                logging.getLogger(record.name).handle(record)
