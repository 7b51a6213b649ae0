"""Where a cold start's numba compile time goes, kernel by kernel, engine by engine.

Each workload runs in a fresh subprocess with an empty ``NUMBA_CACHE_DIR`` and the parallel
precompilation off (``HSA_ELASTICA_PRECOMPILE=0``), so it compiles every kernel it calls, in
its own process, one after the other.  A listener on numba's compile events
(``numba:compile``: a dispatcher compiling one signature; ``numba:run_pass``: one compiler pass
of it) charges the CPU time of the compiling thread to the kernel being compiled at that moment,
*exclusive* of the callees compiled inside it (numba compiles an uncompiled callee during its
caller's type inference), split into

* ``typing``: type inference (``nopython_type_inference`` and the partial typing passes);
* ``llvm``: lowering to LLVM IR, the LLVM optimisation of the kernel's module with every
  cached callee's module linked in, and machine code (``native_lowering``);
* ``other``: the untyped and typed rewrite passes (``inline="always"`` inlining included),
  cache writing.

Workloads (``--engine``): ``implicit`` = ``primitive bend_north --integrator implicit`` (run
until settled: the settling watch) and three primitives for 0.3 s through the API; ``fused`` =
``primitive bend_north --duration 0.5`` on the explicit default; ``implicit-cli`` = the
implicit workload's command alone (with ``--warm``); ``stock`` = a plain PyElastica
1.0 simulation of the robot's size (``benchmarks/bench_cold_start.py``'s yardstick: 4 rods of
25 elements, gravity, damping, 100 steps).  All chosen workloads run in the same invocation,
one after the other, so their numbers are comparable under the same machine load; CPU seconds
(not wall) are what to compare on a shared machine.

Usage::

    python benchmarks/compile_cost.py                       # implicit, fused, stock
    python benchmarks/compile_cost.py --engine implicit --top 40
    python benchmarks/compile_cost.py --engine implicit --baseline /path/to/other/checkout

``--baseline DIR`` runs each chosen workload of the checkout ``DIR`` as well (its package first
on ``PYTHONPATH``), right before this checkout's (rows ``ENGINE@base``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "benchmarks"))

from bench_cold_start import STOCK  # noqa: E402  (the same yardstick)

#: after the implicit workload's command: three primitives on the implicit integrator for
#: 0.3 s through the API, their final rod and body arrays saved to ``$COMPILE_COST_DUMP`` (an
#: ``.npz``) when set (``--dump``: the trajectories of two versions compared bit for bit)
DUMP = """
import os
import numpy as np
from hsa_elastica import build_fast_robot, paper_robot_params
from hsa_elastica.robots.primitives import primitive_angles
params = paper_robot_params()
params = params.replace(simulation=params.simulation.replace(integrator="implicit", dt=2e-3))
final = {}
for name in ("bend_north", "twist_cw", "elongation"):
    robot = build_fast_robot(params, primitive_angles(name, 1.0, params), record=False)
    robot.run(0.3)
    for part, arrays in (("rod", robot.rod_arrays), ("body", robot.body_arrays)):
        for field in ("position", "director", "velocity", "omega"):
            final[f"{name}/{part}/{field}"] = np.array(getattr(arrays, field))
if os.environ.get("COMPILE_COST_DUMP"):
    np.savez(os.environ["COMPILE_COST_DUMP"], **final)
