"""Which poses a steady-state dataset holds and in which chunks: random, grid and CSV sampling
of the motor angles [rad], the Z-order chunk plan (the sampling rules are in
:mod:`hsa_elastica.experiments.datasets`' docstring)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.experiments.dataset_inputs import check_n_samples, check_phi_max
from hsa_elastica.params import RobotParams

__all__ = [
    "DEFAULT_PHI_MAX",
    "random_angles",
    "grid_angles",
    "read_angles_csv",
    "default_chunk_size",
    "plan_chunks",
    "describe_sampling",
    "sampled_angles",
]

DEFAULT_PHI_MAX = math.pi


# --------------------------------------------------------------------------------------------
# sampling
# --------------------------------------------------------------------------------------------
def _signs(params: RobotParams) -> NDArray[np.float64]:
    return np.asarray(params.handedness, dtype=np.float64)


def random_angles(params: RobotParams, n: int, seed: int, phi_max: float = DEFAULT_PHI_MAX,
                  start: int = 0) -> NDArray[np.float64]:
    """Samples ``start .. start+n-1``: (n, n_rods) angles uniform in each rod's elongating
    range ``h_i * [0, phi_max]``, sample ``s`` from ``default_rng([seed, s])``."""
    check_n_samples(int(n), "n")
    check_phi_max(float(phi_max))
    h = _signs(params) * float(phi_max)
    out = np.empty((int(n), params.n_rods), dtype=np.float64)
    for k in range(int(n)):
        out[k] = np.random.default_rng([int(seed), start + k]).random(params.n_rods) * h
    return out


def grid_angles(params: RobotParams, k: int, phi_max: float = DEFAULT_PHI_MAX) -> NDArray[np.float64]:
    """(k ** n_rods, n_rods) grid of ``h_i * phi_max * linspace(0, 1, k)``, row-major."""
    check_n_samples(int(k) ** params.n_rods, "k ** n_rods")
    check_phi_max(float(phi_max))
    axes = [np.linspace(0.0, 1.0, int(k)) * float(phi_max) * h for h in _signs(params)]
    mesh = np.meshgrid(*axes, indexing="ij")
    return np.stack([m.reshape(-1) for m in mesh], axis=1).astype(np.float64)


def read_angles_csv(path: str | Path, n_rods: int) -> NDArray[np.float64]:
    """Columns ``angle_0 .. angle_{n_rods-1}`` (or the schema's ``motor_angles_rad_0 ..``,
    :func:`~hsa_elastica.io.csv_input.angle_columns`) [rad] of a CSV file, sample ``k`` = data row
    ``k``, read by the package's one strict CSV reader
    (:func:`hsa_elastica.io.csv_input.read_csv_columns`: ``ParameterError`` naming the file,
    line and column for a missing or repeated column, a row with too many or too few fields, no
    rows, a value that is not a finite number) and checked by
    :func:`~hsa_elastica.params.check_motor_angles` (the message names the line); at most
    :data:`MAX_SAMPLES` rows."""
    from hsa_elastica.io.csv_input import angle_columns, check_angle_rows, read_csv_columns

    names = angle_columns(path, n_rods)
    table = read_csv_columns(path, names, what="--angles-csv")
    check_n_samples(len(table.values), f"{path}: rows")
    return np.ascontiguousarray(check_angle_rows(table, names, what=f"--angles-csv {path}"),
                                dtype=np.float64)


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


def plan_chunks(angles: NDArray[np.float64], chunk_size: int) -> list[NDArray[np.int64]]:
    """Sample ids of every chunk, in solve order (see the module docstring)."""
    from hsa_elastica.robots.statics_api import nearest_neighbour_order

    by_curve = np.argsort(_morton_keys(angles), kind="stable")
    chunks = []
    for start in range(0, len(angles), chunk_size):
        ids = by_curve[start:start + chunk_size]
        # Euclidean distances, from the pose closest to rest (ties: the lowest index)
        chunks.append(ids[nearest_neighbour_order(angles[ids], ord=None)].astype(np.int64))
    return chunks


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
