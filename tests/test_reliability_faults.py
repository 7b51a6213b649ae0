"""Faults of ``hsa-elastica dataset`` and ``load_dataset``: two writers into one
directory, damaged chunk files and manifests, inputs that crashed, hung or ran, and Ctrl-C.

Every input case runs the command in-process with the solver replaced by a sentinel that
fails the test if reached, so "refused before any work" is what is tested (and nothing may be
created in ``--out``).  The verification cases build a 6-pose dataset of a 6-element robot
once, solving its chunks in this process (the chunk solver is the same function the Dask
workers run; tests/test_datasets.py covers the cluster), then damage copies of it.  Only the
lock and Ctrl-C cases start real processes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from hsa_elastica.cli import main
from hsa_elastica.experiments import dataset_inputs
from hsa_elastica.experiments import datasets as ds
from hsa_elastica.experiments.dataset_chunks import solve_chunk
from hsa_elastica.params import MAX_MOTOR_ANGLE, ParameterError

# this checkout for the subprocesses and Dask workers, the 6-element robot and its file
from test_datasets import ROOT, _workers_import_this_checkout, params_file, tiny_params  # noqa: F401

CLI = [sys.executable, "-m", "hsa_elastica.cli"]
N = 6  # poses of the small dataset, one chunk each


def serial_run(tasks: Iterator[Any], write: Any, workers: Any, client: Any, bar: Any) -> int:
    """``datasets._run_tasks`` without Dask: the same chunk solver, in this process."""
    for task in tasks:
        table = solve_chunk(task)
        write(task.chunk, table)
        bar.update(table.num_rows)
    return 1


def args(params_file: Path, out: Path, *extra: str) -> list[str]:
    return ["dataset", "--random", str(N), "--seed", "3", "--params", str(params_file),
            "--chunk-size", "1", "--quiet", "--out", str(out), *extra]


@pytest.fixture(scope="module")
def reference(params_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "ds"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ds, "_run_tasks", serial_run)
        assert main(args(params_file, out)) == 0
    return out


@pytest.fixture
def damaged_copy(reference: Path, tmp_path: Path) -> Path:
    """A copy of the reference dataset, to damage."""
    out = tmp_path / "ds"
    shutil.copytree(reference, out)
    return out


@pytest.fixture
def serial(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ds, "_run_tasks", serial_run)


def reached(*a: object, **k: object) -> None:
    raise RuntimeError("reached the solver: the input was not refused before any work")


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail (exit 1 with this message) if the command gets as far as solving anything."""
    monkeypatch.setattr(ds, "_run_tasks", reached)
    monkeypatch.setattr(ds, "_start_client", reached)


