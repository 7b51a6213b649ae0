"""Progress bars show on a pseudo-terminal of unknown size and stay out of pipes and files.

A pty opened by another program often reports 0 x 0; tqdm then hid the bar and printed only an
empty line (the bars of ``primitive`` and ``dataset`` left a blank line).  The child below runs
on a fresh pty (Python's ``pty`` module, size never set) and its output is read back.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import time
    from hsa_elastica.io.progress import progress_bar
    bar = progress_bar(total=3.0, desc="simulated", unit="s")
    for _ in range(3):
        time.sleep(0.05)
        bar.update(1.0)
    bar.close()
    print("done")
""")


def _run_on_pty() -> str:
    master, slave = pty.openpty()  # no TIOCSWINSZ: the size reads 0 x 0
    try:
        proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=slave, stdout=slave,
                                stderr=slave, close_fds=True)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the pty
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=60)
    finally:
        os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a POSIX pty")
def test_bar_is_drawn_on_a_pty_of_unknown_size() -> None:
    out = _run_on_pty()
    assert "simulated: 100%" in out and "3/3" in out.replace(".0", ""), repr(out)


def test_bar_is_silent_in_a_pipe() -> None:
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == "done\n" and proc.stderr == ""


def test_keep_alive_redraws_a_bar_while_nothing_completes() -> None:
    """A dataset's first chunk can take seconds (workers starting): ``keep_alive`` redraws
    the bar from a thread meanwhile (its elapsed time moves), and starts nothing for a
    disabled bar (pipes, logs).  Counts redraws, not time: 0.05 s period over >= 0.3 s."""
    import io
    import threading
    import time

    from tqdm import tqdm

    from hsa_elastica.io.progress import keep_alive

    class Counting(tqdm):  # type: ignore[misc]
        redraws = 0

        def refresh(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            type(self).redraws += 1
            return super().refresh(*args, **kwargs)

    bar = Counting(total=3, file=io.StringIO(), disable=False)
    with keep_alive(bar, every=0.05):
        time.sleep(0.3)
    bar.close()
    assert Counting.redraws >= 3
    assert not any(t.name == "progress-keep-alive" for t in threading.enumerate())
    with keep_alive(tqdm(total=3, disable=True), every=0.05):
        assert not any(t.name == "progress-keep-alive" for t in threading.enumerate())
