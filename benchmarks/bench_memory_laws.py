#!/usr/bin/env python
"""Cost per implicit step of the material memory laws (creep, hysteresis play) on a replay of
a measured motion-capture run (target: <= 1.3x the cost with the laws off).

The shipped run (``--run``, default elongation; ``--duration`` s of it, 0 = all) is replayed
on the implicit integrator at ``--dt`` through the step API, as
``hsa_elastica.experiments.timeseries.simulate`` does, on the preset ``fpu_robot_2022`` with:
the laws off; the creep law of ``validation/real_robot_creep.md`` (0.22, 1000 s); and that
creep with the play (``--play r,w`` pairs [rad/m, -]).  Each row prints the CPU time of this
process per step (time slices given to other processes on a shared machine do not count),
the steps, force evaluations per step, Jacobians and refused steps taken again in halves,
and the ratio of the CPU time per step to the laws-off replay.  With ``--repeat N`` the cases
are replayed N times in alternation (so that all of them see the same machine load) and the
median CPU time per step of each is printed.

Usage::

    python benchmarks/bench_memory_laws.py [--duration 0] [--dt 0.01] [--play 0.5,0.5 1,1]
        [--repeat 1]    # the whole elongation run: ~10 s per case and repeat
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

CREEP = (0.22, 1000.0)  # validation/real_robot_creep.md


def replay(params: Any, series: Any) -> dict[str, float]:
    """Replay ``series`` on ``params`` (implicit integrator, 2 s settling first, as the
    validation); the engine's counters and the CPU time of the replay."""
    from hsa_elastica.robots.builders import build_fast_robot

    robot = build_fast_robot(params, series.angles[0], ramp=0.0, record=False)
    engine = robot.engine
    robot.set_motor_angles(series.angles[0])
    robot.step(2.0)
    start = (engine.n_steps, engine.evaluations, engine.n_jacobians, engine.n_halved)
    cpu = time.process_time()
    for k in range(1, len(series.t)):
        robot.set_motor_angles(series.angles[k])
        robot.step(float(series.t[k] - series.t[k - 1]))
    cpu = time.process_time() - cpu
    steps, evals, jac, halved = (a - b for a, b in zip(
        (engine.n_steps, engine.evaluations, engine.n_jacobians, engine.n_halved), start))
    pos = np.asarray(robot.state()["platform_position_m"])
    return {"cpu": cpu, "steps": steps, "evals": evals, "jac": jac, "halved": halved,
            "z_mm": 1e3 * float(pos[2])}


def main() -> None:
    from hsa_elastica.experiments.timeseries import measured_series
    from hsa_elastica.params import resolve_params

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--run", default="elongation")
    ap.add_argument("--duration", type=float, default=0.0, help="s of the run (0: all)")
    ap.add_argument("--dt", type=float, default=0.01, help="implicit step [s]")
    ap.add_argument("--play", nargs="*", default=["0.5,0.5", "1,1"],
                    help="play half-width [rad/m], weight pairs")
    ap.add_argument("--repeat", type=int, default=1, help="replays of each case, alternated")
    args = ap.parse_args()
    series = measured_series(args.run, args.duration if args.duration > 0 else None)
    base: Any = resolve_params("fpu_robot_2022")
    base = base.replace(simulation=base.simulation.replace(integrator="implicit", dt=args.dt))
    creep = base.replace(rod=base.rod.replace(creep_fraction=CREEP[0], creep_time=CREEP[1]))
    cases: list[tuple[str, Any]] = [("laws off", base), ("creep", creep)]
    for pair in args.play:
        r, w = (float(v) for v in pair.split(","))
        cases.append((f"creep + play r={r:g} w={w:g}",
                      creep.replace(rod=creep.rod.replace(hysteresis_width=r, hysteresis_weight=w))))
    replay(base, measured_series(args.run, 1.0))  # compile outside the timings
    print(f"{args.run}, {series.t[-1]:.0f} s, dt {args.dt:g} s")
    print(f"{'case':<28} {'ms/step':>8} {'ratio':>6} {'steps':>7} {'evals/step':>10} "
          f"{'Jacobians':>9} {'halved':>6} {'z [mm]':>9}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _ in cases}
    for _ in range(max(args.repeat, 1)):
        for name, params in cases:
            results[name].append(replay(params, series))
    ref = None
    for name, _ in cases:
        last = results[name][-1]
        per_step = statistics.median(1e3 * x["cpu"] / max(x["steps"], 1) for x in results[name])
        ref = per_step if ref is None else ref
        print(f"{name:<28} {per_step:8.3f} {per_step / ref:6.2f} {last['steps']:7.0f} "
              f"{last['evals'] / max(last['steps'], 1):10.2f} {last['jac']:9.0f} "
              f"{last['halved']:6.0f} {last['z_mm']:9.4f}", flush=True)

if __name__ == "__main__":
    main()
