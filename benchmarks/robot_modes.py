"""Damping ratios of the robot's lowest modes (docs/stability.md): bending sway, elongation bounce.

The paper robot (unactuated, motor angles 0, no gravity, fused path) gets an initial platform
velocity along x (sway) or z (bounce); the platform coordinate is sampled every step and the
frequency and damping ratio are read from successive maxima (log decrement over ``--cycles``
periods).  Rows: Kelvin-Voigt damping of the parameters with global damping 0 (the material
alone) and with the default global damping, and no damping at all (check: zeta ~ 0).
The target is ``zeta = tan(delta) / 2`` with the loss factor ``TPU_LOSS_FACTOR`` of the params.

Usage::

    python benchmarks/robot_modes.py
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from hsa_elastica.params import RETARDATION_FIELDS, TPU_LOSS_FACTOR, paper_robot_params
from hsa_elastica.robots.builders import build_fast_robot


def ring_down(axis: int, kick: float, *, kv: bool, damping: float, duration: float, cycles: int):  # type: ignore[no-untyped-def]
    """(omega [rad/s], zeta) of the platform's free response along ``axis`` after a kick."""
    p = paper_robot_params()
    rod = p.rod if kv else p.rod.replace(**{f: 0.0 for f in RETARDATION_FIELDS})
    p = p.replace(rod=rod, simulation=p.simulation.replace(damping=damping, rotational_damping=damping))
    robot = build_fast_robot(p, [0.0] * p.n_rods, record=False, chunk=1)
    robot.platform.velocity_collection[axis, 0] = kick
    dt = p.simulation.dt
    n = int(duration / dt)
    x = np.empty(n)
    x0 = robot.platform.position_collection[axis, 0]
    every = 1
    for k in range(n):
        robot._advance(every, robot.time)  # one step, no divergence check per step
        robot.time = robot.time + every * dt
        x[k] = robot.platform.position_collection[axis, 0] - x0
    t = (np.arange(n) + 1) * dt
    x = x - np.mean(x[n // 2 :])  # the equilibrium of the bounce shifts by the first swing
    # one maximum per period of the lowest mode: the largest sample between two successive
    # upward zero crossings (ignores the ripple of the higher modes)
    up = [i for i in range(1, n) if x[i - 1] < 0.0 <= x[i]]
    peaks = [a + int(np.argmax(x[a:b])) for a, b in zip(up[:-1], up[1:])]
    peaks = [i for i in peaks if 0 < i < n - 1]
    if len(peaks) < cycles + 1:
        return math.nan, math.nan
    # parabolic interpolation of the peak times
    def tpk(i: int) -> float:
        a, b, c = x[i - 1], x[i], x[i + 1]
        d = 0.5 * (a - c) / (a - 2 * b + c)
        return float(t[i] + d * dt)
    period = (tpk(peaks[cycles]) - tpk(peaks[0])) / cycles
    delta = math.log(x[peaks[0]] / x[peaks[cycles]]) / cycles
    zeta = delta / math.sqrt(4 * math.pi**2 + delta**2)
    omega = 2 * math.pi / period / math.sqrt(1 - zeta**2)
    return omega, zeta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cycles", type=int, default=3)
    args = ap.parse_args()
    p = paper_robot_params()
    print(f"loss factor {TPU_LOSS_FACTOR} -> target zeta {TPU_LOSS_FACTOR / 2:.3f}; retardation "
          + ", ".join(f"{f.split('_')[-1]} {getattr(p.rod, f):.2g} s" for f in RETARDATION_FIELDS))
    print("| mode | material damping | global damping [1/s] | omega [rad/s] | f [Hz] | zeta | omega tau / 2 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    modes = [("bending sway (x)", 0, 0.01, 0.25, p.rod.retardation_time_bend),
             ("elongation bounce (z)", 2, 0.01, 0.03, p.rod.retardation_time_axial)]
    for name, axis, kick, duration, tau in modes:
        for kv, damping in ((False, 0.0), (True, 0.0), (True, p.simulation.damping)):
            omega, zeta = ring_down(axis, kick, kv=kv, damping=damping, duration=duration,
                                    cycles=args.cycles)
            ref = omega * tau / 2 if kv else 0.0
            print(f"| {name} | {'on' if kv else 'off'} | {damping:g} | {omega:.0f} | "
                  f"{omega / 2 / math.pi:.1f} | {zeta:.4f} | {ref:.4f} |", flush=True)


if __name__ == "__main__":
    main()
