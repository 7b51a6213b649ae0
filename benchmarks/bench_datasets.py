"""Throughput, scaling and memory of ``hsa-elastica dataset`` on the paper robot.

Measured side by side in one run, on a local Dask cluster whose workers are started and warmed
up (package imported, numba kernels loaded from the cache, one pose solved) before the clock
starts, so the numbers are the steady dataset rate, not the cluster start-up:

1. samples/s with 1 worker and with 2 workers on the same N random poses, samples/s per core,
   and the ratio 2 workers / 1 worker (target >= 1.7);
2. peak RSS of the client process (the ``hsa-elastica dataset`` command, run as a subprocess
   against the warm cluster) and of the workers, at two N (memory flat in N);
3. CPU seconds per pose of the dataset's solver inside one chunk (warm started) and from rest,
   against dynamic relaxation on a few of the same poses, one core.

The issue's target is 10,000 random poses in under 5 minutes of wall time on 2 cores with the
static solver; the projected time for 10,000 poses at the measured 2-worker rate is printed.

Run: python benchmarks/bench_datasets.py [--n N] [--memory-n N1 N2] [--dynamic]
(defaults: static solver if available; N = 1000 and memory at 1000 / 10000 with it, N = 12
and memory at 8 / 32 with dynamic relaxation, about 1.3 s per pose.)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hsa_elastica.experiments import datasets as ds
from hsa_elastica.experiments.dataset_chunks import resolve_solver
from hsa_elastica.params import paper_robot_params


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _warm(client, params, solver: str) -> None:  # type: ignore[no-untyped-def]
    """Import the package and solve one pose on every worker (numba cache load)."""
    from hsa_elastica.experiments.dataset_chunks import ChunkTask, solve_chunk

    task = ChunkTask(chunk=0, samples=np.array([0]), angles=np.zeros((1, params.n_rods)),
                     params_json=json.dumps(params.to_dict()), solver=solver, shapes=False)
    client.run(solve_chunk, task)


def throughput(params, angles, solver: str, workers: int, tmp: Path) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(samples per wall second, samples per worker CPU second)."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        _warm(client, params, solver)
        cpu0 = sum(client.run(time.process_time).values())
        t0 = time.perf_counter()
        summary = ds.build_dataset(tmp / f"w{workers}", params, angles,
                                   {"kind": "random", "n": len(angles), "seed": 0},
                                   solver=solver, scheduler=cluster.scheduler_address,
                                   progress=False)
        wall = time.perf_counter() - t0
        cpu = sum(client.run(time.process_time).values()) - cpu0
    assert summary.samples_computed == len(angles)
    return len(angles) / wall, len(angles) / cpu


def memory(params_file: Path, n: int, solver: str, tmp: Path) -> tuple[float, float, float]:
    """(wall s, client peak RSS MB, max worker peak RSS MB) of one CLI run on 2 warm workers."""
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as client:
        _warm(client, paper_robot_params(), solver)
        cmd = [sys.executable, "-m", "hsa_elastica.cli", "dataset", "--random", str(n),
               "--seed", "1", "--params", str(params_file), "--scheduler",
               cluster.scheduler_address, "--quiet", "--out", str(tmp / f"m{n}")]
        if solver == "dynamic":
            cmd.append("--dynamic")
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({status})")
        workers = client.run(_peak_rss_mb)
    return wall, usage.ru_maxrss / 1024.0, max(workers.values())


def per_pose(params, angles, solver: str, *, warm: bool) -> float:  # type: ignore[no-untyped-def]
    """CPU seconds per pose in this process (one core, numba warm): ``warm`` solves the poses
    as one chunk of the dataset plan (nearest-neighbour order, warm started), else each pose
    as its own chunk (from rest)."""
    from hsa_elastica.experiments.dataset_chunks import ChunkTask, solve_chunk

    def task(a: np.ndarray) -> ChunkTask:
        order = ds.plan_chunks(a, len(a))[0]
        return ChunkTask(chunk=0, samples=order, angles=a[order],
                         params_json=json.dumps(params.to_dict()), solver=solver, shapes=False)

    solve_chunk(task(angles[:1]))  # numba cache load
    t0 = time.process_time()
    tables = [solve_chunk(task(angles))] if warm else [solve_chunk(task(a[None, :])) for a in angles]
    cpu = (time.process_time() - t0) / len(angles)
    errors = [e for t in tables for e in t.column("error").to_pylist() if e is not None]
    if errors:
        raise RuntimeError(f"{solver} solves failed: {errors[0]}")
    return cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dynamic", action="store_true", help="dynamic relaxation for the dataset")
    ap.add_argument("--n", type=int, help="poses of the scaling runs")
    ap.add_argument("--memory-n", type=int, nargs=2, metavar=("N1", "N2"))
    ap.add_argument("--compare", type=int, default=3, help="poses of the dynamic comparison")
    args = ap.parse_args()
    solver = resolve_solver("dynamic" if args.dynamic else "auto")
    n = args.n or (1000 if solver == "static" else 12)
    n_mem = args.memory_n or ((1000, 10000) if solver == "static" else (8, 32))
    params = paper_robot_params()
    angles = ds.random_angles(params, n, seed=0)
    print(f"dataset benchmark: paper robot, solver = {solver}, {os.cpu_count()} cores, "
          f"N = {n} random poses")

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (r1, c1), (r2, c2) = (throughput(params, angles, solver, w, tmp) for w in (1, 2))
        same = ds.load(tmp / "w1").equals(ds.load(tmp / "w2"))
        print(f"  1 worker : {r1:8.2f} samples/s ({r1:.2f} per core); "
              f"{c1:.2f} samples per worker CPU second")
        print(f"  2 workers: {r2:8.2f} samples/s ({r2 / 2:.2f} per core); "
              f"{c2:.2f} samples per worker CPU second")
        print(f"  ratio 2 workers / 1 worker = {r2 / r1:.2f} (target >= 1.7); identical numbers: "
              f"{same}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"  10,000 poses on 2 workers: {10000 / r2 / 60:.1f} min at the measured rate, "
              f"{10000 / c2 / 2 / 60:.1f} min with 2 idle cores (target < 5)")

        from hsa_elastica.params import save_params

        params_file = tmp / "paper.yaml"
        save_params(params, params_file)
        for m in n_mem:
            wall, client_mb, worker_mb = memory(params_file, m, solver, tmp)
            print(f"  N = {m:6d}: {wall:7.1f} s wall (CLI, 2 warm workers), peak RSS client "
                  f"{client_mb:6.0f} MB, worker {worker_mb:6.0f} MB")

    k = max(1, args.compare)
    # poses of one chunk of the plan of the N poses (what a worker solves in a row)
    plan = ds.plan_chunks(angles, ds.default_chunk_size(len(angles)))
    chunk = angles[plan[len(plan) // 2]]
    t_chunk = per_pose(params, chunk, solver, warm=True)
    t_cold = per_pose(params, chunk[:k], solver, warm=False)
    t_dyn = t_cold if solver == "dynamic" else per_pose(params, chunk[:k], "dynamic", warm=False)
    print(f"  CPU per pose, one core: {solver} in a chunk of {len(chunk)} (warm started) "
          f"{t_chunk * 1e3:.1f} ms, {solver} from rest {t_cold * 1e3:.1f} ms ({k} poses), "
          f"dynamic relaxation {t_dyn * 1e3:.1f} ms ({k} poses)")
    print(f"  ratio dynamic relaxation / dataset {solver} per pose = {t_dyn / t_chunk:.1f}")

if __name__ == "__main__":
    main()
