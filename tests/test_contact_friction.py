"""Friction of rigid bodies on a rough plane (docs/contact.md, "Friction and the explicit step").

The references come from mechanics, not from the code: a cylinder spinning on its rim about
its axis, on a plane with Coulomb coefficient ``mu``, feels the couple ``mu M g r`` against
its moment of inertia ``M r^2 / 2``, so it decelerates at ``2 mu g / r`` until it stops; in
the smoothed law's sticking zone each point is a damper ``mu f_el / v_s``, which an explicit
step of ``dt`` integrates stably (the energy falls) only while ``dt`` is below
``2 v_s I / (mu F_n r^2)`` (``F_n``: the total normal force, ``I``: the moment of inertia about
the normal).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from elastica import Cylinder, PositionVerlet
from elastica.external_forces import GravityForces
from elastica.modules import BaseSystemCollection, Forcing

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.params import ContactParams, PlaneObstacle
from hsa_elastica.physics.contact import add_contact

G = 9.81  # m/s^2
RADIUS, LENGTH, RHO = 0.02, 0.04, 500.0  # cylinder [m, m, kg/m^3]
MU, V_S, K = 0.5, 1e-3, 1e3  # friction, slip velocity [m/s], stiffness per point [N/m]
N_RIM = 16
ELL = 1e-5  # smoothing length [m]


class _Sim(BaseSystemCollection, Forcing):
    pass


def _mass() -> float:
    return RHO * math.pi * RADIUS**2 * LENGTH


def _spinning_cylinder(omega: float, tilt: float = 0.0) -> tuple[_Sim, Cylinder, Any]:
    """A cylinder standing upright on a rough floor on the rim of its bottom face (16 points),
    sunk to its resting penetration, spinning about its axis at ``omega`` [rad/s].  With
    ``tilt`` [rad] the floor's normal (and gravity, and the axis) is tilted about y and the
    body frame turned about the axis by 0.4 rad: the same motion in a general body frame."""
    sim = _Sim()
    n = np.array([math.sin(tilt), 0.0, math.cos(tilt)])
    d1 = np.array([math.cos(tilt), 0.0, -math.sin(tilt)])
    d = math.cos(0.4 * bool(tilt)) * d1 + math.sin(0.4 * bool(tilt)) * np.cross(n, d1)
    # the rest penetration of each rim point: k l softplus(sink / l) = M g / 16 (13 um)
    sink = ELL * math.log(math.expm1(_mass() * G / N_RIM / (K * ELL)))
    # start: the centre of the base face, its rim sunk by the rest penetration
    cyl = Cylinder(-sink * n, n, d, LENGTH, RADIUS, RHO)
    sim.append(cyl)
    sim.add_forcing_to(cyl).using(GravityForces, acc_gravity=-G * n)
    floor = PlaneObstacle(normal=tuple(n), contact=ContactParams(stiffness=K, smoothing_length=ELL,
                                                damping_ratio=0.5, friction_coefficient=MU,
                                                slip_velocity=V_S))
    ref = add_contact(sim, cyl, floor, n_rim=N_RIM)
    sim.finalize()
    cyl.omega_collection[2, 0] = omega  # body frame: local z is the axis
    return sim, cyl, ref


def _spin_energy(cyl: Cylinder) -> float:
    w = cyl.omega_collection[:, 0]
    return 0.5 * float(w @ (cyl.mass_second_moment_of_inertia[:, :, 0] @ w))


def _stick_limit() -> float:
    """The largest explicit step [s] at which the sticking friction of the spinning cylinder
    dissipates: ``2 v_s I / (mu F_n r^2)`` with ``I = M r^2 / 2``, ``F_n = M g``."""
    return 2.0 * V_S * 0.5 / (MU * G)


@pytest.mark.parametrize("tilt", [0.0, 0.7])
def test_a_cylinder_spinning_on_a_rough_floor_stops_at_the_coulomb_rate(tilt: float) -> None:
    """Spun at 20 rad/s (rim speed 0.4 m/s, 400 v_s): decelerates at ``2 mu g / r`` =
    490.5 rad/s^2, stops after ``omega r / (2 mu g)`` = 40.8 ms, and stays stopped; its spin
    energy falls at every step.  PyElastica's loop with ``BodyContact`` (the fused step is
    bit-identical to it: tests/test_contact_compiled.py; it needs a rod in the model).  Tilted,
    in a general body frame, the same: the rim's slip velocity includes ``omega x r`` and the
    friction's couple reaches the body frame through its directors."""
    dt, omega0 = 2.5e-5, 20.0  # dt: 0.12 of the spin's sticking limit (2.04e-4 s)
    assert dt < 0.2 * _stick_limit()
    sim, cyl, ref = _spinning_cylinder(omega0, tilt)
    steps = int(round(0.08 / dt))
    omega, energy = np.empty(steps + 1), np.empty(steps + 1)
    omega[0], energy[0] = omega0, _spin_energy(cyl)
    stepper, t = PositionVerlet(), np.float64(0.0)
    for i in range(steps):
        t = stepper.step(sim, t, np.float64(dt))
        omega[i + 1], energy[i + 1] = cyl.omega_collection[2, 0], _spin_energy(cyl)
    expected = 2.0 * MU * G / RADIUS
    i1, i2 = int(round(0.005 / dt)), int(round(0.030 / dt))  # rim speed 0.35 .. 0.11 m/s
    rate = (omega[i1] - omega[i2]) / ((i2 - i1) * dt)
    stop = np.flatnonzero(np.abs(omega) < 1e-3 * omega0)[0] * dt
    print("deceleration", rate, "expected", expected, "stopped at", stop,
          "largest energy rise per step", np.diff(energy).max() / energy[0],
          "final omega", omega[-1])
    # rim speed >= 0.1 m/s = 100 v_s: the smoothing lowers friction by (v_s / v)^2 / 2 <= 5e-5;
    # the normal load stays the weight (pure spin: the friction's force and couple about the
    # horizontal axes sum to zero over the rim) up to the contact's bounce, not excited here
    assert rate == pytest.approx(expected, rel=1e-3)
    # stops where the Coulomb rate says, within the smoothed zone's share (v_s / (r alpha)
    # ~ 0.1 ms) and one step
    assert stop == pytest.approx(omega0 / expected, abs=2e-4)
    assert abs(omega[-1]) < 1e-6 * omega0
    # friction only takes energy out: the spin energy never rises by more than round-off
    assert np.diff(energy).max() <= 1e-12 * energy[0]
    assert not ref.instance.sliding.any()


