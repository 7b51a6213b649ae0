"""Calibration of robot parameters against motion-capture time series.

The steady-state calibration (:mod:`hsa_elastica.experiments.calibration`) compares settled
poses; a time constant, such as the creep law's ``creep_time``, shows only in time.  Here the
model of a parameter vector is the replay of every given run on the implicit integrator
(:func:`hsa_elastica.experiments.timeseries.simulate`: the logged motor angles in, linear
between rows, after ``settle`` seconds at the first row's angles), and the residuals are those
of the steady-state calibration at the logged rows::

    r_pos = (p_sim - p_meas) / 1 mm          r_rot = rotvec(R_meas^T R_sim) / 1 deg

(6 per row; with ``every = k`` only every k-th row enters the objective: the replay still
steps through every logged interval, so this shortens the residual vector, not the
simulation).  ``scipy.optimize.least_squares`` (trust-region reflective, bounds) minimises
them over the free parameters, with a forward-difference Jacobian of whole replays (one replay
of every run per free parameter and iteration) on the scaled variables of the steady-state
calibration.  Uncertainties as there (``s^2 (J^T J)^-1``); neighbouring rows of a time series
are strongly correlated, so they are lower bounds.

The free parameters come from a small set, :data:`TIMESERIES_NAMES`: the creep law's
``rod.creep_fraction`` [-] and ``rod.creep_time`` [s] and the parameters the steady-state
calibration of the real robot fits.  With ``creep_fraction = 0`` the creep law is off
whatever ``creep_time`` is (the fitted parameters then carry ``creep_time = 0``).
"""

from __future__ import annotations

import math
import time as _time
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.experiments.calibration import (
    ANGLE_WEIGHT,
    POSITION_WEIGHT,
    CalibrationResult,
    _rotz,
    _scale,
    check_bounds,
)
from hsa_elastica.experiments.mocap import CalibrationError
from hsa_elastica.experiments.parameter_names import MOCAP_NAMES, get_value, with_values
from hsa_elastica.experiments.timeseries import MeasuredSeries, check_replay_step, simulate
from hsa_elastica.params import RobotParams

__all__ = ["TIMESERIES_NAMES", "CREEP_NAMES", "DEFAULT_TIMESERIES_DT", "DEFAULT_SETTLE_S",
           "check_timeseries_names", "timeseries_bounds", "start_values", "timeseries_residuals",
           "calibrate_timeseries"]

#: the creep law's parameters (``RodParams``: fraction in [0, 1], time in (0, 1e5] s)
CREEP_NAMES = ("rod.creep_fraction", "rod.creep_time")
_CREEP_RANGE = {"rod.creep_fraction": (0.0, 1.0), "rod.creep_time": (0.0, 1e5)}
#: the parameters a time-series calibration may free
TIMESERIES_NAMES = (
    *CREEP_NAMES, "rod.C_eps", "rod.cap_length_top", "rod.bend_rigidity", "rod.twist_rigidity",
    "platform.marker_offset.x", "platform.marker_offset.y", "platform.marker_offset.z", "mocap.yaw",
)
#: step of the implicit integrator in a fit [s]: a 10-minute run is 30 000 steps.  Replaying
#: the elongation run with creep at 0.02 s and at 2e-3 s gives position RMS within 0.01 mm
#: (``validation/real_robot_timeseries_fit.md``)
DEFAULT_TIMESERIES_DT = 0.02
#: seconds at the first row's angles before a replay starts (validation/real_robot_timeseries.md)
DEFAULT_SETTLE_S = 2.0


def check_timeseries_names(params: RobotParams, names: Sequence[str],
                           creep_time: float | None = None) -> None:
    """Refuse (:class:`CalibrationError`, one line) a name outside :data:`TIMESERIES_NAMES`, a
    repeated one, and a creep law that could not be on: ``rod.creep_time`` free from 0, or
    ``rod.creep_fraction`` free while ``creep_time`` is 0 and fixed (``creep_time``: its start
    value [s], default that of ``params``)."""
    if not names:
        raise CalibrationError("no free parameter given")
    seen: set[str] = set()
    for n in names:
        if n not in TIMESERIES_NAMES:
            raise CalibrationError(
                f"parameter {n!r} cannot be fitted to a time series: allowed "
                f"{', '.join(TIMESERIES_NAMES)}"
            )
        if n in seen:
            raise CalibrationError(f"parameter {n!r} given twice")
        seen.add(n)
    tau = params.rod.creep_time if creep_time is None else creep_time
    if "rod.creep_time" in seen and tau <= 0.0:
        raise CalibrationError(
            "rod.creep_time starts at 0 (creep off): give a start value in (0, 100000] s "
            "(--start rod.creep_time TAU)"
        )
    if "rod.creep_fraction" in seen and tau <= 0.0:
        raise CalibrationError(
            "rod.creep_fraction needs rod.creep_time > 0: free it with a start value or set it "
            "(--start rod.creep_time TAU)"
        )


