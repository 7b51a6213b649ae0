"""Rate-independent hysteresis of the auxetic coupling fitted on the real robot's elongation
run, judged on the held-out twisting run.

The optional play law of the rods (``RodParams.hysteresis_width`` ``r`` [rad/m] and
``hysteresis_weight`` ``w`` [-], :mod:`hsa_elastica.physics.hysteresis`, docs/model.md) is
added on top of the preset with the creep law as fitted in ``validation/real_robot_creep.md``
(``creep_fraction`` 0.22, ``creep_time`` 1000 s).  The fit is a grid over ``(r, w)``: every
pair replays the fitted run (:func:`hsa_elastica.validation.real_robot_timeseries.simulate`,
implicit integrator) and the pair of the smallest position RMS over all rows is kept; the
other run is then replayed with and without it (held out).  Nothing else is refitted.

Usage::

    python -m hsa_elastica.validation.real_robot_hysteresis --dt 0.01 --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from hsa_elastica.engines.implicit import ImplicitStepFailed
from hsa_elastica.params import ParameterError, RobotParams, resolve_params
from hsa_elastica.params.files import write_atomic
from hsa_elastica.validation.real_robot_timeseries import (
    RUNS,
    MeasuredSeries,
    SimulatedSeries,
    measured_series,
    simulate,
    summary_row,
)

__all__ = ["with_hysteresis", "fit_hysteresis", "main"]

#: play half-widths tried [rad/m]: the robot's rods reach ~30-50 rad/m of handed twist strain
WIDTH_GRID: tuple[float, ...] = (0.25, 0.5, 1.0)
#: weights tried [-]
WEIGHT_GRID: tuple[float, ...] = (0.5, 1.0)
#: the creep law as fitted on the elongation run (validation/real_robot_creep.md)
CREEP = (0.22, 1000.0)


def with_hysteresis(params: RobotParams, width: float, weight: float) -> RobotParams:
    """``params`` with the rods' ``hysteresis_width`` [rad/m] / ``hysteresis_weight`` [-] set
    (validated: ``ParameterError`` naming the field)."""
    return params.replace(rod=params.rod.replace(hysteresis_width=float(width),
                                                 hysteresis_weight=float(weight)))


def _row(series: MeasuredSeries, sim: SimulatedSeries) -> dict[str, Any]:
    r = summary_row(series, sim)
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}


def fit_hysteresis(params: RobotParams, series: MeasuredSeries, *, dt: float,
                   widths: tuple[float, ...] = WIDTH_GRID,
                   weights: tuple[float, ...] = WEIGHT_GRID, log: Any = None) -> dict[str, Any]:
    """Grid over ``widths`` x ``weights``; returns the best pair (smallest position RMS over
    all rows of ``series``) and every pair's position / orientation RMS [mm, deg] (a replay
    the implicit integrator refused is listed as failed, without RMS)."""
    scan: list[dict[str, Any]] = []
    for r in widths:
        for w in weights:
            try:
                row = _row(series, simulate(with_hysteresis(params, r, w), series, dt=dt))
            except ImplicitStepFailed as exc:  # reported as a failed replay, not fitted
                scan.append({"width_rad_per_m": r, "weight": w, "pos_rms_mm": None,
                             "rot_rms_deg": None, "failed": " ".join(str(exc).split())})
                if log is not None:
                    print(f"  r = {r:g} rad/m, w = {w:g}: replay failed: {exc}", file=log, flush=True)
                continue
            scan.append({"width_rad_per_m": r, "weight": w, "pos_rms_mm": row["pos_rms_mm"],
                         "rot_rms_deg": row["rot_rms_deg"]})
            if log is not None:
                print(f"  r = {r:g} rad/m, w = {w:g}: position RMS {row['pos_rms_mm']:.4f} mm, "
                      f"orientation {row['rot_rms_deg']:.4f} deg", file=log, flush=True)
    best = min(scan, key=lambda s: math.inf if s["pos_rms_mm"] is None else s["pos_rms_mm"])
    return {"width_rad_per_m": best["width_rad_per_m"], "weight": best["weight"], "scan": scan}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.real_robot_hysteresis",
                                 description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--params", default="fpu_robot_2022", help="preset or parameter file")
    ap.add_argument("--fit-run", choices=RUNS, default="elongation", help="run fitted")
    ap.add_argument("--dt", type=float, default=1e-2, help="implicit step [s], in (0, 0.05]")
    ap.add_argument("--no-creep", action="store_true",
                    help="fit on the preset alone (default: with the fitted creep law)")
    ap.add_argument("--out", default=None, help="JSON file of the result")
    args = ap.parse_args(argv)
    try:
        if not (math.isfinite(args.dt) and 0.0 < args.dt <= 0.05):
            raise ParameterError(f"dt = {args.dt!r} is invalid: must be in (0, 0.05] s")
        params: RobotParams = resolve_params(args.params)
        if not args.no_creep:
            params = params.replace(rod=params.rod.replace(creep_fraction=CREEP[0],
                                                           creep_time=CREEP[1]))
        fit_series = measured_series(args.fit_run)
        other = measured_series([r for r in RUNS if r != args.fit_run][0])
    except ParameterError as exc:
        print(f"{ap.prog}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    fit = fit_hysteresis(params, fit_series, dt=args.dt, log=sys.stderr)
    fitted = with_hysteresis(params, fit["width_rad_per_m"], fit["weight"])
    out: dict[str, Any] = {"fit_run": args.fit_run, "dt": args.dt,
                           "creep": None if args.no_creep else list(CREEP), "fit": fit, "runs": {}}
    for series in (fit_series, other):
        out["runs"][series.name] = {
            "role": "fitted" if series is fit_series else "held out",
            "without": _row(series, simulate(params, series, dt=args.dt)),
            "with": _row(series, simulate(fitted, series, dt=args.dt)),
        }
        print(json.dumps(out["runs"][series.name]), file=sys.stderr, flush=True)
    text = json.dumps(out, indent=1)
    if args.out:
        write_atomic(args.out, lambda tmp: tmp.write_text(text + "\n", encoding="utf-8"))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
