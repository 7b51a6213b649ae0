"""Source-checkout entry point of ``python -m hsa_elastica.validation.real_robot_timeseries`` (the
logic and its documentation live there): runs it with ``--results validation/`` so that the
committed figure is regenerated.  Options as for the package module (``--help``); given
``--results``, nothing is added.
"""

import sys
from pathlib import Path

from hsa_elastica.validation.real_robot_timeseries import main

from validation import with_defaults

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    raise SystemExit(main(with_defaults(sys.argv[1:], ["--results", str(HERE)], ("--results",))))
