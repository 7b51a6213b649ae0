"""``python -m hsa_elastica.cli`` = the ``hsa-elastica`` console script."""

import sys

from hsa_elastica.cli import main

sys.exit(main())
