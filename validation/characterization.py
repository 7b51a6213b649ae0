"""Validation against the measured closed-HSA characterization (paper Section II-C, Fig. 3): the
report.  The computations (parameter sets, fits, simulated points, scores) live in
:mod:`hsa_elastica.validation.characterization`; this checkout script runs them and writes, besides
the package command's ``characterization_points.csv``, ``scores.csv`` and ``fitted_params*.yaml``,

* ``<results>/results.md`` -- scores per parameter set and characteristic, parameters and the
  notes (the paper's half twist strain, the consistency check, the optional laws);
* ``<results>/fig3_characterization.png`` -- one panel per characteristic: measured (solid,
  error bars) vs the best fitted parameter set (dashed; chosen by the cross-validated score of
  ``<results>/cv_scores.csv`` when ``python -m validation.characterization_cv`` wrote it, else
  in-sample) and Table I (dotted);
  ``<results>/fig3_characterization_other_sets.png`` -- the other fitted sets (``--fit``, ``--law``).

Without an output option (``--out``, ``--results``, ``--fitted-dir``) it writes into this folder
and the fitted rods into ``hsa_elastica/data``, regenerating the committed files; given any, it
writes only where it is told.  Options as for the package module (``--help``), plus
``--replot POINTS_CSV`` (only redraw the figures from an earlier run's points).

Usage (from the checkout root)::

    python -m validation.characterization [--fit] [--law nonlinear+compression] [--jobs 2]
    python -m validation.characterization --replot validation_results/out/characterization_points.csv
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from hsa_elastica.validation.characterization import (
    parser,
    print_summary,
    resolve_outputs,
    run_validation,
    write_tables,
)
from hsa_elastica.validation.characterization_fit import score
from validation import with_defaults
from validation.characterization_report import (
    _compression_note,
    _paper_law_note,
    plot_fig3,
    write_report,
)

HERE = Path(__file__).resolve().parent
#: options that say where the run writes: given any, the committed files are left alone
OUTPUT_OPTIONS = ("--out", "--results", "--fitted-dir")


def arguments(argv: list[str]) -> list[str]:
    """``argv`` with the committed-results defaults, unless it names an output location."""
    defaults = ["--results", str(HERE), "--fitted-dir", str(HERE.parent / "hsa_elastica" / "data")]
    return with_defaults(argv, defaults, OUTPUT_OPTIONS)


def main(argv: list[str] | None = None) -> int:
    """Run the validation (:func:`hsa_elastica.validation.characterization.run_validation`) and
    write its tables, figures and ``results.md``; ``argv`` as given (no defaults added)."""
    ap = parser(prog="python -m validation.characterization")
    ap.add_argument("--replot", type=Path, default=None, metavar="POINTS_CSV",
                    help="only redraw the figures from a characterization_points.csv written by an earlier run")
    args = ap.parse_args(argv)
    if resolve_outputs(ap, args):
        return 2
    cv_path = args.results / "cv_scores.csv"  # written by python -m validation.characterization_cv
    cv = pd.read_csv(cv_path) if cv_path.is_file() else None
    if args.replot is not None:
        args.results.mkdir(parents=True, exist_ok=True)
        figures = plot_fig3(pd.read_csv(args.replot), args.results / "fig3_characterization.png", cv)
        print("wrote " + ", ".join(str(f) for f in figures))
        return 0
    run = run_validation(args)
    written = write_tables(run, args.out, args.results)
    written += plot_fig3(run.points, args.results / "fig3_characterization.png", cv)
    note, _ = _paper_law_note(run.data, run.rods)
    if run.laws or any(p.startswith("fitted_nonlinear") for p in run.rods):
        note += "\n" + _compression_note(run.scores, run.rods, run.laws)
    write_report(run.points, run.scores, score(run.points, column="closed_form"), run.rods, note,
                 args.results / "results.md", run.wall, run.laws, args.method, cv)
    written.append(args.results / "results.md")
    print(note)
    print_summary(run, args.jobs, written)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(arguments(sys.argv[1:])))
