"""State snapshots of a running engine: copy, restore, save and load everything that determines
the future of a simulation.

A snapshot (:class:`Snapshot`) holds copies of

* every array of the state (the rods' and rigid bodies' memory blocks: positions, directors,
  velocities, angular velocities, rest configuration, ...),
* the engine's internal state: the fused stepper's law tables (twist filter memory of the
  couplings, joint rest orientations, damper workspaces, ...), or, for the operator time loop,
  the state the operators keep between steps (array and scalar attributes of every operator:
  printed geometry and filter memory of ``AuxeticCoupling``, rest orientation of
  ``PlatformJoint``, ...),
* the time [s], the motor schedules (the callables ``t -> angle`` / ``t -> torque`` of every
  motor, so their phase follows the restored time) and the step API's command and control
  clock,
* whatever the engine's optional hook ``extra_state()`` returns (a dict of arrays, restored by
  ``set_extra_state(d)``): an engine with state of its own adds it there
  (:class:`~hsa_elastica.robots.compiled.ImplicitRobot`: the generalized-alpha velocities and
  accelerations of its unknowns and the Jacobian its chord factorisation was made from, which
  the restore factorises again).

Restoring a snapshot and stepping gives bitwise the same trajectory as never having stopped
(``tests/test_snapshot.py``: operator time loop, fused stepper, implicit integrator).  The step API
(:class:`~hsa_elastica.engines.control.ControlMixin`) exposes ``get_state()``,
``set_state(state)``, ``save_state(path)`` and ``load_state(path)`` on every robot handle.
A snapshot belongs to the robot it was taken from (same model, same discretisation): restoring
it into another robot raises :class:`~hsa_elastica.params.ParameterError` naming the first
parameter (``rod.n_elements``, ...) or array that differs.

File format (version :data:`FORMAT`; no pickle, so loading a file never runs code from it): a
NumPy ``.npz`` archive, read with ``np.load(..., allow_pickle=False)``, of the arrays

* ``arrays/<name>`` -- the state arrays, ``extra/<name>`` -- the engine's ``extra_state()``,
* ``objects/<i>/<attribute>[/<field>]`` -- the operators' array attributes (NamedTuple tables
  field by field) and NumPy scalars (0-d arrays, so their dtype survives),
* ``control/command`` -- the step API's pending command (absent if none),

and one JSON entry ``meta.json`` (a string array) with the scalars and metadata: ``format``
(``"hsa_elastica.state"``), ``version``, ``engine`` (the class of the robot handle), ``time``
[s], ``model`` (the model fingerprint: the robot's parameters, flattened to
``{"rod.n_elements": 25, ...}``), ``objects`` (per operator attribute: a Python scalar
inline, or where its arrays are), ``schedules`` (per motor: the fields of its ``Ramp`` or its
constant) and ``control_clock`` [s].  Python floats are written
with ``repr`` (shortest round-trip form), so every number comes back bit for bit.  Motor
schedules other than numbers and ``Ramp`` (arbitrary callables) cannot be written: ``save``
refuses them.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError
from hsa_elastica.params.files import write_atomic

__all__ = [
    "Snapshot", "SavedTable", "save", "load", "model_fields", "check_model", "copy_attributes",
    "restore_attributes", "copy_arrays", "restore_arrays",
]

#: version of the file format written by :func:`save` (bumped when the layout changes;
#: version 1 was a pickle, refused since)
FORMAT = 2

#: the ``format`` entry of a state file's ``meta.json``
_MAGIC = "hsa_elastica.state"

#: attribute values copied from an operator (arrays are copied, these are kept by value)
_SCALARS = (bool, int, float, complex, str, type(None), np.number, np.bool_)


@dataclass
class Snapshot:
    """Everything that determines the future of one robot (see the module doc)."""

    time: float
    arrays: dict[str, NDArray[Any]]
    objects: list[dict[str, Any]]
    schedules: list[dict[str, Any]]
    control: dict[str, Any]
    extra: dict[str, NDArray[Any]] = field(default_factory=dict)
    engine: str = ""
    #: the model it was taken from: the robot's parameters (in memory the params object
    #: itself, from a file their flattened fields, see :func:`model_fields`)
    model: Any = None
    format: int = FORMAT


class SavedTable(NamedTuple):
    """A NamedTuple table of arrays as read from a file (its type by name; restored field by
    field into the live table of the same type)."""

    type_name: str
    fields: dict[str, NDArray[Any]]


def copy_arrays(named: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """Copies of the arrays ``named``."""
    return {k: np.array(v, copy=True) for k, v in named.items()}


def restore_arrays(live: dict[str, NDArray[Any]], saved: dict[str, NDArray[Any]]) -> None:
    """Write ``saved`` into the arrays ``live`` in place (same names, shapes and dtypes)."""
    if set(live) != set(saved):
        raise ParameterError("state is invalid: it was taken from another model (its arrays differ)")
    for k, arr in live.items():
        s = saved[k]
        if s.shape != arr.shape or s.dtype != arr.dtype:
            raise ParameterError(
                f"state is invalid: array {k!r} has shape {s.shape}, the model {arr.shape}"
            )
    for k, arr in live.items():
        np.copyto(arr, saved[k])


def _copy_value(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return np.array(value, copy=True)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple table
        return type(value)(*(_copy_value(v) for v in value))
    return value


def _stateful(value: Any) -> bool:
    if isinstance(value, (np.ndarray, *_SCALARS)):
        return True
    return isinstance(value, tuple) and hasattr(value, "_fields") and all(
        isinstance(v, np.ndarray) for v in value
    )


def copy_attributes(obj: Any) -> dict[str, Any]:
    """Copies of the instance attributes of ``obj`` that can hold state between steps: arrays,
    NamedTuples of arrays and scalars (other objects -- systems, schedules, laws -- are
    configuration, not state)."""
    return {k: _copy_value(v) for k, v in vars(obj).items() if _stateful(v)}


#: NamedTuple tables an operator owns outright (no views into a rod): a table of one of these
#: types read from a file may be created anew where the live operator has none yet (its first
#: application not made); any other table is only restored into a live one of its type
_OWN_TABLES = ("CouplingTable", "JointTable", "MaterialDampingTable", "CompressionTable")


def _new_table(saved: SavedTable) -> Any:
    from hsa_elastica.physics import tables

    cls = getattr(tables, saved.type_name, None) if saved.type_name in _OWN_TABLES else None
    if cls is None or tuple(cls._fields) != tuple(saved.fields):
        raise ParameterError(
            f"state is invalid: it has a {saved.type_name} table where this robot has none "
            "(taken from another model)"
        )
    return cls(*(np.array(saved.fields[f], copy=True) for f in cls._fields))


def _restore_value(current: Any, saved: Any) -> Any:
    """``saved`` written into ``current`` in place where possible (views into it stay valid),
    else a copy of ``saved``."""
    if (
        isinstance(current, np.ndarray) and isinstance(saved, np.ndarray)
        and current.shape == saved.shape and current.dtype == saved.dtype
        and current.flags.writeable
    ):
        np.copyto(current, saved)
        return current
    if (
        isinstance(current, tuple) and hasattr(current, "_fields")
        and type(current) is type(saved)
    ):
        return type(current)(*(_restore_value(c, s) for c, s in zip(current, saved)))
    if isinstance(saved, SavedTable):  # read from a file: only into the live table of its type
        if current is None:  # an operator not applied yet: a self-contained law table
            return _new_table(saved)
        if not (
            isinstance(current, tuple) and hasattr(current, "_fields")
            and type(current).__name__ == saved.type_name
            and tuple(current._fields) == tuple(saved.fields)
        ):
            raise ParameterError(
                f"state is invalid: it has a {saved.type_name} table where this robot has "
                f"{type(current).__name__} (taken from another model)"
            )
        for f, c in zip(current._fields, current):
            a = saved.fields[f]
            if isinstance(c, np.ndarray) and (a.shape != c.shape or a.dtype != c.dtype):
                raise ParameterError(
                    f"state is invalid: {saved.type_name}.{f} has shape {a.shape}, the "
                    f"model {c.shape} (taken from another model)"
                )
        return type(current)(*(_restore_value(c, saved.fields[f])
                               for f, c in zip(current._fields, current)))
    return _copy_value(saved)


def restore_attributes(obj: Any, saved: dict[str, Any]) -> None:
    """Give ``obj`` the attributes ``saved`` by :func:`copy_attributes` again (arrays written in
    place); stateful attributes created after the snapshot are removed (None-valued ones, such
    as a cache not filled yet, are left)."""
    live = vars(obj)
    for k in [k for k, v in live.items() if v is not None and _stateful(v) and k not in saved]:
        delattr(obj, k)
    for k, v in saved.items():
        setattr(obj, k, _restore_value(live.get(k), v))




# -- model fingerprint -------------------------------------------------------------------------
def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    else:
        out[prefix] = value


def model_fields(model: Any) -> dict[str, Any]:
    """The model fingerprint: the parameters ``model`` (a params dataclass with ``to_dict``, a
    tuple of them -- a stack's segments, prefixed ``segment<k>.`` -- or an already flattened
    dict read from a file) as ``{"rod.n_elements": 25, ...}`` with JSON values (tuples as
    lists), so that a file's copy compares equal to the live one."""
    if isinstance(model, dict):
        return model
    if isinstance(model, (tuple, list)):
        nested: Any = {f"segment{k}": m.to_dict() for k, m in enumerate(model)}
    elif hasattr(model, "to_dict"):
        nested = model.to_dict()
    else:
        nested = {} if model is None else {"model": repr(model)}
    out: dict[str, Any] = {}
    _flatten(json.loads(json.dumps(nested, default=repr)), "", out)
    return out


