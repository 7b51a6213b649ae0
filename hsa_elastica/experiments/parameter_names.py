"""Robot parameters by dotted name (``rod.C_eps``, ``joint.k_F``, ``mocap.yaw``): the names a
calibration may free, reading and replacing their values in a :class:`RobotParams`."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from hsa_elastica.experiments.mocap import CalibrationError
from hsa_elastica.params import RobotParams
from hsa_elastica.params.robot import PER_ROD_IMPERFECTIONS

__all__ = ["MOCAP_NAMES", "fittable_names", "get_value", "with_values", "check_names"]

MOCAP_NAMES = ("mocap.yaw",)

_COMPONENTS = {"x": 0, "y": 1, "z": 2}


def _resolve(params: RobotParams, name: str) -> tuple[list[str], int | None]:
    """Path of field names (and a tuple component) of ``name`` in ``params``; raises
    :class:`CalibrationError` for an unknown or non-numeric name."""
    parts = name.split(".")
    obj: Any = params
    path: list[str] = []
    for i, part in enumerate(parts):
        fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
        if part in fields:
            path.append(part)
            obj = getattr(obj, part)
            continue
        if isinstance(obj, tuple) and part in _COMPONENTS and i == len(parts) - 1:
            if _COMPONENTS[part] < len(obj):  # rod_tilt has .x and .y only
                return path, _COMPONENTS[part]
            raise CalibrationError(
                f"unknown parameter {name!r}: {'.'.join(path)} has the components "
                f"{', '.join(list(_COMPONENTS)[:len(obj)])} only (e.g. {'.'.join(path)}.x)"
            )
        if path and path[-1] in PER_ROD_IMPERFECTIONS and len(path) == 1 and i == len(parts) - 1:
            if part.isdigit() and int(part) < params.n_rods:
                return path, int(part)
            raise CalibrationError(
                f"unknown parameter {name!r}: {path[-1]} takes a rod index 0..{params.n_rods - 1} "
                f"(e.g. {path[-1]}.0)"
            )
        raise CalibrationError(
            f"unknown parameter {name!r}: {'.'.join(path) or 'RobotParams'} has no field "
            f"{part!r} (use dotted names like rod.C_eps, rod.twist_rigidity, "
            f"platform.marker_offset.z, motor_offset.2, rod_tilt.x, or mocap.yaw)"
        )
    if len(path) == 1 and path[0] in PER_ROD_IMPERFECTIONS:
        raise CalibrationError(
            f"parameter {name!r} is one value per rod: name a rod, e.g. {name}.0"
        )
    if isinstance(obj, bool) or not isinstance(obj, (int, float)):
        raise CalibrationError(f"parameter {name!r} = {obj!r} is not a number and cannot be fitted")
    if isinstance(obj, int) or (path and path[0] == "simulation"):
        kind = "an integer (a count or discretization)" if isinstance(obj, int) else "a numerical setting"
        raise CalibrationError(
            f"parameter {name!r} is {kind} and cannot be fitted; fittable: "
            f"{', '.join(fittable_names(params))}, mocap.yaw"
        )
    return path, None


def fittable_names(params: RobotParams) -> list[str]:
    """Dotted names :func:`calibrate` can fit: the real-valued physical fields of ``params``
    (not the integer counts ``n_elements``, ``n_rods``, ``handedness``, nor the time step,
    damping, ramp and recording of ``simulation``, which do not define the statics);
    ``platform.marker_offset`` and a set ``simulation.gravity`` per component (``.x``, ``.y``,
    ``.z``); the per-rod imperfections (``motor_offset``, ``rod_C_eps_deviation``,
    ``rod_bend_deviation``) per rod (``.0`` ... ``.n_rods-1``); the rods' lean ``rod_tilt``
    per axis (``rod_tilt.x``, ``rod_tilt.y``)."""
    out: list[str] = []

    def walk(obj: Any, prefix: str) -> None:
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if not prefix and f.name in PER_ROD_IMPERFECTIONS:
                out.extend(f"{f.name}.{i}" for i in range(params.n_rods))
            elif dataclasses.is_dataclass(value):
                if f.name != "simulation":
                    walk(value, f"{prefix}{f.name}.")
            elif isinstance(value, float):
                out.append(f"{prefix}{f.name}")
            elif isinstance(value, tuple) and len(value) in (2, 3) and all(isinstance(v, float) for v in value):
                out.extend(f"{prefix}{f.name}.{c}" for c in list(_COMPONENTS)[:len(value)])

    walk(params, "")
    if params.simulation.gravity is not None:
        out.extend(f"simulation.gravity.{c}" for c in _COMPONENTS)
    return out


def get_value(params: RobotParams, name: str) -> float:
    """Current value of the dotted parameter ``name`` (``mocap.yaw`` is 0: not a robot field)."""
    if name in MOCAP_NAMES:
        return 0.0
    path, comp = _resolve(params, name)
    obj: Any = params
    for part in path:
        obj = getattr(obj, part)
    if comp is not None and not obj:  # a per-rod imperfection left at []: 0 for every rod
        return 0.0
    return float(obj[comp] if comp is not None else obj)


def with_values(params: RobotParams, values: dict[str, float]) -> RobotParams:
    """Copy of ``params`` with the dotted parameters set (validated: ParameterError if the
    result is not a valid robot).  ``mocap.*`` names are ignored (not robot fields)."""
    for name, value in values.items():
        if name in MOCAP_NAMES:
            continue
        path, comp = _resolve(params, name)
        params = _set(params, path, comp, float(value))
    return params


def _set(obj: Any, path: list[str], comp: int | None, value: float) -> Any:
    head = path[0]
    if len(path) == 1:
        if comp is None:  # (a float field: _resolve refuses the integer ones)
            new: Any = value
        else:
            # a per-rod imperfection left at [] is 0 for every rod
            t = list(getattr(obj, head)) or [0.0] * obj.n_rods
            t[comp] = value
            new = tuple(t)
    else:
        new = _set(getattr(obj, head), path[1:], comp, value)
    return dataclasses.replace(obj, **{head: new})


def check_names(params: RobotParams, names: Sequence[str]) -> None:
    """Refuse unknown or repeated names (:class:`CalibrationError`)."""
    if not names:
        raise CalibrationError("no free parameter given")
    seen = set()
    for n in names:
        if n in seen:
            raise CalibrationError(f"parameter {n!r} given twice")
        seen.add(n)
        if n not in MOCAP_NAMES:
            _resolve(params, n)
