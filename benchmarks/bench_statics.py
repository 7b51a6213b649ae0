"""Static solver vs dynamic relaxation on the paper robot (issue 13), side by side in one run.

Poses: the seven motion primitives at magnitudes 0.25, 0.5, 0.75, 1 and ``--n`` random motor
angle sets (each rod only in its elongating direction, ``phi_i = h_i u_i pi`` with
``u_i ~ U(0, 1)``, seed fixed).  Each pose is solved by :func:`solve_steady_state` (dynamic
relaxation, default settings, fused loop) and by :func:`solve_static_batch` (all poses in one
batch, each started from the previous solution; warm numba cache and solver).  Printed: the
largest platform position / orientation differences, per-pose wall times (median, mean, max)
and the speed ratio.  Targets: 0.05 mm, 0.05 deg, median <= 20 ms per pose, >= 50x faster.

Run: python benchmarks/bench_statics.py [--n 100] [--skip-dynamic]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles
from hsa_elastica.robots.statics_api import solve_static_batch
from hsa_elastica.robots.steady_state import solve_steady_state


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
    args = ap.parse_args()
    p = paper_robot_params()
    names, rows = poses(p, args.n)

    solve_static_batch(p, rows[:3])  # numba compile / cache load, solver set-up
    t0 = time.perf_counter()
    static = solve_static_batch(p, rows)
    t_static = time.perf_counter() - t0
    w_static = np.array([r.wall_time_s for r in static])

    print(f"{len(rows)} poses; static batch total {t_static:.2f} s")
    print(f"static per pose: median {np.median(w_static) * 1e3:.1f} ms, mean "
          f"{w_static.mean() * 1e3:.1f} ms, max {w_static.max() * 1e3:.1f} ms; "
          f"methods: {sum(r.method == 'static' for r in static)} static, "
          f"{sum(r.method != 'static' for r in static)} dynamic fallback; "
          f"unstable: {sum(r.stable is False for r in static)}")
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
    print(f"  median wall time per pose: static {np.median(w_static) * 1e3:.1f} ms, "
          f"dynamic {np.median(w_dyn_a) * 1e3:.0f} ms")
    print(f"  speed ratio (median dynamic / median static) {np.median(w_dyn_a) / np.median(w_static):.0f}x;"
          f" total {w_dyn_a.sum():.1f} s / {t_static:.2f} s = {w_dyn_a.sum() / t_static:.0f}x")


if __name__ == "__main__":
    main()
