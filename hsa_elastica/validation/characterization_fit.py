"""Closed forms at the measured points, the least-squares fits and the scores of the closed-HSA
characterization.

The fitting routines of :mod:`hsa_elastica.validation.characterization` (paper Section II-C):
closed-form model values [data units] at the measured points, the per-row-count fits of the
linear law (:func:`fit_rod`), the linear law with the compression law
(:func:`fit_rod_compression`) and the optional quadratic twist laws (:func:`fit_rod_nonlinear`),
and the scores against the measured error bars (:func:`score`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from hsa_elastica.experiments.characterization import DATA_UNITS, closed_form, to_data_unit
from hsa_elastica.physics.compression_law import AxialLawParams, twist_range
from hsa_elastica.params import RodParams

#: smallest compression ratio the fit may use [-]
R_C_MIN = 0.05

#: fitted fields of RodParams (SI), in fit-vector order
FIT_FIELDS: tuple[str, ...] = ("C_eps", "youngs_modulus", "E_slope", "twist_rigidity", "twist_rigidity_slope")
#: additional fields of the optional quadratic twist laws (--law nonlinear)
NONLINEAR_FIELDS: tuple[str, ...] = ("C_eps2", "E_quad", "twist_rigidity_quad")


# --------------------------------------------------------------------------------------------
# closed-form evaluation and fit
# --------------------------------------------------------------------------------------------
def closed_form_values(rod: RodParams, data: pd.DataFrame, law: AxialLawParams | None = None) -> np.ndarray:
    """Closed-form model values [data units] at the data's points (one row count)."""
    return np.array(
        [
            to_data_unit(
                r.characteristic,
                closed_form(rod, r.characteristic, math.radians(r.twist_angle_deg), axial_law=law),
            )
            for r in data.itertuples()
        ]
    )


def _closed_form_points(
    data: pd.DataFrame,
    pset: str,
    by_rows: dict[int, RodParams],
    by_law: dict[int, AxialLawParams] | None = None,
    column: str = "closed_form",
) -> pd.DataFrame:
    """The data points of the row counts of ``by_rows``, labelled ``parameter_set = pset``,
    with the closed-form values [data units] of each row count's rod (and law) in ``column``."""
    by_law = {} if by_law is None else by_law
    d = data[data["rows"].isin(list(by_rows))].copy()
    d["parameter_set"] = pset
    d[column] = np.nan
    for rows, rod in by_rows.items():
        m = d["rows"] == rows
        d.loc[m, column] = closed_form_values(rod, d[m], by_law.get(rows))
    return d


def _with(rod: RodParams, x: np.ndarray, fields: tuple[str, ...]) -> RodParams:
    return rod.replace(**{f: float(v) for f, v in zip(fields, x)})


def _normalised_residuals(rod: RodParams, data: pd.DataFrame, law: AxialLawParams | None = None) -> np.ndarray:
    s = closed_form_values(rod, data, law)
    side = np.where(s > data["value"].to_numpy(), data["err_high"].to_numpy(), data["err_low"].to_numpy())
    # a zero-width bar would give an infinite weight: floor at 1e-3 of the curve's scale
    scale = data.groupby("characteristic")["value"].transform(lambda v: np.abs(v).max()).to_numpy()
    side = np.maximum(side, 1e-3 * scale)
    return (s - data["value"].to_numpy()) / side


