"""Contact with obstacles through PyElastica's contact classes and the package's contact law
(physics/contact.py), on the per-rod operator path.

``HSASimulator`` has PyElastica's ``Contact`` module: a ``Plane`` appended to the simulator and
``CylinderPlaneContact`` between it and the platform stop a fully elongating robot at a ceiling
5 mm above the platform (free, the same command raises it by ~30 mm: docs/primitives.md).  The
fused stepper refuses that contact operator instead of ignoring it.  The package's contact law
(``RodContact`` / ``BodyContact``, an ``environment`` in the robot's parameters) compiles: the
platform pressed on a plate on the fused path and in the static solver.
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


PRESS = [0.5, -0.5, 0.5, -0.5]  # rad: free, the platform rises by 4.96 mm (measured)
PLATE_GAP = 0.002  # m, plate above the platform's top face at rest


def _pressing_params():  # type: ignore[no-untyped-def]
    """The robot of :func:`_params` under a plate 2 mm above its platform (the plate's normal
    points down, to the robot): stiff enough (2e5 N/m per rim point, 16 on the top rim) that
    the ~200 N the rods press with sink the platform by ~60 um, about the smoothing length."""
    from hsa_elastica.params import ContactParams, EnvironmentParams, PlaneObstacle

    p = _params()
    top = _rest_top(p)
    plate = PlaneObstacle(point=(0.0, 0.0, top + PLATE_GAP), normal=(0.0, 0.0, -1.0),
                          contact=ContactParams(stiffness=2e5, smoothing_length=1e-4,
                                                damping_ratio=0.3))
    return p.replace(environment=EnvironmentParams(obstacles=(plate,))), top + PLATE_GAP


def _rest_top(p) -> float:  # type: ignore[no-untyped-def]
    robot = build_robot(p, [0.0] * 4, record=False, finalize=False)
    return float(robot.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness


def _check_pressed(robot, plate: float) -> None:  # type: ignore[no-untyped-def]
    top = float(robot.platform.position_collection[2, 0]) + 0.5 * _params().platform.thickness
    force = robot.contacts[-1].instance.total_force  # the plate on the platform
    print("pressed: top - plate", top - plate, "plate force", force)
    # the plate pushes down (free, the platform would rise 3 mm beyond it) ...
    assert force[2] < -1.0 and abs(force[0]) + abs(force[1]) < 1e-6 * abs(force[2])
    # ... and the top face rests within two smoothing lengths (2e-4 m) of the plate
    assert abs(top - plate) < 2e-4
    # the rods' own contact spheres stay clear of it (their tip nodes are left out)
    assert all(abs(c.instance.total_force[2]) < 1e-9 for c in robot.contacts[:-1])


def test_the_fused_robot_presses_its_platform_on_a_plate() -> None:
    """The environment's plate on the fused path (the operators compiled into a contact
    table)."""
    q, plate = _pressing_params()
    robot = build_robot(q, PRESS, record=False)
    assert len(robot.contacts) == 5  # four rods and the platform
    FastRobot(robot).run(0.2)
    _check_pressed(robot, plate)


def test_the_static_robot_presses_its_platform_on_a_plate() -> None:
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.statics import StaticSolver

    q, plate = _pressing_params()
    robot = build_robot(q, [0.0] * 4, ramp=0.0, record=False)
    solver = StaticSolver(compile_simulator(robot.simulator))
    outcome = solver.solve(np.array(PRESS))  # with the stability test (perturbed evaluations)
    # ~200 N is past the rods' buckling load (79 N, validation/blocked_force.md): the straight
    # pose is an equilibrium, unstable, and the stability test says so (its branch switch finds
    # no stable pose from these kicks); the sensors are read at that equilibrium
    assert outcome.converged and outcome.stable is False
    force = robot.contacts[-1].instance.total_force.copy()  # as solve() leaves the sensors
    _check_pressed(robot, plate)
    # ... which are the equilibrium's: evaluating there again changes nothing, bit for bit
    solver.evaluate(np.array(PRESS))
    assert np.array_equal(force, robot.contacts[-1].instance.total_force)


def _plate_file(tmp_path, obstacle=None):  # type: ignore[no-untyped-def]
    """The pressing robot's parameters as a file (``obstacle``: another obstacle mapping)."""
    from hsa_elastica.params.io import save_params

    q, plate = _pressing_params()
    path = tmp_path / "plate.yaml"
    save_params(q, path)
    if obstacle is not None:
        import yaml

        data = yaml.safe_load(path.read_text())
        data["environment"]["obstacles"] = [obstacle]
        path.write_text(yaml.safe_dump(data))
    return path, plate


@pytest.mark.parametrize("command", ["steady-state", "primitive"])
def test_the_cli_presses_the_platform_on_the_plate_of_the_parameter_file(
    command: str, tmp_path, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    """``steady-state`` (static solver) and ``primitive`` (fused) with an ``environment``: the
    platform's top face stops at the plate (free, it would be 2.96 mm beyond it)."""
    import json
    import math

    from hsa_elastica.cli import main

    path, plate = _plate_file(tmp_path)
    if command == "steady-state":
        args = ["steady-state", "--angles", *map(str, PRESS), "--json", "-", "--quiet"]
    else:  # elongation: every rod at magnitude * pi rad, signed by its handedness
        args = ["primitive", "elongation", "--magnitude", repr(0.5 / math.pi),
                "--duration", "0.2"]
    assert main([*args, "--params", str(path)]) == 0
    out = capsys.readouterr().out
    if command == "steady-state":
        z = json.loads(out)["platform_position_m"][2]
    else:  # "... platform at (x, y, z) mm, ..."
        z = float(out.split("platform at (")[1].split(")")[0].split(",")[2]) * 1e-3
    top = z + 0.5 * _params().platform.thickness
    print(command, "top - plate", top - plate)
    # within two smoothing lengths (2e-4 m); the printed 0.01 mm adds 5e-6 m
    assert abs(top - plate) < 2e-4


@pytest.mark.parametrize("obstacle, field", [
    ({"kind": "plane", "normal": [0, 0, 0]}, "normal"),
    ({"kind": "wall"}, "kind"),
    ({"kind": "sphere", "radius": -1.0}, "radius"),
    ({"kind": "plane", "contact": {"friction_coefficient": -0.5}}, "friction_coefficient"),
    ({"kind": "plane", "height": 1.0}, "height"),
])
def test_bad_environment_input_exits_2_with_one_line_naming_the_field(
    obstacle, field, tmp_path, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    from hsa_elastica.cli import main

    path, _ = _plate_file(tmp_path, obstacle)
    assert main(["steady-state", "--angles", *map(str, PRESS), "--params", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and field in err and "obstacles[0]" in err


def test_a_plate_through_the_platform_exits_2_before_any_step(
    tmp_path, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
) -> None:
    from hsa_elastica.cli import main

    path, plate = _plate_file(tmp_path, {"kind": "plane", "point": [0, 0, _rest_top(_params()) - 0.002],
                                         "normal": [0, 0, -1]})
    assert main(["primitive", "elongation", "--duration", "0.2", "--quiet", "--params",
                 str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "BodyContact" in err and "inside the PlaneObstacle" in err


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
