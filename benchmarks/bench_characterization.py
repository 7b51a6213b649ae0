"""Characterization validation: static solver vs dynamic relaxation, side by side in one run.

Simulates every measured point of the Good et al. characterization (120 points) for the five
parameter sets of ``python -m hsa_elastica.validation.characterization --law nonlinear+compression``
(Table I and the four fitted sets of hsa_elastica/data/fitted_params*.yaml: 600 points), once with the
static solver (``method="static"``, one process) and once with dynamic relaxation
(``method="dynamic"``, ``--jobs`` processes), and prints

* the wall times of both (the static one with a warm numba cache, solvers built inside the
  timing), their ratio and the static run's CPU time (the one-core cost, which the load of a
  shared machine barely changes); target: static < 15 s;
* the scores of both (points inside the error bars per parameter set and characteristic),
  the points whose inside/outside verdict differs (target: none) and the largest relative
  difference between the static and dynamic values per characteristic.

``--jacobians``: instead, the static run twice in alternation with the static solver's
Jacobian from the tangents (``StaticSolver`` default) and from differences of the whole
residual (``statics.DEFAULT_JACOBIAN = "fd"``; the cached single-rod solvers built again for
each run), with their wall times and the largest
relative difference of their values (the same equilibria: tolerance-sized).

``--sets``: only the named parameter sets (``--sets fitted_compression
fitted_nonlinear_compression``: the two with the compression law).

Run: python benchmarks/bench_characterization.py [--jobs 2] [--rows 4 6 8 10 12] [--jacobians]
[--sets NAME ...]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd

from hsa_elastica.experiments.characterization import load_characterization_data, simulate_point
from hsa_elastica.params import RodParams, table1_rod_params
from hsa_elastica.physics.compression_law import AxialLawParams
from hsa_elastica.validation.characterization import (
    FITTED_COMPRESSION,
    FITTED_NONLINEAR,
    FITTED_NONLINEAR_COMPRESSION,
    FITTED_PARAMS,
    ROWS,
    inside_error_bar,
    load_fitted,
    load_fitted_compression,
    simulate_all,
)


def parameter_sets(rows: list[int]) -> tuple[dict[str, dict[int, RodParams]],
                                             dict[str, dict[int, AxialLawParams]]]:
    """The five parameter sets of the validation (rods per row count, compression laws)."""
    rods = {"table1": {r: table1_rod_params(r) for r in rows},
            "fitted": {r: p for r, p in load_fitted(FITTED_PARAMS).items() if r in rows},
            "fitted_nonlinear": {r: p for r, p in load_fitted(FITTED_NONLINEAR).items() if r in rows}}
    laws: dict[str, dict[int, AxialLawParams]] = {}
    for name, path in (("fitted_compression", FITTED_COMPRESSION),
                       ("fitted_nonlinear_compression", FITTED_NONLINEAR_COMPRESSION)):
        both = load_fitted_compression(path)
        rods[name] = {r: v[0] for r, v in both.items() if r in rows}
        laws[name] = {r: v[1] for r, v in both.items() if r in rows}
    return rods, laws


def jacobian_rows(data: pd.DataFrame, rods: dict[str, dict[int, RodParams]],
                  laws: dict[str, dict[int, AxialLawParams]], reps: int = 2) -> None:
    """The static run with either Jacobian, ``reps`` times in alternation (module doc)."""
    from hsa_elastica.engines import statics
    from hsa_elastica.robots import rod_statics

    walls: dict[str, list[float]] = {"tangent": [], "fd": []}
    values: dict[str, np.ndarray] = {}
    for _ in range(reps):
        for kind in ("tangent", "fd"):
            statics.DEFAULT_JACOBIAN = kind
            rod_statics.clear_rod_static_solvers()  # cached per set-up: build them again
            t0 = time.perf_counter()
            values[kind] = simulate_all(data, rods, 1, laws, method="static")["simulated"].to_numpy()
            walls[kind].append(time.perf_counter() - t0)
    statics.DEFAULT_JACOBIAN = "tangent"
    rel = np.abs(values["tangent"] - values["fd"]) / np.maximum(np.abs(values["fd"]), 1e-9)
    print(f"{len(data) * len(rods)} points; load average {os.getloadavg()[0]:.1f}")
    for kind, w in walls.items():
        print(f"  static solver, Jacobian {kind:8s}: wall {min(w):6.2f} - {max(w):6.2f} s")
    print(f"  tangent / fd wall (best of each): {min(walls['tangent']) / min(walls['fd']):.2f}; "
          f"largest relative difference of the values {rel.max():.1e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="processes of the dynamic run (default: cpu count)")
    ap.add_argument("--rows", type=int, nargs="+", default=list(ROWS))
    ap.add_argument("--jacobians", action="store_true",
                    help="only the static run with either Jacobian (jacobian_rows)")
    ap.add_argument("--sets", nargs="+", default=None,
                    help="only these parameter sets (table1, fitted, fitted_nonlinear, "
                         "fitted_compression, fitted_nonlinear_compression)")
    args = ap.parse_args()
    data = load_characterization_data()
    data = data[data["rows"].isin(args.rows)].reset_index(drop=True)
    rods, laws = parameter_sets(args.rows)
    if args.sets is not None:
        unknown = sorted(set(args.sets) - set(rods))
        if unknown:
            ap.error(f"--sets: unknown {unknown}; one of {sorted(rods)}")
        rods = {k: v for k, v in rods.items() if k in args.sets}
        laws = {k: v for k, v in laws.items() if k in args.sets}
    # warm numba's cache (loads the compiled kernels; a cold cache compiles for minutes)
    simulate_point(table1_rod_params(4), "blocked_force", 0.5, method="static")
    if args.jacobians:
        jacobian_rows(data, rods, laws)
        return

    t0, c0 = time.perf_counter(), time.process_time()
    static = simulate_all(data, rods, 1, laws, method="static")
    wall_s, cpu_s = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    dynamic = simulate_all(data, rods, max(1, args.jobs), laws, method="dynamic")
    wall_d = time.perf_counter() - t0

    n = len(static)
    print(f"{n} points; load average {os.getloadavg()[0]:.1f}")
    print(f"{'':24s}{'static':>12s}{'dynamic':>12s}{'ratio':>10s}")
    print(f"{'wall time [s]':24s}{wall_s:12.2f}{wall_d:12.2f}{wall_d / wall_s:10.1f}")
    print(f"{'per point [ms]':24s}{1e3 * wall_s / n:12.2f}{1e3 * wall_d / n:12.2f}")
    print(f"{'processes':24s}{1:12d}{max(1, args.jobs):12d}")
    print(f"(static: {cpu_s:.2f} s CPU)")

    both = static.assign(dynamic=dynamic["simulated"].to_numpy(),
                         inside_static=inside_error_bar(static, "simulated"),
                         inside_dynamic=inside_error_bar(static.assign(simulated=dynamic["simulated"]),
                                                         "simulated"))
    scores = both.groupby(["parameter_set", "characteristic"], sort=False).agg(
        n=("value", "size"), inside_static=("inside_static", "sum"),
        inside_dynamic=("inside_dynamic", "sum"))
    total = both.groupby("parameter_set", sort=False).agg(
        n=("value", "size"), inside_static=("inside_static", "sum"),
        inside_dynamic=("inside_dynamic", "sum"))
    with pd.option_context("display.width", 160, "display.max_rows", 100):
        print("\npoints inside the error bars (static | dynamic):")
        print(scores.to_string())
        print(total.to_string())
    flips = both[both["inside_static"] != both["inside_dynamic"]]
    print(f"\npoints whose verdict differs: {len(flips)}")
    if len(flips):
        print(flips[["parameter_set", "characteristic", "rows", "twist_angle_deg", "value",
                     "err_low", "err_high", "simulated", "dynamic"]].to_string(index=False))
    rel = (both["simulated"] - both["dynamic"]).abs() / np.maximum(both["dynamic"].abs(), 1e-12)
    # (zero-angle points: values ~0 where both are 0 up to round-off: absolute difference)
    print("\nlargest |static - dynamic| / |dynamic| per characteristic (points with |dynamic| > 1e-9):")
    big = both["dynamic"].abs() > 1e-9
    for ch, g in rel[big].groupby(both.loc[big, "characteristic"]):
        print(f"  {ch:24s}{g.max():.2e}")
    print(f"largest absolute difference at |dynamic| <= 1e-9: "
          f"{float(np.max(np.abs((both['simulated'] - both['dynamic'])[~big].to_numpy()), initial=0.0)):.2e}"
          " (data units)")
    target = "met" if wall_s < 15.0 and len(flips) == 0 else "NOT met"
    print(f"\ntarget (static < 15 s, identical verdicts): {target}")


if __name__ == "__main__":
    main()
