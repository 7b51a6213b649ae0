"""One output schema (``hsa_elastica.io.columns``, docs/outputs.md) and docs that do not drift.

* Every Parquet file each command writes (``steady-state`` batch, ``dataset`` chunks, a run
  directory's ``diagnostics.parquet``) carries a unit and a frame for every column, from the
  schema's frame names.
* The same quantity has the same columns in a batch file, a dataset and the result object,
  and the two files agree on the numbers of the same poses (both static solves of the same
  robot, so to round-off).
* Old names are read with a ``DeprecationWarning`` (batch files, version-2 datasets, run
  summaries, ``CalibrationResult.rms``).
* The names, units and frames documented in docs/outputs.md and docs/datasets.md are those of
  the schema table; old names appear in no doc but the rename table and the changelog; the
  parameter defaults listed in docs/architecture.md, the ±1.5π motor-angle bound wherever a
  page cites ``MAX_MOTOR_ANGLE``, the video defaults and the frame count of the first command
  the README quotes are those of the code (the last simulates that run: about 20 s of wall time
  on the shared machine, the one expensive check here).

The robot of the solving tests is the 6-element paper robot with a short ramp (as
tests/test_datasets.py), so each pose takes milliseconds (static) to a few tenths of a second.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd
import pytest

from hsa_elastica.cli import main
from hsa_elastica.io import columns as schema
from hsa_elastica.io.columns import (
    CALIBRATION_KEYS,
    DATASET_KEYS,
    FRAMES,
    JSON_KEYS,
    LAYOUTS,
    QUANTITIES,
    SUMMARY_KEYS,
    flat_columns,
    old_column_names,
    read_column_metadata,
)
from hsa_elastica.params import RobotParams, RodParams, SimulationParams, save_params

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
POSES = [[0.5, -0.5, 0.5, -0.5], [1.0, -0.2, 0.3, -1.1], [0.0, 0.0, 0.0, 0.0]]


def tiny_params() -> RobotParams:
    return RobotParams(rod=RodParams(n_elements=6),
                       simulation=SimulationParams(dt=5e-5, ramp_time=0.1))


@pytest.fixture(scope="module", autouse=True)
def _workers_import_this_checkout() -> Iterator[None]:
    # the Dask worker processes must import this checkout's package
    path = os.environ.get("PYTHONPATH", "")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), path]) if path else str(ROOT))
        yield


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A batch file, a dataset and a run directory of the same tiny robot, written by the CLI."""
    tmp = tmp_path_factory.mktemp("schema")
    params = tmp / "tiny.yaml"
    save_params(tiny_params(), params)
    poses = tmp / "poses.csv"
    poses.write_text("angle_0,angle_1,angle_2,angle_3\n"
                     + "".join(",".join(str(a) for a in p) + "\n" for p in POSES))
    out = {"batch": tmp / "batch.parquet", "batch_csv": tmp / "batch.csv",
           "dataset": tmp / "ds", "run": tmp / "run", "params": params}
    for table in (out["batch"], out["batch_csv"]):
        assert main(["steady-state", "--angles-csv", str(poses), "--params", str(params),
                     "--out", str(table), "--quiet"]) == 0
    assert main(["dataset", "--angles-csv", str(poses), "--params", str(params), "--workers",
                 "1", "--quiet", "--shapes", "--out", str(out["dataset"])]) == 0
    assert main(["steady-state", "--angles", *map(str, POSES[0]), "--params", str(params),
                 "--max-time", "0.2", "--quiet", "--out", str(out["run"])]) == 0
    return out


def _parquet_files(files: dict[str, Path]) -> list[Path]:
    return [files["batch"], *sorted((files["dataset"] / "chunks").glob("*.parquet")),
            files["run"] / "diagnostics.parquet"]


# --------------------------------------------------------------------------------------------
# every Parquet file carries units and frames
# --------------------------------------------------------------------------------------------
def test_every_parquet_file_carries_unit_and_frame_of_every_column(files: dict[str, Path]) -> None:
    import pyarrow.parquet as pq

    paths = _parquet_files(files)
    assert len(paths) == 2 + len(POSES)  # default chunk size N/64 -> one pose per chunk
    for path in paths:
        names = pq.read_schema(path).names
        meta = read_column_metadata(path)
        assert set(meta) == set(names), f"{path.name}: columns without metadata"
        for name, m in meta.items():
            assert m["unit"] != "?" and m["frame"] in FRAMES, (path.name, name, m)
        stored = json.loads(pq.read_schema(path).metadata[schema.METADATA_KEY.encode()])
        assert stored == meta, path.name
    # the positions are in robot_base, the orientation a body -> robot_base quaternion
    run = read_column_metadata(files["run"] / "diagnostics.parquet")
    assert run["platform/position_z"]["frame"] == "robot_base"
    assert run["platform/quaternion_w"]["frame"] == "body->robot_base"


