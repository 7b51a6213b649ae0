"""Contact with obstacles through PyElastica's contact classes and the package's contact law
(physics/contact.py), on the per-rod operator path.

``HSASimulator`` has PyElastica's ``Contact`` module: a ``Plane`` appended to the simulator and
``CylinderPlaneContact`` between it and the platform stop a fully elongating robot at a ceiling
5 mm above the platform (free, the same command raises it by ~30 mm: docs/primitives.md).  The
fused stepper refuses the contact operator instead of ignoring it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from elastica.contact_forces import CylinderPlaneContact
from elastica.surface import Plane

from hsa_elastica.engines.compile import FastPathUnsupported
from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.builders import build_robot

GAP = 0.005  # m, ceiling above the platform's top face at rest
FULL = [3.0, -3.0, 3.0, -3.0]  # rad, near-full elongation of all four rods (R, L, R, L)


def _params():  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    return dataclasses.replace(
        p,
        rod=dataclasses.replace(p.rod, n_elements=10),
        simulation=dataclasses.replace(
            p.simulation, dt=5e-5, ramp_time=0.05, record_fps=50.0, damping=50.0
        ),
    )


def _robot_under_ceiling(contact: bool):  # type: ignore[no-untyped-def]
    p = _params()
    robot = build_robot(p, FULL, record=False, finalize=False)
    top = float(robot.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness
    ceiling = top + GAP
    if contact:
        plane = Plane(plane_origin=np.array([0.0, 0.0, ceiling]),
                      plane_normal=np.array([0.0, 0.0, -1.0]))
        robot.simulator.append(plane)
        robot.simulator.detect_contact_between(robot.platform, plane).using(
            CylinderPlaneContact, k=1e4, nu=10.0
        )
    robot.finalize()
    return robot, top, ceiling


def test_a_ceiling_stops_the_platform() -> None:
    free, top0, ceiling = _robot_under_ceiling(contact=False)
    free.run(0.2)
    blocked, _, _ = _robot_under_ceiling(contact=True)
    blocked.run(0.2)
    half = 0.5 * _params().platform.thickness
    rise_free = float(free.platform.position_collection[2, 0]) + half - top0
    top_blocked = float(blocked.platform.position_collection[2, 0]) + half
    assert rise_free > 5.0 * GAP  # without contact the platform passes the ceiling
    # with it the top face stays at the ceiling: 0.1 mm covers the contact spring's
    # penetration (force / k: ~27 N / 1e4 N/m is avoided by the force-balancing term, seen
    # -0.04 mm) and the contact tolerance of PyElastica (surface_tol = 0.1 mm)
    assert top_blocked == pytest.approx(ceiling, abs=1e-4)
    assert np.all(np.isfinite(blocked.platform.velocity_collection))


def test_the_fused_stepper_refuses_contact() -> None:
    robot, _, _ = _robot_under_ceiling(contact=True)
    with pytest.raises(FastPathUnsupported):
        FastRobot(robot)


def test_the_fused_stepper_refuses_the_contact_law() -> None:
    """``BodyContact`` (physics/contact.py) runs on the operator path only, as PyElastica's."""
    from hsa_elastica.params import ContactParams, PlaneObstacle
    from hsa_elastica.physics.contact import add_contact

    p = _params()
    robot = build_robot(p, FULL, record=False, finalize=False)
    top = float(robot.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness
    add_contact(robot.simulator, robot.platform, PlaneObstacle(
        point=(0.0, 0.0, top + GAP), normal=(0.0, 0.0, -1.0), contact=ContactParams()))
    robot.finalize()
    with pytest.raises(FastPathUnsupported, match="BodyContact"):
        FastRobot(robot)


def test_blocked_force_scenario_presses_the_platform_on_the_plate(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import runpy
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "scenarios" / "blocked_force.py"
    main = runpy.run_path(str(script), run_name="scenario_under_test")["main"]
    assert main(["--angles", "0.5", "--duration", "0.1"]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1].split()
    angle, force, per_rod, spread = (float(x) for x in row[:4])
    assert angle == 0.5 and per_rod == pytest.approx(force / 4)
    # four rods blocked at 0.5 rad: 4 x 87.7 N, the single rod's blocked force at 10 elements
    # (experiments.characterization.blocked_force: 175.35 N/rad, linear up to 3 rad), less the
    # give of the joints in series (measured 95 %); 0.1 s: steady at 0.5 rad (spread 0 %)
    assert 0.9 * 4 * 87.7 < force < 4 * 87.7 and spread < 1.0
    assert main(["--gap", "-1"]) == 2
