"""Source-checkout entry point of ``python -m hsa_elastica.validation.characterization`` (the logic and its
documentation live there): runs it with ``--results validation/ --fitted-dir hsa_elastica/data`` so that the files
committed here are regenerated.  Options as for the package module (``--help``); given ``--out``,
``--results`` or ``--fitted-dir``, nothing is added (the run writes only where it is told).
"""

import sys
from pathlib import Path

from hsa_elastica.validation.characterization import main

from validation import with_defaults

HERE = Path(__file__).resolve().parent
#: options that say where the run writes: given any, the committed files are left alone
OUTPUT_OPTIONS = ("--out", "--results", "--fitted-dir")


def arguments(argv: list[str]) -> list[str]:
    """``argv`` with the committed-results defaults, unless it names an output location."""
    defaults = ["--results", str(HERE), "--fitted-dir", str(HERE.parent / "hsa_elastica" / "data")]
    return with_defaults(argv, defaults, OUTPUT_OPTIONS)


if __name__ == "__main__":
    raise SystemExit(main(arguments(sys.argv[1:])))
