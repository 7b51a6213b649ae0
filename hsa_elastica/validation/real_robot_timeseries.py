"""The real FPU robot over time: its motion-capture time series against a dynamic simulation
driven by the motor angles as the servos logged them.

The two shipped runs (``hsa_elastica.data.load_timeseries``: elongation, 271 s; twisting,
541 s; a row every ~0.11 s) are replayed on the implicit integrator through the step API
(:mod:`hsa_elastica.experiments.timeseries`, shared with the time-series calibration): the
robot starts at rest under gravity (``--settle`` seconds at zero command), then each logged
interval turns every motor linearly from its reported angle to the next one
(``set_motor_angles`` + ``step(t[k+1] - t[k])``), and the platform's marker pose is read at
every logged time and compared with the measured one (position error in mm, orientation error
as the angle of ``R_meas^T R_sim`` in degrees, as in the steady-state validation
``hsa_elastica.validation.real_robot``).

What it shows: where the model's error changes while the commands hold still -- the real
robot's creep (its rest pose rising over a run), which a model without material memory cannot
follow -- and the transients between samples.  The preset ``fpu_robot_2022`` was fitted on the
steady-state samples of both runs (rows with ``steady_state_sample == 1``); the rows between
them (the ramps to each setpoint and the holds) were not fitted.

Usage::

    python -m hsa_elastica.validation.real_robot_timeseries            # both runs, figure + table
    python -m hsa_elastica.validation.real_robot_timeseries --runs elongation --duration 60

(``python -m validation.real_robot_timeseries`` in a source checkout: the same, writing into
``validation/``.)
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica.experiments.timeseries import (  # noqa: F401  (re-exported)
    DEFAULT_DT,
    DEFAULT_SETTLE_S,
    RUNS,
    MeasuredSeries,
    SimulatedSeries,
    errors,
    measured_series,
    simulate,
)
from hsa_elastica.params import ParameterError, RobotParams, resolve_params
from hsa_elastica.params.files import write_atomic

__all__ = ["MeasuredSeries", "SimulatedSeries", "measured_series", "simulate", "errors", "summary_row",
           "table", "plot", "main"]

#: default output directory (relative to the current directory)
DEFAULT_RESULTS = Path("validation_results")
FIGURE = "fig_real_robot_timeseries.png"


def _rms(x: NDArray[np.float64]) -> float:
    return float(np.sqrt(np.mean(x ** 2))) if len(x) else math.nan


def summary_row(series: MeasuredSeries, sim: SimulatedSeries) -> dict[str, Any]:
    """RMS errors over all rows, over the fitted samples and over the rows between them [mm,
    deg]; the measured and simulated rise of the marker between the first and the last fifth of
    the run at the rows whose command is within 0.05 rad of zero (the rest pose: creep) [mm]."""
    dp, dr = errors(series, sim)
    f = series.fitted
    rest = np.abs(series.angles).max(axis=1) < 0.05
    n = len(series.t)
    early, late = rest & (np.arange(n) < n // 5), rest & (np.arange(n) >= n - n // 5)

    def rise(z: NDArray[np.float64]) -> float:
        return float(np.median(z[late]) - np.median(z[early])) * 1e3 if early.any() and late.any() else math.nan

    return {
        "run": series.name, "rows": n, "duration_s": float(series.t[-1]),
        "pos_rms_mm": _rms(dp) * 1e3, "rot_rms_deg": math.degrees(_rms(dr)),
        "pos_rms_fitted_mm": _rms(dp[f]) * 1e3, "pos_rms_between_mm": _rms(dp[~f]) * 1e3,
        "rest_rise_measured_mm": rise(series.position[:, 2]),
        "rest_rise_simulated_mm": rise(sim.position[:, 2]),
        "wall_time_s": sim.wall_time_s,
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of :func:`summary_row` rows."""
    head = ("| run | rows | simulated [s] | position RMS [mm] | orientation RMS [deg] | position RMS, "
            "fitted samples [mm] | position RMS, other rows [mm] | rest-pose z drift, measured [mm] | "
            "rest-pose z drift, simulated [mm] | wall time [s] |")
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['run']} | {r['rows']} | {r['duration_s']:.0f} | {r['pos_rms_mm']:.2f} | "
            f"{r['rot_rms_deg']:.2f} | {r['pos_rms_fitted_mm']:.2f} | {r['pos_rms_between_mm']:.2f} | "
            f"{r['rest_rise_measured_mm']:.2f} | {r['rest_rise_simulated_mm']:.2f} | {r['wall_time_s']:.0f} |"
        )
    return "\n".join(lines)


