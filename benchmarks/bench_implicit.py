"""Implicit generalized-alpha integrator against the explicit fused stepper, side by side.

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

4. **Twist primitives** (``twist_cw``, ``twist_ccw``), whose symmetric pose loses stability
   during the ramp and buckles onto one of two mirror branches: (a) as commanded, the explicit
   run at its own step against itself at half and a quarter of the step and after changes of
   round-off size (platform moved 1e-12 m, Young's modulus times 1 + 1e-9), and the implicit
   runs: branch, RMS on one branch, buckling onset, RMS before the loss of stability, end pose;
   (b) seeded (the first actuated motor's angle times 1 + 1e-3): every run against the
   explicit ones at the default step and at a quarter of it.

Usage::

    python benchmarks/bench_implicit.py            # all tables; 5 primitives, steps 2e-4 ... 3e-3 s
    python benchmarks/bench_implicit.py --quick    # 2 primitives, 3 steps, no twist tables
    python benchmarks/bench_implicit.py --twist    # the twist tables only (~2 min)
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np

from hsa_elastica.engines.implicit import ImplicitStepFailed, generalized_alpha
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.builders import build_fast_robot, build_robot
from hsa_elastica.robots.compiled import ImplicitRobot
from hsa_elastica.robots.primitives import PRIMITIVES, primitive_angles
from hsa_elastica.robots.statics_api import solve_static

SAMPLE = 0.03  # s: 1000 explicit steps of 3e-5 s, a whole number of every implicit step below


def trajectory(robot, duration: float, sample: float = SAMPLE):  # type: ignore[no-untyped-def]
    """Platform (time, position (3), director (9)) every ``sample`` s, and the CPU time [s]."""
    rows = []
    t0 = time.process_time()
    while robot.time < duration - 1e-9:
        robot.run(sample)
        plat = robot.platform
        rows.append(np.r_[robot.time, plat.position_collection[:, 0],
                          plat.director_collection[:, :, 0].ravel()])
    return np.array(rows), time.process_time() - t0


def compare(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, float]:
    """RMS / max position difference [mm], RMS / max orientation difference [deg]."""
    if a.shape != b.shape or not np.allclose(a[:, 0], b[:, 0], rtol=0, atol=1e-9):
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


#: the primitives whose symmetric pose buckles during the ramp (twist commands: rods i and i+2
#: alike, so the robot is symmetric under a turn by pi about its axis)
TWIST = ("twist_cw", "twist_ccw")
#: s: a whole number of every step used here (3e-5 / 2, / 4 and 2e-4 ... 3e-3 s)
TWIST_SAMPLE = 6e-3
#: relative change of the first actuated motor's angle of the seeded runs (3.1 mrad at pi: two
#: steps of a Dynamixel MX-28, 4096 per turn)
TWIST_SEED = 1e-3
#: mm: the platform's distance from the axis that marks the buckling (onset time)
ONSET_MM = 1.0
#: the turn by pi about the robot axis that maps one buckled branch onto the other
C2 = np.diag([-1.0, -1.0, 1.0])


def mirrored(a: np.ndarray) -> np.ndarray:
    """Trajectory ``a`` (rows of :func:`trajectory`) turned by pi about the robot axis: the
    mirror branch of a C2-symmetric command (position ``C2 p``, orientation ``C2 Q C2``)."""
    b = a.copy()
    b[:, 1:4] = a[:, 1:4] @ C2
    b[:, 4:] = (C2 @ a[:, 4:].reshape(-1, 3, 3) @ C2).reshape(-1, 9)
    return b


def onset(a: np.ndarray, mm: float = ONSET_MM) -> float:
    """First time [s] the platform is ``mm`` from the robot axis (linear between samples)."""
    r = np.linalg.norm(a[:, 1:3], axis=1) * 1e3
    k = int(np.argmax(r > mm))
    if r[k] <= mm:
        return math.nan
    if k == 0:
        return float(a[0, 0])
    return float(a[k - 1, 0] + (mm - r[k - 1]) / (r[k] - r[k - 1]) * (a[k, 0] - a[k - 1, 0]))


def loss_of_stability(p, u) -> float:  # type: ignore[no-untyped-def]
    """Time [s] at which the explicit run's symmetric pose becomes unstable: the smallest
    eigenvalue of ``M^-1 K`` (``pose_stability`` at the ramp's present angles) crosses zero,
    linear between checks SAMPLE apart."""
    from hsa_elastica.physics.actuation import Ramp
    from hsa_elastica.robots.static_cache import pose_stability

    sim = p.simulation
    robot = build_fast_robot(p, u, record=False)
    ramps = [Ramp(float(x), sim.ramp_time, sim.ramp_shape) for x in u]
    prev = None
    while robot.time < sim.ramp_time:
        robot.run(SAMPLE)
        lam = pose_stability(p, robot.model, np.array([r(robot.time) for r in ramps]))
        if lam < 0.0:
            if prev is None:
                return float(robot.time)
            return float(prev[0] + prev[1] / (prev[1] - lam) * (robot.time - prev[0]))
        prev = (robot.time, lam)
    return math.nan


def twist_runs(p, u, steps: list[float], rho: float, duration: float,
               variants: list[tuple[str, float, float, float]],
               tight: tuple[float, ...] = ()):  # type: ignore[no-untyped-def]
    """``[(label, dt, trajectory or the refused time, CPU s)]``: the explicit ``variants``
    ``(label, dt, platform x kick [m], relative change of E)``, the implicit ``steps``, then
    the implicit steps ``tight`` with the Newton tolerances 1e-4 times the defaults."""
    out = []
    for label, dt, kick, de in variants:
        q = p.replace(rod=p.rod.replace(youngs_modulus=p.rod.youngs_modulus * (1.0 + de)),
                      simulation=p.simulation.replace(dt=dt))
        robot = build_fast_robot(q, u, record=False)
        robot.platform.position_collection[0, 0] += kick
        out.append((label, dt, *trajectory(robot, duration, TWIST_SAMPLE)))
    for dt, tol in [(dt, 1.0) for dt in steps] + [(dt, 1e-4) for dt in tight]:
        q = implicit_params(p, dt, rho)
        kw = dict(tol_force=1e-6 * tol, tol_torque=1e-8 * tol, tol_position=1e-7 * tol,
                  tol_rotation=1e-5 * tol)  # the engine's defaults times tol
        try:
            a, cpu = trajectory(ImplicitRobot(build_robot(q, u, record=False), rho_inf=rho, **kw),
                                duration, TWIST_SAMPLE)
        except ImplicitStepFailed as exc:
            a, cpu = exc.time, math.nan
        out.append(("implicit" if tol == 1.0 else f"implicit, tolerances x {tol:g}", dt, a, cpu))
    return out


def _end_vs_static(a: np.ndarray, static: np.ndarray) -> float:
    """Distance [mm] of the end position from the static one or from its mirror image."""
    return min(float(np.linalg.norm(a[-1, 1:4] - s)) * 1e3 for s in (static, C2 @ static))


def twist_symmetric_table(steps: list[float], rho: float) -> None:
    """The twist primitives as commanded (C2-symmetric): how much the explicit run itself
    moves under round-off-sized changes, and where the implicit runs fall."""
    p = paper_robot_params()
    dt0, duration = p.simulation.dt, p.simulation.ramp_time + 1.0 + 1e-3
    print(f"\n## Twist primitives as commanded (symmetric), ramp {p.simulation.ramp_time:g} s + 1 s, "
          f"sampled every {TWIST_SAMPLE * 1e3:g} ms, rho_inf = {rho:g}")
    print("Reference: explicit at its own step.  'branch': the reference's or its mirror image "
          "(turned by pi about the axis); 'one branch': compared after turning onto the "
          f"reference's branch; onset: platform {ONSET_MM:g} mm off the axis; t_c: the "
          "symmetric pose's loss of stability (smallest eigenvalue of M^-1 K crosses 0).")
    print("| primitive | run | dt [s] | RTF | branch | pos RMS [mm] | one branch: pos RMS / max [mm] "
          "| ori RMS / max [deg] | onset [s] | t <= t_c: pos [mm] / ori [deg] RMS | end vs static [mm] |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    variants = [("explicit", dt0, 0.0, 0.0), ("explicit", dt0 / 2, 0.0, 0.0),
                ("explicit", dt0 / 4, 0.0, 0.0), ("explicit, platform x + 1e-12 m", dt0, 1e-12, 0.0),
                ("explicit, E x (1 + 1e-9)", dt0, 0.0, 1e-9)]
    for name in TWIST:
        u = primitive_angles(name, 1.0, p)
        t_c = loss_of_stability(p, u)
        static = np.asarray(solve_static(p, u).platform_position_m)
        runs = twist_runs(p, u, steps, rho, duration, variants, tight=(2e-3, 5e-4))
        ref = runs[0][2]
        early = ref[:, 0] <= t_c
        for label, dt, a, cpu in runs:
            if not isinstance(a, np.ndarray):
                print(f"| {name} | {label} | {dt:g} | refused at t = {a:.3f} s | | | | | | | |")
                continue
            raw = compare(a, ref)[0]
            b = min((a, mirrored(a)), key=lambda x: compare(x, ref)[0])
            rms, mx, orms, omax = compare(b, ref)
            e = compare(a[early], ref[early])
            print(f"| {name} | {label} | {dt:g} | {a[-1, 0] / cpu:.2f} | "
                  f"{'same' if b is a else 'mirror'} | {raw:.3f} | {rms:.4f} / {mx:.3f} | "
                  f"{orms:.4f} / {omax:.3f} | {onset(a):.3f} | {e[0]:.5f} / {e[2]:.5f} | "
                  f"{_end_vs_static(a, static):.4f} |", flush=True)
        print(f"| {name} | t_c = {t_c:.3f} s | | | | | | | | | |", flush=True)


def twist_seeded_table(steps: list[float], rho: float) -> None:
    """The twist primitives with the symmetry broken on purpose (the first actuated motor's
    angle times 1 + TWIST_SEED): the branch and the onset are set by the command.  Every run
    against the explicit ones at the default step, at a quarter of it, and against the
    first-order extrapolation ``2 E(dt/4) - E(dt/2)`` of the explicit runs (positions; the
    order is the printed ratio of their successive differences, 2 for first order)."""
    p = paper_robot_params()
    dt0, duration = p.simulation.dt, p.simulation.ramp_time + 1.0 + 1e-3
    print(f"\n## Twist primitives seeded (first actuated motor x (1 + {TWIST_SEED:g})), ramp "
          f"{p.simulation.ramp_time:g} s + 1 s, sampled every {TWIST_SAMPLE * 1e3:g} ms, rho_inf = {rho:g}")
    print(f"| primitive | run | dt [s] | RTF | vs explicit {dt0:g}: pos RMS / max [mm] | ori RMS / max "
          f"[deg] | vs explicit {dt0 / 4:g}: pos RMS / max [mm] | ori RMS [deg] | vs extrapolated: "
          "pos RMS / max [mm] | onset [s] | end vs static [mm] |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    variants = [("explicit", dt0 / k, 0.0, 0.0) for k in (1, 2, 4)] + [
        ("explicit, platform x + 1e-12 m", dt0, 1e-12, 0.0), ("explicit, E x (1 + 1e-9)", dt0, 0.0, 1e-9)]
    for name in TWIST:
        u = np.array(primitive_angles(name, 1.0, p))
        u[int(np.argmax(np.abs(u)))] *= 1.0 + TWIST_SEED
        static = np.asarray(solve_static(p, u).platform_position_m)
        runs = twist_runs(p, u, steps, rho, duration, variants)
        ref, half, fine = (runs[k][2] for k in range(3))
        limit = fine.copy()
        limit[:, 1:4] = 2.0 * fine[:, 1:4] - half[:, 1:4]
        for label, dt, a, cpu in runs:
            if not isinstance(a, np.ndarray):
                print(f"| {name} | {label} | {dt:g} | refused at t = {a:.3f} s | | | | | | | |")
                continue
            c, f, x = compare(a, ref), compare(a, fine), compare(a, limit)
            end = float(np.linalg.norm(a[-1, 1:4] - static)) * 1e3
            print(f"| {name} | {label} | {dt:g} | {a[-1, 0] / cpu:.2f} | {c[0]:.4f} / {c[1]:.4f} | "
                  f"{c[2]:.4f} / {c[3]:.4f} | {f[0]:.4f} / {f[1]:.4f} | {f[2]:.4f} | "
                  f"{x[0]:.4f} / {x[1]:.4f} | {onset(a):.3f} | {end:.4f} |", flush=True)
        d1, d2 = compare(ref, half)[0], compare(half, fine)[0]
        print(f"| {name} | explicit dt -> dt/2 -> dt/4: {d1:.4f}, {d2:.4f} mm RMS apart (ratio "
              f"{d1 / d2:.2f}) | | | | | | | | | |", flush=True)


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
    ap.add_argument("--twist", action="store_true",
                    help="only the twist primitives' tables (steps 2e-3, 1e-3, 5e-4, 2.5e-4 s "
                         "unless --steps)")
    args = ap.parse_args()
    if args.quick:
        names, steps = ["elongation", "bend_north"], [5e-4, 2e-3, 3e-3]
    else:
        names, steps = [n for n in PRIMITIVES if n not in TWIST], [2e-4, 5e-4, 1e-3, 2e-3, 3e-3]
    twist_steps = [2e-3, 1e-3, 5e-4, 2.5e-4]
    if args.steps:
        steps = twist_steps = [float(v) for v in args.steps.split(",")]
    if args.primitives:
        names = args.primitives.split(",")
    kind = "twist" if args.twist else "quick" if args.quick else "full"
    print(f"# bench_implicit ({kind}), CPU time of one process")
    if not args.twist:
        primitives_table(names, steps, args.rho)
    if args.twist or not args.quick:
        twist_symmetric_table(twist_steps, args.rho)
        twist_seeded_table(twist_steps, args.rho)
    if not args.twist:
        modes_table(steps, args.rho)
        damping_table(steps, args.rho)


if __name__ == "__main__":
    main()
