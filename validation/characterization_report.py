"""Figure (paper Fig. 3) and Markdown report of the closed-HSA characterization validation.

Renders the points and scores computed by :mod:`hsa_elastica.validation.characterization` (the
scoring itself is :func:`hsa_elastica.validation.characterization_fit.score`): the Fig. 3 panels
and ``results.md`` with its notes.  Run by the checkout's ``python -m validation.characterization``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hsa_elastica.params.files import atomic_output, write_text_atomic
from hsa_elastica.experiments.characterization import CHARACTERISTICS
from hsa_elastica.physics.compression_law import AxialLawParams
from hsa_elastica.params import RodParams
from hsa_elastica.validation.characterization_cv import BEGIN, END
from hsa_elastica.validation.characterization_shared import CHOSEN, STRUCTURES
from hsa_elastica.validation.characterization_fit import (
    N_FITTED,
    _closed_form_points,
    best_parameter_set,
    data_max_kappa,
    inside_error_bar,
    score,
)


# --------------------------------------------------------------------------------------------
# figure and report
# --------------------------------------------------------------------------------------------
_TITLES = {
    "blocked_force": "(a) blocked force [N]",
    "spring_constant": "(b) spring constant [N/mm]",
    "minimum_energy_length": "(c) minimum energy length [mm]",
    "holding_torque": "(d) holding torque [N mm]",
}
_SET_LABELS = {
    "table1": "Table I",
    "fitted": "fitted linear law (paper's model)",
    "fitted_compression": "fitted + compression law",
    "fitted_nonlinear": "fitted quadratic twist laws",
    "fitted_nonlinear_compression": "fitted quadratic + compression",
    "fitted_shared": "fit shared across row counts",
}
#: line style of a model curve: the best parameter set and Table I in the main figure
_MODEL_STYLE = {"best": ("--", "x"), "table1": (":", "^")}


def _inside_label(points: pd.DataFrame, pset: str, ch: str | None = None) -> str:
    g = points[points["parameter_set"] == pset]
    if ch is not None:
        g = g[g["characteristic"] == ch]
    return f"{int(inside_error_bar(g).sum())}/{len(g)}"


def _panel(ax: Any, points: pd.DataFrame, ch: str, models: dict[str, tuple[Any, str]], colors: dict[int, Any]) -> None:
    """Measured curves with error bars and the ``models`` (pset -> (line style, marker)) of one
    characteristic, one colour per row count."""
    sel = points[points["characteristic"] == ch]
    for rows, color in colors.items():
        meas = sel[sel["rows"] == rows]
        m0 = meas.drop_duplicates("twist_angle_deg").sort_values("twist_angle_deg")
        if m0.empty:
            continue
        ax.errorbar(m0["twist_angle_deg"], m0["value"], yerr=[m0["err_low"], m0["err_high"]], color=color,
                    ls="-", lw=1.2, marker="o", ms=3.5, capsize=2.5, zorder=3)
        for pset, (ls, marker) in models.items():
            g = meas[meas["parameter_set"] == pset].sort_values("twist_angle_deg")
            ax.plot(g["twist_angle_deg"], g["simulated"], ls=ls, lw=1.2, color=color, marker=marker, ms=3.5,
                    alpha=0.9, zorder=2)
    ax.set_xlabel("twist angle [deg]")
    ax.grid(alpha=0.3)


def _legend_handles(colors: dict[int, Any], models: dict[str, tuple[Any, str]]) -> list[Any]:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, lw=2.5, label=f"{r} rows") for r, c in colors.items()]
    handles.append(Line2D([], [], color="k", ls="-", marker="o", ms=3.5, label="measured"))
    handles += [Line2D([], [], color="k", ls=ls, marker=m, ms=3.5, label=_SET_LABELS.get(p, p))
                for p, (ls, m) in models.items()]
    return handles


def plot_fig3(points: pd.DataFrame, path: Path, cv: pd.DataFrame | None = None) -> list[Path]:
    """Fig. 3 of the paper from the simulated points (PNG), and the other parameter sets.

    ``path``: one panel per characteristic, measured (Good et al. 2022, error bars) vs the best
    fitted parameter set (:func:`best_parameter_set`: by the cross-validated totals ``cv`` if
    given) and Table I; each panel title gives the points inside the error bars.
    ``<path stem>_other_sets.png``: the remaining fitted sets, one column per set.
    Returns the paths written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows_all = [int(r) for r in sorted(points["rows"].unique())]
    cmap = plt.get_cmap("plasma")
    colors = {r: cmap(0.85 * i / max(1, len(rows_all) - 1)) for i, r in enumerate(rows_all)}
    best = best_parameter_set(score(points), cv)
    psets = list(dict.fromkeys(points["parameter_set"]))
    models = {p: st for p, st in (("table1", _MODEL_STYLE["table1"]), (best, _MODEL_STYLE["best"])) if p in psets}
    models = dict(reversed(list(models.items())))  # best first in the legend

    fig, axes = plt.subplots(2, 2, figsize=(11, 9))
    for ax, ch in zip(axes.ravel(), CHARACTERISTICS):
        _panel(ax, points, ch, models, colors)
        inside = ", ".join(f"{_SET_LABELS.get(p, p).split(' (')[0]} {_inside_label(points, p, ch)}" for p in models)
        ax.set_title(f"{_TITLES[ch]}\ninside error bars: {inside}", fontsize=10)
    # the spring-constant panel is empty above the 4-row curve (which ends at 90 deg)
    axes[0, 1].legend(handles=_legend_handles(colors, models), loc="upper right", fontsize=8, framealpha=0.9)
    fig.suptitle("Closed FPU50 HSAs: measured (Good et al. 2022) vs simulated\n"
                 f"best fitted set: {_SET_LABELS.get(best, best)}, {_inside_label(points, best)} points inside "
                 f"the error bars; Table I: {_inside_label(points, 'table1')}", fontsize=10.5)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    with atomic_output(path) as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)
    written = [path]

    others = [p for p in psets if p not in models]
    if others:
        other_path = path.with_name(f"{path.stem}_other_sets{path.suffix}")
        fig, axes = plt.subplots(len(CHARACTERISTICS), len(others), figsize=(3.6 * len(others) + 1, 12),
                                 squeeze=False)
        for j, pset in enumerate(others):
            style = {pset: _MODEL_STYLE["best"]}
            for i, ch in enumerate(CHARACTERISTICS):
                ax = axes[i, j]
                _panel(ax, points, ch, style, colors)
                ax.set_title(f"{_TITLES[ch]}: {_inside_label(points, pset, ch)} inside", fontsize=9)
                if i == 0:
                    ax.annotate(_SET_LABELS.get(pset, pset), (0.5, 1.25), xycoords="axes fraction",
                                ha="center", fontsize=10.5, weight="bold")
        axes[1, 0].legend(handles=_legend_handles(colors, {"model": _MODEL_STYLE["best"]})[:-1]
                          + [plt.Line2D([], [], color="k", ls="--", marker="x", label="simulated")],
                          loc="upper right", fontsize=6.5, handlelength=1.6, labelspacing=0.3, framealpha=0.9)
        fig.suptitle("Other fitted parameter sets (measured with error bars; dashed: simulated)", fontsize=11)
        fig.tight_layout(rect=(0, 0, 1, 0.97))
        with atomic_output(other_path) as tmp:
            fig.savefig(tmp, dpi=90)
        plt.close(fig)
        written.append(other_path)
    return written


