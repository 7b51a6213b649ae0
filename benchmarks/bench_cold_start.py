"""Cold vs warm start of every entry point: numba compilation on first use.

Every entry point runs twice in a fresh subprocess: *cold*, with an empty numba cache (its own
new ``NUMBA_CACHE_DIR``, so every kernel it runs is compiled), then *warm*, with the cache the
cold run filled.  Printed side by side for each: wall time and CPU time (user + sys of the
process and its children, e.g. Dask workers) of both runs, their ratio, the cold-minus-warm
difference (what the first run costs), and the longest time the process printed nothing while it
ran (stdout and stderr are pipes, so progress bars are off and the compile notice of
:mod:`hsa_elastica.io.compile_notice` writes a heartbeat line every second).

``stock`` is the yardstick: the first run of a plain PyElastica 1.0 simulation of the robot's
size (4 rods of 25 elements, gravity, damping, 100 steps; public API only); with it among the
chosen entry points, every cold run is also printed as a ratio to stock's cold run.
``compile`` is ``hsa-elastica compile`` (every kernel of the table, on every core);
``primitive-1proc`` is ``primitive`` with ``HSA_ELASTICA_PRECOMPILE=0``: every kernel compiled
in the command's own process, one after the other, as before the parallel first run.

The machine this project runs on is shared (2 cores, several agents): absolute wall times
depend on the load, so the CPU times and the cold/warm ratios of one run are what to compare
between versions.  Target: ``primitive bend_north --still x.png`` cold within 1.2x the wall time
of ``stock`` cold, in the same run.

Usage::

    python benchmarks/bench_cold_start.py                      # all entry points, ~15-30 min
    python benchmarks/bench_cold_start.py --only primitive api  # a subset
    python benchmarks/bench_cold_start.py --only stock primitive  # ratio to plain PyElastica
    python benchmarks/bench_cold_start.py --list
    python benchmarks/bench_cold_start.py --only primitive --baseline /path/to/other/checkout
    python benchmarks/bench_cold_start.py --pty                # warm, on a pseudo-terminal

``--baseline DIR`` runs every chosen entry point of the checkout ``DIR`` too (its package first
on ``PYTHONPATH``), right before this checkout's, so that a change is compared under the same
load (rows ``NAME@base``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

#: Python code of the library entry points (run with ``python -c``)
API = (
    "from hsa_elastica import build_fast_robot, paper_robot_params\n"
    "robot = build_fast_robot(paper_robot_params(), [0.5, -0.5, 0.5, -0.5])\n"
    "robot.run(0.01)\n"
)
GYM = (
    "import gymnasium as gym\n"
    "import hsa_elastica\n"
    "env = gym.make('HSARobot-v1')\n"
    "env.reset(seed=0)\n"
    "env.step(env.action_space.sample())\n"
)

#: stock PyElastica 1.0, public API only: 4 rods of 25 elements, gravity, damping, 100 steps (the
#: first run of a plain PyElastica simulation of the robot's size: what a cold ``primitive``
#: is compared with)
STOCK = (
    "import numpy as np\n"
    "import elastica as ea\n"
    "class Sim(ea.BaseSystemCollection, ea.Constraints, ea.Forcing, ea.Damping):\n"
    "    pass\n"
    "sim, dt = Sim(), 1e-5\n"
    "for k in range(4):\n"
    "    rod = ea.CosseratRod.straight_rod(25, np.array([0.02 * k, 0.0, 0.0]),\n"
    "        np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), 0.1, 0.005, 1200.0,\n"
    "        youngs_modulus=1e7)\n"
    "    sim.append(rod)\n"
    "    sim.constrain(rod).using(ea.OneEndFixedBC, constrained_position_idx=(0,),\n"
    "                             constrained_director_idx=(0,))\n"
    "    sim.add_forcing_to(rod).using(ea.GravityForces, acc_gravity=np.array([0.0, 0.0, -9.81]))\n"
    "    sim.dampen(rod).using(ea.AnalyticalLinearDamper, damping_constant=0.1, time_step=dt)\n"
    "sim.finalize()\n"
    "ea.integrate(ea.PositionVerlet(), sim, final_time=100 * dt, n_steps=100, progress_bar=False)\n"
    "assert np.isfinite(rod.position_collection).all()\n"
)

#: a CLI command compiling in its own process only, as before the parallel first run
SERIAL = (
    "import os, sys\n"
    "os.environ['HSA_ELASTICA_PRECOMPILE'] = '0'\n"
    "from hsa_elastica.cli import main\n"
    "sys.exit(main({args!r}))\n"
)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hsa_elastica.cli", *args]


def entry_points(tmp: Path) -> dict[str, list[str]]:
    """name -> command line, writing into ``tmp`` (each run gets a fresh ``tmp``)."""
    return {
        "primitive": _cli("primitive", "bend_north", "--still", str(tmp / "x.png")),
        "steady-state": _cli("steady-state", "--angles", "0.5", "-0.5", "0.5", "-0.5"),
        "steady-state-csv": _cli("steady-state", "--angles-csv", str(tmp / "angles.csv"),
                                 "--out", str(tmp / "poses.csv")),
        "dataset": _cli("dataset", "--random", "20", "--seed", "0", "--workers", "2",
                        "--out", str(tmp / "ds")),
        "calibrate": _cli("calibrate", "--data", "elongation", "--params", "fpu_robot_2022",
                          "--free", "rod.C_eps", "--max-poses", "2", "--max-evaluations", "2",
                          "--out", str(tmp / "fitted.yaml")),
        "render": _cli("render", str(tmp / "run"), "--still", str(tmp / "r.png")),
        "api": [sys.executable, "-c", API],
        "gym": [sys.executable, "-c", GYM],
        "primitive-1proc": [sys.executable, "-c", SERIAL.format(args=[
            "primitive", "bend_north", "--still", str(tmp / "x.png")])],
        "compile": _cli("compile"),
        "stock": [sys.executable, "-c", STOCK],
    }


def _prepare(name: str, tmp: Path, env: dict[str, str]) -> None:
    """Inputs of an entry point: the batch CSV, the run directory ``render`` reads (made with
    the benchmark's own warm cache, not the one being measured)."""
    (tmp / "angles.csv").write_text("angle_0,angle_1,angle_2,angle_3\n"
                                    "0.5,-0.5,0.5,-0.5\n1.0,-1.0,1.0,-1.0\n0.3,-0.6,0.9,-1.2\n")
    if name == "render" and not (tmp / "run").exists():
        subprocess.run(_cli("primitive", "bend_north", "--duration", "0.05", "--quiet", "--out",
                            str(tmp / "run")), env=env, check=True, capture_output=True)


@dataclass
class Run:
    wall: float  # s
    cpu: float  # s, user + sys of the process and its waited-for children
    first_output: float  # s from start to the first line on stdout/stderr
    max_gap: float  # s, longest time without a line (start and end included)
    compile_gap: float  # s, longest time without a line while kernels compile
    returncode: int
    tail: str


def run_once(cmd: list[str], env: dict[str, str], cwd: Path) -> Run:
    """Run ``cmd``; time stamps of every output line are taken as they arrive."""
    stamps: list[float] = []
    lines: list[str] = []  # in arrival order, as stamps
    lock = threading.Lock()

    def reader(stream: object) -> None:
        for raw in iter(stream.readline, b""):  # type: ignore[attr-defined]
            with lock:
                stamps.append(time.perf_counter())
                lines.append(raw.decode(errors="replace").rstrip())

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    threads = [threading.Thread(target=reader, args=(s,), daemon=True)
               for s in (proc.stdout, proc.stderr)]
    for t in threads:
        t.start()
    code = proc.wait()
    t1 = time.perf_counter()
    for t in threads:
        t.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    times = [t0, *stamps, t1]
    gaps = [b - a for a, b in zip(times, times[1:])]
    # while compiling: from a notice line that is not the summary to the next line
    compiling = [b - a for a, b, text in zip(stamps, stamps[1:], lines)
                 if "compiling" in text and not text.startswith("compiled")]
    return Run(wall=t1 - t0, cpu=cpu, first_output=(stamps[0] - t0) if stamps else t1 - t0,
               max_gap=max(gaps), compile_gap=max(compiling, default=0.0), returncode=code,
               tail="\n".join(lines[-3:]))


def run_on_pty(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """Run ``cmd`` on a pseudo-terminal, as a person at a terminal sees it: (wall [s], the
    longest time nothing was written [s], exit code).  Any bytes count as output (a progress
    bar's ``\\r`` refresh is visible on a terminal)."""
    import pty
    import select

    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, with the environment and directory asked for
        os.chdir(cwd)
        os.execvpe(cmd[0], cmd, env)
    last, gap = t0, 0.0
    while True:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # the child closed the terminal (exited)
            break
        if not data:
            break
        now = time.perf_counter()
        gap, last = max(gap, now - last), now
    _, status = os.waitpid(pid, 0)
    end = time.perf_counter()
    return end - t0, max(gap, end - last), os.waitstatus_to_exitcode(status)


def pty_table(chosen: list[str], root: Path) -> int:
    """``--pty``: every chosen entry point warm (numba's cache filled by a first run in a
    pipe) on a pseudo-terminal: wall time and the longest silence a person at a terminal
    sees (target: none over 2 s)."""
    print(f"{'entry point':18s} {'warm wall':>9s} {'longest silence':>15s}  (on a terminal)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])}
    failed = 0
    for name in chosen:
        tmp = Path(tempfile.mkdtemp(dir=root))
        _prepare(name, tmp, env)
        warmup = run_once(entry_points(tmp)[name], env, tmp)
        for sub in ("x.png", "poses.csv", "ds", "fitted.yaml", "r.png"):
            path = tmp / sub
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        wall, gap, code = run_on_pty(entry_points(tmp)[name], env, tmp)
        failed += int(warmup.returncode != 0 or code != 0)
        print(f"{name:18s} {wall:8.1f}s {gap:14.1f}s" + ("" if code == 0 else f"  exit {code}"),
              flush=True)
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="entry points to run (default: all)")
    ap.add_argument("--list", action="store_true", help="list the entry points and exit")
    ap.add_argument("--baseline", metavar="DIR", type=Path,
                    help="another checkout to run before this one, entry point by entry point")
    ap.add_argument("--pty", action="store_true",
                    help="warm runs on a pseudo-terminal: the longest silence a person sees")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as root:
        names = list(entry_points(Path(root)))
        if args.list:
            for name, cmd in entry_points(Path(root)).items():
                print(f"{name:18s} {' '.join(cmd[1:]).replace(chr(10), '; ')[:110]}")
            return 0
        chosen = args.only or names
        unknown = sorted(set(chosen) - set(names))
        if unknown:
            print(f"unknown entry point(s) {unknown}; choose from {names}", file=sys.stderr)
            return 2
        if args.pty:
            return pty_table(chosen, Path(root))
        roots = [("", HERE)]
        if args.baseline is not None:
            if not (args.baseline / "hsa_elastica" / "__init__.py").is_file():
                print(f"--baseline {args.baseline}: not a checkout of hsa-elastica", file=sys.stderr)
                return 2
            roots.insert(0, ("@base", args.baseline.resolve()))
        print(f"{'entry point':18s} {'cold wall':>9s} {'warm wall':>9s} {'ratio':>6s} "
              f"{'cold CPU':>9s} {'warm CPU':>9s} {'ratio':>6s} {'1st run costs':>13s} "
              f"{'silent cold':>11s} {'compiling':>9s} {'1st line':>8s}")
        failed = 0
        colds: dict[str, Run] = {}
        for name in chosen:
            for suffix, code in roots:
                base_env = dict(os.environ)
                base_env["PYTHONPATH"] = os.pathsep.join(
                    [str(code), *filter(None, [base_env.get("PYTHONPATH")])])
                tmp = Path(tempfile.mkdtemp(dir=root))
                _prepare(name, tmp, base_env)
                cache = tempfile.mkdtemp(prefix="numba-cache-", dir=root)
                env = {**base_env, "NUMBA_CACHE_DIR": cache}
                cold = run_once(entry_points(tmp)[name], env, tmp)
                for sub in ("x.png", "poses.csv", "ds", "fitted.yaml", "r.png"):
                    path = tmp / sub
                    shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
                warm = run_once(entry_points(tmp)[name], env, tmp)
                for r, label in ((cold, "cold"), (warm, "warm")):
                    if r.returncode != 0:
                        failed += 1
                        print(f"  {name}{suffix} {label}: exit {r.returncode}\n{r.tail}",
                              file=sys.stderr)
                print(f"{name + suffix:18s} {cold.wall:8.1f}s {warm.wall:8.1f}s "
                      f"{cold.wall / warm.wall:6.1f} {cold.cpu:8.1f}s {warm.cpu:8.1f}s "
                      f"{cold.cpu / max(warm.cpu, 1e-9):6.1f} {cold.cpu - warm.cpu:11.1f}s  "
                      f"{cold.max_gap:10.1f}s {cold.compile_gap:8.1f}s {cold.first_output:7.1f}s",
                      flush=True)
                shutil.rmtree(cache, ignore_errors=True)
                colds[name + suffix] = cold
        if "stock" in colds:  # the first run of a plain PyElastica simulation as the yardstick
            stock = colds["stock"]
            print(f"\ncold run / stock PyElastica's cold run ({stock.wall:.1f} s wall, "
                  f"{stock.cpu:.1f} s CPU):")
            for key, cold in colds.items():
                if key != "stock":
                    print(f"  {key:18s} wall {cold.wall / stock.wall:5.2f}x   "
                          f"CPU {cold.cpu / stock.cpu:5.2f}x")
        print("\nwall/CPU in s; ratio = cold / warm; '1st run costs' = cold CPU - warm CPU; "
              "'silent cold' = longest time without an output line in the cold run (off a terminal "
              "the simulation itself prints nothing), 'compiling' = the same while kernels "
              "compile, '1st line' = time to its first line (imports, setup).  Target: primitive "
              "cold wall <= 1.2x stock's.")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
