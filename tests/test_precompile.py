"""Kernels compiled ahead of a first run, in worker processes (``engines/precompile.py``).

What is checked: the kernel table describes what a run compiles (every cached kernel
specialisation a short ``primitive`` run compiles or loads is a row of the table, the callees
come first); the numba types survive the table's encoding; the scheduler starts a kernel only
after its callees and never two tasks of one kernel at once; worker processes really fill
numba's cache (a fresh process then loads the kernels without compiling); the progress lines
off a terminal; the CLI's bad input.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numpy as np
import pytest

from hsa_elastica.compat import numba_uses_cache
from hsa_elastica.engines import kernel_table, precompile
from hsa_elastica.io import compile_notice
from hsa_elastica.params import ParameterError, SimulationParams
from hsa_elastica.params.integrators import INTEGRATORS

ROOT = Path(__file__).resolve().parents[1]


class _Record(NamedTuple):
    a: Any
    b: Any


def test_types_survive_the_table_encoding() -> None:
    values = [
        np.zeros((3, 4)), np.zeros((3, 4))[:, ::2], np.zeros(5, dtype=np.int64), 1.5, 3, True,
        (np.zeros(2), np.zeros(2)), (1.0, np.zeros(3)), None,
        _Record(np.zeros(2), np.zeros((2, 2))), _Record(np.zeros(2), np.zeros(2)),
    ]
    for value in values:
        t = numba.typeof(value)
        assert precompile.decode_type(precompile.encode_type(t)) == t, value
    for t in (numba.types.literal(True), numba.types.literal(3), numba.types.boolean):
        assert precompile.decode_type(precompile.encode_type(t)) == t
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    t = numba.typeof(readonly)
    assert precompile.decode_type(precompile.encode_type(t)) == t


#: the table's commands: the CLI commands' and those the integrators add
TAGS = set(precompile.COMMANDS.values()) | {
    record.kernel_table for record in INTEGRATORS.values() if record.kernel_table}


def test_table_rows_resolve_and_list_callees_first() -> None:
    rows = kernel_table.KERNELS
    assert len(rows) > 50  # a cold primitive compiles ~160 specialisations
    seen = set()
    for i, (name, sig, callees, commands) in enumerate(rows):
        assert all(c < i for c in callees), name  # callees before callers
        assert set(commands) <= TAGS
        dispatcher = precompile.kernel(name)
        assert numba_uses_cache(dispatcher), name
        assert len(precompile._signature(i)) == len(sig)
        assert (name, sig) not in seen
        seen.add((name, sig))
    for command in (*TAGS, "dataset", "calibrate"):
        assert precompile.entries(command), command


RECORD = textwrap.dedent("""
    import json, sys
    from hsa_elastica.cli import main
    code = main(["primitive", "bend_north", "--duration", "0.05", "--quiet", *sys.argv[1:]])
    from hsa_elastica.engines.precompile import compiled_here
    print(json.dumps([[name, sig] for name, sig, _ in compiled_here()]))
    sys.exit(code)
""")


def _freeze(x: Any) -> Any:
    return tuple(_freeze(v) for v in x) if isinstance(x, list) else x


@pytest.mark.parametrize("integrator", ["explicit", "implicit"])
def test_a_run_compiles_nothing_outside_the_table(integrator: str) -> None:
    """Every cached kernel a short primitive run compiles or loads is a row of the table
    (regenerate with benchmarks/make_kernel_table.py when this fails), on either integrator.
    Any command's row: a run loads the static solver's kernels when another command has cached
    them, and runs them as Python otherwise (engines/uncompiled.py)."""
    env = {**os.environ, "HSA_ELASTICA_PRECOMPILE": "0"}
    proc = subprocess.run([sys.executable, "-c", RECORD, "--integrator", integrator],
                          check=False, env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ran = {(name, _freeze(sig)) for name, sig in json.loads(proc.stdout.splitlines()[-1])}
    table = {(row[0], row[1]) for row in kernel_table.KERNELS}
    assert len(ran) > 10
    assert ran - table == set()
    if integrator == "implicit":  # its own kernels are rows a run on it precompiles
        own = {key for key in ran if key[0].startswith("hsa_elastica.engines.implicit")}
        # the run is on the implicit engine: its settling loop (watched_steps) is among them;
        # with a warm cache only the kernels called from Python load (newton_steps and the
        # other callees are linked into them), cold every one compiles
        assert "hsa_elastica.engines.implicit_watch:watched_steps" in {name for name, _ in own}
        chosen = {(kernel_table.KERNELS[i][0], kernel_table.KERNELS[i][1])
                  for i in precompile.entries("primitive", "implicit")}
        assert own - chosen == set()


def test_an_implicit_run_adds_its_integrators_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command run on the implicit integrator precompiles its command's rows and the rows
    the integrator's record names (Integrator.kernel_table); on the explicit one only its
    command's; dataset and calibrate map to steady-state's."""
    rows = (("m:a", (), (), ("primitive",)), ("m:b", (), (), ("primitive-implicit",)),
            ("m:c", (), (), ("steady-state",)), ("m:d", (), (), ("primitive", "envs")))
    monkeypatch.setattr(kernel_table, "KERNELS", rows)
    assert precompile.entries("primitive") == [0, 3]
    assert precompile.entries("primitive", "explicit") == [0, 3]
    assert precompile.entries("primitive", "implicit") == [0, 1, 3]
    assert precompile.entries("primitive", SimulationParams(integrator="implicit")) == [0, 1, 3]
    assert precompile.entries("calibrate", "implicit") == [1, 2]
    assert precompile.entries("envs") == [3]
    assert precompile.entries(None) == [0, 1, 2, 3]


