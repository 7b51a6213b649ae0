"""Ctrl-C held back while a start-up that must not be cut in half runs.

An interrupt raised inside a C extension's module initialisation (numpy, numba, VTK) surfaces
as ``ImportError: initialization failed``, and one raised while Dask's ``LocalCluster`` starts
its worker processes leaves them half-started, so Dask's exit handler prints a traceback.
:func:`deferred_interrupts` records the Ctrl-C instead and lets the caller act on it once the
start-up is complete (close what it started, then raise :class:`KeyboardInterrupt`).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["deferred_interrupts"]


@contextmanager
def deferred_interrupts() -> Iterator[list[int]]:
    """Within the block, SIGINT is appended to the yielded list instead of raising
    :class:`KeyboardInterrupt`; the caller checks the list after the block.  Only in the main
    thread with Python's default SIGINT handler installed (otherwise a no-op: the list stays
    empty and interrupts act as they would)."""
    pending: list[int] = []
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield pending
        return
    signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield pending
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
