"""The one output schema: name, unit and frame of every quantity the package writes, and the
unit and frame of every recorded column, stored in the Parquet files and read back.

:data:`QUANTITIES` lists each result quantity once.  Its ``name`` is the JSON key
(``steady-state --json``, ``summary.json``, ``calibrate --json``), the attribute of the result
object (:class:`~hsa_elastica.robots.steady_state.SteadyStateResult`,
:class:`~hsa_elastica.experiments.calibration.CalibrationResult`) and, flattened by one suffix
rule (:func:`flat_columns`), the column stem of every table (``steady-state --angles-csv``
batch files, dataset chunks): ``_{i}`` per rod, ``_{x|y|z}`` (``_{x|y|z|w}``) per vector
(quaternion) component, ``_{i}_{x|y|z}`` per rod and component, e.g. ``motor_angles_rad_0``,
``platform_position_m_z``, ``platform_quaternion_xyzw_w``, ``rod_tip_positions_m_3_x``.
Names end in their unit (``_m``, ``_rad``, ``_s``, ``_per_m``) where the quantity has one.
docs/outputs.md is the table for users; tests/test_schema.py checks it against this module.
Old names (:data:`OLD_JSON_KEYS`, :func:`old_column_names`) are still read, with a
``DeprecationWarning``, for one release (:func:`upgrade_columns`).

Recorded DataFrames (``Robot.diagnostics()``, ``diagnostics.parquet`` of a run directory) have
flat float columns named by the recorders (:mod:`hsa_elastica.io.recording`,
:mod:`hsa_elastica.io.sensors`), prefixed ``rod{i}/``, ``platform/``, ``object{j}/`` (a free object, as the platform) or
``sensors/`` (for a
multi-segment stack ``seg{k}/rod{i}/``, ``seg{k}/platform/``, ``seg{k}/sensors/``, segment
``k`` counted from the bottom; units and frames as for a single robot).
:func:`column_metadata` gives each one its unit, frame and meaning; :func:`write_parquet`
stores them as Arrow field metadata (keys ``unit``, ``frame``, ``description``) and the whole
table as JSON under the schema metadata key ``hsa_elastica.columns``;
:func:`read_column_metadata` returns them from any Parquet file written so (run directories
and dataset chunks)::

    meta = read_column_metadata("run/diagnostics.parquet")
    meta["sensors/motor_torque_0"]      # {'unit': 'N m', 'frame': 'motor', 'description': ...}

Frames (one name each, used in every file): ``robot_base`` (the simulation's world frame: the
robot base frame, origin at the centre of the circle of rod bases, x east, y north, z up along
the unactuated rods; for a robot placed elsewhere with ``build_robot(base=...)`` it is the frame
that pose is given in); ``body`` (the platform's frame, ``director_collection`` rows);
``material`` (a rod element's directors d1, d2, d3); ``motor`` (about the rod axis d3 at its
base, right-hand rule base -> tip); ``robot_base->local`` (director entries ``Q[r, c]``: row r
is d_r in robot_base coordinates); ``body->robot_base`` (a quaternion of that rotation);
``none`` (a scalar, a count, a flag or text).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

__all__ = [
    "METADATA_KEY",
    "ROBOT_BASE",
    "FRAMES",
    "Quantity",
    "QUANTITIES",
    "JSON_KEYS",
    "DATASET_KEYS",
    "SUMMARY_KEYS",
    "CALIBRATION_KEYS",
    "OLD_JSON_KEYS",
    "STATE_KEYS",
    "OLD_STATE_KEYS",
    "JsonObject",
    "StateDict",
    "quantity",
    "flat_columns",
    "flatten",
    "old_column_names",
    "upgrade_columns",
    "upgrade_json",
    "column_metadata",
    "write_parquet",
    "read_column_metadata",
    "load_steady_states",
]

#: schema-level metadata key holding ``{column: {unit, frame, description}}`` as JSON
METADATA_KEY = "hsa_elastica.columns"

#: the frame of every position, velocity and orientation the package writes
ROBOT_BASE = "robot_base"
BODY_TO_BASE = f"body->{ROBOT_BASE}"
BASE_TO_LOCAL = f"{ROBOT_BASE}->local"
#: every frame name a column or quantity can carry (module doc)
FRAMES = (ROBOT_BASE, "body", "material", "motor", BASE_TO_LOCAL, BODY_TO_BASE, "none")

#: frame names of files written by earlier versions -> the current ones (read_column_metadata)
_OLD_FRAMES = {"lab": ROBOT_BASE, "lab->local": BASE_TO_LOCAL, "body->lab": BODY_TO_BASE}

#: component suffixes of each layout (``flat_columns``); ``{i}`` is the rod index
LAYOUTS = {
    "scalar": "",
    "per_rod": "_{i}",
    "xyz": "_{x|y|z}",
    "xyzw": "_{x|y|z|w}",
    "per_rod_xyz": "_{i}_{x|y|z}",
    "per_rod_kappa": "_{i}_{bend_1|bend_2|twist}",
    "object": "",
}
_COMPONENTS = {"xyz": "xyz", "xyzw": "xyzw", "per_rod_xyz": "xyz",
               "per_rod_kappa": ("bend_1", "bend_2", "twist")}


class Quantity:
    """One output quantity: ``name`` (JSON key, result attribute and column stem), ``unit``
    (SI; ``-`` dimensionless or not a number), ``frame`` (:data:`FRAMES`), ``layout``
    (:data:`LAYOUTS`), Arrow ``dtype`` of its columns and a one-line ``description``."""

    __slots__ = ("name", "unit", "frame", "layout", "dtype", "description")

    def __init__(self, name: str, unit: str, frame: str, layout: str, dtype: str,
                 description: str) -> None:
        if frame not in FRAMES or layout not in LAYOUTS:
            raise ValueError(f"Quantity {name!r}: frame {frame!r} must be one of {FRAMES}, "
                             f"layout {layout!r} one of {tuple(LAYOUTS)}")
        self.name, self.unit, self.frame, self.layout = name, unit, frame, layout
        self.dtype, self.description = dtype, description

    def __repr__(self) -> str:
        return f"Quantity({self.name!r}, unit={self.unit!r}, frame={self.frame!r})"


_Q = Quantity
#: every quantity of the JSON objects, result objects, run summaries and tables, once
QUANTITIES: tuple[Quantity, ...] = (
    _Q("motor_angles_rad", "rad", "motor", "per_rod", "float64",
       "motor angle of rod i: rotation of its base about its own +z (right-hand rule)"),
    _Q("platform_position_m", "m", ROBOT_BASE, "xyz", "float64", "platform centre of mass"),
    _Q("platform_marker_position_m", "m", ROBOT_BASE, "xyz", "float64",
       "the platform's tracked point (params.platform.marker_offset in the platform frame)"),
    _Q("platform_quaternion_xyzw", "-", BODY_TO_BASE, "xyzw", "float64",
       "platform orientation, scalar last, w >= 0"),
    _Q("rod_tip_positions_m", "m", ROBOT_BASE, "per_rod_xyz", "float64", "last node of rod i"),
    _Q("converged", "-", "none", "scalar", "bool", "the solver reports a converged, settled pose"),
    _Q("method", "-", "none", "scalar", "string",
       "'static' (Newton on the static equations), 'dynamic' (relaxation) or 'failed' (dataset)"),
    _Q("sim_time_s", "s", "none", "scalar", "float64", "simulated time at the stop (0 for static)"),
    _Q("wall_time_s", "s", "none", "scalar", "float64",
       "wall-clock time of the solve or fit (a dynamic run: its simulation loop)"),
    _Q("stable", "-", "none", "scalar", "bool",
       "the static solution is stable (null: not tested)"),
    _Q("symmetry_broken", "-", "none", "scalar", "bool",
       "the motor angles are symmetric under a symmetry of the robot that the pose breaks: its "
       "mirror image is an equally valid equilibrium (null: not tested)"),
    _Q("symmetry_branch_m", "m", ROBOT_BASE, "xyz", "float64",
       "the branch of a broken symmetry: platform centre minus the mean of its images under the "
       "command's symmetries; the mirror branch has the opposite sign (zeros: none broken)"),
    _Q("iterations", "-", "none", "scalar", "int64", "Newton iterations (0 for relaxation)"),
    _Q("sample", "-", "none", "scalar", "int64", "stable sample id (row of the sampling)"),
    _Q("error", "-", "none", "scalar", "string", "the exception of a failed solve (else null)"),
    _Q("rod_node_positions_m", "m", ROBOT_BASE, "per_rod_xyz", "list<float64>",
       "node positions of rod i (n_elements + 1 values)"),
    _Q("rod_curvatures_per_m", "1/m", "material", "per_rod_kappa", "list<float64>",
       "curvature kappa of rod i (bend about d1, d2; twist about d3) on the n_elements - 1 "
       "interior Voronoi regions"),
    # run summary (summary.json of a run directory): the settling test and the pose
    _Q("max_node_speed_m_s", "m/s", "none", "scalar", "float64",
       "largest rod node or platform speed at the stop"),
    _Q("max_platform_omega_rad_s", "rad/s", "none", "scalar", "float64",
       "platform angular speed at the stop"),
    _Q("settle_time_s", "s", "none", "scalar", "float64",
       "simulated time at which the final settling window started (null: none)"),
    _Q("platform_tilt_rad", "rad", ROBOT_BASE, "scalar", "float64",
       "angle between the platform normal and +z"),
    _Q("platform_twist_rad", "rad", ROBOT_BASE, "scalar", "float64",
       "rotation of the platform about +z, in (-pi, pi]"),
    _Q("n_steps", "-", "none", "scalar", "int64", "time steps taken"),
    _Q("setup_wall_time_s", "s", "none", "scalar", "float64",
       "wall-clock time before a dynamic run's simulation loop: building the robot, compiling "
       "its model, the engine's set-up, loading its kernels (null: a static solve)"),
    _Q("real_time_factor", "-", "none", "scalar", "float64",
       "sim_time_s / wall_time_s of a dynamic run (null: a static solve)"),
    _Q("command_wall_time_s", "s", "none", "scalar", "float64",
       "wall-clock time of the command that wrote the run, from its start (the interpreter's "
       "start and imports not included) to the summary (null: saved from Python)"),
    _Q("diverged", "-", "none", "scalar", "bool", "the run stopped on SimulationFailed (a blow-up, a refused implicit step)"),
    _Q("target_position_m", "m", ROBOT_BASE, "xyz", "float64",
       "target of the platform centre in a reaching task (drawn by hsa-elastica view)"),
    _Q("divergence", "-", "none", "object", "object",
       "{time_s, last_good_time_s, system, reason, message} of a failed run"),
    # the step API's state() and the Gymnasium envs' observations and infos
    _Q("platform_velocity_m_s", "m/s", ROBOT_BASE, "xyz", "float64",
       "platform centre-of-mass velocity"),
    _Q("platform_omega_rad_s", "rad/s", "body", "xyz", "float64",
       "platform angular velocity in its own frame (PyElastica's omega_collection)"),
    _Q("motor_torques_nm", "N m", "motor", "per_rod", "float64",
       "torque the motor of rod i supplies about the rod axis"),
    _Q("distance_m", "m", "none", "scalar", "float64",
       "distance of the platform centre from the target (reaching task)"),
    _Q("ball_position_m", "m", ROBOT_BASE, "xyz", "float64",
       "centre of the ball the HSAPush-v0 env's robot pushes"),
    _Q("ball_velocity_m_s", "m/s", ROBOT_BASE, "xyz", "float64",
       "velocity of the ball's centre (HSAPush-v0)"),
    # calibration output (calibrate --json, CalibrationResult)
    _Q("parameters", "SI", "none", "object", "object",
       "{name: {start, value, std, bounds}} of each free parameter, in its own SI unit"),
    _Q("correlation", "-", "none", "object", "object",
       "correlation matrix of the free parameters (order of parameters)"),
    _Q("rms_start_mm_deg", "mm, deg", "none", "object", "object",
       "{run: [position RMS, orientation RMS]} at the start parameters"),
    _Q("rms_mm_deg", "mm, deg", "none", "object", "object",
       "{run: [position RMS, orientation RMS]} at the fitted parameters"),
    _Q("cost", "-", "none", "scalar", "float64", "0.5 sum of the squared weighted residuals"),
    _Q("n_residuals", "-", "none", "scalar", "int64", "number of weighted residuals"),
    _Q("n_evaluations", "-", "none", "scalar", "int64", "model evaluations of all poses"),
    _Q("success", "-", "none", "scalar", "bool", "the least-squares fit converged"),
    _Q("message", "-", "none", "scalar", "string", "the optimiser's message"),
)
_BY_NAME = {q.name: q for q in QUANTITIES}

#: ``steady-state --json`` object, in order (also the leading keys of ``summary.json`` and the
#: columns of a batch file, flattened)
JSON_KEYS = ("motor_angles_rad", "platform_position_m", "platform_marker_position_m",
             "platform_quaternion_xyzw", "rod_tip_positions_m", "converged", "sim_time_s",
             "wall_time_s", "method", "symmetry_broken", "symmetry_branch_m")
#: dataset chunk columns (flattened, in order); the last two only with ``--shapes``
DATASET_KEYS = ("sample", "motor_angles_rad", "platform_position_m", "platform_marker_position_m",
                "platform_quaternion_xyzw", "rod_tip_positions_m", "converged", "method",
                "stable", "iterations", "error", "symmetry_broken", "symmetry_branch_m",
                "rod_node_positions_m", "rod_curvatures_per_m")
#: keys a single robot's ``summary.json`` adds to :data:`JSON_KEYS`
SUMMARY_KEYS = ("max_node_speed_m_s", "max_platform_omega_rad_s", "settle_time_s",
                "platform_tilt_rad", "platform_twist_rad", "n_steps", "diverged", "iterations",
                "stable", "setup_wall_time_s", "real_time_factor", "command_wall_time_s",
                "divergence")
#: ``calibrate --json`` object
CALIBRATION_KEYS = ("parameters", "correlation", "rms_start_mm_deg", "rms_mm_deg", "cost",
                    "n_residuals", "n_evaluations", "wall_time_s", "success", "message")
#: the step API's ``state()`` (``sim_time_s`` a float, the others arrays; per-rod ones have a
#: row per rod)
STATE_KEYS = ("sim_time_s", "platform_position_m", "platform_quaternion_xyzw",
              "platform_velocity_m_s", "platform_omega_rad_s", "rod_tip_positions_m",
              "motor_angles_rad", "motor_torques_nm")
#: renamed JSON keys (old -> new); readers still accept the old ones with a warning
OLD_JSON_KEYS = {"actuation_angles_rad": "motor_angles_rad"}
#: renamed ``state()`` keys (old -> new), still read with a warning
OLD_STATE_KEYS = {"time": "sim_time_s", "platform_position": "platform_position_m",
                  "platform_quaternion": "platform_quaternion_xyzw",
                  "platform_velocity": "platform_velocity_m_s",
                  "platform_omega": "platform_omega_rad_s", "rod_tips": "rod_tip_positions_m",
                  "motor_angles": "motor_angles_rad", "motor_torques": "motor_torques_nm"}


class JsonObject(dict):  # type: ignore[type-arg]
    """A JSON object of the schema (``to_json_dict()``): a plain ``dict`` whose old keys
    (:data:`OLD_JSON_KEYS`) still read, with a ``DeprecationWarning``, until the next release
    (``json.dumps`` writes only the new keys)."""

    #: old key -> schema key
    old_keys: dict[str, str] = OLD_JSON_KEYS
    what = "JSON key"

    def __missing__(self, key: str) -> Any:
        new = self.old_keys.get(key)
        if new is None or new not in self:
            raise KeyError(key)
        import warnings

        from hsa_elastica.params.base import HSADeprecationWarning

        warnings.warn(f"{self.what} {key!r} is deprecated: use {new!r} (docs/outputs.md)",
                      HSADeprecationWarning, stacklevel=2)
        return self[new]


class StateDict(JsonObject):
    """The step API's ``state()`` (:data:`STATE_KEYS`): a ``dict`` whose earlier keys
    (:data:`OLD_STATE_KEYS`) still read, with a ``DeprecationWarning``, until the next
    release."""

    old_keys = OLD_STATE_KEYS
    what = "state() key"


def quantity(name: str) -> Quantity:
    """The :class:`Quantity` called ``name`` (``KeyError`` naming the known ones otherwise)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"{name!r} is not an output quantity: one of {', '.join(_BY_NAME)}") from None


