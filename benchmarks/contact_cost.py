"""Cost of the contact law on the fused step: the paper robot (10 elements per rod) without
obstacles, above a floor it does not touch, pressing its platform on a plate, and above a floor
with two free objects resting on it (a ball and a can, the robot's rods and platform in
contact with both), side by side in one run (docs/contact.md, "Cost on the compiled
engines").

Each case builds the robot with its ``environment`` and runs it on the fused engine for the
warm up; then the cases are timed round robin (``--steps`` steps each, ``--rounds`` times),
keeping each case's fastest round (the machine is shared)::

    python benchmarks/contact_cost.py            # ~1 min once the kernels are cached
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    PlaneObstacle,
    paper_robot_params,
)
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.compiled import FastRobot

PRESS = [0.5, -0.5, 0.5, -0.5]  # rad


def _params():  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    return dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=10),
        simulation=dataclasses.replace(p.simulation, dt=5e-5, ramp_time=0.05, damping=50.0))


def _cases() -> dict[str, object]:
    p = _params()
    rest = build_robot(p, [0.0] * 4, record=False, finalize=False)
    top = float(rest.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness
    law = ContactParams(stiffness=2e5, smoothing_length=1e-4, damping_ratio=0.3)
    floor = PlaneObstacle(point=(0.0, 0.0, -0.01), contact=law)
    plate = PlaneObstacle(point=(0.0, 0.0, top + 0.002), normal=(0.0, 0.0, -1.0), contact=law)
    return {
        "no contact": p,
        "floor, not touching": p.replace(environment=EnvironmentParams(obstacles=(floor,))),
        "plate, pressed": p.replace(environment=EnvironmentParams(obstacles=(plate,))),
        "floor, two objects": p.replace(environment=EnvironmentParams(
            obstacles=(floor,), objects=_objects())),
    }


def _objects() -> tuple[ObjectParams, ObjectParams]:
    """``HSAPush-v0``'s ball (5 cm, 20 g, 12.5 mm east of the platform's rim) and a can
    (1.5 cm radius, 3 cm tall, 21 g) standing 3.5 cm north of the north rods' contact
    surface, on the floor."""
    soft = ContactParams(stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5)
    ball = ObjectParams(radius=0.05, mass=0.02, position=(0.11, 0.0, -0.01 + 0.05),
                        contact=soft)
    can = ObjectParams(shape="cylinder", radius=0.015, length=0.03, density=1000.0,
                       axis=(0.0, 0.0, 1.0), position=(0.0, 0.075, -0.01 + 0.015), contact=soft)
    return ball, can


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    robots = {}
    for name, params in _cases().items():
        built = build_robot(params, PRESS, record=False)
        robots[name] = (built, FastRobot(built))
        robots[name][1].run(0.2)  # the ramp and the pressing settle; kernels loaded
    best = dict.fromkeys(robots, float("inf"))
    for _ in range(args.rounds):  # round robin: the cases share the machine's load alike
        for name, (_, robot) in robots.items():
            t0 = time.perf_counter()
            robot.run(args.steps * 5e-5)
            best[name] = min(best[name], (time.perf_counter() - t0) / args.steps * 1e6)
    base = best["no contact"]
    for name, (built, _) in robots.items():
        force = (f"  (plate on the platform: {built.contacts[-1].instance.total_force[2]:.1f} N)"
                 if name.startswith("plate") else "")
        print(f"{name:22s} {best[name]:7.2f} us/step  {best[name] / base:5.2f} x{force}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