@pytest.mark.parametrize("fraction, grows", [(0.9, False), (1.1, True)])
def test_sticking_friction_dissipates_below_the_stated_step_limit_only(
    fraction: float, grows: bool,
) -> None:
    """Inside the sticking zone (rim speed 0.1 v_s) the rim is a damper ``mu f_el / v_s`` per
    point, which the explicit step multiplies the spin by ``1 - 2 dt / dt_limit`` per step:
    at 0.9 x the spin's limit ``2 v_s I / (mu F_n r^2)`` the spin energy falls at every step,
    at 1.1 x it rises at every step (the friction reverses the spin by more than it was) until
    the rim leaves the sticking zone and chatters.  (The cylinder's smallest friction limit is
    that of sliding its base while rocking, test below; a pure spin does not excite it.)"""
    dt = fraction * _stick_limit()
    omega0 = 0.1 * V_S / RADIUS
    sim, cyl, _ = _spinning_cylinder(omega0)
    stepper, t = PositionVerlet(), np.float64(0.0)
    energy = [_spin_energy(cyl)]
    for _ in range(5):
        t = stepper.step(sim, t, np.float64(dt))
        energy.append(_spin_energy(cyl))
    ratios = np.array(energy[1:]) / np.array(energy[:-1])
    print("dt / limit", fraction, "spin energy ratio per step", ratios)
    # per step (1 - 2 x 0.9)^2 = 0.64 and (1 - 2 x 1.1)^2 = 1.44 in the linear sticking zone;
    # the rim's speed grows to 0.25 v_s at 1.1, where the damping has fallen by 10 %
    if grows:
        assert (ratios > 1.2).all()
    else:
        assert (ratios < 0.7).all()


def _pressed_robot(angle: float, mu: float, v_s: float, zeta: float = 0.5) -> Any:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    import blocked_force as bf

    params = bf.with_plate(bf.robot_params(10), 0.0, mu)
    plate = params.environment.obstacles[0]
    plate = dataclasses.replace(plate, contact=dataclasses.replace(plate.contact,
                                                                    slip_velocity=v_s,
                                                                    damping_ratio=zeta))
    return params.replace(environment=dataclasses.replace(params.environment,
                                                          obstacles=(plate,)))


