"""Steady-state datasets: many poses of an HSA robot, chunked, resumable, on Dask.

A dataset directory ``DIR`` holds

* ``DIR/dataset.json`` -- format, schema (columns with units), package version, the robot
  parameters, the sampling, solver, chunk size and a ``fingerprint`` (SHA-256 of all of these
  in canonical JSON) that identifies the dataset;
* ``DIR/chunks/chunk-NNNNNN.parquet`` -- one Parquet file per finished chunk, written
  atomically (a temporary file renamed over the final name), so a file that exists is
  complete; each carries its own identity (fingerprint, chunk, rows, sample ids) and
  ``dataset.json`` records its SHA-256, row count and sample-id range
  (:mod:`hsa_elastica.experiments.dataset_store`);
* ``DIR/.dataset.lock`` -- while a run writes the directory: the lock it holds (pid, host,
  start time and command of the holder).

Sampling (motor angles [rad], rod ``i`` has handedness ``h_i``; a rod elongates only for
angles of its own sign, Eq. 3):

* random: sample ``s`` of seed ``S`` has ``motor_angles_rad_i = h_i * phi_max * u_i`` with
  ``u = numpy.random.default_rng([S, s]).random(n_rods)`` -- derived from the seed and the
  sample id alone, so chunking and workers never change the angles;
* grid: ``K`` values ``h_i * phi_max * linspace(0, 1, K)`` per rod, ``K ** n_rods`` samples in
  row-major order (rod 0 slowest);
* CSV: columns ``angle_0 .. angle_{n-1}`` (or ``motor_angles_rad_0 ..``), sample id = row number.

Chunks (the unit of work) are contiguous blocks of the samples sorted along a Z-order
(Morton) curve of the normalised angles, so a chunk holds poses that are close to one
another; inside a chunk the poses are ordered nearest-neighbour first (from the one closest
to rest) and every solve is warm started from the previous one when the solver supports it
(:mod:`hsa_elastica.experiments.dataset_chunks`).  The plan depends only on the sampling and
the chunk size, so the numbers are bitwise the same whatever the number of workers.

Rerunning :func:`build_dataset` with the same arguments verifies the chunk files there and
computes only the missing or failed ones; other arguments (a different fingerprint) into an
existing directory raise :class:`DatasetMismatch` unless ``overwrite=True``.  :func:`load`
verifies every chunk and returns the whole dataset as one ``pandas.DataFrame`` sorted by
sample.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.experiments.dataset_chunks import ChunkTask, column_docs
from hsa_elastica.experiments.dataset_store import (
    LOCK_NAME,
    DatasetCorrupt,
    DatasetLocked,
    check_chunk_bytes,
    check_out_dir,
    chunk_path,
    chunk_record,
    encode_chunk,
    locked,
    manifest_records,
    read_manifest,
    samples_sha256,
    sha256_file,
    stderr_line,
)
from hsa_elastica.io.interrupts import deferred_interrupts
from hsa_elastica.params import ParameterError, RobotParams
from hsa_elastica.params.files import write_atomic, write_text_atomic

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from hsa_elastica.experiments.dataset_sampling import (  # noqa: F401  (re-exported)
    DEFAULT_PHI_MAX,
    default_chunk_size,
    describe_sampling,
    grid_angles,
    plan_chunks,
    random_angles,
    read_angles_csv,
    sampled_angles,
)
from hsa_elastica.experiments.dataset_inputs import (  # noqa: F401  (re-exported)
    MAX_SAMPLES,
    SCHEDULER_TIMEOUT_S,
    check_dataset_inputs,
    check_n_samples,
    check_phi_max,
    check_scheduler_address,
    check_workers,
    connect_scheduler,
    max_workers,
)

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "MAX_SAMPLES",
    "SCHEDULER_TIMEOUT_S",
    "DatasetMismatch",
    "DatasetLocked",
    "DatasetCorrupt",
    "DatasetSummary",
    "random_angles",
    "grid_angles",
    "read_angles_csv",
    "plan_chunks",
    "default_chunk_size",
    "build_dataset",
    "load",
    "load_dataset",
    "max_workers",
    "check_workers",
    "check_n_samples",
    "check_phi_max",
    "check_scheduler_address",
    "connect_scheduler",
]

FORMAT = "hsa-elastica steady-state dataset"
#: 4: the symmetry columns of a steady state (``symmetry_broken``, ``symmetry_branch_m_*``;
#: absent from older datasets, loaded as null / NaN); 3: columns named by the one output schema (:mod:`hsa_elastica.io.columns`; version 2 named
#: them ``angle_i``, ``platform_x``, ``quat_w``, ``tip{i}_x``, ... and is still read, renamed,
#: with a DeprecationWarning); 2: chunk files carry their identity, dataset.json a record per
#: chunk (1: neither)
SCHEMA_VERSION = 4
#: shortest interval between two rewrites of dataset.json while chunks arrive [s]
MANIFEST_INTERVAL_S = 1.0


class DatasetMismatch(Exception):
    """The output directory already holds a dataset made with other arguments."""


# --------------------------------------------------------------------------------------------
# metadata
# --------------------------------------------------------------------------------------------
def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _metadata(params: RobotParams, sampling: dict[str, Any], angles: NDArray[np.float64],
              solver: str, shapes: bool, chunk_size: int) -> dict[str, Any]:
    from importlib.metadata import version

    __version__ = version("hsa-elastica")

    ident = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "package_version": __version__,
        "params": params.to_dict(),
        # the CSV file name is not part of the identity: its angles are (angles_sha256)
        "sampling": {k: v for k, v in sampling.items() if k != "file"},
        "angles_sha256": hashlib.sha256(np.ascontiguousarray(angles).tobytes()).hexdigest(),
        "n_samples": int(len(angles)),
        "solver": solver,
        "shapes": bool(shapes),
        "chunk_size": int(chunk_size),
    }
    meta = dict(ident)
    meta["fingerprint"] = hashlib.sha256(_canonical(ident).encode()).hexdigest()
    if "file" in sampling:
        meta["sampling"] = dict(sampling)
    meta["n_chunks"] = int(math.ceil(len(angles) / chunk_size))
    meta["chunk_files"] = "chunks/chunk-NNNNNN.parquet"
    meta["columns"] = column_docs(params.n_rods, shapes)
    return meta


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    keys = ("params", "sampling", "angles_sha256", "n_samples", "solver", "shapes", "chunk_size",
            "package_version", "schema_version")
    diff = [k for k in keys if old.get(k) != new.get(k)]
    return ", ".join(diff) or "fingerprint"


class _Manifest:
    """``dataset.json``: the dataset's metadata plus one record per verified chunk file,
    rewritten atomically at most every :data:`MANIFEST_INTERVAL_S` while chunks arrive (and
    at the end of the run, also an interrupted one); a chunk written since the last flush is
    verified by its embedded metadata on the next run."""

    def __init__(self, out: Path, meta: dict[str, Any], records: dict[int, dict[str, Any]]):
        self.path = out / "dataset.json"
        self.meta = meta
        self.records = dict(records)
        self.dirty = True
        self.last = -math.inf

    def record(self, chunk: int, rec: dict[str, Any] | None) -> None:
        if rec is None:
            self.records.pop(chunk, None)
        else:
            self.records[chunk] = rec
        self.dirty = True

    def flush(self, force: bool = True) -> None:
        now = time.monotonic()
        if not self.dirty or (not force and now - self.last < MANIFEST_INTERVAL_S):
            return
        meta = dict(self.meta, chunks=[self.records[c] for c in sorted(self.records)])
        text = json.dumps(meta, indent=1, allow_nan=False) + "\n"
        write_text_atomic(self.path, text)
        self.dirty, self.last = False, now


def _prepare_dir(out: Path, meta: dict[str, Any], overwrite: bool) -> dict[int, dict[str, Any]]:
    """Make ``out`` hold the dataset ``meta`` (see :func:`build_dataset`); returns the chunk
    records of its manifest that still apply (none after ``overwrite``)."""
    meta_path = out / "dataset.json"
    records: dict[int, dict[str, Any]] = {}
    if meta_path.exists():
        try:
            old = read_manifest(meta_path)
        except DatasetCorrupt as exc:
            if not overwrite:
                raise DatasetCorrupt(
                    f"{exc}; to rebuild it, rerun the same command with --overwrite "
                    "(overwrite=True): chunk files whose own metadata match the command are "
                    "verified and kept, the others recomputed"
                ) from None
            old = {}
        if old.get("fingerprint") == meta["fingerprint"]:
            records = manifest_records(old)
        elif not overwrite:
            raise DatasetMismatch(
                f"{out} already holds a different dataset (differs in: "
                f"{_differences(old, meta)}); use overwrite (--overwrite) or another "
                "output directory"
            )
    elif out.exists() and any(f.name != LOCK_NAME for f in out.iterdir()) and not overwrite:
        raise DatasetMismatch(f"{out} is not empty and holds no dataset.json; use overwrite "
                              "(--overwrite) or another output directory")
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    for f in (out / "chunks").glob(".*.partial*"):  # left by a killed run
        f.unlink()
    if overwrite and not records:  # keep only chunk files that carry this dataset's identity
        for f in (out / "chunks").glob("chunk-*.parquet"):
            number = f.stem.rpartition("-")[2]
            chunk = int(number) if number.isdigit() else -1
            if check_chunk_bytes(f.read_bytes(), meta["fingerprint"], chunk)[1] is not None:
                f.unlink()
    _Manifest(out, meta, records).flush()
    return records


def _verify_chunks(out: Path, plan: list[NDArray[np.int64]], manifest: _Manifest,
                   report: Callable[[str], None]) -> tuple[list[int], int]:
    """(chunks to compute, how many of them had a file that failed verification).  A file with
    a record must have its recorded SHA-256; one without must pass :func:`check_chunk_bytes`
    against the plan (then it gets a record).  A failed file is reported (one line) and
    removed."""
    todo, rejected = [], 0
    fingerprint = manifest.meta["fingerprint"]
    for c, ids in enumerate(plan):
        path = chunk_path(out, c)
        if not path.exists():
            manifest.record(c, None)
            todo.append(c)
            continue
        rec = manifest.records.get(c)
        if rec is not None and rec.get("samples_sha256") == samples_sha256(ids) and rec.get(
            "sha256"
        ) == sha256_file(path):
            continue
        data = path.read_bytes()
        problem = check_chunk_bytes(data, fingerprint, c, ids)[1]
        if problem is None and rec is None:  # finished after the manifest's last update
            manifest.record(c, chunk_record(c, data, ids))
            continue
        problem = problem or "differs from the checksum recorded in dataset.json"
        report(f"dataset {out}: {path.name} {problem}; recomputing it")
        path.unlink()
        manifest.record(c, None)
        todo.append(c)
        rejected += 1
    return todo, rejected


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------
@dataclass
class DatasetSummary:
    """What :func:`build_dataset` did."""

    out: Path
    n_samples: int
    n_chunks: int
    chunks_computed: int
    chunks_reused: int
    samples_computed: int
    wall_time_s: float
    workers: int
    solver: str
    chunks_rejected: int = 0  # of chunks_computed: their file failed verification

    def line(self) -> str:
        rate = self.samples_computed / self.wall_time_s if self.wall_time_s > 0 else 0.0
        if self.samples_computed == 0:
            return f"{self.n_samples} samples in {self.out}: complete, nothing to compute"
        again = (f", {self.chunks_rejected} of them recomputed after failing verification"
                 if self.chunks_rejected else "")
        return (
            f"{self.n_samples} samples in {self.out} ({self.n_chunks} chunks: "
            f"{self.chunks_computed} computed{again}, {self.chunks_reused} already there); "
            f"{self.samples_computed} solved ({self.solver}) in {self.wall_time_s:.1f} s on "
            f"{self.workers} worker(s): {rate:.2f} samples/s"
        )


def dask_setup(worker: Any) -> None:  # noqa: ARG001 - Dask's preload interface
    """Preload of the local workers: ignore SIGINT.  Ctrl-C in a terminal reaches the whole
    process group; the main process alone handles it (it closes the cluster), so the workers
    do not print tracebacks of their own."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_client(workers: int | None, client: Any) -> tuple[Any, Any, int]:
    from dask.distributed import Client, LocalCluster

    if client is not None:
        return client, None, max(1, sum(client.nthreads().values()))
    n = workers if workers is not None else (os.cpu_count() or 1)
    # Ctrl-C while the workers start would leave them half-started (Dask's exit handler then
    # prints a traceback): held back until the cluster is up, then it closes and re-raises
    with deferred_interrupts() as interrupted:
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.ERROR,
                               preload=[__name__])
        new_client = Client(cluster)
    if interrupted:
        new_client.close()
        cluster.close()
        raise KeyboardInterrupt
    return new_client, cluster, n