def check_model(saved: Any, live: Any) -> None:
    """Raise :class:`ParameterError` naming the first parameter in which the model a snapshot was
    taken from (``saved``) differs from the robot's (``live``); nothing if they agree."""
    if saved is live or saved is None:
        return
    a, b = model_fields(saved), model_fields(live)

    def same(x: Any, y: Any) -> bool:  # as JSON text: NaN equals NaN
        return json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True)

    if same(a, b):
        return
    for key in sorted(set(a) | set(b)):
        if not same(a.get(key, "(none)"), b.get(key, "(none)")):
            raise ParameterError(
                f"state is invalid: it was taken from another model ({key} = "
                f"{a.get(key, '(none)')!r} in the state, {b.get(key, '(none)')!r} in this robot)"
            )


# -- files -------------------------------------------------------------------------------------
def _is_table(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _encode_objects(objects: list[dict[str, Any]], arrays: dict[str, NDArray[Any]]) -> list[Any]:
    """JSON description of the operators' attributes; their arrays go into ``arrays``."""
    out: list[Any] = []
    for i, attrs in enumerate(objects):
        entry: dict[str, Any] = {}
        for k, v in attrs.items():
            key = f"objects/{i}/{k}"
            if isinstance(v, np.ndarray):
                arrays[key] = v
                entry[k] = {"array": True}
            elif _is_table(v):
                for f, a in zip(v._fields, v):
                    arrays[f"{key}/{f}"] = a
                entry[k] = {"table": type(v).__name__, "fields": list(v._fields)}
            elif isinstance(v, (np.number, np.bool_)):
                arrays[key] = np.asarray(v)  # 0-d: keeps the dtype
                entry[k] = {"numpy": True}
            elif isinstance(v, complex):
                entry[k] = {"complex": [v.real, v.imag]}
            else:  # bool, int, float, str, None
                entry[k] = {"value": v}
        out.append(entry)
    return out


def _decode_objects(meta: list[Any], arrays: dict[str, NDArray[Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(meta):
        attrs: dict[str, Any] = {}
        for k, d in entry.items():
            key = f"objects/{i}/{k}"
            if "array" in d:
                attrs[k] = arrays[key]
            elif "table" in d:
                attrs[k] = SavedTable(str(d["table"]), {f: arrays[f"{key}/{f}"] for f in d["fields"]})
            elif "numpy" in d:
                attrs[k] = arrays[key][()]
            elif "complex" in d:
                attrs[k] = complex(*d["complex"])
            else:
                attrs[k] = d["value"]
        out.append(attrs)
    return out


def _encode_schedule(holder: dict[str, Any]) -> dict[str, Any]:
    """JSON form of one motor's schedules (``Ramp`` fields or a constant); a ``rate`` entry is
    the schedule's own ``rate`` method.  Other callables cannot be written."""
    from hsa_elastica.physics.actuation import Constant, Ramp

    out: dict[str, Any] = {}
    for name, value in holder.items():
        if name == "angle_rate":
            sched = holder.get("_angle")
            if value is None:
                out[name] = None
            elif getattr(value, "__self__", None) is sched and isinstance(sched, Ramp) and (
                getattr(value, "__func__", None) is Ramp.rate
            ):
                out[name] = "rate"
            else:
                raise ParameterError(
                    f"state is invalid for save_state: the motor's angle_rate = {value!r} cannot "
                    "be written; use numbers or Ramp schedules"
                )
        elif isinstance(value, Ramp):
            out[name] = {"ramp": {f: getattr(value, f)
                                  for f in ("target", "duration", "shape", "start", "delay")}}
        elif isinstance(value, Constant):
            out[name] = {"constant": value.value}
        else:
            raise ParameterError(
                f"state is invalid for save_state: the motor schedule {name.lstrip('_')} = "
                f"{value!r} cannot be written; use numbers or Ramp schedules"
            )
    return out


def _decode_schedule(entry: dict[str, Any]) -> dict[str, Any]:
    from hsa_elastica.physics.actuation import Constant, Ramp

    out: dict[str, Any] = {}
    for name, d in entry.items():
        if name == "angle_rate":
            continue
        out[name] = Ramp(**d["ramp"]) if "ramp" in d else Constant(float(d["constant"]))
    if "angle_rate" in entry:
        out["angle_rate"] = None if entry["angle_rate"] is None else out["_angle"].rate
    return out


def save(state: Snapshot, path: str | Path) -> None:
    """Write ``state`` to ``path`` (an ``.npz`` archive of arrays and one JSON entry, see the
    module doc; the exact ``path`` is used, written to a temporary file first and renamed, so
    an interrupted save leaves the previous file; a symbolic link's target is written, a
    device or FIFO in place: :func:`hsa_elastica.params.files.atomic_output`).  Motor
    schedules must be numbers or :class:`~hsa_elastica.physics.actuation.Ramp`."""
    if not isinstance(state, Snapshot):
        raise ParameterError(f"state = {state!r} is invalid: must be a Snapshot (get_state())")
    arrays: dict[str, NDArray[Any]] = {f"arrays/{k}": v for k, v in state.arrays.items()}
    arrays.update({f"extra/{k}": v for k, v in state.extra.items()})
    command = state.control.get("_command")
    if command is not None:
        arrays["control/command"] = np.asarray(command)
    clock = state.control.get("_control_clock")
    meta = {
        "format": _MAGIC, "version": FORMAT, "engine": state.engine, "time": float(state.time),
        "model": model_fields(state.model),
        "objects": _encode_objects(state.objects, arrays),
        "schedules": [_encode_schedule(h) for h in state.schedules],
        "control_clock": None if clock is None else float(clock),
    }
    if any(a.dtype.hasobject for a in arrays.values()):
        raise ParameterError("state is invalid for save_state: it holds an object array")
    arrays["meta.json"] = np.array(json.dumps(meta))

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)  # type: ignore[arg-type]

    try:
        write_atomic(path, write)
    except OSError as exc:
        raise ParameterError(f"path = {os.fsdecode(path)!r} is invalid: cannot write it ({exc})") from exc


def _not_a_state_file(path: str | Path, why: str) -> ParameterError:
    return ParameterError(
        f"path = {str(path)!r} is invalid: not a state file of version {FORMAT} "
        f"(save_state writes them): {why}"
    )


def load(path: str | Path) -> Snapshot:
    """The snapshot written by :func:`save` to ``path`` (``np.load`` with
    ``allow_pickle=False``: nothing in the file is executed; pickles of format 1 are refused)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise ParameterError(f"path = {str(path)!r} is invalid: cannot read it ({exc})") from exc
    if head[:1] == b"\x80":
        raise _not_a_state_file(path, "it is a pickle, which is never loaded (it could run code)")
    if head != b"PK\x03\x04":
        raise _not_a_state_file(path, "not an .npz archive")
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
        meta = json.loads(str(arrays.pop("meta.json")[()]))
    except KeyError:
        raise _not_a_state_file(path, "it has no meta.json entry") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, RuntimeError) as exc:
        raise _not_a_state_file(path, f"unreadable or truncated ({exc})") from exc
    if not isinstance(meta, dict) or meta.get("format") != _MAGIC:
        raise _not_a_state_file(path, "its meta.json is not that of a state file")
    if meta.get("version") != FORMAT:
        raise _not_a_state_file(path, f"version = {meta.get('version')!r}")
    try:
        def group(prefix: str) -> dict[str, NDArray[Any]]:
            return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}

        return Snapshot(
            time=float(meta["time"]),
            arrays=group("arrays/"),
            objects=_decode_objects(meta["objects"], arrays),
            schedules=[_decode_schedule(h) for h in meta["schedules"]],
            control={"_command": arrays.get("control/command"),
                     "_control_clock": meta["control_clock"]},
            extra=group("extra/"),
            engine=str(meta["engine"]),
            model=dict(meta["model"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _not_a_state_file(path, f"its entry {exc} is missing or malformed") from exc