def test_the_robot_pressed_on_a_rough_plate_settles_at_the_static_force() -> None:
    """The paper robot pressed on a rough plate (``mu = 0.5``) at 0.1 rad, below its buckling
    load, its platform kicked (0.05 m/s sideways, 5 rad/s about the plate's normal), on the
    fused engine at the robot's step: with the plate's law inside both explicit limits it
    stops, and the plate carries the frictionless static solver's force."""
    from hsa_elastica.engines.statics import StaticSolver
    from hsa_elastica.physics.contact import BodyContact, step_limits
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import FastRobot

    angle, mu = 0.1, 0.5
    frictionless = _pressed_robot(angle, 0.0, 1e-3)
    robot = build_robot(frictionless, [0.0] * 4, ramp=0.0, record=False)
    solver = StaticSolver(compile_simulator(robot.simulator))
    motors = np.array([h * angle for h in frictionless.handedness])
    assert solver.solve(motors, check_stability=False).converged
    solver.evaluate(motors)
    static = -float(robot.contacts[-1].instance.total_force[2])
    static_robot = robot

    # sticking: dt < M v_s / (mu F_n) (I = M r^2 / 2 about the normal, every touching point on
    # the rim): v_s 1.5 x what that needs at 1.2 x the static load (0.12 m/s)
    dt = frictionless.simulation.dt
    v_s = 1.5 * mu * 1.2 * static * dt / frictionless.platform.mass
    # normal damping: dt omega < 2 (sqrt(1 + zeta^2) - zeta) on the stiffest mode, the
    # platform's tilt (omega = sqrt(k / m), m = M / 32 per rim point; dt omega = 1.39): 1.24 at
    # zeta = 0.5 (the validation's plate: kicked, the platform rocks at +-5 rad/s for 0.4 s
    # even without friction), 1.64 at zeta = 0.2
    rough = _pressed_robot(angle, mu, v_s, zeta=0.2)
    # step_limits at the static pose says the same: the validation's plate (zeta = 0.5,
    # v_s = 1 mm/s) is outside both limits, this one inside
    dt_n, dt_t = step_limits(BodyContact(_pressed_robot(angle, mu, 1e-3).environment
                                         .obstacles[0]), static_robot.platform)
    print("validation plate: limits", dt_n, dt_t, "dt", dt)
    assert dt_n < dt and dt_t < 0.02 * dt  # measured 0.90 dt and dt / 67
    dt_n, dt_t = step_limits(BodyContact(rough.environment.obstacles[0]), static_robot.platform)
    print("this plate: limits", dt_n, dt_t)
    assert dt_n > dt and dt_t > dt
    robot = build_robot(rough, [h * angle for h in rough.handedness], record=False)
    robot.platform.velocity_collection[0, 0] = 0.05
    robot.platform.omega_collection[2, 0] = 5.0
    FastRobot(robot).run(0.4)
    contact = robot.contacts[-1].instance
    force = -float(contact.total_force[2])
    speed = float(np.abs(robot.platform.velocity_collection).max())
    rim = float(np.abs(robot.platform.omega_collection).max()) * 0.5 * rough.platform.diameter
    print(f"static {static:.4f} N, rough fused {force:.4f} N, v_s {v_s:.3g} m/s, "
          f"platform speed {speed:.3g} m/s, rim speed {rim:.3g} m/s")
    # stopped: every rim point sticks, the platform and its rim move at < 0.5 mm/s (1 % of the
    # kick's 0.05 m/s, 0.2 % of its rim speed; measured 0.02 and 0.14 mm/s: the creep of the
    # smoothed sticking under the rods' wound-up twist, decaying); on a plate outside the
    # sticking limit (v_s = 1 mm/s) the rim chatters at +-1.45 rad/s instead (measured)
    assert contact.sticking[contact.in_contact].all() and contact.in_contact.sum() == 16
    assert speed < 5e-4 and rim < 5e-4
    # the plate's force is the rods' axial load: the twist and offset the friction holds
    # change it by ~1e-5 relative (measured); 1e-3 leaves room for the creep
    assert force == pytest.approx(static, rel=1e-3)


