"""Cost of the contact law on the fused step: the paper robot (10 elements per rod) without
obstacles, above a floor it does not touch, pressing its platform on a plate, and above a floor
with two free objects resting on it (a ball and a can, the robot's rods and platform in
contact with both), side by side in one run (docs/contact.md, "Cost on the compiled
engines").

Each case builds the robot with its ``environment`` and runs it on the fused engine for the
warm up; then the cases are timed round robin (``--steps`` steps each, ``--rounds`` times),
keeping each case's fastest round (the machine is shared)::

    python benchmarks/contact_cost.py            # ~1 min once the kernels are cached
    python benchmarks/contact_cost.py --rows     # and each contact row of the two-object scene

``--rows`` times each contact row of the "floor, two objects" case alone in a compiled loop
(:func:`~hsa_elastica.physics.contact_rows.apply_contact`, ``--steps`` calls, fastest of
``--rounds``), at the state after the warm up, and all rows together as the force evaluation
applies them (:func:`~hsa_elastica.physics.contact_rows.apply_contact_run`).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

import numpy as np
from numba import njit

from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    PlaneObstacle,
    paper_robot_params,
)
from hsa_elastica.physics.borrow import borrowed
from hsa_elastica.physics.contact_rows import apply_contact, apply_contact_run
from hsa_elastica.physics.mount_kernels import block_view
from hsa_elastica.physics.tables import OP_CONTACT
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


@njit  # type: ignore[misc]
def _apply_rows(contacts: Any, rows: Any, rod: Any, body: Any, n: int) -> None:
    """``n`` times the contact rows ``rows`` of the table, as the force evaluation applies
    them (the records borrowed as the engines borrow them, the views made once; several rows
    as one run)."""
    contacts, rod, body = borrowed((contacts, rod, body))
    rod_view = block_view(rod)
    body_view = block_view(body)
    program = np.empty((rows.shape[0], 2), dtype=np.int64)
    program[:, 0] = OP_CONTACT
    program[:, 1] = rows
    for _ in range(n):
        if rows.shape[0] > 1:
            apply_contact_run(contacts, program, 0, rod_view, body_view)
        else:
            apply_contact(contacts, rows[0], rod_view, body_view)


def _row_costs(robot: FastRobot, steps: int, rounds: int) -> None:
    """Print each contact row's time [us] (fastest of ``rounds`` loops of ``steps`` calls)
    and the sum of the rows timed together."""
    table = robot.model.tables.contacts
    index = table[0]
    rod, body = robot.rod_arrays, robot.body_arrays
    names = {0: "rod nodes", 1: "body points", 2: "sphere support"}
    everything = np.arange(index.shape[0])
    for i in [*range(index.shape[0]), -1]:
        rows = everything if i < 0 else np.array([i])
        _apply_rows(table, rows, rod, body, 2)
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            _apply_rows(table, rows, rod, body, steps)
            best = min(best, (time.perf_counter() - t0) / steps * 1e6)
        if i < 0:
            print(f"all {index.shape[0]} rows together      {best:7.2f} us")
        else:
            what = names.get(int(index[i, 1]), "rod pair")
            on = f"object {index[i, 4]}" if index[i, 1] in (0, 1) and index[i, 4] >= 0 else ""
            print(f"row {i:2d}: {index[i, 2]:3d} {what:15s} {on:9s} {best:7.2f} us")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", action="store_true",
                    help="also time each contact row of the two-object scene")
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
    if args.rows:
        _row_costs(robots["floor, two objects"][1], args.steps, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
