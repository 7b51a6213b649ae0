"""Progress bars that show on a terminal, a pseudo-terminal and in Jupyter, and stay out of logs.

One constructor for every progress bar of the package (simulation, settling, rendering,
datasets), on tqdm's ``tqdm.auto`` (a widget in Jupyter, text elsewhere).  Two things it fixes
over a bare ``tqdm(...)``:

* a pseudo-terminal that reports a size of 0 x 0 (``script``, a pty opened by another program,
  many CI and container consoles) made tqdm hide the bar (0 rows) and print an empty line; the
  size then comes from :func:`shutil.get_terminal_size` (``COLUMNS``/``LINES`` or 80 x 24);
* in Jupyter stderr is no terminal, yet a bar is wanted: bars show when stderr is a terminal or
  the code runs in an IPython kernel, and are silent otherwise (files, pipes, CI logs).
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

__all__ = ["progress_bar", "interactive", "keep_alive"]


def interactive() -> bool:
    """True when a person is watching: stderr is a terminal, or an IPython kernel runs this."""
    with suppress(AttributeError, ValueError):
        if sys.stderr.isatty():
            return True
    return "ipykernel" in sys.modules


def progress_bar(iterable: Any = None, *, total: float | None = None, desc: str = "",
                 unit: str = "it", enabled: bool = True, **kwargs: Any) -> Any:
    """A tqdm bar (``tqdm.auto``) over ``iterable`` (or updated by hand), shown only when
    :func:`interactive` and ``enabled``; ``kwargs`` go to tqdm (``bar_format``, ``delay``,
    ...)."""
    from tqdm.auto import tqdm

    show = enabled and interactive()
    if show and "ipykernel" not in sys.modules:
        try:
            size = os.get_terminal_size(sys.stderr.fileno())
            width, height = size.columns, size.lines
        except (OSError, ValueError, AttributeError):
            width = height = 0
        if width <= 0 or height <= 0:  # a pty without a size: tqdm would draw nothing
            fallback = shutil.get_terminal_size((80, 24))
            kwargs.setdefault("ncols", fallback.columns)
            kwargs.setdefault("nrows", fallback.lines)
    return tqdm(iterable, total=total, desc=desc, unit=unit, disable=not show, **kwargs)


@contextmanager
def keep_alive(bar: Any, every: float = 1.0) -> Iterator[Any]:
    """Redraw ``bar`` every ``every`` [s] from a background thread while the block runs, so
    that its elapsed time moves on a terminal while no item completes (tqdm redraws only on
    an update: a dataset's first chunk, solved by workers that are still starting, left the
    terminal unchanged for 3 s).  Nothing is started for a disabled bar."""
    if getattr(bar, "disable", True):
        yield bar
        return
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(every):
            bar.refresh()

    thread = threading.Thread(target=tick, name="progress-keep-alive", daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        stop.set()
        thread.join()
