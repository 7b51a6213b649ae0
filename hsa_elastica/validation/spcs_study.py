"""SPCS kinematic model fitted to simulated steady-state rod shapes (paper Section IV-D, Fig. 5).

For each motion primitive of Fig. 2(a) (elongation, bending N/S/E/W, twisting CW/CCW) and each
magnitude, the four-rod paper robot (Section II-E) is run from rest to its steady state with our
simulator.  Each rod then gives N = 25 poses, one per element:

* position: the element centre, the midpoint of its two nodes [m];
* orientation: the element's directors (``R = Q.T``: columns d1, d2, d3, d3 = tangent);
* arc length: the printed arc length of the element centre, ``s_k = (k + 1/2) L / 25``;
* frame: the rod's *un-actuated* base frame {S_B}: origin at the rod's base node, axes
  ``(radial, tangential, +z)`` of the straight rod before actuation, so that the motor angle is
  the SPCS ``phi0`` (``hsa_elastica.spcs.rod_element_poses`` with that base pose).

The SPCS model (twist and stretch constant over the rod, bend and shear piecewise constant over
``n_S = 1..5`` equal segments; ``n_q = 3 + 4 n_S``) is fitted to these poses by the
Levenberg-Marquardt IK of ``hsa_elastica.spcs.inverse_kinematics_lm`` (exact Jacobian, orientation
weight 0.1 L; the paper uses the gradient iteration of Eq. 14, which converges to the same
least-squares optimum, only slower).  Two variants:

* ``fixed``: ``phi0`` fixed to the motor angle (read from the encoder in the paper);
* ``free``: ``phi0`` fitted too.

Errors (Eq. 15-16, ``hsa_elastica.spcs.error_metrics``) are pooled per primitive over its magnitudes,
the four rods and the 25 poses: ``e_p`` [mm], ``e_quat`` [-] (quaternion vector part) and the
XYZ Euler-angle errors [rad].

Usage::

    python -m hsa_elastica.validation.spcs_study [--magnitudes 0.25 0.5 0.75 1.0] [--results DIR]

Writes ``spcs_study.md`` and ``fig5_spcs.png`` into ``--results`` (default
``./validation_results``) and caches every simulated steady state as ``<out>/spcs_<primitive>_m<mag>_<hash>.npz``
(the hash covers the robot parameters and settling settings), so refits do not re-simulate.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Sequence

import pandas as pd

# the computation and the output live in their own modules; their names are re-exported here
from hsa_elastica.validation.spcs_study_compute import (
    GROUPS as GROUPS,
    N_SEGMENTS as N_SEGMENTS,
    PRIMITIVE_NAMES as PRIMITIVE_NAMES,
    VARIANTS as VARIANTS,
    FloatArray as FloatArray,
    RodFit as RodFit,
    SettleSettings,
    SteadyShape as SteadyShape,
    base_pose as base_pose,
    cache_key as cache_key,
    cache_path as cache_path,
    end_element_strain_ratio,
    fit_rod as fit_rod,
    fit_shapes as fit_shapes,
    load_or_simulate as load_or_simulate,
    metrics_table as metrics_table,
    rod_poses as rod_poses,
    run_study,
    simulate_primitive as simulate_primitive,
    study_params,
)
from hsa_elastica.validation.spcs_study_report import (
    PAPER_TABLE2_MAX as PAPER_TABLE2_MAX,
    conclusion_text,
    plot_fig5,
    write_markdown,
)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hsa_elastica.validation.spcs_study", description=__doc__.split("\n")[0])
    ap.add_argument("--magnitudes", type=float, nargs="+", default=[0.25, 0.5, 0.75, 1.0],
                    help="primitive magnitudes in (0, 1] (fraction of the maximum motor angle pi)")
    ap.add_argument("--primitives", nargs="+", default=list(PRIMITIVE_NAMES), choices=PRIMITIVE_NAMES)
    ap.add_argument("--out", type=Path, default=None, help="cache directory of steady states (default: RESULTS/out)")
    ap.add_argument("--results", type=Path, default=Path("validation_results"),
                    help="where spcs_study.md and fig5_spcs.png go (default: ./validation_results)")
    ap.add_argument("--damping", type=float, default=50.0, help="damping rate [1/s]")
    ap.add_argument("--dt", type=float, default=2e-5, help="time step [s]")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = args.results / "out"
    for m in args.magnitudes:
        if not (0.0 < m <= 1.0):
            ap.error(f"--magnitudes: {m!r} is invalid, must be in (0, 1]")
    params = study_params(dt=args.dt, damping=args.damping)
    t0 = time.perf_counter()
    shapes, fits, per_prim, per_group, failed = run_study(args.magnitudes, args.out, args.primitives, params)
    print(f"simulated/loaded {len(shapes)} steady states, {len(fits)} fits in {time.perf_counter() - t0:.1f} s")
    args.results.mkdir(parents=True, exist_ok=True)
    per_prim.to_csv(args.out / "spcs_metrics_per_primitive.csv", index=False)
    plot_fig5(per_prim, args.results / "fig5_spcs.png")
    concl = conclusion_text(per_group, end_element_strain_ratio(params, shapes))
    write_markdown(args.results / "spcs_study.md", params, SettleSettings(), shapes, per_prim, per_group, fits, concl, failed)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(per_group.round(4).to_string(index=False))
    print(concl)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