def _inside(x0: np.ndarray, lo: np.ndarray, hi: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Start ``x0`` moved just inside the bounds ``[lo, hi]``, in units of ``scale``."""
    return np.clip(x0, lo + 1e-9 * np.abs(scale), hi - 1e-9 * np.abs(scale)) / scale


def _lowest_cost(res: Any, starts: list[np.ndarray], bounds: tuple[np.ndarray, np.ndarray], **kw: Any) -> Any:
    """``scipy.optimize.least_squares`` from each start; the result of lowest cost (first on ties)."""
    from scipy.optimize import least_squares

    best = None
    for z0 in starts:
        r = least_squares(res, z0, bounds=bounds, **kw)
        if best is None or r.cost < best.cost:
            best = r
    assert best is not None
    return best


def fit_rod(rod: RodParams, data: pd.DataFrame) -> tuple[RodParams, dict[str, Any]]:
    """Least-squares fit of ``FIT_FIELDS`` of ``rod`` to the measured points of one row count.

    Two stages, because the holding torque depends on the twist law only and the other three
    curves do not depend on it: (1) ``twist_rigidity, twist_rigidity_slope`` on the holding
    torque; (2) ``C_eps, youngs_modulus, E_slope`` on length, spring constant and blocked
    force.  Each stage starts from Table I and from Table I with half its slopes (the
    paper's public code saw half the twist strain) and keeps the lower cost: deterministic.
    Bounds keep every stiffness positive over the whole clipped strain range
    ``[0, eps_max / C_eps]`` (``RodParams`` validates this).
    """
    info: dict[str, Any] = {}
    c0, e0, b0 = rod.C_eps, rod.youngs_modulus, rod.B_z
    kmax_lo = rod.eps_max / (2.0 * c0)  # strain range bound for the smallest allowed C_eps (0.5 c0)
    stages = [
        (
            ("twist_rigidity", "twist_rigidity_slope"),
            data["characteristic"] == "holding_torque",
            np.array([b0, rod.twist_rigidity_slope]),
            np.array([b0, max(b0 / (rod.length / 10), 1e-12)]),  # scales
            (np.array([0.3 * b0, -0.25 * 0.3 * b0 / kmax_lo]), np.array([3.0 * b0, 3.0 * b0 * 10 / rod.length])),
        ),
        (
            ("C_eps", "youngs_modulus", "E_slope"),
            data["characteristic"] != "holding_torque",
            np.array([c0, e0, rod.E_slope]),
            np.array([c0, e0, e0 * rod.length / 10]),
            (np.array([0.5 * c0, 0.3 * e0, -0.25 * 0.3 * e0 / kmax_lo]), np.array([2.0 * c0, 3.0 * e0, 3.0 * e0 * 10 / rod.length])),
        ),
    ]
    current = rod
    for fields, mask, x_table, scale, (lo, hi) in stages:
        sub = data[mask]
        if sub.empty:
            continue
        starts = [x_table, x_table * np.array([1.0] * (len(fields) - 1) + [0.5])]

        def res(z: np.ndarray) -> np.ndarray:
            # called only within this iteration (by _lowest_cost below): the loop variables are current
            return _normalised_residuals(_with(current, z * scale, fields), sub)  # noqa: B023

        best = _lowest_cost(
            res, [_inside(x0, lo, hi, scale) for x0 in starts], (lo / scale, hi / scale),
            loss="cauchy", f_scale=1.0,
        )
        current = _with(current, best.x * scale, fields)
        info["/".join(fields)] = {"cost": float(best.cost), "nfev": int(best.nfev), "status": int(best.status)}
    return current, info


def law_from_ends(rod: RodParams, r0: float, r1: float) -> AxialLawParams:
    """``r_c`` linear in the handed twist strain from ``r0`` at 0 to ``r1`` at the end of the
    clipped range ``eps_max / C_eps`` [rad/m] (so ``r_c`` stays in (0, 1] on the whole range)."""
    kmax = twist_range(rod)[1]
    return AxialLawParams(compression_ratio=float(r0), compression_ratio_slope=float((r1 - r0) / kmax))


def fit_rod_compression(
    rod: RodParams, data: pd.DataFrame, linear: RodParams | None = None
) -> tuple[RodParams, AxialLawParams, dict[str, Any]]:
    """:func:`fit_rod` plus the compression law: stage 2 fits ``C_eps, youngs_modulus, E_slope``
    and ``r_c`` at zero twist / at ``eps_max / C_eps`` (both in ``[R_C_MIN, 1]``) together on
    length, spring constant (pull) and blocked force.  Starts: Table I (and half slope) with
    ``r_c = 1``, and the linear fit's axial fields with ``r_c = 0.7``; deterministic.
    """
    info: dict[str, Any] = {}
    if linear is None:
        linear, info = fit_rod(rod, data)
    sub = data[data["characteristic"] != "holding_torque"]
    c0, e0 = rod.C_eps, rod.youngs_modulus
    kmax_lo = rod.eps_max / (2.0 * c0)
    scale = np.array([c0, e0, e0 * rod.length / 10, 1.0, 1.0])
    lo = np.array([0.5 * c0, 0.3 * e0, -0.25 * 0.3 * e0 / kmax_lo, R_C_MIN, R_C_MIN])
    hi = np.array([2.0 * c0, 3.0 * e0, 3.0 * e0 * 10 / rod.length, 1.0, 1.0])

    def split(z: np.ndarray) -> tuple[RodParams, AxialLawParams]:
        x = z * scale
        r = linear.replace(C_eps=float(x[0]), youngs_modulus=float(x[1]), E_slope=float(x[2]))
        return r, law_from_ends(r, min(x[3], 1.0), min(x[4], 1.0))

    def res(z: np.ndarray) -> np.ndarray:
        r, law = split(z)
        return _normalised_residuals(r, sub, law)

    starts = [
        np.array([c0, e0, rod.E_slope, 1.0, 1.0]),
        np.array([c0, e0, 0.5 * rod.E_slope, 1.0, 1.0]),
        np.array([linear.C_eps, linear.youngs_modulus, linear.E_slope, 0.7, 0.7]),
        np.array([linear.C_eps, linear.youngs_modulus, linear.E_slope, 0.9, 0.3]),
    ]
    best = _lowest_cost(
        res, [_inside(x0, lo, hi, scale) for x0 in starts], (lo / scale, hi / scale),
        loss="cauchy", f_scale=1.0,
    )
    fitted, law = split(best.x)
    info["C_eps/youngs_modulus/E_slope/r_c"] = {"cost": float(best.cost), "nfev": int(best.nfev), "status": int(best.status)}
    return fitted, law, info


def _unchecked(rod: RodParams, **changes: float) -> RodParams:
    """Copy of ``rod`` with ``changes`` set WITHOUT validation (fit iterates only; the result of
    a fit is built with ``rod.replace``, which validates)."""
    import copy

    out = copy.copy(rod)
    for k, v in changes.items():
        object.__setattr__(out, k, float(v))
    return out


def _quad_min(c0: float, c1: float, c2: float, k_hi: float) -> float:
    """Minimum of ``c0 + c1 k + c2 k^2`` over ``[0, k_hi]``."""
    vals = [c0, c0 + c1 * k_hi + c2 * k_hi**2]
    if c2 > 0.0 and 0.0 < -c1 / (2.0 * c2) < k_hi:
        k = -c1 / (2.0 * c2)
        vals.append(c0 + c1 * k + c2 * k**2)
    return min(vals)


def _cauchy(r: np.ndarray) -> np.ndarray:
    """Residuals whose squares sum to the Cauchy cost ``sum log(1 + r^2)`` (f_scale = 1), so that
    penalty terms can be added without passing through the robust loss."""
    return np.sign(r) * np.sqrt(np.log1p(r * r))


#: margin of the constraints of the nonlinear fit (fraction of the zero-twist value) and the
#: weight of their penalty residual
_MARGIN, _PENALTY = 0.05, 100.0


def fit_rod_nonlinear(
    rod: RodParams, data: pd.DataFrame, linear: RodParams, compression: bool = False
) -> tuple[RodParams, AxialLawParams | None, dict[str, Any]]:
    """Fit of the optional quadratic twist laws (``C_eps2``, ``E_quad``, ``twist_rigidity_quad``)
    per row count, optionally with the compression law (``r_c`` at both ends of the range).

    Same two stages as :func:`fit_rod` (holding torque: ``B_z, B_z_slope, B_z_quad``; the other
    three curves: ``C_eps, C_eps2, E0, E_slope, E_quad`` [+ ``r_c(0), r_c(kmax)``]), Cauchy-loss
    residuals normalised by the error bar.  Constraints over the whole clipped twist range
    ``[0, eps_max / C_eps]`` (not only the measured one): rest-length law non-decreasing
    (``C_eps2 >= -C_eps^2 / (2 eps_max)``, a bound on the scaled variable) and ``E``, ``B_z`` at
    least ``_MARGIN`` of their zero-twist value (penalty residuals), so ``RodParams`` accepts
    the result.  Starts: Table I (and half E slope) and the linear fit, quadratic terms 0,
    ``r_c`` 1 / 0.7 / (0.9, 0.3); the lowest cost wins (deterministic).
    """
    info: dict[str, Any] = {}
    L = rod.length
    ks = 10.0 / L  # twist-strain scale [rad/m] (~ 1 rad over the rod)
    # stage 1: twist rigidity, quadratic in the twist strain
    hd = data[data["characteristic"] == "holding_torque"]
    b0 = rod.B_z
    bscale = np.array([b0, b0 / ks, b0 / ks**2])
    k_hi_b = rod.eps_max / (0.5 * rod.C_eps)  # largest range stage 2 may give (C_eps >= 0.5 c0)

    def res_b(z: np.ndarray) -> np.ndarray:
        x = z * bscale
        r = _unchecked(linear, twist_rigidity=x[0], twist_rigidity_slope=x[1], twist_rigidity_quad=x[2])
        m = _quad_min(x[0], x[1], x[2], k_hi_b)
        pen = _PENALTY * max(0.0, (_MARGIN * x[0] - m) / b0)
        return np.r_[_cauchy(_normalised_residuals(r, hd)), pen]

    starts_b = [np.array([b0, 0.0, 0.0]), np.array([linear.B_z, linear.twist_rigidity_slope, 0.0])]
    best = _lowest_cost(
        res_b, [x0 / bscale for x0 in starts_b],
        (np.array([0.3, -np.inf, -np.inf]), np.array([3.0, np.inf, np.inf])),
    )
    xb = best.x * bscale
    info["B_z/B_z_slope/B_z_quad"] = {"cost": float(best.cost), "nfev": int(best.nfev)}

    # stage 2: rest length and Young's modulus (+ compression ratio)
    sub = data[data["characteristic"] != "holding_torque"]
    c0, e0 = rod.C_eps, rod.youngs_modulus
    names = ("C_eps", "u", "youngs_modulus", "E_slope", "E_quad")
    scale = np.array([c0, 1.0, e0, e0 / ks, e0 / ks**2] + ([1.0, 1.0] if compression else []))
    lo = np.array([0.5 * c0, -1.0, 0.3 * e0, -np.inf, -np.inf] + ([R_C_MIN, R_C_MIN] if compression else []))
    hi = np.array([2.0 * c0, np.inf, 3.0 * e0, np.inf, np.inf] + ([1.0, 1.0] if compression else []))

    def split(z: np.ndarray) -> tuple[RodParams, AxialLawParams | None, float]:
        """Unchecked rod (fit iterates), compression law, constraint penalty of scaled ``z``."""
        x = z * scale
        c = x[0]
        kmax = rod.eps_max / c
        # u = -1: d eps/d k = 0 at the end of the range (monotone limit)
        fields = dict(C_eps=c, C_eps2=x[1] * c * c / (2.0 * rod.eps_max), youngs_modulus=x[2], E_slope=x[3], E_quad=x[4])
        r = _unchecked(linear, **fields)
        law = law_from_ends(r, min(x[5], 1.0), min(x[6], 1.0)) if compression else None
        pen = _PENALTY * max(0.0, (_MARGIN * x[2] - _quad_min(x[2], x[3], x[4], kmax)) / e0)
        return r, law, pen

    def res(z: np.ndarray) -> np.ndarray:
        r, law, pen = split(z)
        return np.r_[_cauchy(_normalised_residuals(r, sub, law)), pen]

    u_lin = 0.0
    starts = []
    for c, e, es in ((c0, e0, rod.E_slope), (c0, e0, 0.5 * rod.E_slope), (linear.C_eps, linear.youngs_modulus, linear.E_slope)):
        base = [c, u_lin, e, es, 0.0]
        if compression:
            starts += [np.array(base + [1.0, 1.0]), np.array(base + [0.7, 0.7]), np.array(base + [0.9, 0.3])]
        else:
            starts.append(np.array(base))
    best = _lowest_cost(res, [_inside(x0, lo, hi, scale) for x0 in starts], (lo / scale, hi / scale))
    info["/".join(names) + ("/r_c" if compression else "")] = {"cost": float(best.cost), "nfev": int(best.nfev)}
    fitted, law, _ = split(best.x)
    fitted = linear.replace(
        C_eps=fitted.C_eps, C_eps2=fitted.C_eps2, youngs_modulus=fitted.youngs_modulus,
        E_slope=fitted.E_slope, E_quad=fitted.E_quad,
        twist_rigidity=float(xb[0]), twist_rigidity_slope=float(xb[1]), twist_rigidity_quad=float(xb[2]),
    )  # validated
    return fitted, law, info


# --------------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------------
#: fitted parameters per row count of each parameter set
N_FITTED: dict[str, int] = {
    "table1": 0, "fitted": 5, "fitted_compression": 7, "fitted_nonlinear": 8,
    "fitted_nonlinear_compression": 10,
}


def inside_error_bar(df: pd.DataFrame, column: str = "simulated") -> pd.Series:
    """``value - err_low <= simulated <= value + err_high`` (data README definition)."""
    return (df[column] >= df["value"] - df["err_low"]) & (df[column] <= df["value"] + df["err_high"])


def score(points: pd.DataFrame, column: str = "simulated") -> pd.DataFrame:
    """RMSE [data unit], mean error (bias) and fraction inside the error bars.

    One row per (parameter_set, characteristic, rows), plus ``rows = "all"`` per characteristic
    and ``characteristic = "all"`` per parameter set (fraction only; RMSE mixes units there).
    """
    d = points.assign(
        err=points[column] - points["value"], inside=inside_error_bar(points, column)
    )
    out = []
    for (pset, ch, rows), g in d.groupby(["parameter_set", "characteristic", "rows"], sort=False):
        out.append(_score_row(pset, ch, str(rows), g))
    for (pset, ch), g in d.groupby(["parameter_set", "characteristic"], sort=False):
        out.append(_score_row(pset, ch, "all", g))
    for pset, g in d.groupby("parameter_set", sort=False):
        row = _score_row(pset, "all", "all", g)
        row["rmse"] = float("nan")
        row["mean_error"] = float("nan")
        row["unit"] = ""
        out.append(row)
    return pd.DataFrame(out)


def _score_row(pset: str, ch: str, rows: str, g: pd.DataFrame) -> dict[str, Any]:
    return {
        "parameter_set": pset,
        "characteristic": ch,
        "rows": rows,
        "n_points": len(g),
        "n_inside": int(g["inside"].sum()),
        "fraction_inside": float(g["inside"].mean()),
        "rmse": float(np.sqrt(np.mean(g["err"] ** 2))),
        "mean_error": float(g["err"].mean()),
        "unit": DATA_UNITS[ch][0] if ch in DATA_UNITS else "",
    }


def best_parameter_set(scores: pd.DataFrame, cv: pd.DataFrame | None = None) -> str:
    """The fitted parameter set of ``scores`` that predicts best.

    With ``cv`` (the per-set totals of :mod:`hsa_elastica.validation.characterization_cv`,
    ``cv_scores.csv``): the most points inside the error bars when one twist angle is left out
    (``inside_loao``; ties: ``inside_loro``, then fewer parameters); the chosen shared
    structure's row stands for ``fitted_shared``.  Without: the largest in-sample fraction
    (what the fits reproduce, not what they predict)."""
    from hsa_elastica.validation.characterization_shared import CHOSEN

    fitted = scores[scores["parameter_set"] != "table1"]
    if fitted.empty:
        return "table1"
    present = set(fitted["parameter_set"])
    if cv is not None:
        c = cv.assign(parameter_set=cv["parameter_set"].replace({CHOSEN: "fitted_shared"}))
        c = c[c["parameter_set"].isin(present)]
        if not c.empty:
            c = c.assign(neg=-c["n_parameters"])
            c = c.sort_values(["inside_loao", "inside_loro", "neg"], ascending=False, kind="stable")
            return str(c["parameter_set"].iloc[0])
    totals = fitted.groupby("parameter_set")[["n_inside", "n_points"]].sum()
    return str((totals["n_inside"] / totals["n_points"]).idxmax())


def data_max_kappa(rod: RodParams, points: pd.DataFrame) -> float:
    """Handed twist strain [rad/m] of the largest measured angle (uniform twist, Voronoi)."""
    phi = math.radians(float(points["twist_angle_deg"].max())) if len(points) else 0.0
    return phi / ((rod.n_elements - 1) * rod.length / rod.n_elements)