def _compile_in_parent(samples: NDArray[np.int64], angles: NDArray[np.float64],
                       params_json: str, solver: str, shapes: bool) -> None:
    """Solve the pose ``samples`` (one) in this process before the local workers start, and
    discard it: on a cold numba cache the kernels then compile here, where the compile notice
    of the command line shows on stderr (a worker's stderr is not the terminal), and the workers
    load them from the on-disk cache instead of each compiling them again (one compilation
    instead of one per worker).  With a warm cache it costs one pose.  Its warnings are dropped
    with it (the pose is solved again in its chunk, which reports them)."""
    from hsa_elastica.experiments.dataset_chunks import solve_chunk
    from hsa_elastica.io.held_messages import held_warnings

    with held_warnings():
        solve_chunk(ChunkTask(chunk=-1, samples=samples, angles=angles[samples],
                              params_json=params_json, solver=solver, shapes=shapes))


def _run_tasks(tasks: Iterator[ChunkTask], write: Callable[[int, Any], None],
               workers: int | None, client: Any, bar: Any) -> int:
    """Submit the chunk tasks to Dask (a bounded window of 2 per worker, so memory does not
    grow with N) and write each result as soon as it arrives; ``client`` is the client of an
    external scheduler (None: a local cluster of ``workers`` processes)."""
    from dask.distributed import as_completed

    from hsa_elastica.experiments.dataset_chunks import solve_chunk

    client, cluster, n_workers = _start_client(workers, client)
    chunk_of: dict[Any, int] = {}
    pending = as_completed()

    def submit(task: ChunkTask | None) -> None:
        if task is not None:
            future = client.submit(solve_chunk, task, pure=False)
            chunk_of[future] = task.chunk
            pending.add(future)

    try:
        for _ in range(2 * n_workers):
            submit(next(tasks, None))
        for future in pending:
            table = future.result()
            write(chunk_of.pop(future), table)
            bar.update(table.num_rows)
            future.release()
            submit(next(tasks, None))
    except KeyboardInterrupt:  # the close forgets the interrupted chunks: the scheduler must
        if cluster is not None:  # not log them ("Couldn't gather keys") after the one line
            for name in ("distributed", *logging.root.manager.loggerDict):
                if name.split(".")[0] == "distributed":
                    logging.getLogger(name).setLevel(logging.CRITICAL)
        raise
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    return n_workers


