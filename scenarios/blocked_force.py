#!/usr/bin/env python
"""Blocked force of the paper robot: its platform pressed against a rigid plate, force against motor angle.

A frictionless plate (a ``PlaneObstacle`` facing down) is placed ``--gap`` above the top face
of the platform at rest; the four rods are turned to the elongation primitive's angles (each
rod by ``angle`` along its handedness), ramped in over ``--ramp``, and the robot runs for
``--duration`` on the fused explicit engine.  The table gives, per angle, the plate's force on
the platform (the ``BodyContact`` forcing's ``total_force``, on the platform's top rim: 16
points), how far the platform presses into the plate and the wall time of the run.  The force
is the mean over the last quarter of the run after the ramp, its spread (max - min) in percent
of it: a spread of more than a few percent says the robot did not settle against the plate.

Speed: about 0.5 s of wall time per pose of 0.2 s with 10 elements per rod once the kernels
are compiled.

The plate's stiffness (``--stiffness`` per rim point) makes the platform press into it by
``force / (16 k)``; the robot itself gives way by ``force / k_robot``, so the force is the
fully blocked force reduced by the fraction ``k_robot / (k_robot + 16 k)`` (0.4 % at the
default).  Pressed straight, the plate takes 0.954 times four single rods' blocked force
(``hsa_elastica.experiments.characterization.blocked_force``; the rod-platform joints are
springs in series with the rods): 167 N at 0.25 rad, 334 N at 0.5 rad.  But that straight
pose is unstable above about 80 N (from 0.15 rad): on a frictionless plate the platform can
slide, and the rods buckle sideways together at the Euler load of four clamped-guided rods,
``4 pi^2 B / L^2`` = 79 N.  The run starts exactly symmetric, so it may stay on the unstable
straight pose for the whole run (at 0.25 to 1 rad for 0.2 s) or leave it for the buckled one
(at 2 rad the force drops to about 60 N).  ``validation/blocked_force.md`` has both branches
from the static solver, their stability and the figure.

Example::

    python scenarios/blocked_force.py
    python scenarios/blocked_force.py --angles 0.25 0.5 --gap 0.002
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from typing import Any

import numpy as np

from hsa_elastica.params import (
    ContactParams,
    ParameterError,
    PlaneObstacle,
    check_motor_angles,
    check_run_length,
    paper_robot_params,
)


def _run_and_read(robot: Any, ref: Any, duration: float, ramp: float) -> tuple[list[float], float]:
    """Run ``robot`` for ``duration`` [s] in 5 ms pieces; the plate's force [N] on the platform
    after each piece of the last quarter past the ramp, and the deepest press [m] then."""
    forces, pressed, t = [], 0.0, 0.0
    window = ramp + 0.75 * max(duration - ramp, 0.0)
    while t < duration - 1e-12:
        t = robot.run(min(0.005, duration - t))  # the new simulated time, from 0
        if t >= window - 1e-12:
            sensor = ref.instance
            forces.append(-float(sensor.total_force[2]))  # the plate pushes the platform down
            pressed = max(pressed, -float(sensor.gap.min()))
    return forces, pressed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--angles", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0],
                    help="motor angles [rad] of the elongation primitive, one run each (default [0.25, 0.5, 1.0, 2.0])")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="plate height above the platform's top face at rest [m] (default 0.0)")
    ap.add_argument("--stiffness", type=float, default=1e6,
                    help="plate contact stiffness per rim point [N/m] (default 1e+06)")
    ap.add_argument("--duration", type=float, default=0.2,
                    help="simulated time per angle [s] (default 0.2)")
    ap.add_argument("--ramp", type=float, default=0.05,
                    help="time over which the motors turn to the angle [s] (default 0.05)")
    ap.add_argument("--elements", type=int, default=10,
                    help="elements per rod (default 10)")
    args = ap.parse_args(argv)

    base = paper_robot_params()
    try:
        angles = check_motor_angles(args.angles, field="--angles", ndim=1)
        if not (np.isfinite(args.gap) and 0.0 <= args.gap <= 0.05):
            raise ParameterError(f"--gap = {args.gap!r} is invalid: must be >= 0 and <= 0.05 (m)")
        if not (np.isfinite(args.stiffness) and 0.0 < args.stiffness <= 1e9):
            raise ParameterError(f"--stiffness = {args.stiffness!r} is invalid: must be > 0 and "
                                 "<= 1e+09 (N/m)")
        contact = ContactParams(stiffness=args.stiffness, smoothing_length=1e-6, damping_ratio=0.5)
        params = dataclasses.replace(
            base,
            rod=dataclasses.replace(base.rod, n_elements=args.elements),
            simulation=dataclasses.replace(base.simulation, dt=3e-5, ramp_time=args.ramp,
                                           record_fps=50.0, damping=50.0),
        )
        check_run_length(args.duration, params.simulation.dt, "--duration")
    except ParameterError as exc:
        print(f"blocked_force.py: error: {exc}", file=sys.stderr)
        return 2

    from hsa_elastica.physics.contact import add_contact
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import FastRobot

    print(f"plate {args.gap * 1e3:g} mm above the platform, {contact.stiffness:g} N/m per rim "
          f"point, {args.elements} elements per rod, {args.duration:g} s per angle")
    print(f"{'angle [rad]':>12} {'force [N]':>10} {'per rod [N]':>12} {'spread [%]':>10} "
          f"{'pressed [um]':>13} {'wall [s]':>9}")
    for angle in angles:
        motors = [h * float(angle) for h in params.handedness]  # the elongation primitive
        wall = time.perf_counter()
        robot = build_robot(params, motors, record=False, finalize=False)
        top = float(robot.platform.position_collection[2, 0]) + 0.5 * params.platform.thickness
        plate = PlaneObstacle(point=(0.0, 0.0, top + args.gap), normal=(0.0, 0.0, -1.0),
                              contact=contact)
        ref = add_contact(robot.simulator, robot.platform, plate)
        robot.finalize()
        forces, pressed = _run_and_read(FastRobot(robot), ref, args.duration, args.ramp)
        force = float(np.mean(forces))
        spread = float(np.ptp(forces)) / max(abs(force), 1e-12)
        print(f"{angle:12.3f} {force:10.3f} {force / len(robot.rods):12.3f} "
              f"{100.0 * spread:10.1f} {pressed * 1e6:13.1f} {time.perf_counter() - wall:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
