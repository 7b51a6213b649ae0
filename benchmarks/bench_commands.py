"""The implicit ``primitive`` command against its engine, side by side (real-time factors).

For each step ``dt``, in one run (the machine's load changes from minute to minute: compare the
ratios, not the absolute numbers of two runs):

* **command**: ``hsa-elastica primitive NAME --params P --duration D --out DIR`` in a fresh
  process, as a user runs it (``P``: the paper robot, ``simulation.integrator = implicit`` at
  ``dt``); its own real-time factor, ``sim_time_s / wall_time_s`` of ``DIR/summary.json``
  (the wall time from building the robot to the end of the run: building, compiling the model,
  the engine's set-up and loading its kernels from numba's cache included, with the
  recordings at 100 fps and the settling checks every 2 ms);
* **solve (warm)**: the same run (``solve_steady_state``, recording) a second time in this
  process: the command's loop without the one-time costs of a fresh process;
* **engine**: ``ImplicitRobot(...).run(0.03)`` until ``D`` (what
  ``benchmarks/bench_implicit.py`` measures: no recording, no settling checks, the robot
  built beforehand), wall time.

Each is measured ``--repeat`` times, interleaved; the table gives the medians and the ratios
command / engine and solve / engine.

Usage::

    python benchmarks/bench_commands.py                    # dt 2e-3 and 1e-3, 2 s, bend_east
    python benchmarks/bench_commands.py --steps 2e-3 --duration 5 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def command_rtf(name: str, params: str, duration: float, out: str) -> float:
    """Real-time factor of a ``primitive`` run in a fresh process, from its summary.json."""
    cli = os.path.join(os.path.dirname(sys.executable), "hsa-elastica")
    subprocess.run([cli, "primitive", name, "--params", params, "--duration", str(duration),
                    "--out", out, "--overwrite", "--quiet"], check=True)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return float(summary["sim_time_s"]) / float(summary["wall_time_s"])


def solve_rtf(p, u, duration: float) -> float:  # type: ignore[no-untyped-def]
    from hsa_elastica.robots.steady_state import solve_steady_state

    res = solve_steady_state(p, u, max_time=duration, stop_when_settled=False, record=True)
    return float(res.sim_time_s) / float(res.wall_time_s)


def engine_rtf(p, u, duration: float) -> float:  # type: ignore[no-untyped-def]
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import compiled_engine

    robot = compiled_engine(build_robot(p, u, record=False))
    t0 = time.perf_counter()
    while robot.time < duration - 1e-9:
        robot.run(0.03)
    return float(robot.time) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="2e-3,1e-3", help="comma-separated dt [s]")
    ap.add_argument("--duration", type=float, default=2.0, help="simulated time [s]")
    ap.add_argument("--primitive", default="bend_east")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from hsa_elastica.params import paper_robot_params, save_params
    from hsa_elastica.robots.primitives import primitive_angles

    print(f"{args.primitive}, {args.duration:g} s, implicit; real-time factors (medians of "
          f"{args.repeat}), wall time")
    print(f"{'dt [s]':>8} {'command':>8} {'solve':>8} {'engine':>8} {'cmd/engine':>11} "
          f"{'solve/engine':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for dt in (float(s) for s in args.steps.split(",")):
            base = paper_robot_params()
            p = base.replace(simulation=base.simulation.replace(integrator="implicit", dt=dt))
            u = primitive_angles(args.primitive, 1.0, p)
            path = os.path.join(tmp, f"implicit_{dt:g}.yaml")
            save_params(p, path)
            command_rtf(args.primitive, path, 0.1, os.path.join(tmp, "warm"))  # numba's cache
            solve_rtf(p, u, 0.1)
            cmd, solve, eng = [], [], []
            for _ in range(args.repeat):
                cmd.append(command_rtf(args.primitive, path, args.duration,
                                       os.path.join(tmp, "run")))
                solve.append(solve_rtf(p, u, args.duration))
                eng.append(engine_rtf(p, u, args.duration))
            c, s, e = (statistics.median(x) for x in (cmd, solve, eng))
            print(f"{dt:8.0e} {c:8.1f} {s:8.1f} {e:8.1f} {c / e:11.2f} {s / e:13.2f}")


if __name__ == "__main__":
    main()