"""

#: workload -> Python code run in the child after the listener is installed
WORKLOADS: dict[str, str] = {
    "implicit": ("from hsa_elastica.cli import main\n"
                 "assert main(['primitive', 'bend_north', '--integrator', 'implicit',"
                 " '--quiet']) == 0\n" + DUMP),
    "implicit-cli": ("from hsa_elastica.cli import main\n"
                     "assert main(['primitive', 'bend_north', '--integrator', 'implicit',"
                     " '--quiet']) == 0\n"),
    "fused": ("from hsa_elastica.cli import main\n"
              "assert main(['primitive', 'bend_north', '--duration', '0.5', '--quiet']) == 0\n"),
    "stock": STOCK,
}

#: the child: a listener charging thread CPU time to the kernel on top of the compile stack
CHILD = r'''
import json, sys, time
from numba.core import event

TYPING = ("nopython_type_inference", "partial_type_inference", "nopython_partial_type_inference")
rows = {}          # key -> [typing, llvm, other, signatures]
stack = []         # [key, pass name or None]
last = [time.thread_time()]


def charge():
    now = time.thread_time()
    if stack:
        key, pss = stack[-1]
        row = rows[key]
        if pss is None:
            row[2] += now - last[0]
        elif pss in TYPING:
            row[0] += now - last[0]
        elif pss == "native_lowering":
            row[1] += now - last[0]
        else:
            row[2] += now - last[0]
    last[0] = now


class Compiles(event.Listener):
    def on_start(self, ev):
        charge()
        f = ev.data["dispatcher"].py_func
        key = f"{f.__module__}:{f.__qualname__}"
        rows.setdefault(key, [0.0, 0.0, 0.0, 0])[3] += 1
        stack.append([key, None])

    def on_end(self, ev):
        charge()
        stack.pop()


class Passes(event.Listener):
    def on_start(self, ev):
        charge()
        if stack:
            stack[-1][1] = ev.data["name"].split(" [")[0]

    def on_end(self, ev):
        charge()
        if stack:
            stack[-1][1] = None


event.register("numba:compile", Compiles())
event.register("numba:run_pass", Passes())
t0 = time.perf_counter()
try:
    exec(compile(open(sys.argv[2]).read(), "workload", "exec"))
finally:  # what was compiled, also when the workload failed
    wall = time.perf_counter() - t0
    with open(sys.argv[1], "w") as f:
        json.dump({"rows": rows, "wall": wall}, f)
if len(sys.argv) > 3:  # the kernel table's rows of this run (benchmarks/make_kernel_table.py)
    from hsa_elastica.engines.precompile import compiled_here
    with open(sys.argv[3], "w") as f:
        json.dump(compiled_here(), f)
'''


def measure(code: str, base: Path | None = None, dump: Path | None = None,
            keep: Path | None = None, warm: tuple[Path, str] | None = None) -> dict:
    """Run ``code`` cold in a child (``$COMPILE_COST_DUMP=dump``); its compile rows, wall time
    and CPU time [s].  ``keep``: a new directory for numba's cache (kept) and the kernel
    table's rows of the run (``keep/rows.json``); default a temporary one.  ``warm = (DIR,
    GLOB)``: the cache starts as a copy of the cache ``DIR`` without its files matching
    ``GLOB`` (those kernels compiled, the others loaded)."""
    with tempfile.TemporaryDirectory(prefix="compile-cost-") as tmp:
        out, script = Path(tmp) / "rows.json", Path(tmp) / "workload.py"
        script.write_text(code, encoding="utf-8")
        path = [str(base)] if base is not None else []
        cache = Path(tmp) / "cache" if keep is None else keep / "cache"
        if warm is not None:
            shutil.copytree(warm[0], cache, dirs_exist_ok=True)
            for stale in cache.glob(warm[1]):
                stale.unlink()
        table_rows = [] if keep is None else [str(keep / "rows.json")]
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
               "HSA_ELASTICA_PRECOMPILE": "0",
               "PYTHONPATH": os.pathsep.join([*path, str(HERE)]),
               "COMPILE_COST_DUMP": "" if dump is None else str(dump),
               **({"HSA_ELASTICA_CACHE_CHECK": "0"} if warm is not None else {})}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", CHILD, str(out), str(script),
                               *table_rows], env=env, check=False, cwd=tmp,
                              stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = json.loads(out.read_text())
    if proc.returncode != 0:
        print(f"(the workload failed, exit {proc.returncode}: its compiles so far)")
    result["process_wall"] = wall
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def _group(key: str) -> str:
    """Kernels of the package and of PyElastica by name; numba's own overloads in one row."""
    return key if key.startswith(("hsa_elastica", "elastica")) else "(numba's overloads)"


