"""Source-checkout entry point of ``python -m hsa_elastica.validation.real_robot`` (the logic and its
documentation live there): runs it with ``--results validation/`` (``--fit``: into the
package's preset ``hsa_elastica/presets/fpu_robot_2022.yaml``) so that the files
committed here are regenerated.  Options as for the package module (``--help``); given
``--results`` or ``--preset-out``, nothing is added (the run writes only where it is told).
"""

import sys
from pathlib import Path

from hsa_elastica.validation.real_robot import main

from validation import with_defaults

HERE = Path(__file__).resolve().parent
#: options that say where the run writes: given any, the committed files are left alone
OUTPUT_OPTIONS = ("--results", "--preset-out")


def arguments(argv: list[str]) -> list[str]:
    """``argv`` with the committed-results defaults, unless it names an output location."""
    preset = HERE.parent / "hsa_elastica" / "presets" / "fpu_robot_2022.yaml"
    return with_defaults(argv, ["--results", str(HERE), "--preset-out", str(preset)], OUTPUT_OPTIONS)


if __name__ == "__main__":
    raise SystemExit(main(arguments(sys.argv[1:])))
