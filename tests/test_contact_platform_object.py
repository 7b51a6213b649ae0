"""Contact of a rigid body's points (the platform's rims) with a free object
(``ObjectContact`` added to a rigid body, physics/object_contact.py): a ball resting on the rim
of a disc against the closed form of the contact law, action = reaction in a gravity-free
collision, the fused and implicit executors against PyElastica's loop, the robot carrying a
ball on its platform, and the bad inputs.  Each tolerance says where it comes from.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from elastica import CosseratRod, Cylinder, PositionVerlet, Sphere
from elastica.external_forces import GravityForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing
from scipy.optimize import brentq

from hsa_elastica.params import ContactParams, ParameterError, PlaneObstacle
from hsa_elastica.physics.contact import add_contact, rim_points
from hsa_elastica.physics.object_contact import ObjectContact, add_object_contact

G = 9.81  # m/s^2
A, T = 0.03, 0.005  # the disc's radius and thickness [m] (1000 kg/m^3: 14.1 g)
R_B, RHO_B = 0.04, 200.0  # the ball's radius [m] and density [kg/m^3] (53.6 g)
LAW = ContactParams(stiffness=1e4, smoothing_length=1e-5, damping_ratio=0.5,
                    friction_coefficient=0.5, slip_velocity=1e-3)
N_RIM = 16  # the disc's points per rim (ObjectContact's default)


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _mass(body: Any) -> float:
    return float(np.sum(body.mass))


def _rod_far_away() -> CosseratRod:
    """The compiled executors take one rod block: a free rod 1 m away from everything."""
    return CosseratRod.straight_rod(
        4, np.array([1.0, 0.0, 0.1]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]),
        0.1, 0.002, 1000.0, youngs_modulus=1e6, shear_modulus=1e6 / 3.0)


def _ball_on_a_disc() -> tuple[_Sim, Cylinder, Sphere, Any, Any]:
    """A disc lying on a floor and a ball (larger than the disc) resting on its top rim, both
    dropped 10-50 um, under gravity; the disc's rims touch the ball (``ObjectContact`` on the
    disc), the disc's rims the floor (``BodyContact``)."""
    sim = _Sim()
    disc = Cylinder(np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), T, A,
                    1000.0)
    disc.position_collection[2, 0] = 0.5 * T + 1e-5
    top = disc.position_collection[2, 0] + 0.5 * T
    ball = Sphere(np.array([0.0, 0.0, top + math.sqrt(R_B**2 - A**2) + 5e-5]), R_B, RHO_B)
    for body in (disc, ball):
        sim.append(body)
        sim.add_forcing_to(body).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.append(_rod_far_away())
    floor = add_contact(sim, disc, PlaneObstacle(contact=LAW))
    ref = add_object_contact(sim, disc, ball, LAW)
    sim.finalize()
    return sim, disc, ball, floor, ref


def _run(sim: _Sim, duration: float, dt: float) -> None:
    stepper, time = PositionVerlet(), np.float64(0.0)
    for _ in range(int(round(duration / dt))):
        time = stepper.step(sim, time, np.float64(dt))


def _resting_height() -> float:
    """The ball's centre above the disc's centre at rest, from the law (docs/contact.md, "The
    model"): each of the 16 top rim points carries ``W / 16`` upwards along the ball's normal
    through it, ``f_el cos(theta) = W / 16`` with ``f_el = k l softplus(-g / l)`` and
    ``cos(theta) = sqrt((R + g)^2 - a^2) / (R + g)``; the height is ``T / 2 + sqrt((R + g)^2
    - a^2)``."""
    k, l = LAW.stiffness, LAW.smoothing_length
    w = 4.0 / 3.0 * math.pi * R_B**3 * RHO_B * G / N_RIM

    def balance(g: float) -> float:
        d = R_B + g
        return k * l * math.log1p(math.exp(-g / l)) * math.sqrt(d * d - A * A) / d - w

    g = brentq(balance, -50 * l, 50 * l, xtol=1e-15)
    return 0.5 * T + math.sqrt((R_B + g) ** 2 - A * A)