def build_dataset(
    out: str | Path,
    params: RobotParams,
    angles: NDArray[np.float64],
    sampling: dict[str, Any],
    *,
    solver: str = "auto",
    shapes: bool = False,
    workers: int | None = None,
    scheduler: Any = None,
    chunk_size: int | None = None,
    overwrite: bool = False,
    progress: bool = True,
    report: Callable[[str], None] = stderr_line,
    command: str | None = None,
) -> DatasetSummary:
    """Compute the steady states of ``angles`` (n, n_rods) [rad] into the dataset ``out``.

    ``sampling`` describes how the angles were made (stored in dataset.json and part of the
    fingerprint).  ``solver``: "auto" (= "static": the static solver, which falls back to
    dynamic relaxation where Newton fails), "static" or "dynamic".  ``workers``: size of the
    local Dask cluster (processes, one thread each; default all cores; at most
    :func:`max_workers`), ignored with ``scheduler``: an
    existing cluster, given by its address (reached within :data:`SCHEDULER_TIMEOUT_S` before
    anything is written, see :func:`connect_scheduler`) or as a connected
    ``dask.distributed.Client`` (left open).

    Every input is checked before anything is written (``ParameterError`` naming it: angles
    within the motor-angle limit, at most :data:`MAX_SAMPLES`, ``simulation.dt`` within the
    stability limit -- both solvers may run dynamic relaxation -- and ``out`` a possible
    directory).  The run holds the lock of ``out`` (:class:`DatasetLocked` if another run
    holds it; ``command``, default this process's command line, is written in the lock for it
    to name).  Chunk files already there
    are verified (recorded checksum, else their embedded metadata); a file that fails is
    named through ``report`` (one line) and recomputed.  Only chunks without a valid file are
    computed.  Raises :class:`DatasetMismatch` for another dataset in ``out`` and
    :class:`DatasetCorrupt` for an unreadable ``dataset.json`` (both: unless ``overwrite``).
    """
    angles, method = check_dataset_inputs(params, angles, workers, scheduler, solver)
    size = default_chunk_size(len(angles)) if chunk_size is None else int(chunk_size)
    if size < 1:
        raise ParameterError(f"chunk_size = {chunk_size!r} is invalid: must be >= 1")
    out = check_out_dir(out)
    meta = _metadata(params, sampling, angles, method, shapes, size)
    plan = plan_chunks(angles, size)
    own_client = isinstance(scheduler, str)
    client = connect_scheduler(scheduler) if own_client else scheduler
    try:
        with locked(out, command or shlex.join(sys.argv)):
            manifest = _Manifest(out, meta, _prepare_dir(out, meta, overwrite))
            try:
                return _compute(out, manifest, params, angles, plan,
                                shapes=shapes, workers=workers, client=client,
                                progress=progress, report=report)
            finally:
                manifest.flush()
    finally:
        if own_client:
            client.close()


