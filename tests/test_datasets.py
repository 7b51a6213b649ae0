"""Steady-state datasets (``hsa-elastica dataset``): sampling, resumability after kill -9,
bitwise determinism across worker counts and schedulers, refusal of a changed command, CLI
errors.  A 6-element robot with a short ramp keeps each pose at a few tenths of a second."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from hsa_elastica.cli import main
from hsa_elastica.experiments import datasets as ds
from hsa_elastica.experiments.dataset_chunks import ChunkTask, resolve_solver, solve_chunk
from hsa_elastica.params import RobotParams, RodParams, SimulationParams, save_params

ROOT = Path(__file__).resolve().parents[1]
HAVE_STATIC = resolve_solver("auto") == "static"
# poses of the resumability / determinism runs, one per chunk so that the kill lands between
# chunk files: the static solver takes tens of ms per pose, relaxation a few tenths of a second
N = 24 if HAVE_STATIC else 8
CHUNK = 1


def tiny_params() -> RobotParams:
    return RobotParams(
        rod=RodParams(n_elements=6),
        simulation=SimulationParams(dt=5e-5, ramp_time=0.1),
    )


@pytest.fixture(scope="module", autouse=True)
def _workers_import_this_checkout() -> Iterator[None]:
    # Dask worker processes and the CLI subprocess must import this checkout's package
    path = os.environ.get("PYTHONPATH", "")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), path]) if path else str(ROOT))
        yield


@pytest.fixture(scope="module")
def params_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("params") / "tiny.yaml"
    save_params(tiny_params(), path)
    return path


def cli_args(params_file: Path, out: Path, *extra: str) -> list[str]:
    return ["dataset", "--random", str(N), "--seed", "11", "--params", str(params_file),
            "--chunk-size", str(CHUNK), "--quiet", "--out", str(out), *extra]


@pytest.fixture(scope="module")
def reference(params_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run on a local cluster of one worker."""
    out = tmp_path_factory.mktemp("ref") / "ds"
    assert main(cli_args(params_file, out, "--workers", "1")) == 0
    return out


def chunk_bytes(out: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in sorted((out / "chunks").glob("*.parquet"))}


# --------------------------------------------------------------------------------------------
def test_random_angles_depend_only_on_seed_and_sample_id() -> None:
    p = tiny_params()
    many = ds.random_angles(p, 20, seed=5)
    assert np.array_equal(many[13], ds.random_angles(p, 1, seed=5, start=13)[0])
    # each rod only in its elongating range h_i * [0, pi]
    signed = many * np.asarray(p.handedness)
    assert np.all(signed >= 0.0) and np.all(signed <= math.pi)
    assert not np.array_equal(many, ds.random_angles(p, 20, seed=6))


def test_grid_and_chunk_plan_cover_every_sample_once() -> None:
    p = tiny_params()
    grid = ds.grid_angles(p, 3)
    assert grid.shape == (81, 4)
    assert set(np.round(np.abs(grid[:, 0]), 12)) == {0.0, round(math.pi / 2, 12), round(math.pi, 12)}
    plan = ds.plan_chunks(grid, 10)
    ids = np.concatenate(plan)
    assert sorted(ids.tolist()) == list(range(81)) and max(len(c) for c in plan) == 10
    # inside a chunk, consecutive poses are nearest neighbours: the mean step is at most the
    # mean step of the same poses in sample-id order
    for c in plan:
        a = grid[c]
        steps = np.linalg.norm(np.diff(a, axis=0), axis=1).mean() if len(c) > 1 else 0.0
        ref = np.linalg.norm(np.diff(grid[np.sort(c)], axis=0), axis=1).mean() if len(c) > 1 else 0.0
        assert steps <= ref + 1e-12