def _fake_table(monkeypatch: pytest.MonkeyPatch) -> None:
    # 0, 1 leaves; 2 calls 0 and 1; 3 calls 2; 4 = another signature of kernel "b" (as 1)
    rows = (("m:a", (), (), ("primitive",)), ("m:b", (), (), ("primitive",)),
            ("m:c", (), (0, 1), ("primitive",)), ("m:d", (), (2,), ("primitive",)),
            ("m:b", (("scalar", "int64"),), (), ("primitive",)))
    monkeypatch.setattr(kernel_table, "KERNELS", rows)


def test_the_plan_waits_for_callees_and_runs_one_task_per_kernel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_table(monkeypatch)
    plan = precompile._Plan(range(5))
    first = [plan.take(), plan.take(), plan.take()]
    # ready: 0, 1, 4; 4 is kernel "b" like 1, so only one of them may run
    assert sorted(i for i in first if i is not None) in ([0, 1], [0, 4])
    assert first[2] is None
    plan.done(first[0])  # type: ignore[arg-type]
    plan.done(first[1])  # type: ignore[arg-type]
    started = {plan.take(), plan.take()}
    assert 2 in started and ({1, 4} - set(first)) <= started  # c is ready, and the other "b"
    assert plan.take() is None
    for i in started:
        plan.done(i)  # type: ignore[arg-type]
    assert plan.take() == 3
    assert plan.take() is None


WORKERS = textwrap.dedent("""
    import sys
    from numba.core import event
    from hsa_elastica.engines import precompile
    from hsa_elastica.engines.kernel_table import KERNELS
    names = sys.argv[2:]
    chosen = [i for i, row in enumerate(KERNELS) if row[0] in names]
    if sys.argv[1] == "compile":
        summary = precompile.Summary()
        precompile._run_pool(chosen, 2, lambda name: None, summary)
        assert summary.compiled == len(chosen), summary
    compiled = []

    class Count(event.Listener):
        def on_start(self, e):
            compiled.append(1)

        def on_end(self, e):
            pass

    event.register("numba:compile", Count())
    print(len(chosen), [precompile._cached(i) for i in chosen].count(True))
    for i in chosen:
        precompile.kernel(KERNELS[i][0]).compile(precompile._signature(i))
    print(len(compiled))
""")


def test_workers_fill_the_cache_a_fresh_process_loads(tmp_path: Path) -> None:
    """Two worker processes compile a small kernel and its caller into an empty cache; a new
    process finds both cached and compiles nothing when it asks for them."""
    names = ["hsa_elastica.physics.rotations:rotation_matrix_to_quaternion",
             "hsa_elastica.physics.rotations:rotation_vector_from_matrix"]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    first = subprocess.run([sys.executable, "-c", WORKERS, "compile", *names], check=False,
                           env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    again = subprocess.run([sys.executable, "-c", WORKERS, "load", *names], check=False,
                           env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    n, cached = map(int, again.stdout.splitlines()[0].split())
    assert n >= 1 and cached == n
    assert again.stdout.splitlines()[1] == "0"  # loaded, not compiled


def test_progress_off_a_terminal_counts_the_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.StringIO()
    with compile_notice.parallel_progress(3, 2, stream=stream) as tick:
        for name in ("m.x:a", "m.x:b", "m.y:c"):
            tick(name)
    lines = stream.getvalue().splitlines()
    assert lines[0] == ("compiling numba kernels: 3 in 2 processes "
                        "(first run only; cached afterwards)...")
    assert lines[-1].startswith("compiled 3 kernels in 2 processes in ")
    quiet = io.StringIO()
    with compile_notice.parallel_progress(3, 2, stream=quiet, quiet=True) as tick:
        tick("m:a")
    assert quiet.getvalue() == ""


def test_bad_arguments_are_refused_before_any_work() -> None:
    with pytest.raises(ParameterError, match="workers"):
        precompile.precompile(workers=0)
    with pytest.raises(ParameterError, match="command"):
        precompile.precompile("render")
    for args in (["--workers", "0"], ["--workers", "x"], ["--command", "render"]):
        proc = subprocess.run([sys.executable, "-m", "hsa_elastica.cli", "compile", *args],
                              check=False, capture_output=True, text=True, cwd=ROOT,
                              timeout=300)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_an_empty_cache_is_cold_and_switched_off_runs_compile_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = ("from hsa_elastica.engines import precompile\n"
            "print(precompile.is_cold('primitive'), precompile.is_cold('steady-state'))\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "empty")}
    proc = subprocess.run([sys.executable, "-c", code], check=False, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.stdout.split() == ["True", "True"], proc.stderr[-2000:]

    def no_work(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("precompile called")

    monkeypatch.setattr(precompile, "precompile", no_work)
    monkeypatch.setattr(precompile, "is_cold", lambda command=None: True)
    assert precompile.precompile_if_cold() is None  # not enabled (a library call)
    precompile.enable("primitive")
    precompile.enable(None)
    assert precompile.precompile_if_cold() is None
    monkeypatch.setenv("HSA_ELASTICA_PRECOMPILE", "0")
    precompile.enable("primitive")
    assert precompile.precompile_if_cold() is None
    assert precompile._ENABLED is None  # once per process
