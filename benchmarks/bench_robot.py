"""Speed of the four-rod HSA robot (issues 2 and 5), side by side with stock PyElastica 1.0.

Measured in ONE run on one core (numbers move with machine load: each timing is the best of
``--repeat`` repetitions):

* stock PyElastica 1.0: four plain ``CosseratRod`` (25 elements, the paper rod's geometry and
  moduli) from the bases of the robot, tilted so their tips meet at the centre of a
  ``Cylinder`` (the paper platform), each tied to it with ``FixedJoint(k=5e5, nu=0, kt=20)`` (rest rotation = the initial one),
  ``OneEndFixedBC`` bases and ``AnalyticalLinearDamper(20 1/s)`` on every system;
* our robot (``build_robot``, per-rod operators, ``Robot.run``);
* our robot on the fused path (``hsa_elastica.fast``, ``FastRobot.run``).

Per-step cost does not depend on dt; the real-time factor is ``dt / (wall time per step)``,
printed for the paper's dt = 4e-5 s (unstable for the paper robot, see docs/performance.md)
and for the stable dt.  Also: warm start and cold start (empty ``NUMBA_CACHE_DIR``) in a
subprocess, peak memory (``ru_maxrss``) of a 15 s simulated run with diagnostics at 100 fps,
and the wall time of a steady state of bend-north at full magnitude (if
``hsa_elastica/steady_state.py`` exists).

Usage::

    python benchmarks/bench_robot.py            # everything (~3 min; cold start ~1-2 min)
    python benchmarks/bench_robot.py --quick    # timings only
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import math
import os
import platform as _platform
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np

PAPER_DT = 4e-5  # s, the paper's time step
STABLE_DT = 3.5e-5  # s, largest stable dt of the paper robot found (docs/performance.md)


# --------------------------------------------------------------------------------------------
# systems
# --------------------------------------------------------------------------------------------
def stock_robot(dt: float) -> tuple[Any, Any, list[Any]]:
    """Stock PyElastica 1.0: 4 rods + Cylinder + FixedJoint (+ fixed bases, damping)."""
    from elastica import (
        AnalyticalLinearDamper,
        BaseSystemCollection,
        Connections,
        Constraints,
        CosseratRod,
        Cylinder,
        Damping,
        FixedJoint,
        OneEndFixedBC,
        PositionVerlet,
    )

    from hsa_elastica.params import paper_robot_params

    class Stock(BaseSystemCollection, Constraints, Connections, Damping):
        pass

    p = paper_robot_params()
    rp, pp = p.rod, p.platform
    sim = Stock()
    top = np.array([0.0, 0.0, rp.length])
    rods = []
    for i in range(p.n_rods):
        base = np.array(p.rod_base(i), dtype=np.float64)
        axis = top - base
        length = float(np.linalg.norm(axis))
        d3 = axis / length
        radial = np.array([base[0], base[1], 0.0])
        normal = np.cross(d3, np.cross(radial, d3))
        normal /= np.linalg.norm(normal)
        rod = CosseratRod.straight_rod(
            rp.n_elements,
            base,
            d3,
            normal,
            length,
            rp.equivalent_radius,
            rp.density,
            youngs_modulus=rp.youngs_modulus,
            shear_modulus=rp.shear_modulus,
        )
        sim.append(rod)
        rods.append(rod)
    body = Cylinder(
        start=top - np.array([0.0, 0.0, 0.5 * pp.thickness]),
        direction=np.array([0.0, 0.0, 1.0]),
        normal=np.array([1.0, 0.0, 0.0]),
        base_length=pp.thickness,
        base_radius=pp.radius,
        density=pp.density,
    )
    sim.append(body)
    for rod in rods:
        sim.constrain(rod).using(
            OneEndFixedBC, constrained_position_idx=(0,), constrained_director_idx=(0,)
        )
        sim.connect(rod, body, first_connect_idx=-1, second_connect_idx=0).using(
            FixedJoint,
            k=5e5,
            nu=0.0,
            kt=20.0,
            rest_rotation_matrix=rod.director_collection[..., -1] @ body.director_collection[..., 0].T,
        )
        sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=dt)
    sim.dampen(body).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=dt)  # type: ignore[arg-type]
    sim.finalize()
    return sim, PositionVerlet(), [*rods, body]


def paper_params(dt: float, **changes: Any) -> Any:
    from hsa_elastica.params import paper_robot_params

    p = paper_robot_params()
    return dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, dt=dt, **changes))


def bend_north(params: Any) -> list[float]:
    from hsa_elastica.primitives import primitive_angles

    return [float(a) for a in primitive_angles("bend_north", 1.0, params)]


# --------------------------------------------------------------------------------------------
# timings
# --------------------------------------------------------------------------------------------
def time_stock(dt: float, steps: int) -> float:
    sim, stepper, systems = stock_robot(dt)
    t = np.float64(0.0)
    for _ in range(20):  # warm-up (numba dispatch, first joint call)
        t = stepper.step(sim, t, dt)
    w = time.perf_counter()
    for _ in range(steps):
        t = stepper.step(sim, t, dt)
    wall = (time.perf_counter() - w) / steps
    assert all(np.isfinite(s.position_collection).all() for s in systems), "stock run diverged"
    return wall


def time_robot(dt: float, steps: int, fast: bool, record: bool = True) -> float:
    from hsa_elastica.fast import build_fast_robot
    from hsa_elastica.robot import build_robot

    params = paper_params(dt)
    angles = bend_north(params)
    robot = (build_fast_robot if fast else build_robot)(params, angles, record=record)
    robot.run(20 * dt)  # warm-up
    w = time.perf_counter()
    robot.run(steps * dt)
    return (time.perf_counter() - w) / steps


# --------------------------------------------------------------------------------------------
# subprocess measurements
# --------------------------------------------------------------------------------------------
_START = r"""
import time
t0 = time.perf_counter()
from hsa_elastica.fast import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.primitives import primitive_angles
p = paper_robot_params()
r = build_fast_robot(p, primitive_angles("bend_north", 1.0, p), record=True)
r.run(r.dt)
print(time.perf_counter() - t0)
"""

_MEMORY = r"""
import dataclasses, resource, sys, time
from hsa_elastica.fast import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.primitives import primitive_angles
p = paper_robot_params()
p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, dt={dt!r}, record_fps=100.0))
r = build_fast_robot(p, primitive_angles("elongation", 0.5, p), record=True)
w = time.perf_counter()
status = "ok"
try:
    r.run(15.0)