def _md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in df.itertuples(index=False):
        cells = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in r]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(
    points: pd.DataFrame,
    scores: pd.DataFrame,
    cf_scores: pd.DataFrame,
    rods: dict[str, dict[int, RodParams]],
    extra: str,
    path: Path,
    wall: float,
    laws: dict[str, dict[int, AxialLawParams]] | None = None,
    method: str = "static",
    cv: pd.DataFrame | None = None,
) -> None:
    """``results.md``: scores, parameters and ``extra`` notes; the cross-validation section of
    an existing ``path`` (written by ``python -m validation.characterization_cv``) is kept."""
    old = path.read_text() if path.is_file() else ""
    cv_section = old[old.index(BEGIN):old.index(END) + len(END)] + "\n" if BEGIN in old and END in old else ""
    best = best_parameter_set(scores, cv)
    best_line = (f"Best fitted set by the cross-validated score (leave one twist angle out; `cv_scores.csv`, "
                 f"`python -m validation.characterization_cv`): `{best}`." if cv is not None else
                 f"Best fitted set by the in-sample score (no `cv_scores.csv`: run `python -m "
                 f"validation.characterization_cv` first to choose by the cross-validated score): `{best}`.")
    overall = scores[scores["characteristic"] == "all"][["parameter_set", "n_points", "n_inside", "fraction_inside"]].copy()
    n_rows = points["rows"].nunique()
    overall["fitted parameters (all row counts)"] = [
        STRUCTURES[CHOSEN].n_parameters if p == "fitted_shared" else N_FITTED.get(p, 0) * n_rows
        for p in overall["parameter_set"]]
    bf = scores[(scores["characteristic"] == "blocked_force") & (scores["rows"] == "all")].set_index("parameter_set")["rmse"]
    overall["blocked-force RMSE [N]"] = [float(bf.get(p, float("nan"))) for p in overall["parameter_set"]]
    per_ch = scores[(scores["rows"] == "all") & (scores["characteristic"] != "all")]
    per_ch = per_ch[["parameter_set", "characteristic", "n_inside", "n_points", "fraction_inside", "rmse", "mean_error", "unit"]]
    detail = scores[(scores["rows"] != "all")]
    detail = detail[["parameter_set", "characteristic", "rows", "n_inside", "n_points", "rmse", "mean_error", "unit"]]
    prm = []
    laws = {} if laws is None else laws
    for pset, by_rows in rods.items():
        for rows, rod in by_rows.items():
            law = laws.get(pset, {}).get(rows, AxialLawParams())
            kmax = float(data_max_kappa(rod, points[points["rows"] == rows]))
            prm.append({"parameter_set": pset, "rows": rows, "C_eps [mm/rad]": rod.C_eps * 1e3,
                        "E0 [kPa]": rod.youngs_modulus * 1e-3, "E_slope [kPa m/rad]": rod.E_slope * 1e-3,
                        "C_eps2 [mm m/rad^2]": rod.C_eps2 * 1e3, "E_quad [kPa m^2/rad^2]": rod.E_quad * 1e-3,
                        "B_z [N m^2]": rod.B_z, "B_z_slope [N m^2 m/rad]": rod.twist_rigidity_slope,
                        "B_z_quad [N m^2 m^2/rad^2]": rod.twist_rigidity_quad,
                        "r_c(0) [-]": law.compression_ratio, "r_c slope [m/rad]": law.compression_ratio_slope,
                        "r_c at largest angle [-]": law.ratio(kmax)})
    agree = float(np.max(np.abs(points["simulated"] - points["closed_form"]) / np.maximum(np.abs(points["closed_form"]), 1e-9)))
    text = f"""# Validation against the measured closed-HSA characterization (Good et al. 2022)

Generated by `python -m validation.characterization {' '.join(sys.argv[1:])}` in {wall:.0f} s wall time
({len(points)} simulated points; data: `hsa_elastica/data/good2022_closed_fpu50.csv`, shipped with the package).
Experiments: `hsa_elastica/experiments/characterization.py` (Section II-C; 10 elements, rho = 1050 kg/m^3,
outer radius 19 mm, wall 2 mm; steady states by {"dynamic relaxation, each run stopped when settled" if method == "dynamic" else "the static solver of the same discrete model"}). "inside" means
`value - err_low <= simulated <= value + err_high`.

## Overall (simulator)
Blocked-force RMSE of the paper's model (Table I, this simulator): {float(bf.get("table1", float("nan"))):.3g} N.
Each row count has 16 (4 rows) to 28 (10, 12 rows) measured points (4 characteristics x 4-7 angles).
{best_line}
{_md_table(overall)}

## Per characteristic (simulator; RMSE and mean error = simulated - measured, data unit)
{_md_table(per_ch)}

## Closed forms of the same model (per characteristic)
Largest relative difference simulator vs closed form over all points: {agree:.2e}.
{_md_table(cf_scores[(cf_scores['rows'] == 'all')][['parameter_set', 'characteristic', 'n_inside', 'n_points', 'rmse', 'mean_error', 'unit']])}

## Parameters (SI-derived units)
{_md_table(pd.DataFrame(prm))}

{extra}

## Per characteristic and row count (simulator)
{_md_table(detail)}
"""
    write_text_atomic(path, text + ("\n" + cv_section if cv_section else ""))


