"""Every writer goes through the one safe write (``params.files.atomic_output``): on a
character device it writes in place and the node survives (the same inode), into a FIFO the
reader gets the whole file, on a /dev/full twin the failure is reported (exit 1 on the command
line) and the node survives too; no temporary file is left anywhere.

The device nodes are private twins made with ``mknod`` in the test's directory (1,3 is
/dev/null, 1,7 is /dev/full), so no test touches the machine's /dev; those tests need root
(skipped otherwise).  The solvers are replaced by canned results where the test is about files.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from test_reliability_files import ANGLES, canned_solve  # noqa: F401 - a fixture

from hsa_elastica.cli import main
from hsa_elastica.params import ParameterError, RobotParams, load_params
from hsa_elastica.params.files import atomic_output, write_atomic

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a device node needs root")

NULL, FULL = os.makedev(1, 3), os.makedev(1, 7)


def _node(path: Path, device: int) -> Path:
    os.mknod(path, stat.S_IFCHR | 0o666, device)
    return path


@contextmanager
def _private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The system temporary directory (where a device's staging file lies) made private, to
    check that nothing is left there."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    yield tmp
    assert list(tmp.iterdir()) == []


@contextmanager
def _reader(fifo: Path) -> Iterator[list[bytes]]:
    """A thread reading ``fifo`` to its end; the bytes are in the list once the block ends."""
    got: list[bytes] = []
    thread = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    thread.start()
    try:
        yield got
    finally:
        thread.join(timeout=2)
        if thread.is_alive():  # the writer never opened the pipe: release the reader
            with contextlib.suppress(OSError), open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
                pass
        thread.join(timeout=30)


# --------------------------------------------------------------------------------------------
# the writers: (name of the output, its magic bytes, write(path) -> exit code or 0)
# --------------------------------------------------------------------------------------------
def _state(path: Path) -> int:
    from hsa_elastica.engines.snapshot import Snapshot, save

    save(Snapshot(time=0.5, arrays={"x": np.arange(3.0)}, objects=[], schedules=[], control={},
                  engine="fused", model=RobotParams()), path)
    return 0


def _params_dump(path: Path) -> int:
    return main(["params", "--dump", str(path)])


def _json(path: Path) -> int:
    return main([*ANGLES, "--json", str(path), "--quiet"])


def _table(path: Path) -> int:
    csv = path.parent / "poses.csv"
    csv.write_text("angle_0,angle_1,angle_2,angle_3\n0,0,0,0\n0.1,0,0,0\n")
    return main(["steady-state", "--angles-csv", str(csv), "--out", str(path), "--quiet"])


def _run(path: Path) -> Path:
    from test_view_browser import synthetic_run

    return synthetic_run(path.parent / "run", n_t=4)


def _view(path: Path) -> int:
    return main(["view", str(_run(path)), "--html", str(path), "--quiet"])


def _plot(path: Path) -> int:
    return main(["plot", str(_run(path)), "--out", str(path), "--quiet"])


def _render(kind: str) -> Callable[[Path], int]:
    def write(path: Path) -> int:
        from hsa_elastica.io.render import render_still, render_video
        from hsa_elastica.io.rundir import load_run

        run = load_run(_run(path))
        if kind == ".png":
            render_still(run.diagnostics, run.params, path, window_size=(64, 48))
        else:
            render_video(run.diagnostics, run.params, path, n_frames=3,
                         hold=0.0, fps=10, window_size=(64, 48))
        return 0

    return write


WRITERS: dict[str, tuple[bytes, Callable[[Path], int]]] = {
    "state .npz": (b"PK\x03\x04", _state),
    "params YAML": (b"# hsa-elastica parameters", _params_dump),
    "--json": (b'{"platform_position_m"', _json),
    "table .parquet": (b"PAR1", _table),
    "table .csv": (b"platform_position_m_x,", _table),
    "view HTML": (b"<html>", _view),
    "plot PNG": (b"\x89PNG", _plot),
    "still PNG": (b"\x89PNG", _render(".png")),
    "video mp4": (b"ftyp", _render(".mp4")),
}
CLI = {"params YAML", "--json", "table .parquet", "table .csv", "view HTML", "plot PNG"}


def _named(tmp_path: Path, writer: str) -> Path:
    """The node's name: the extension its writer chooses the format by."""
    suffix = {"view HTML": ".html", "plot PNG": ".png", "still PNG": ".png",
              "video mp4": ".mp4", "state .npz": ".npz", "params YAML": ".yaml",
              "--json": ".json", "table .parquet": ".parquet", "table .csv": ".csv"}[writer]
    return tmp_path / f"out{suffix}"


