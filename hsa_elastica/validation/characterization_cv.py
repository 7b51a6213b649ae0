"""Cross-validated scores of every characterization parameter set.

Two splits of the measured points (Good et al. 2022, 120 points):

* **leave one twist angle out** (LOAO): for each row count and each measured angle, the set is
  fitted without that row count's points at that angle (the four characteristics there) and
  predicts them;
* **leave one row count out** (LORO): the set is fitted without any point of one row count and
  predicts all of them.  Only the shared fits (:mod:`.characterization_shared`) can: the
  per-row-count fits have no parameters for a row count they never saw.

The target: cross-validated, at least 0.8 of the points inside their error bars, or, for
the points whose bars are below 1 % of their value (:func:`small_bars`), a cross-validated
RMSE at most 1.5 times the in-sample RMSE (per characteristic, on those points; RMSE mixes
units across characteristics).  :func:`criteria` states per set and split which holds.

Predictions are the model's closed forms (the simulator agrees with them, see ``results.md``).
The in-sample score is the same fit on all points.  Table I is not fitted here: its three
columns are the same.  The shared structure with the most cross-validated points inside the
error bars (LOAO + LORO; fewer parameters on ties) is the one shipped as
``fitted_params_shared.yaml``.

Usage::

    python -m hsa_elastica.validation.characterization_cv [--results validation_results/results.md]
                                                          [--sets fitted shared_series_row ...]

prints the tables, puts them into the results file (created if missing) and writes the
per-set totals to ``cv_scores.csv`` beside it (the report's "best" set is chosen from it; the
rows of sets not given to ``--sets`` are kept from the earlier file).
All sets take 15-30 minutes (most of it the per-row quadratic + compression fit); a shared
structure 20-80 s.
"""

from __future__ import annotations

import argparse
import math
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
CV_SPLITS = ("loao", "loro")
#: error bars below this fraction of the value: judged by the RMSE ratio, not by the bars
SMALL_BAR = 0.01
#: cross-validated fraction of points inside the error bars the target asks for
INSIDE_TARGET = 0.8
#: largest cross-validated / in-sample RMSE the target allows on the small-bar points
RMSE_RATIO_TARGET = 1.5


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


# --------------------------------------------------------------------------------------------
# the RMSE criterion of the points with small error bars
# --------------------------------------------------------------------------------------------
def small_bars(d: pd.DataFrame) -> pd.Series:
    """Points whose error bars (both sides) are below :data:`SMALL_BAR` of ``|value|``."""
    return np.maximum(d["err_low"], d["err_high"]) < SMALL_BAR * d["value"].abs()


def rmse(g: pd.DataFrame, col: str) -> float:
    """Root mean square of ``g[col] - g["value"]`` [data unit]; NaN if ``g`` is empty or a
    prediction is missing (the set cannot predict that split)."""
    if g.empty or g[col].isna().any():
        return math.nan
    return float(np.sqrt(np.mean((g[col].to_numpy() - g["value"].to_numpy()) ** 2)))


def _ratio(cv_rmse: float, in_sample: float) -> float:
    """Cross-validated over in-sample RMSE; inf for a nonzero error over an exact fit."""
    if math.isnan(cv_rmse) or math.isnan(in_sample):
        return math.nan
    if in_sample == 0.0:
        return 0.0 if cv_rmse == 0.0 else math.inf
    return cv_rmse / in_sample