def _compute(out: Path, manifest: _Manifest, params: RobotParams, angles: NDArray[np.float64],
             plan: list[NDArray[np.int64]], *, shapes: bool, workers: int | None, client: Any,
             progress: bool, report: Callable[[str], None]) -> DatasetSummary:
    """:func:`build_dataset`'s work in ``out`` (its lock held): verify the chunk files there,
    then solve the chunks of ``plan`` without a valid file and write each as it arrives."""
    from hsa_elastica.io.progress import interactive, keep_alive, progress_bar

    method = manifest.meta["solver"]
    todo, rejected = _verify_chunks(out, plan, manifest, report)
    manifest.flush()
    params_json = _canonical(params.to_dict())
    tasks = (ChunkTask(chunk=c, samples=plan[c], angles=angles[plan[c]], params_json=params_json,
                       solver=method, shapes=shapes) for c in todo)
    n_todo = int(sum(len(plan[c]) for c in todo))
    n_workers = 0
    t0 = time.perf_counter()
    if todo and progress and interactive():  # said before the first pose is solved
        report(f"{n_todo} samples in {len(todo)} chunks to compute"
               f"{f', {len(plan) - len(todo)} done before' if len(todo) < len(plan) else ''}"
               f" ({method} solver) -> {out}")
    if todo and client is None:
        _compile_in_parent(plan[todo[0]][:1], angles, params_json, method, shapes)
    with progress_bar(total=n_todo, unit="sample", desc="dataset", enabled=progress,
                      smoothing=0.1) as bar, keep_alive(bar):
        if todo:
            n_workers = _run_tasks(tasks, _chunk_writer(out, manifest, plan), workers, client, bar)
    return DatasetSummary(
        out=out, n_samples=len(angles), n_chunks=len(plan), chunks_computed=len(todo),
        chunks_reused=len(plan) - len(todo), samples_computed=n_todo,
        wall_time_s=time.perf_counter() - t0, workers=n_workers, solver=method,
        chunks_rejected=rejected,
    )


