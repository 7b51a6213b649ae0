"""Implicit generalized-alpha integrator against the explicit fused stepper, side by side (issue 24).

One run, one process, CPU time (``time.process_time``) of each engine:

1. **Primitives** (paper robot, 25 elements per rod, Kelvin-Voigt and global damping on): from
   rest through the 1 s ramp and 1 s of settling; the platform pose sampled every 30 ms (a
   multiple of both engines' steps) is compared with the explicit run at its own step
   (3e-5 s): RMS / max position difference [mm] and orientation difference [deg]; CPU time
   per simulated second, real-time factor (RTF) and the ratio to the explicit RTF measured in
   the same run; Newton force evaluations per step; the end pose against the static solution
   (``solve_static``) [mm].
2. **Modes**: the sway (x) and bounce (z) ring-downs of ``benchmarks/robot_modes.py`` (motor
   angles 0, platform kicked) with each engine: frequency [Hz] and damping ratio.
3. **Numerical damping against frequency** of the scheme at each step (exact, from the
   amplification matrix of generalized-alpha on an undamped linear oscillator): damping ratio
   and period error per mode frequency.
The environments (env steps/s of both integrators side by side) are measured by
``benchmarks/bench_envs.py``.

Usage::

    python benchmarks/bench_implicit.py            # 7 primitives, steps 2e-4 ... 3e-3 s
    python benchmarks/bench_implicit.py --quick    # 2 primitives, 3 steps
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np

from hsa_elastica.engines.implicit import ImplicitStepFailed, generalized_alpha
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles
from hsa_elastica.robots.statics_api import solve_static

SAMPLE = 0.03  # s: 1000 explicit steps of 3e-5 s, a whole number of every implicit step below


def trajectory(robot, duration: float):  # type: ignore[no-untyped-def]
    """Platform (time, position (3), director (9)) every SAMPLE s, and the CPU time [s]."""
    rows = []
    t0 = time.process_time()
    while robot.time < duration - 1e-9:
        robot.run(SAMPLE)
        plat = robot.platform
        rows.append(np.r_[robot.time, plat.position_collection[:, 0],
                          plat.director_collection[:, :, 0].ravel()])
    return np.array(rows), time.process_time() - t0


def compare(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    """RMS / max position difference [mm], RMS / max orientation difference [deg]."""
    if not np.allclose(a[:, 0], b[:, 0], rtol=0, atol=1e-9):
        raise RuntimeError("sample times differ")
    d = np.linalg.norm(a[:, 1:4] - b[:, 1:4], axis=1) * 1e3
    ang = []
    for x, y in zip(a[:, 4:], b[:, 4:]):
        c = (np.trace(x.reshape(3, 3) @ y.reshape(3, 3).T) - 1.0) / 2.0
        ang.append(math.degrees(math.acos(min(1.0, max(-1.0, c)))))
    g = np.array(ang)
    return (float(np.sqrt(np.mean(d**2))), float(d.max()), float(np.sqrt(np.mean(g**2))),
            float(g.max()))


def implicit_params(p, dt: float, rho: float):  # type: ignore[no-untyped-def]
    """``p`` on the implicit integrator at ``dt`` [s]; no halving (a row measures that step,
    a step it cannot take is reported as refused)."""
    return p.replace(simulation=p.simulation.replace(dt=dt, integrator="implicit",
                                                     implicit_rho_inf=rho, max_halvings=0))


def primitives_table(names: list[str], steps: list[float], rho: float) -> None:
    p = paper_robot_params()
    duration = p.simulation.ramp_time + 1.0 + 1e-3
    print(f"\n## Primitives: ramp {p.simulation.ramp_time:g} s + 1 s settling, rho_inf = {rho:g}")
    print("| primitive | integrator | dt [s] | CPU s / sim s | RTF | vs explicit | evals/step | "
          "pos RMS [mm] | pos max [mm] | ori RMS [deg] | ori max [deg] | end vs static [mm] |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    summary: dict[float, list[tuple[float, float, float, float, float]]] = {s: [] for s in steps}
    # warm-up, not timed: the first run of each engine in a process loads its kernels from
    # numba's cache (or compiles them), ~0.2 s of CPU that would be charged to the first row
    u0 = primitive_angles(names[0], 1.0, p)
    for q in [p] + [implicit_params(p, dt, rho) for dt in steps]:
        build_fast_robot(q, u0, record=False).run(SAMPLE)
    for name in names:
        u = primitive_angles(name, 1.0, p)
        static = np.asarray(solve_static(p, u).platform_position_m)
        ref, cpu_ref = trajectory(build_fast_robot(p, u, record=False), duration)
        end = np.linalg.norm(ref[-1, 1:4] - static) * 1e3
        rtf_ref = ref[-1, 0] / cpu_ref
        print(f"| {name} | explicit | {p.simulation.dt:g} | {cpu_ref / ref[-1, 0]:.3f} | "
              f"{rtf_ref:.2f} | 1.0 | 1 | - | - | - | - | {end:.4f} |", flush=True)
        for dt in steps:
            robot = build_fast_robot(implicit_params(p, dt, rho), u, record=False)
            try:
                got, cpu = trajectory(robot, duration)
            except ImplicitStepFailed as exc:
                print(f"| {name} | implicit | {dt:g} | refused at t = {exc.time:.3f} s (Newton) "
                      "| | | | | | | | |", flush=True)
                continue
            rms, mx, orms, omax = compare(got, ref)
            end = np.linalg.norm(got[-1, 1:4] - static) * 1e3
            e = robot.engine
            rtf = got[-1, 0] / cpu
            summary[dt].append((rtf / rtf_ref, rtf, rms, orms, max(mx, 0.0)))
            print(f"| {name} | implicit | {dt:g} | {cpu / got[-1, 0]:.3f} | {rtf:.2f} | "
                  f"{rtf / rtf_ref:.1f} | {(e.evaluations + e.n_jacobians * e.solver.n_colors) / e.n_steps:.2f} | "
                  f"{rms:.4f} | {mx:.4f} | {orms:.4f} | {omax:.4f} | {end:.4f} |", flush=True)
    print("\n| dt [s] | mean RTF | mean speed-up vs explicit | worst pos RMS [mm] | worst ori RMS [deg] |")
    print("|---:|---:|---:|---:|---:|")
    for dt, rows in summary.items():
        if not rows:
            continue
        a = np.array(rows)
        print(f"| {dt:g} | {a[:, 1].mean():.2f} | {a[:, 0].mean():.1f} | {a[:, 2].max():.4f} | "
              f"{a[:, 3].max():.4f} |")


def ring_down(p, axis: int, kick: float, duration: float, cycles: int = 3):  # type: ignore[no-untyped-def]
    """(f [Hz], zeta) of the platform's free response along ``axis`` (robot_modes.py method),
    sampled every step of the engine."""
    robot = build_fast_robot(p, [0.0] * p.n_rods, record=False, chunk=1)
    robot.platform.velocity_collection[axis, 0] = kick
    dt = p.simulation.dt
    n = round(duration / dt)
    x = np.empty(n)
    x0 = robot.platform.position_collection[axis, 0]
    for k in range(n):
        robot.time = robot._advance(1, robot.time)
        x[k] = robot.platform.position_collection[axis, 0] - x0
    t = (np.arange(n) + 1) * dt
    x = x - np.mean(x[n // 2:])
    up = [i for i in range(1, n) if x[i - 1] < 0.0 <= x[i]]
    peaks = [a + int(np.argmax(x[a:b])) for a, b in itertools.pairwise(up)]
    peaks = [i for i in peaks if 0 < i < n - 1]
    if len(peaks) < cycles + 1:
        return math.nan, math.nan

    def tpk(i: int) -> float:
        a, b, c = x[i - 1], x[i], x[i + 1]
        den = a - 2 * b + c
        return float(t[i] + (0.5 * (a - c) / den if den != 0 else 0.0) * dt)

    period = (tpk(peaks[cycles]) - tpk(peaks[0])) / cycles
    delta = math.log(x[peaks[0]] / x[peaks[cycles]]) / cycles
    zeta = delta / math.sqrt(4 * math.pi**2 + delta**2)
    return 1.0 / period / math.sqrt(1 - zeta**2), zeta


def modes_table(steps: list[float], rho: float) -> None:
    p = paper_robot_params()
    print(f"\n## Modes (ring-down, motor angles 0, damping of the params), rho_inf = {rho:g}")
    print("| mode | integrator | dt [s] | f [Hz] | zeta | f error | zeta error |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, axis, kick, duration in (("sway (x)", 0, 0.01, 0.3), ("bounce (z)", 2, 0.01, 0.04)):
        f0, z0 = ring_down(p, axis, kick, duration)
        print(f"| {name} | explicit | {p.simulation.dt:g} | {f0:.2f} | {z0:.4f} | - | - |", flush=True)
        for dt in steps:
            if duration / dt < 40:
                continue
            try:
                f, z = ring_down(implicit_params(p, dt, rho), axis, kick, duration)
            except ImplicitStepFailed as exc:
                print(f"| {name} | implicit | {dt:g} | refused at t = {exc.time:.3f} s | | | |")
                continue
            print(f"| {name} | implicit | {dt:g} | {f:.2f} | {z:.4f} | {f / f0 - 1:+.2%} | "
                  f"{z / z0 - 1:+.1%} |", flush=True)


def numerical_damping(dt: float, rho: float, freqs: list[float]) -> list[tuple[float, float, float]]:
    """(f [Hz], numerical damping ratio, period error) of generalized-alpha at step ``dt`` on
    the undamped oscillator of frequency f (principal eigenvalues of the amplification matrix
    of the scheme as implemented: state x, v, a, vdot)."""
    am, af, g, b = generalized_alpha(rho)
    out = []
    for f in freqs:
        w2 = (2 * math.pi * f) ** 2
        h = dt
        amp = np.zeros((4, 4))
        for col in range(4):
            x, v, a, vd = np.eye(4)[col]
            base = h * v + h * h * (0.5 - b) * a
            # solve vd1 = -w2 (x + dq) for dq (linear)
            # a1 = (dq - base) / (b h^2); vd1 = ((1-am) a1 + am a - af vd) / (1 - af)
            c1 = (1 - am) / ((1 - af) * b * h * h)
            c0 = (-(1 - am) * base / (b * h * h) + am * a - af * vd) / (1 - af)
            dq = (-w2 * x - c0) / (c1 + w2)
            a1 = (dq - base) / (b * h * h)
            amp[:, col] = (x + dq, v + h * (1 - g) * a + h * g * a1, a1, c0 + c1 * dq)
        lam = np.linalg.eigvals(amp)
        osc = lam[np.abs(lam.imag) > 1e-12]  # the principal pair (the spurious roots are real)
        if osc.size == 0:
            out.append((f, math.nan, math.nan))
            continue
        lam = osc[np.argmax(np.abs(osc))]
        ln = np.log(lam)
        zeta = -ln.real / abs(ln)
        period_err = (2 * math.pi * f) / (abs(ln.imag) / h) - 1.0
        out.append((f, float(zeta), float(period_err)))
    return out


def damping_table(steps: list[float], rho: float) -> None:
    freqs = [5.0, 21.5, 50.0, 100.0, 203.0, 500.0, 1000.0, 9000.0]
    print(f"\n## Numerical damping ratio (period error) against mode frequency, rho_inf = {rho:g}")
    print("| f [Hz] | " + " | ".join(f"dt = {dt:g} s" for dt in steps) + " |")
    print("|---:|" + "---:|" * len(steps))
    cols = [numerical_damping(dt, rho, freqs) for dt in steps]
    for i, f in enumerate(freqs):
        print(f"| {f:g} | " + " | ".join(f"{c[i][1]:.4f} ({c[i][2]:+.2%})" for c in cols) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 primitives, 3 steps")
    ap.add_argument("--steps", default=None,
                    help="comma-separated implicit steps [s] (default: as --quick or full)")
    ap.add_argument("--primitives", default=None, help="comma-separated primitive names")
    ap.add_argument("--rho", type=float, default=0.8, help="implicit_rho_inf (default 0.8)")
    args = ap.parse_args()
    if args.quick:
        names, steps = ["elongation", "bend_north"], [5e-4, 2e-3, 3e-3]
    else:
        names, steps = list(PRIMITIVES), [2e-4, 5e-4, 1e-3, 2e-3, 3e-3]
    if args.steps:
        steps = [float(v) for v in args.steps.split(",")]
    if args.primitives:
        names = args.primitives.split(",")
    print(f"# bench_implicit ({'quick' if args.quick else 'full'}), CPU time of one process")
    primitives_table(names, steps, args.rho)
    modes_table(steps, args.rho)
    damping_table(steps, args.rho)


if __name__ == "__main__":
    main()
