"""Speed of the four-rod HSA robot, side by side with stock PyElastica 1.0.

Measured in ONE run on one core (numbers move with machine load: each timing is the best of
``--repeat`` repetitions):

* stock PyElastica 1.0: four plain ``CosseratRod`` (25 elements, the paper rod's geometry and
  moduli) from the bases of the robot, tilted so their tips meet at the centre of a
  ``Cylinder`` (the paper platform), each tied to it with ``FixedJoint(k=5e5, nu=0, kt=20)`` (rest rotation = the initial one),
  ``OneEndFixedBC`` bases and ``AnalyticalLinearDamper(20 1/s)`` on every system;
* our robot (``build_robot``, per-rod operators, ``Robot.run``);
* our robot on the fused path (``hsa_elastica.engines.fused``, ``FastRobot.run``; the default of
  ``solve_steady_state`` and of the CLI).

Per-step cost does not depend on dt; the real-time factor is ``dt / (wall time per step)``,
printed for the default dt = 3e-5 s and the paper's dt = 4e-5 s (unstable for the paper
robot, see docs/performance.md).  Also: warm start and cold start (empty
``NUMBA_CACHE_DIR``) in a subprocess, peak memory (``ru_maxrss``) of a 15 s simulated run with
diagnostics at 100 fps, and the steady state of bend-north at full magnitude with the
default parameters (wall time, fused and reference; pose against a long fixed-duration run).

Usage::

    python benchmarks/bench_robot.py            # everything (~4 min; cold start ~1 min)
    python benchmarks/bench_robot.py --quick    # timings only
"""

from __future__ import annotations

import argparse
import dataclasses
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
DEFAULT_DT = 3e-5  # s, SimulationParams.dt default (below max_stable_dt = 3.47e-5 s of the paper robot)


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
    from hsa_elastica.robots.primitives import primitive_angles

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


def time_robot(
    dt: float, steps: int, fast: bool, record: bool = True, material_damping: bool = True
) -> float:
    from hsa_elastica.params import RETARDATION_FIELDS
    from hsa_elastica.robots.builders import build_fast_robot
    from hsa_elastica.robots.builders import build_robot

    params = paper_params(dt)
    if not material_damping:  # the elastic model: no Kelvin-Voigt damper in the step
        params = params.replace(rod=params.rod.replace(**{f: 0.0 for f in RETARDATION_FIELDS}))
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
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import primitive_angles
p = paper_robot_params()
r = build_fast_robot(p, primitive_angles("bend_north", 1.0, p), record=True)
r.run(r.dt)
print(time.perf_counter() - t0)
"""

_MEMORY = r"""
import dataclasses, resource, sys, time
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import primitive_angles
p = paper_robot_params()
p = dataclasses.replace(p, simulation=dataclasses.replace(p.simulation, dt={dt!r}, record_fps=100.0))
r = build_fast_robot(p, primitive_angles("bend_north", 1.0, p), record=True)
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
def _pose_difference(a: Any, b: Any) -> tuple[float, float]:
    """(platform position difference [mm], rotation angle between the platforms [deg])."""
    dp = float(np.linalg.norm(a.platform_position_m - b.platform_position_m)) * 1e3
    dot = abs(float(np.dot(a.platform_quaternion_xyzw, b.platform_quaternion_xyzw)))
    return dp, math.degrees(2.0 * math.acos(min(1.0, dot)))


def steady_state() -> list[str]:
    """Bend-north, full magnitude, from rest, default parameters (dt 3e-5 s, 1 s ramp):
    wall time to settle (fused: warm second call; reference operators), and the settled pose
    against a fixed-duration run to ramp + 3 s (the solver's default max_time)."""
    from hsa_elastica.params import RobotParams
    from hsa_elastica.robots.settling import SettleOptions
    from hsa_elastica.robots.steady_state import solve_steady_state

    params = RobotParams()
    angles = bend_north(params)
    out = []
    solve_steady_state(params, angles, record=False,
                       settle=SettleOptions(max_time=0.01))  # warm the kernels
    res = {}
    for label, kw in (
        ("fused (default)", dict(fast=True)),
        ("reference operators", dict(fast=False)),
        ("fused, fixed duration", dict(fast=True, stop_when_settled=False)),
    ):
        try:
            r = solve_steady_state(params, angles, record=False, **kw)  # type: ignore[arg-type]
        except Exception as exc:  # report instead of hiding the other numbers
            out.append(f"{label}: {type(exc).__name__}: {exc}")
            continue
        res[label] = r
        out.append(
            f"{label}: converged={r.converged} at {r.sim_time_s:.3f} s simulated "
            f"({r.n_steps} steps), wall {r.wall_time_s:.2f} s, platform "
            f"{np.round(r.platform_position_m * 1e3, 4)} mm, tilt "
            f"{math.degrees(r.platform_tilt_rad):.4f} deg"
        )
    if "fused (default)" in res and "fused, fixed duration" in res:
        dp, da = _pose_difference(res["fused (default)"], res["fused, fixed duration"])
        out.append(f"settled vs fixed-duration pose: {dp:.2e} mm, {da:.2e} deg")
    if "fused (default)" in res and "reference operators" in res:
        dp, da = _pose_difference(res["fused (default)"], res["reference operators"])
        out.append(f"fused vs reference settled pose: {dp:.2e} mm, {da:.2e} deg")
    return out


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
        (
            "hsa-elastica, fused path without the material damping",
            lambda: time_robot(dt, 10 * args.steps, fast=True, material_damping=False),
        ),
    ]
    # interleaved repetitions (A B C A B C ...), best of each: fair under a varying load
    best = [math.inf] * len(paths)
    for _ in range(args.repeat):
        for k, (_, fn) in enumerate(paths):
            best[k] = min(best[k], fn())
    rows = [(name, b) for (name, _), b in zip(paths, best)]
    stock = rows[0][1]
    print()
    print(f"| path | µs/step | real-time factor at dt {DEFAULT_DT:g} s | at dt {PAPER_DT:g} s | speed-up vs stock |")
    print("|---|---:|---:|---:|---:|")
    for name, wall in rows:
        print(
            f"| {name} | {wall * 1e6:.1f} | {DEFAULT_DT / wall:.2f} | {PAPER_DT / wall:.2f} | {stock / wall:.2f}x |"
        )
    print(f"cost of the Kelvin-Voigt material damping (fused): {rows[2][1] / rows[3][1]:.2f}x per step")
    print()
    if args.quick:
        return
    starts = warm_and_cold_start(cold=not args.no_cold)
    for key, (inside, total) in starts.items():
        print(f"{key} start (import + build + first step): {inside:.2f} s in-process, {total:.2f} s incl. interpreter")
    print("peak memory:", peak_memory(DEFAULT_DT))
    print("steady state, bend-north full magnitude, default parameters (dt 3e-5 s):")
    for line in steady_state():
        print("  " + line)


if __name__ == "__main__":
    main()