def _chunk_writer(out: Path, manifest: _Manifest,
                  plan: list[NDArray[np.int64]]) -> Callable[[int, Any], None]:
    """``write(chunk, table)``: one solved chunk's file, its record and the manifest's flush,
    as one step for Ctrl-C (an interrupted flush would leave its temporary file behind)."""
    def write(chunk: int, table: Any) -> None:
        data = encode_chunk(table, manifest.meta["fingerprint"], chunk)
        with deferred_interrupts() as pending:
            write_atomic(chunk_path(out, chunk), lambda p: p.write_bytes(data))
            manifest.record(chunk, chunk_record(chunk, data, plan[chunk]))
            manifest.flush(force=False)
        if pending:
            raise KeyboardInterrupt

    return write


def load(out: str | Path, *, allow_partial: bool = False) -> "pd.DataFrame":
    """The dataset in ``out`` as one DataFrame sorted by ``sample`` (index 0..n-1), its columns
    named by the output schema (:mod:`hsa_elastica.io.columns`, docs/outputs.md; a dataset of
    schema version 2 or older is renamed to them with a ``DeprecationWarning``);
    ``df.attrs["columns"]`` holds each column's unit, frame and meaning.

    Every chunk file is verified first: its SHA-256 against ``dataset.json``, or, for a chunk
    finished after the manifest's last update (a killed run), its embedded metadata.  Raises
    ``FileNotFoundError`` if ``out`` holds no dataset, :class:`DatasetCorrupt` (a
    ``ParameterError``) naming the first file that fails verification or an unreadable
    ``dataset.json``, and ``ValueError`` if chunks are missing (unless ``allow_partial``:
    then the finished chunks only).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hsa_elastica.experiments.dataset_chunks import arrow_schema

    out = Path(out)
    meta_path = out / "dataset.json"
    if not meta_path.exists():
        raise FileNotFoundError(f"{out} holds no dataset (no dataset.json)")
    meta = read_manifest(meta_path)
    records = manifest_records(meta)
    verify = int(meta.get("schema_version", 0)) >= 2  # version 1 files carry no checksums
    n_rods = int(meta["params"]["n_rods"])
    tables, missing = [], 0
    for c in range(int(meta["n_chunks"])):
        path = chunk_path(out, c)
        if not path.exists():
            missing += 1
            continue
        data = path.read_bytes()
        if not verify:
            tables.append(pq.read_table(pa.BufferReader(data)))
            continue
        rec = records.get(c)
        table, problem = check_chunk_bytes(data, meta["fingerprint"], c)
        if problem is None and rec is not None and rec.get("sha256") != hashlib.sha256(
            data
        ).hexdigest():
            problem = "differs from the checksum recorded in dataset.json"
        if problem is not None:
            raise DatasetCorrupt(
                f"{out}: {path.name} fails verification: it {problem}; rerun the same "
                "`hsa-elastica dataset` command to recompute it"
            )
        tables.append(table)
    if missing and not allow_partial:
        raise ValueError(f"{out}: {missing} of {meta['n_chunks']} chunks are missing "
                         "(rerun the same command to finish, or load(..., allow_partial=True))")
    version = int(meta.get("schema_version", 0))
    if version < 3 and tables:  # old column names: one concatenation, then renamed
        df = pa.concat_tables(tables).to_pandas()
    else:
        schema = arrow_schema(n_rods, bool(meta["shapes"]))
        df = pa.concat_tables(tables or [schema.empty_table()]).to_pandas()
    if version < 3:
        from hsa_elastica.io.columns import upgrade_columns

        df = upgrade_columns(df, f"dataset {out} (schema version {version})")
    df = df.sort_values("sample", kind="stable").reset_index(drop=True)
    df["iterations"] = df["iterations"].astype("Int64")  # nullable: null = not reported
    df["stable"] = df["stable"].astype("boolean")
    if version < 4:  # written before the symmetry columns: not tested
        from hsa_elastica.io.columns import flat_columns

        df["symmetry_broken"] = None
        for name in flat_columns("symmetry_branch_m", n_rods):
            df[name] = np.nan
        df = df[[c["name"] for c in column_docs(n_rods, bool(meta["shapes"]))]]
    df["symmetry_broken"] = df["symmetry_broken"].astype("boolean")
    if not allow_partial and (len(df) != meta["n_samples"] or df["sample"].duplicated().any()):
        raise ValueError(f"{out}: expected {meta['n_samples']} unique samples, found {len(df)}")
    from hsa_elastica.io.columns import column_metadata

    df.attrs["columns"] = column_metadata(df.columns)  # as load_steady_states and load_run
    return df


#: ``hsa_elastica.load_dataset``: :func:`load` under the package-level name
load_dataset = load
