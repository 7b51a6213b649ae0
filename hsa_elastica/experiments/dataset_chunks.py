"""One chunk of a steady-state dataset: solve its poses in order, return an Arrow table.

This is the unit of work that :mod:`hsa_elastica.experiments.datasets` sends to the Dask
workers.  It runs in the worker process: the solver is resolved there by name (``"static"``
or ``"dynamic"``), the numba kernels are loaded from the on-disk cache once per process and
stay compiled for every later chunk.  Inside a chunk every solve after the first is warm
started from the previous solution when the solver accepts ``initial=`` (the static solver);
the first pose of every chunk starts from rest, so a chunk's numbers depend only on the chunk
(its poses and their order), never on which worker ran it or what it ran before.

A pose whose solve raises (e.g. ``SimulationDiverged``) becomes a row with NaN results,
``converged = False``, ``method = "failed"`` and the exception in ``error``; the next pose then
starts from rest again.
"""

from __future__ import annotations

import functools
import json
import logging
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.io.held_messages import held_warnings

__all__ = ["ChunkTask", "SOLVERS", "resolve_solver", "arrow_schema", "column_docs", "solve_chunk"]

log = logging.getLogger(__name__)

#: solver names accepted by :func:`resolve_solver` ("auto" = static)
SOLVERS = ("auto", "static", "dynamic")


@dataclass(frozen=True)
class ChunkTask:
    """What a worker needs to compute one chunk (picklable, small)."""

    chunk: int
    samples: NDArray[np.int64]  # sample ids in solve order
    angles: NDArray[np.float64]  # (len(samples), n_rods) motor angles [rad], same order
    params_json: str  # RobotParams.to_dict() as canonical JSON
    solver: str  # "static" | "dynamic" (already resolved)
    shapes: bool


def resolve_solver(name: str) -> str:
    """``"auto"`` -> ``"static"`` (:func:`~hsa_elastica.robots.statics_api.solve_static`, which
    falls back to dynamic relaxation itself where Newton fails); ``"static"`` and ``"dynamic"``
    as given."""
    if name not in SOLVERS:
        raise ValueError(f"solver = {name!r} is invalid: must be one of {SOLVERS}")
    return "static" if name == "auto" else name


@functools.lru_cache(maxsize=8)
def _params(params_json: str) -> Any:
    from hsa_elastica.params import RobotParams

    return RobotParams.from_dict(json.loads(params_json))


def _pose_solver(solver: str, shapes: bool) -> tuple[Callable[..., Any], bool]:
    """(solve(params, angles, initial) -> result, whether ``initial`` is used)."""
    if solver == "static":
        from hsa_elastica.robots.statics_api import solve_static

        def static(params: Any, angles: Any, initial: Any) -> Any:
            result = solve_static(params, angles, initial=initial)
            if shapes and getattr(result, "diagnostics", None) is None and getattr(
                result, "state", None
            ) is None:  # a fallback to relaxation without the rod state: record it
                from hsa_elastica.robots.steady_state import solve_steady_state

                result = solve_steady_state(params, angles, record=True)
            return result

        return static, True
    from hsa_elastica.robots.steady_state import solve_steady_state

    def dynamic(params: Any, angles: Any, initial: Any) -> Any:
        return solve_steady_state(params, angles, record=shapes)

    return dynamic, False


# --------------------------------------------------------------------------------------------
# schema
# --------------------------------------------------------------------------------------------
def column_docs(n_rods: int, shapes: bool) -> list[dict[str, str]]:
    """Name, Arrow type, unit, frame and meaning of every column (also stored in dataset.json
    and, without the type, as each field's metadata in the chunk files: see
    :func:`hsa_elastica.io.columns.read_column_metadata`): the quantities
    :data:`~hsa_elastica.io.columns.DATASET_KEYS` of the output schema, flattened by its suffix
    rule (the rod shapes only with ``shapes``)."""
    from hsa_elastica.io.columns import DATASET_KEYS, column_metadata, flat_columns, quantity

    cols = []
    for key in DATASET_KEYS:
        q = quantity(key)
        if q.dtype == "list<float64>" and not shapes:
            continue
        names = flat_columns(key, n_rods)
        for name, meta in column_metadata(names).items():
            cols.append({"name": name, "type": q.dtype, **meta})
    return cols


def arrow_schema(n_rods: int, shapes: bool) -> Any:
    """The ``pyarrow.Schema`` of a chunk file: each field carries its unit, frame and
    description (:func:`column_docs`), the schema all of them as JSON under
    :data:`hsa_elastica.io.columns.METADATA_KEY`."""
    import pyarrow as pa

    types = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(),
             "string": pa.string(), "list<float64>": pa.list_(pa.float64())}
    from hsa_elastica.io.columns import METADATA_KEY

    docs = column_docs(n_rods, shapes)
    meta = {c["name"]: {k: c[k] for k in ("unit", "frame", "description")} for c in docs}
    return pa.schema(
        [pa.field(c["name"], types[c["type"]], metadata=meta[c["name"]]) for c in docs],
        metadata={METADATA_KEY: json.dumps(meta)},
    )


# --------------------------------------------------------------------------------------------
# rows
# --------------------------------------------------------------------------------------------
def _vector(result: Any, name: str, size: int) -> list[float]:
    value = getattr(result, name, None)
    if value is None:
        return [math.nan] * size
    return [float(v) for v in np.asarray(value, dtype=np.float64).reshape(size)]


