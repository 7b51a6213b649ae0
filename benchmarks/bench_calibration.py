"""Wall time of a calibration: all 300 motion-capture poses, 6 free parameters, two Jacobian
methods side by side in one run.

Target: under 5 minutes on the project machine.  Starts from the README robot of
:mod:`hsa_elastica.validation.real_robot` (2 deg mount tilt) and fits the six parameters of its
stages A and B jointly with the static solver (buckled poses on the branch of the mount
tilt, ``mirror_branch="gravity"``), once with scipy's ``2-point`` differences of
full static solves (``fast_jacobian=False``) and once with the calibration's default Jacobian
(every perturbed pose solved by chord steps from the same pose at the current parameters,
:func:`hsa_elastica.robots.statics_api.solve_static_near`); prints the wall times, their ratio,
the evaluations and the per-run RMS of both.

    python -m benchmarks.bench_calibration [--max-poses N] [--only fast|2-point]
"""

from __future__ import annotations

import argparse
import time

from hsa_elastica.experiments.calibration import CalibrationResult, calibrate, load_runs
from hsa_elastica.validation.real_robot import MIRROR_BRANCH, STAGES, readme_robot_params, tilted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-poses", type=int, default=None, help="poses per run (default: all)")
    ap.add_argument("--only", choices=("fast", "2-point"), help="run one method only")
    args = ap.parse_args(argv)
    runs = [r.every(args.max_poses) for r in load_runs(["elongation", "twisting"])]
    bounds = {n: b for k in "AB" for n, b in STAGES[k]["free"].items()}
    start = tilted(readme_robot_params())
    calibrate(start, [r.every(2) for r in runs], ["rod.C_eps"], max_nfev=1,
              mirror_branch=MIRROR_BRANCH)  # numba compile
    walls: dict[str, float] = {}
    results: dict[str, CalibrationResult] = {}
    for method in ("2-point", "fast"):
        if args.only not in (None, method):
            continue
        t0 = time.perf_counter()
        results[method] = calibrate(start, runs, list(bounds), bounds=bounds, diff_step=1e-2,
                                    max_nfev=20, fast_jacobian=method == "fast",
                                    mirror_branch=MIRROR_BRANCH)
        walls[method] = time.perf_counter() - t0
        print(f"--- Jacobian: {method}\n{results[method].report()}", flush=True)
    n = sum(len(r) for r in runs)
    for method, wall in walls.items():
        print(f"calibration of {n} poses, {len(bounds)} free parameters, Jacobian {method}: "
              f"{wall:.0f} s wall, {results[method].n_evaluations} full evaluations "
              f"(target < 300 s: {'met' if wall < 300 else 'NOT met'})")
    if len(walls) == 2:
        print(f"speed-up of the chord-step Jacobian: {walls['2-point'] / walls['fast']:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
