"""Ctrl-C held back while a start-up that must not be cut in half runs.

An interrupt raised inside a C extension's module initialisation (numpy, numba, VTK) surfaces
as ``ImportError: initialization failed``, and one raised while Dask's ``LocalCluster`` starts
its worker processes leaves them half-started, so Dask's exit handler prints a traceback.
:func:`deferred_interrupts` records the Ctrl-C instead and lets the caller act on it once the
start-up is complete (close what it started, then raise :class:`KeyboardInterrupt`).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["deferred_interrupts", "recorded_interrupts"]


def _raises_interrupt(handler: object) -> bool:
    """Python's default SIGINT handler, or :func:`recorded_interrupts`' (both raise
    KeyboardInterrupt)."""
    return handler is signal.default_int_handler or bool(
        getattr(handler, "raises_keyboard_interrupt", False))


_REDELIVERY_DELAY = 0.01  # s: long enough for a C callback to return, short for a person


def _interrupt_main(active: list[bool]) -> None:
    import _thread

    if active:
        _thread.interrupt_main(signal.SIGINT)


def _installable() -> bool:
    return (threading.current_thread() is threading.main_thread()
            and _raises_interrupt(signal.getsignal(signal.SIGINT)))


@contextmanager
def recorded_interrupts() -> Iterator[list[int]]:
    """Within the block, SIGINT raises :class:`KeyboardInterrupt` as usual and is also
    appended to the yielded list, so that an exception a Ctrl-C caused inside C code (an
    extension module's initialisation turns it into ``ImportError: initialization failed``)
    can be told from a failure: the list is not empty.  A Ctrl-C that lands where Python
    drops exceptions (a ctypes callback, which only prints "Exception ignored") is delivered
    again instead of being lost.  The same conditions as
    :func:`deferred_interrupts` (otherwise the list stays empty)."""
    seen: list[int] = []
    if not _installable():
        yield seen
        return

    def record(signum: int, frame: object) -> None:
        seen.append(signum)
        raise KeyboardInterrupt

    record.raises_keyboard_interrupt = True  # type: ignore[attr-defined]
    shown = sys.unraisablehook

    def deliver_again(unraisable: object) -> None:
        # A KeyboardInterrupt raised where Python cannot propagate it (a ctypes callback:
        # llvmlite's object-cache notification while numba compiles; a __del__) is printed
        # as "Exception ignored ..." and dropped, and the run would go on to exit 0.  The
        # interrupt is delivered to the main thread once more a moment later, when it is
        # most likely back in ordinary Python code (and again if it is not).
        if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
            again = threading.Timer(_REDELIVERY_DELAY, _interrupt_main, args=(active,))
            again.daemon = True  # (an exit does not wait for it)
            again.start()
        else:
            shown(unraisable)  # type: ignore[arg-type]

    active = [True]  # (a delivery due after the block would land anywhere: it is not made)
    previous = signal.signal(signal.SIGINT, record)
    sys.unraisablehook = deliver_again
    try:
        yield seen
    finally:
        active.clear()
        signal.signal(signal.SIGINT, previous)
        if sys.unraisablehook is deliver_again:
            sys.unraisablehook = shown


@contextmanager
def deferred_interrupts() -> Iterator[list[int]]:
    """Within the block, SIGINT is appended to the yielded list instead of raising
    :class:`KeyboardInterrupt`; the caller checks the list after the block.  Only in the main
    thread with Python's default SIGINT handler (or :func:`recorded_interrupts`') installed
    (otherwise a no-op: the list stays empty and interrupts act as they would)."""
    pending: list[int] = []
    if not _installable():
        yield pending
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield pending
    finally:
        signal.signal(signal.SIGINT, previous)
