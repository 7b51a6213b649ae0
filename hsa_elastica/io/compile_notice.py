"""Say on stderr when numba compiles, what, and for how long: no silent first run.

The package's kernels are compiled on first use and cached on disk (``cache=True``), so only the
first run of an entry point (or the first after an upgrade, or with an empty
``NUMBA_CACHE_DIR``) compiles.  numba broadcasts a ``"numba:compile"`` event for every
compilation that misses the cache (loads from the cache send none), through its public event
API (:mod:`numba.core.event`).  :func:`announce_compilation` registers a listener for it that

* prints one line when the first kernel starts compiling
  (``compiling numba kernels (first run only; cached afterwards)...``),
* then, while kernels compile, the elapsed time and the kernel being compiled: on a terminal
  a status line rewritten every 0.5 s, elsewhere (logs, CI, a pipe read by another program) a
  line every second, so that no entry point is silent for more than 2 s while it compiles,
* and a summary once compilation has been idle for a second
  (``compiled 37 kernels in 41.2 s``).

Every command of the ``hsa-elastica`` CLI installs it (``--quiet`` does not).  In Python, the
builders (:func:`~hsa_elastica.robots.builders.build_robot`, ``build_fast_robot``,
``build_stack``, so also the Gymnasium envs and the steady-state solvers) install it through
:func:`announce_if_cold` when the package's kernels are not in numba's cache yet, unless
``HSA_ELASTICA_COMPILE_NOTICE=0`` is set; :func:`announce_compilation` installs it
unconditionally.  Installing it twice is harmless.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

__all__ = ["CompileNotice", "announce_compilation", "announce_if_cold", "parallel_progress",
           "suppress", "withdraw"]

#: seconds between two heartbeat lines when stderr is not a terminal: the thread wakes every
#: ``min(period, IDLE) / 4`` s, so lines come 1.0-1.25 s apart, under the 2 s of silence that
#: reads as "hung" with room for a busy machine's scheduling delays
LOG_PERIOD = 1.0
#: seconds between two rewrites of the status line on a terminal
TTY_PERIOD = 0.5
#: seconds without compilation after which the summary is printed
IDLE = 1.0


class CompileNotice:
    """numba compile-event listener that reports progress on ``stream`` (see module doc)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from numba.core.event import Listener

        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._lock = threading.Lock()
        self._depth = 0
        self._current = ""
        self._count = 0
        self._started: float | None = None  # start of the present burst of compilations
        self._last_end = 0.0
        self._last_print = 0.0
        self._thread: threading.Thread | None = None
        notice = self

        class _Listener(Listener):  # type: ignore[misc]
            def on_start(self, event: Any) -> None:
                notice._on_start(event)

            def on_end(self, event: Any) -> None:
                notice._on_end(event)

        self.listener = _Listener()

    # ---------------------------------------------------------------------------- events
    def _on_start(self, event: Any) -> None:
        name = _kernel_name(event)
        with self._lock:
            self._depth += 1
            self._count += 1
            if self._depth == 1:
                self._current = name
            if self._started is None:
                self._started = time.monotonic()
                self._last_print = self._started
                self._write("compiling numba kernels (first run only; cached afterwards)...\n")
                if self._thread is None or not self._thread.is_alive():
                    self._thread = threading.Thread(target=self._heartbeat, daemon=True,
                                                    name="hsa-elastica-compile-notice")
                    self._thread.start()

    def _on_end(self, event: Any) -> None:
        with self._lock:
            self._depth = max(0, self._depth - 1)
            self._last_end = time.monotonic()

    # ---------------------------------------------------------------------------- output
    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):  # a closed or broken stderr must not stop the run
            self.stream.write(text)
            self.stream.flush()

    def _heartbeat(self) -> None:
        period = TTY_PERIOD if self.tty else LOG_PERIOD
        while True:
            time.sleep(min(period, IDLE) / 4)
            with self._lock:
                if self._started is None:
                    return
                now = time.monotonic()
                elapsed = now - self._started
                if self._depth == 0 and now - self._last_end > IDLE:
                    spent = self._last_end - self._started
                    clear = "\r\033[K" if self.tty else ""
                    self._write(f"{clear}compiled {self._count} kernels in {spent:.1f} s\n")
                    self._started = None
                    self._count = 0
                    return
                if now - self._last_print >= period:
                    self._last_print = now
                    if self.tty:
                        self._write(f"\r\033[Kcompiling {self._current} ({elapsed:.0f} s)")
                    else:
                        self._write(f"  still compiling ({elapsed:.0f} s, {self._count} kernels, "
                                    f"now {self._current})\n")


def _kernel_name(event: Any) -> str:
    dispatcher = (event.data or {}).get("dispatcher")
    func = getattr(dispatcher, "py_func", None)
    if func is None:
        return "a kernel"
    module = getattr(func, "__module__", "") or ""
    return f"{module.rsplit('.', 1)[-1]}.{func.__name__}" if module else func.__name__


