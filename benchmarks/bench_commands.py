"""The implicit ``primitive`` command against its engine, side by side (real-time factors), and
where the command's wall time goes.

For each step ``dt``, in one run (the machine's load changes from minute to minute: compare the
ratios, not the absolute numbers of two runs):

* **command**: ``hsa-elastica primitive NAME --params P --duration D --out DIR --quiet`` in a
  fresh process, as a user runs it (``P``: the paper robot, ``simulation.integrator =
  implicit`` at ``dt``); its real-time factor ``real_time_factor`` of ``DIR/summary.json``
  (``sim_time_s / wall_time_s``, the simulation loop: the steps, the settling checks every
  2 ms, the recordings at 100 fps);
* **solve (warm)**: the same run (``solve_steady_state``, recording) a second time in this
  process: its ``real_time_factor``; **copies**: the same with the recorders' samples taken
  from copies of each recorded instant replayed through PyElastica's callbacks after each
  engine call (the way any callback is served) instead of inside the loop
  (``robots/loop_samples.py``); **no rec.**: the same without recording;
* **engine**: ``ImplicitRobot(...).run(0.03)`` until ``D`` (what
  ``benchmarks/bench_implicit.py`` measures: no recording, no settling checks, the robot
  built and the kernels loaded beforehand), wall time.

Each is measured ``--repeat`` times, interleaved; the table gives the medians and the ratios
to the engine's.  A second table splits the command's wall time (medians,
from the outside: spawn to exit): the interpreter's start and the CLI's imports, building the
robot, compiling its model and setting up the engine, loading the kernels from numba's cache,
the simulation loop (``wall_time_s``), the rest of the solve (the settling watch's set-up, the
recorded frame, the stability and symmetry checks), writing the run directory, and the rest (argument and parameter checks, the
process's exit); the command's ``setup_wall_time_s`` and ``command_wall_time_s`` from its
summary.  The command runs under this script (``--child``), which times those parts by wrapping
the functions that do them and otherwise runs ``hsa_elastica.cli.main`` as the console script
does (its process ends as the console script's does).

Usage::

    python benchmarks/bench_commands.py                    # dt 2e-3 and 1e-3, 2 s, bend_east
    python benchmarks/bench_commands.py --steps 2e-3 --duration 5 --repeat 5
"""

from __future__ import annotations

import argparse
import atexit
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from typing import Any, Callable

#: the parts of the command's wall time, in the order of the second table
PARTS = ("start+imports", "build", "model+engine", "kernels", "loop", "solve other", "writing",
         "rest")


def _child(argv: list[str]) -> None:
    """Run ``hsa-elastica ARGV`` in this process with its parts timed; print them (JSON) on
    stdout.  ``argv[0]``: the parent's ``time.time()`` at the spawn."""
    spawned = float(argv[0])
    started = time.time()
    t0 = time.perf_counter()
    import hsa_elastica.cli as cli
    import hsa_elastica.io.rundir as rundir
    import hsa_elastica.robots.compiled as compiled
    import hsa_elastica.robots.settling_watch as watch
    import hsa_elastica.robots.steady_state as steady

    parts: dict[str, float] = defaultdict(float)
    parts["start+imports"] = started - spawned + time.perf_counter() - t0

    def timed(owner: Any, name: str, part: str) -> None:
        f: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(f)  # its signature: steady_state() checks the keywords against it
        def g(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                parts[part] += time.perf_counter() - t

        setattr(owner, name, g)

    timed(steady, "build_robot", "build")
    timed(compiled, "compiled_engine", "model+engine")
    timed(compiled.FastRobot, "load_kernels", "kernels")
    timed(watch, "_load_kernels", "kernels")
    timed(steady, "solve_steady_state", "solve")
    timed(rundir, "save_run", "writing")
    def report() -> None:  # (at exit: the console script's way to end, as a user runs it)
        print(json.dumps(parts), flush=True)

    atexit.register(report)
    sys.argv = ["hsa-elastica", *argv[1:]]
    sys.exit(cli.main())


def command_run(name: str, params: str, duration: float, out: str) -> dict[str, float]:
    """A ``primitive`` run in a fresh process: its summary's real-time factor and the parts of
    its wall time [s] (:data:`PARTS`)."""
    spawned = time.time()
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", repr(spawned), "primitive", name,
         "--params", params, "--duration", str(duration), "--out", out, "--overwrite", "--quiet"],
        check=True, capture_output=True, text=True)
    total = time.perf_counter() - t0
    p = json.loads(done.stdout.strip().splitlines()[-1])
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    loop = float(summary["wall_time_s"])
    kernels = p.get("kernels", 0.0)
    # the rest of the solve: the settling watch's set-up, the recorded frame, the symmetry and
    # stability checks
    other = p["solve"] - p["build"] - p["model+engine"] - kernels - loop
    row = {"start+imports": p["start+imports"], "build": p["build"],
           "model+engine": p["model+engine"], "kernels": kernels, "loop": loop,
           "solve other": other, "writing": p["writing"]}
    row["rest"] = total - sum(row.values())
    row.update(total=total, rtf=float(summary["real_time_factor"]),
               setup=float(summary["setup_wall_time_s"]),
               command=float(summary["command_wall_time_s"]))
    return row


