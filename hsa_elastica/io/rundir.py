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

import contextlib
import fcntl
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from hsa_elastica.io.columns import read_column_metadata, upgrade_json, write_parquet
from hsa_elastica.params import (
    ParameterError,
    RobotParams,
    load_params,
    load_params_per_key,
    save_params,
    save_params_per_key,
)
from hsa_elastica.params.files import name_length_problem, write_atomic, write_text_atomic

__all__ = ["RunData", "save_run", "load_run", "run_dir_problem", "claimed", "RunDirBusy",
           "to_jsonable", "DIAGNOSTICS", "PARAMS", "SUMMARY", "RUN_FILES", "CLAIM"]

DIAGNOSTICS = "diagnostics.parquet"
PARAMS = "params.yaml"
SUMMARY = "summary.json"
#: the files of a run (what :func:`save_run` writes)
RUN_FILES = (DIAGNOSTICS, PARAMS, SUMMARY)
#: what ``view``, ``plot`` and ``render`` write into a run directory by default (removed by
#: ``save_run(overwrite=True)``: they would show the older run)
DERIVED_FILES = ("view.html", "plot.png", "plot.svg", "render.mp4", "render.png")
#: the file a command locks while it writes a run into the directory (:func:`claimed`)
CLAIM = ".hsa-elastica-run.lock"


class RunDirBusy(ParameterError):
    """A run directory another command is writing (or made meanwhile), or that changed
    between its check and its claim (:func:`claimed`)."""


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


def _entries(out: Path) -> list[Path]:
    """What ``out`` holds, its claim file (:data:`CLAIM`) left out."""
    return [p for p in out.iterdir() if p.name != CLAIM]


def _claimed_by_another(out: Path) -> bool:
    """True if a command holds the claim of ``out`` (its lock on :data:`CLAIM`)."""
    try:
        fd = os.open(out / CLAIM, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def run_dir_problem(out_dir: str | Path, *, overwrite: bool = False) -> str | None:
    """Why ``out_dir`` cannot receive a run (None if it can): its nearest existing ancestor
    must be a writable directory (missing parents are created); an existing ``out_dir`` must be
    a writable directory no other command is writing a run into, and empty unless
    ``overwrite`` (so one directory never mixes the files of two runs); with ``overwrite``
    a directory that is not empty must hold a run (one of its three files): everything else
    in it is removed when the new run is saved."""
    return _problem(Path(out_dir), overwrite, claims=True)


def _problem(out: Path, overwrite: bool, *, claims: bool) -> str | None:
    """:func:`run_dir_problem`; ``claims``: also refuse a directory claimed by a command
    (False for the command that holds the claim itself)."""
    problem = name_length_problem(out)
    if problem is not None:
        return problem
    if out.exists() and not out.is_dir():
        return "exists and is not a directory"
    if out.is_dir():
        if not can_create_in(out):
            return "directory is not writable"
        if claims and _claimed_by_another(out):
            return "another command is writing a run into this directory; choose another one"
        entries = _entries(out)
        if not overwrite and entries:
            return "directory is not empty (it may hold another run); choose a new directory or pass --overwrite"
        if entries and not any(p.name in RUN_FILES for p in entries):
            return (f"directory is not empty and holds no run (no {SUMMARY}, {PARAMS} or "
                    f"{DIAGNOSTICS}); --overwrite replaces only a run directory")
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
    summary: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
    *,
    overwrite: bool = False,
) -> Path:
    """Write ``diagnostics``, ``params`` and ``summary`` into ``out_dir`` (created if needed).
    ``params``: the robot's, or a stack's one per segment (bottom first; written per key).
    ``summary`` may be a function returning it, called once the other files are written (a
    summary that reports the time the command took, writing included).

    Refuses (``FileExistsError``) a directory that is not empty unless ``overwrite``, and with
    ``overwrite`` one that holds files but no run.  Each file is written to a temporary name
    and renamed; an older ``summary.json`` is removed first and the new one is written last,
    so the directory never holds a summary of another run next to this run's data; then
    the other files the directory held (an older run's ``view.html``, plot, video) are removed:
    it holds only this run's files (and any subdirectory).
    """
    if diagnostics is None:
        raise ValueError("save_run: diagnostics is None (run with record=True to save a run)")
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or _entries(out)):
        problem = _problem(out, overwrite, claims=False)
        if problem is not None:
            raise FileExistsError(f"run directory {os.fsdecode(out)!r}: {problem}")
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY).unlink(missing_ok=True)
    df = diagnostics.reset_index(drop=True)
    df.columns = [str(c) for c in df.columns]
    write_atomic(out / DIAGNOSTICS, lambda tmp: write_parquet(df, tmp))
    write_atomic(out / PARAMS, lambda tmp: _save_params(params, tmp))
    if callable(summary):
        summary = summary()
    write_text_atomic(out / SUMMARY, json.dumps(to_jsonable(summary), indent=2) + "\n")
    _remove_older_files(out)
    return out


def _remove_older_files(out: Path) -> None:
    """Remove the files an older run's commands wrote into ``out`` under their default names
    (``view``'s page, ``plot``'s figure, ``render``'s video and still: :data:`DERIVED_FILES`),
    which would otherwise show the older run beside this run's data.  Any other file (a
    user's notes, a video rendered under a name of its own) and subdirectories stay: the
    package does not delete what it did not name."""
    for name in DERIVED_FILES:
        entry = out / name
        if entry.is_symlink() or entry.is_file():
            entry.unlink(missing_ok=True)


@contextlib.contextmanager
def claimed(out_dir: str | Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Hold ``out_dir`` for one run from before it starts to after it is saved: a new
    directory is made with an exclusive ``mkdir`` (a second command that finds it made
    meanwhile is refused), and an exclusive ``flock`` on its :data:`CLAIM` file refuses a
    second command into an existing one (:class:`RunDirBusy`, a ``ParameterError``); the
    directory is checked again under the lock (:func:`run_dir_problem`).  On exit the claim
    file is removed, and a directory this made is removed again if nothing was saved in it."""
    out = Path(out_dir)
    made = False
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(out)
        except FileExistsError:
            raise RunDirBusy("was made by another command meanwhile (it may be writing a run "
                             "there); choose another directory") from None
        made = True
    fd = os.open(out / CLAIM, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirBusy("another command is writing a run into this directory; choose "
                             "another one") from None
        problem = None if made else _problem(out, overwrite, claims=False)
        if problem is not None:
            raise RunDirBusy(problem)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield out
    finally:
        with contextlib.suppress(OSError):
            os.unlink(out / CLAIM)  # (while still holding the lock)
        os.close(fd)
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if empty: a run that saved nothing leaves nothing


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

