"""The Gymnasium envs' first use on a cold cache, and processes taking turns on one cache.

What is checked: a cold env's first reset runs ``hsa-elastica compile`` for its engine's kernels
in a child interpreter (the command line, the package first on the child's ``PYTHONPATH``),
once per process even from several threads, and not at all when switched off or warm; the
child command itself runs (warm: nothing to compile, exit 0); two processes precompiling into
one cache take turns on its lock file (the second waits, saying so, until the first is done).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hsa_elastica.engines import precompile

ROOT = Path(__file__).resolve().parents[1]


class _Runs:
    """A stand-in for ``subprocess.run`` that records its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []

    def __call__(self, args: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        time.sleep(0.2)  # long enough for a second thread to arrive while it runs
        self.calls.append((list(args), dict(kwargs["env"])))
        return subprocess.CompletedProcess(args, 0)


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> _Runs:
    """Every command cold, nothing run yet in this process, the child recorded not run."""
    runs = _Runs()
    monkeypatch.setattr(precompile, "is_cold", lambda *a, **k: True)
    monkeypatch.setattr(precompile, "_FIRST_USE_DONE", set())
    monkeypatch.setattr(precompile.subprocess, "run", runs)
    monkeypatch.delenv("HSA_ELASTICA_PRECOMPILE", raising=False)
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    return runs


def test_a_cold_first_use_compiles_in_a_child_once_per_process(cold: _Runs) -> None:
    out = io.StringIO()
    threads = [threading.Thread(target=precompile.precompile_first_use, args=("envs", out))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cold.calls) == 1  # the other threads waited and found it done
    args, env = cold.calls[0]
    assert args == [sys.executable, "-m", "hsa_elastica.cli", "compile", "--command", "envs"]
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)
    assert "first use only" in out.getvalue()
    assert precompile.precompile_first_use("envs", out) is False
    assert precompile.precompile_first_use("primitive", out) is True  # another command
    assert [c[0][-1] for c in cold.calls] == ["envs", "primitive"]


def test_switched_off_or_warm_runs_no_child(cold: _Runs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HSA_ELASTICA_PRECOMPILE", "0")
    assert precompile.precompile_first_use("envs", io.StringIO()) is False
    monkeypatch.delenv("HSA_ELASTICA_PRECOMPILE")
    monkeypatch.setattr(precompile, "_FIRST_USE_DONE", set())
    monkeypatch.setattr(precompile, "is_cold", lambda *a, **k: False)
    assert precompile.precompile_first_use("envs", io.StringIO()) is False
    assert cold.calls == []


def test_a_failing_child_leaves_the_compilation_to_the_run(cold: _Runs,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("no interpreter")

    monkeypatch.setattr(precompile.subprocess, "run", broken)
    out = io.StringIO()
    assert precompile.precompile_first_use("envs", out) is False
    assert "parallel compilation skipped (OSError: no interpreter)" in out.getvalue()


def test_the_envs_first_reset_asks_for_their_engines_kernels(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hsa_elastica.envs.hsa_robot import HSARobotEnv

    asked: list[str] = []
    monkeypatch.setattr(precompile, "precompile_first_use", lambda command: asked.append(command))
    implicit = HSARobotEnv(discretization="coarse")
    explicit = HSARobotEnv(discretization="coarse", integrator="explicit")
    assert (implicit.kernel_command, explicit.kernel_command) == ("envs", "primitive")
    implicit.reset(seed=0)
    implicit.reset(seed=1)  # restores the engine built: nothing to compile
    assert asked == ["envs"]
    assert HSARobotEnv(discretization="coarse", fast=False,
                       integrator="explicit").kernel_command == "primitive"


def test_the_child_command_runs() -> None:
    # the cache is warm in the test session: nothing to compile, exit 0
    done = subprocess.run(precompile._compile_command("envs") + ["--quiet"], cwd=ROOT,
                          env=precompile._child_environment(), capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr


HOLD = """
import sys
from hsa_elastica.engines import precompile
with precompile._taking_turns(None, True):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_two_processes_take_turns_on_the_cache() -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLD], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True,
                              env=precompile._child_environment())
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        out = io.StringIO()
        acquired = threading.Event()

        def take() -> None:
            with precompile._taking_turns(out, False):
                acquired.set()

        waiter = threading.Thread(target=take)
        waiter.start()
        assert not acquired.wait(1.0)  # held by the other process
        assert holder.stdin is not None
        holder.stdin.close()  # the holder ends, its lock goes with it
        assert acquired.wait(60.0)
        waiter.join()
        assert "waiting for another process" in out.getvalue()
    finally:
        holder.kill()
        holder.wait()