def _check_rest(disc: Any, ball: Any, floor: Any, ref: Any, rel: float, height: float) -> None:
    weight = _mass(ball) * G
    force = ref.instance.total_force  # on the disc: the ball presses it down
    print("force on the disc / ball weight", force / weight,
          "floor / both weights", floor.instance.total_force[2] / (weight + _mass(disc) * G),
          "height - closed form", ball.position_collection[2, 0]
          - disc.position_collection[2, 0] - _resting_height())
    assert force[2] == pytest.approx(-weight, rel=rel)
    assert np.abs(force[:2]).max() < 1e-9 * weight  # the ring is symmetric
    assert floor.instance.total_force[2] == pytest.approx(weight + _mass(disc) * G, rel=rel)
    rise = ball.position_collection[2, 0] - disc.position_collection[2, 0]
    assert rise == pytest.approx(_resting_height(), abs=height)
    assert ref.instance.in_contact.sum() == N_RIM  # the top rim only


def test_a_ball_on_a_discs_rim_rests_at_the_law_s_closed_form() -> None:
    """PyElastica's loop, 0.3 s (the ball's contact period ``2 pi sqrt(m / 16 k)`` = 2.3 ms,
    ``zeta`` = 0.5: settled many times over): the disc carries the ball's weight, the floor
    both weights (0.1 %: the settling left), and the ball's centre sits where the law's
    force balances its weight (1e-8 m: a thousandth of the smoothing length; measured
    below)."""
    sim, disc, ball, floor, ref = _ball_on_a_disc()
    _run(sim, 0.3, 2e-5)
    _check_rest(disc, ball, floor, ref, 1e-3, 1e-8)


