"""Creep of the auxetic rest strain fitted on the real robot's time series, judged on the run
not fitted.

The preset ``fpu_robot_2022`` is quasi-static between motion-capture samples and misses the
real robot's creep (``validation/real_robot_timeseries.md``).  This module calibrates the two
parameters of the optional creep law (``RodParams.creep_fraction`` ``c`` [-] and
``creep_time`` ``tau`` [s], docs/model.md) and nothing else, on top of the preset, against the
replay of one shipped run (:func:`hsa_elastica.validation.real_robot_timeseries.simulate`), and
predicts the other run with the fitted values (held out).

The fit: for each ``tau`` of a grid the run is replayed at ``c = 0`` and at ``c = c_probe``;
over the small creep strains of these runs the marker moves linearly in ``c`` (checked by a
replay at the fitted values, reported as ``linearity_mm``), so the position RMS over all rows
is minimised in ``c`` on the interpolated trace (``c`` in [0, 1]).  The best ``(c, tau)`` of the
grid is then replayed for real on both runs.

Usage::

    python -m hsa_elastica.validation.real_robot_creep --fit-run elongation --dt 0.01
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.params import ParameterError, RobotParams, resolve_params
from hsa_elastica.experiments.timeseries import (
    RUNS,
    MeasuredSeries,
    SimulatedSeries,
    measured_series,
    simulate,
)
from hsa_elastica.validation.real_robot_timeseries import summary_row

__all__ = ["with_creep", "fit_creep", "main"]

#: creep times [s] tried by the fit: from a few logged setpoints to the length of a run
TAU_GRID: tuple[float, ...] = (3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
#: creep fraction of the probe replay at each creep time [-]
C_PROBE = 0.05


def with_creep(params: RobotParams, fraction: float, time_s: float) -> RobotParams:
    """``params`` with the rods' ``creep_fraction`` / ``creep_time`` set (validated)."""
    return params.replace(rod=params.rod.replace(creep_fraction=float(fraction),
                                                 creep_time=float(time_s)))


def _position_rms(series: MeasuredSeries, position: NDArray[np.float64]) -> float:
    return float(np.sqrt(np.mean(np.sum((position - series.position) ** 2, axis=1))))


def _best_fraction(series: MeasuredSeries, base: SimulatedSeries,
                   probe: SimulatedSeries) -> tuple[float, float]:
    """``(c, position RMS [m])`` minimising the RMS on the trace interpolated linearly in ``c``
    between the replays at 0 and :data:`C_PROBE` (a fine grid over [0, 1])."""
    slope = (probe.position - base.position) / C_PROBE
    grid = np.linspace(0.0, 1.0, 2001)
    rms = [_position_rms(series, base.position + c * slope) for c in grid]
    k = int(np.argmin(rms))
    return float(grid[k]), float(rms[k])


def fit_creep(params: RobotParams, series: MeasuredSeries, *, dt: float,
              taus: tuple[float, ...] = TAU_GRID, log: Any = None) -> dict[str, Any]:
    """Grid over ``taus`` [s], linear in ``c`` (module docstring); returns the best
    ``creep_fraction``, ``creep_time`` and the interpolated RMS [mm] of every creep time."""
    base = simulate(params, series, dt=dt)
    scan = []
    for tau in taus:
        probe = simulate(with_creep(params, C_PROBE, tau), series, dt=dt)
        c, rms = _best_fraction(series, base, probe)
        scan.append({"creep_time_s": tau, "creep_fraction": c, "pos_rms_mm": rms * 1e3})
        if log is not None:
            print(f"  tau = {tau:g} s: c = {c:.3f}, position RMS {rms * 1e3:.3f} mm", file=log)
    best = min(scan, key=lambda r: r["pos_rms_mm"])
    return {"creep_fraction": best["creep_fraction"], "creep_time_s": best["creep_time_s"],
            "scan": scan, "base_pos_rms_mm": _position_rms(series, base.position) * 1e3}


def _row(series: MeasuredSeries, sim: SimulatedSeries) -> dict[str, Any]:
    r = summary_row(series, sim)
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.real_robot_creep",
                                 description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--params", default="fpu_robot_2022", help="preset or parameter file")
    ap.add_argument("--fit-run", choices=RUNS, default="elongation", help="run fitted")
    ap.add_argument("--dt", type=float, default=1e-2, help="implicit step of the fit [s]")
    ap.add_argument("--check-dt", type=float, default=None,
                    help="also replay the fitted values at this step [s] (dt check)")
    ap.add_argument("--out", default=None, help="JSON file of the result")
    args = ap.parse_args(argv)
    try:
        if not (math.isfinite(args.dt) and 0.0 < args.dt <= 0.05):
            raise ParameterError(f"dt = {args.dt!r} must be in (0, 0.05] s")
        params: RobotParams = resolve_params(args.params)
        fit_series = measured_series(args.fit_run)
        other = measured_series([r for r in RUNS if r != args.fit_run][0])
    except ParameterError as exc:
        print(f"{ap.prog}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    fit = fit_creep(params, fit_series, dt=args.dt, log=sys.stderr)
    fitted = with_creep(params, fit["creep_fraction"], fit["creep_time_s"])
    out: dict[str, Any] = {"fit_run": args.fit_run, "dt": args.dt, "fit": fit, "runs": {}}
    for series in (fit_series, other):
        base = simulate(params, series, dt=args.dt)
        crept = simulate(fitted, series, dt=args.dt)
        out["runs"][series.name] = {"role": "fitted" if series is fit_series else "held out",
                                    "preset": _row(series, base), "creep": _row(series, crept)}
        if args.check_dt:
            check = simulate(fitted, series, dt=args.check_dt)
            out["runs"][series.name]["creep_check_dt"] = _row(series, check)
        print(json.dumps(out["runs"][series.name]), file=sys.stderr)
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
