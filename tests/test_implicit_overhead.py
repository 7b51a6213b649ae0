"""The implicit engine's calls without the dispatcher's typing and the recorder's one-pass contact
readings: the same numbers as the paths they replace (``benchmarks/bench_implicit_overhead.py``
measures the time they save).

``ImplicitEngine.advance`` calls ``newton_steps``' compiled specialisation for its records
(``statics_build.specialisation``) instead of the dispatcher: the same machine code on the same
arrays, so the trajectory must agree bitwise with the dispatcher's (tolerance 0).  The sensor
recorder reads each contact with ``_ContactSensor.readings`` instead of the properties
``total_force``, ``in_contact``, ``sliding``, ``sticking`` and ``gap``: the same operations on
the same outputs, so the values must be equal.
"""

from __future__ import annotations


import numpy as np

from hsa_elastica.engines.implicit_newton import newton_steps
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.compiled import ImplicitRobot
from tests.test_statics_hybrid_contacts import _push_scene

#: the push scene's run [s]: the east rods reach the ball about 0.85 s in
DURATION = 1.0


def _state(robot: ImplicitRobot) -> list[np.ndarray]:
    m, e = robot.engine.model, robot.engine
    return [np.array(a, copy=True) for a in (m.rod_arrays.position, m.rod_arrays.director,
                                             m.body_arrays.position, m.body_arrays.director,
                                             e.v, e.a)]


def test_specialised_newton_call_follows_the_dispatcher_bitwise() -> None:
    """The push scene through the ball's contact, recorded (an engine call every 5 steps),
    on the specialisation and on the dispatcher: equal states, velocities, accelerations and
    counts."""
    params, angles = _push_scene()
    runs = []
    for dispatcher in (True, False):
        robot = ImplicitRobot(build_robot(params, angles))
        ball = np.array(robot.engine.model.body_arrays.position[:, -1], copy=True)
        if dispatcher:
            robot.engine._newton = newton_steps
        robot.run(DURATION)
        e = robot.engine
        assert (e._newton is newton_steps) == dispatcher
        travel = np.linalg.norm(e.model.body_arrays.position[:, -1] - ball)
        assert travel > 1e-5, travel  # the rods touched the ball within the run
        runs.append((robot, _state(robot), e.evaluations, e.n_jacobians))
    (_, s0, ev0, j0), (_, s1, ev1, j1) = runs
    assert (ev0, j0) == (ev1, j1)
    for a, b in zip(s0, s1):
        np.testing.assert_array_equal(a, b)


def test_contact_readings_equal_the_properties() -> None:
    """After the push (the ball on the floor, the rods on the ball), every contact's
    ``readings()`` equals the values of its properties."""
    params, angles = _push_scene()
    robot = ImplicitRobot(build_robot(params, angles))
    robot.run(DURATION)
    touching = 0
    for ref in robot.robot.contacts:  # type: ignore[union-attr]
        s = ref.instance
        expected = (*s.total_force, float(s.in_contact.sum()), float(s.sliding.sum()),
                    float(s.sticking.sum()), float(s.gap.min()))
        assert s.readings() == expected
        touching += int(s.in_contact.sum())
    assert touching >= 1  # the ball's support point on the floor at least
