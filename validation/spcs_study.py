"""SPCS kinematic model fitted to simulated steady-state rod shapes (paper Section IV-D, Fig. 5):
the report.  The computations live in :mod:`hsa_elastica.validation.spcs_study`; this
checkout script runs them and writes ``spcs_study.md`` and ``fig5_spcs.png`` into ``--results``
(default: this folder, so that the committed files are regenerated).

Usage (from the checkout root)::

    python -m validation.spcs_study [--magnitudes 0.25 0.5 0.75 1.0] [--results DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Sequence

import pandas as pd

from hsa_elastica.validation.spcs_study import (
    PRIMITIVE_NAMES,
    STUDY_SETTLE,
    end_element_strain_ratio,
    run_study,
    study_params,
)
from validation.spcs_study_report import conclusion_text, plot_fig5, write_markdown

HERE = Path(__file__).resolve().parent

def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m validation.spcs_study", description=__doc__.split("\n")[0])
    ap.add_argument("--magnitudes", type=float, nargs="+", default=[0.25, 0.5, 0.75, 1.0],
                    help="primitive magnitudes in (0, 1] (fraction of the maximum motor angle pi)")
    ap.add_argument("--primitives", nargs="+", default=list(PRIMITIVE_NAMES), choices=PRIMITIVE_NAMES)
    ap.add_argument("--out", type=Path, default=None, help="cache directory of steady states (default: RESULTS/out)")
    ap.add_argument("--results", type=Path, default=HERE,
                    help="where spcs_study.md and fig5_spcs.png go (default: validation/)")
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
    write_markdown(args.results / "spcs_study.md", params, STUDY_SETTLE, shapes, per_prim, per_group, fits, concl, failed)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(per_group.round(4).to_string(index=False))
    print(concl)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