def test_fused_platform_object_contact_matches_the_operator_path() -> None:
    """The same 0.05 s (the ball lands within it) on the fused step: the compiled row is the
    operator's kernels, so bit-identical; 1e-12 (m, m/s, N) leaves room for round-off only."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.fused import FusedEngine

    dt, n = 2e-5, 2500
    ref_sim, ref_disc, ref_ball, _, ref_op = _ball_on_a_disc()
    _run(ref_sim, n * dt, dt)
    sim, disc, ball, _, op = _ball_on_a_disc()
    FusedEngine(compile_simulator(sim), dt).run_steps(n, 0.0)
    assert ref_op.instance.in_contact.any()
    pairs = [(a.position_collection, b.position_collection) for a, b in
             ((disc, ref_disc), (ball, ref_ball))]
    pairs += [(a.velocity_collection, b.velocity_collection) for a, b in
              ((disc, ref_disc), (ball, ref_ball))]
    pairs += [(a.omega_collection, b.omega_collection) for a, b in
              ((disc, ref_disc), (ball, ref_ball))]
    pairs += [(op.instance.force, ref_op.instance.force), (op.instance.gap, ref_op.instance.gap)]
    worst = max(float(np.abs(a - b).max()) for a, b in pairs)
    print("fused vs operator: largest difference", worst)
    assert worst < 1e-12


def test_implicit_engine_carries_the_ball_on_the_disc() -> None:
    """The implicit integrator at 1e-3 s (50x the explicit step, 2.3 steps per contact
    period: its Newton matrix takes the two-body contact's exact tangent), 0.3 s: the same
    rest, 0.5 % on the forces (the contacts' tests' tolerance) and 1e-7 m on the height."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.implicit import ImplicitEngine

    sim, disc, ball, floor, ref = _ball_on_a_disc()
    dt = 1e-3
    engine = ImplicitEngine(compile_simulator(sim), dt, dt_table=dt)
    assert engine.jacobian == "tangent"
    engine.run_steps(300, 0.0)
    _check_rest(disc, ball, floor, ref, 5e-3, 1e-7)


def _collision(mu: float) -> tuple[_Sim, Cylinder, Sphere, Any]:
    """Gravity-free: a disc tilted by 0.3 rad, thrown at 0.1 m/s and spinning, hits a ball
    resting off its axis with its rim after about 2 ms."""
    sim = _Sim()
    tilt = np.array([math.sin(0.3), 0.0, math.cos(0.3)])
    disc = Cylinder(np.zeros(3), tilt, np.array([math.cos(0.3), 0.0, -math.sin(0.3)]), T, A,
                    1000.0)
    disc.velocity_collection[:, 0] = (0.0, 0.0, 0.1)
    disc.omega_collection[:, 0] = (0.0, 0.0, 5.0)
    # the ball's centre above (10, 5) mm where its nearest rim point of the disc is 0.2 mm off
    rim = (disc.director_collection[:, :, 0].T @ rim_points(A, T, N_RIM)
           + disc.position_collection[:, :1])
    xy = np.array([[0.01], [0.005]])

    def gap(z: float) -> float:
        return float(np.sqrt(((rim[:2] - xy) ** 2).sum(0) + (rim[2] - z) ** 2).min()) - R_B - 2e-4

    ball = Sphere(np.array([0.01, 0.005, brentq(gap, 0.0, 0.1, xtol=1e-12)]), R_B, RHO_B)
    sim.append(disc)
    sim.append(ball)
    sim.append(_rod_far_away())
    law = ContactParams(stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.2,
                        friction_coefficient=mu, slip_velocity=0.05)
    ref = add_object_contact(sim, disc, ball, law)
    sim.finalize()
    return sim, disc, ball, ref


def _momenta(disc: Any, ball: Any) -> tuple[np.ndarray, np.ndarray]:
    """Total linear momentum and angular momentum about the origin (lab frame)."""
    p, h = np.zeros(3), np.zeros(3)
    for b in (disc, ball):
        m, x, v = _mass(b), b.position_collection[:, 0], b.velocity_collection[:, 0]
        Q = b.director_collection[:, :, 0]
        spin = Q.T @ (b.mass_second_moment_of_inertia[:, :, 0] @ b.omega_collection[:, 0])
        p += m * v
        h += m * np.cross(x, v) + spin
    return p, h


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_a_collision_conserves_momentum(mu: float) -> None:
    """The contact's forces on the disc and the ball are equal and opposite, so the total
    linear momentum stays to round-off (1e-12 of it over 0.03 s).  Of the angular momentum
    the collision hands the ball (``dH_ball``), the total keeps all but: without friction
    4.7e-5 (measured; the forces lie along the ball's normal through the point, through the
    ball's centre: what is left is the step's, halved at half the step; bound 1e-4); with
    friction 1.3e-3 (measured, the same at half the step: the disc's point and the ball's
    surface point it touches lie the gap apart along the normal, so ``f_t`` makes the couple
    ``g n x f_t``, as for a rod's node on an object; bound 5e-3)."""
    sim, disc, ball, ref = _collision(mu)
    p0, h0 = _momenta(disc, ball)
    hb0 = _momenta(ball, ball)[1] / 2.0
    stepper, time = PositionVerlet(), np.float64(0.0)
    touched = False
    for _ in range(1500):
        time = stepper.step(sim, time, np.float64(2e-5))
        touched |= bool(ref.instance.in_contact.any())
    p1, h1 = _momenta(disc, ball)
    handed = float(np.abs(_momenta(ball, ball)[1] / 2.0 - hb0).max())
    moved = _mass(ball) * np.linalg.norm(ball.velocity_collection[:, 0])
    print("mu", mu, "ball momentum / p0", moved / np.linalg.norm(p0), "dp", p1 - p0,
          "dH / dH_ball", np.abs(h1 - h0).max() / handed)
    assert touched and moved > 0.1 * np.linalg.norm(p0)
    assert np.abs(p1 - p0).max() < 1e-12 * np.linalg.norm(p0) + 1e-15
    assert np.abs(h1 - h0).max() < (1e-4 if mu == 0.0 else 5e-3) * handed


def test_bad_platform_object_contacts_are_refused_in_one_line() -> None:
    sim = _Sim()
    ball = Sphere(np.array([0.0, 0.0, 0.1]), R_B, RHO_B)
    other = Sphere(np.array([0.0, 0.0, 0.3]), 0.01, RHO_B)
    disc = Cylinder(np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]), T, A,
                    1000.0)
    rod = _rod_far_away()
    cases = [
        (lambda: add_object_contact(sim, other, ball), "ObjectContact.points is None on a Sphere"),
        (lambda: add_object_contact(sim, ball, ball), "with itself"),
        (lambda: add_object_contact(sim, rod, ball, points=np.zeros((3, 2))),
         "ObjectContact.points on a rod"),
        (lambda: add_object_contact(sim, disc, ball, nodes=(0, 2)),
         "ObjectContact.nodes on a rigid body"),
        (lambda: ObjectContact(ball, points=np.zeros((2, 3))), "ObjectContact.points is invalid"),
        (lambda: ObjectContact(ball, n_rim=2), "ObjectContact.n_rim = 2 is invalid"),
        # the disc's top rim 2 mm inside the ball (beyond 10 smoothing lengths)
        (lambda: add_object_contact(sim, disc, Sphere(
            np.array([0.0, 0.0, 0.5 * T + math.sqrt(R_B**2 - A**2) - 2e-3]), R_B, RHO_B),
            LAW), "point 16 of the Cylinder starts"),
    ]
    for make, words in cases:
        with pytest.raises(ParameterError) as err:
            make()
        line = str(err.value)
        assert words in line and "\n" not in line, line
    # given points on a sphere are accepted: its lowest point on the other ball
    sim.append(other)
    sim.append(ball)
    add_object_contact(sim, other, ball, points=np.array([[0.0], [0.0], [-0.01]]))