def _paper_law_note(data: pd.DataFrame, rods: dict[str, dict[int, RodParams]]) -> tuple[str, pd.DataFrame]:
    """Closed-form check of the 'half twist strain' remark (Table I E slopes halved)."""
    half = {r: rod.replace(E_slope=0.5 * rod.E_slope) for r, rod in rods["table1"].items()}
    sets = {"table1": rods["table1"], "table1_half_E_slope": half, **({"fitted": rods["fitted"]} if "fitted" in rods else {})}
    cf_points = pd.concat(
        [_closed_form_points(data, pset, by_rows, column="cf") for pset, by_rows in sets.items()], ignore_index=True
    )
    sc = score(cf_points, column="cf")
    sel = sc[(sc["rows"] == "all") & sc["characteristic"].isin(["spring_constant", "blocked_force"])]
    ratio = ""
    if "fitted" in rods:
        ratio = "Fitted / Table I E_slope per row count: " + ", ".join(
            f"{r}: {rods['fitted'][r].E_slope / rods['table1'][r].E_slope:.2f}" for r in rods["fitted"]) + "."
    note = f"""## The 'half twist strain' of the paper's public code (closed forms)
Table I's E slopes were tuned with a stiffness law that saw half the twist strain; with this
package's consistent law (Eq. 5 driven by the same strain as the rest length) halving them is
the paper's model. Spring constant and blocked force, closed forms, all rows:
{_md_table(sel[['parameter_set', 'characteristic', 'n_inside', 'n_points', 'rmse', 'mean_error', 'unit']])}

{ratio}
"""
    return note + _consistency_note(data, rods["table1"]), cf_points