@needs_root
@pytest.mark.usefixtures("canned_solve")
@pytest.mark.parametrize("writer", list(WRITERS))
def test_writer_into_a_device_keeps_the_node(writer: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A /dev/null twin stays the same character device (same inode), written in place."""
    node = _node(_named(tmp_path, writer), NULL)
    before = node.stat()
    with _private_tmp(tmp_path, monkeypatch):
        assert WRITERS[writer][1](node) == 0
    after = node.lstat()
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
    assert after.st_rdev == NULL


@pytest.mark.usefixtures("canned_solve")
@pytest.mark.parametrize("writer", list(WRITERS))
def test_writer_into_a_fifo_delivers_the_whole_file(writer: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A named pipe with a reader gets the file (its format's magic bytes near the start; the
    same bytes as a regular file for the text formats) and stays a FIFO."""
    fifo = _named(tmp_path, writer)
    os.mkfifo(fifo)
    magic, write = WRITERS[writer]
    with _private_tmp(tmp_path, monkeypatch), _reader(fifo) as got:
        assert write(fifo) == 0
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert got and magic in got[0][:64], got[0][:64] if got else "nothing read"


@needs_root
@pytest.mark.usefixtures("canned_solve")
@pytest.mark.parametrize("writer", list(WRITERS))
def test_writer_into_a_full_device_fails_and_keeps_the_node(
    writer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A /dev/full twin: the write fails (ENOSPC; on the command line exit 1, one line naming
    the path) and the node is neither replaced nor deleted."""
    node = _node(_named(tmp_path, writer), FULL)
    before = node.stat()
    with _private_tmp(tmp_path, monkeypatch):
        if writer in CLI:
            assert WRITERS[writer][1](node) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "No space left" in err and node.name in err, err
        else:
            with pytest.raises((OSError, ParameterError), match="No space left"):
                WRITERS[writer][1](node)
    after = node.lstat()
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


# --------------------------------------------------------------------------------------------
# the safe write itself
# --------------------------------------------------------------------------------------------
@needs_root
def test_a_library_that_reopens_and_removes_its_path_cannot_touch_the_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A writer that removes and recreates the path it is given (as pyarrow and ffmpeg may)
    works on a temporary file: the device node survives and receives the final bytes."""
    node = _node(tmp_path / "dev.bin", NULL)
    fifo = tmp_path / "pipe.bin"
    os.mkfifo(fifo)

    def rude(path: Path) -> None:
        path.write_bytes(b"first")
        path.unlink()
        path.write_bytes(b"second")

    with _private_tmp(tmp_path, monkeypatch):
        write_atomic(node, rude)
        with _reader(fifo) as got:
            write_atomic(fifo, rude)
    assert stat.S_ISCHR(node.lstat().st_mode) and got == [b"second"]


def test_a_failed_write_to_a_device_sends_nothing(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside the writer: nothing reaches the pipe (the reader sees end of file
    only when released), no temporary file is left."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with _private_tmp(tmp_path, monkeypatch), _reader(fifo) as got, \
            pytest.raises(KeyboardInterrupt), atomic_output(fifo) as tmp:
        tmp.write_text("partial")
        raise KeyboardInterrupt
    assert got == [b""]


@needs_root
def test_params_dump_into_a_device_without_extension_writes_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """``params --dump`` onto a device or FIFO whose name has no extension writes YAML (it was
    refused for the missing extension); a regular file still needs one."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with _reader(fifo) as got:
        assert main(["params", "--dump", str(fifo)]) == 0
    (tmp_path / "copy.yaml").write_bytes(got[0])
    assert load_params(tmp_path / "copy.yaml") == RobotParams()
    assert main(["params", "--dump", str(_node(tmp_path / "null", NULL))]) == 0
    capsys.readouterr()
    assert main(["params", "--dump", str(tmp_path / "plain")]) == 2
    assert "use a .yaml" in capsys.readouterr().err


@pytest.mark.usefixtures("canned_solve")
def test_symbolic_link_to_a_device_writes_the_device(tmp_path: Path) -> None:
    """A link to a FIFO: the reader behind the link gets the JSON, the link stays a link."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "out.json"
    link.symlink_to(fifo.name)
    with _reader(fifo) as got:
        assert main([*ANGLES, "--json", str(link), "--quiet"]) == 0
    assert link.is_symlink() and json.loads(got[0])["converged"] is True
