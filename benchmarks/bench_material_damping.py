#!/usr/bin/env python
"""Cost of the Kelvin-Voigt material damping per fused step (target <= 1.3x).

Two fused paper robots (bend_north, 25 elements/rod, dt 3e-5 s, no recording) are built in ONE
process: the default model and the same model with the four retardation times at 0 (no
material damping in the step).  They are timed in alternating repeats of ``--steps`` steps
each (CPU time of this process per step, so that time slices given to other processes on a
shared machine do not count), and the medians and the median of the per-pair ratios are printed.
Alternation puts both sides under the same machine load; the median of the ratios is robust
to load spikes of the shared machine.

``--dump FILE`` writes (instead of timing) the state of a short run of the damped robot (``--dump-steps``
steps from the start of the ramp) to a .npz, and ``--compare FILE`` prints the largest
difference against such a file (to check that a change of the kernel keeps trajectories to
round-off).

Usage::

    python benchmarks/bench_material_damping.py [--steps 2000] [--repeat 31]   # ~1 min
    python benchmarks/bench_material_damping.py --kernel      # the kernel alone
    python benchmarks/bench_material_damping.py --dump ref.npz   # then --compare ref.npz
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from typing import Any

import numpy as np

DT = 3e-5  # s, SimulationParams.dt default


def build(material_damping: bool, record: bool = False) -> Any:
    from hsa_elastica.params import RETARDATION_FIELDS, paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot
    from hsa_elastica.robots.primitives import primitive_angles

    p = paper_robot_params()
    p = p.replace(simulation=p.simulation.replace(dt=DT))
    if not material_damping:
        p = p.replace(rod=p.rod.replace(**{f: 0.0 for f in RETARDATION_FIELDS}))
    angles = [float(a) for a in primitive_angles("bend_north", 1.0, p)]
    return build_fast_robot(p, angles, record=record)


def state(robot: Any) -> dict[str, np.ndarray]:
    m = robot.model
    return {
        "position": m.rod_arrays.position.copy(),
        "velocity": m.rod_arrays.velocity.copy(),
        "omega": m.rod_arrays.omega.copy(),
        "director": m.rod_arrays.director.copy(),
        "body_position": m.body_arrays.position.copy(),
        "body_velocity": m.body_arrays.velocity.copy(),
    }


def time_kernel(steps: int, repeat: int) -> float:
    """Best time [us] of the Kelvin-Voigt update of all rods of the compiled model, state
    restored before every call (so the rates do not decay to denormals)."""
    from numba import njit

    from hsa_elastica.physics.forces import apply_material_damping

    @njit
    def loop(n, m, rod, v0, w0):  # type: ignore[no-untyped-def]
        for _ in range(n):
            rod.velocity[:] = v0
            rod.omega[:] = w0
            for i in range(m.n_elems.shape[0]):
                apply_material_damping(m, i, rod)

    @njit
    def copy_only(n, m, rod, v0, w0):  # type: ignore[no-untyped-def]
        for _ in range(n):
            rod.velocity[:] = v0
            rod.omega[:] = w0

    r = build(True)
    r.run(2000 * DT)  # mid-ramp: moving rods
    m = r.model
    rod = m.rod_arrays
    v0 = rod.velocity.copy()
    w0 = rod.omega.copy()
    loop(1, m.tables.material, rod, v0, w0)
    copy_only(1, m.tables.material, rod, v0, w0)
    best = math.inf
    for _ in range(repeat):
        w = time.process_time()
        loop(steps, m.tables.material, rod, v0, w0)
        t1 = time.process_time() - w
        w = time.process_time()
        copy_only(steps, m.tables.material, rod, v0, w0)
        t2 = time.process_time() - w
        best = min(best, (t1 - t2) / steps * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=2000, help="steps per timed repeat")
    ap.add_argument("--repeat", type=int, default=31, help="alternating repeats per side")
    ap.add_argument("--dump", default=None, help="write the state of a short damped run (.npz)")
    ap.add_argument("--compare", default=None, help="compare a short damped run with a .npz")
    ap.add_argument("--dump-steps", type=int, default=20000, help="steps of the short run")
    ap.add_argument("--kernel", action="store_true", help="time the Kelvin-Voigt kernel alone")
    a = ap.parse_args()

    if a.kernel:
        print(f"Kelvin-Voigt update, all rods: {time_kernel(a.steps, a.repeat):.2f} us/step (best)")
        return

    if a.dump or a.compare:
        r = build(True)
        r.run(a.dump_steps * DT)
        s = state(r)
        if a.dump:
            np.savez(a.dump, **s)
            print(f"wrote {a.dump} (t = {r.time:.4f} s)")
        if a.compare:
            ref = np.load(a.compare)
            for k, v in s.items():
                d = float(np.max(np.abs(v - ref[k])))
                scale = float(np.max(np.abs(ref[k]))) or 1.0
                print(f"  {k:14s} max |diff| {d:.3e}  (relative {d / scale:.3e})")
        return

    robots = {"with": build(True), "without": build(False)}
    for r in robots.values():
        r.run(200 * DT)  # warm-up: compile/dispatch, start the ramp
    times: dict[str, list[float]] = {"with": [], "without": []}
    for rep in range(a.repeat):
        order = ("with", "without") if rep % 2 == 0 else ("without", "with")
        for key in order:
            r = robots[key]
            w = time.process_time()
            r.run(a.steps * DT)
            times[key].append((time.process_time() - w) / a.steps * 1e6)
    ratios = [w / o for w, o in zip(times["with"], times["without"])]
    mw = statistics.median(times["with"])
    mo = statistics.median(times["without"])
    print(f"paper robot, fused, bend_north, dt {DT:g} s, {a.repeat} x {a.steps} steps per side")
    lo = min(times["without"])
    print(f"  without material damping: {mo:8.2f} us/step (median; min {lo:.2f})")
    print(f"  with material damping:    {mw:8.2f} us/step (median; min {min(times['with']):.2f})")
    print(f"  ratio (median of paired ratios): {statistics.median(ratios):.3f}x "
          f"(range {min(ratios):.3f}-{max(ratios):.3f}; ratio of medians {mw / mo:.3f}x; "
          f"ratio of minima {min(times['with']) / min(times['without']):.3f}x)")


if __name__ == "__main__":
    main()
