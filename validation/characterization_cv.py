"""Source-checkout entry point of ``python -m hsa_elastica.validation.characterization_cv`` (the logic and its
documentation live there): runs it with ``--results validation/results.md`` so that the files
committed here are regenerated.  Options as for the package module (``--help``).
"""

import sys
from pathlib import Path

from hsa_elastica.validation.characterization_cv import main

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    raise SystemExit(main(["--results", str(HERE / "results.md"), *sys.argv[1:]]))
