"""The command line in a hostile environment: an ASCII locale with non-UTF-8 or non-ASCII
output paths, a numba cache that cannot be written, a Ctrl-C inside an import.

Each case ends as the reliability statement says: the work is done (or refused before it), one
line on stderr, no traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_reliability_files import ANGLES, canned_solve  # noqa: F401 - a fixture

from hsa_elastica.cli import main
from hsa_elastica.io import numba_cache

CLI = [sys.executable, "-m", "hsa_elastica.cli"]


def _ascii_locale() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIO"))}
    env.update(LC_ALL="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    return env


# --------------------------------------------------------------------------------------------
# file names in an ASCII locale
# --------------------------------------------------------------------------------------------
def test_non_utf8_and_non_ascii_paths_in_an_ascii_locale(tmp_path: Path) -> None:
    """``LC_ALL=C`` (no UTF-8 mode): a Parquet table, a JSON file and a run directory whose
    names are a non-UTF-8 byte (0xff) or UTF-8 that the locale cannot decode (é) are written
    (pyarrow refused such paths after the simulation: exit 1, UnicodeEncodeError), and the
    messages that name them print."""
    base = os.fsencode(tmp_path)
    (tmp_path / "a.csv").write_text("angle_0,angle_1,angle_2,angle_3\n0,0,0,0\n")
    table, page, run = base + b"/t\xff.parquet", base + b"/caf\xc3\xa9.json", base + b"/r\xffn"
    env = _ascii_locale()
    commands: list[list[str | bytes]] = [
        [*CLI, "steady-state", "--angles-csv", str(tmp_path / "a.csv"), "--out", table],
        [*CLI, "steady-state", "--angles", "0.1", "0", "0", "0", "--json", page],
        [*CLI, "primitive", "elongation", "--duration", "0.01", "--out", run],
    ]
    for argv in commands:
        proc = subprocess.run(argv, env=env, capture_output=True, timeout=900, check=False)
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        assert b"Traceback" not in proc.stderr
    assert os.path.getsize(table) > 0 and os.path.getsize(page) > 0
    assert sorted(os.listdir(run)) == [b"diagnostics.parquet", b"params.yaml", b"summary.json"]
    # the summary line named the table with its own bytes
    again = [*commands[0], "--overwrite"]
    assert b"t\xff.parquet" in subprocess.run(again, env=env, capture_output=True, timeout=900,
                                              check=False).stdout


def test_messages_naming_a_path_do_not_fail_on_a_strict_ascii_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message with a file name the output stream cannot encode (ASCII, strict errors, as
    with ``PYTHONIOENCODING=ascii``) is printed with escapes instead of raising after the work
    was done."""
    import io

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stderr", stream)
    assert main(["params", "--dump", str(tmp_path / "café.yaml")]) == 0
    stream.flush()
    assert b"caf\\xe9.yaml" in raw.getvalue()
    assert (tmp_path / "café.yaml").is_file()


# --------------------------------------------------------------------------------------------
# a numba cache that cannot be written
# --------------------------------------------------------------------------------------------
@pytest.fixture
def read_only_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every cache directory numba could use is read-only (a read-only install, a read-only
    ``NUMBA_CACHE_DIR``), except a temporary one of :mod:`hsa_elastica.io.numba_cache`."""
    from numba.core import caching, config

    real = caching._CacheLocator.ensure_cache_path

    def read_only(self: caching._CacheLocator) -> None:
        if "hsa-elastica-numba-" not in self.get_cache_path():
            raise PermissionError(30, "Read-only file system", self.get_cache_path())
        real(self)

    monkeypatch.setattr(caching._CacheLocator, "ensure_cache_path", read_only)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "read-only"))
    config.reload_config()
    yield tmp_path
    monkeypatch.undo()
    config.reload_config()


def test_read_only_kernel_cache_compiles_with_one_warning(read_only_caches: Path) -> None:
    """With no writable cache a ``cache=True`` kernel's module raised ``RuntimeError: cannot
    cache function`` at import (two chained tracebacks on the command line); after
    ``ensure_writable_cache`` (one warning line) such a module imports and its kernel runs."""
    assert "NUMBA_CACHE_DIR" in (numba_cache.cache_problem() or "")
    module = read_only_caches / "cached_kernel_probe.py"
    module.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef plus_one(x):\n"
                      "    return x + 1\n")
    sys.path.insert(0, str(read_only_caches))
    try:
        with pytest.raises(RuntimeError, match="cannot cache function"):
            __import__("cached_kernel_probe")
        sys.modules.pop("cached_kernel_probe", None)
        warning = numba_cache.ensure_writable_cache()
        assert warning is not None and "\n" not in warning and "NUMBA_CACHE_DIR" in warning
        assert numba_cache.cache_problem() is None
        assert __import__("cached_kernel_probe").plus_one(1) == 2
    finally:
        sys.path.remove(str(read_only_caches))
        sys.modules.pop("cached_kernel_probe", None)


@pytest.mark.usefixtures("canned_solve")
def test_cli_with_a_read_only_kernel_cache_says_it_in_one_line(
    read_only_caches: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """A command that runs kernels (here steady-state, the solver canned) warns in one line."""
    assert main([*ANGLES, "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning: numba cannot cache the kernels" in err, err


# --------------------------------------------------------------------------------------------
# Ctrl-C inside an import
# --------------------------------------------------------------------------------------------
def test_interrupt_that_breaks_an_import_exits_130(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Ctrl-C during the import of a compiled extension surfaces as ``ImportError:
    initialization failed`` (it exited 1 with that line): the command says "interrupted",
    exit 130.  The module below does what such an extension does."""
    (tmp_path / "extension_like.py").write_text(
        "import os, signal, time\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(5)\n"
        "except KeyboardInterrupt:\n"
        "    raise ImportError('initialization failed') from None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from hsa_elastica.cli import params as params_command

    monkeypatch.setattr(params_command, "run", lambda args: __import__("extension_like") and 0)
    assert main(["params", "--dump", str(tmp_path / "p.yaml")]) == 130
    assert capsys.readouterr().err == "hsa-elastica: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # a real ImportError (no Ctrl-C) is still a failure: exit 1
    (tmp_path / "broken.py").write_text("raise ImportError('initialization failed')\n")
    monkeypatch.setattr(params_command, "run", lambda args: __import__("broken") and 0)
    assert main(["params", "--dump", str(tmp_path / "p.yaml")]) == 1
    assert "ImportError: initialization failed" in capsys.readouterr().err
