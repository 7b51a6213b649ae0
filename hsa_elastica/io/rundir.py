"""Run directories: save a simulation so it can be re-rendered or analysed without re-simulating.

Layout (docs/architecture.md, "Run directory")::

    <out>/diagnostics.parquet   the recorder DataFrame (contract columns, SI units; the unit,
                                frame and meaning of every column in the Arrow schema,
                                read with io.columns.read_column_metadata)
    <out>/params.yaml           the parameters used (params.save_params, units in the header)
    <out>/summary.json          a JSON object; keys include motor_angles_rad,
                                platform_position_m, platform_quaternion_xyzw,
                                rod_tip_positions_m, converged, sim_time_s, wall_time_s

A multi-segment stack's run has the same files: columns ``seg{k}/rod{i}/...``,
``seg{k}/platform/...``, ``seg{k}/sensors/...`` (segment ``k`` from the bottom), ``params.yaml``
with one RobotParams per segment under the keys ``0, 1, ...`` (``params.yaml#k`` selects one,
e.g. ``--params run/params.yaml#0,run/params.yaml#1`` reruns it), and a summary whose
single-robot keys describe the whole stack (the top platform; every motor and rod tip,
segment 0 first) with one object per segment under ``segments``.
"""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from hsa_elastica.io.columns import read_column_metadata, upgrade_json, write_parquet
from hsa_elastica.params import (
    RobotParams,
    load_params,
    load_params_per_key,
    save_params,
    save_params_per_key,
)
from hsa_elastica.params.files import name_length_problem, write_atomic, write_text_atomic

__all__ = ["RunData", "save_run", "load_run", "run_dir_problem", "to_jsonable", "DIAGNOSTICS", "PARAMS", "SUMMARY"]

DIAGNOSTICS = "diagnostics.parquet"
PARAMS = "params.yaml"
SUMMARY = "summary.json"


def to_jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays (nested in dicts/lists) to plain JSON types.

    Non-finite floats become ``None`` (JSON has no NaN)."""
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


@dataclass
class RunData:
    """A loaded run directory.  ``diagnostics.attrs["columns"]`` holds the unit, frame and
    description of each column (:func:`hsa_elastica.io.columns.read_column_metadata`).
    ``segments``: a multi-segment stack's parameters per segment, bottom first (empty for a
    single robot; ``params`` is then the bottom segment's)."""

    path: Path
    diagnostics: pd.DataFrame
    params: RobotParams
    summary: dict[str, Any]
    segments: tuple[RobotParams, ...] = ()


def can_create_in(directory: Path) -> bool:
    """True if a file can be created in ``directory`` (tried for real: permission bits do not
    tell for root or a read-only file system)."""
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".hsa-elastica-probe-"):
            return True
    except OSError:
        return False


def run_dir_problem(out_dir: str | Path, *, overwrite: bool = False) -> str | None:
    """Why ``out_dir`` cannot receive a run (None if it can): its nearest existing ancestor must
    be a writable directory (missing parents are created); an existing ``out_dir`` must be a writable directory and empty unless
    ``overwrite`` (so one directory never mixes the files of two runs)."""
    out = Path(out_dir)
    problem = name_length_problem(out)
    if problem is not None:
        return problem
    if out.exists() and not out.is_dir():
        return "exists and is not a directory"
    if out.is_dir():
        if not can_create_in(out):
            return "directory is not writable"
        if not overwrite and any(out.iterdir()):
            return "directory is not empty (it may hold another run); choose a new directory or pass --overwrite"
        return None
    ancestor = out.parent  # missing parents are created (like ``mkdir -p``; dataset --out too)
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{str(ancestor)!r} is not a directory"
    if not can_create_in(ancestor):
        return f"directory {str(ancestor)!r} is not writable"
    return None