def solve_rtf(p, u, duration: float, record: bool = True,  # type: ignore[no-untyped-def]
              copies: bool = False) -> float:
    """The real-time factor of a settling run; ``copies``: the recorders' samples from copies
    of each instant replayed through the callbacks instead of taken inside the loop."""
    from hsa_elastica.robots.loop_samples import LoopSamples
    from hsa_elastica.robots.settling import SettleOptions
    from hsa_elastica.robots.steady_state import solve_steady_state

    make = LoopSamples.__dict__["make"]
    if copies:
        LoopSamples.make = classmethod(lambda cls, *a: None)  # type: ignore[method-assign, assignment]
    try:
        res = solve_steady_state(p, u, settle=SettleOptions(max_time=duration),
                                 stop_when_settled=False, record=record)
    finally:
        LoopSamples.make = make  # type: ignore[method-assign]
    return float(res.real_time_factor)


def engine_rtf(p, u, duration: float) -> float:  # type: ignore[no-untyped-def]
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import compiled_engine

    robot = compiled_engine(build_robot(p, u, record=False))
    robot.load_kernels()
    t0 = time.perf_counter()
    while robot.time < duration - 1e-9:
        robot.run(0.03)
    return float(robot.time) / (time.perf_counter() - t0)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", default="2e-3,1e-3", help="comma-separated dt [s]")
    ap.add_argument("--duration", type=float, default=2.0, help="simulated time [s]")
    ap.add_argument("--primitive", default="bend_east")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from hsa_elastica.params import paper_robot_params, save_params
    from hsa_elastica.robots.primitives import primitive_angles

    rows: list[str] = []
    splits: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for dt in (float(s) for s in args.steps.split(",")):
            base = paper_robot_params()
            p = base.replace(simulation=base.simulation.replace(integrator="implicit", dt=dt))
            u = primitive_angles(args.primitive, 1.0, p)
            path = os.path.join(tmp, f"implicit_{dt:g}.yaml")
            save_params(p, path)
            command_run(args.primitive, path, 0.1, os.path.join(tmp, "warm"))  # numba's cache
            solve_rtf(p, u, 0.1)
            solve_rtf(p, u, 0.1, record=False)
            engine_rtf(p, u, 0.1)
            cmd: list[dict[str, float]] = []
            solve, copies, bare, eng = [], [], [], []
            for _ in range(args.repeat):
                cmd.append(command_run(args.primitive, path, args.duration,
                                       os.path.join(tmp, "run")))
                solve.append(solve_rtf(p, u, args.duration))
                copies.append(solve_rtf(p, u, args.duration, copies=True))
                bare.append(solve_rtf(p, u, args.duration, record=False))
                eng.append(engine_rtf(p, u, args.duration))
            med = {k: statistics.median(r[k] for r in cmd) for k in cmd[0]}
            s, k, b, e = (statistics.median(x) for x in (solve, copies, bare, eng))
            c = med["rtf"]
            rows.append(f"{dt:8.0e} {c:8.1f} {s:8.1f} {k:8.1f} {b:8.1f} {e:8.1f} {c / e:11.2f} "
                        f"{s / e:13.2f} {k / e:13.2f} {b / e:9.2f}")
            splits.append(f"{dt:8.0e} " + " ".join(f"{med[k]:>{max(len(k), 6)}.3f}" for k in PARTS)
                          + f" {med['total']:7.3f} {med['setup']:7.3f} {med['command']:8.3f}")
    print(f"{args.primitive}, {args.duration:g} s, implicit; real-time factors (medians of "
          f"{args.repeat}), wall time")
    print(f"{'dt [s]':>8} {'command':>8} {'solve':>8} {'copies':>8} {'no rec.':>8} "
          f"{'engine':>8} {'cmd/engine':>11} {'solve/engine':>13} {'copies/engine':>13} "
          f"{'no rec./e':>9}")
    print("\n".join(rows))
    print(f"\nthe command's wall time [s] (medians of {args.repeat}; total from spawn to exit; "
          "setup_wall_time_s and command_wall_time_s of summary.json)")
    print(f"{'dt [s]':>8} " + " ".join(f"{k:>6}" for k in PARTS)
          + f" {'total':>7} {'setup':>7} {'command':>8}")
    print("\n".join(splits))


if __name__ == "__main__":
    main()
