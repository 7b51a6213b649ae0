"""Hold test of the 4-rod HSA robot: stays bounded and settles at light damping? (docs/stability.md)

For each motion primitive (full magnitude) and ``--random N`` random motor-angle sets
(uniform in [-pi, pi], seed ``--seed``) the paper robot (``paper_robot_params()``, fused path)
is ramped for 1 s and held for ``--hold`` seconds, with the global velocity damping
``--damping`` [1/s], the twist low pass ``--filter`` [s] and the Kelvin-Voigt retardation
times of the parameters (``--no-kv``: all 0; ``--kv-scale``: multiply them).  Reported: the
largest rod node speed [m/s] at the end of the ramp and at 25 %, 50 %, 100 % of the hold, the
platform position [mm] at the end and its drift [mm] over the second half of the hold.
Verdict: ``settled`` (final speed < 1e-6 m/s and drift < 1e-3 mm), ``bounded`` (finite, not
settled), ``DIVERGED t`` (blow-up detected by ``FastRobot.run``).

Examples::

    python benchmarks/robot_hold.py                              # 7 primitives, damping 5, 30 s
    python benchmarks/robot_hold.py --random 50 --primitives none --hold 30
    python benchmarks/robot_hold.py --no-kv --filter 0.01 --damping 50   # the former defaults
    python benchmarks/robot_hold.py --no-kv --damping 5 --hold 10         # the elastic model

Cost: ~1.2 s wall per simulated second on one free core (the default 30 s hold: ~40 s per case).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from hsa_elastica.engines.timeloop import SimulationDiverged
from hsa_elastica.params import RETARDATION_FIELDS, paper_robot_params
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles


def _max_speed(robot) -> float:  # type: ignore[no-untyped-def]
    return max(float(np.abs(r.velocity_collection).max()) for r in robot.rods)


def hold(angles, *, damping: float, filt: float, kv_scale: float, hold_time: float,
         dt: float | None = None, C_eps: float | None = None,
         law: str | None = None, elements: int | None = None) -> dict:  # type: ignore[no-untyped-def]
    """Ramp (1 s) + hold; returns speeds, pose, drift and verdict."""
    p = paper_robot_params()
    rod = p.rod.replace(
        twist_filter_time=filt,
        **{f: getattr(p.rod, f) * kv_scale for f in RETARDATION_FIELDS},
    )
    if C_eps is not None:
        rod = rod.replace(C_eps=C_eps)
    if law is not None:
        rod = rod.replace(coupling_law=law)
    if elements is not None:
        rod = rod.replace(n_elements=elements)
    sim = p.simulation.replace(damping=damping, rotational_damping=damping)
    if dt is not None:
        sim = sim.replace(dt=dt)
    p = p.replace(rod=rod, simulation=sim)
    robot = build_fast_robot(p, list(angles), record=False)
    out: dict = {"speeds": [], "verdict": "settled", "pose": None, "drift": math.nan}
    marks = [sim.ramp_time, *(sim.ramp_time + f * hold_time for f in (0.25, 0.5, 1.0))]
    try:
        mid = None
        for t_mark in marks:
            robot.run(t_mark - robot.time)
            out["speeds"].append(_max_speed(robot))
            if t_mark == marks[2]:
                mid = robot.platform.position_collection[:, 0].copy()
        pos = robot.platform.position_collection[:, 0].copy()
        out["pose"] = pos * 1e3
        out["drift"] = float(np.linalg.norm(pos - mid)) * 1e3
        if not (out["speeds"][-1] < 1e-6 and out["drift"] < 1e-3):
            out["verdict"] = "bounded"
    except SimulationDiverged as exc:
        out["verdict"] = f"DIVERGED {exc.time:.2f} s"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--primitives", default="all", help="comma list, 'all' or 'none'")
    ap.add_argument("--random", type=int, default=0, help="number of random motor-angle sets")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--damping", type=float, default=5.0, help="global damping [1/s]")
    ap.add_argument("--filter", type=float, default=0.0, help="twist low pass [s]")
    ap.add_argument("--hold", type=float, default=30.0, help="hold time after the 1 s ramp [s]")
    ap.add_argument("--no-kv", action="store_true", help="no Kelvin-Voigt damping")
    ap.add_argument("--kv-scale", type=float, default=1.0, help="factor on the retardation times")
    ap.add_argument("--dt", type=float, default=None, help="time step [s] (default: params)")
    ap.add_argument("--elements", type=int, default=None,
                    help="elements per rod (default: params, 25; the environments' coarse: 10)")
    ap.add_argument("--C-eps", type=float, default=None, help="override C_eps [m/rad]")
    ap.add_argument("--law", choices=("one_way", "passive"), default=None,
                    help="RodParams.coupling_law (default: the parameters')")
    args = ap.parse_args()
    cases: list[tuple[str, list[float]]] = []
    p = paper_robot_params()
    if args.primitives == "all":
        names = list(PRIMITIVES)
    elif args.primitives == "none":
        names = []
    else:
        names = args.primitives.split(",")
    for name in names:
        cases.append((name, list(primitive_angles(name, 1.0, p))))
    rng = np.random.default_rng(args.seed)
    for k in range(args.random):
        cases.append((f"random {k}", list(rng.uniform(-math.pi, math.pi, p.n_rods))))
    scale = 0.0 if args.no_kv else args.kv_scale
    print(f"damping {args.damping} 1/s, twist filter {args.filter} s, KV scale {scale}, "
          f"hold {args.hold} s, dt {args.dt or p.simulation.dt} s"
          + (f", C_eps {args.C_eps}" if args.C_eps is not None else "")
          + (f", {args.elements} elements per rod" if args.elements is not None else ""))
    print("| case | angles [rad] | verdict | max speed end of ramp, 25/50/100 % hold [m/s] "
          "| platform xyz [mm] | drift 2nd half [mm] | wall [s] |")
    print("|---|---|---|---|---|---|---|")
    counts: dict[str, int] = {}
    for name, angles in cases:
        t0 = time.perf_counter()
        r = hold(angles, damping=args.damping, filt=args.filter, kv_scale=scale,
                 hold_time=args.hold, dt=args.dt, C_eps=args.C_eps, law=args.law,
                 elements=args.elements)
        wall = time.perf_counter() - t0
        key = r["verdict"].split()[0]
        counts[key] = counts.get(key, 0) + 1
        speeds = ", ".join(f"{v:.0e}" for v in r["speeds"])
        pose = "-" if r["pose"] is None else "({:.3f}, {:.3f}, {:.3f})".format(*r["pose"])
        ang = "(" + ", ".join(f"{a:+.2f}" for a in angles) + ")"
        print(f"| {name} | {ang} | {r['verdict']} | {speeds} | {pose} | {r['drift']:.1e} | {wall:.0f} |",
              flush=True)
    print("summary:", ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
