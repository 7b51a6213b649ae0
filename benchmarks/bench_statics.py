"""Static solver vs dynamic relaxation on the paper robot, side by side in one run.

Poses: the seven motion primitives at magnitudes 0.25, 0.5, 0.75, 1 and ``--n`` random motor
angle sets (each rod only in its elongating direction, ``phi_i = h_i u_i pi`` with
``u_i ~ U(0, 1)``, seed fixed).  Each pose is solved by :func:`solve_steady_state` (dynamic
relaxation, default settings, fused loop) and by :func:`solve_static_batch` (all poses in one
batch, each started from the previous solution; warm numba cache and solver).  Printed: the
largest platform position / orientation differences, per-pose wall times (median, mean, max)
and the speed ratio.  Targets: 0.05 mm, 0.05 deg, median <= 20 ms per pose, >= 50x faster.

Timing on a shared machine: besides the wall time, the CPU time of each static solve is
printed (the one-core cost, which the machine's load barely changes), with the load average.
``--baseline DIR`` also times another checkout of the package (e.g. the previous commit, in a
git worktree) on the same poses, in a second process of this run, so old and new solvers are
compared side by side under the same load.  BLAS is limited to one thread (one core).

Run: python benchmarks/bench_statics.py [--n 100] [--skip-dynamic] [--baseline DIR]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from hsa_elastica.params import paper_robot_params  # noqa: E402
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles  # noqa: E402
from hsa_elastica.robots.statics_api import solve_static_batch  # noqa: E402
from hsa_elastica.robots.steady_state import solve_steady_state  # noqa: E402

#: run in a second process with another checkout first on sys.path: times its batch solver
_BASELINE = """
import json, sys, time, numpy as np
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.statics_api import solve_static_batch
p = paper_robot_params()
rows = np.array(json.loads(sys.stdin.read()))
solve_static_batch(p, rows[:3])
c0, t0 = time.process_time(), time.perf_counter()
res = solve_static_batch(p, rows)
print(json.dumps(dict(cpu=time.process_time() - c0, wall=time.perf_counter() - t0,
                      walls=[r.wall_time_s for r in res],
                      pos=[r.platform_position_m.tolist() for r in res])))