_INSTALLED: CompileNotice | None = None


def announce_compilation(stream: TextIO | None = None) -> CompileNotice:
    """Report numba compilations on ``stream`` (default stderr) from now on (module doc).

    Returns the listener; a second call returns the first one.
    """
    global _INSTALLED
    if _INSTALLED is None:
        from numba.core import event

        _INSTALLED = CompileNotice(stream)
        event.register("numba:compile", _INSTALLED.listener)
    return _INSTALLED


_SUPPRESSED = False


def suppress() -> None:
    """No automatic notice from :func:`announce_if_cold` in this process (``--quiet``)."""
    global _SUPPRESSED
    _SUPPRESSED = True


def announce_if_cold(
    is_cached: Callable[[], bool], stream: TextIO | None = None,
) -> CompileNotice | None:
    """:func:`announce_compilation` unless ``is_cached()`` (the builders pass
    :func:`hsa_elastica.robots.builders.kernels_cached`: the fused loop, the package's largest
    kernel, and the entry points of the run's time integrator have entries in numba's on-disk
    cache; passed in because ``io`` is below ``engines``), i.e. if this is a first run that
    will compile for a minute or more; nothing if it is cached, if :func:`suppress` was called or if the environment sets
    ``HSA_ELASTICA_COMPILE_NOTICE=0``.  The notice prints only while kernels compile, so
    installing it costs nothing when they load from the cache."""
    if _SUPPRESSED or os.environ.get("HSA_ELASTICA_COMPILE_NOTICE", "1") == "0":
        return None
    if _INSTALLED is not None:
        return _INSTALLED
    return None if is_cached() else announce_compilation(stream)


def withdraw() -> None:
    """Stop the notice of :func:`announce_compilation` in this process (a worker forked from a
    process that installed it: its parent reports)."""
    global _INSTALLED
    if _INSTALLED is not None:
        from numba.core import event

        with contextlib.suppress(Exception):
            event.unregister("numba:compile", _INSTALLED.listener)
        _INSTALLED = None


def _short(name: str) -> str:
    """``hsa_elastica.engines.fused:advance`` -> ``fused.advance``."""
    module, _, func = name.partition(":")
    return f"{module.rsplit('.', 1)[-1]}.{func}" if func else name


@contextlib.contextmanager
def parallel_progress(total: int, workers: int, stream: TextIO | None = None,
                      quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """Progress of ``total`` kernels compiled by ``workers`` other processes
    (:mod:`hsa_elastica.engines.precompile`): yields ``tick(name)``, to call as each one is
    done.  On a terminal a progress bar (tqdm) with the count and the last kernel; elsewhere a
    first line, a line every second (as the notice's heartbeat) and a summary; nothing if
    ``quiet``."""
    from hsa_elastica.io.progress import interactive, keep_alive, progress_bar

    out = stream if stream is not None else sys.stderr
    if quiet:
        yield lambda name: None
        return
    started = time.monotonic()
    processes = f"{workers} process{'es' if workers > 1 else ''}"
    if stream is None and interactive():
        with contextlib.suppress(OSError, ValueError):
            print(f"compiling numba kernels in {processes} (first run only; cached "
                  "afterwards)...", file=sys.stderr, flush=True)
        bar = progress_bar(total=total, desc="compiling", unit="kernel", leave=False)

        def tick_bar(name: str) -> None:
            bar.set_postfix_str(_short(name), refresh=False)
            bar.update(1)

        with bar, keep_alive(bar):
            yield tick_bar
        spent = time.monotonic() - started
        with contextlib.suppress(OSError, ValueError):
            print(f"compiled {bar.n} kernels in {processes} in {spent:.1f} s", file=sys.stderr,
                  flush=True)
        return
    state: dict[str, Any] = {"done": 0, "last": ""}
    lock = threading.Lock()
    stop = threading.Event()

    def write(text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            out.write(text)
            out.flush()

    def heartbeat() -> None:
        while not stop.wait(LOG_PERIOD):
            with lock:
                write(f"  still compiling ({time.monotonic() - started:.0f} s, {state['done']} "
                      f"of {total} kernels, last {state['last'] or '-'})\n")

    def tick(name: str) -> None:
        with lock:
            state["done"] += 1
            state["last"] = _short(name)

    write(f"compiling numba kernels: {total} in {processes} (first run only; cached "
          "afterwards)...\n")
    thread = threading.Thread(target=heartbeat, daemon=True, name="hsa-elastica-compile-progress")
    thread.start()
    try:
        yield tick
    finally:
        stop.set()
        thread.join()
        done = state["done"] if state["done"] == total else f"{state['done']} of {total}"
        write(f"compiled {done} kernels in {processes} in {time.monotonic() - started:.1f} s\n")