def _consistency_note(data: pd.DataFrame, table1: dict[int, RodParams]) -> str:
    """Data-only check: in this model F_b = sum-law of k and the free elongation.

    With a stiffness that depends on the twist only, the blocked force of a rod whose measured
    spring constant k and free length l are reproduced is ``F_b ~ k (l - L) l / L`` (uniform
    elements: ``F_b = E A eps``, ``k = E A / (L (1 + eps))``).  Comparing that with the measured
    F_b shows how far any twist-only law is from reproducing all three curves at once.
    """
    rows_out = []
    for rows, rod in table1.items():
        d = data[data["rows"] == rows].pivot_table(index="twist_angle_deg", columns="characteristic", values="value")
        if not {"spring_constant", "minimum_energy_length", "blocked_force"} <= set(d.columns):
            continue
        L_mm = rod.length * 1e3
        d = d[d.index > 0]
        implied = d["spring_constant"] * (d["minimum_energy_length"] - L_mm) * d["minimum_energy_length"] / L_mm
        for angle, fb in d["blocked_force"].items():
            rows_out.append({"rows": rows, "angle_deg": angle, "F_b measured [N]": fb,
                             "k (l - L) l/L from measured k, l [N]": float(implied[angle])})
    if not rows_out:
        return ""
    return (
        "## Why a twist-only stiffness law cannot put all four curves inside the bars\n"
        "With the measured spring constant and length, the model's blocked force is fixed to\n"
        "`F_b ~ k (l - L) l / L` (uniform elements: `F_b = E A eps`, `k = E A / (L (1 + eps))`).\n"
        "The measured blocked force differs from that by far more than its error bars (mostly\n"
        "below, growing with the angle: the real HSA is softer in compression; 12 rows at 180 deg:\n"
        "above), so the fit has to trade blocked force against spring constant / length. A\n"
        "strain-dependent axial law is needed; PyElastica's constitutive law is linear, so the\n"
        "optional `--law compression` adds a softer compression branch as a forcing (next section).\n\n"
        + _md_table(pd.DataFrame(rows_out)) + "\n"
    )


