#!/usr/bin/env python
"""Steady state of an HSA robot for given motor angles; prints the result as JSON.

This script is ``hsa-elastica steady-state --json -`` (same arguments, same defaults: it calls
the command line's own parser).  By default the static equilibrium is solved directly;
``--dynamic`` relaxes the dynamics instead.

Example (elongation at full magnitude: +pi on the right-handed, -pi on the left-handed rods)::

    python scenarios/steady_state.py --angles 3.1416 -3.1416 3.1416 -3.1416

Angles are in radians about each rod's own +z axis (rods at 45, 135, 225, 315 deg, handedness
R, L, R, L).  Output keys: motor_angles_rad, platform_position_m,
platform_quaternion_xyzw, platform_marker_position_m, rod_tip_positions_m, converged, method,
sim_time_s, wall_time_s (SI units, frame robot_base; docs/outputs.md).
"""

from __future__ import annotations

import sys

from hsa_elastica.cli import main

if __name__ == "__main__":
    args = sys.argv[1:]
    if "--json" not in args and not any(a in ("-h", "--help") for a in args):
        args = [*args, "--json", "-"]
    sys.exit(main(["steady-state", *args]))
