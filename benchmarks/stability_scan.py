"""Stability scan of the auxetic coupling: damping rate vs time step (docs/stability.md).

A single rod, base turned by MotorAngleBC along a smooth ramp, distal twist locked (Section II-C
set-up), no gravity, ``AnalyticalLinearDamper`` with decay rates ``gamma`` [1/s] for velocities
and angular velocities (the contract's SimulationParams.damping meaning).  Each run is classified

* ``ok``       settled: length within 0.5 % of L + C_eps * phi and residual speed < 1e-4 m/s,
* ``slow``     finite and bounded but not settled at the end of the hold,
* ``DIVERGED`` NaN/inf or a node farther than 10 L from the base.

Usage::

    python benchmarks/stability_scan.py                 # both rods, default grid (~2 min)
    python benchmarks/stability_scan.py --rod table1    # 10-element Table I (4 rows) rod
    python benchmarks/stability_scan.py --rod robot --dt 4e-5 --damping 0.2 2 20
    python benchmarks/stability_scan.py --filter 0.01   # with the twist low-pass option

Prints one table per rod: rows = damping rate, columns = dt, cells = status and the settling
time [s] (last time the length error exceeded 0.5 %).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from conftest import (  # noqa: E402  (shared rod builder of the test-suite)
    PAPER_ROD,
    TABLE1_ROW4,
    TABLE1_ROW4_C_EPS,
    TABLE1_ROW4_E_SLOPE,
    RodSimulator,
    add_rate_damping,
    make_tube_rod,
)
from elastica import PositionVerlet  # noqa: E402

from hsa_elastica.physics.actuation import DistalTwistLockBC, MotorAngleBC, Ramp  # noqa: E402
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling, TwistStiffnessLaw  # noqa: E402


@dataclass(frozen=True)
class RodCase:
    name: str
    rod: dict[str, Any]
    C_eps: float
    eps_max: float
    stiffness: TwistStiffnessLaw | None
    phi: float  # rad
    ramp: float  # s
    hold: float  # s


CASES = {
    "robot": RodCase(
        "paper robot rod (25 el., L=100 mm, E=10 MPa, C_eps=0.01 m/rad, phi=pi)",
        PAPER_ROD, 0.01, 0.5, None, math.pi, 1.0, 1.0,
    ),
    "table1": RodCase(
        "Table I 4 rows (10 el., L=75 mm, E=576.9 kPa + 36.1 kPa/(rad/m), C_eps=3.04e-3, phi=pi/2)",
        TABLE1_ROW4, TABLE1_ROW4_C_EPS, 0.5, TwistStiffnessLaw(E_slope=TABLE1_ROW4_E_SLOPE),
        math.pi / 2, 1.0, 1.0,
    ),
}


def run_case(
    case: RodCase, dt: float, gamma: float, filter_time: float = 0.0, coupling: bool = True
) -> dict[str, Any]:
    sim = RodSimulator()
    rod = make_tube_rod(**case.rod)
    sim.append(rod)
    sim.constrain(rod).using(
        MotorAngleBC,
        constrained_position_idx=(0,),
        constrained_director_idx=(0,),
        angle=Ramp(target=case.phi, duration=case.ramp, shape="smooth"),
    )
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    if coupling:
        sim.add_forcing_to(rod).using(
            AuxeticCoupling,
            handedness=1,
            C_eps=case.C_eps,
            eps_min=0.0,
            eps_max=case.eps_max,
            stiffness=case.stiffness,
            twist_filter_time=filter_time,
        )
    add_rate_damping(sim, rod, dt, gamma, gamma)
    sim.finalize()
    stepper = PositionVerlet()
    L = case.rod["length"]
    target = L + (case.C_eps * case.phi if coupling else 0.0)
    n_steps = int(round((case.ramp + case.hold) / dt))
    check_every = max(1, int(round(1e-3 / dt)))
    t = np.float64(0.0)
    last_bad = 0.0
    status = "ok"
    wall = time.perf_counter()
    max_err = 0.0
    for step in range(1, n_steps + 1):
        t = stepper.step(sim, t, np.float64(dt))
        if step % check_every == 0:
            pos = rod.position_collection
            if not np.all(np.isfinite(pos)) or np.abs(pos).max() > 10 * L:
                status = "DIVERGED"
                break
            length = pos[2, -1] - pos[2, 0]
            if t > case.ramp:
                err = abs(length / target - 1.0)
                max_err = max(max_err, err)
                if err > 5e-3:
                    last_bad = float(t)
    if status == "ok":
        speed = float(np.abs(rod.velocity_collection).max())
        length = rod.position_collection[2, -1] - rod.position_collection[2, 0]
        if abs(length / target - 1.0) > 5e-3 or speed > 1e-4:
            status = "slow"
    return dict(
        status=status,
        t_end=float(t),
        settle=max(last_bad, case.ramp) - case.ramp,
        max_err=max_err,
        wall=time.perf_counter() - wall,
    )


def scan(case: RodCase, dts: list[float], gammas: list[float], filter_time: float) -> None:
    l = case.rod["length"] / case.rod["n_elements"]
    c = math.sqrt(case.rod["youngs_modulus"] / case.rod["density"])
    print(f"\n{case.name}")
    print(f"axial wave limit l/c = {l / c:.3g} s; filter_time = {filter_time} s; "
          f"ramp {case.ramp} s + hold {case.hold} s")
    header = "gamma [1/s] | " + " | ".join(f"dt={dt:.1e} ({dt * c / l:.2f} l/c)" for dt in dts)
    print(header)
    print("-" * len(header))
    for gamma in gammas:
        cells = []
        for dt in dts:
            r = run_case(case, dt, gamma, filter_time)
            if r["status"] == "DIVERGED":
                cells.append(f"DIVERGED t={r['t_end']:.3f}s")
            elif r["status"] == "slow":
                cells.append(f"slow err={r['max_err']:.1e}")
            else:
                cells.append(f"ok settle={r['settle']:.3f}s")
        print(f"{gamma:11g} | " + " | ".join(f"{cell:>24s}" for cell in cells), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rod", choices=["robot", "table1", "both"], default="both")
    parser.add_argument("--dt", type=float, nargs="*", default=None, help="time steps [s]")
    parser.add_argument("--damping", type=float, nargs="*", default=None, help="rates [1/s]")
    parser.add_argument("--filter", type=float, default=0.0, help="twist_filter_time [s]")
    parser.add_argument("--hold", type=float, default=None, help="hold time after ramp [s]")
    args = parser.parse_args(argv)
    names = ["robot", "table1"] if args.rod == "both" else [args.rod]
    for name in names:
        case = CASES[name]
        if args.hold is not None:
            case = RodCase(**{**case.__dict__, "hold": args.hold})
        default_dts = [1e-5, 2e-5, 4e-5] if name == "robot" else [4e-5, 1e-4, 2e-4]
        dts = args.dt or default_dts
        gammas = args.damping or [0.2, 2.0, 5.0, 20.0, 100.0]
        scan(case, dts, gammas, args.filter)


if __name__ == "__main__":
    main()
