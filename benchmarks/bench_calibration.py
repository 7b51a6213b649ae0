"""Wall time of a calibration: all 300 motion-capture poses, 6 free parameters.

Target (issue 14): under 5 minutes on the project machine.  Starts from the README robot of
``validation/real_robot.py`` (2 deg mount tilt) and fits the six parameters of its stages A and
B jointly with the static solver; prints the wall time, evaluations and the per-run RMS.

    python -m benchmarks.bench_calibration [--max-poses N]
"""

from __future__ import annotations

import argparse
import time

from hsa_elastica.experiments.calibration import calibrate, load_runs
from validation.real_robot import STAGES, readme_robot_params, tilted


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-poses", type=int, default=None, help="poses per run (default: all)")
    args = ap.parse_args(argv)
    runs = [r.every(args.max_poses) for r in load_runs(["elongation", "twisting"])]
    bounds = {n: b for k in "AB" for n, b in STAGES[k]["free"].items()}
    t0 = time.perf_counter()
    res = calibrate(tilted(readme_robot_params()), runs, list(bounds), bounds=bounds,
                    diff_step=1e-2, max_nfev=20)
    wall = time.perf_counter() - t0
    print(res.report())
    n = sum(len(r) for r in runs)
    print(f"calibration of {n} poses, {len(bounds)} free parameters: {wall:.0f} s wall "
          f"(target < 300 s: {'met' if wall < 300 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