"""


def run_baseline(directory: str, rows: np.ndarray) -> dict:  # type: ignore[type-arg]
    """Times ``solve_static_batch`` of the checkout ``directory`` on ``rows`` (subprocess)."""
    env = dict(os.environ, PYTHONPATH=os.path.abspath(directory))
    out = subprocess.run([sys.executable, "-c", _BASELINE], input=json.dumps(rows.tolist()),
                         capture_output=True, text=True, env=env, cwd=directory, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def load() -> str:
    return "load average %.1f %.1f %.1f (%d cores)" % (*os.getloadavg(), os.cpu_count() or 0)


def rotation_angle_deg(q1: np.ndarray, q2: np.ndarray) -> float:
    """Angle [deg] of the rotation between two unit quaternions."""
    return math.degrees(2.0 * math.acos(min(1.0, abs(float(np.dot(q1, q2))))))


def poses(params, n_random: int, seed: int = 13):  # type: ignore[no-untyped-def]
    names, rows = [], []
    for name in PRIMITIVES:
        for m in (0.25, 0.5, 0.75, 1.0):
            names.append(f"{name} {m:g}")
            rows.append(primitive_angles(name, m, params))
    rng = np.random.default_rng(seed)
    h = np.asarray(params.handedness, dtype=float)
    for k in range(n_random):
        names.append(f"random {k}")
        rows.append(h * math.pi * rng.uniform(0.0, 1.0, params.n_rods))
    return names, np.array(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100, help="random angle sets (default 100)")
    ap.add_argument("--skip-dynamic", action="store_true", help="time the static solver only")
    ap.add_argument("--baseline", metavar="DIR", help="also time the checkout DIR's batch solver")
    args = ap.parse_args()
    p = paper_robot_params()
    names, rows = poses(p, args.n)

    print(load())
    solve_static_batch(p, rows[:3])  # numba compile / cache load, solver set-up
    base = run_baseline(args.baseline, rows) if args.baseline else None
    c0, t0 = time.process_time(), time.perf_counter()
    static = solve_static_batch(p, rows)
    t_static, c_static = time.perf_counter() - t0, time.process_time() - c0
    w_static = np.array([r.wall_time_s for r in static])
    cpu = np.array([r.cpu_time_s for r in static])
    rnd = np.array([n.startswith("random") for n in names])

    print(f"{len(rows)} poses; static batch total {t_static:.2f} s wall, {c_static:.2f} s CPU; "
          + load())
    for label, sel in (("all poses", slice(None)), ("random poses", rnd)):
        print(f"static per pose, {label}: wall median {np.median(w_static[sel]) * 1e3:.1f} ms, "
              f"mean {w_static[sel].mean() * 1e3:.1f} ms, max {w_static[sel].max() * 1e3:.1f} ms;"
              f" CPU median {np.nanmedian(cpu[sel]) * 1e3:.1f} ms, mean "
              f"{np.nanmean(cpu[sel]) * 1e3:.1f} ms")
    print(f"methods: {sum(r.method == 'static' for r in static)} static, "
          f"{sum(r.method != 'static' for r in static)} dynamic fallback; "
          f"unstable: {sum(r.stable is False for r in static)}")
    if base is not None:
        wb = np.array(base["walls"])
        dpos_b = np.abs(np.array(base["pos"]) - np.array([r.platform_position_m for r in static]))
        print(f"baseline {args.baseline}: batch total {base['wall']:.2f} s wall, "
              f"{base['cpu']:.2f} s CPU; per pose wall median {np.median(wb) * 1e3:.1f} ms "
              f"(random poses {np.median(wb[rnd]) * 1e3:.1f} ms), CPU mean "
              f"{base['cpu'] / len(rows) * 1e3:.1f} ms; this checkout / baseline: total CPU "
              f"{c_static / base['cpu']:.2f}, median wall {np.median(w_static) / np.median(wb):.2f};"
              f" largest platform position difference {dpos_b.max() * 1e3:.2e} mm")
    if args.skip_dynamic:
        return

    dpos, dang, w_dyn = [], [], []
    print(f"\n{'pose':<16}{'|dx| mm':>10}{'dq deg':>10}{'static ms':>11}{'dynamic s':>11}  method")
    for name, a, st in zip(names, rows, static):
        dyn = solve_steady_state(p, a, record=False)
        w_dyn.append(dyn.wall_time_s)
        dx = float(np.max(np.abs(st.platform_position_m - dyn.platform_position_m)))
        dq = rotation_angle_deg(st.platform_quaternion_xyzw, dyn.platform_quaternion_xyzw)
        dpos.append(dx)
        dang.append(dq)
        flag = "" if dyn.converged else " (dynamic not converged)"
        print(f"{name:<16}{dx * 1e3:>10.5f}{dq:>10.5f}{st.wall_time_s * 1e3:>11.1f}"
              f"{dyn.wall_time_s:>11.2f}  {st.method}{flag}")
    w_dyn_a = np.array(w_dyn)
    print("\nsummary (targets: 0.05 mm, 0.05 deg, median <= 20 ms, >= 50x)")
    print(f"  max platform position difference   {max(dpos) * 1e3:.5f} mm")
    print(f"  max platform orientation difference {max(dang):.5f} deg")
    print("  " + load())
    print(f"  median wall time per pose: static {np.median(w_static) * 1e3:.1f} ms, "
          f"dynamic {np.median(w_dyn_a) * 1e3:.0f} ms")
    print(f"  speed ratio (median dynamic / median static) {np.median(w_dyn_a) / np.median(w_static):.0f}x;"
          f" total {w_dyn_a.sum():.1f} s / {t_static:.2f} s = {w_dyn_a.sum() / t_static:.0f}x")


if __name__ == "__main__":
    main()