def flat_columns(name: str, n_rods: int) -> list[str]:
    """Column names of quantity ``name`` in a table (the suffix rule of the module doc)."""
    q = quantity(name)
    comps = _COMPONENTS.get(q.layout, ())
    if q.layout in ("scalar", "object"):
        return [name]
    if q.layout == "per_rod":
        return [f"{name}_{i}" for i in range(n_rods)]
    if q.layout in ("xyz", "xyzw"):
        return [f"{name}_{c}" for c in comps]
    return [f"{name}_{i}_{c}" for i in range(n_rods) for c in comps]


def flatten(obj: dict[str, Any]) -> dict[str, Any]:
    """A JSON object of the schema (``to_json_dict()``) as one flat table row: each value
    split into the columns of :func:`flat_columns` (the number of rods from its length)."""
    row: dict[str, Any] = {}
    for key, value in obj.items():
        q = _BY_NAME.get(key)
        if q is None or q.layout in ("scalar", "object") or not isinstance(value, (list, tuple)):
            row[key] = value
        elif q.layout in ("per_rod_xyz", "per_rod_kappa"):  # a row of components per rod
            for i, item in enumerate(value):
                row.update((f"{key}_{i}_{c}", v) for c, v in zip(_COMPONENTS[q.layout], item))
        else:  # per_rod, xyz, xyzw: one column per value
            row.update(zip(flat_columns(key, len(value)), value))
    return row


