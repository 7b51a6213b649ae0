"""Steady-state datasets: many poses of an HSA robot, chunked, resumable, on Dask.

A dataset directory ``DIR`` holds

* ``DIR/dataset.json`` -- format, schema (columns with units), package version, the robot
  parameters, the sampling, solver, chunk size and a ``fingerprint`` (SHA-256 of all of these
  in canonical JSON) that identifies the dataset;
* ``DIR/chunks/chunk-NNNNNN.parquet`` -- one Parquet file per finished chunk, written
  atomically (a temporary file renamed over the final name), so a file that exists is
  complete.

Sampling (motor angles [rad], rod ``i`` has handedness ``h_i``; a rod elongates only for
angles of its own sign, Eq. 3):

* random: sample ``s`` of seed ``S`` has ``angle_i = h_i * phi_max * u_i`` with
  ``u = numpy.random.default_rng([S, s]).random(n_rods)`` -- derived from the seed and the
  sample id alone, so chunking and workers never change the angles;
* grid: ``K`` values ``h_i * phi_max * linspace(0, 1, K)`` per rod, ``K ** n_rods`` samples in
  row-major order (rod 0 slowest);
* CSV: columns ``angle_0 .. angle_{n-1}``, sample id = row number.

Chunks (the unit of work) are contiguous blocks of the samples sorted along a Z-order
(Morton) curve of the normalised angles, so a chunk holds poses that are close to one
another; inside a chunk the poses are ordered nearest-neighbour first (from the one closest
to rest) and every solve is warm started from the previous one when the solver supports it
(:mod:`hsa_elastica.experiments.dataset_chunks`).  The plan depends only on the sampling and
the chunk size, so the numbers are bitwise the same whatever the number of workers.

Rerunning :func:`build_dataset` with the same arguments computes only the missing chunks;
other arguments (a different fingerprint) into an existing directory raise
:class:`DatasetMismatch` unless ``overwrite=True``.  :func:`load` returns the whole dataset as
one ``pandas.DataFrame`` sorted by sample.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.experiments.dataset_chunks import ChunkTask, column_docs, resolve_solver
from hsa_elastica.params import RobotParams

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "FORMAT",
    "SCHEMA_VERSION",
    "DatasetMismatch",
    "DatasetSummary",
    "random_angles",
    "grid_angles",
    "read_angles_csv",
    "plan_chunks",
    "default_chunk_size",
    "build_dataset",
    "load",
]

FORMAT = "hsa-elastica steady-state dataset"
SCHEMA_VERSION = 1
DEFAULT_PHI_MAX = math.pi


class DatasetMismatch(Exception):
    """The output directory already holds a dataset made with other arguments."""


# --------------------------------------------------------------------------------------------
# sampling
# --------------------------------------------------------------------------------------------
def _signs(params: RobotParams) -> NDArray[np.float64]:
    return np.asarray(params.handedness, dtype=np.float64)


def random_angles(params: RobotParams, n: int, seed: int, phi_max: float = DEFAULT_PHI_MAX,
                  start: int = 0) -> NDArray[np.float64]:
    """Samples ``start .. start+n-1``: (n, n_rods) angles uniform in each rod's elongating
    range ``h_i * [0, phi_max]``, sample ``s`` from ``default_rng([seed, s])``."""
    h = _signs(params) * float(phi_max)
    out = np.empty((int(n), params.n_rods), dtype=np.float64)
    for k in range(int(n)):
        out[k] = np.random.default_rng([int(seed), start + k]).random(params.n_rods) * h
    return out


def grid_angles(params: RobotParams, k: int, phi_max: float = DEFAULT_PHI_MAX) -> NDArray[np.float64]:
    """(k ** n_rods, n_rods) grid of ``h_i * phi_max * linspace(0, 1, k)``, row-major."""
    axes = [np.linspace(0.0, 1.0, int(k)) * float(phi_max) * h for h in _signs(params)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.reshape(-1) for m in mesh], axis=1).astype(np.float64)


def read_angles_csv(path: str | Path, n_rods: int) -> NDArray[np.float64]:
    """Columns ``angle_0 .. angle_{n_rods-1}`` [rad] of a CSV file (ValueError if missing/NaN)."""
    import pandas as pd

    df = pd.read_csv(path)
    names = [f"angle_{i}" for i in range(n_rods)]
    missing = [c for c in names if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)} (need {', '.join(names)})")
    values = df[names].to_numpy(dtype=np.float64)
    if len(values) == 0:
        raise ValueError(f"{path}: no rows")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{path}: angles must be finite numbers (rad)")
    return values


# --------------------------------------------------------------------------------------------
# chunk plan
# --------------------------------------------------------------------------------------------
def default_chunk_size(n_samples: int) -> int:
    """About 64 chunks, between 1 and 100 samples each (a function of N only)."""
    return int(min(100, max(1, math.ceil(n_samples / 64))))


def _morton_keys(angles: NDArray[np.float64]) -> NDArray[np.uint64]:
    lo, hi = angles.min(axis=0), angles.max(axis=0)
    u = (angles - lo) / np.where(hi > lo, hi - lo, 1.0)
    n_dim = angles.shape[1]
    bits = max(1, min(16, 63 // n_dim))
    q = np.minimum((u * (1 << bits)).astype(np.uint64), np.uint64((1 << bits) - 1))
    key = np.zeros(len(angles), dtype=np.uint64)
    for b in range(bits - 1, -1, -1):
        for d in range(n_dim):
            key = (key << np.uint64(1)) | ((q[:, d] >> np.uint64(b)) & np.uint64(1))
    return key


def _nearest_neighbour_order(angles: NDArray[np.float64]) -> NDArray[np.int64]:
    left = list(range(len(angles)))
    cur = int(np.argmin(np.linalg.norm(angles, axis=1)))  # closest to rest
    order = [cur]
    left.remove(cur)
    while left:
        d = np.linalg.norm(angles[left] - angles[cur], axis=1)
        cur = left.pop(int(np.argmin(d)))  # ties: the lowest index (deterministic)
        order.append(cur)
    return np.asarray(order, dtype=np.int64)


def plan_chunks(angles: NDArray[np.float64], chunk_size: int) -> list[NDArray[np.int64]]:
    """Sample ids of every chunk, in solve order (see the module docstring)."""
    by_curve = np.argsort(_morton_keys(angles), kind="stable")
    chunks = []
    for start in range(0, len(angles), chunk_size):
        ids = by_curve[start:start + chunk_size]
        chunks.append(ids[_nearest_neighbour_order(angles[ids])].astype(np.int64))
    return chunks


# --------------------------------------------------------------------------------------------
# metadata
# --------------------------------------------------------------------------------------------
def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _chunk_path(out: Path, chunk: int) -> Path:
    return out / "chunks" / f"chunk-{chunk:06d}.parquet"


def _write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _metadata(params: RobotParams, sampling: dict[str, Any], angles: NDArray[np.float64],
              solver: str, shapes: bool, chunk_size: int) -> dict[str, Any]:
    from hsa_elastica import __version__

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


def _prepare_dir(out: Path, meta: dict[str, Any], overwrite: bool) -> None:
    meta_path = out / "dataset.json"
    if meta_path.exists():
        try:
            old = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        if old.get("fingerprint") != meta["fingerprint"]:
            if not overwrite:
                raise DatasetMismatch(
                    f"{out} already holds a different dataset (differs in: "
                    f"{_differences(old, meta)}); use overwrite (--overwrite) or another "
                    "output directory"
                )
            for f in (out / "chunks").glob("*.parquet"):
                f.unlink()
    elif out.exists() and any(out.iterdir()) and not overwrite:
        raise DatasetMismatch(f"{out} is not empty and holds no dataset.json; use overwrite "
                              "(--overwrite) or another output directory")
    (out / "chunks").mkdir(parents=True, exist_ok=True)
    for f in (out / "chunks").glob(".*.tmp"):  # left by a killed run
        f.unlink()
    text = json.dumps(meta, indent=1, allow_nan=False) + "\n"
    _write_atomic(meta_path, lambda p: p.write_text(text, encoding="utf-8"))


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

    def line(self) -> str:
        rate = self.samples_computed / self.wall_time_s if self.wall_time_s > 0 else 0.0
        if self.samples_computed == 0:
            return f"{self.n_samples} samples in {self.out}: complete, nothing to compute"
        return (
            f"{self.n_samples} samples in {self.out} ({self.n_chunks} chunks: "
            f"{self.chunks_computed} computed, {self.chunks_reused} already there); "
            f"{self.samples_computed} solved ({self.solver}) in {self.wall_time_s:.1f} s on "
            f"{self.workers} worker(s): {rate:.2f} samples/s"
        )


def _start_client(workers: int | None, scheduler: str | None) -> tuple[Any, Any, int]:
    import logging

    from dask.distributed import Client, LocalCluster

    if scheduler is not None:
        client = Client(scheduler)
        return client, None, max(1, sum(client.nthreads().values()))
    n = workers if workers is not None else (os.cpu_count() or 1)
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    return Client(cluster), cluster, n


def _run_tasks(tasks: Iterator[ChunkTask], write: Callable[[int, Any], None],
               workers: int | None, scheduler: str | None, bar: Any) -> int:
    """Submit the chunk tasks to Dask (a bounded window of 2 per worker, so memory does not
    grow with N) and write each result as soon as it arrives."""
    from dask.distributed import as_completed

    from hsa_elastica.experiments.dataset_chunks import solve_chunk

    client, cluster, n_workers = _start_client(workers, scheduler)
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
    finally:
        client.close()
        if cluster is not None:
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
    scheduler: str | None = None,
    chunk_size: int | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> DatasetSummary:
    """Compute the steady states of ``angles`` (n, n_rods) [rad] into the dataset ``out``.

    ``sampling`` describes how the angles were made (stored in dataset.json and part of the
    fingerprint).  ``solver``: "auto" (static if available, else dynamic relaxation),
    "static" or "dynamic".  ``workers``: size of the local Dask cluster (processes, one thread
    each; default all cores), ignored with ``scheduler`` (address of an existing cluster).
    Only chunks without a file are computed.  Raises :class:`DatasetMismatch` (see module doc).
    """
    from tqdm import tqdm

    angles = np.ascontiguousarray(angles, dtype=np.float64)
    if angles.ndim != 2 or angles.shape[1] != params.n_rods or len(angles) == 0:
        raise ValueError(f"angles must have shape (n > 0, n_rods = {params.n_rods}), "
                         f"got {angles.shape}")
    size = default_chunk_size(len(angles)) if chunk_size is None else int(chunk_size)
    if size < 1:
        raise ValueError(f"chunk_size = {chunk_size!r} is invalid: must be >= 1")
    method = resolve_solver(solver)
    out = Path(out)
    meta = _metadata(params, sampling, angles, method, shapes, size)
    _prepare_dir(out, meta, overwrite)
    plan = plan_chunks(angles, size)
    todo = [c for c in range(len(plan)) if not _chunk_path(out, c).exists()]
    params_json = _canonical(params.to_dict())
    tasks = (ChunkTask(chunk=c, samples=plan[c], angles=angles[plan[c]], params_json=params_json,
                       solver=method, shapes=shapes) for c in todo)

    def write(chunk: int, table: Any) -> None:
        import pyarrow.parquet as pq

        _write_atomic(_chunk_path(out, chunk), lambda p: pq.write_table(table, p))

    n_todo = int(sum(len(plan[c]) for c in todo))
    t0 = time.perf_counter()
    n_workers = 0
    with tqdm(total=n_todo, unit="sample", desc="dataset", disable=not progress,
              smoothing=0.1) as bar:
        if todo:
            n_workers = _run_tasks(tasks, write, workers, scheduler, bar)
    return DatasetSummary(
        out=out, n_samples=len(angles), n_chunks=len(plan), chunks_computed=len(todo),
        chunks_reused=len(plan) - len(todo), samples_computed=n_todo,
        wall_time_s=time.perf_counter() - t0, workers=n_workers, solver=method,
    )


def load(out: str | Path, *, allow_partial: bool = False) -> "pd.DataFrame":
    """The dataset in ``out`` as one DataFrame sorted by ``sample`` (index 0..n-1).

    Raises ``FileNotFoundError`` if ``out`` holds no dataset and ``ValueError`` if chunks are
    missing (unless ``allow_partial``: then the finished chunks only).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hsa_elastica.experiments.dataset_chunks import arrow_schema

    out = Path(out)
    meta_path = out / "dataset.json"
    if not meta_path.exists():
        raise FileNotFoundError(f"{out} holds no dataset (no dataset.json)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    n_rods = int(meta["params"]["n_rods"])
    files = [_chunk_path(out, c) for c in range(int(meta["n_chunks"]))]
    present = [f for f in files if f.exists()]
    if len(present) < len(files) and not allow_partial:
        raise ValueError(f"{out}: {len(files) - len(present)} of {len(files)} chunks are missing "
                         "(rerun the same command to finish, or load(..., allow_partial=True))")
    schema = arrow_schema(n_rods, bool(meta["shapes"]))
    tables = [pq.read_table(f) for f in present] or [schema.empty_table()]
    df: pd.DataFrame = pa.concat_tables(tables).to_pandas()
    df = df.sort_values("sample", kind="stable").reset_index(drop=True)
    df["iterations"] = df["iterations"].astype("Int64")  # nullable: null = not reported
    df["stable"] = df["stable"].astype("boolean")
    if not allow_partial and (len(df) != meta["n_samples"] or df["sample"].duplicated().any()):
        raise ValueError(f"{out}: expected {meta['n_samples']} unique samples, found {len(df)}")
    return df


def describe_sampling(kind: str, **fields: Any) -> dict[str, Any]:
    """The ``sampling`` record of dataset.json (kind plus its arguments)."""
    return {"kind": kind, **fields}


def sampled_angles(params: RobotParams, sampling: dict[str, Any]) -> NDArray[np.float64]:
    """Angles of a random/grid ``sampling`` record (CSV samplings carry their own angles)."""
    phi_max = float(sampling.get("phi_max", DEFAULT_PHI_MAX))
    if sampling["kind"] == "random":
        return random_angles(params, int(sampling["n"]), int(sampling["seed"]), phi_max)
    if sampling["kind"] == "grid":
        return grid_angles(params, int(sampling["k"]), phi_max)
    raise ValueError(f"sampling kind {sampling['kind']!r} has no generator")