def test_no_parquet_writer_bypasses_the_metadata() -> None:
    """Parquet is written in two places only: ``io.columns.write_parquet`` (run directories,
    batch files; metadata from the schema) and ``dataset_store.encode_chunk`` (chunk tables
    built with ``arrow_schema``, the same metadata), so a new writer must go through them."""
    writers = set()
    for path in (ROOT / "hsa_elastica").rglob("*.py"):
        if re.search(r"\.to_parquet\(|\bwrite_table\(", path.read_text(encoding="utf-8")):
            writers.add(path.relative_to(ROOT).as_posix())
    assert writers == {"hsa_elastica/io/columns.py", "hsa_elastica/experiments/dataset_store.py"}


def test_same_quantity_same_columns_in_batch_dataset_and_result(files: dict[str, Path]) -> None:
    import hsa_elastica
    from hsa_elastica.robots.statics_api import solve_static

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # new files: nothing renamed
        batch = hsa_elastica.load_steady_states(files["batch"])
        batch_csv = hsa_elastica.load_steady_states(files["batch_csv"])
        data = hsa_elastica.load_dataset(files["dataset"])
    n = 4
    batch_cols = [c for k in JSON_KEYS for c in flat_columns(k, n)]
    assert list(batch.columns) == batch_cols and list(batch_csv.columns) == batch_cols
    assert list(data.columns) == [c for k in DATASET_KEYS for c in flat_columns(k, n)]
    shared = [k for k in JSON_KEYS if k in DATASET_KEYS]
    assert shared == ["motor_angles_rad", "platform_position_m", "platform_marker_position_m",
                      "platform_quaternion_xyzw", "rod_tip_positions_m", "converged", "method",
                      "symmetry_broken", "symmetry_branch_m"]
    cols = [c for k in shared for c in flat_columns(k, n)]
    # the same poses solved by the same static solver from the same start (the first pose of a
    # chunk starts from rest; the batch warm-starts later poses from the previous one, the
    # dataset orders a chunk nearest-neighbour first): equal to Newton's tolerance, 1e-9 m
    num = [c for c in cols if batch[c].dtype.kind == "f"]
    np.testing.assert_allclose(batch[num].to_numpy(), data[num].to_numpy(), rtol=0, atol=1e-9)
    flags = ["converged", "method", "symmetry_broken"]
    assert (batch[flags].to_numpy() == data[flags].to_numpy()).all()
    # the result object: one attribute per JSON key, its JSON object flattened = a batch row
    res = solve_static(tiny_params(), POSES[1])
    for key in JSON_KEYS:
        assert hasattr(res, key), key
    assert list(res.to_json_dict()) == list(JSON_KEYS)
    with pytest.warns(DeprecationWarning, match="actuation_angles_rad"):  # the old key reads
        assert res.to_json_dict()["actuation_angles_rad"] == res.to_json_dict()["motor_angles_rad"]
    assert "actuation_angles_rad" not in json.loads(json.dumps(res.to_json_dict()))
    with pytest.raises(KeyError):
        res.to_json_dict()["no_such_key"]
    row = schema.flatten(res.to_json_dict())
    assert list(row) == batch_cols
    np.testing.assert_allclose([row[c] for c in num], batch.loc[1, num].to_numpy(dtype=float),
                               rtol=0, atol=1e-9)
    # the column metadata read back agree with the schema table
    assert {c: data.attrs["columns"][c] for c in cols} == {c: batch.attrs["columns"][c] for c in cols}
    meta = batch.attrs["columns"]
    assert meta["platform_quaternion_xyzw_w"]["frame"] == "body->robot_base"
    assert meta["motor_angles_rad_3"]["unit"] == "rad"