def plot(pairs: list[tuple[MeasuredSeries, SimulatedSeries]], path: Path,
         second: list[SimulatedSeries] | None = None, second_label: str = "with creep") -> None:
    """Marker x, y, z [mm] and platform roll, pitch, yaw [deg] against time, measured (black)
    and simulated (red), one column per run; the fitted samples marked.  ``second``: a second
    model's replay of each run (blue, ``second_label``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy.spatial.transform import Rotation

    fig, axes = plt.subplots(7, len(pairs), figsize=(6.5 * len(pairs), 13), sharex="col", squeeze=False)
    labels = ["x [mm]", "y [mm]", "z [mm]", "roll [deg]", "pitch [deg]", "yaw [deg]", "error [mm]"]
    for c, (series, sim) in enumerate(pairs):
        meas = np.hstack([series.position * 1e3,
                          np.degrees(Rotation.from_quat(series.quaternion).as_euler("xyz"))])
        model = np.hstack([sim.position * 1e3, np.degrees(Rotation.from_matrix(sim.rotation).as_euler("xyz"))])
        other = None if second is None else np.hstack(
            [second[c].position * 1e3, np.degrees(Rotation.from_matrix(second[c].rotation).as_euler("xyz"))])
        for r in range(6):
            ax = axes[r, c]
            ax.plot(series.t, meas[:, r], "k-", lw=0.8, label="measured")
            ax.plot(series.t, model[:, r], "-", color="C3", lw=0.8, label="simulated")
            if other is not None:
                ax.plot(series.t, other[:, r], "-", color="C0", lw=0.8, label=f"simulated, {second_label}")
            ax.plot(series.t[series.fitted], meas[series.fitted, r], "o", ms=2.5, mfc="none",
                    color="C2", label="fitted samples")
        dp, _ = errors(series, sim)
        axes[6, c].plot(series.t, dp * 1e3, "-", color="C3", lw=0.8)
        if second is not None:
            axes[6, c].plot(series.t, errors(series, second[c])[0] * 1e3, "-", color="C0", lw=0.8)
        for r in range(7):
            axes[r, c].grid(alpha=0.3)
            if c == 0:
                axes[r, c].set_ylabel(labels[r])
        axes[0, c].set_title(f"{series.name} run")
        axes[-1, c].set_xlabel("time [s]")
    axes[0, 0].legend(fontsize=8, loc="best")
    fig.suptitle("Real FPU robot over time: marker position and platform orientation (Euler xyz)")
    fig.tight_layout()
    write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=70, format="png"))
    plt.close(fig)


def _positive(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number > 0")
    return value


def _non_negative(text: str) -> float:
    value = float(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.real_robot_timeseries",
                                 description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                    help="directory of the figure (default: ./validation_results)")
    ap.add_argument("--params", default="fpu_robot_2022",
                    help="robot to replay: a preset name or a parameter file (default: fpu_robot_2022)")
    ap.add_argument("--runs", nargs="+", choices=RUNS, default=list(RUNS))
    ap.add_argument("--duration", type=_positive, default=None,
                    help="replay only the first DURATION seconds of each run")
    ap.add_argument("--dt", type=_positive, default=DEFAULT_DT, help="implicit step [s] (default 2e-3)")
    ap.add_argument("--settle", type=_non_negative, default=DEFAULT_SETTLE_S,
                    help="seconds at zero command before the run (default 2)")
    ap.add_argument("--creep", nargs=2, type=_non_negative, default=None,
                    metavar=("FRACTION", "TIME"),
                    help="also replay with the rods' creep_fraction [-] and creep_time [s] "
                         "(a second model line and table rows)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    try:
        params: RobotParams = resolve_params(args.params)
        crept = None if args.creep is None else params.replace(rod=params.rod.replace(
            creep_fraction=args.creep[0], creep_time=args.creep[1]))
        runs = [measured_series(r, args.duration) for r in args.runs]
    except ParameterError as exc:
        print(f"{ap.prog}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    pairs = [(s, simulate(params, s, dt=args.dt, settle=args.settle, progress=not args.quiet))
             for s in runs]
    second = None if crept is None else [
        simulate(crept, s, dt=args.dt, settle=args.settle, progress=not args.quiet) for s in runs]
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    plot(pairs, results / FIGURE, second)
    rows = [summary_row(s, m) for s, m in pairs]
    if second is not None:
        rows += [{**summary_row(s, m), "run": f"{s.name}, with creep"} for s, m in zip(runs, second)]
    print(table(rows))
    print(f"figure written to {results / FIGURE}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