def timeseries_bounds(params: RobotParams, names: Sequence[str],
                      bounds: dict[str, tuple[float, float]] | None,
                      creep: dict[str, float] | None = None) -> list[tuple[float, float]]:
    """Bounds of each free parameter: the creep law's given bounds must lie in the field's
    range (``creep_fraction`` [0, 1], ``creep_time`` (0, 1e5] s) and contain the start; their
    defaults are [0, 1] and ``[start/10, min(10 start, 1e5)]`` (``creep``: their start
    values, default those of ``params``).  The others as
    :func:`~hsa_elastica.experiments.calibration.check_bounds`."""
    bounds = dict(bounds or {})
    unknown = [n for n in bounds if n not in names]
    if unknown:
        raise CalibrationError(f"bounds given for parameter(s) not free: {', '.join(unknown)}")
    others = [n for n in names if n not in CREEP_NAMES]
    plain = dict(zip(others, check_bounds(params, others, {n: bounds[n] for n in others if n in bounds})))
    out = []
    for n in names:
        if n not in CREEP_NAMES:
            out.append(plain[n])
            continue
        x0 = float((creep or {}).get(n, get_value(params, n)))
        f_lo, f_hi = _CREEP_RANGE[n]
        if n in bounds:
            lo, hi = (float(v) for v in bounds[n])
        elif n == "rod.creep_fraction":
            lo, hi = f_lo, f_hi
        else:
            lo, hi = x0 / 10.0, min(10.0 * x0, f_hi)
        closed = n == "rod.creep_fraction"
        inside = (f_lo <= lo if closed else f_lo < lo) and hi <= f_hi
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi and inside and lo <= x0 <= hi):
            rng = f"[{f_lo:g}, {f_hi:g}]" if closed else f"({f_lo:g}, {f_hi:g}] s"
            raise CalibrationError(
                f"bounds of {n}: [{lo:g}, {hi:g}] are invalid: must satisfy lower < upper, lie "
                f"in {rng} and contain the start value {x0:g}"
            )
        out.append((lo, hi))
    return out


def _with_values(params: RobotParams, values: dict[str, float]) -> RobotParams:
    """``params`` with ``values`` set; the creep law off (both fields 0) at ``creep_fraction
    = 0``."""
    creep = {n: values[n] for n in CREEP_NAMES if n in values}
    params = with_values(params, {n: v for n, v in values.items() if n not in CREEP_NAMES})
    if not creep:
        return params
    c = float(creep.get("rod.creep_fraction", params.rod.creep_fraction))
    tau = float(creep.get("rod.creep_time", params.rod.creep_time))
    return params.replace(rod=params.rod.replace(creep_fraction=c, creep_time=tau if c > 0.0 else 0.0))


