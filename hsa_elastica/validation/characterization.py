"""Validation against the measured closed-HSA characterization (paper Section II-C, Fig. 3).

Runs the four virtual experiments of :mod:`hsa_elastica.experiments.characterization` at every measured
point of ``hsa_elastica/data/good2022_closed_fpu50.csv`` (shipped with the package) (4-12 rows, 120 points) with the Table I
rods and, with ``--fit``, with parameters fitted per row count, and writes

* ``<out>/characterization_points.csv`` -- the data columns plus ``simulated`` (data unit),
  ``closed_form`` (the model's closed form, data unit) and ``parameter_set``;
* ``<results>/scores.csv`` -- per parameter set, characteristic and row count: RMSE in the
  data unit and the fraction of points inside the error bars (printed);
* with ``--fit``: ``fitted_params*.yaml`` (the fitted rods, SI units) in ``--fitted-dir``
  (default ``<results>``; the shipped copies are ``hsa_elastica/data/fitted_params*.yaml``),
  among them ``fitted_params_shared.yaml``: the fit shared across row counts (parameter set
  ``fitted_shared``, 7 parameters for all row counts,
  :mod:`hsa_elastica.validation.characterization_shared`), evaluated with every ``--law``.

``<results>`` is ``--results``, else ``--out`` if given, else ``./validation_results``: a run
writes only into the directories it is given (the package's own data files only with an
explicit ``--fitted-dir``).  The report -- ``results.md`` with its notes and the Fig. 3
figures -- is written by the source checkout's ``python -m validation.characterization`` (same
options, plus ``--replot POINTS_CSV``), from the :class:`CharacterizationRun` this module
computes (:func:`run_validation`).

Usage::

    python -m hsa_elastica.validation.characterization [--rows 4 6 ...] [--fit]
                                          [--law linear|compression|nonlinear|nonlinear+compression]
                                          [--jobs 2] [--method static|dynamic]
                                          [--results DIR]

The fit (``--fit``) is a reproducible ``scipy.optimize.least_squares`` (initial guess = Table I,
no randomness) of ``C_eps, E0, E_slope, B_z, B_z_slope`` per row count against the measured
curves, on the closed forms of the discrete model (fast), then verified by the simulator runs
written here.  Residuals are normalised by the error bar on the side of the miss and passed
through a Cauchy loss, so that a few points that the linear law cannot reach do not pull the
others out of their error bars.

``--law compression`` (optional; the paper's linear law stays the default) adds a third
parameter set ``fitted_compression``: the same fit plus the compression stiffness ratio of
:mod:`hsa_elastica.physics.compression_law` (``r_c`` at zero twist and at the end of the clipped twist range,
i.e. ``compression_ratio`` and ``compression_ratio_slope``), simulated with the
``AxialCompressionLaw`` forcing in all four experiments (spring constant: pull only), written
to ``<results>/fitted_params_compression.yaml``.

``--law nonlinear`` (optional) adds ``fitted_nonlinear``: the quadratic twist laws of
``RodParams`` (``C_eps2``, ``E_quad``, ``twist_rigidity_quad``) fitted with the linear terms
(:func:`fit_rod_nonlinear`, 8 parameters per row count, ``fitted_params_nonlinear.yaml``);
``--law nonlinear+compression`` evaluates every set: table1, fitted, fitted_compression,
fitted_nonlinear and ``fitted_nonlinear_compression`` (quadratic laws + compression law, 10
parameters, ``fitted_params_nonlinear_compression.yaml``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hsa_elastica.experiments.characterization import (
    load_characterization_data,
    simulate_point,
    to_data_unit,
)
from hsa_elastica.physics.compression_law import AxialLawParams
from hsa_elastica.data import path as data_path
from hsa_elastica.params import ParameterError, RodParams, load_params_per_key, table1_rod_params
from hsa_elastica.params.files import atomic_output, write_text_atomic
# the fitting and scoring routines are re-exported: their names stay importable from here
from hsa_elastica.validation.characterization_fit import (
    FIT_FIELDS,
    N_FITTED as N_FITTED,
    NONLINEAR_FIELDS,
    R_C_MIN as R_C_MIN,
    _closed_form_points,
    best_parameter_set as best_parameter_set,
    closed_form_values as closed_form_values,
    data_max_kappa as data_max_kappa,
    fit_rod,
    fit_rod_compression,
    fit_rod_nonlinear,
    inside_error_bar as inside_error_bar,
    law_from_ends as law_from_ends,
    score,
)
from hsa_elastica.validation.characterization_shared import CHOSEN, STRUCTURES, fit_shared, save_shared

#: the shipped fitted rods (package data, ``hsa_elastica/data``; rewritten by ``--fit`` with
#: ``--fitted-dir hsa_elastica/data`` from a source checkout)
FITTED_PARAMS = data_path("fitted_params.yaml")
FITTED_COMPRESSION = data_path("fitted_params_compression.yaml")
FITTED_NONLINEAR = data_path("fitted_params_nonlinear.yaml")
FITTED_NONLINEAR_COMPRESSION = data_path("fitted_params_nonlinear_compression.yaml")
#: the fit shared across row counts (:mod:`hsa_elastica.validation.characterization_shared`)
FITTED_SHARED = data_path("fitted_params_shared.yaml")
#: default output directory (relative to the current directory)
DEFAULT_RESULTS = Path("validation_results")
#: --law choices: which parameter sets are fitted / simulated besides table1 and fitted
LAW_SETS: dict[str, tuple[str, ...]] = {
    "linear": (),
    "compression": ("fitted_compression",),
    "nonlinear": ("fitted_nonlinear",),
    "nonlinear+compression": ("fitted_compression", "fitted_nonlinear", "fitted_nonlinear_compression"),
}
ROWS = (4, 6, 8, 10, 12)


# --------------------------------------------------------------------------------------------
# simulation of all points
# --------------------------------------------------------------------------------------------
Task = tuple[str, int, str, float, RodParams, "AxialLawParams | None", str]


def _run_point(task: Task) -> tuple[float, float]:
    pset, rows, ch, angle_deg, rod, law, method = task
    t0 = time.perf_counter()
    value = simulate_point(rod, ch, math.radians(angle_deg), axial_law=law, method=method)
    return to_data_unit(ch, value), time.perf_counter() - t0


def simulate_all(
    data: pd.DataFrame,
    rods: dict[str, dict[int, RodParams]],
    jobs: int,
    laws: dict[str, dict[int, AxialLawParams]] | None = None,
    method: str = "static",
) -> pd.DataFrame:
    """Simulate every data point for every parameter set, ``jobs`` processes in parallel.

    ``laws[pset][rows]``: optional compression law of that parameter set (default: none);
    ``method``: ``"static"`` (static solver, default) or ``"dynamic"`` (dynamic relaxation)."""
    laws = {} if laws is None else laws
    frames = []
    tasks: list[Task] = []
    for pset, by_rows in rods.items():
        by_law = laws.get(pset, {})
        d = _closed_form_points(data, pset, by_rows, by_law)
        frames.append(d)
        tasks += [(pset, int(r.rows), r.characteristic, float(r.twist_angle_deg), by_rows[int(r.rows)],
                   by_law.get(int(r.rows)), method) for r in d.itertuples()]
    points = pd.concat(frames, ignore_index=True)
    if jobs <= 1:
        results = [_run_point(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            results = list(ex.map(_run_point, tasks, chunksize=4))
    points["simulated"] = [r[0] for r in results]
    points["run_time_s"] = [r[1] for r in results]
    return points


# --------------------------------------------------------------------------------------------
# the validation run: parameter sets, simulated points, scores
# --------------------------------------------------------------------------------------------
Rods = dict[str, dict[int, RodParams]]
Laws = dict[str, dict[int, AxialLawParams]]


@dataclass
class CharacterizationRun:
    """One validation run: the measured ``data`` (selected rows), the parameter sets ``rods``
    (and compression ``laws``) evaluated, the simulated ``points`` (data columns plus
    ``simulated``, ``closed_form``, ``parameter_set``, ``run_time_s``; data units), their
    ``scores`` (:func:`score`) and the ``wall`` time [s]."""

    data: pd.DataFrame
    rods: Rods
    laws: Laws
    points: pd.DataFrame
    scores: pd.DataFrame
    wall: float


def _fit_line(rows: int, label: str, rod: RodParams, fields: tuple[str, ...], extra: str) -> str:
    return (f"fit {rows:2d} rows{label}: " + ", ".join(f"{f}={getattr(rod, f):.5g}" for f in fields)
            + extra)


def fit_parameter_sets(data: pd.DataFrame, rows: list[int], law: str, fitted_dir: Path) -> tuple[Rods, Laws]:
    """Table I, the sets fitted per row count (``fitted``, and those of ``--law``
    :data:`LAW_SETS`) and the fit shared across row counts (``fitted_shared``, structure
    :data:`~hsa_elastica.validation.characterization_shared.CHOSEN`), each written to
    ``fitted_dir`` as ``fitted_params*.yaml``."""
    rods: Rods = {"table1": {r: table1_rod_params(r) for r in rows}}
    laws: Laws = {}
    by_rows = {r: data[data["rows"] == r] for r in rows}
    fitted = {}
    for r in rows:
        fitted[r], info = fit_rod(rods["table1"][r], by_rows[r])
        print(_fit_line(r, "", fitted[r], FIT_FIELDS, f"  {info}"))
    rods["fitted"] = fitted
    fitted_dir.mkdir(parents=True, exist_ok=True)
    _save_fitted(fitted, fitted_dir / FITTED_PARAMS.name)
    structure = STRUCTURES[CHOSEN]
    x, info = fit_shared(structure, data)
    print(f"fit shared ({CHOSEN}): " + ", ".join(f"{f}={v:.5g}" for f, v in zip(structure.fields, x)) + f"  {info}")
    save_shared(structure, x, rows, fitted_dir / FITTED_SHARED.name)
    _add_shared(rods, laws, fitted_dir / FITTED_SHARED.name, rows)
    sets = LAW_SETS[law]
    if "fitted_compression" in sets:
        rods["fitted_compression"], laws["fitted_compression"] = {}, {}
        for r in rows:
            rod, ax, info = fit_rod_compression(rods["table1"][r], by_rows[r], fitted[r])
            rods["fitted_compression"][r], laws["fitted_compression"][r] = rod, ax
            print(_fit_line(r, " + compression", rod, FIT_FIELDS, f", {ax}  {info}"))
        _save_fitted_compression(rods["fitted_compression"], laws["fitted_compression"],
                                 fitted_dir / FITTED_COMPRESSION.name)
    for pset, comp, path in (("fitted_nonlinear", False, FITTED_NONLINEAR),
                             ("fitted_nonlinear_compression", True, FITTED_NONLINEAR_COMPRESSION)):
        if pset not in sets:
            continue
        rods[pset] = {}
        if comp:
            laws[pset] = {}
        for r in rows:
            rod, nl_law, info = fit_rod_nonlinear(rods["table1"][r], by_rows[r], fitted[r], comp)
            rods[pset][r] = rod
            if nl_law is not None:
                laws[pset][r] = nl_law
            print(_fit_line(r, f" {pset}", rod, FIT_FIELDS + NONLINEAR_FIELDS,
                            (f", {nl_law}" if nl_law is not None else "") + f"  {info}"))
        if comp:
            _save_fitted_compression(rods[pset], laws[pset], fitted_dir / path.name)
        else:
            _save_fitted(rods[pset], fitted_dir / path.name)
    return rods, laws


def _add_shared(rods: Rods, laws: Laws, path: Path, rows: list[int]) -> None:
    """Read the shared fit's file (with its compression law if the chosen structure has one)
    into ``rods["fitted_shared"]`` (and ``laws``), the row counts of ``rows`` only."""
    if STRUCTURES[CHOSEN].compression:
        both = load_fitted_compression(path)
        rods["fitted_shared"] = {r: v[0] for r, v in both.items() if r in rows}
        laws["fitted_shared"] = {r: v[1] for r, v in both.items() if r in rows}
    else:
        rods["fitted_shared"] = {r: rod for r, rod in load_fitted(path).items() if r in rows}


def shipped_parameter_sets(rows: list[int], law: str, fitted: Path | None,
                           fitted_dir: Path | None) -> tuple[Rods, Laws]:
    """Table I, the rods of ``fitted`` (a fitted_params YAML) if given, and the sets of ``--law``
    and ``fitted_shared`` (if its file is there) read from ``fitted``'s folder, else
    ``fitted_dir``, else the shipped files."""
    rods: Rods = {"table1": {r: table1_rod_params(r) for r in rows}}
    laws: Laws = {}
    if fitted is not None:
        rods["fitted"] = {r: rod for r, rod in load_fitted(fitted).items() if r in rows}
    folder = (fitted.parent if fitted is not None else
              fitted_dir if fitted_dir is not None else FITTED_PARAMS.parent)
    if (folder / FITTED_SHARED.name).is_file():
        _add_shared(rods, laws, folder / FITTED_SHARED.name, rows)
    names = {"fitted_compression": FITTED_COMPRESSION, "fitted_nonlinear": FITTED_NONLINEAR,
             "fitted_nonlinear_compression": FITTED_NONLINEAR_COMPRESSION}
    for pset in LAW_SETS[law]:
        name = names[pset].name
        if pset == "fitted_nonlinear":
            rods[pset] = {r: rod for r, rod in load_fitted(folder / name).items() if r in rows}
            continue
        both = load_fitted_compression(folder / name)
        rods[pset] = {r: v[0] for r, v in both.items() if r in rows}
        laws[pset] = {r: v[1] for r, v in both.items() if r in rows}
    return rods, laws


def run_validation(args: argparse.Namespace) -> CharacterizationRun:
    """Fit (``args.fit``) or read the parameter sets, simulate every measured point of
    ``args.rows`` with each and score them (options of :func:`parser`, resolved by
    :func:`resolve_outputs`)."""
    t_start = time.perf_counter()
    data = load_characterization_data(args.data)
    data = data[data["rows"].isin(args.rows)].reset_index(drop=True)
    if args.fit:
        fitted_dir = args.fitted_dir if args.fitted_dir is not None else args.results
        rods, laws = fit_parameter_sets(data, list(args.rows), args.law, fitted_dir)
    else:
        rods, laws = shipped_parameter_sets(list(args.rows), args.law, args.fitted, args.fitted_dir)
    points = simulate_all(data, rods, max(1, args.jobs), laws, method=args.method)
    return CharacterizationRun(data, rods, laws, points, score(points), time.perf_counter() - t_start)


def write_tables(run: CharacterizationRun, out: Path, results: Path) -> list[Path]:
    """``<out>/characterization_points.csv`` and ``<results>/scores.csv``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    cols = list(run.data.columns) + ["simulated", "parameter_set", "closed_form", "run_time_s"]
    with atomic_output(out / "characterization_points.csv") as tmp:
        run.points[cols].to_csv(tmp, index=False)
    with atomic_output(results / "scores.csv") as tmp:
        run.scores.to_csv(tmp, index=False, float_format="%.6g")
    return [out / "characterization_points.csv", results / "scores.csv"]


