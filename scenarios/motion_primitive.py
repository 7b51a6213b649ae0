#!/usr/bin/env python
"""Motion primitive of an HSA robot (paper Fig. 2): run to the steady state, save, render.

This script is ``hsa-elastica primitive`` (same arguments, same defaults: it calls the command
line's own parser), kept next to the other scenarios so the paper's experiments read as scripts.

Example::

    python scenarios/motion_primitive.py bend_north --magnitude 1.0 \\
        --out runs/bend_north --render renders/bend_north.mp4 --still renders/bend_north.png

The motor angles come from ``hsa_elastica.robots.primitives.primitive_angles`` (see
docs/primitives.md for the sign conventions); the run stops once the robot has settled
(``hsa_elastica.robots.steady_state``), or after ``--duration`` seconds.
"""

from __future__ import annotations

import sys

from hsa_elastica.cli import main

if __name__ == "__main__":
    sys.exit(main(["primitive", *sys.argv[1:]]))