def _flat_rules() -> list[tuple[re.Pattern[str], Quantity]]:
    rules = []
    for q in QUANTITIES:
        if q.layout in ("scalar", "object"):
            rules.append((re.compile(re.escape(q.name) + "$"), q))
        elif q.layout == "per_rod":
            rules.append((re.compile(re.escape(q.name) + r"_(?P<i>\d+)$"), q))
        elif q.layout in ("xyz", "xyzw"):
            rules.append((re.compile(re.escape(q.name) + f"_(?P<c>[{q.layout}])$"), q))
        else:
            comps = "|".join(_COMPONENTS[q.layout])
            rules.append((re.compile(re.escape(q.name) + rf"_(?P<i>\d+)_(?P<c>{comps})$"), q))
    return rules


_FLAT_RULES = _flat_rules()


def _describe_flat(name: str) -> dict[str, str] | None:
    for pattern, q in _FLAT_RULES:
        m = pattern.match(name)
        if m:
            parts = m.groupdict()
            text = q.description.replace("rod i", f"rod {parts['i']}") if "i" in parts else q.description
            if "c" in parts:
                text += f", component {parts['c']}"
            return {"unit": q.unit, "frame": q.frame, "description": text}
    return None


# old column names -> new: batch steady-state files of earlier versions (JSON keys flattened with
# numeric suffixes) and dataset schema version 2
_OLD_COLUMNS: list[tuple[re.Pattern[str], Any]] = [
    (re.compile(r"actuation_angles_rad_(\d+)$"), lambda m: f"motor_angles_rad_{m[1]}"),
    (re.compile(r"(platform_position_m|platform_marker_position_m)_([012])$"),
     lambda m: f"{m[1]}_{'xyz'[int(m[2])]}"),
    (re.compile(r"platform_quaternion_xyzw_([0-3])$"),
     lambda m: f"platform_quaternion_xyzw_{'xyzw'[int(m[1])]}"),
    (re.compile(r"angle_(\d+)$"), lambda m: f"motor_angles_rad_{m[1]}"),
    (re.compile(r"platform_([xyz])$"), lambda m: f"platform_position_m_{m[1]}"),
    (re.compile(r"marker_([xyz])$"), lambda m: f"platform_marker_position_m_{m[1]}"),
    (re.compile(r"quat_([xyzw])$"), lambda m: f"platform_quaternion_xyzw_{m[1]}"),
    (re.compile(r"tip(\d+)_([xyz])$"), lambda m: f"rod_tip_positions_m_{m[1]}_{m[2]}"),
    (re.compile(r"rod(\d+)_([xyz])$"), lambda m: f"rod_node_positions_m_{m[1]}_{m[2]}"),
    (re.compile(r"rod(\d+)_(bend_1|bend_2|twist)$"),
     lambda m: f"rod_curvatures_per_m_{m[1]}_{m[2]}"),
]