@pytest.mark.parametrize("integrator, dt", [("explicit", 5e-5), ("implicit", 1e-3)])
def test_the_robot_carries_a_ball_on_its_platform(integrator: str, dt: float) -> None:
    """A ball of a robot's parameters (radius 6 cm, 30 g) dropped 0.1 mm onto the platform's
    top rim (radius 47.5 mm): ``build_robot`` adds the platform's ``ObjectContact`` last among
    the object's contacts; on the fused and the implicit engine the platform carries the
    ball's weight after 0.3 s (0.5 %: the contacts' tolerance; the law's damping ratio 0.5
    settles the landing), the ball centred over it (its rim is symmetric: 1 um)."""
    import dataclasses

    from hsa_elastica.params import EnvironmentParams, ObjectParams, paper_robot_params
    from hsa_elastica.robots.builders import build_fast_robot, build_robot

    p = paper_robot_params()
    p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, n_elements=4),
                            simulation=dataclasses.replace(p.simulation, dt=dt,
                                                           integrator=integrator,
                                                           gravity=(0.0, 0.0, -G)))
    rest = build_robot(p, [0.0] * 4, record=False)
    top = float(rest.platform.position_collection[2, 0]) + 0.5 * p.platform.thickness
    rb, rim = 0.06, p.platform.radius
    law = ContactParams(stiffness=1e4, smoothing_length=1e-5, damping_ratio=0.5,
                        friction_coefficient=0.5, slip_velocity=1e-3)
    ball = ObjectParams(radius=rb, mass=0.03, contact=law,
                        position=(0.0, 0.0, top + math.sqrt(rb * rb - rim * rim) + 1e-4))
    p = dataclasses.replace(p, environment=EnvironmentParams(objects=(ball,)))
    robot = build_fast_robot(p, [0.0] * 4, record=False)
    contacts: Any = robot.robot.contacts  # type: ignore[union-attr]
    on_platform = contacts[-1].instance
    assert isinstance(on_platform, ObjectContact) and on_platform.local is not None
    assert contacts[-1].system is robot.robot.platform  # type: ignore[union-attr]
    robot.run(0.3)
    body = on_platform.body
    weight = 0.03 * G
    print(integrator, "platform's force / ball weight", on_platform.total_force / weight,
          "ball xy", body.position_collection[:2, 0])
    assert on_platform.total_force[2] == pytest.approx(-weight, rel=5e-3)
    assert np.abs(body.position_collection[:2, 0]).max() < 1e-6
