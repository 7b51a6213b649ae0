"""Static against dynamic steady states of the paper robot over the accepted motor-angle range.

For each primitive (``--primitives``, default elongation, bend_north, twist_cw) and each fraction
``f`` of ``MAX_MOTOR_ANGLE`` (``--fractions``, default 0.25 .. 1), the pose is solved by the
static solver (``solve_static``, no dynamic fallback) and by the dynamic relaxation
(``solve_steady_state``); printed: both convergence flags, the static stability eigenvalue
[1/s^2] (the smallest real part of ``M^-1 K`` near zero, at the static pose), the platform
position [mm] and the difference between the two [mm] (the issue-22 bound is 0.05 mm where both
converge; a dynamic run that settles on an unstable equilibrium is reported not converged).
The range and why it ends at 1.5 pi: ``hsa_elastica.params.base.MAX_MOTOR_ANGLE``.

Examples::

    python benchmarks/motor_angle_sweep.py                       # paper robot, 25 elements
    python benchmarks/motor_angle_sweep.py --elements 10 --fractions 0.5,1

Cost: ~2-4 s per pose on one free core (the dynamic run dominates).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hsa_elastica.params import MAX_MOTOR_ANGLE, paper_robot_params
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.statics_api import solve_static, static_solver
from hsa_elastica.robots.steady_state import solve_steady_state


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--primitives", default="elongation,bend_north,twist_cw")
    ap.add_argument("--fractions", default="0.25,0.5,0.75,1.0",
                    help="fractions of MAX_MOTOR_ANGLE, comma-separated")
    ap.add_argument("--elements", type=int, default=None, help="elements per rod (default 25)")
    args = ap.parse_args()
    p = paper_robot_params()
    if args.elements is not None:
        p = p.replace(rod=p.rod.replace(n_elements=args.elements))
    print(f"MAX_MOTOR_ANGLE = {MAX_MOTOR_ANGLE:.4f} rad, {p.rod.n_elements} elements per rod")
    worst, refused = 0.0, 0
    for name in args.primitives.split(","):
        for f in (float(x) for x in args.fractions.split(",")):
            angles = primitive_angles(name, 1.0, p, phi_max=f * MAX_MOTOR_ANGLE)
            t0 = time.perf_counter()
            s = solve_static(p, angles, fallback=False)
            lam, _ = static_solver(p)[0].stability(angles, 3, vectors=False)
            t1 = time.perf_counter()
            d = solve_steady_state(p, angles, record=False)
            t2 = time.perf_counter()
            diff = float(np.abs(s.platform_position_m - d.platform_position_m).max()) * 1e3
            if s.converged and d.converged:
                worst = max(worst, diff)
            else:
                refused += 1
            dyn = "conv" if d.converged else ("NOT (unstable)" if d.stable is False else "NOT")
            print(f"{name:11s} {f:4.2f} max: static {'conv' if s.converged else 'NOT'} "
                  f"(lambda {lam:9.4g}) dynamic {dyn}  platform "
                  f"{np.array2string(d.platform_position_m * 1e3, precision=3)} mm  "
                  f"|static - dynamic| {diff:.2e} mm  ({t1 - t0:.1f} s, {t2 - t1:.1f} s)",
                  flush=True)
    print(f"largest difference where both converged {worst:.2e} mm (bound 0.05 mm); "
          f"{refused} pose(s) reported not converged")


if __name__ == "__main__":
    main()
