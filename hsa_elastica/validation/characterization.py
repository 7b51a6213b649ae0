"""Validation against the measured closed-HSA characterization (paper Section II-C, Fig. 3).

Runs the four virtual experiments of :mod:`hsa_elastica.experiments.characterization` at every measured
point of ``hsa_elastica/data/good2022_closed_fpu50.csv`` (shipped with the package) (4-12 rows, 120 points) with the Table I
rods and, with ``--fit``, with parameters fitted per row count, and writes

* ``<out>/characterization_points.csv`` -- the data columns plus ``simulated`` (data unit),
  ``closed_form`` (the model's closed form, data unit) and ``parameter_set``;
* ``<results>/scores.csv`` and ``<results>/results.md`` -- per parameter set, characteristic and
  row count: RMSE in the data unit and the fraction of points inside the error bars (printed);
* ``<results>/fig3_characterization.png`` -- one panel per characteristic: measured (solid,
  error bars) vs the best fitted parameter set (dashed) and Table I (dotted);
  ``<results>/fig3_characterization_other_sets.png`` -- the other fitted sets (``--fit``, ``--law``);
* with ``--fit``: ``fitted_params*.yaml`` (the fitted rods, SI units) in ``--fitted-dir``
  (default ``<results>``; the shipped copies are ``hsa_elastica/data/fitted_params*.yaml``).

Usage::

    python -m hsa_elastica.validation.characterization [--rows 4 6 ...] [--fit]
                                          [--law linear|compression|nonlinear|nonlinear+compression]
                                          [--jobs 2] [--method static|dynamic]
                                          [--results DIR]
    python -m hsa_elastica.validation.characterization --replot validation_results/out/characterization_points.csv

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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hsa_elastica.experiments.characterization import (
    CHARACTERISTICS,
    DATA_UNITS,
    closed_form,
    load_characterization_data,
    simulate_point,
    to_data_unit,
)
from hsa_elastica.physics.compression_law import AxialLawParams, twist_range
from hsa_elastica.data import path as data_path
from hsa_elastica.params import RodParams, table1_rod_params

#: the shipped fitted rods (package data, ``hsa_elastica/data``; rewritten by ``--fit`` with
#: ``--fitted-dir hsa_elastica/data`` from a source checkout)
FITTED_PARAMS = data_path("fitted_params.yaml")
FITTED_COMPRESSION = data_path("fitted_params_compression.yaml")
FITTED_NONLINEAR = data_path("fitted_params_nonlinear.yaml")
FITTED_NONLINEAR_COMPRESSION = data_path("fitted_params_nonlinear_compression.yaml")
#: default output directory (relative to the current directory)
DEFAULT_RESULTS = Path("validation_results")
#: --law choices: which parameter sets are fitted / simulated besides table1 and fitted
LAW_SETS: dict[str, tuple[str, ...]] = {
    "linear": (),
    "compression": ("fitted_compression",),
    "nonlinear": ("fitted_nonlinear",),
    "nonlinear+compression": ("fitted_compression", "fitted_nonlinear", "fitted_nonlinear_compression"),
}
#: fitted parameters per row count of each parameter set (for the report)
N_FITTED: dict[str, int] = {
    "table1": 0, "fitted": 5, "fitted_compression": 7, "fitted_nonlinear": 8,
    "fitted_nonlinear_compression": 10,
}
#: smallest compression ratio the fit may use [-]
R_C_MIN = 0.05
ROWS = (4, 6, 8, 10, 12)

#: fitted fields of RodParams (SI), in fit-vector order
FIT_FIELDS: tuple[str, ...] = ("C_eps", "youngs_modulus", "E_slope", "twist_rigidity", "twist_rigidity_slope")
#: additional fields of the optional quadratic twist laws (--law nonlinear)
NONLINEAR_FIELDS: tuple[str, ...] = ("C_eps2", "E_quad", "twist_rigidity_quad")


# --------------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------------
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
            return _normalised_residuals(_with(current, z * scale, fields), sub)

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
}
#: line style of a model curve: the best parameter set and Table I in the main figure
_MODEL_STYLE = {"best": ("--", "x"), "table1": (":", "^")}


def best_parameter_set(scores: pd.DataFrame) -> str:
    """The fitted parameter set with the largest fraction of points inside the error bars."""
    fitted = scores[scores["parameter_set"] != "table1"]
    if fitted.empty:
        return "table1"
    totals = fitted.groupby("parameter_set")[["n_inside", "n_points"]].sum()
    return str((totals["n_inside"] / totals["n_points"]).idxmax())


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


def plot_fig3(points: pd.DataFrame, path: Path) -> list[Path]:
    """Fig. 3 of the paper from the simulated points (PNG), and the other parameter sets.

    ``path``: one panel per characteristic, measured (Good et al. 2022, error bars) vs the best
    fitted parameter set and Table I; each panel title gives the points inside the error bars.
    ``<path stem>_other_sets.png``: the remaining fitted sets, one column per set.
    Returns the paths written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows_all = [int(r) for r in sorted(points["rows"].unique())]
    cmap = plt.get_cmap("plasma")
    colors = {r: cmap(0.85 * i / max(1, len(rows_all) - 1)) for i, r in enumerate(rows_all)}
    best = best_parameter_set(score(points))
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
    fig.savefig(path, dpi=100)
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
        fig.savefig(other_path, dpi=90)
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
) -> None:
    overall = scores[scores["characteristic"] == "all"][["parameter_set", "n_points", "n_inside", "fraction_inside"]].copy()
    overall["fitted parameters per row count"] = [N_FITTED.get(p, 0) for p in overall["parameter_set"]]
    overall["points per row count"] = "16-28"
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