def test_chunk_rows_match_a_direct_solve_and_shapes_are_consistent() -> None:
    from hsa_elastica.robots.steady_state import solve_steady_state

    p = tiny_params()
    angles = np.array([[1.0, -0.5, 2.0, -1.5]])
    task = ChunkTask(chunk=0, samples=np.array([4]), angles=angles,
                     params_json=json.dumps(p.to_dict()), solver="dynamic", shapes=True)
    row = solve_chunk(task).to_pylist()[0]
    direct = solve_steady_state(p, angles[0], record=False)
    assert row["sample"] == 4 and row["method"] == "dynamic" and row["converged"]
    assert row["stable"] is None  # dynamic relaxation does not report stability
    assert [row[f"platform_position_m_{c}"] for c in "xyz"] == direct.platform_position_m.tolist()
    quaternion = [row[f"platform_quaternion_xyzw_{c}"] for c in "xyzw"]
    assert quaternion == direct.platform_quaternion_xyzw.tolist()
    for i in range(4):
        tip = [row[f"rod_tip_positions_m_{i}_{c}"] for c in "xyz"]
        assert tip == direct.rod_tip_positions_m[i].tolist()
        nodes = np.array([row[f"rod_node_positions_m_{i}_{c}"] for c in "xyz"])
        assert nodes.shape == (3, 7) and len(row[f"rod_curvatures_per_m_{i}_twist"]) == 5
        assert np.array_equal(nodes[:, -1], tip)  # shape and tip columns agree
        assert np.allclose(nodes[:, 0], p.rod_base(i), atol=1e-12)  # base held by the motor


@pytest.mark.skipif(not HAVE_STATIC, reason="the static solver is not available")
def test_static_shapes_agree_with_relaxation() -> None:
    p = tiny_params()
    angles = np.array([[1.0, -0.5, 2.0, -1.5], [1.1, -0.5, 2.0, -1.4]])

    def rows(solver: str) -> list[dict]:  # type: ignore[type-arg]
        task = ChunkTask(chunk=0, samples=np.array([0, 1]), angles=angles,
                         params_json=json.dumps(p.to_dict()), solver=solver, shapes=True)
        return solve_chunk(task).to_pylist()  # type: ignore[no-any-return]

    static, dynamic = rows("static"), rows("dynamic")
    assert [r["method"] for r in static] == ["static", "static"] and all(r["stable"] for r in static)
    for s, d in zip(static, dynamic):
        # relaxation stops at node speeds < 1e-4 m/s with damping 50 1/s, i.e. within about
        # 1e-4 / 50 = 2e-6 m of the equilibrium (measured: 3e-8 m); curvatures reach ~20 1/m
        # and a 1e-6 m node error over 17 mm elements is ~1e-4 1/m (measured: 3e-5 1/m)
        for i in range(4):
            for c in "xyz":
                nodes = f"rod_node_positions_m_{i}_{c}"
                assert np.allclose(s[nodes], d[nodes], rtol=0, atol=2e-6)
                assert s[nodes][-1] == s[f"rod_tip_positions_m_{i}_{c}"]
            for name in ("bend_1", "bend_2", "twist"):
                kappa = f"rod_curvatures_per_m_{i}_{name}"
                assert np.allclose(s[kappa], d[kappa], rtol=0, atol=1e-3)