def test_batch_csv_is_a_calibration_data_file(files: dict[str, Path]) -> None:
    """The calibration reader takes the schema's names (synthetic data from a batch run)."""
    import hsa_elastica
    from hsa_elastica.experiments.calibration import load_run

    run = load_run(files["batch_csv"])
    df = hsa_elastica.load_steady_states(files["batch_csv"])
    np.testing.assert_array_equal(run.motor_angles, df[flat_columns("motor_angles_rad", 4)])
    np.testing.assert_array_equal(run.position, df[flat_columns("platform_marker_position_m", 4)])
    q = df[flat_columns("platform_quaternion_xyzw", 4)].to_numpy()
    np.testing.assert_allclose(run.quaternion, q / np.linalg.norm(q, axis=1)[:, None], atol=1e-15)


def test_run_summary_keys(files: dict[str, Path]) -> None:
    summary = json.loads((files["run"] / "summary.json").read_text())
    assert list(summary)[: len(JSON_KEYS)] == list(JSON_KEYS)
    assert list(summary)[len(JSON_KEYS):] == [k for k in SUMMARY_KEYS if k != "divergence"]


def test_calibration_output_keys_and_attributes() -> None:
    from hsa_elastica.experiments.calibration import CalibrationResult

    res = CalibrationResult(
        params=RobotParams(), names=["rod.C_eps"], start=np.array([0.01]),
        values=np.array([0.011]), std=np.array([1e-4]), correlation=np.eye(1),
        rms_start_mm_deg={"run": (5.0, 1.0)}, rms_mm_deg={"run": (1.0, 0.5)}, cost=0.1,
        n_residuals=10, n_evaluations=3, wall_time_s=1.0, success=True, message="ok",
        bounds=[(0.0, 1.0)],
    )
    d = res.to_json_dict()
    assert tuple(d) == CALIBRATION_KEYS
    for key in CALIBRATION_KEYS:
        if key != "parameters":  # per-parameter objects: names/start/values/std/bounds
            assert hasattr(res, key), key
    with pytest.warns(DeprecationWarning, match="rms_mm_deg"):
        assert res.rms == res.rms_mm_deg
    with pytest.warns(DeprecationWarning, match="rms_start_mm_deg"):
        assert res.rms_start == res.rms_start_mm_deg


# --------------------------------------------------------------------------------------------
# old names keep working for one release, with a warning
# --------------------------------------------------------------------------------------------
OLD_DATASET_V2 = (
    ["sample"] + [f"angle_{i}" for i in range(4)] + [f"platform_{c}" for c in "xyz"]
    + [f"marker_{c}" for c in "xyz"] + [f"quat_{c}" for c in "xyzw"]
    + [f"tip{i}_{c}" for i in range(4) for c in "xyz"]
    + ["converged", "method", "stable", "iterations", "error"]
    + [f"rod{i}_{c}" for i in range(4) for c in "xyz"]
    + [f"rod{i}_{k}" for i in range(4) for k in ("bend_1", "bend_2", "twist")]
)
OLD_BATCH = (
    [f"actuation_angles_rad_{i}" for i in range(4)] + [f"platform_position_m_{i}" for i in range(3)]
    + [f"platform_marker_position_m_{i}" for i in range(3)]
    + [f"platform_quaternion_xyzw_{i}" for i in range(4)]
    + [f"rod_tip_positions_m_{i}_{c}" for i in range(4) for c in "xyz"]
    + ["converged", "sim_time_s", "wall_time_s", "method"]
)
#: batch-file quantities added since 0.1 (an old file has no columns of them; nothing to rename)
ADDED_SINCE_OLD_BATCH = ("symmetry_broken", "symmetry_branch_m")
OLD_BATCH_KEYS = [k for k in JSON_KEYS if k not in ADDED_SINCE_OLD_BATCH]


def test_every_old_column_name_maps_to_the_schema() -> None:
    from hsa_elastica.experiments.dataset_chunks import column_docs

    new = [c["name"] for c in column_docs(4, True)]
    rename = old_column_names(OLD_DATASET_V2)
    added = [c for k in ADDED_SINCE_OLD_BATCH for c in flat_columns(k, 4)]  # schema version 4
    assert [rename.get(c, c) for c in OLD_DATASET_V2] == [c for c in new if c not in added]
    rename = old_column_names(OLD_BATCH)
    assert [rename.get(c, c) for c in OLD_BATCH] == [c for k in OLD_BATCH_KEYS for c in flat_columns(k, 4)]
    assert old_column_names(new) == {}  # the new names are not mistaken for old ones


