#!/usr/bin/env python
"""Single HSA rod twisted at its base (Section II-C): final length vs. L + C_eps * phi.

The rod stands along +z, its distal end may move and tilt but not twist (the characterization
setup; ``--distal`` changes that).  Either a motor angle (``--angle``, rad, option (a) of
Section II-D) or a base torque (``--torque``, N m, option (b): the base may twist freely) is
ramped in over the ramp time; the run continues for ``--settle`` seconds, then prints the
final length next to the auxetic prediction (Eq. 3: extension = C_eps * phi along the rod's
handedness, clipped to [eps_min, eps_max] * L).  For a torque the expected angle is
``phi = tau * sum(printed Voronoi lengths) / B_z = tau (n-1) L / (n B_z)`` (docs/architecture.md).

Example::

    python scenarios/single_rod_twist.py --angle 1.5708
    python scenarios/single_rod_twist.py --torque -0.1 --handedness -1   # left-handed: negative

The time step defaults to the package default (``SimulationParams().dt``); the velocity damping
defaults to 50 1/s so that the rod settles within ``--settle`` (the steady state does not depend
on it).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from hsa_elastica.params import RodParams, SimulationParams, load_params
from hsa_elastica.robots.builders import build_single_rod


def main(argv: list[str] | None = None) -> int:
    defaults = SimulationParams()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--angle", type=float, help="motor angle at the base [rad] (right-hand rule about +z); this or --torque")
    mode.add_argument("--torque", type=float, help="twist torque at the base [N m] about +z; this or --angle")
    ap.add_argument("--handedness", type=int, choices=(1, -1), default=None,
                    help="+1 right-handed, -1 left-handed (default: from the rod parameters)")
    ap.add_argument("--params", help="rod parameter file (RodParams, .yaml/.toml) (default: the paper rod)")
    ap.add_argument("--distal", choices=("twist_locked", "free", "fixed"), default="twist_locked",
                    help="distal boundary condition (default twist_locked)")
    ap.add_argument("--dt", type=float, default=defaults.dt, help=f"time step [s] (default {defaults.dt:g})")
    ap.add_argument("--damping", type=float, default=50.0, help="velocity damping [1/s] (default 50)")
    ap.add_argument("--ramp", type=float, default=0.5, help="ramp time [s] (default 0.5)")
    ap.add_argument("--settle", type=float, default=0.3, help="time simulated after the ramp [s] (default 0.3)")
    args = ap.parse_args(argv)

    rod = RodParams() if args.params is None else load_params(args.params, RodParams)
    if args.handedness is not None:
        rod = rod.with_handedness(args.handedness)
    sim = SimulationParams(
        dt=args.dt, ramp_time=args.ramp, damping=args.damping, rotational_damping=args.damping
    )
    if args.angle is not None:
        handle = build_single_rod(rod, sim, base="motor", angle=args.angle, distal=args.distal)
    else:
        handle = build_single_rod(rod, sim, base="free_twist", torque=args.torque, distal=args.distal)
    handle.run(args.ramp + args.settle, progress=sys.stderr.isatty())
    df = handle.diagnostics()
    phi = float(df["base_twist_angle"].iloc[-1])  # measured base rotation [rad]
    x = handle.rod.position_collection
    length = float(np.linalg.norm(x[:, -1] - x[:, 0]))
    L = rod.length
    eps = min(max(rod.C_eps * rod.handedness * phi / L, rod.eps_min), rod.eps_max)
    print(f"rod: L = {L*1e3:.2f} mm, C_eps = {rod.C_eps*1e3:.3f} mm/rad, handedness {rod.handedness:+d}")
    if args.torque is not None:
        n = rod.n_elements
        phi_expected = args.torque * (n - 1) * L / (n * rod.B_z)
        print(f"base torque {args.torque:.4g} N m: base angle {phi:.4f} rad "
              f"(expected tau (n-1) L / (n B_z) = {phi_expected:.4f} rad)")
    else:
        print(f"motor angle {args.angle:.4f} rad (measured {phi:.4f} rad)")
    print(f"final length      {length*1e3:.3f} mm")
    print(f"L + C_eps * phi   {L*(1+eps)*1e3:.3f} mm   (Eq. 3, along the handedness, clipped)")
    print(f"difference        {(length - L*(1+eps))*1e3:+.3f} mm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