def save_run(
    out_dir: str | Path,
    diagnostics: pd.DataFrame,
    params: RobotParams | Sequence[RobotParams],
    summary: Mapping[str, Any],
    *,
    overwrite: bool = False,
) -> Path:
    """Write ``diagnostics``, ``params`` and ``summary`` into ``out_dir`` (created if needed).
    ``params``: the robot's, or a stack's one per segment (bottom first; written per key).

    Refuses (``FileExistsError``) a directory that is not empty unless ``overwrite``.  Each file
    is written to a temporary name and renamed; an older ``summary.json`` is removed first and
    the new one is written last, so the directory never holds a summary of another run next
    to this run's data.
    """
    if diagnostics is None:
        raise ValueError("save_run: diagnostics is None (run with record=True to save a run)")
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or (not overwrite and any(out.iterdir()))):
        raise FileExistsError(
            f"run directory {str(out)!r}: {run_dir_problem(out, overwrite=overwrite)}"
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY).unlink(missing_ok=True)
    df = diagnostics.reset_index(drop=True)
    df.columns = [str(c) for c in df.columns]
    write_atomic(out / DIAGNOSTICS, lambda tmp: write_parquet(df, tmp))
    write_atomic(out / PARAMS, lambda tmp: _save_params(params, tmp))
    write_text_atomic(out / SUMMARY, json.dumps(to_jsonable(summary), indent=2) + "\n")
    return out


def _save_params(params: RobotParams | Sequence[RobotParams], path: Path) -> None:
    if isinstance(params, RobotParams):
        save_params(params, path)
        return
    segments = list(params)
    save_params_per_key(
        dict(enumerate(segments)), path,
        note=f"multi-segment stack: one RobotParams per segment, key = segment (0 = bottom); "
        f"rerun with --params {','.join(f'{PARAMS}#{k}' for k in range(len(segments)))}",
    )


def _load_params(path: Path) -> tuple[RobotParams, tuple[RobotParams, ...]]:
    """``(params, segments)`` of ``params.yaml``: a robot's (no segments) or a stack's."""
    from hsa_elastica.params import ParameterError
    from hsa_elastica.params.files import read_mapping_text, read_text_bounded

    try:
        data = read_mapping_text(read_text_bounded(path), "yaml")
    except ParameterError:
        data = None  # load_params names the problem
    keyed = isinstance(data, dict) and bool(data) and all(
        isinstance(k, int) and not isinstance(k, bool) for k in data
    )
    if not keyed:
        return load_params(path, RobotParams), ()
    per_key = load_params_per_key(path, RobotParams)
    segments = tuple(per_key[k] for k in sorted(per_key))
    return segments[0], segments


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory written by :func:`save_run`.

    Raises
    ------
    FileNotFoundError
        if the directory or one of its files is missing (the message names the file).
    ParameterError
        if ``params.yaml`` is invalid.
    """
    path = Path(run_dir)
    if path.exists() and not path.is_dir():
        raise FileNotFoundError(
            f"{str(path)!r} is not a run directory (it is a file; a run directory holds "
            f"{DIAGNOSTICS}, {PARAMS} and {SUMMARY})"
        )
    if not path.is_dir():
        raise FileNotFoundError(f"run directory {str(path)!r} does not exist")
    for name in (DIAGNOSTICS, PARAMS):
        if not (path / name).is_file():
            raise FileNotFoundError(f"run directory {str(path)!r} has no {name}")
    try:
        diagnostics = pd.read_parquet(path / DIAGNOSTICS)
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise ValueError(f"cannot read {str(path / DIAGNOSTICS)!r}: {exc}") from exc
    diagnostics.attrs["columns"] = read_column_metadata(path / DIAGNOSTICS)
    params, segments = _load_params(path / PARAMS)
    summary: dict[str, Any] = {}
    if (path / SUMMARY).is_file():
        try:
            summary = json.loads((path / SUMMARY).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"cannot parse {str(path / SUMMARY)!r}: {exc}") from exc
        if isinstance(summary, dict):  # a run saved by an earlier version: old keys renamed, with a warning
            summary = upgrade_json(summary, str(path / SUMMARY))
    return RunData(path=path, diagnostics=diagnostics, params=params, summary=summary,
                   segments=segments)