def print_summary(run: CharacterizationRun, jobs: int, written: list[Path]) -> None:
    """The scores table and where the files went."""
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(run.scores.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"{len(run.points)} points in {run.wall:.1f} s wall ({run.points['run_time_s'].sum():.1f} s "
          f"of runs, {jobs} jobs); wrote " + ", ".join(str(f) for f in written))


# --------------------------------------------------------------------------------------------
# command
# --------------------------------------------------------------------------------------------
def parser(prog: str = "python -m hsa_elastica.validation.characterization") -> argparse.ArgumentParser:
    """The options of the validation (shared with the checkout's report writer)."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=list(ROWS), choices=ROWS, help="row tilings (default: all)")
    ap.add_argument("--fit", action="store_true", help="fit C_eps, E0, E_slope, B_z, B_z_slope per row count and "
                    "write fitted_params.yaml")
    ap.add_argument("--law", choices=tuple(LAW_SETS), default="linear",
                    help="linear (default, the paper's law): Table I and the linear fit; compression: "
                    "also the fit with the compression stiffness ratio of hsa_elastica.physics.compression_law "
                    "(parameter set fitted_compression, fitted_params_compression.yaml); nonlinear: also "
                    "the fit with the optional quadratic twist laws C_eps2, E_quad, twist_rigidity_quad "
                    "(fitted_nonlinear, fitted_params_nonlinear.yaml); nonlinear+compression: all of "
                    "these plus quadratic laws with the compression law (fitted_nonlinear_compression)")
    ap.add_argument("--fitted", type=Path, default=None, help="also evaluate the fitted rods of this YAML "
                    "(default with --fit: the new fit)")
    ap.add_argument("--jobs", type=int, default=None, help="parallel processes (default: 1 with the static "
                    "solver, whose solves take milliseconds; the cpu count with --method dynamic)")
    ap.add_argument("--method", choices=("static", "dynamic"), default="static",
                    help="steady states by the static solver (default) or by dynamic relaxation")
    ap.add_argument("--out", type=Path, default=None, help="directory of the points CSV (default: RESULTS/out); "
                    "given alone, everything (scores, --fit's YAML) is written there")
    ap.add_argument("--results", type=Path, default=None, help="directory of scores.csv "
                    "(default: --out if given, else ./validation_results)")
    ap.add_argument("--fitted-dir", type=Path, default=None, help="where --fit writes fitted_params*.yaml, and "
                    "where the other fitted sets of --law are read without --fit (default: RESULTS with --fit, "
                    "the shipped files in hsa_elastica/data without)")
    ap.add_argument("--data", type=Path, default=None, help="characterization CSV (default: the copy shipped in hsa_elastica/data)")
    return ap


def resolve_outputs(ap: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Check ``--fitted`` (0, or 2 with one line on stderr) and fill the defaults of
    ``--results``, ``--out`` and ``--jobs``: a run writes only where it is told."""
    if args.fitted is not None:  # refused before any work: exit 2, one line
        try:
            load_fitted(args.fitted)
        except ParameterError as exc:
            print(f"{ap.prog}: --fitted: {exc}", file=sys.stderr)
            return 2
    if args.results is None:
        args.results = args.out if args.out is not None else DEFAULT_RESULTS
    if args.out is None:
        args.out = args.results / "out"
    if args.jobs is None:
        args.jobs = 1 if args.method == "static" else (os.cpu_count() or 1)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = parser()
    args = ap.parse_args(argv)
    if resolve_outputs(ap, args):
        return 2
    run = run_validation(args)
    print_summary(run, args.jobs, write_tables(run, args.out, args.results))
    return 0


