"""Single-rod dynamic relaxation: explicit operator loop vs the implicit integrator, side by side.

The four characterization experiments (holding torque, minimum-energy length, spring constant,
blocked force) of the Table I rod (4 rows) at base angles 0, 30, 60, 90 deg, relaxed
dynamically (``method="dynamic"``) with ``settling_sim_params(rod, angle=phi)`` (explicit,
PyElastica's Position Verlet on the handle's operators) and with
``settling_sim_params(rod, angle=phi, integrator="implicit")`` (the implicit integrator,
:mod:`hsa_elastica.engines.implicit`), interleaved, CPU time of this process per point after one
warm-up point of each; the static solution is the reference of both.  Prints one Markdown table:
CPU time per characteristic for each integrator, their ratio, and the largest relative
difference of each from the static value.

Run: nice -n 5 python benchmarks/bench_rod_dynamic.py [--rows 4]
"""

from __future__ import annotations

import argparse
import math
import time

from hsa_elastica.experiments import characterization as ch
from hsa_elastica.params import table1_rod_params

CHARACTERISTICS = ("holding_torque", "minimum_energy_length", "spring_constant", "blocked_force")
ANGLES_DEG = (0.0, 30.0, 60.0, 90.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=4)
    args = ap.parse_args()
    rod = table1_rod_params(args.rows)
    for integrator in ("explicit", "implicit"):  # warm-up: numba compilation, engine caches
        sp = ch.settling_sim_params(rod, angle=1.0, integrator=integrator)
        ch.minimum_energy_length(rod, 1.0, method="dynamic", sim_params=sp)
    print(f"Table I rod ({args.rows} rows), angles {ANGLES_DEG} deg, CPU s per point\n")
    print("| characteristic | explicit [s] | implicit [s] | speed-up | explicit vs static | "
          "implicit vs static |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in CHARACTERISTICS:
        fn = getattr(ch, name)
        cpu = {"explicit": 0.0, "implicit": 0.0}
        err = {"explicit": 0.0, "implicit": 0.0}
        for deg in ANGLES_DEG:
            phi = math.radians(deg)
            ref = fn(rod, phi)
            for integrator in ("explicit", "implicit"):
                sp = ch.settling_sim_params(rod, angle=phi, integrator=integrator)
                t0 = time.process_time()
                val = fn(rod, phi, method="dynamic", sim_params=sp)
                cpu[integrator] += time.process_time() - t0
                err[integrator] = max(err[integrator], abs(val / ref - 1.0) if ref else abs(val))
        n = len(ANGLES_DEG)
        print(f"| {name} | {cpu['explicit'] / n:.3f} | {cpu['implicit'] / n:.3f} | "
              f"{cpu['explicit'] / cpu['implicit']:.1f} | {err['explicit']:.1e} | "
              f"{err['implicit']:.1e} |", flush=True)


if __name__ == "__main__":
    main()