Generated by `python -m hsa_elastica.validation.characterization {' '.join(sys.argv[1:])}` in {wall:.0f} s wall time
({len(points)} simulated points; data: `hsa_elastica/data/good2022_closed_fpu50.csv`, shipped with the package).
Experiments: `hsa_elastica/experiments/characterization.py` (Section II-C; 10 elements, rho = 1050 kg/m^3,
outer radius 19 mm, wall 2 mm; steady states by {"dynamic relaxation, each run stopped when settled" if method == "dynamic" else "the static solver of the same discrete model"}). "inside" means
`value - err_low <= simulated <= value + err_high`.

## Overall (simulator)
Blocked-force RMSE of the paper's model (Table I, this simulator): {float(bf.get("table1", float("nan"))):.3g} N.
Each row count has 16 (4 rows) to 28 (10, 12 rows) measured points (4 characteristics x 4-7 angles).
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
    path.write_text(text)


def data_max_kappa(rod: RodParams, points: pd.DataFrame) -> float:
    """Handed twist strain [rad/m] of the largest measured angle (uniform twist, Voronoi)."""
    phi = math.radians(float(points["twist_angle_deg"].max())) if len(points) else 0.0
    return phi / ((rod.n_elements - 1) * rod.length / rod.n_elements)


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


# --------------------------------------------------------------------------------------------
# command
# --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.characterization", description=__doc__.split("\n\n")[0])
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
    ap.add_argument("--out", type=Path, default=None, help="directory of the points CSV (default: RESULTS/out)")
    ap.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="directory of scores.csv, "
                    "results.md and the figures (default: ./validation_results)")
    ap.add_argument("--fitted-dir", type=Path, default=None, help="where --fit writes fitted_params*.yaml, and "
                    "where the other fitted sets of --law are read without --fit (default: RESULTS with --fit, "
                    "the shipped files in hsa_elastica/data without)")
    ap.add_argument("--data", type=Path, default=None, help="characterization CSV (default: the copy shipped in hsa_elastica/data)")
    ap.add_argument("--replot", type=Path, default=None, metavar="POINTS_CSV",
                    help="only redraw the figures from a characterization_points.csv written by an earlier run")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = args.results / "out"
    if args.jobs is None:
        args.jobs = 1 if args.method == "static" else (os.cpu_count() or 1)

    if args.replot is not None:
        args.results.mkdir(parents=True, exist_ok=True)
        figures = plot_fig3(pd.read_csv(args.replot), args.results / "fig3_characterization.png")
        print("wrote " + ", ".join(str(f) for f in figures))
        return 0

    t_start = time.perf_counter()
    data = load_characterization_data(args.data)
    data = data[data["rows"].isin(args.rows)].reset_index(drop=True)
    rods: dict[str, dict[int, RodParams]] = {"table1": {r: table1_rod_params(r) for r in args.rows}}
    laws: dict[str, dict[int, AxialLawParams]] = {}

    if args.fit:
        fitted = {}
        for r in args.rows:
            rod, info = fit_rod(rods["table1"][r], data[data["rows"] == r])
            fitted[r] = rod
            print(f"fit {r:2d} rows: " + ", ".join(f"{f}={getattr(rod, f):.5g}" for f in FIT_FIELDS) + f"  {info}")
        rods["fitted"] = fitted
        fitted_dir = args.fitted_dir if args.fitted_dir is not None else args.results
        fitted_dir.mkdir(parents=True, exist_ok=True)
        _save_fitted(fitted, fitted_dir / FITTED_PARAMS.name)
        sets = LAW_SETS[args.law]
        if "fitted_compression" in sets:
            rods["fitted_compression"], laws["fitted_compression"] = {}, {}
            for r in args.rows:
                rod, law, info = fit_rod_compression(rods["table1"][r], data[data["rows"] == r], fitted[r])
                rods["fitted_compression"][r], laws["fitted_compression"][r] = rod, law
                print(f"fit {r:2d} rows + compression: " + ", ".join(f"{f}={getattr(rod, f):.5g}" for f in FIT_FIELDS)
                      + f", {law}  {info}")
            _save_fitted_compression(rods["fitted_compression"], laws["fitted_compression"],
                                     fitted_dir / FITTED_COMPRESSION.name)
        for pset, comp, path in (("fitted_nonlinear", False, FITTED_NONLINEAR),
                                 ("fitted_nonlinear_compression", True, FITTED_NONLINEAR_COMPRESSION)):
            if pset not in sets:
                continue
            rods[pset] = {}
            if comp:
                laws[pset] = {}
            for r in args.rows:
                rod, nl_law, info = fit_rod_nonlinear(rods["table1"][r], data[data["rows"] == r], fitted[r], comp)
                rods[pset][r] = rod
                if nl_law is not None:
                    laws[pset][r] = nl_law
                print(f"fit {r:2d} rows {pset}: " + ", ".join(f"{f}={getattr(rod, f):.5g}" for f in FIT_FIELDS + NONLINEAR_FIELDS)
                      + (f", {nl_law}" if nl_law is not None else "") + f"  {info}")
            if comp:
                _save_fitted_compression(rods[pset], laws[pset], fitted_dir / path.name)
            else:
                _save_fitted(rods[pset], fitted_dir / path.name)
    else:
        if args.fitted is not None:
            rods["fitted"] = {r: rod for r, rod in load_fitted(args.fitted).items() if r in args.rows}
        folder = (args.fitted.parent if args.fitted is not None else
                  args.fitted_dir if args.fitted_dir is not None else FITTED_PARAMS.parent)
        for pset in LAW_SETS[args.law]:
            name = {"fitted_compression": FITTED_COMPRESSION, "fitted_nonlinear": FITTED_NONLINEAR,
                    "fitted_nonlinear_compression": FITTED_NONLINEAR_COMPRESSION}[pset].name
            if pset == "fitted_nonlinear":
                rods[pset] = {r: rod for r, rod in load_fitted(folder / name).items() if r in args.rows}
                continue
            both = load_fitted_compression(folder / name)
            rods[pset] = {r: v[0] for r, v in both.items() if r in args.rows}
            laws[pset] = {r: v[1] for r, v in both.items() if r in args.rows}

    points = simulate_all(data, rods, max(1, args.jobs), laws, method=args.method)
    wall = time.perf_counter() - t_start
    scores = score(points)
    cf_scores = score(points, column="closed_form")
    note, _ = _paper_law_note(data, rods)

    args.out.mkdir(parents=True, exist_ok=True)
    args.results.mkdir(parents=True, exist_ok=True)
    cols = list(data.columns) + ["simulated", "parameter_set", "closed_form", "run_time_s"]
    points[cols].to_csv(args.out / "characterization_points.csv", index=False)
    scores.to_csv(args.results / "scores.csv", index=False, float_format="%.6g")
    figures = plot_fig3(points, args.results / "fig3_characterization.png")
    if laws or any(p.startswith("fitted_nonlinear") for p in rods):
        note += "\n" + _compression_note(scores, rods, laws)
    write_report(points, scores, cf_scores, rods, note, args.results / "results.md", wall, laws,
                 args.method)

    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(scores.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(note)
    print(f"{len(points)} points in {wall:.1f} s wall ({points['run_time_s'].sum():.1f} s of runs, "
          f"{args.jobs} jobs); wrote {args.out / 'characterization_points.csv'}, {args.results / 'scores.csv'}, "
          f"{args.results / 'results.md'}, " + ", ".join(str(f) for f in figures))
    return 0


def _save_fitted(fitted: dict[int, RodParams], path: Path) -> None:
    """One YAML per row count is what ``params.save_params`` writes; we keep one file with a
    mapping ``rows -> RodParams fields`` (SI units, header comment)."""
    import yaml

    body = {int(r): rod.to_dict() for r, rod in fitted.items()}
    header = ("# Fitted closed-HSA characterization rods per row count (python -m hsa_elastica.validation.characterization --fit)\n"
              "# RodParams fields, SI units: m, kg/m^3, Pa, N m^2, m/rad (C_eps), Pa m/rad (E_slope),\n"
              "# N m^2 m/rad (twist_rigidity_slope). Fitted: " + ", ".join(FIT_FIELDS) + "; the rest is Table I.\n")
    path.write_text(header + yaml.safe_dump(body, sort_keys=True))


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
    path.write_text(header + yaml.safe_dump(body, sort_keys=True))


def load_fitted_compression(path: Path = FITTED_COMPRESSION) -> dict[int, tuple[RodParams, AxialLawParams]]:
    """Read ``fitted_params_compression.yaml`` into ``{rows: (RodParams, AxialLawParams)}``."""
    import yaml

    raw = yaml.safe_load(Path(path).read_text())
    return {
        int(r): (RodParams.from_dict(d["rod"], where=f"{path}:{r}"), AxialLawParams.from_dict(d["axial_law"]))
        for r, d in raw.items()
    }


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


def load_fitted(path: Path = FITTED_PARAMS) -> dict[int, RodParams]:
    """Read ``fitted_params.yaml`` back into ``{rows: RodParams}`` (validated)."""
    import yaml

    raw = yaml.safe_load(Path(path).read_text())
    return {int(r): RodParams.from_dict(d, where=f"{path}:{r}") for r, d in raw.items()}


if __name__ == "__main__":
    sys.exit(main())
