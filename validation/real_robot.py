"""Source-checkout entry point of ``python -m hsa_elastica.validation.real_robot`` (the logic and its
documentation live there): runs it with ``--results validation/`` (``--fit``: into the
package's preset ``hsa_elastica/presets/fpu_robot_2022.yaml``) so that the files
committed here are regenerated.  Options as for the package module (``--help``).
"""

import sys
from pathlib import Path

from hsa_elastica.validation.real_robot import main

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    raise SystemExit(main(["--results", str(HERE), "--preset-out",
                            str(HERE.parent / "hsa_elastica" / "presets" / "fpu_robot_2022.yaml"),
                            *sys.argv[1:]]))
