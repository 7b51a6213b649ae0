"""YAML/TOML I/O of the parameter dataclasses: :func:`save_params`, :func:`load_params`,
:func:`load_params_per_key` / :func:`save_params_per_key` (``FILE#KEY`` entries) and the small
TOML writer."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping, TypeVar

import yaml

from hsa_elastica.params.base import (
    ParameterError,
    _ParamsBase,
    _short,
)
from hsa_elastica.params.files import is_stream, read_mapping_text, read_text_bounded, write_text_atomic
from hsa_elastica.params.environment import EnvironmentParams
from hsa_elastica.params.robot import (
    RobotParams,
)
from hsa_elastica.params.rod import RodParams

_AnyParams = TypeVar("_AnyParams", bound=_ParamsBase)


def _header(params: _ParamsBase) -> str:
    lines = [
        f"hsa-elastica parameters: {type(params).__name__}",
        "SI units throughout. An optional value written as null (YAML) or \"none\" (TOML) means:",
        "  bend_rigidity -> E*I of the tube, twist_rigidity -> G*J of the tube, gravity -> off.",
        "field units:",
    ]

    def walk(obj: _ParamsBase, prefix: str) -> None:
        for f in dataclasses.fields(obj):  # type: ignore[arg-type]
            value = getattr(obj, f.name)
            if isinstance(value, EnvironmentParams):
                if value.obstacles:  # written only with obstacles (RobotParams.to_dict)
                    lines.append(f"  {prefix}{f.name}.obstacles [list of mappings: kind plane | "
                                 "sphere | capsule and the obstacle's fields, docs/contact.md]")
            elif isinstance(value, _ParamsBase):
                walk(value, f"{prefix}{f.name}.")
            else:
                lines.append(f"  {prefix}{f.name} [{f.metadata.get('unit', '-')}]")

    walk(params, "")
    return "".join(f"# {line}\n" for line in lines)


def _toml_value(value: Any, key: str) -> str:
    if value is None:
        return '"none"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, key) for v in value) + "]"
    if isinstance(value, Mapping):  # an inline table (an obstacle of the environment)
        return "{" + ", ".join(f"{k} = {_toml_value(v, f'{key}.{k}')}" for k, v in value.items()) + "}"
    raise ParameterError(f"cannot write {key} = {value!r} to TOML")


def _dump_toml(data: Mapping[str, Any], table: str = "") -> str:
    """Tiny TOML writer for nested dicts of numbers, strings, None and lists."""
    scalars = [(k, v) for k, v in data.items() if not isinstance(v, Mapping)]
    tables = [(k, v) for k, v in data.items() if isinstance(v, Mapping)]
    out = []
    if table and scalars:
        out.append(f"\n[{table}]\n")
    for k, v in scalars:
        out.append(f"{k} = {_toml_value(v, k)}\n")
    for k, v in tables:
        out.append(_dump_toml(v, f"{table}.{k}" if table else k))
    return "".join(out)


def _format(path: Path, *, writing: bool = False) -> str:
    """``"yaml"`` or ``"toml"`` by the extension; a device or FIFO written to without one of
    them (``/dev/null``, a named pipe) takes YAML."""
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".toml":
        return "toml"
    if writing and is_stream(path):
        return "yaml"
    raise ParameterError(
        f"parameter file {str(path)!r}: unsupported extension {suffix!r}; use .yaml, .yml or .toml"
    )


def params_text(params: _ParamsBase, fmt: str = "yaml") -> str:
    """The text :func:`save_params` writes (``fmt`` ``"yaml"`` or ``"toml"``): a comment block
    listing every field with its unit, then the values."""
    if not isinstance(params, _ParamsBase):
        raise ParameterError(f"save_params: {_short(params)} is not a parameter dataclass")
    data = params.to_dict()
    if fmt == "yaml":
        body = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    elif fmt == "toml":
        body = _dump_toml(data)
    else:
        raise ParameterError(f"format {fmt!r} is invalid: must be 'yaml' or 'toml'")
    return _header(params) + body


def save_params(params: _ParamsBase, path: str | Path) -> Path:
    """Write ``params`` (any of the parameter dataclasses) to ``path`` as YAML or TOML.

    The file starts with a comment block listing every field with its unit; it is written
    atomically (:func:`hsa_elastica.params.files.atomic_output`: a temporary file renamed onto
    ``path``; a symbolic link's target is replaced, a device or FIFO written in place).
    Returns the path.
    """
    path = Path(path)
    text = params_text(params, _format(path, writing=True))
    write_text_atomic(path, text)
    return path


def save_params_per_key(
    entries: Mapping[int, _ParamsBase], path: str | Path, *, note: str = ""
) -> Path:
    """Write one parameter set per integer key to the YAML file ``path`` (the per-key format
    :func:`load_params_per_key` reads and ``"FILE.yaml#KEY"`` selects, e.g. the segments of
    a multi-segment stack); ``note`` is added to the header comment.  Returns the path."""
    path = Path(path)
    if _format(path, writing=True) != "yaml":
        raise ParameterError(f"save_params_per_key: {str(path)!r} must be a .yaml/.yml file")
    if not entries or not all(
        isinstance(k, int) and not isinstance(k, bool) and isinstance(v, _ParamsBase)
        for k, v in entries.items()
    ):
        raise ParameterError(
            "save_params_per_key: entries must map integer keys to parameter dataclasses"
        )
    data = {int(k): v.to_dict() for k, v in entries.items()}
    head = "".join(f"# {line}\n" for line in note.splitlines()) if note else ""
    body = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    write_text_atomic(path, head + _header(next(iter(entries.values()))) + body)
    return path

_SECTIONS = {
    "RodParams": "rod",
    "PlatformParams": "platform",
    "JointParams": "joint",
    "SimulationParams": "simulation",
    "EnvironmentParams": "environment",
    "AxialLawParams": "axial_law",
}


def _read_mapping(path: Path) -> Any:
    """The top-level mapping of a parameter file, read with the bounds of
    :func:`hsa_elastica.params.files.read_mapping_text`; refuses a file with no parameters."""
    fmt = _format(path)
    text = read_text_bounded(path)
    try:
        data: Any = read_mapping_text(text, fmt)
    except ParameterError as exc:
        raise ParameterError(f"cannot parse parameter file {str(path)!r}: {exc}") from None
    if data is None or (isinstance(data, Mapping) and not data):
        raise ParameterError(
            f"parameter file {str(path)!r} has no parameters in it (empty, only comments or "
            "truncated); write at least one field, e.g. 'hsa-elastica params --dump FILE'"
        )
    if not isinstance(data, Mapping):
        raise ParameterError(
            f"parameter file {str(path)!r} must contain a mapping at top level, got {_short(data)}"
        )
    return data


def _split_key(path: str | Path) -> tuple[Path, str | None]:
    """``"file.yaml#10"`` -> (``file.yaml``, ``"10"``); no ``#`` -> (path, None)."""
    text = str(path)
    if "#" in text:
        head, _, key = text.rpartition("#")
        if not head.strip():
            raise ParameterError(
                f"{text!r}: the file part before '#' is empty; write FILE.yaml#KEY"
            )
        return Path(head), key
    return Path(path), None


def _is_keyed(data: Mapping[Any, Any]) -> bool:
    """A per-key file (e.g. one entry per row count): every top-level key is an integer."""
    return bool(data) and all(isinstance(k, int) and not isinstance(k, bool) for k in data)


#: the sections of a file grouping several parameter sets: a robot dump (``rod``, ``platform``,
#: ``joint``, ``simulation`` and the robot's own fields) or a characterization entry (``rod``,
#: ``axial_law``)
_GROUP_KEYS = frozenset(_SECTIONS.values())


def _names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]