def test_old_batch_file_is_read_renamed_with_a_warning(files: dict[str, Path], tmp_path: Path) -> None:
    import hsa_elastica

    new = hsa_elastica.load_steady_states(files["batch"])
    new = new[[c for k in OLD_BATCH_KEYS for c in flat_columns(k, 4)]]
    old = new.copy()
    old.columns = OLD_BATCH
    old.to_parquet(tmp_path / "old.parquet", index=False)  # as 0.1 wrote it: no metadata
    with pytest.warns(DeprecationWarning, match="actuation_angles_rad_0 -> motor_angles_rad_0"):
        back = hsa_elastica.load_steady_states(tmp_path / "old.parquet")
    pd.testing.assert_frame_equal(back, new, check_like=False)


def test_version_2_dataset_is_read_renamed_with_a_warning(files: dict[str, Path], tmp_path: Path) -> None:
    import hashlib
    import shutil

    import pyarrow.parquet as pq

    import hsa_elastica
    from hsa_elastica.experiments.dataset_store import encode_chunk

    new = hsa_elastica.load_dataset(files["dataset"])
    out = tmp_path / "v2"
    shutil.copytree(files["dataset"], out)
    meta = json.loads((out / "dataset.json").read_text())
    back = {v: k for k, v in old_column_names(OLD_DATASET_V2).items()}
    for rec in meta["chunks"]:
        path = out / "chunks" / f"chunk-{rec['chunk']:06d}.parquet"
        table = pq.read_table(path)
        table = table.drop_columns([c for c in table.column_names if c.startswith("symmetry_")])
        table = table.rename_columns([back.get(c, c) for c in table.column_names])
        data = encode_chunk(table, meta["fingerprint"], rec["chunk"])
        path.write_bytes(data)
        rec["sha256"] = hashlib.sha256(data).hexdigest()
    meta["schema_version"] = 2
    meta["columns"] = [dict(c, name=back.get(c["name"], c["name"])) for c in meta["columns"]]
    (out / "dataset.json").write_text(json.dumps(meta))
    with pytest.warns(DeprecationWarning, match="schema version 2"):
        old = hsa_elastica.load_dataset(out)
    # written before the symmetry columns: read as not tested
    assert old["symmetry_broken"].isna().all() and old["symmetry_branch_m_x"].isna().all()
    symmetry = [c for c in new.columns if c.startswith("symmetry_")]
    assert symmetry == ["symmetry_broken", *(f"symmetry_branch_m_{c}" for c in "xyz")]
    assert new["symmetry_broken"].notna().all()  # the static solves test it
    pd.testing.assert_frame_equal(old.drop(columns=symmetry), new.drop(columns=symmetry))