def _compression_note(
    scores: pd.DataFrame, rods: dict[str, dict[int, RodParams]], laws: dict[str, dict[int, AxialLawParams]]
) -> str:
    """Side-by-side per-characteristic scores of the linear and the compression-law fit."""
    psets = [p for p in N_FITTED if p in set(scores["parameter_set"])]
    sel = scores[(scores["rows"] == "all") & scores["parameter_set"].isin(psets)]
    wide = sel.pivot_table(index="characteristic", columns="parameter_set", values="n_inside", aggfunc="first")
    rm = sel.pivot_table(index="characteristic", columns="parameter_set", values="rmse", aggfunc="first")
    rows_out = []
    for ch in list(CHARACTERISTICS) + ["all"]:
        row: dict[str, Any] = {"characteristic": ch}
        for pset in psets:
            if pset in wide.columns:
                row[f"inside {pset}"] = int(wide.loc[ch, pset])
                if ch != "all":
                    row[f"RMSE {pset}"] = float(rm.loc[ch, pset])
        rows_out.append(row)
    return (
        "## Optional compression law (`--law compression`, hsa_elastica/axial_law.py)\n"
        "Elements compressed against their current rest length get the axial stiffness\n"
        "`r_c(kappa_h) S_zz` with `r_c = compression_ratio + compression_ratio_slope * kappa_h` in\n"
        "(0, 1] (tension unchanged); fitted together with `C_eps, E0, E_slope` (spring constant:\n"
        "pull only). Points inside the error bars and RMSE (data unit), simulator:\n\n"
        + _md_table(pd.DataFrame(rows_out)) + "\n" + (_NONLINEAR_NOTE if any("nonlinear" in p for p in psets) else "")
    )


_NONLINEAR_NOTE = """
## Optional quadratic twist laws (`--law nonlinear`, `--law nonlinear+compression`)
The paper's conclusion says the linear law only holds in a limited range.  Optional
`RodParams` fields (0 = the paper's linear model, bit-identical), with `k` the handed twist
strain clipped to `[eps_min, eps_max] / C_eps` [rad/m]:
`eps = clip(C_eps k + C_eps2 k^2, eps_min, eps_max)` (`C_eps2` [m^2/rad^2]),
`E = E0 + E_slope k + E_quad k^2` (`E_quad` [Pa m^2/rad^2]),
`B_z = B_z0 + B_z_slope k + B_z_quad k^2` (`twist_rigidity_quad` [N m^2 m^2/rad^2]).
Fitted like the linear law (two stages, Cauchy loss on error-bar-normalised residuals) with
the constraints that make them valid over the whole clipped range, not only the measured one:
rest length non-decreasing, `E` and `B_z` >= 5 % of their zero-twist value.  Fitted parameters
per row count: linear 5 (`C_eps, E0, E_slope, B_z, B_z_slope`), + compression 7, quadratic 8,
quadratic + compression 10, against 16-28 measured points per row count.
"""
