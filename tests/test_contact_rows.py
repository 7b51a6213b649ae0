"""The contact table's rows as the compiled force evaluation applies them
(physics/contact_rows.py): a run of consecutive contact rows in one call is the rows applied
one by one, and a run ends at the first entry of another operator.  The rows' physics is
checked elsewhere against mechanics and against the operator classes (test_contact_objects,
test_contact_laws); here the reference is the single-row kernel, so equality is exact."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from hsa_elastica.params import (
    ContactParams,
    EnvironmentParams,
    ObjectParams,
    PlaneObstacle,
    paper_robot_params,
)
from hsa_elastica.physics.contact_rows import apply_contact, apply_contact_run
from hsa_elastica.physics.mount_kernels import block_view
from hsa_elastica.physics.tables import OP_CONTACT, OP_NOOP
from hsa_elastica.robots.builders import build_fast_robot


def _scene() -> Any:
    """The paper robot (6 elements per rod) over a floor with a ball and a can resting on
    it, two steps in: rows of every kind (rod nodes on the floor and on objects, the platform's
    rims, a sphere's support point, a cylinder's rims), some touching."""
    p = paper_robot_params()
    p = dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=6),
        simulation=dataclasses.replace(p.simulation, dt=5e-5, damping=50.0))
    law = ContactParams(stiffness=2e5, smoothing_length=1e-4, damping_ratio=0.3)
    soft = ContactParams(stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5)
    floor = PlaneObstacle(point=(0.0, 0.0, -0.01), contact=law)
    # 0.4 mm above the floor: within the floor law's reach
    ball = ObjectParams(radius=0.05, mass=0.02, position=(0.11, 0.0, 0.0404), contact=soft)
    can = ObjectParams(shape="cylinder", radius=0.015, length=0.03, density=1000.0,
                       axis=(0.0, 0.0, 1.0), position=(0.0, 0.075, 0.0054), contact=soft)
    p = p.replace(environment=EnvironmentParams(obstacles=(floor,), objects=(ball, can)))
    robot = build_fast_robot(p, [0.3, -0.3, 0.3, -0.3], record=False)
    robot.run(1e-4)
    return robot


def _apply(robot: Any, program: Any, one_by_one: bool) -> list[Any]:
    """The forces the contact entries of ``program`` add, from zeroed external loads; the
    arrays the rows write (external forces and torques, the table's outputs)."""
    table = robot.model.tables.contacts
    rod, body = robot.rod_arrays, robot.body_arrays
    for a in (rod.external_forces, rod.external_torques, body.external_forces,
              body.external_torques, table.output):
        a[:] = 0.0
    views = block_view(rod), block_view(body)
    if one_by_one:
        for code, i in program:
            if code == OP_CONTACT:
                apply_contact(table, int(i), *views)
    else:
        apply_contact_run(table, program, 0, *views)
    return [a.copy() for a in (rod.external_forces, body.external_forces,
                               body.external_torques, table.output)]


def test_a_run_of_contact_rows_in_one_call_is_the_rows_one_by_one() -> None:
    robot = _scene()
    n = robot.model.tables.contacts.ids.shape[0]
    kinds = set(robot.model.tables.contacts.ids[:, 1].tolist())
    assert kinds == {0, 1, 2}  # rod nodes, body points, a sphere's support point
    program = np.array([[OP_CONTACT, i] for i in range(n)], dtype=np.int64)
    run = _apply(robot, program, one_by_one=False)
    rows = _apply(robot, program, one_by_one=True)
    assert run[1][2, 1:].min() > 0.0  # the floor pushes both objects up
    for a, b in zip(run, rows):
        assert np.array_equal(a, b)


def test_a_run_ends_at_the_first_entry_of_another_operator() -> None:
    robot = _scene()
    n = robot.model.tables.contacts.ids.shape[0]
    program = np.array([[OP_CONTACT, i] for i in range(n)], dtype=np.int64)
    cut = n // 2
    program[cut, 0] = OP_NOOP
    run = _apply(robot, program, one_by_one=False)
    first = _apply(robot, program[:cut], one_by_one=True)
    for a, b in zip(run, first):
        assert np.array_equal(a, b)
    everything = _apply(robot, np.array([[OP_CONTACT, i] for i in range(n)]), one_by_one=True)
    assert not np.array_equal(run[3], everything[3])  # the rows after the cut were left out


def test_rows_out_of_table_order_are_applied_as_the_program_lists_them() -> None:
    """The run is cut where the program's next row is not the table's next row (a run of one
    loop's consecutive rows is one call): a permuted program, with rows skipped and repeated,
    gives the rows one by one in its order, bit for bit."""
    robot = _scene()
    n = robot.model.tables.contacts.ids.shape[0]
    order = [n - 1, 0, 1, 2, 5, 4, 3, 3] + list(range(7, n - 1, 2))
    program = np.array([[OP_CONTACT, i] for i in order], dtype=np.int64)
    run = _apply(robot, program, one_by_one=False)
    rows = _apply(robot, program, one_by_one=True)
    for a, b in zip(run, rows):
        assert np.array_equal(a, b)
    table_order = _apply(robot, np.array([[OP_CONTACT, i] for i in range(n)]), one_by_one=True)
    assert not np.array_equal(run[3], table_order[3])  # rows 6, 8, ... were left out