except Exception as exc:  # report a blow-up instead of hiding the memory number
    status = type(exc).__name__ + " at t = %.3f s" % r.time
df = r.diagnostics()
wall = time.perf_counter() - w
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, len(df), df.shape[1], wall, status)
"""


def subprocess_seconds(code: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(seconds printed by the child, total wall incl. interpreter start)."""
    w = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    total = time.perf_counter() - w
    return float(out.stdout.strip().splitlines()[-1]), total


def warm_and_cold_start(cold: bool) -> dict[str, tuple[float, float]]:
    out = {}
    subprocess_seconds(_START)  # make sure the cache is populated
    out["warm"] = subprocess_seconds(_START)
    if cold:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, NUMBA_CACHE_DIR=tmp)
            out["cold"] = subprocess_seconds(_START, env)
    return out


def peak_memory(dt: float) -> str:
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY.format(dt=dt)], capture_output=True, text=True, check=True
    )
    rss, rows, cols, wall, *status = out.stdout.split()
    return (
        f"{float(rss):.0f} MB max RSS (fast path, 15 s simulated at dt = {dt:g} s, "
        f"{int(rows)} samples x {int(cols)} columns, run wall {float(wall):.1f} s, "
        f"status {' '.join(status)})"
    )


# --------------------------------------------------------------------------------------------
# steady state
# --------------------------------------------------------------------------------------------
def steady_state(dt: float, fast: bool, max_time: float = 4.0) -> str:
    """Bend-north, full magnitude, from rest: wall time to settle (steady_state's test)."""
    from hsa_elastica import steady_state as ss

    params = paper_params(dt)
    angles = bend_north(params)
    w = time.perf_counter()
    try:
        if not fast:
            res = ss.solve_steady_state(params, angles, max_time=max_time, record=False)
            return (
                f"reference: converged={res.converged} at {res.sim_time_s:.3f} s simulated, "
                f"wall {time.perf_counter() - w:.1f} s, platform {res.platform_position_m * 1e3} mm"
            )
        from hsa_elastica.fast import build_fast_robot

        robot = build_fast_robot(params, angles, record=False)
        chk = max(1, int(round(0.002 / dt)))
        ramp_end = params.simulation.ramp_time
        settled_since = None
        while robot.time < ramp_end + max_time:
            robot.run(chk * dt, check_every=chk)
            s = ss.robot_state(robot)  # type: ignore[arg-type]
            if robot.time >= ramp_end and s["max_speed"] < 1e-4 and s["platform_omega"] < 1e-3:
                settled_since = robot.time if settled_since is None else settled_since
                if robot.time - settled_since >= 0.05:
                    return (
                        f"fast: converged at {robot.time:.3f} s simulated, wall "
                        f"{time.perf_counter() - w:.1f} s, platform "
                        f"{s['platform_position_m'] * 1e3} mm"
                    )
            else:
                settled_since = None
        return f"fast: not converged by {robot.time:.3f} s, wall {time.perf_counter() - w:.1f} s"
    except Exception as exc:  # the paper robot's coupling instability (docs/stability.md)
        return f"{'fast' if fast else 'reference'}: {type(exc).__name__}: {exc} (wall {time.perf_counter() - w:.1f} s)"