def report(label: str, result: dict, top: int) -> None:
    """The per-kernel table of one workload, largest exclusive time first."""
    merged: dict[str, list[float]] = {}
    for key, (typing, llvm, other, sigs) in result["rows"].items():
        row = merged.setdefault(_group(key), [0.0, 0.0, 0.0, 0])
        for k, v in enumerate((typing, llvm, other, sigs)):
            row[k] += v
    total = [sum(r[k] for r in merged.values()) for k in range(4)]
    print(f"\n== {label}: process CPU {result['process_cpu']:.1f} s, wall "
          f"{result['process_wall']:.1f} s; compiling {sum(total[:3]):.1f} s CPU (typing "
          f"{total[0]:.1f}, llvm {total[1]:.1f}, other {total[2]:.1f}) in {int(total[3])} "
          f"compilations of {len(merged)} kernels")
    print(f"{'kernel':<72} {'sigs':>4} {'total':>7} {'typing':>7} {'llvm':>7} {'other':>7}")
    order = sorted(merged.items(), key=lambda kv: -sum(kv[1][:3]))
    for key, (typing, llvm, other, sigs) in order[:top]:
        name = key if len(key) <= 72 else "..." + key[-69:]
        print(f"{name:<72} {int(sigs):>4} {typing + llvm + other:7.1f} {typing:7.1f} "
              f"{llvm:7.1f} {other:7.1f}")
    rest = order[top:]
    if rest:
        s = [sum(r[k] for _, r in rest) for k in range(4)]
        print(f"{'(' + str(len(rest)) + ' more kernels)':<72} {int(s[3]):>4} "
              f"{sum(s[:3]):7.1f} {s[0]:7.1f} {s[1]:7.1f} {s[2]:7.1f}")


def compare(folder: Path) -> None:
    """The implicit workload's final states of this checkout against the baseline's (or a
    ``before.npz`` left in ``folder``): the largest difference of each array."""
    import numpy as np

    mine = folder / "implicit.npz"
    other = next((p for p in (folder / "implicit@base.npz", folder / "before.npz")
                  if p.exists()), None)
    if not mine.exists() or other is None:
        return
    a, b = np.load(mine), np.load(other)
    worst = max((float(np.max(np.abs(a[k] - b[k]), initial=0.0)), k) for k in a.files)
    same = all(np.array_equal(a[k], b[k]) for k in a.files)
    print(f"\nfinal states of {len(a.files)} arrays vs {other.name}: "
          + ("bit-identical" if same else f"largest difference {worst[0]:.3g} ({worst[1]})"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", nargs="+", choices=list(WORKLOADS),
                        default=["implicit", "fused", "stock"])
    parser.add_argument("--top", type=int, default=25, help="kernels listed per workload")
    parser.add_argument("--baseline", type=Path, help="another checkout, run before this one")
    parser.add_argument("--json", type=Path, help="write the raw rows to this file")
    parser.add_argument("--dump", type=Path, help="directory: the implicit workload's final "
                        "states as implicit.npz (implicit@base.npz), compared bit for bit")
    parser.add_argument("--keep", type=Path, help="new directory: this checkout's numba cache "
                        "and kernel table rows of the last workload (make_kernel_table --rows)")
    parser.add_argument("--warm", nargs=2, metavar=("DIR", "GLOB"), help="start from a copy "
                        "of the cache DIR without its files matching GLOB (e.g. "
                        "'engines_*/implicit*': only the implicit engine's kernels compiled)")
    parser.add_argument("--warm-base", type=Path, metavar="DIR",
                        help="the baseline's cache for --warm (default: DIR of --warm)")
    args = parser.parse_args()
    raw = {}
    for engine in args.engine:
        labels = [(f"{engine}@base", args.baseline.resolve())] if args.baseline else []
        for label, base in [*labels, (engine, None)]:
            dump = None if args.dump is None else args.dump / f"{label}.npz"
            warm = None
            if args.warm:
                where = args.warm_base if base is not None and args.warm_base else args.warm[0]
                warm = (Path(where), args.warm[1])
            raw[label] = measure(WORKLOADS[engine], base, dump,
                                 args.keep if base is None else None, warm)
            report(label, raw[label], args.top)
    if args.dump is not None:
        compare(args.dump)
    print("\nworkload           process CPU [s]   wall [s]   compiling CPU [s]")
    for label, result in raw.items():
        comp = sum(sum(r[:3]) for r in result["rows"].values())
        print(f"{label:<18} {result['process_cpu']:15.1f} {result['process_wall']:10.1f} "
              f"{comp:19.1f}")
    if args.json is not None:
        args.json.write_text(json.dumps(raw), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