def test_an_explicit_run_outside_a_contacts_step_limit_warns_once() -> None:
    """The validation's plate (``v_s`` = 1 mm/s, ``zeta`` = 0.5) is outside both explicit
    limits at the robot's step (the test above measures 0.90 dt and dt / 67): a fused run says
    so in one warning naming the limit, once per robot, not at every call."""
    import warnings

    from hsa_elastica.params import ContactStepWarning
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.compiled import FastRobot

    params = _pressed_robot(0.1, 0.5, 1e-3)
    fast = FastRobot(build_robot(params, [h * 0.1 for h in params.handedness], record=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            fast.run(0.1)
    steps = [w for w in caught if issubclass(w.category, ContactStepWarning)]
    assert len(steps) == 1, [str(w.message) for w in caught]
    text = str(steps[0].message)
    assert "\n" not in text and f"dt = {params.simulation.dt:.3g} s" in text
    assert "sticking friction" in text or "normal contact" in text


def test_the_step_limits_of_a_cylinder_resting_on_its_rim() -> None:
    """``step_limits`` of the resting cylinder against its modes worked out by hand: normal, the
    vertical bounce (``16 k s / M``) and the rocking about a diameter (``8 k s r^2 / I_x``),
    each with its damping ratio; friction, the largest of the spin about the axis
    (``32 c / M``, ``c = mu (M g / 16) / v_s`` per point) and the slide of the base coupled
    to the rocking it drives (``16 c (1 / M + (L / 2)^2 / I_x)``)."""
    from hsa_elastica.physics.contact import step_limits

    sim, cyl, ref = _spinning_cylinder(0.0)
    normal, friction = step_limits(ref.instance, cyl)
    mass = _mass()
    # about a diameter PyElastica's Cylinder takes M r^2 / 4 (without the length's M L^2 / 12)
    i_x = float(cyl.mass_second_moment_of_inertia[0, 0, 0])
    assert i_x == pytest.approx(mass * RADIUS**2 / 4.0, rel=1e-12)
    sink = ELL * math.log(math.expm1(mass * G / N_RIM / (K * ELL)))  # as placed, at rest
    s = 1.0 / (1.0 + math.exp(-sink / ELL))
    c_n = 2.0 * 0.5 * math.sqrt(K * mass / (2 * N_RIM)) * s  # zeta = 0.5, M / 32 per point
    modes = [(16.0 * K * s / mass, 16.0 * c_n / mass),
             (8.0 * K * s * RADIUS**2 / i_x, 8.0 * c_n * RADIUS**2 / i_x)]  # (omega^2, 2 zeta omega)
    expected_normal = min(2.0 * (math.hypot(1.0, b / (2 * math.sqrt(w2))) - b / (2 * math.sqrt(w2)))
                          / math.sqrt(w2) for w2, b in modes)
    c_t = MU * mass * G / N_RIM / V_S
    rate = max(2 * N_RIM * c_t / mass, N_RIM * c_t * (1.0 / mass + (0.5 * LENGTH) ** 2 / i_x))
    print("normal", normal, expected_normal, "friction", friction, 2.0 / rate)
    # exact but for round-off (the same modes, worked out two ways)
    assert normal == pytest.approx(expected_normal, rel=1e-9)
    assert friction == pytest.approx(2.0 / rate, rel=1e-9)
    # the spin's own limit (the test above) is the larger: the slide-and-rock mode sets it
    assert friction < _stick_limit()


def test_the_step_limits_of_a_rod_lying_on_a_rough_floor() -> None:
    """``step_limits`` of a ``RodContact``: every node sunk by the rest penetration of an
    interior node (its weight ``m g`` on ``k``); the end nodes carry half that mass, so they
    set both limits: friction ``2 (m / 2) v_s / (mu m g) = v_s / (mu g)``, normal
    ``2 (sqrt(1 + z^2) - z) / w`` with ``w^2 = k s / (m / 2)`` and
    ``z = c s / (2 sqrt(k s m / 2))``, ``c = 2 zeta sqrt(k m / 2)``."""
    from elastica import CosseratRod

    from hsa_elastica.physics.contact import RodContact, step_limits

    n_el, length, radius, rho, zeta = 20, 0.2, 0.005, 1000.0, 0.5
    m = rho * math.pi * radius**2 * length / n_el  # an interior node's mass
    sink = ELL * math.log(math.expm1(m * G / (K * ELL)))
    rod = CosseratRod.straight_rod(n_el, np.array([0.0, 0.0, radius - sink]),
                                   np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]),
                                   length, radius, rho, youngs_modulus=1e6,
                                   shear_modulus=1e6 / 3.0)
    floor = PlaneObstacle(contact=ContactParams(stiffness=K, smoothing_length=ELL,
                                                damping_ratio=zeta, friction_coefficient=MU,
                                                slip_velocity=V_S))
    normal, friction = step_limits(RodContact(floor), rod)
    s = 1.0 / (1.0 + math.exp(-sink / ELL))
    w = math.sqrt(K * s / (0.5 * m))
    z = 2.0 * zeta * math.sqrt(K * 0.5 * m) * s / (2.0 * math.sqrt(K * s * 0.5 * m))
    print("rod: normal", normal, 2.0 * (math.hypot(1.0, z) - z) / w, "friction", friction,
          V_S / (MU * G))
    assert float(rod.mass[0]) == pytest.approx(0.5 * m, rel=1e-12)  # PyElastica's end node
    assert normal == pytest.approx(2.0 * (math.hypot(1.0, z) - z) / w, rel=1e-9)
    assert friction == pytest.approx(V_S / (MU * G), rel=1e-9)