def is_rod_only(data: Mapping[Any, Any]) -> bool:
    """A rod-only parameter set (an entry of the characterization fits): every top-level key
    is a :class:`RodParams` field and at least one is not a :class:`RobotParams` field.  Told
    apart from a robot's file by its keys alone, before any value is read."""
    keys = set(data)
    return bool(keys) and keys <= _names(RodParams) and not keys <= _names(RobotParams)


def _unknown(where: str, keys: list[str], allowed: set[str]) -> ParameterError:
    return ParameterError(
        f"{where}: unknown key(s) {', '.join(_short(k) for k in keys[:10])}"
        f"{' ...' if len(keys) > 10 else ''}; allowed keys are {', '.join(sorted(allowed))}"
    )


def read_params(data: Mapping[Any, Any], cls: type[_AnyParams], where: str) -> _AnyParams:
    """``cls`` from one parameter set ``data`` (a file's mapping, or one entry of a per-key
    file), read whole or refused: the one reading of every parameter file.

    The layout is told by the keys alone, up front:

    * ``cls = RobotParams``: a robot's file (its fields, sections ``rod``, ``platform``,
      ``joint``, ``simulation``), or a rod-only set (:func:`is_rod_only`:
      ``RobotParams(rod=...)``, every other field at its default); a characterization entry
      with an ``axial_law`` is refused (a robot has no axial law: it would be dropped);
    * ``cls`` a section class (``RodParams``, ``SimulationParams``, ...): its own fields, or a
      robot's file (read whole as :class:`RobotParams`, every field validated, then its
      section), or a characterization entry ``{rod: ..., axial_law: ...}`` (its section; the
      other one is read by its own class).

    Any other key is an error naming it.  ``ParameterError`` with one line otherwise.
    """
    keys = set(data)
    section = _SECTIONS.get(cls.__name__)
    if cls is RobotParams:
        if is_rod_only(data):
            return RobotParams(rod=RodParams.from_dict(data, where=where))  # type: ignore[return-value]
        if "axial_law" in keys and keys <= _GROUP_KEYS:
            raise ParameterError(
                f"{where}: key 'axial_law': this entry is a characterization rod with its "
                "compression law, which a robot does not have; read it with "
                "load_params(..., RodParams) and AxialLawParams"
            )
    elif section is not None and section in keys and section not in _names(cls):
        if keys <= _names(RobotParams):
            return getattr(RobotParams.from_dict(data, where=where), section)  # type: ignore[no-any-return]
        if not keys <= _GROUP_KEYS:
            raise _unknown(where, sorted(str(k) for k in keys - _GROUP_KEYS), set(_GROUP_KEYS))
        data = data[section]
        where = f"{where}.{section}"
    if issubclass(cls, _ParamsBase):
        return cls.from_dict(data, where=where)
    if not isinstance(data, Mapping):
        raise ParameterError(f"{where} must be a mapping of field names to values, got {_short(data)}")
    return cls.from_dict(data)  # type: ignore[attr-defined, no-any-return]


