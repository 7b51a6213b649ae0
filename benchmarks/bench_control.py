#!/usr/bin/env python
"""Speed of closed-loop control of the paper robot, measured side by side in one run.

* **Env throughput**: ``HSARobot-v0`` steps per second at a 20 ms control step (fused path,
  one core, warm numba cache) with commands that change every step, and the real-time factor
  ``simulated time / wall time`` (target: >= 100 env steps/s, i.e. 2x real time).
* **Step-API overhead**: the same simulated time and motor trajectory three ways --
  ``run(T)`` in one call with a fixed schedule, ``step(0.02)`` with a fixed command, and
  ``step(0.02)`` with a new command every 20 ms (target: changing commands < 10 % over fixed).
* **Kelvin-Voigt damping**: the fused step with and without the material damper (the four
  ``retardation_time_*`` set to 0), same robot otherwise (target <= 1.3x).
* both for the paper discretization (25 elements per rod, dt = 3e-5 s;
  ``HSARobotEnv(discretization="full")``) and for the coarse one (``--coarse``, default 10
  elements, dt = 6e-5 s, the environment's default for the paper robot,
  ``discretization="coarse"``: a numerical choice, within 0.4 mm of the 25-element steady
  poses).

Each timing is the best of ``--repeat`` interleaved repetitions (the machine is shared; compare
the ratios, which are measured in the same run, more than the absolute numbers).  The load
average is printed.

Usage::

    python benchmarks/bench_control.py                 # paper and coarse discretization
    python benchmarks/bench_control.py --coarse 12 5e-5
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from typing import Any, Callable

import numpy as np

CONTROL_DT = 0.02  # s
#: the clock of every timing: wall time, or with --cpu-time this process's CPU time (on a
#: shared machine it leaves out the time other processes hold the core; on an idle core the
#: two agree)
CLOCK = time.perf_counter


def make_params(elements: int | None, dt: float | None) -> Any:
    from hsa_elastica.params import paper_robot_params

    p = paper_robot_params()
    if elements is not None:
        p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, n_elements=elements))
    if dt is not None:
        p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, dt=dt))
    return p


def commands(n: int) -> np.ndarray:
    """A smooth command sequence inside the elongating ranges (R, L, R, L), 20 ms apart."""
    t = CONTROL_DT * np.arange(n)[:, None]
    h = np.array([1.0, -1.0, 1.0, -1.0])
    phase = np.array([0.0, 1.5, 3.0, 4.5])
    return h * (1.2 + 0.8 * np.sin(2.0 * np.pi * 1.0 * t + phase))


def time_env(params: Any, n_steps: int) -> float:
    import hsa_elastica.envs  # noqa: F401
    from hsa_elastica.envs import HSARobotEnv

    # the fused explicit loop this benchmark measures: the params' integrator, unlimited motors
    env = HSARobotEnv(params, integrator=None, motor_speed=None)
    env.reset(seed=0)
    env.step(env.angles_to_action(np.zeros(4)))  # warm: loads the cached kernels
    u = np.array([env.angles_to_action(c) for c in commands(n_steps)])  # normalised actions
    t0 = CLOCK()
    for k in range(n_steps):
        env.step(u[k])
    return CLOCK() - t0


def _robot(params: Any, schedules: list[Any] | None = None) -> Any:
    from hsa_elastica.robots.compiled import FastRobot
    from hsa_elastica.robots.builders import build_robot

    robot = build_robot(params, schedules or [0.0] * 4, record=False)
    return FastRobot(robot, chunk=int(np.ceil(CONTROL_DT / robot.dt)) + 1)


def time_run_fixed(params: Any, n_steps: int) -> float:
    robot = _robot(params, [float(a) for a in commands(1)[0]])
    robot.run(CONTROL_DT)
    t0 = CLOCK()
    robot.run(n_steps * CONTROL_DT)
    return CLOCK() - t0


def without_material_damping(params: Any) -> Any:
    rod = dataclasses.replace(
        params.rod, retardation_time_axial=0.0, retardation_time_shear=0.0,
        retardation_time_bend=0.0, retardation_time_twist=0.0,
    )
    return dataclasses.replace(params, rod=rod)


def time_step(params: Any, n_steps: int, changing: bool) -> float:
    robot = _robot(params)
    u = commands(n_steps)
    robot.set_motor_angles(u[0])
    robot.step(CONTROL_DT)
    t0 = CLOCK()
    for k in range(n_steps):
        if changing:
            robot.set_motor_angles(u[k])
        robot.step(CONTROL_DT)
    return CLOCK() - t0


def time_command_change(params: Any, calls: int, changing: bool) -> float:
    """Wall time [s] per ``set_motor_angles`` + ``step`` call of ONE internal step: the
    per-interval cost of the step API itself (the kernel work of one step is the same)."""
    robot = _robot(params)
    # a new command each call, changing by 1 urad (one-step intervals: a 20 ms command
    # sequence here would turn the motors at ~3000 rad/s and blow the rods up)
    u = commands(1)[0] + 1e-6 * np.arange(calls)[:, None]
    robot.set_motor_angles(u[0])
    robot.step(0.1)  # reach the first command slowly
    t0 = CLOCK()
    for k in range(calls):
        if changing:
            robot.set_motor_angles(u[k])
        robot.step(robot.dt)
    return (CLOCK() - t0) / calls


def best(fns: dict[str, Callable[[], float]], repeat: int) -> dict[str, float]:
    out = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():  # interleaved: load changes hit all alike
            out[k] = min(out[k], f())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=50, help="control steps per timing (20 ms each)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--coarse", nargs=2, default=("10", "6e-5"), metavar=("ELEMENTS", "DT"),
                    help="coarse discretization: elements per rod and dt [s] (default 10 6e-5)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time with this process's CPU time instead of the wall clock (shared machines)")
    args = ap.parse_args(argv)
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time
    for params in (make_params(None, None), make_params(int(args.coarse[0]), float(args.coarse[1]))):
        report(params, args.steps, args.repeat)
        print()
    return 0


def report(params: Any, n: int, repeat: int) -> None:
    sim_time = n * CONTROL_DT
    print(f"paper robot, {params.rod.n_elements} elements/rod, dt = {params.simulation.dt:g} s, "
          f"{n} control steps of {CONTROL_DT * 1e3:g} ms = {sim_time:g} s simulated; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"{'CPU time' if CLOCK is time.process_time else 'wall time'}")
    res = best(
        {
            "env": lambda: time_env(params, n),
            "run_fixed": lambda: time_run_fixed(params, n),
            "run_no_kv": lambda: time_run_fixed(without_material_damping(params), n),
            "step_fixed": lambda: time_step(params, n, changing=False),
            "step_changing": lambda: time_step(params, n, changing=True),
        },
        repeat,
    )
    per_call = best(
        {
            "fixed": lambda: time_command_change(params, 300, changing=False),
            "changing": lambda: time_command_change(params, 300, changing=True),
        },
        repeat,
    )
    steps_per_internal = sim_time / params.simulation.dt
    print()
    print(f"{'measurement':52s} {'time [s]':>9s} {'env steps/s':>12s} {'real-time x':>12s} {'us/step':>8s}")
    labels = {
        "env": "HSARobot-v0 env.step (commands change every step)",
        "run_fixed": "FastRobot.run(T), fixed schedule (no step API)",
        "run_no_kv": "  the same without Kelvin-Voigt damping",
        "step_fixed": "step(20 ms), fixed command",
        "step_changing": "step(20 ms), new command every step",
    }
    for key, label in labels.items():
        w = res[key]
        print(f"{label:52s} {w:9.3f} {n / w:12.1f} {sim_time / w:12.2f} {w / steps_per_internal * 1e6:8.1f}")
    print()
    print(f"env throughput: {n / res['env']:.1f} env steps/s (target >= 100), "
          f"real-time factor {sim_time / res['env']:.2f} (target >= 2)")
    print(f"Kelvin-Voigt damping: {res['run_fixed'] / steps_per_internal * 1e6:.1f} us/step with, "
          f"{res['run_no_kv'] / steps_per_internal * 1e6:.1f} us/step without: "
          f"{res['run_fixed'] / res['run_no_kv']:.2f}x (target <= 1.3x)")
    print(f"step-API overhead, changing vs fixed command: "
          f"{(res['step_changing'] / res['step_fixed'] - 1) * 100:+.1f} % (target < 10 %); "
          f"changing commands vs one run(T): {(res['step_changing'] / res['run_fixed'] - 1) * 100:+.1f} %")
    interval = res["step_fixed"] / n  # wall time of one 20 ms interval, fixed command
    extra = per_call["changing"] - per_call["fixed"]
    print(f"per-call cost of a one-step step(): fixed {per_call['fixed'] * 1e6:.0f} us, changing "
          f"{per_call['changing'] * 1e6:.0f} us; the command change adds {extra * 1e6:.0f} us = "
          f"{extra / interval * 100:.2f} % of a 20 ms interval ({interval * 1e3:.1f} ms wall); the "
          f"whole step-API call is {per_call['changing'] / interval * 100:.1f} % of it")


if __name__ == "__main__":
    raise SystemExit(main())