def test_kill_9_then_resume_gives_the_uninterrupted_dataset(
    params_file: Path, reference: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ds"
    cmd = [sys.executable, "-m", "hsa_elastica.cli", *cli_args(params_file, out, "--workers", "1")]
    proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60.0
        while not list((out / "chunks").glob("chunk-*.parquet")):
            assert proc.poll() is None and time.monotonic() < deadline, "no chunk written"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its Dask workers
        proc.wait()
    before = {f.name: f.stat().st_mtime_ns for f in (out / "chunks").glob("chunk-*.parquet")}
    assert 1 <= len(before) < N, "the kill must land mid-run"
    assert main(cli_args(params_file, out, "--workers", "1")) == 0
    after = {f.name: f.stat().st_mtime_ns for f in (out / "chunks").glob("chunk-*.parquet")}
    assert {k: after[k] for k in before} == before  # finished chunks were not recomputed
    df = ds.load(out)
    assert df["sample"].tolist() == list(range(N))
    ref = ds.load(reference)
    assert df.equals(ref)
    assert chunk_bytes(out) == chunk_bytes(reference)
    assert not list((out / "chunks").glob(".*"))  # no temporary files left


def test_two_workers_on_an_existing_scheduler_give_the_same_bytes(
    params_file: Path, reference: Path, tmp_path: Path
) -> None:
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster:
        out = tmp_path / "ds"
        assert main(cli_args(params_file, out, "--scheduler", cluster.scheduler_address)) == 0
    assert chunk_bytes(out) == chunk_bytes(reference)
    assert len(chunk_bytes(out)) == N


def test_changed_command_is_refused(
    params_file: Path, reference: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = chunk_bytes(reference)
    args = cli_args(params_file, reference)
    args[args.index("--seed") + 1] = "12"
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "sampling" in err and "--overwrite" in err
    assert chunk_bytes(reference) == before


def test_overwrite_replaces_a_different_dataset(tmp_path: Path) -> None:
    p = tiny_params()
    meta_a = ds._metadata(p, {"kind": "random", "n": 2, "seed": 1}, np.zeros((2, 4)), "dynamic",
                          False, 1)
    ds._prepare_dir(tmp_path, meta_a, overwrite=False)
    (tmp_path / "chunks" / "chunk-000000.parquet").write_bytes(b"old")
    meta_b = dict(meta_a, fingerprint="other")
    with pytest.raises(ds.DatasetMismatch):
        ds._prepare_dir(tmp_path, meta_b, overwrite=False)
    ds._prepare_dir(tmp_path, meta_b, overwrite=True)
    assert not list((tmp_path / "chunks").iterdir())
    assert json.loads((tmp_path / "dataset.json").read_text())["fingerprint"] == "other"


@pytest.mark.parametrize(
    "argv",
    [
        ["--random", "5"],  # no seed
        ["--random", "0", "--seed", "1"],
        ["--random", "5", "--seed", "1", "--grid", "3"],
        ["--grid", "3", "--seed", "1"],
        ["--angles-csv", "/nonexistent/angles.csv"],
        ["--random", "5", "--seed", "1", "--workers", "2", "--scheduler", "tcp://h:1"],
        ["--random", "5", "--seed", "1", "--chunk-size", "0"],
        ["--random", "5", "--seed", "-1"],
        ["--random", "5", "--seed", "1", "--phi-max", "-1"],
    ],
)
def test_bad_arguments_exit_2_with_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["dataset", *argv, "--out", str(tmp_path / "ds")]) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err
    assert not (tmp_path / "ds").exists()


def test_bad_csv_columns_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "a.csv"
    csv.write_text("angle_0,angle_1\n0.1,0.2\n")
    assert main(["dataset", "--angles-csv", str(csv), "--out", str(tmp_path / "ds")]) == 2
    assert "angle_2" in capsys.readouterr().err


@pytest.mark.skipif(not HAVE_STATIC, reason="the static solver is not available")
def test_rows_carry_the_symmetry_of_the_steady_state() -> None:
    """The dataset's symmetry columns are the steady state's (one name per quantity across
    JSON, Parquet and result objects): an equal elongation of the four rods is symmetric under
    every symmetry of the robot and keeps them (not broken, branch zero); the rows equal the
    static solver's own result for each command."""
    from hsa_elastica.robots.statics_api import solve_static

    p = tiny_params()
    angles = np.array([[1.0, -1.0, 1.0, -1.0], [1.0, -0.5, 2.0, -1.5]])
    task = ChunkTask(chunk=0, samples=np.array([0, 1]), angles=angles,
                     params_json=json.dumps(p.to_dict()), solver="static", shapes=False)
    rows = solve_chunk(task).to_pylist()
    for row, a in zip(rows, angles):
        direct = solve_static(p, a)
        assert row["symmetry_broken"] == direct.symmetry_broken
        branch = [row[f"symmetry_branch_m_{c}"] for c in "xyz"]
        if direct.symmetry_branch_m is None:
            assert all(math.isnan(b) for b in branch)
        else:
            assert branch == direct.symmetry_branch_m.tolist()
    assert rows[0]["symmetry_broken"] is False
    assert [rows[0][f"symmetry_branch_m_{c}"] for c in "xyz"] == [0.0, 0.0, 0.0]