@pytest.fixture
def no_work(no_solve: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """... or as far as planning the chunks (the first work after the checks)."""
    monkeypatch.setattr(ds, "plan_chunks", reached)


def chunk_bytes(out: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted((out / "chunks").glob("*.parquet"))}


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err, err
    return err


# --------------------------------------------------------------------------------------------
# inputs: exit 2 with one line naming the field and its range, before anything is written
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["1e308", "50", "-50", "nan"])
def test_angles_csv_rows_beyond_the_motor_angle_limit_refused(
    bad: str, tmp_path: Path, no_work: None, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "angles.csv"
    csv.write_text(f"angle_0,angle_1,angle_2,angle_3\n0.1,0.2,0.3,0.4\n0.1,{bad},0.3,0.4\n")
    out = tmp_path / "ds"
    assert main(["dataset", "--angles-csv", str(csv), "--quiet", "--out", str(out)]) == 2
    err = one_line(capsys)
    # the bad row is the file's line 3 (header = line 1)
    assert "line 3" in err and ("angle 1" in err or "angle_1" in err)
    assert f"{MAX_MOTOR_ANGLE:.6g}" in err or (bad == "nan" and "finite" in err)
    assert not out.exists()


@pytest.mark.parametrize("text, needle", [
    ("angle_0,angle_1,angle_2,angle_3\n0.1,0.2,0.3,0.4,0.5\n", "line 2 has 5 fields"),
    ("angle_0,angle_1,angle_2,angle_3,angle_1\n0.1,0.2,0.3,0.4,0.5\n", "'angle_1' appears twice"),
    ("angle_0,angle_1,angle_2,angle_3\n", "no rows"),
])
def test_angles_csv_misreadings_refused(
    text: str, needle: str, tmp_path: Path, no_work: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # the dataset's CSV goes through the same strict reader as steady-state --angles-csv
    csv = tmp_path / "angles.csv"
    csv.write_text(text)
    out = tmp_path / "ds"
    assert main(["dataset", "--angles-csv", str(csv), "--quiet", "--out", str(out)]) == 2
    assert needle in one_line(capsys)
    assert not out.exists()


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--random", "5", "--seed", "1", "--phi-max", "100"], "--phi-max"),
        (["--grid", "3", "--phi-max", "13"], "--phi-max"),
        (["--random", "1000000000000", "--seed", "1"], "--random"),
        (["--grid", "57"], "--grid"),  # 1.06e7 poses
        (["--random", "5", "--seed", "1", "--workers", "100000"], "--workers"),
        (["--random", "5", "--seed", "1", "--scheduler", "not a url"], "--scheduler"),
        (["--random", "5", "--seed", "1", "--scheduler", "tcp://h:99999"], "--scheduler"),
    ],
)
def test_out_of_range_options_refused_before_any_work(
    argv: list[str], needle: str, tmp_path: Path, no_work: None,
    capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ds"
    t0 = time.monotonic()
    assert main(["dataset", *argv, "--quiet", "--out", str(out)]) == 2
    assert time.monotonic() - t0 < 5.0  # refused, not allocated or started
    err = one_line(capsys)
    assert needle in err and "must be" in err
    assert not out.exists()  # dataset.json is not written for a bad --scheduler either


def test_bounds_are_stated_in_the_messages(tmp_path: Path, no_work: None,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    base = ["dataset", "--quiet", "--out", str(tmp_path / "ds")]
    assert main([*base, "--random", "5", "--seed", "1", "--phi-max", "100"]) == 2
    assert f"{MAX_MOTOR_ANGLE:.6g} rad" in one_line(capsys)
    assert main([*base, "--random", str(ds.MAX_SAMPLES + 1), "--seed", "1"]) == 2
    assert "1e+07" in one_line(capsys)
    assert main([*base, "--random", "5", "--seed", "1", "--workers", "100000"]) == 2
    assert f"from 1 to {4 * (os.cpu_count() or 1)}" in one_line(capsys)
    # the largest accepted values pass these checks (the run is then stopped by no_work)
    assert main([*base, "--random", "5", "--seed", "1", "--phi-max", str(MAX_MOTOR_ANGLE),
                 "--workers", str(ds.max_workers())]) == 1
    assert "reached the solver" in one_line(capsys)


def test_unreachable_scheduler_fails_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(dataset_inputs, "SCHEDULER_TIMEOUT_S", 1.0)
    out = tmp_path / "ds"
    t0 = time.monotonic()
    code = main(["dataset", "--random", "2", "--seed", "1", "--quiet", "--out", str(out),
                 "--scheduler", f"tcp://127.0.0.1:{port}"])
    assert code == 2 and time.monotonic() - t0 < 10.0
    err = one_line(capsys)
    assert "--scheduler" in err and "within 1 s" in err
    assert not out.exists()


def test_out_that_is_a_file_refused(tmp_path: Path, no_work: None,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plain"
    out.write_text("keep me")
    assert main(["dataset", "--random", "2", "--seed", "1", "--quiet", "--out", str(out)]) == 2
    assert "--out" in one_line(capsys)
    assert out.read_text() == "keep me"
    below = out / "sub"  # a path through a file
    assert main(["dataset", "--random", "2", "--seed", "1", "--quiet", "--out", str(below)]) == 2
    assert "not a directory" in one_line(capsys)


def test_out_name_longer_than_name_max_refused(tmp_path: Path, no_work: None,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    out = tmp_path / ("x" * 300)
    assert main(["dataset", "--random", "2", "--seed", "1", "--quiet", "--out", str(out)]) == 2
    err = one_line(capsys)
    assert "--out" in err and "300 bytes" in err and f"at most {limit}" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dynamic", [False, True])
def test_unstable_time_step_refused_for_both_solvers(
    dynamic: bool, tmp_path: Path, no_work: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # the static solver falls back to relaxation (and runs it to pick mirror-image poses):
    # both need a stable step.  10x the step of the 6-element robot is far above its limit
    from hsa_elastica.engines.timeloop import max_stable_dt

    p = tiny_params()
    dt = 10 * max_stable_dt(p)[0]
    path = tmp_path / "p.yaml"
    path.write_text(f"rod:\n  n_elements: 6\nsimulation:\n  dt: {dt!r}\n  ramp_time: 0.1\n")
    out = tmp_path / "ds"
    argv = ["dataset", "--random", "2", "--seed", "1", "--params", str(path), "--quiet",
            "--out", str(out)] + (["--dynamic"] if dynamic else [])
    assert main(argv) == 2
    err = one_line(capsys)
    assert "simulation.dt" in err and "must be" in err
    assert not out.exists()


def test_python_api_refuses_the_same_inputs(tmp_path: Path, no_work: None) -> None:
    p = tiny_params()
    ok = np.zeros((2, 4))
    cases: list[dict[str, Any]] = [
        {"angles": np.array([[0.0, 50.0, 0.0, 0.0]])},
        {"angles": np.array([[0.0, 1e308, 0.0, 0.0]])},
        {"angles": ok, "workers": 100000},
        {"angles": ok, "scheduler": "not a url"},
        {"angles": ok, "out": tmp_path / ("y" * 300)},
    ]
    for case in cases:
        kw = dict(case)
        out = kw.pop("out", tmp_path / "ds")
        with pytest.raises(ParameterError):
            ds.build_dataset(out, p, kw.pop("angles"), {"kind": "test"}, progress=False, **kw)
    with pytest.raises(ParameterError, match="phi_max"):
        ds.random_angles(p, 3, seed=1, phi_max=100.0)
    with pytest.raises(ParameterError, match="1e\\+07"):
        ds.random_angles(p, 10**12, seed=1)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# verification of chunk files and the manifest
# --------------------------------------------------------------------------------------------
def test_manifest_records_checksum_and_sample_ids_of_every_chunk(reference: Path) -> None:
    import hashlib

    import pyarrow.parquet as pq

    meta = json.loads((reference / "dataset.json").read_text())
    recs = {r["chunk"]: r for r in meta["chunks"]}
    assert sorted(recs) == list(range(N))
    seen: list[int] = []
    for r in recs.values():
        f = reference / r["file"]
        assert r["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
        ids = pq.read_table(f).column("sample").to_pylist()
        assert r["rows"] == len(ids) and (r["sample_min"], r["sample_max"]) == (min(ids), max(ids))
        seen += ids
    assert sorted(seen) == list(range(N))


def damage(out: Path, how: str) -> str:
    """Damage one chunk file of ``out`` as named; returns the damaged file's name."""
    files = sorted((out / "chunks").glob("chunk-*.parquet"))
    target = files[2]
    data = target.read_bytes()
    if how == "garbage":
        target.write_bytes(os.urandom(len(data)))
    elif how == "truncated":
        target.write_bytes(data[: len(data) // 2])
    elif how == "emptied":
        target.write_bytes(b"")
    elif how == "another chunk's file":
        shutil.copyfile(files[4], target)
    elif how == "one byte flipped":
        target.write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    return target.name


HOWS = ["garbage", "truncated", "emptied", "another chunk's file", "one byte flipped"]


@pytest.mark.parametrize("how", HOWS)
def test_rerun_names_and_recomputes_a_damaged_chunk(
    how: str, reference: Path, params_file: Path, damaged_copy: Path, serial: None,
    capsys: pytest.CaptureFixture[str]
) -> None:
    out = damaged_copy
    name = damage(out, how)
    assert main(args(params_file, out)) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and name in err[0] and "recomputing" in err[0]
    assert chunk_bytes(out) == chunk_bytes(reference)  # bitwise the undamaged dataset
    assert json.loads((out / "dataset.json").read_text())["chunks"] == json.loads(
        (reference / "dataset.json").read_text())["chunks"]
    assert ds.load(out).equals(ds.load(reference))


@pytest.mark.parametrize("how", HOWS)
def test_load_refuses_a_damaged_chunk_naming_it(how: str, damaged_copy: Path) -> None:
    out = damaged_copy
    name = damage(out, how)
    with pytest.raises(ParameterError) as info:
        ds.load(out)
    msg = str(info.value)
    assert type(info.value).__name__ == "DatasetCorrupt"
    assert name in msg and "\n" not in msg and "rerun the same" in msg


def test_chunk_finished_after_the_last_manifest_update_is_verified_by_its_own_metadata(
    reference: Path, params_file: Path, damaged_copy: Path, serial: None,
    capsys: pytest.CaptureFixture[str]
) -> None:
    # a run killed between writing a chunk and flushing dataset.json: the chunk has no record
    out = damaged_copy
    meta = json.loads((out / "dataset.json").read_text())
    meta["chunks"] = [r for r in meta["chunks"] if r["chunk"] not in (1, 3)]
    (out / "dataset.json").write_text(json.dumps(meta))
    assert ds.load(out).equals(ds.load(reference))  # verified by embedded metadata
    # ... the same file copied over another chunk without a record is caught all the same
    shutil.copyfile(out / "chunks" / "chunk-000001.parquet", out / "chunks" / "chunk-000003.parquet")
    with pytest.raises(ParameterError, match="chunk-000003.parquet"):
        ds.load(out)
    mtime = (out / "chunks" / "chunk-000001.parquet").stat().st_mtime_ns
    assert main(args(params_file, out)) == 0
    err = capsys.readouterr().err
    assert "chunk-000003.parquet" in err and "chunk-000001" not in err
    assert (out / "chunks" / "chunk-000001.parquet").stat().st_mtime_ns == mtime  # kept
    assert json.loads((out / "dataset.json").read_text())["chunks"] == json.loads(
        (reference / "dataset.json").read_text())["chunks"]
    assert chunk_bytes(out) == chunk_bytes(reference)


def test_corrupt_manifest_is_reported_as_corrupt_and_rebuilt_keeping_valid_chunks(
    reference: Path, params_file: Path, damaged_copy: Path, no_solve: None,
    capsys: pytest.CaptureFixture[str]
) -> None:
    out = damaged_copy
    (out / "dataset.json").write_text('{"format": "hsa-elastica steady')  # cut short
    before = {f.name: f.stat().st_mtime_ns for f in (out / "chunks").glob("*.parquet")}
    assert main(args(params_file, out)) == 2
    err = one_line(capsys)
    assert "dataset.json is corrupt" in err and "--overwrite" in err
    assert "different dataset" not in err
    with pytest.raises(ParameterError, match="dataset.json is corrupt"):
        ds.load(out)
    # the way out keeps every chunk (nothing to compute: no_solve would fail otherwise)
    assert main(args(params_file, out, "--overwrite")) == 0
    after = {f.name: f.stat().st_mtime_ns for f in (out / "chunks").glob("*.parquet")}
    assert after == before
    assert ds.load(out).equals(ds.load(reference))
    # --overwrite with a different command still replaces them (not kept: other fingerprint)
    other = args(params_file, out, "--overwrite")
    other[other.index("--seed") + 1] = "4"
    assert main(other) == 1  # stopped by no_solve once the old chunks are gone
    assert "reached the solver" in one_line(capsys)
    assert not list((out / "chunks").glob("*.parquet"))


# --------------------------------------------------------------------------------------------
# one writer per directory
# --------------------------------------------------------------------------------------------
def test_second_writer_is_refused_naming_the_holder(
    params_file: Path, tmp_path: Path
) -> None:
    from hsa_elastica.experiments.dataset_store import LOCK_NAME, locked

    out = tmp_path / "ds"
    # the holder is this process (the same lock a dataset run takes); the second writer is a
    # real process running the same command, which without a lock would compute alongside
    with locked(out, "the test's holder"):
        assert (out / LOCK_NAME).exists()
        proc = subprocess.run([*CLI, *args(params_file, out, "--workers", "1")], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert "\n" not in err and f"pid {os.getpid()}" in err and "started" in err
    assert "the test's holder" in err
    assert not (out / "dataset.json").exists() and not (out / LOCK_NAME).exists()


def test_two_dataset_processes_into_one_new_directory(params_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    # the first run relaxes 3 poses dynamically (seconds): it holds the lock while the second
    # starts; the second runs the same command, which without a lock would compute alongside
    slow = args(params_file, out, "--workers", "1", "--dynamic")
    slow[slow.index("--random") + 1] = "3"
    first = subprocess.Popen([*CLI, *slow],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60.0
        while not (out / "dataset.json").exists():
            assert first.poll() is None and time.monotonic() < deadline, "first run did not start"
            time.sleep(0.02)
        second = subprocess.run([*CLI, *slow], cwd=ROOT,
                                capture_output=True, text=True, timeout=120)
        assert first.poll() is None, "the first run must still hold the lock"
        assert second.returncode == 2
        assert f"pid {first.pid}" in second.stderr and "\n" not in second.stderr.strip()
        assert first.wait(timeout=120) == 0
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
    assert sorted(f.name for f in out.iterdir()) == ["chunks", "dataset.json"]  # lock removed
    df = ds.load(out)
    assert df["sample"].tolist() == list(range(3)) and set(df["method"]) == {"dynamic"}


def test_lock_is_released_when_its_holder_is_killed(tmp_path: Path) -> None:
    from hsa_elastica.experiments.dataset_store import DatasetLocked, locked

    out = tmp_path / "ds"
    code = ("import sys, time; from pathlib import Path\n"
            "from hsa_elastica.experiments.dataset_store import locked\n"
            "with locked(Path(sys.argv[1]), 'holder'):\n"
            "    print('locked', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(out)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(DatasetLocked, match=f"pid {holder.pid}"):
            with locked(out, "second"):
                pass
    finally:
        holder.kill()  # SIGKILL: no cleanup runs, the lock file stays behind
        holder.wait()
    with locked(out, "third"):  # the kernel released the lock with the process
        pass


# --------------------------------------------------------------------------------------------
# Ctrl-C
# --------------------------------------------------------------------------------------------
def test_ctrl_c_is_one_line_exit_130_and_resumes(params_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "ds"
    # one pose per chunk (as in the kill -9 test of tests/test_datasets.py): the interrupt
    # lands between chunk files; 96 poses, so that the run cannot end between the first chunk
    # file and the interrupt (24 poses of the small robot once did, on a busy machine)
    cmd = [*CLI, "dataset", "--random", "96", "--seed", "5", "--params", str(params_file),
           "--chunk-size", "1", "--workers", "1", "--quiet", "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60.0
        while not list((out / "chunks").glob("chunk-*.parquet")):
            assert proc.poll() is None and time.monotonic() < deadline, "no chunk written"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130
    assert err.strip().splitlines() == ["hsa-elastica: interrupted"]
    leftovers = [p.name for p in out.rglob(".*")]
    assert leftovers == []  # no temporary files, no lock file
    done = {f.name: f.stat().st_mtime_ns for f in (out / "chunks").glob("*.parquet")}
    assert 1 <= len(done) < 96, "the interrupt must land mid-run"
    recorded = {r["file"].split("/")[-1] for r in json.loads((out / "dataset.json").read_text())["chunks"]}
    assert recorded == set(done)  # the manifest was flushed on the way out
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=120).returncode == 0
    assert {k: (out / "chunks" / k).stat().st_mtime_ns for k in done} == done
    assert ds.load(out)["sample"].tolist() == list(range(96))


def test_ctrl_c_while_the_local_cluster_starts_closes_it_then_interrupts(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that lands while Dask's LocalCluster starts its workers is held back until the
    cluster is up; the cluster and client are then closed and KeyboardInterrupt raised (a
    half-started cluster made Dask's exit handler print an AssertionError traceback)."""
    import dask.distributed

    from hsa_elastica.experiments import datasets as dsm

    closed: list[str] = []

    class FakeCluster:
        def __init__(self, **kwargs: object) -> None:
            os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C, mid-start-up
            closed.append("started")  # reached: the interrupt did not cut the start-up

        def close(self) -> None:
            closed.append("cluster")

    class FakeClient:
        def __init__(self, cluster: FakeCluster) -> None:
            pass

        def close(self) -> None:
            closed.append("client")

    monkeypatch.setattr(dask.distributed, "LocalCluster", FakeCluster)
    monkeypatch.setattr(dask.distributed, "Client", FakeClient)
    with pytest.raises(KeyboardInterrupt):
        dsm._start_client(1, None)
    assert closed == ["started", "client", "cluster"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