def load_params(path: str | Path, cls: type[_AnyParams] = RobotParams) -> _AnyParams:  # type: ignore[assignment]
    """Read a YAML/TOML file written by :func:`save_params` (or by hand) into ``cls``.

    Missing keys take their defaults; a file is read whole or refused: unknown keys (a
    misspelt field or section), invalid values anywhere in the file and unreadable or
    malformed files raise :class:`ParameterError` with one line naming the key
    (:func:`read_params`, the one reading of every entry point: the command line, presets,
    datasets, calibration).  A rod-only file (only :class:`RodParams` fields, e.g. an entry of
    the characterization fits) read as :class:`RobotParams` gives ``RobotParams(rod=...)``.

    Files holding one parameter set per key (the characterization fits in ``hsa_elastica/data``,
    one rod per row count) are read one entry at a time with ``"FILE.yaml#KEY"``, e.g.
    ``load_params(f"{hsa_elastica.data.path('fitted_params.yaml')}#10", RodParams)``, or all at once with
    :func:`load_params_per_key`.  An entry grouping several sets (``{rod: ..., axial_law:
    ...}``) gives ``cls`` its own section (``rod`` for :class:`RodParams`).
    """
    path, key = _split_key(path)
    data: Any = _read_mapping(path)
    if key is not None:
        matches = [k for k in data if str(k) == key]
        if not matches:
            raise ParameterError(
                f"parameter file {str(path)!r} has no entry {key!r}; entries: "
                f"{', '.join(str(k) for k in data)}"
            )
        data = data[matches[0]]
        if not isinstance(data, Mapping):
            raise ParameterError(f"{str(path)}#{key} must be a mapping, got {_short(data)}")
        if not data:
            raise ParameterError(f"{str(path)}#{key} has no parameters in it (an empty entry)")
    elif _is_keyed(data):
        keys = ", ".join(str(k) for k in data)
        raise ParameterError(
            f"parameter file {str(path)!r} holds one parameter set per key ({keys}): select "
            f"one as '{path}#KEY' (e.g. '{path}#{next(iter(data))}') or read all with "
            f"load_params_per_key"
        )
    return read_params(data, cls, f"{path}#{key}" if key else str(path))


def load_params_per_key(path: str | Path, cls: type[_AnyParams]) -> dict[int, _AnyParams]:
    """Read a per-key parameter file (e.g. ``hsa_elastica/data/fitted_params.yaml``: one
    :class:`RodParams` per row count) into ``{key: cls}``."""
    path = Path(path)
    data = _read_mapping(path)
    if not _is_keyed(data):
        raise ParameterError(
            f"parameter file {str(path)!r} is not a per-key file (its top-level keys are not "
            f"integers); read it with load_params"
        )
    return {int(k): load_params(f"{path}#{k}", cls) for k in data}