# --------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="timings only (no start/memory/steady state)")
    ap.add_argument("--no-cold", action="store_true", help="skip the cold (empty numba cache) start")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--steps", type=int, default=2000, help="steps timed for the slow paths")
    args = ap.parse_args(argv)

    dt = 2e-5  # timing dt: stable for every path; cost per step does not depend on dt
    print(f"machine: {_platform.processor() or _platform.machine()}, {os.cpu_count()} cores, "
          f"Python {_platform.python_version()}, load average {os.getloadavg()[0]:.2f}")
    from importlib.metadata import version

    print(f"pyelastica {version('pyelastica')}, numba {version('numba')}, numpy {version('numpy')}")
    paths: list[tuple[str, Callable[[], float]]] = [
        ("stock PyElastica 1.0 (4 rods + Cylinder + FixedJoint)", lambda: time_stock(dt, args.steps)),
        ("hsa-elastica, per-rod operators (Robot.run)", lambda: time_robot(dt, args.steps, fast=False)),
        ("hsa-elastica, fused path (FastRobot.run)", lambda: time_robot(dt, 10 * args.steps, fast=True)),
    ]
    # interleaved repetitions (A B C A B C ...), best of each: fair under a varying load
    best = [math.inf] * len(paths)
    for _ in range(args.repeat):
        for k, (_, fn) in enumerate(paths):
            best[k] = min(best[k], fn())
    rows = [(name, b) for (name, _), b in zip(paths, best)]
    stock = rows[0][1]
    print()
    print(f"| path | µs/step | real-time factor at dt {PAPER_DT:g} s | at dt {STABLE_DT:g} s | speed-up vs stock |")
    print("|---|---:|---:|---:|---:|")
    for name, wall in rows:
        print(
            f"| {name} | {wall * 1e6:.1f} | {PAPER_DT / wall:.2f} | {STABLE_DT / wall:.2f} | {stock / wall:.2f}x |"
        )
    print()
    if args.quick:
        return
    starts = warm_and_cold_start(cold=not args.no_cold)
    for key, (inside, total) in starts.items():
        print(f"{key} start (import + build + first step): {inside:.2f} s in-process, {total:.2f} s incl. interpreter")
    print("peak memory:", peak_memory(2e-5))
    if importlib.util.find_spec("hsa_elastica.steady_state") is not None:
        print("steady state bend-north full, dt 2e-5 s:", steady_state(2e-5, fast=True))
        print("steady state bend-north full, dt 2e-5 s:", steady_state(2e-5, fast=False))
    else:
        print("steady state: hsa_elastica/steady_state.py not found")


if __name__ == "__main__":
    main()