def _weighted(series: MeasuredSeries, rows: NDArray[np.int64], pos: NDArray[np.float64],
              rot: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy.spatial.transform import Rotation

    dp = pos[rows] - series.position[rows]
    dr = (Rotation.from_quat(series.quaternion[rows]).inv() * Rotation.from_matrix(rot[rows])).as_rotvec()
    return np.hstack([dp / POSITION_WEIGHT, dr / ANGLE_WEIGHT]).ravel()


def _rows(series: MeasuredSeries, every: int) -> NDArray[np.int64]:
    return np.arange(0, len(series), every, dtype=np.int64)


def timeseries_residuals(params: RobotParams, series: Sequence[MeasuredSeries], *,
                         dt: float = DEFAULT_TIMESERIES_DT, settle: float = DEFAULT_SETTLE_S,
                         every: int = 1, yaw: float = 0.0) -> NDArray[np.float64]:
    """Weighted residual vector of the replays (6 per objective row, see the module doc)."""
    out = []
    rz = _rotz(yaw)
    for s in series:
        sim = simulate(params, s, dt=dt, settle=settle)
        pos = sim.position @ rz.T
        rot = np.einsum("ij,njk->nik", rz, sim.rotation)
        out.append(_weighted(s, _rows(s, every), pos, rot))
    return np.concatenate(out)


def _run_rms(r: NDArray[np.float64], series: Sequence[MeasuredSeries],
             every: int) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    i = 0
    for s in series:
        m = len(_rows(s, every))
        block = r[i:i + 6 * m].reshape(m, 6)
        i += 6 * m
        out[s.name] = (float(np.sqrt(np.mean(np.sum(block[:, :3] ** 2, axis=1)))),
                       float(np.sqrt(np.mean(np.sum(block[:, 3:] ** 2, axis=1)))))
    return out


class _SeriesModel:
    """Residuals of the scaled variables ``u`` (``x = x0 + (u - 1) scale``), memoised."""

    def __init__(self, params: RobotParams, series: Sequence[MeasuredSeries], names: list[str],
                 x0: NDArray[np.float64], scale: NDArray[np.float64], replay: dict[str, Any],
                 verbose: bool, creep: dict[str, float]) -> None:
        self.params, self.series, self.names, self.creep = params, list(series), names, creep
        self.x0, self.scale, self.replay, self.verbose = x0, scale, replay, verbose
        self.n_eval = 0
        self.memo: dict[bytes, NDArray[np.float64]] = {}

    def unpack(self, u: NDArray[np.float64]) -> tuple[RobotParams, float]:
        x = self.x0 + (np.asarray(u) - 1.0) * self.scale
        vals = {**self.creep, **dict(zip(self.names, (float(v) for v in x)))}
        return _with_values(self.params, vals), vals.get("mocap.yaw", 0.0)

    def fun(self, u: NDArray[np.float64]) -> NDArray[np.float64]:
        key = np.asarray(u, dtype=np.float64).tobytes()
        if key in self.memo:
            return self.memo[key]
        self.n_eval += 1
        p, yaw = self.unpack(u)
        r = timeseries_residuals(p, self.series, yaw=yaw, **self.replay)
        while len(self.memo) >= 3:
            self.memo.pop(next(iter(self.memo)))
        self.memo[key] = r
        if self.verbose:
            x = self.x0 + (np.asarray(u) - 1.0) * self.scale
            print(f"  eval {self.n_eval}: cost {0.5 * float(r @ r):.6g} at "
                  + ", ".join(f"{n}={v:.6g}" for n, v in zip(self.names, x)), flush=True)
        return r


def start_values(params: RobotParams, names: Sequence[str], start: dict[str, float] | None
                 ) -> tuple[RobotParams, NDArray[np.float64], dict[str, float]]:
    """``params`` with the start values set (checked), the start vector of ``names`` and the
    creep law's two start values (kept apart: at ``creep_fraction = 0`` the law is off and
    ``params`` carries ``creep_time = 0``, while a free fraction starts from the given time)."""
    start = dict(start or {})
    unknown = [n for n in start if n not in TIMESERIES_NAMES]
    if unknown:
        raise CalibrationError(f"start value given for {unknown[0]!r}: allowed {', '.join(TIMESERIES_NAMES)}")
    creep = {"rod.creep_fraction": float(start.get("rod.creep_fraction", params.rod.creep_fraction)),
             "rod.creep_time": float(start.get("rod.creep_time", params.rod.creep_time))}
    robot = {k: float(v) for k, v in start.items() if k not in MOCAP_NAMES and k not in CREEP_NAMES}
    params = _with_values(with_values(params, robot), creep)
    x0 = np.array([float(start[n]) if n in start else creep[n] if n in creep else get_value(params, n)
                   for n in names])
    return params, x0, creep


def calibrate_timeseries(
    params: RobotParams,
    series: Sequence[MeasuredSeries],
    free: Sequence[str],
    *,
    bounds: dict[str, tuple[float, float]] | None = None,
    start: dict[str, float] | None = None,
    dt: float = DEFAULT_TIMESERIES_DT,
    settle: float = DEFAULT_SETTLE_S,
    every: int = 1,
    diff_step: float = 1e-2,
    max_nfev: int = 30,
    xtol: float = 1e-4,
    ftol: float = 1e-6,
    verbose: bool = False,
) -> CalibrationResult:
    """Least-squares fit of ``free`` (names of :data:`TIMESERIES_NAMES`) to the time
    ``series`` (see the module doc).  ``start`` overrides start values (the creep law's may be
    set together, e.g. ``{"rod.creep_fraction": 0.05, "rod.creep_time": 100.0}``); ``bounds``
    as in :func:`timeseries_bounds`; ``dt`` [s] the implicit integrator's step, ``settle`` [s]
    the rest before each replay, ``every`` the objective's row stride; ``diff_step`` the
    relative forward-difference step (larger than the steady-state fit's 1e-3: a replay
    carries the Newton tolerance of ~30 000 implicit steps).  Every input is checked before the
    first replay; raises :class:`CalibrationError` (a ``ParameterError``) naming the field."""
    from scipy.optimize import least_squares

    names = list(free)
    _check_settings(dt, settle, every, diff_step, max_nfev)
    params, x0, creep = start_values(params, names, start)
    check_timeseries_names(params, names, creep["rod.creep_time"])
    bnds = timeseries_bounds(params, names, bounds, creep)
    if not series:
        raise CalibrationError("no time series to fit")
    for s in series:
        check_replay_step(s, dt)
    scale = np.array([_scale(n, float(v), b) for n, v, b in zip(names, x0, bnds)])
    replay = {"dt": dt, "settle": settle, "every": every}
    model = _SeriesModel(params, series, names, x0, scale, replay, verbose, creep)
    if verbose:
        rows = sum(len(_rows(s, every)) for s in series)
        print(f"  fitting {', '.join(names)} to {rows} rows of {len(series)} time series "
              f"(implicit step {dt:g} s; at most {max_nfev} evaluations, and {len(names)} more "
              "per Jacobian)", flush=True)
    wall0 = _time.perf_counter()
    lo = 1.0 + (np.array([b[0] for b in bnds]) - x0) / scale
    hi = 1.0 + (np.array([b[1] for b in bnds]) - x0) / scale
    u0 = np.ones(len(names))
    r0 = model.fun(u0)
    sol = least_squares(model.fun, u0, jac="2-point", bounds=(lo, hi), diff_step=diff_step,
                        max_nfev=max_nfev, xtol=xtol, ftol=ftol, x_scale=1.0, method="trf")
    r = np.asarray(sol.fun)
    m, n = r.size, len(names)
    jac = np.asarray(sol.jac) / scale[None, :]
    cov = float(r @ r) / max(m - n, 1) * np.linalg.pinv(jac.T @ jac)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.outer(std, std)
    fitted, _ = model.unpack(np.asarray(sol.x))
    return CalibrationResult(
        params=fitted, names=names, start=x0, values=x0 + (np.asarray(sol.x) - 1.0) * scale,
        std=std, correlation=np.nan_to_num(corr), rms_start_mm_deg=_run_rms(r0, series, every),
        rms_mm_deg=_run_rms(r, series, every), cost=float(sol.cost), n_residuals=m,
        n_evaluations=model.n_eval, wall_time_s=_time.perf_counter() - wall0,
        success=bool(sol.success), message=str(sol.message), bounds=bnds,
    )


def _check_settings(dt: float, settle: float, every: int, diff_step: float, max_nfev: int) -> None:
    checks = (
        ("dt", dt, math.isfinite(dt) and 0.0 < dt <= 0.05, "(0, 0.05] s"),
        ("settle", settle, math.isfinite(settle) and 0.0 <= settle <= 60.0, "[0, 60] s"),
        ("every", every, isinstance(every, int) and every >= 1, "an integer >= 1"),
        ("diff_step", diff_step, math.isfinite(diff_step) and 0.0 < diff_step <= 0.5, "(0, 0.5]"),
        ("max_nfev", max_nfev, isinstance(max_nfev, int) and max_nfev >= 1, "an integer >= 1"),
    )
    for name, value, ok, allowed in checks:
        if not ok:
            raise CalibrationError(f"{name} = {value!r} is invalid: must be {allowed}")
