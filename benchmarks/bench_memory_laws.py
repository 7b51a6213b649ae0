#!/usr/bin/env python
"""Cost per step of the material memory laws (creep of the rest strain, hysteresis play) on
the paper robot, side by side in one run (target: <= 1.3x the cost with the laws off).

Four paper robots (``paper_robot_params()``, four rods of 25 elements, bend_north at full
magnitude, no recording) are built in ONE process: the laws off; the creep law of
``validation/real_robot_creep.md`` (creep_fraction 0.22, creep_time 1000 s); the hysteresis
play (``--play r,w``, default half-width 0.5 rad/m, weight 0.5); both.  Each is timed

* on the fused explicit step (FastRobot, the default dt 3e-5 s): ``--steps`` steps per repeat;
* on the implicit integrator (ImplicitRobot at its recommended dt, 2e-3 s):
  ``--implicit-steps`` steps per repeat, with the force evaluations per step;

with the motor ramp stretched over the whole timed run (the twist, so the creep's input and
the play's, changes in every step; a held twist would leave the play stuck inside its band),
the four robots in lockstep (same simulated time), ``--repeat`` repeats alternated in a
rotating order so that all see the same machine load.  Printed: the median CPU time of this
process per step (time slices given to other processes do not count), the median of the
per-repeat ratios to the laws-off robot, and the load average.

* the static solve of one pose (``solve_static`` of bend_north, no stability check): the
  static solver freezes the memories (its coupling table has ``creep_time = 0``: the creep
  strain is a given state, 0 on a fresh solver; ``play_frozen = 1``: the play's output is read
  from its memory, 0 on a fresh solver, the loading branch); per solve, the largest platform
  position difference to the laws-off pose is printed (creep: 0, bit for bit).

``--replay`` instead replays the measured elongation run (motion capture) on the implicit
integrator with the laws off, the creep, and the creep with the play (``--play`` pairs).

Usage::

    python benchmarks/bench_memory_laws.py [--repeat 9] [--steps 2000] [--implicit-steps 100]
        [--static-repeat 5] [--play 0.5,0.5]          # ~2 min (3 min at load 8)
    python benchmarks/bench_memory_laws.py --replay [--duration 0] [--dt 0.01]
        [--play 0.5,0.5 1,1] [--repeat 1]    # the whole elongation run: ~10 s per case and repeat
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

import numpy as np

CREEP = (0.22, 1000.0)  # validation/real_robot_creep.md
PLAY = (0.5, 0.5)  # half-width [rad/m], weight [-]
EXPLICIT_DT = 3e-5  # s, SimulationParams.dt default
CASES = ("laws off", "creep", "play", "creep + play")


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


def case_params(base: Any, name: str, play: tuple[float, float]) -> Any:
    """``base`` with the memory laws of case ``name`` (one of :data:`CASES`)."""
    rod = base.rod
    if "creep" in name:
        rod = rod.replace(creep_fraction=CREEP[0], creep_time=CREEP[1])
    if "play" in name:
        rod = rod.replace(hysteresis_width=play[0], hysteresis_weight=play[1])
    return base.replace(rod=rod)


def robots(integrator: str, dt: float, ramp: float, play: tuple[float, float]) -> dict[str, Any]:
    """The four robots of :data:`CASES` on ``integrator`` at ``dt`` [s], bend_north reached
    after ``ramp`` [s]."""
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot
    from hsa_elastica.robots.primitives import primitive_angles

    p = paper_robot_params()
    p = p.replace(simulation=p.simulation.replace(integrator=integrator, dt=dt, ramp_time=ramp))
    angles = [float(a) for a in primitive_angles("bend_north", 1.0, p)]
    return {name: build_fast_robot(case_params(p, name, play), angles, ramp=ramp, record=False)
            for name in CASES}


def time_steps(built: dict[str, Any], dt: float, steps: int, repeat: int) -> dict[str, list[float]]:
    """CPU time per step [us] of every robot in ``built``, ``repeat`` alternated repeats of
    ``steps`` steps (the order rotated every repeat)."""
    names = list(built)
    times: dict[str, list[float]] = {n: [] for n in names}
    for rep in range(repeat):
        order = names[rep % len(names):] + names[:rep % len(names)]
        for name in order:
            robot = built[name]
            cpu = time.process_time()
            robot.run(steps * dt)
            times[name].append((time.process_time() - cpu) / steps * 1e6)
    return times


def report(title: str, times: dict[str, list[float]], extra: dict[str, str] | None = None,
           unit: str = "us/step") -> None:
    """Median per step and median of the paired ratios to the first case."""
    ref = next(iter(times.values()))
    print(f"\n{title}")
    print(f"  {'case':<14} {unit:>10} {'min':>10} {'ratio':>7} {'ratio range':>13}  ")
    for name, t in times.items():
        ratios = [a / b for a, b in zip(t, ref)]
        print(f"  {name:<14} {statistics.median(t):10.2f} {min(t):10.2f} {statistics.median(ratios):7.3f} "
              f"{min(ratios):6.3f}-{max(ratios):.3f}  {(extra or {}).get(name, '')}")


def explicit(args: argparse.Namespace, play: tuple[float, float]) -> None:
    warm = 200
    ramp = (warm + args.repeat * args.steps * len(CASES)) * EXPLICIT_DT
    built = robots("explicit", EXPLICIT_DT, ramp, play)
    for r in built.values():
        r.run(warm * EXPLICIT_DT)  # compile / dispatch outside the timings
    times = time_steps(built, EXPLICIT_DT, args.steps, args.repeat)
    report(f"fused explicit step (FastRobot), dt {EXPLICIT_DT:g} s, {args.repeat} x {args.steps} steps",
           times)


def implicit(args: argparse.Namespace, play: tuple[float, float]) -> None:
    from hsa_elastica.params.base import DEFAULT_IMPLICIT_DT as dt

    warm = 5
    ramp = (warm + args.repeat * args.implicit_steps) * dt
    built = robots("implicit", dt, ramp, play)
    for r in built.values():
        r.run(warm * dt)
    start = {n: (r.engine.n_steps, r.engine.evaluations) for n, r in built.items()}
    times = time_steps(built, dt, args.implicit_steps, args.repeat)
    extra = {}
    for n, r in built.items():
        steps = r.engine.n_steps - start[n][0]
        extra[n] = f"{(r.engine.evaluations - start[n][1]) / max(steps, 1):.2f} evaluations/step"
    report(f"implicit integrator (ImplicitRobot), dt {dt:g} s, {args.repeat} x {args.implicit_steps} steps"
           ", motor ramp over the timed run", times, extra)


def static(args: argparse.Namespace, play: tuple[float, float]) -> None:
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots.primitives import primitive_angles
    from hsa_elastica.robots.statics_api import solve_static

    p = paper_robot_params()
    angles = [float(a) for a in primitive_angles("bend_north", 1.0, p)]
    params = {name: case_params(p, name, play) for name in CASES}
    for q in params.values():  # build and compile the cached solvers outside the timings
        solve_static(q, angles, check_stability=False, fallback=False)
    times: dict[str, list[float]] = {n: [] for n in CASES}
    pose: dict[str, Any] = {}
    for rep in range(args.static_repeat):
        order = CASES[rep % len(CASES):] + CASES[:rep % len(CASES)]
        for name in order:
            cpu = time.process_time()
            res = solve_static(params[name], angles, check_stability=False, fallback=False)
            times[name].append((time.process_time() - cpu) * 1e6)
            pose[name] = (np.asarray(res.platform_position_m), res.iterations)
    ref = pose["laws off"][0]
    extra = {n: f"{pose[n][1]} iterations, platform " + (
        "as laws off bit for bit" if np.array_equal(pose[n][0], ref) else
        f"{1e3 * float(np.abs(pose[n][0] - ref).max()):.3g} mm from laws off") for n in CASES}
    report(f"static solve of bend_north (solve_static, no stability check), {args.static_repeat} repeats",
           times, extra, unit="us/solve")


def replay_main(args: argparse.Namespace) -> None:
    """The measured run replayed on the implicit integrator (``--replay``)."""
    from hsa_elastica.experiments.timeseries import measured_series
    from hsa_elastica.params import resolve_params

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


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[1])
    ap.add_argument("--repeat", type=int, default=None,
                    help="alternated repeats of each case (default 9; --replay: 1)")
    ap.add_argument("--steps", type=int, default=2000, help="fused steps per repeat")
    ap.add_argument("--implicit-steps", type=int, default=100, help="implicit steps per repeat")
    ap.add_argument("--static-repeat", type=int, default=5, help="static solves per case")
    ap.add_argument("--only", nargs="*", choices=("explicit", "implicit", "static"),
                    default=["explicit", "implicit", "static"], help="the engines to time")
    ap.add_argument("--play", nargs="*", default=None,
                    help="play half-width [rad/m], weight pairs (default 0.5,0.5; --replay: 0.5,0.5 1,1)")
    ap.add_argument("--replay", action="store_true", help="replay the measured run instead")
    ap.add_argument("--run", default="elongation", help="--replay: the shipped run")
    ap.add_argument("--duration", type=float, default=0.0, help="--replay: s of the run (0: all)")
    ap.add_argument("--dt", type=float, default=0.01, help="--replay: implicit step [s]")
    args = ap.parse_args()
    if args.replay:
        args.repeat = args.repeat or 1
        args.play = ["0.5,0.5", "1,1"] if args.play is None else args.play
        replay_main(args)
        return
    args.repeat = args.repeat or 9
    r, w = (float(v) for v in (args.play or ["0.5,0.5"])[0].split(","))
    print(f"paper robot, bend_north; creep {CREEP[0]:g}, {CREEP[1]:g} s; play r = {r:g} rad/m, w = {w:g}")
    for part in args.only:
        {"explicit": explicit, "implicit": implicit, "static": static}[part](args, (r, w))
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1, 5, 15 min)")


if __name__ == "__main__":
    main()