def _save_fitted(fitted: dict[int, RodParams], path: Path) -> None:
    """One YAML per row count is what ``params.save_params`` writes; we keep one file with a
    mapping ``rows -> RodParams fields`` (SI units, header comment)."""
    import yaml

    body = {int(r): rod.to_dict() for r, rod in fitted.items()}
    header = ("# Fitted closed-HSA characterization rods per row count (python -m hsa_elastica.validation.characterization --fit)\n"
              "# RodParams fields, SI units: m, kg/m^3, Pa, N m^2, m/rad (C_eps), Pa m/rad (E_slope),\n"
              "# N m^2 m/rad (twist_rigidity_slope). Fitted: " + ", ".join(FIT_FIELDS) + "; the rest is Table I.\n")
    write_text_atomic(path, header + yaml.safe_dump(body, sort_keys=True))


def _save_fitted_compression(
    rods: dict[int, RodParams], laws: dict[int, AxialLawParams], path: Path
) -> None:
    """``rows -> {rod: RodParams fields, axial_law: AxialLawParams fields}`` (SI units)."""
    import yaml

    body = {int(r): {"rod": rods[r].to_dict(), "axial_law": laws[r].to_dict()} for r in rods}
    header = ("# Fitted closed-HSA rods with the compression law (python -m hsa_elastica.validation.characterization --fit "
              "--law compression)\n# rod: RodParams fields (SI, see fitted_params.yaml); axial_law: "
              "hsa_elastica.physics.compression_law.AxialLawParams\n# (compression_ratio [-] at zero twist, "
              "compression_ratio_slope [m/rad]).\n")
    write_text_atomic(path, header + yaml.safe_dump(body, sort_keys=True))


def load_fitted_compression(path: Path = FITTED_COMPRESSION) -> dict[int, tuple[RodParams, AxialLawParams]]:
    """Read ``fitted_params_compression.yaml`` into ``{rows: (RodParams, AxialLawParams)}``
    (the one reader of parameter files, :func:`hsa_elastica.params.load_params_per_key`: each
    entry's two sections, both validated; any other key refused)."""
    rods = load_params_per_key(path, RodParams)
    laws = load_params_per_key(path, AxialLawParams)  # type: ignore[type-var]
    return {r: (rods[r], laws[r]) for r in rods}


def load_fitted(path: Path = FITTED_PARAMS) -> dict[int, RodParams]:
    """Read ``fitted_params.yaml`` back into ``{rows: RodParams}`` (validated, by
    :func:`hsa_elastica.params.load_params_per_key`)."""
    return load_params_per_key(path, RodParams)


if __name__ == "__main__":
    sys.exit(main())