def rmse_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per parameter set and characteristic: RMSE in-sample / LOAO / LORO and the ratios of
    the cross-validated ones to the in-sample one, over all points (``rmse_*``, ``ratio_*``)
    and over the points with small bars only (``n_small``, ``rmse_small_*``,
    ``ratio_small_*``; NaN where there are none or the set cannot predict the split)."""
    out = []
    small = small_bars(points)
    for (pset, ch), g in points.groupby(["parameter_set", "characteristic"], sort=False):
        gs = g[small.loc[g.index]]
        row: dict[str, object] = {"parameter_set": pset, "characteristic": ch, "n_points": len(g),
                                  "n_small": len(gs), "unit": g["unit"].iloc[0]}
        for tag, sub in (("", g), ("small_", gs)):
            for s in SPLITS:
                row[f"rmse_{tag}{s}"] = rmse(sub, s)
            for s in CV_SPLITS:
                row[f"ratio_{tag}{s}"] = _ratio(float(row[f"rmse_{tag}{s}"]),  # type: ignore[arg-type]
                                               float(row[f"rmse_{tag}in_sample"]))  # type: ignore[arg-type]
        out.append(row)
    return pd.DataFrame(out)


def criteria(points: pd.DataFrame) -> pd.DataFrame:
    """Per parameter set and cross-validated split, which part of the target holds.

    ``n_wide``: points with bars of at least :data:`SMALL_BAR` of the value;
    ``inside_wide_<split>``: those inside their bars; ``worst_small_ratio_<split>``: the
    largest cross-validated / in-sample RMSE over the characteristics with small-bar points
    (on those points); ``criterion_<split>``: ``"inside"`` if at least
    :data:`INSIDE_TARGET` of all points are inside, else ``"inside+rmse"`` if that fraction
    holds on the wide-bar points and every small-bar ratio is at most
    :data:`RMSE_RATIO_TARGET`, else ``"none"``; ``"-"`` where the set cannot predict the
    split (and -1 / NaN in the numbers)."""
    table = rmse_table(points)
    small = small_bars(points)
    out = []
    for pset, g in points.groupby("parameter_set", sort=False):
        wide = g[~small.loc[g.index]]
        row: dict[str, object] = {"parameter_set": pset, "n_small": len(g) - len(wide),
                                  "n_wide": len(wide)}
        ratios = table[(table["parameter_set"] == pset) & (table["n_small"] > 0)]
        for s in CV_SPLITS:
            if g[s].isna().any():
                row.update({f"inside_wide_{s}": -1, f"worst_small_ratio_{s}": math.nan,
                            f"criterion_{s}": "-"})
                continue
            n_in = int(inside_error_bar(wide, s).sum())
            worst = float(ratios[f"ratio_small_{s}"].max()) if len(ratios) else 0.0
            if inside_error_bar(g, s).sum() >= INSIDE_TARGET * len(g):
                verdict = "inside"
            elif n_in >= INSIDE_TARGET * len(wide) and worst <= RMSE_RATIO_TARGET:
                verdict = "inside+rmse"
            else:
                verdict = "none"
            row.update({f"inside_wide_{s}": n_in, f"worst_small_ratio_{s}": worst,
                        f"criterion_{s}": verdict})
        out.append(row)
    return pd.DataFrame(out)


def scores_csv(points: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``cv_scores.csv``: :func:`totals`, then the columns of :func:`criteria`."""
    return totals(points).merge(criteria(points), on="parameter_set", how="left", sort=False)


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


def _num(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.4g}"


def _ratio_text(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.2f}"


def _totals_table(points: pd.DataFrame) -> list[str]:
    """Per set: points inside in-sample / LOAO / LORO; per cross-validated split the
    wide-bar points inside, the worst small-bar RMSE ratio and the criterion met."""
    tot = scores_csv(points)
    rt = rmse_table(points)
    lines = ["| parameter set | fitted parameters (5 row counts) | inside, in-sample | inside, LOAO | "
             "inside, LORO | LOAO: wide bars inside, worst RMSE ratio (bars < 1 %), criterion | "
             "LORO: the same |", "|---|---|---|---|---|---|---|"]
    for r in tot.itertuples():
        cells = []
        for s in CV_SPLITS:
            n_in = int(getattr(r, f"inside_wide_{s}"))
            crit = getattr(r, f"criterion_{s}")
            mine = rt[(rt["parameter_set"] == r.parameter_set) & (rt["n_small"] > 0)]
            worst = (f" ({mine.loc[mine[f'ratio_small_{s}'].idxmax(), 'characteristic']})"
                     if crit != "-" and len(mine) else "")
            cells.append("-" if crit == "-" else
                         f"{_count(n_in, int(r.n_wide))}, {_ratio_text(getattr(r, f'worst_small_ratio_{s}'))}"
                         f"{worst}, **{crit}**")
        lines.append(f"| {r.parameter_set} | {r.n_parameters} | {_count(r.inside_in_sample, r.n_points)} | "
                     f"{_count(r.inside_loao, r.n_points)} | {_count(r.inside_loro, r.n_points)} | "
                     f"{cells[0]} | {cells[1]} |")
    for s, label in zip(CV_SPLITS, ("LOAO", "LORO")):
        met = [str(r.parameter_set) for r in tot.itertuples()
               if getattr(r, f"criterion_{s}") in ("inside", "inside+rmse")]
        lines.append(("" if s != CV_SPLITS[0] else "\n") + f"Meeting the target, {label}: "
                     + (", ".join(f"`{m}`" for m in met) if met else "none of these sets") + ".")
    return lines


def _rmse_lines(points: pd.DataFrame) -> list[str]:
    """Per set and characteristic: inside counts, RMSE and ratios, all points and small bars."""
    rt = rmse_table(points)
    lines = ["| parameter set | characteristic | inside in-sample / LOAO / LORO | RMSE in-sample / LOAO / LORO | "
             "ratio LOAO / LORO | bars < 1 %: points, RMSE in-sample / LOAO / LORO | bars < 1 %: ratio "
             "LOAO / LORO | unit |", "|---|---|---|---|---|---|---|---|"]
    groups = points.groupby(["parameter_set", "characteristic"], sort=False)
    for r, (_, g) in zip(rt.itertuples(), groups):
        ins = " / ".join("-" if g[s].isna().any() else str(int(inside_error_bar(g, s).sum())) for s in SPLITS)
        all_rmse = " / ".join(_num(getattr(r, f"rmse_{s}")) for s in SPLITS)
        ratios = " / ".join(_ratio_text(getattr(r, f"ratio_{s}")) for s in CV_SPLITS)
        if r.n_small:
            small = (f"{r.n_small}, " + " / ".join(_num(getattr(r, f"rmse_small_{s}")) for s in SPLITS))
            small_ratios = " / ".join(_ratio_text(getattr(r, f"ratio_small_{s}")) for s in CV_SPLITS)
        else:
            small, small_ratios = "0", "-"
        lines.append(f"| {r.parameter_set} | {r.characteristic} | {ins} (of {len(g)}) | {all_rmse} | {ratios} | "
                     f"{small} | {small_ratios} | {r.unit} |")
    return lines