def _static_shape_values(result: Any, n_rods: int) -> dict[str, list[float]]:
    """Rod shapes of a static solution: its saved state re-evaluated once in the cached static
    solver of its params (so the curvatures are PyElastica's ``kappa`` of exactly that state)."""
    from hsa_elastica.robots.statics_api import static_solver

    solver, _ = static_solver(result.params)
    solver.set_pose(result.state[1])
    solver.evaluate(np.asarray(result.motor_angles_rad, dtype=np.float64))
    model = solver.model
    n_el = int(result.params.rod.n_elements)
    out: dict[str, list[float]] = {}
    for i in range(n_rods):
        tip = int(model.tables.joints.node[i])
        pos = model.rod_arrays.position[:, tip - n_el:tip + 1]
        v0 = int(model.tables.couplings.vor_start[i])
        kappa = model.rod_arrays.kappa[:, v0:v0 + n_el - 1]
        for k, c in enumerate("xyz"):
            out[f"rod_node_positions_m_{i}_{c}"] = [float(v) for v in pos[k]]
        for k, name in enumerate(("bend_1", "bend_2", "twist")):
            out[f"rod_curvatures_per_m_{i}_{name}"] = [float(v) for v in kappa[k]]
    return out


def _shape_values(result: Any, n_rods: int) -> dict[str, list[float]]:
    df = getattr(result, "diagnostics", None)
    if (df is None or len(df) == 0) and getattr(result, "state", None) is not None:
        return _static_shape_values(result, n_rods)
    if df is None or len(df) == 0:
        raise RuntimeError(
            "shapes were asked for but the solver returned no rod state (no diagnostics)"
        )
    from hsa_elastica.io.recording import node_positions

    last = df.iloc[[-1]]
    out: dict[str, list[float]] = {}
    for i in range(n_rods):
        pos = node_positions(last, prefix=f"rod{i}/")[0]
        for k, c in enumerate("xyz"):
            out[f"rod_node_positions_m_{i}_{c}"] = [float(v) for v in pos[k]]
        n_vor = pos.shape[1] - 2
        for name, c in (("bend_1", "x"), ("bend_2", "y"), ("twist", "z")):
            cols = [f"rod{i}/kappa_{c}_{j}" for j in range(n_vor)]
            out[f"rod_curvatures_per_m_{i}_{name}"] = [
                float(v) for v in last[cols].to_numpy()[0]
            ]
    return out


def _row(result: Any, n_rods: int, shapes: bool, default_method: str) -> dict[str, Any]:
    from hsa_elastica.io.columns import flat_columns

    row: dict[str, Any] = {}
    for key, size in (("platform_position_m", 3), ("platform_marker_position_m", 3),
                      ("platform_quaternion_xyzw", 4), ("rod_tip_positions_m", 3 * n_rods)):
        row.update(zip(flat_columns(key, n_rods), _vector(result, key, size)))
    stable = getattr(result, "stable", None)
    iterations = getattr(result, "iterations", None)
    row.update(
        converged=bool(result.converged),
        method=str(getattr(result, "method", default_method)),
        stable=None if stable is None else bool(stable),
        iterations=None if iterations is None else int(iterations),
        error=None,
        symmetry_broken=getattr(result, "symmetry_broken", None),
    )
    row.update(zip(flat_columns("symmetry_branch_m", n_rods), _vector(result, "symmetry_branch_m", 3)))
    if shapes:
        row.update(_shape_values(result, n_rods))
    return row


def _failed_row(exc: BaseException, n_rods: int, shapes: bool) -> dict[str, Any]:
    row: dict[str, Any] = {c["name"]: math.nan for c in column_docs(n_rods, False)
                           if c["type"] == "float64"}
    row.update(converged=False, method="failed", stable=None, iterations=None,
               error=" ".join(f"{type(exc).__name__}: {exc}".split()), symmetry_broken=None)
    if shapes:
        for c in column_docs(n_rods, True):
            if c["type"] == "list<float64>":
                row[c["name"]] = None
    return row


def solve_chunk(task: ChunkTask) -> Any:
    """Solve the poses of ``task`` in order (warm started when possible); a ``pyarrow.Table``
    with the rows sorted by sample id."""
    import warnings

    import pyarrow as pa

    from hsa_elastica.params import MassWithoutGravityWarning

    # build_dataset warned once in the main process; the workers' stderr is the terminal's
    warnings.simplefilter("ignore", MassWithoutGravityWarning)
    params = _params(task.params_json)
    n_rods = int(params.n_rods)
    solve, warm = _pose_solver(task.solver, task.shapes)
    rows: list[dict[str, Any]] = []
    previous = None
    for sample, angles in zip(task.samples, task.angles):
        with held_warnings() as said:  # shown below, each once, naming the sample
            try:
                result = solve(params, [float(a) for a in angles], previous if warm else None)
                row = _row(result, n_rods, task.shapes, task.solver)
                # warm start only from a converged solution of the solver itself (not a fallback)
                previous = result if row["converged"] and row["method"] == task.solver else None
            except Exception as exc:  # noqa: BLE001 - one bad pose must not lose the chunk
                row = _failed_row(exc, n_rods, task.shapes)
                previous = None
        for text in dict.fromkeys(said):
            log.warning("sample %d: %s", int(sample), text)
        row["sample"] = int(sample)
        for i, a in enumerate(angles):
            row[f"motor_angles_rad_{i}"] = float(a)
        rows.append(row)
    rows.sort(key=lambda r: r["sample"])
    schema = arrow_schema(n_rods, task.shapes)
    return pa.Table.from_pydict({f.name: [r[f.name] for r in rows] for f in schema}, schema=schema)