def test_old_run_summary_is_read_renamed(files: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    from hsa_elastica.io.rundir import load_run

    run = tmp_path / "run"
    shutil.copytree(files["run"], run)
    s = json.loads((run / "summary.json").read_text())
    s = {("actuation_angles_rad" if k == "motor_angles_rad" else k): v for k, v in s.items()}
    (run / "summary.json").write_text(json.dumps(s))
    with pytest.warns(DeprecationWarning, match="actuation_angles_rad -> motor_angles_rad"):
        loaded = load_run(run)
    assert loaded.summary["motor_angles_rad"] == POSES[0]


def test_old_frame_names_in_metadata_read_as_robot_base(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    field = pa.field("platform/position_x", pa.float64(), metadata={"unit": "m", "frame": "lab"})
    pq.write_table(pa.table({"platform/position_x": [0.0]}, schema=pa.schema([field])),
                   tmp_path / "old.parquet")
    assert read_column_metadata(tmp_path / "old.parquet")["platform/position_x"]["frame"] == "robot_base"


# --------------------------------------------------------------------------------------------
# documented names and numbers are those of the code
# --------------------------------------------------------------------------------------------
def _section(text: str, heading: str) -> str:
    """The ``## heading...`` section of a page (a heading that starts with ``heading``)."""
    m = re.search(rf"^## {re.escape(heading)}[^\n]*$", text, flags=re.M)
    assert m is not None, heading
    start = m.start() - 1
    end = text.find("\n## ", start + 1)
    return text[start: end if end >= 0 else None]


def _table_rows(section: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]  # without the header


def _code(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


OUTPUTS = (DOCS / "outputs.md").read_text(encoding="utf-8")


def test_documented_quantities_are_the_schema_table() -> None:
    rows = _table_rows(_section(OUTPUTS, "Quantities"))
    documented = {_code(r[0])[0]: r for r in rows}
    assert list(documented) == [q.name for q in QUANTITIES if q.name in documented]
    assert set(documented) == {q.name for q in QUANTITIES}
    for q in QUANTITIES:
        _, unit, frame, cols, _ = documented[q.name]
        assert (unit, frame) == (q.unit, q.frame), q.name
        suffix = _code(cols)[0] if _code(cols) else ""
        assert suffix == LAYOUTS[q.layout].replace("|", "/"), q.name


def test_documented_suffix_rule_and_frames() -> None:
    rows = _table_rows(_section(OUTPUTS, "Columns: the suffix rule"))
    assert len(rows) == 6
    for _, suffix, example in rows:
        name = _code(example)[0]
        stem = max((q for q in QUANTITIES if name.startswith(q.name)), key=lambda q: len(q.name))
        assert name in flat_columns(stem.name, 4), name
        documented = _code(suffix)[0] if _code(suffix) else ""
        assert documented == LAYOUTS[stem.layout].replace("|", "/"), name
    frames = [_code(r[0])[0] for r in _table_rows(_section(OUTPUTS, "Frames"))]
    assert sorted(frames) == sorted(FRAMES)


def test_documented_key_lists_are_the_outputs() -> None:
    rows = {r[0]: _code(r[1]) for r in _table_rows(_section(OUTPUTS, "Where each appears"))}
    by_output = {k.split("`")[1]: v for k, v in rows.items()}
    assert by_output["steady-state --json"] == list(JSON_KEYS)
    assert [k for k in by_output["dataset"] if k != "--shapes"] == list(DATASET_KEYS)
    assert by_output["summary.json"] == ["steady-state --json", *SUMMARY_KEYS]
    assert by_output["calibrate --json"] == list(CALIBRATION_KEYS)


def _expand(pattern: str) -> list[str]:
    """``rod{i}_{x/y/z}`` -> every name for i in 0..3 (one alternation per brace)."""
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    options = [str(i) for i in range(4)] if m[1] == "i" else m[1].split("/")
    return [n for o in options for n in _expand(pattern[: m.start()] + o + pattern[m.end():])]


def test_documented_renames_are_the_readers() -> None:
    rows = _table_rows(_section(OUTPUTS, "Renamed outputs"))
    checked = 0
    for where, old, new in rows:
        if where.startswith(("batch", "dataset")):
            olds, news = _expand(_code(old)[0]), _expand(_code(new)[0])
            assert old_column_names(olds) == dict(zip(olds, news)), old
            checked += 1
    assert checked == 11
    assert schema.OLD_JSON_KEYS == {"actuation_angles_rad": "motor_angles_rad"}


def test_datasets_page_lists_the_dataset_columns() -> None:
    text = (DOCS / "datasets.md").read_text(encoding="utf-8")
    rows = _table_rows(_section(text, "Columns"))
    documented = [n for r in rows for n in _expand(_code(r[0])[0].split(" ")[0])]
    assert documented == [c for k in DATASET_KEYS for c in flat_columns(k, 4)]
    for r in rows:  # unit column
        name = _expand(_code(r[0])[0])[0]
        assert r[2] == schema.column_metadata([name])[name]["unit"], name


def test_documented_frames_of_recorded_columns() -> None:
    """Every doc table with a ``frame`` column names the frame the code stores (sensor columns,
    with the ``{x,y,z}`` / ``{i}`` placeholders expanded)."""
    from hsa_elastica.io.columns import column_metadata

    checked = 0
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        if page.name == "outputs.md":
            continue  # checked against QUANTITIES above
        lines = page.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            header = [c.strip() for c in line.strip().strip("|").split("|")]
            if not (line.startswith("|") and "frame" in header and "column" in header):
                continue
            col, fcol = header.index("column"), header.index("frame")
            for row in lines[k + 2:]:
                if not row.startswith("|"):
                    break
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                name = _expand(_code(cells[col])[0].replace(",", "/"))[0]
                got = column_metadata([f"sensors/{name}"])[f"sensors/{name}"]
                assert got["frame"] == cells[fcol], (page.name, name)
                if "unit" in header:
                    assert got["unit"] == cells[header.index("unit")], (page.name, name)
                checked += 1
    assert checked >= 7


OLD_NAMES = re.compile(
    r"actuation_angles_rad|platform_position_m_[0-2]\b|\bquat_[xyzw]|\btip\{?i?\}?\d?_[xyz]|"
    r"\bmarker_[xyz]\b|\"lab\"|body->lab|`lab`"
)


def test_no_doc_uses_an_old_name() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if page.name == "outputs.md":  # the rename table and the frames note name them
            text = text.replace(_section(text, "Renamed outputs"), "")
            text = text.replace(_section(text, "Frames"), "")
        # a paragraph about the old names says so (DeprecationWarning)
        text = "\n\n".join(p for p in text.split("\n\n") if "DeprecationWarning" not in p)
        hits = [m.group(0) for m in OLD_NAMES.finditer(text)]
        assert not hits, f"{page.name} uses old output names {hits} (docs/outputs.md)"


# --------------------------------------------------------------------------------------------
# documented numbers
# --------------------------------------------------------------------------------------------
def _defaults(cls: Any) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
    return out


def test_architecture_parameter_defaults_are_the_code() -> None:
    import hsa_elastica.params as robot_params

    text = _section((DOCS / "architecture.md").read_text(encoding="utf-8"), "Parameters")
    checked = 0
    for para in text.split("\n\n"):
        m = re.match(r"`(\w+Params)`", para.strip())
        if m is None:
            continue
        cls = getattr(robot_params, m[1])
        defaults = _defaults(cls)
        for name, value in re.findall(r"`(\w+): [^=`]+=\s*([^`]+)`", para):
            assert name in defaults, f"{m[1]}.{name} is documented but has no default"
            doc = eval(value.strip(), {"__builtins__": {}}, {"pi": math.pi})  # literals and pi
            code = defaults[name]
            if isinstance(code, float) or isinstance(doc, float):
                assert math.isclose(float(doc), float(code), rel_tol=1e-12), (m[1], name, doc, code)
            else:
                assert doc == code, (m[1], name, doc, code)
            checked += 1
    assert checked >= 30


def test_default_tables_are_the_code() -> None:
    """Doc tables headed ``| parameter | default |`` (docs/stability.md): each named field's
    default is the leading value of the default cell (``_shear`` after ``..._axial`` is the
    sibling field ``..._shear``; a bare name is a field of the same class)."""
    import hsa_elastica.params as params

    checked = 0
    for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        for k, line in enumerate(lines):
            header = [c.strip() for c in line.strip().strip("|").split("|")]
            if not (line.startswith("|") and header[:2] == ["parameter", "default"]):
                continue
            for row in lines[k + 2:]:
                if not row.startswith("|"):
                    break
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                names = _code(cells[0])
                cls_name, _, first = names[0].partition(".")
                fields = [first]
                for extra in names[1:]:
                    fields.append(first.rsplit("_", 1)[0] + extra if extra.startswith("_") else extra)
                value = cells[1].strip("`").split()[0].strip("`")
                doc = eval(value, {"__builtins__": {}}, {})  # a number or a quoted string
                defaults = _defaults(getattr(params, cls_name))
                for name in fields:
                    code = defaults[name]
                    if isinstance(doc, str):
                        assert code == doc, (page.name, cls_name, name)
                    else:
                        assert math.isclose(float(code), float(doc)), (page.name, cls_name, name, doc, code)
                    checked += 1
    assert checked >= 9


def test_motor_angle_bound_wherever_it_is_cited() -> None:
    from hsa_elastica.params import MAX_MOTOR_ANGLE

    bound = MAX_MOTOR_ANGLE / math.pi
    cited = 0
    for page in [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]:
        for line in page.read_text(encoding="utf-8").splitlines():
            if "MAX_MOTOR_ANGLE" not in line and "phi-max" not in line:
                continue
            for value in re.findall(r"(\d+(?:\.\d+)?)\s*(?:π|pi\b)", line):
                assert float(value) == bound, (page.name, line)
                cited += 1
    assert cited >= 4


def test_readme_video_defaults_are_the_code() -> None:
    from hsa_elastica.io import render

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"plays at ([\d.]+)× real time and holds the\s+final (?:pose|state) for ([\d.]+) s",
                  text)
    assert m is not None
    assert (float(m[1]), float(m[2])) == (render.DEFAULT_SPEED, render.DEFAULT_HOLD)


def test_readme_frame_count_of_the_first_command(tmp_path: Path) -> None:
    """README: the first command's video has N frames: the run at DEFAULT_SPEED x real time at
    DEFAULT_FPS (``frame_times``, what ``render_video`` writes) plus the hold.  Simulates the
    command's run (paper robot, bend_north, about 1.1 s simulated, seconds of wall time) without
    rendering it."""
    from hsa_elastica.io import render
    from hsa_elastica.io.render_data import frame_times
    from hsa_elastica.io.rundir import load_run

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"hsa-elastica primitive (\w+) --render .*?\((\d+) frames\)", text, flags=re.S)
    assert m is not None
    assert main(["primitive", m[1], "--out", str(tmp_path / "run"), "--quiet"]) == 0
    time = load_run(tmp_path / "run").diagnostics["time"]
    n = len(frame_times(float(time.iloc[0]), float(time.iloc[-1]), fps=render.DEFAULT_FPS,
                        speed=render.DEFAULT_SPEED))
    assert n + round(render.DEFAULT_HOLD * render.DEFAULT_FPS) == int(m[2])


def test_documented_env_numbers_are_the_code() -> None:
    """README and docs/control.md: the envs' 150-step TimeLimit and the coarse discretization
    (10 elements per rod, dt = 6e-5 s) are those registered and used."""
    from hsa_elastica._gym import ENVS
    from hsa_elastica.envs.hsa_robot import DISCRETIZATIONS

    pages = [ROOT / "README.md", DOCS / "control.md"]
    pattern = r"(\d+)-step `TimeLimit`|TimeLimit of (\d+) steps|max_episode_steps = (\d+)"
    steps = {int("".join(groups)) for p in pages
             for groups in re.findall(pattern, p.read_text(encoding="utf-8"))}
    assert steps == {s for _, s, _ in ENVS.values()}
    coarse = {(int(n), float(dt)) for p in pages for n, dt in re.findall(
        r'"coarse"\)?[^.]*?: (\d+) elements per rod, dt = ([\d.e-]+) s', p.read_text(encoding="utf-8"))}
    assert coarse == {DISCRETIZATIONS["coarse"]}


def test_step_api_state_and_env_use_the_schema_names() -> None:
    """``state()``, the env observation and ``info`` are keyed by the schema's quantities (the
    docs/outputs.md "Where each appears" rows are the code's), and the earlier keys of the
    "Renamed outputs" table still read with a DeprecationWarning."""
    import warnings

    from hsa_elastica.envs.hsa_robot import OLD_INFO_KEYS, HSARobotEnv, observation_names
    from hsa_elastica.io.columns import OLD_STATE_KEYS, STATE_KEYS, StateDict

    rows = {r[0]: r[1] for r in _table_rows(_section(OUTPUTS, "Where each appears"))}
    state_row = next(v for k, v in rows.items() if k.startswith("step API"))
    assert tuple(_code(state_row)) == STATE_KEYS
    assert all(k in {q.name for q in QUANTITIES} for k in STATE_KEYS)
    obs_row = next(v for k, v in rows.items() if "observation" in k)
    names = _code(obs_row)
    assert observation_names(4, True) == tuple(c for n in names for c in flat_columns(n, 4))
    renames = {r[0]: (r[1], r[2]) for r in _table_rows(_section(OUTPUTS, "Renamed outputs"))}
    assert dict(zip(_code(renames["`state()`"][0]), _code(renames["`state()`"][1]))) == OLD_STATE_KEYS
    assert dict(zip(_code(renames["env `info`"][0]), _code(renames["env `info`"][1]))) == OLD_INFO_KEYS

    s = StateDict({k: float(i) for i, k in enumerate(STATE_KEYS)})
    with pytest.warns(DeprecationWarning, match="'rod_tips' is deprecated: use 'rod_tip_positions_m'"):
        assert s["rod_tips"] == s["rod_tip_positions_m"]
    with pytest.raises(KeyError):
        s["nonsense"]
    env = HSARobotEnv(motor_torques=True)
    obs, info = env.reset(seed=0)
    assert obs.shape == (len(env.observation_names),) == (20,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new names read without a warning
        assert set(info) == {"sim_time_s", "distance_m", "target_position_m", "motor_angles_rad",
                             "observation_clipped"}
        np.testing.assert_allclose(obs[13:16], info["target_position_m"], rtol=1e-6)
        state = env.robot.state()
        assert list(state) == list(STATE_KEYS)
        np.testing.assert_allclose(obs[:3], state["platform_position_m"], rtol=1e-6)
    with pytest.warns(DeprecationWarning, match="info key 'distance'"):
        assert info["distance"] == info["distance_m"]