def _small_bar_points(points: pd.DataFrame) -> str:
    """The measured points judged by the RMSE criterion, one line."""
    first = points[points["parameter_set"] == points["parameter_set"].iloc[0]]
    d = first[small_bars(first)]
    items = [f"{r.characteristic} {r.rows} rows {r.twist_angle_deg:g} deg ({r.value:g} {r.unit}, "
             f"bars -{r.err_low:g}/+{r.err_high:g})" for r in d.itertuples()]
    return f"Points with bars below 1 % of the value ({len(items)}): " + "; ".join(items) + "."


def table(points: pd.DataFrame) -> str:
    """Markdown: the totals and criteria per set, the points with small bars, then per set and
    characteristic (inside, RMSE and ratios)."""
    return "\n".join([*_totals_table(points), "", _small_bar_points(points), "", *_rmse_lines(points)])


def section(points: pd.DataFrame, wall: float) -> str:
    tot = totals(points)
    best = chosen_structure(tot)
    pick = (f"Shared structure with the best cross-validated score (LOAO + LORO): `{best}` "
            "(shipped as `hsa_elastica/data/fitted_params_shared.yaml`, parameter set `fitted_shared`).\n\n"
            if best is not None else "")
    missing = [name for name in PARAMETER_SETS if name not in set(points["parameter_set"])]
    if missing:
        pick += ("Not cross-validated in this run (their earlier totals are kept in `cv_scores.csv`): "
                 + ", ".join(f"`{m}`" for m in missing) + ".\n\n")
    return (
        f"{BEGIN}\n## Cross-validated scores\n"
        f"Generated by `python -m validation.characterization_cv` (closed forms, {wall:.0f} s).  "
        "LOAO: leave one twist angle out per row count (the set is fitted without that row count's "
        "points at that angle and predicts them); LORO: leave one row count out (fitted without "
        "any point of that row count); in-sample: the same fit on all points.  Per-row-count sets "
        "cannot predict a row count they never saw (LORO: -); Table I is not fitted here.  "
        "Shared structures: `hsa_elastica/validation/characterization_shared.py`.\n\n"
        "The target, per set and cross-validated split: at least 0.8 of the points inside their "
        "error bars (criterion **inside**), or, judging the points whose bars are below 1 % of "
        "their value by their RMSE instead: at least 0.8 of the other (wide-bar) points inside "
        "and, for every characteristic with small-bar points, the cross-validated RMSE on those "
        "points at most 1.5 times the in-sample RMSE on them (**inside+rmse**); else **none**.  "
        "Ratios are cross-validated RMSE / in-sample RMSE of the same points.\n\n"
        + pick + table(points) + f"\n{END}\n"
    )


def merged_scores(points: pd.DataFrame, previous: pd.DataFrame | None) -> pd.DataFrame:
    """:func:`scores_csv` of ``points``, with the rows of ``previous`` (an earlier
    ``cv_scores.csv``) kept for the sets not in ``points`` (new columns empty there), in the
    order of :data:`PARAMETER_SETS`."""
    new = scores_csv(points)
    if previous is not None:
        kept = previous[~previous["parameter_set"].isin(new["parameter_set"])]
        new = pd.concat([new, kept], ignore_index=True)[list(new.columns)]
        counts = ["n_small", "n_wide", *(f"inside_wide_{s}" for s in CV_SPLITS)]
        new[counts] = new[counts].astype("Int64")  # integers with gaps for the kept rows
    order = {name: k for k, name in enumerate(PARAMETER_SETS)}
    return new.sort_values("parameter_set", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def write_outputs(results_path: Path, text: str, points: pd.DataFrame) -> None:
    """The section into ``results_path`` (created if missing) and ``cv_scores.csv`` beside it
    (an earlier file's rows of the sets not run kept)."""
    results = results_path.read_text() if results_path.is_file() else ""
    results_path.parent.mkdir(parents=True, exist_ok=True)
    if BEGIN in results:
        results = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", lambda _: text, results, flags=re.S)
    else:
        results = results.rstrip("\n") + "\n\n" + text
    write_text_atomic(results_path, results)
    csv = results_path.parent / "cv_scores.csv"
    previous = pd.read_csv(csv) if csv.is_file() else None
    with atomic_output(csv) as tmp:
        merged_scores(points, previous).to_csv(tmp, index=False, float_format="%.4g")


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
        write_outputs(args.results, text, points)
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
