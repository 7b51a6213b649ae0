"""Unit and frame of every recorded column, stored in the Parquet files and read back.

Recorded DataFrames (``Robot.diagnostics()``, ``diagnostics.parquet`` of a run directory) have
flat float columns named by the recorders (:mod:`hsa_elastica.io.recording`,
:mod:`hsa_elastica.io.sensors`), prefixed ``rod{i}/``, ``platform/`` or ``sensors/`` (for a
multi-segment stack ``seg{k}/rod{i}/``, ``seg{k}/platform/``, ``seg{k}/sensors/``, segment
``k`` counted from the bottom; units and frames as for a single robot).
:func:`column_metadata` gives each one its unit, frame and meaning; :func:`write_parquet`
stores them as Arrow field metadata (keys ``unit``, ``frame``, ``description``) and the whole
table as JSON under the schema metadata key ``hsa_elastica.columns``;
:func:`read_column_metadata` returns them from any Parquet file written so (run directories
and dataset chunks)::

    meta = read_column_metadata("run/diagnostics.parquet")
    meta["sensors/motor_torque_0"]      # {'unit': 'N m', 'frame': 'motor', 'description': ...}

Frames: ``lab`` (the world frame, z up); ``body`` (the platform's frame,
``director_collection`` rows); ``material`` (a rod element's directors d1, d2, d3);
``motor`` (about the rod axis d3 at its base, right-hand rule base -> tip);
``lab->local`` (director entries ``Q[r, c]``: row r is d_r in lab coordinates);
``body->lab`` (a quaternion of that rotation); ``none`` (a scalar).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

__all__ = ["METADATA_KEY", "column_metadata", "write_parquet", "read_column_metadata"]

#: schema-level metadata key holding ``{column: {unit, frame, description}}`` as JSON
METADATA_KEY = "hsa_elastica.columns"

_C = r"(?P<c>[xyz])"
_I = r"_(?P<i>\d+)"

# (pattern of the unprefixed name, unit, frame, description with {c}/{i}/{r} placeholders)
_ROD_RULES: list[tuple[str, str, str, str]] = [
    (rf"position_{_C}{_I}", "m", "lab", "position of node {i}, {c}"),
    (rf"velocity_{_C}{_I}", "m/s", "lab", "velocity of node {i}, {c}"),
    (r"director_(?P<r>[012])(?P<s>[012])" + _I, "-", "lab->local",
     "director Q[{r}, {s}] of element {i} (row {r} = d{r1} in lab coordinates)"),
    (rf"sigma_{_C}{_I}", "-", "material", "shear/stretch strain of element {i}, {c}"),
    (rf"kappa_{_C}{_I}", "1/m", "material", "bend/twist strain at Voronoi domain {i}, {c}"),
    (rf"rest_length{_I}", "m", "none", "rest length of element {i} (auxetic coupling)"),
    (r"base_twist_angle", "rad", "motor", "twist of element 0 about its axis since the first sample"),
]
_BODY_RULES: list[tuple[str, str, str, str]] = [
    (rf"position_{_C}", "m", "lab", "centre of mass, {c}"),
    (r"quaternion_(?P<c>[xyzw])", "-", "body->lab", "orientation quaternion, {c} (scalar last)"),
    (rf"velocity_{_C}", "m/s", "lab", "centre-of-mass velocity, {c}"),
    (rf"omega_{_C}", "rad/s", "body", "angular velocity, {c}"),
]
_SENSOR_RULES: list[tuple[str, str, str, str]] = [
    (rf"motor_angle_command{_I}", "rad", "motor", "commanded motor angle of rod {i}"),
    (rf"motor_angle{_I}", "rad", "motor", "measured motor angle of rod {i} (base element twist)"),
    (rf"motor_torque{_I}", "N m", "motor", "torque the motor of rod {i} supplies about the rod axis"),
    (rf"joint_force_{_C}{_I}", "N", "lab", "force of the platform joint on the tip of rod {i}, {c} (Eq. 6)"),
    (rf"joint_torque_{_C}{_I}", "N m", "lab",
     "torque of the platform joint on the tip element of rod {i}, {c} (Eq. 7)"),
    (rf"platform_velocity_{_C}", "m/s", "lab", "platform centre-of-mass velocity, {c}"),
    (rf"platform_angular_velocity_{_C}", "rad/s", "lab", "platform angular velocity, {c}"),
]
_COMPILED = {
    kind: [(re.compile(p + "$"), u, f, d) for p, u, f, d in rules]
    for kind, rules in (("rod", _ROD_RULES), ("body", _BODY_RULES), ("sensors", _SENSOR_RULES))
}
UNKNOWN = {"unit": "?", "frame": "?", "description": "not a recorder column"}


def _kind(prefix: str) -> str:
    # the recorder is the last part of the prefix: a stack's columns are "seg{k}/rod{i}/...",
    # "seg{k}/platform/...", "seg{k}/sensors/..." (segment k, bottom first)
    last = prefix.rpartition("/")[2]
    if last.startswith("sensors"):
        return "sensors"
    if last.startswith("platform") or last.startswith("body"):
        return "body"
    return "rod"  # rod{i}/ or a single rod's recorder (no prefix)


def _describe(name: str) -> dict[str, str]:
    prefix, _, base = name.rpartition("/")
    if base == "time":
        return {"unit": "s", "frame": "none", "description": "simulated time"}
    for pattern, unit, frame, text in _COMPILED[_kind(prefix)]:
        m = pattern.match(base)
        if m:
            fields = m.groupdict()
            if "r" in fields:
                fields["r1"] = str(int(fields["r"]) + 1)
            where = f"{prefix}: " if prefix else ""
            return {"unit": unit, "frame": frame, "description": where + text.format(**fields)}
    return dict(UNKNOWN)


def column_metadata(columns: Iterable[Any]) -> dict[str, dict[str, str]]:
    """``{column: {"unit", "frame", "description"}}`` of recorder columns (module doc);
    a column no recorder writes gets unit and frame ``"?"``."""
    return {str(c): _describe(str(c)) for c in columns}


def write_parquet(
    df: Any, path: str | Path, metadata: dict[str, dict[str, str]] | None = None
) -> None:
    """Write ``df`` (no index) to ``path`` with the unit/frame/description of every column
    (``metadata``, default :func:`column_metadata` of its columns) in the Arrow schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = column_metadata(df.columns) if metadata is None else metadata
    table = pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(with_column_metadata(table, meta), path)


def with_column_metadata(table: Any, meta: dict[str, dict[str, str]]) -> Any:
    """``table`` (a ``pyarrow.Table``) with ``meta[name]`` as each field's metadata and the
    whole mapping as JSON under :data:`METADATA_KEY` (fields absent from ``meta`` get none)."""
    import pyarrow as pa

    fields = [
        f.with_metadata({k: str(v) for k, v in meta[f.name].items()}) if f.name in meta else f
        for f in table.schema
    ]
    schema_meta = dict(table.schema.metadata or {})
    schema_meta[METADATA_KEY.encode()] = json.dumps(
        {f.name: meta[f.name] for f in table.schema if f.name in meta}
    ).encode()
    return pa.Table.from_arrays(table.columns, schema=pa.schema(fields, metadata=schema_meta))


def read_column_metadata(path: str | Path) -> dict[str, dict[str, str]]:
    """``{column: {"unit", "frame", "description"}}`` stored in the Parquet file ``path``
    (read from the schema only, not the data); columns without metadata are left out."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    out: dict[str, dict[str, str]] = {}
    for f in schema:
        if f.metadata:
            out[f.name] = {k.decode(): v.decode() for k, v in f.metadata.items()}
    return out
