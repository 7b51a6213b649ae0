"""Cross-validated scores of every characterization parameter set.

Two splits of the measured points (Good et al. 2022, 120 points):

* **leave one twist angle out** (LOAO): for each row count and each measured angle, the set is
  fitted without that row count's points at that angle (the four characteristics there) and
  predicts them;
* **leave one row count out** (LORO): the set is fitted without any point of one row count and
  predicts all of them.  Only the shared fits (:mod:`.characterization_shared`) can: the
  per-row-count fits have no parameters for a row count they never saw.

Predictions are the model's closed forms (the simulator agrees with them, see ``results.md``).
The in-sample score is the same fit on all points.  Table I is not fitted here: its three
columns are the same.  The shared structure with the most cross-validated points inside the
error bars (LOAO + LORO; fewer parameters on ties) is the one shipped as
``fitted_params_shared.yaml``.

Usage::

    python -m hsa_elastica.validation.characterization_cv [--results validation_results/results.md]
                                                          [--sets fitted shared_series_row ...]

prints the tables, puts them into the results file (created if missing) and writes the
per-set totals to ``cv_scores.csv`` beside it (the report's "best" set is chosen from it).
All sets take 15-30 minutes (most of it the per-row quadratic + compression fit); a shared
structure 20-80 s.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from hsa_elastica.experiments.characterization import load_characterization_data
from hsa_elastica.params import RodParams, table1_rod_params
from hsa_elastica.params.files import atomic_output, write_text_atomic
from hsa_elastica.physics.compression_law import AxialLawParams
from hsa_elastica.validation.characterization_fit import (
    closed_form_values,
    fit_rod,
    fit_rod_compression,
    fit_rod_nonlinear,
    inside_error_bar,
)
from hsa_elastica.validation.characterization_shared import STRUCTURES, fit_shared, predict, shared_rods

BEGIN, END = "<!-- cross-validation: begin -->", "<!-- cross-validation: end -->"
#: train points, test points -> predictions at the test points [data units]
FitPredict = Callable[[pd.DataFrame, pd.DataFrame], np.ndarray]
PerRowFit = Callable[[RodParams, pd.DataFrame], "tuple[RodParams, AxialLawParams | None]"]
SPLITS = ("in_sample", "loao", "loro")


# --------------------------------------------------------------------------------------------
# splits
# --------------------------------------------------------------------------------------------
def splits(data: pd.DataFrame, kind: str) -> Iterator[np.ndarray]:
    """Boolean masks of the held-out points: ``"loao"`` one (row count, twist angle) at a
    time, ``"loro"`` one row count at a time."""
    if kind not in ("loao", "loro"):
        raise ValueError(f"kind = {kind!r} is invalid: must be 'loao' or 'loro'")
    rows = data["rows"].to_numpy()
    ang = data["twist_angle_deg"].to_numpy()
    for r in sorted(set(rows)):
        if kind == "loro":
            yield rows == r
            continue
        for a in sorted(set(ang[rows == r])):
            yield (rows == r) & (ang == a)


def held_out_predictions(data: pd.DataFrame, fit_predict: FitPredict, kind: str) -> np.ndarray:
    """Predictions at every point by a fit that never saw it (``kind`` as in :func:`splits`)."""
    out = np.full(len(data), np.nan)
    for held in splits(data, kind):
        out[held] = fit_predict(data[~held], data[held])
    return out


# --------------------------------------------------------------------------------------------
# the parameter sets as fit-and-predict functions
# --------------------------------------------------------------------------------------------
def _per_row(fit: PerRowFit) -> FitPredict:
    """A per-row-count fit: each row count of ``test`` from its own training points only."""

    def fit_predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        out = np.full(len(test), np.nan)
        for r in sorted(set(test["rows"])):
            tr = train[train["rows"] == r]
            m = (test["rows"] == r).to_numpy()
            if tr.empty:
                continue  # no parameters for a row count it never saw
            rod, law = fit(table1_rod_params(int(r)), tr)
            out[m] = closed_form_values(rod, test[m], law)
        return out

    return fit_predict


def _fit_linear(r0: RodParams, d: pd.DataFrame) -> tuple[RodParams, AxialLawParams | None]:
    return fit_rod(r0, d)[0], None


def _fit_compression(r0: RodParams, d: pd.DataFrame) -> tuple[RodParams, AxialLawParams | None]:
    rod, law, _ = fit_rod_compression(r0, d, fit_rod(r0, d)[0])
    return rod, law


def _fit_nonlinear(compression: bool) -> PerRowFit:
    def fit(r0: RodParams, d: pd.DataFrame) -> tuple[RodParams, AxialLawParams | None]:
        rod, law, _ = fit_rod_nonlinear(r0, d, fit_rod(r0, d)[0], compression)
        return rod, law

    return fit


def _table1(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    del train  # not fitted
    return predict({int(r): (table1_rod_params(int(r)), None) for r in set(test["rows"])}, test)


def _shared(name: str) -> FitPredict:
    structure = STRUCTURES[name]

    def fit_predict(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
        x, _ = fit_shared(structure, train)
        return predict(shared_rods(structure, x, sorted(int(r) for r in set(test["rows"]))), test)

    return fit_predict


#: every cross-validated parameter set: name -> (fit-and-predict, fitted parameters in total
#: for the five row counts, whether it can predict an unseen row count)
PARAMETER_SETS: dict[str, tuple[FitPredict, int, bool]] = {
    "table1": (_table1, 0, True),
    "fitted": (_per_row(_fit_linear), 25, False),
    "fitted_compression": (_per_row(_fit_compression), 35, False),
    "fitted_nonlinear": (_per_row(_fit_nonlinear(False)), 40, False),
    "fitted_nonlinear_compression": (_per_row(_fit_nonlinear(True)), 50, False),
    **{name: (_shared(name), s.n_parameters, True) for name, s in STRUCTURES.items()},
}


def cross_validate(data: pd.DataFrame, pset: str) -> pd.DataFrame:
    """The data points of ``pset`` with the predictions ``in_sample``, ``loao`` and ``loro``
    (NaN where the set cannot predict), data units."""
    fit_predict, _, unseen = PARAMETER_SETS[pset]
    d = data.reset_index(drop=True).copy()
    d["parameter_set"] = pset
    d["in_sample"] = fit_predict(d, d)
    d["loao"] = held_out_predictions(d, fit_predict, "loao")
    d["loro"] = held_out_predictions(d, fit_predict, "loro") if unseen else np.nan
    return d


# --------------------------------------------------------------------------------------------
# scores and tables
# --------------------------------------------------------------------------------------------
def totals(points: pd.DataFrame) -> pd.DataFrame:
    """Per parameter set: points inside the error bars in-sample, LOAO and LORO (-1: the set
    cannot predict that split) and the fitted parameters."""
    out = []
    for pset, g in points.groupby("parameter_set", sort=False):
        row: dict[str, object] = {"parameter_set": pset, "n_parameters": PARAMETER_SETS[str(pset)][1],
                                  "n_points": len(g)}
        for s in SPLITS:
            row[f"inside_{s}"] = int(inside_error_bar(g, s).sum()) if g[s].notna().all() else -1
        out.append(row)
    return pd.DataFrame(out)


def chosen_structure(tot: pd.DataFrame) -> str | None:
    """The shared structure with the most cross-validated points inside (LOAO + LORO),
    fewer parameters on ties; None if no shared structure was cross-validated."""
    sh = tot[tot["parameter_set"].isin(list(STRUCTURES))]
    if sh.empty:
        return None
    key = sh.assign(cv=sh["inside_loao"] + sh["inside_loro"], neg=-sh["n_parameters"])
    return str(key.sort_values(["cv", "neg"], ascending=False, kind="stable")["parameter_set"].iloc[0])


def _count(n: int, total: int) -> str:
    return "-" if n < 0 else f"{n}/{total} ({n / total:.2f})"


def _rmse(g: pd.DataFrame, col: str) -> str:
    if g[col].isna().any():
        return "-"
    return f"{np.sqrt(np.mean((g[col] - g['value']) ** 2)):.4g}"


def table(points: pd.DataFrame) -> str:
    """Markdown: the totals per set, then per set and characteristic (inside and RMSE)."""
    tot = totals(points)
    lines = ["| parameter set | fitted parameters (5 row counts) | inside, in-sample | inside, LOAO | "
             "inside, LORO |", "|---|---|---|---|---|"]
    for r in tot.itertuples():
        lines.append(f"| {r.parameter_set} | {r.n_parameters} | {_count(r.inside_in_sample, r.n_points)} | "
                     f"{_count(r.inside_loao, r.n_points)} | {_count(r.inside_loro, r.n_points)} |")
    lines += ["", "| parameter set | characteristic | inside in-sample / LOAO / LORO | RMSE in-sample | "
              "RMSE LOAO | RMSE LORO | unit |", "|---|---|---|---|---|---|---|"]
    for (pset, ch), g in points.groupby(["parameter_set", "characteristic"], sort=False):
        ins = " / ".join("-" if g[s].isna().any() else str(int(inside_error_bar(g, s).sum())) for s in SPLITS)
        lines.append(f"| {pset} | {ch} | {ins} (of {len(g)}) | {_rmse(g, 'in_sample')} | {_rmse(g, 'loao')} | "
                     f"{_rmse(g, 'loro')} | {g['unit'].iloc[0]} |")
    return "\n".join(lines)


def section(points: pd.DataFrame, wall: float) -> str:
    tot = totals(points)
    best = chosen_structure(tot)
    pick = (f"Shared structure with the best cross-validated score (LOAO + LORO): `{best}` "
            "(shipped as `hsa_elastica/data/fitted_params_shared.yaml`, parameter set `fitted_shared`).\n\n"
            if best is not None else "")
    return (
        f"{BEGIN}\n## Cross-validated scores\n"
        f"Generated by `python -m validation.characterization_cv` (closed forms, {wall:.0f} s).  "
        "LOAO: leave one twist angle out per row count (the set is fitted without that row count's "
        "points at that angle and predicts them); LORO: leave one row count out (fitted without "
        "any point of that row count); in-sample: the same fit on all points.  Per-row-count sets "
        "cannot predict a row count they never saw (LORO: -); Table I is not fitted here.  "
        "Shared structures: `hsa_elastica/validation/characterization_shared.py`.\n\n"
        + pick + table(points) + f"\n{END}\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.characterization_cv",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--results", type=Path, default=Path("validation_results") / "results.md",
                    help="markdown file the tables are put into (default: ./validation_results/results.md); "
                    "cv_scores.csv is written beside it")
    ap.add_argument("--sets", nargs="+", choices=tuple(PARAMETER_SETS), default=list(PARAMETER_SETS),
                    help="parameter sets to cross-validate (default: all)")
    ap.add_argument("--no-write", action="store_true", help="only print the tables")
    args = ap.parse_args(argv)
    data = load_characterization_data()
    t0 = time.perf_counter()
    frames = []
    for pset in args.sets:
        t = time.perf_counter()
        frames.append(cross_validate(data, pset))
        print(f"{pset}: {time.perf_counter() - t:.0f} s", flush=True)
    points = pd.concat(frames, ignore_index=True)
    text = section(points, time.perf_counter() - t0)
    print(text)
    if not args.no_write:
        results = args.results.read_text() if args.results.is_file() else ""
        args.results.parent.mkdir(parents=True, exist_ok=True)
        if BEGIN in results:
            results = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", lambda _: text, results, flags=re.S)
        else:
            results = results.rstrip("\n") + "\n\n" + text
        write_text_atomic(args.results, results)
        with atomic_output(args.results.parent / "cv_scores.csv") as tmp:
            totals(points).to_csv(tmp, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