def old_column_names(columns: Iterable[Any]) -> dict[str, str]:
    """``{old: new}`` for every column of ``columns`` that has an old name."""
    out: dict[str, str] = {}
    for c in columns:
        for pattern, new in _OLD_COLUMNS:
            m = pattern.match(str(c))
            if m:
                out[str(c)] = new(m)
                break
    return out


def _warn_renamed(renamed: dict[str, str], where: str) -> None:
    import warnings

    from hsa_elastica.params.base import HSADeprecationWarning

    shown = ", ".join(f"{a} -> {b}" for a, b in list(renamed.items())[:4])
    more = f" (and {len(renamed) - 4} more)" if len(renamed) > 4 else ""
    warnings.warn(
        f"{where}: old column names renamed ({shown}{more}); the old names are read until the "
        "next release (docs/outputs.md)", HSADeprecationWarning, stacklevel=3,
    )


def upgrade_columns(df: Any, where: str) -> Any:
    """``df`` with every old column name renamed to its schema name (a ``DeprecationWarning``
    naming ``where`` if any was); ``df`` itself when none was."""
    renamed = old_column_names(df.columns)
    if not renamed:
        return df
    _warn_renamed(renamed, where)
    return df.rename(columns=renamed)


def upgrade_json(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """A JSON object with old keys (:data:`OLD_JSON_KEYS`) renamed, warning as
    :func:`upgrade_columns` (a :class:`JsonObject`: old keys still read, with a warning)."""
    renamed = {k: v for k, v in OLD_JSON_KEYS.items() if k in obj}
    if renamed:
        _warn_renamed(renamed, where)
    return JsonObject({OLD_JSON_KEYS.get(k, k): v for k, v in obj.items()})


_C = r"(?P<c>[xyz])"
_I = r"_(?P<i>\d+)"

# (pattern of the unprefixed name, unit, frame, description with {c}/{i}/{r} placeholders)
_ROD_RULES: list[tuple[str, str, str, str]] = [
    (rf"position_{_C}{_I}", "m", ROBOT_BASE, "position of node {i}, {c}"),
    (rf"velocity_{_C}{_I}", "m/s", ROBOT_BASE, "velocity of node {i}, {c}"),
    (r"director_(?P<r>[012])(?P<s>[012])" + _I, "-", BASE_TO_LOCAL,
     "director Q[{r}, {s}] of element {i} (row {r} = d{r1} in robot_base coordinates)"),
    (rf"sigma_{_C}{_I}", "-", "material", "shear/stretch strain of element {i}, {c}"),
    (rf"kappa_{_C}{_I}", "1/m", "material", "bend/twist strain at Voronoi domain {i}, {c}"),
    (rf"rest_length{_I}", "m", "none", "rest length of element {i} (auxetic coupling)"),
    (r"base_twist_angle", "rad", "motor", "twist of element 0 about its axis since the first sample"),
]
_BODY_RULES: list[tuple[str, str, str, str]] = [
    (rf"position_{_C}", "m", ROBOT_BASE, "centre of mass, {c}"),
    (r"quaternion_(?P<c>[xyzw])", "-", BODY_TO_BASE, "orientation quaternion, {c} (scalar last)"),
    (rf"velocity_{_C}", "m/s", ROBOT_BASE, "centre-of-mass velocity, {c}"),
    (rf"omega_{_C}", "rad/s", "body", "angular velocity, {c}"),
]
_SENSOR_RULES: list[tuple[str, str, str, str]] = [
    (rf"motor_angle_command{_I}", "rad", "motor", "commanded motor angle of rod {i}"),
    (rf"motor_angle_imposed{_I}", "rad", "motor",
     "motor angle of rod {i} its schedule imposes at the sample (the ramp as applied)"),
    (rf"motor_angle{_I}", "rad", "motor", "measured motor angle of rod {i} (base element twist)"),
    (rf"motor_torque{_I}", "N m", "motor", "torque the motor of rod {i} supplies about the rod axis"),
    (rf"joint_force_{_C}{_I}", "N", ROBOT_BASE, "force of the platform joint on the tip of rod {i}, {c} (Eq. 6)"),
    (rf"joint_torque_{_C}{_I}", "N m", ROBOT_BASE,
     "torque of the platform joint on the tip element of rod {i}, {c} (Eq. 7)"),
    (rf"platform_velocity_{_C}", "m/s", ROBOT_BASE, "platform centre-of-mass velocity, {c}"),
    (rf"platform_angular_velocity_{_C}", "rad/s", ROBOT_BASE, "platform angular velocity, {c}"),
    (rf"contact_force_{_C}{_I}", "N", ROBOT_BASE,
     "force of obstacle contact {i} on its system (sum over its points), {c}"),
    (rf"contact_points{_I}", "-", "none", "points of obstacle contact {i} in contact"),
    (rf"contact_sliding{_I}", "-", "none", "points of obstacle contact {i} sliding"),
    (rf"contact_sticking{_I}", "-", "none", "points of obstacle contact {i} sticking"),
    (rf"contact_min_gap{_I}", "m", "none",
     "smallest gap of the points of obstacle contact {i} (negative: penetration)"),
]
_TARGET_RULES: list[tuple[str, str, str, str]] = [
    (rf"position_{_C}", "m", ROBOT_BASE, "target of the platform centre, {c}"),
]
_COMPILED = {
    kind: [(re.compile(p + "$"), u, f, d) for p, u, f, d in rules]
    for kind, rules in (("rod", _ROD_RULES), ("body", _BODY_RULES), ("sensors", _SENSOR_RULES),
                        ("target", _TARGET_RULES))
}
UNKNOWN = {"unit": "?", "frame": "?", "description": "not a recorder column"}


def _kind(prefix: str) -> str:
    # the recorder is the last part of the prefix: a stack's columns are "seg{k}/rod{i}/...",
    # "seg{k}/platform/...", "seg{k}/sensors/..." (segment k, bottom first)
    last = prefix.rpartition("/")[2]
    if last.startswith("sensors"):
        return "sensors"
    if last.startswith(("platform", "body", "object")):  # object{j}: a free object
        return "body"
    if last == "target":
        return "target"
    return "rod"  # rod{i}/ or a single rod's recorder (no prefix)


def _describe(name: str) -> dict[str, str]:
    prefix, _, base = name.rpartition("/")
    if base == "time":
        return {"unit": "s", "frame": "none", "description": "simulated time"}
    if not prefix:  # a table of the schema (batch steady-state file, dataset chunk)
        flat = _describe_flat(base)
        if flat is not None:
            return flat
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
    """``{column: {"unit", "frame", "description"}}`` of recorder columns and of the flat
    columns of :data:`QUANTITIES` (module doc); any other column gets unit and frame ``"?"``."""
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
            meta = {k.decode(): v.decode() for k, v in f.metadata.items()}
            if "frame" in meta:  # a file of an earlier version says "lab" for robot_base
                meta["frame"] = _OLD_FRAMES.get(meta["frame"], meta["frame"])
            out[f.name] = meta
    return out


def load_steady_states(path: str | Path) -> Any:
    """A batch steady-state file (``steady-state --angles-csv`` with ``--out`` a .csv or
    .parquet file) as a ``pandas.DataFrame`` with the schema's column names, the same as
    :func:`hsa_elastica.load_dataset` gives for the same quantities (a file written by an
    earlier version is renamed with a ``DeprecationWarning``); ``df.attrs["columns"]`` holds the unit,
    frame and meaning of every column.  Raises ``FileNotFoundError`` for a missing file and
    ``ValueError`` for another suffix."""
    import pandas as pd

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ValueError(f"{p}: a batch steady-state file is .csv or .parquet, not {suffix!r}")
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such file")
    df = pd.read_csv(p) if suffix == ".csv" else pd.read_parquet(p)
    df = upgrade_columns(df, str(p))
    df.attrs["columns"] = column_metadata(df.columns)
    return df
