"""Contact of rods with free rigid objects (physics/object_contact.py, object_contact_laws.py)
on PyElastica's own time loop, against mechanics: the weight of an object, conservation of
momentum (action = reaction), Newton's second law of the object, energy in a frictionless
bounce, the rolling of a sphere that slides, the friction threshold ``mu M g`` of a dragged
object.  Each tolerance says where it comes from.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np
import pytest
from elastica import CosseratRod, Cylinder, PositionVerlet, Sphere
from elastica.boundary_conditions import OneEndFixedBC
from elastica.external_forces import EndpointForces, GravityForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing

from hsa_elastica.params import ContactParams, ParameterError, PlaneObstacle
from hsa_elastica.physics.contact import add_contact
from hsa_elastica.physics.energy import rod_elastic_energy, rod_kinetic_energy
from hsa_elastica.physics.object_contact import ObjectContact, add_object_contact

G = 9.81  # m/s^2
R_S, RHO = 0.02, 1000.0  # sphere radius [m], density [kg/m^3]
L, R_ROD, N_ELEM = 0.1, 0.002, 10  # rod length, radius [m], elements


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _rod(start: Any, direction: Any = (1.0, 0.0, 0.0), normal: Any = (0.0, 0.0, 1.0),
         E: float = 1e6, radius: float = R_ROD) -> CosseratRod:
    return CosseratRod.straight_rod(
        N_ELEM, np.asarray(start, float), np.asarray(direction, float), np.asarray(normal, float),
        L, radius, RHO, youngs_modulus=E, shear_modulus=E / 3.0)


def _sphere(center: Any, density: float = RHO) -> Sphere:
    return Sphere(np.asarray(center, float), R_S, density)


def _run(sim: _Sim, duration: float, dt: float, t: float = 0.0,
         each: Callable[[], None] | None = None) -> float:
    stepper = PositionVerlet()
    time = np.float64(t)
    for _ in range(int(round(duration / dt))):
        time = stepper.step(sim, time, np.float64(dt))
        if each is not None:
            each()
    return float(time)


def _mass(system: Any) -> float:
    return float(np.sum(system.mass))


def _momentum(rod: Any, body: Any) -> np.ndarray:
    return np.asarray((rod.mass * rod.velocity_collection).sum(axis=1)
                      + _mass(body) * body.velocity_collection[:, 0])


def _floor(mu: float = 0.0) -> PlaneObstacle:
    return PlaneObstacle(contact=ContactParams(stiffness=1e4, smoothing_length=1e-5,
                                               damping_ratio=0.5, friction_coefficient=mu,
                                               slip_velocity=1e-3))


# --------------------------------------------------------------------------------------------
# a free object on the floor
# --------------------------------------------------------------------------------------------
def test_a_sphere_resting_on_the_floor_carries_its_weight() -> None:
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, R_S + 1e-4])  # dropped 0.1 mm
    sim.append(sphere)
    sim.add_forcing_to(sphere).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    floor = add_contact(sim, sphere, _floor(mu=0.5))
    sim.finalize()
    _run(sim, 0.2, 2e-5)
    weight = _mass(sphere) * G
    force = floor.instance.total_force
    print("floor force / weight", force[2] / weight, "sideways", force[:2])
    # settled (zeta = 0.5, period 2 pi sqrt(M / k) = 11 ms, 18 periods): the weight is the
    # only vertical load; 0.5 % as the fixed-obstacle tests
    assert force[2] == pytest.approx(weight, rel=5e-3)
    assert np.abs(force[:2]).max() < 1e-9 * weight
    # it rests a few smoothing lengths into the floor: the penetration F / k = 33 um at most
    assert abs(sphere.position_collection[2, 0] - R_S) < weight / 1e4 + 5e-5


def test_a_sphere_sliding_on_a_rough_floor_rolls_at_five_sevenths_of_its_speed() -> None:
    """Sliding at ``v0`` without spin: friction ``mu M g`` at the contact point slows it and
    spins it up until it rolls, at ``5 v0 / 7`` (angular momentum about the contact point is
    conserved: ``M v0 R = M v R + (2/5) M R^2 v / R``); the support point's velocity includes
    the spin, so it then rolls on without friction."""
    v0, mu = 0.2, 0.5
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, R_S])
    sphere.velocity_collection[0, 0] = v0
    sim.append(sphere)
    sim.add_forcing_to(sphere).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    floor = add_contact(sim, sphere, _floor(mu=mu))
    sim.finalize()
    # sliding ends after 2 v0 / (7 mu g) = 11.6 ms; run 0.1 s
    _run(sim, 0.1, 1e-5)
    v = sphere.velocity_collection[0, 0]
    spin = sphere.director_collection[:, :, 0].T @ sphere.omega_collection[:, 0]
    print("v / v0", v / v0, "spin R / v", spin[1] * R_S / v)
    # the smoothed law lets it slip at v_s = 1 mm/s against 0.2 m/s while it slides, and
    # rolls with a creep below v_s: 1 % of v0
    assert v == pytest.approx(5.0 * v0 / 7.0, rel=1e-2)
    assert spin[1] * R_S == pytest.approx(v, rel=1e-2)  # rolling: omega_y R = v_x
    assert not floor.instance.sliding.any()


def _sample(v: list[float], sphere: Any) -> None:
    v.append(float(sphere.velocity_collection[0, 0]))


def test_a_rolling_sphere_slows_at_five_sevenths_of_c_rr_g() -> None:
    """Rolling resistance (``ContactParams.rolling_resistance`` = ``c_rr``): a couple
    ``c_rr R N`` against the rolling.  Rolling without slipping (``v = omega R``) with the
    floor's friction ``F`` at the contact point: ``M a = F``, ``I alpha = -F R - c_rr R N``,
    ``alpha = a / R``, ``I = (2/5) M R^2``, ``N = M g`` give ``a = -c_rr g / (1 + 2/5) =
    -(5/7) c_rr g`` (0.3504 m/s^2 at c_rr = 0.05).  The speed's slope over 0.1-0.4 s (after the
    drop onto the contact spring has settled) within 2 % (the smoothing's share: the rolling
    speed 0.2-0.3 m/s against ``v_s`` = 1 mm/s, 1e-5 relative; the friction's creep is
    constant).  Without it (the default, 0) the sphere rolls on at its speed."""
    v0, crr = 0.3, 0.05
    out = {}
    for c in (crr, 0.0):
        sim = _Sim()
        sphere = _sphere([0.0, 0.0, R_S])
        sphere.velocity_collection[0, 0] = v0
        sphere.omega_collection[1, 0] = v0 / R_S  # rolling in +x (body frame = lab frame)
        sim.append(sphere)
        sim.add_forcing_to(sphere).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
        floor = _floor(mu=0.5)
        floor = floor.replace(contact=floor.contact.replace(rolling_resistance=c))
        add_contact(sim, sphere, floor)
        sim.finalize()
        v: list[float] = []
        _run(sim, 0.4, 2e-5, each=functools.partial(_sample, v, sphere))
        t = (np.arange(len(v)) + 1) * 2e-5
        window = t >= 0.1
        out[c] = (np.polyfit(t[window], np.array(v)[window], 1)[0], v[-1])
    a_closed = 5.0 / 7.0 * crr * G
    print("deceleration", -out[crr][0], "closed form", a_closed, "without", out[0.0])
    assert -out[crr][0] == pytest.approx(a_closed, rel=0.02)
    assert abs(out[0.0][0]) < 1e-3 * a_closed  # no rolling resistance: rolls on
    assert out[0.0][1] == pytest.approx(v0, rel=1e-3)


def test_rolling_resistance_is_checked() -> None:
    with pytest.raises(ParameterError, match=r"^ContactParams.rolling_resistance = .*"):
        ContactParams(rolling_resistance=-0.1)
    with pytest.raises(ParameterError, match=r"^ContactParams.rolling_resistance = .*"):
        ContactParams(rolling_resistance=2.0)


# --------------------------------------------------------------------------------------------
# action = reaction: momentum, Newton's second law
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_momentum_of_rod_and_object_is_conserved_in_a_gravity_free_collision(mu: float) -> None:
    """A free rod thrown at a free, spinning sphere, off its centre (it glances off): no other
    forces, so the total momentum stays as it was (the law's forces on the rod and the
    reaction on the sphere cancel, friction included)."""
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, 0.0])
    sphere.omega_collection[:, 0] = (0.0, 0.0, 20.0)  # rad/s, body frame
    sim.append(sphere)
    rod = _rod([-L - R_S - R_ROD - 1e-3, 0.0, 0.006])
    rod.velocity_collection[0, :] = 0.1
    sim.append(rod)
    contact = add_object_contact(sim, rod, sphere, ContactParams(
        stiffness=1e3, smoothing_length=1e-5, friction_coefficient=mu, slip_velocity=1e-3))
    sim.finalize()
    p0 = _momentum(rod, sphere)
    peak = np.zeros(1)

    def watch() -> None:
        peak[0] = max(peak[0], float(np.linalg.norm(contact.instance.total_force)))

    _run(sim, 0.1, 2e-5, each=watch)
    p1 = _momentum(rod, sphere)
    transferred = _mass(sphere) * np.linalg.norm(sphere.velocity_collection[:, 0])
    print("mu", mu, "p0", p0, "p1 - p0", p1 - p0, "sphere momentum", transferred, "peak", peak)
    assert peak[0] > 0.01  # they collided (tens of mN), and the sphere took a part of p0:
    assert transferred > 0.3 * np.linalg.norm(p0)
    # Verlet moves each momentum by dt sum f: exactly zero up to round-off of ~1e4 steps
    assert np.abs(p1 - p0).max() < 1e-10 * np.linalg.norm(p0)
    # off-centre hit: the sphere leaves at an angle to the throw (the normal is not along it;
    # with friction its spin drags the rod sideways too)
    v = sphere.velocity_collection[:, 0]
    print("sphere velocity", v)
    assert np.linalg.norm(v[1:]) > 1e-2 * np.linalg.norm(v)


def test_a_spinning_capsule_takes_the_reaction_at_its_surface_and_the_pair_s_power() -> None:
    """The object kernel's one pass against the geometry written out here (numpy): twelve
    points about a moving, spinning capsule (eight within the law's reach, four far).  The
    body takes ``-sum f`` and the couple ``-sum r x f`` with ``r`` from its centre to its
    surface point closest to each point; each force is the law at the point's gap and its
    velocity relative to that surface point (``v - v_o - w x r``), so the pair's power
    ``sum f . v_p + F . v_o + T . w`` equals ``sum f . v_rel``: the law's dissipation, no
    work from the spin.  Tolerance: round-off of sums of twelve terms (1e-12 relative)."""
    from hsa_elastica.physics.contact_laws import (
        CAPSULE, FAR_SMOOTHING_LENGTHS, ContactLaw, ContactOutput, ContactPoints, law_force)
    from hsa_elastica.physics.object_contact_laws import object_contact_forces

    rng = np.random.default_rng(7)
    radius, length = 0.02, 0.05  # the capsule [m]
    c, s = math.cos(0.7), math.sin(0.7)
    q = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])  # rows: the body's axes (lab)
    x_o, v_o, omega = np.array([0.1, 0.2, 0.3]), rng.normal(size=3), rng.normal(size=3) * 5
    axis = q[2]
    law = ContactLaw(1e3, 1e-3, 0.4, 0.3, 1e-3)
    n = 12
    t = rng.uniform(-0.6, 0.6, n) * length  # along the axis (caps included), then outwards
    normal = rng.normal(size=(n, 3))
    normal -= np.where(np.abs(t)[:, None] <= 0.5 * length, (normal @ axis)[:, None] * axis, 0)
    far = FAR_SMOOTHING_LENGTHS * law.smoothing_length  # beyond it the law gives no force
    gap = np.where(np.arange(n) < 8, rng.uniform(-1e-3, 2e-3, n), rng.uniform(1.5, 3, n) * far)
    r_pt = 0.002  # the points' radius [m]
    axis_point = x_o + np.clip(t, -0.5 * length, 0.5 * length)[:, None] * axis
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    position = axis_point + (radius + r_pt + gap)[:, None] * normal
    velocity = rng.normal(size=(n, 3)) * 0.1
    pts = ContactPoints(np.ascontiguousarray(position.T), np.ascontiguousarray(velocity.T),
                        np.full(n, r_pt), np.full(n, 0.01))
    out = ContactOutput(np.zeros((3, n)), np.zeros(n), np.zeros(n))
    body = (x_o[:, None].copy(), v_o[:, None].copy(), omega[:, None].copy(), q[:, :, None].copy(),
            np.zeros((3, 1)), np.zeros((3, 1)))
    object_contact_forces(pts, body, 0, (CAPSULE, radius, length), law, out)

    # the geometry, independently: closest axis point, normal, surface point, lever
    seg = np.clip((position - x_o) @ axis, -0.5 * length, 0.5 * length)
    d = position - (x_o + seg[:, None] * axis)
    dist = np.linalg.norm(d, axis=1)
    nrm = d / dist[:, None]
    lever = x_o + seg[:, None] * axis + radius * nrm - x_o
    w = q.T @ omega  # lab angular velocity
    v_rel = velocity - v_o - np.cross(w, lever)
    np.testing.assert_allclose(out.gap, dist - radius - r_pt, rtol=0, atol=1e-15)
    f = out.force.T
    assert np.all(np.abs(f[8:]) == 0.0) and np.all(np.linalg.norm(f[:8], axis=1) > 0.0)
    for p in range(8):  # each force is the law at its gap and relative velocity
        expected = law_force(dist[p] - radius - r_pt, *nrm[p], *v_rel[p], 0.01, law)[:3]
        np.testing.assert_allclose(f[p], expected, rtol=1e-12, atol=1e-15)
    scale = np.abs(f).sum()
    np.testing.assert_allclose(body[4][:, 0], -f.sum(axis=0), rtol=0, atol=1e-12 * scale)
    couple = q.T @ body[5][:, 0]  # the body-frame couple, in the lab
    np.testing.assert_allclose(couple, -np.cross(lever, f).sum(axis=0), rtol=0,
                               atol=1e-12 * scale * length)
    power = np.sum(f * velocity) + body[4][:, 0] @ v_o + couple @ w
    speed = np.abs(velocity).max() + np.abs(v_o).max() + np.abs(w).max() * length
    assert abs(power - np.sum(f * v_rel)) < 1e-12 * scale * speed


def test_a_sphere_pushed_by_a_rod_on_a_frictionless_floor_accelerates_at_force_over_mass() -> None:
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, R_S])
    sim.append(sphere)
    sim.add_forcing_to(sphere).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    add_contact(sim, sphere, _floor(mu=0.0))
    rod = _rod([-L - R_S - R_ROD - 2e-4, 0.0, R_S])  # at the sphere's height, 0.2 mm away
    rod.velocity_collection[0, :] = 0.05
    sim.append(rod)
    push = add_object_contact(sim, rod, sphere, ContactParams(stiffness=1e3, smoothing_length=1e-5))
    sim.finalize()
    dt, mass = 2e-5, _mass(sphere)
    t = _run(sim, 0.006, dt)  # in contact from 4 ms on
    checked = 0
    for _ in range(200):
        v0 = sphere.velocity_collection[:, 0].copy()
        t = _run(sim, dt, dt, t)
        force = -push.instance.total_force  # on the sphere: the reaction of the rod's
        if force[0] < 1e-3:
            continue
        accel = (sphere.velocity_collection[:, 0] - v0) / dt
        # Verlet's velocity step is dt times the mid-step force over the mass (round-off);
        # vertically the floor holds the weight too, so only x is compared
        assert accel[0] == pytest.approx(force[0] / mass, rel=1e-9)
        checked += 1
    print("steps checked", checked, "last force", force)
    assert checked > 50


# --------------------------------------------------------------------------------------------
# energy: a frictionless bounce off a clamped rod
# --------------------------------------------------------------------------------------------
def test_a_frictionless_bounce_of_a_sphere_off_a_clamped_rod_does_not_gain_energy() -> None:
    sim = _Sim()
    # a light sphere (3.4 g) on a cantilever of 7.4 N/m at the hit (E = 1e8 Pa): it pushes the
    # rod ~1 mm aside, for ~0.07 s, and is thrown back
    rod = _rod([0.0, 0.0, 0.0], direction=(0.0, 0.0, 1.0), normal=(1.0, 0.0, 0.0), E=1e8)
    sim.append(rod)
    sim.constrain(rod).using(OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    sphere = _sphere([R_S + R_ROD + 1e-3, 0.0, 0.8 * L], density=100.0)
    sphere.velocity_collection[0, 0] = -0.05
    sim.append(sphere)
    contact = add_object_contact(sim, rod, sphere, ContactParams(stiffness=1e4,
                                                                 smoothing_length=1e-5))
    sim.finalize()

    def energy() -> float:
        e_rod = rod_elastic_energy(rod.position_collection, rod.director_collection,
                                   rod.rest_lengths, rod.rest_voronoi_lengths, rod.shear_matrix,
                                   rod.bend_matrix, rod.rest_sigma, rod.rest_kappa)
        e_kin = rod_kinetic_energy(rod.position_collection, rod.velocity_collection,
                                   rod.omega_collection, rod.mass,
                                   rod.mass_second_moment_of_inertia, rod.rest_lengths)
        return float(e_rod + e_kin + 0.5 * _mass(sphere) * np.sum(sphere.velocity_collection ** 2))

    e0 = energy()
    samples: list[float] = []

    def watch() -> None:
        if contact.instance.gap.min() > 1e-4:  # sphere away: only the rod's own forces act
            samples.append(energy())

    _run(sim, 0.15, 1e-5, each=watch)
    v = sphere.velocity_collection[0, 0]
    print("sphere v after", v, "samples", len(samples), "max rise / e0", (max(samples) - e0) / e0)
    assert v > 0.0  # it bounced back
    assert len(samples) > 1000
    # PyElastica's rod forces are the gradient of its energy only to second order in the strains
    # and Verlet's energy error is O(dt^2) (the fixed-obstacle bounce: 9e-5 of the energy): 1e-3
    assert max(samples) < e0 * (1.0 + 1e-3)
    # the sphere leaves slower than it came: the rod keeps the vibration it was given
    assert abs(v) < 0.05


# --------------------------------------------------------------------------------------------
# friction: an object dragged by a rod sticks below mu M g and slides above
# --------------------------------------------------------------------------------------------
def _drag(ratio: float) -> tuple[float, float, float, float]:
    """A cylinder (radius 2 cm, length 4 cm, 50 g) standing on a rough floor (``mu = 0.3``,
    its 32 rim points), pushed at mid-height by a free weightless rod (radius 5 mm, E = 1e7 Pa:
    Euler load 4.8 N, twenty times the largest push) whose far end is loaded with
    ``ratio mu M g`` along it (ramped up over 50 ms).  Returns the displacement and the
    velocities at 0.1 and 0.2 s and the total mass pushed."""
    mu = 0.3
    sim = _Sim()
    body = Cylinder(np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]),  # base on the floor
                    np.array([1.0, 0.0, 0.0]), 0.04, 0.02, RHO)
    sim.append(body)
    sim.add_forcing_to(body).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    add_contact(sim, body, _floor(mu=mu))
    rod = _rod([-L - 0.02 - 0.005, 0.0, 0.02], E=1e7, radius=0.005)
    sim.append(rod)
    load = ratio * mu * _mass(body) * G
    sim.add_forcing_to(rod).using(EndpointForces, start_force=np.array([load, 0.0, 0.0]),
                                  end_force=np.zeros(3), ramp_up_time=0.05)
    # the rod's tip keeps to the body's side by friction (a frictionless tip on a convex side
    # is unstable sideways); its slip velocity 0.1 m/s keeps the sticking friction of the tip
    # node (0.4 g) under its explicit step limit 2 m v_s / (mu f) = 7e-4 s (docs/contact.md)
    add_object_contact(sim, rod, body, ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                                     damping_ratio=0.5, friction_coefficient=0.5,
                                                     slip_velocity=0.1))
    sim.finalize()
    x0 = body.position_collection[0, 0]
    t = _run(sim, 0.1, 2e-5)
    v1 = float(body.velocity_collection[0, 0])
    _run(sim, 0.1, 2e-5, t)
    v2 = float(body.velocity_collection[0, 0])
    return (float(body.position_collection[0, 0] - x0), v1, v2,
            _mass(body) + float(np.sum(rod.mass)))


def test_an_object_dragged_by_a_rod_sticks_below_mu_m_g() -> None:
    """At 0.8 of ``mu M g`` the body stays, up to the smoothed law's creep
    ``v_s r / sqrt(1 - r^2)`` = 1.333 mm/s at ``r = 0.8``."""
    moved, _, v, _ = _drag(0.8)
    creep = 1e-3 * 0.8 / math.sqrt(1.0 - 0.8**2)
    print("moved at 0.8 mu M g", moved, "v", v, "creep", creep)
    # the creep is the rim points' (the push's moment shifts load between them: 5 % on it)
    assert v == pytest.approx(creep, rel=5e-2)
    assert 0.0 < moved < 1.1 * creep * 0.2  # at most the creep over the run


def test_an_object_dragged_by_a_rod_slides_above_mu_m_g_at_the_coulomb_acceleration() -> None:
    """At 1.5 ``mu M g`` body and rod accelerate together at ``(F - mu M g) / (M + m)``."""
    ratio, mu = 1.5, 0.3
    _, v1, v2, mass = _drag(ratio)
    accel = (v2 - v1) / 0.1
    expected = (ratio - 1.0) * mu * 0.02**2 * math.pi * 0.04 * RHO * G / mass
    print("acceleration", accel, "expected", expected)
    # sliding at > 0.07 m/s the smoothed friction is within (v_s / v)^2 / 2 < 1e-4 of Coulomb's;
    # the rod's axial vibration (period 2 ms) in the velocities read and its slow pitch about
    # the tip leave 1 % (the rod is a free strut under a dead load: it turns away after 0.3 s)
    assert accel == pytest.approx(expected, rel=2e-2)


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------
def test_bad_values_raise_one_line_naming_the_field() -> None:
    sphere = _sphere([0.0, 0.0, 0.0])
    with pytest.raises(ParameterError, match=r"^ObjectContact.body = CosseratRod is invalid") as e:
        ObjectContact(_rod([0.0, 0.0, 0.1]))
    assert "\n" not in str(e.value)
    with pytest.raises(ParameterError, match=r"^ObjectContact.contact = dict is invalid"):
        ObjectContact(sphere, contact={"stiffness": 1.0})
    with pytest.raises(ParameterError, match=r"ObjectContact.nodes"):
        ObjectContact(sphere, nodes=(1,))
    with pytest.raises(ParameterError, match=r"ContactParams.friction_coefficient"):
        ObjectContact(sphere, contact=ContactParams(friction_coefficient=-1.0))


def test_an_overlapping_placement_is_refused_naming_the_node_and_the_body() -> None:
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, 0.0])
    sim.append(sphere)
    rod = _rod([-0.05, 0.0, 0.0])  # node 5 at the sphere's centre, node 4 12 mm deep
    sim.append(rod)
    with pytest.raises(ParameterError, match=r"^ObjectContact: node 4 of the rod starts 0.012 m "
                                             r"inside the Sphere at \[0.0, 0.0, 0.0\] m") as e:
        add_object_contact(sim, rod, sphere, ContactParams(smoothing_length=1e-5))
    assert "\n" not in str(e.value)
    # the forcing itself checks on its first evaluation too
    op = ObjectContact(sphere, ContactParams(smoothing_length=1e-5), nodes=(6, 11))
    with pytest.raises(ParameterError, match=r"node 6 of the rod"):
        op.apply_forces(rod)


# --------------------------------------------------------------------------------------------
# the compiled engines
# --------------------------------------------------------------------------------------------
def _pushed_sphere(mu: float) -> tuple[_Sim, CosseratRod, Sphere, Any]:
    """A rod thrown at 0.1 m/s, 6 mm off-centre, at a spinning sphere resting on a floor
    (both with friction ``mu``): the rod hits it after 2 ms."""
    sim = _Sim()
    sphere = _sphere([0.0, 0.0, R_S])
    sphere.omega_collection[:, 0] = (0.0, 0.0, 20.0)
    sim.append(sphere)
    sim.add_forcing_to(sphere).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    add_contact(sim, sphere, _floor(mu=mu))
    rod = _rod([-L - R_S - R_ROD - 2e-4, 0.0, R_S + 0.006])
    rod.velocity_collection[0, :] = 0.1
    sim.append(rod)
    ref = add_object_contact(sim, rod, sphere, ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.2, friction_coefficient=mu,
        slip_velocity=0.05))
    sim.finalize()
    return sim, rod, sphere, ref


def test_fused_object_contact_matches_the_operator_path() -> None:
    """600 steps on PyElastica's loop with the forcings and on the fused step; the compiled row
    is the operator's kernels, so measured bit-identical; 1e-10 (m, m/s, N) leaves room for
    round-off only."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.fused import FusedEngine

    dt, n = 2e-5, 600
    ref_sim, ref_rod, ref_sphere, ref_op = _pushed_sphere(0.5)
    _run(ref_sim, n * dt, dt)
    sim, rod, sphere, op = _pushed_sphere(0.5)
    FusedEngine(compile_simulator(sim), dt).run_steps(n, 0.0)
    assert ref_op.instance.in_contact.any()  # they touched within the run
    pairs = [
        (rod.position_collection, ref_rod.position_collection),
        (rod.velocity_collection, ref_rod.velocity_collection),
        (sphere.position_collection, ref_sphere.position_collection),
        (sphere.velocity_collection, ref_sphere.velocity_collection),
        (sphere.omega_collection, ref_sphere.omega_collection),
        (op.instance.force, ref_op.instance.force),
        (op.instance.gap, ref_op.instance.gap),
    ]
    worst = max(float(np.abs(a - b).max()) for a, b in pairs)
    print("fused vs operator: largest difference", worst)
    assert worst < 1e-10


def test_implicit_engine_conserves_the_momentum_of_a_collision() -> None:
    """The gravity-free collision above on the implicit integrator (``dt`` = 2e-4 s, 10x the
    explicit step): the contact's forces cancel in the momentum balance at every Newton
    iterate, so the total momentum stays to round-off, and the sphere takes its share."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.implicit import ImplicitEngine

    sim = _Sim()
    sphere = _sphere([0.0, 0.0, 0.0])
    sim.append(sphere)
    rod = _rod([-L - R_S - R_ROD - 1e-3, 0.0, 0.006])
    rod.velocity_collection[0, :] = 0.1
    sim.append(rod)
    op = add_object_contact(sim, rod, sphere, ContactParams(stiffness=1e3, smoothing_length=1e-5))
    sim.finalize()
    p0 = _momentum(rod, sphere)
    dt = 2e-4
    ImplicitEngine(compile_simulator(sim), dt, dt_table=dt).run_steps(int(round(0.1 / dt)), 0.0)
    p1 = _momentum(rod, sphere)
    transferred = _mass(sphere) * np.linalg.norm(sphere.velocity_collection[:, 0])
    print("implicit: p1 - p0", p1 - p0, "sphere momentum / p0", transferred / np.linalg.norm(p0),
          "gap", op.instance.gap.min())
    assert transferred > 0.3 * np.linalg.norm(p0)
    # each evaluation's contact forces cancel exactly; what is left is the Newton iteration's
    # unbalanced residual (tol_force = 1e-6 N, or increments below 1e-7 m) over 500 steps:
    # measured 9e-7 of p0
    assert np.abs(p1 - p0).max() < 1e-5 * np.linalg.norm(p0)


def test_the_step_limits_of_a_rod_node_pushing_an_object() -> None:
    """``step_limits`` of an ``ObjectContact``: the tip node pushing the sphere (the only node
    in contact) on its own, with the reduced mass ``m M / (m + M)``: friction
    ``2 m rho / (mu f_el)`` with ``rho = sqrt(v_rel_t^2 + v_s^2)`` (the largest slope of the
    smoothed friction in the tangential speed)."""
    from hsa_elastica.physics.contact import step_limits

    sim, rod, sphere, ref = _pushed_sphere(0.5)
    dt = 2e-5
    _run(sim, 0.012, dt)  # in contact from 10 ms on
    op = ref.instance
    op.apply_forces(rod)  # the sensors at the present state (they hold the mid-step's)
    normal, friction = step_limits(op, rod)
    tip = rod.n_elems
    m = rod.mass[tip] * _mass(sphere) / (rod.mass[tip] + _mass(sphere))
    pts, _ = op.relative_points(rod)
    n = rod.position_collection[:, tip] - sphere.position_collection[:, 0]
    n /= np.linalg.norm(n)
    v = pts.velocity[:, -1]
    rho = math.hypot(float(np.linalg.norm(v - n * (n @ v))), 0.05)
    f = op.force[:, -1]
    # f_el from the sensor's normal force, the damping -c s v_n undone (s = sigmoid(-g / l))
    s_ind = 1.0 / (1.0 + math.exp(op.gap[-1] / 1e-5))
    f_el = float(n @ f) + 2.0 * 0.2 * math.sqrt(1e3 * m) * s_ind * float(n @ v)
    print("limits", normal, friction, "hand", 2.0 * m * rho / (0.5 * f_el))
    assert op.in_contact[-1] and op.in_contact.sum() == 1
    assert friction == pytest.approx(2.0 * m * rho / (0.5 * f_el), rel=1e-9)  # round-off
    assert 0.0 < normal < math.inf


# --------------------------------------------------------------------------------------------
# objects in a robot's parameters
# --------------------------------------------------------------------------------------------
def _robot_params(objects: Any, gravity: Any = (0.0, 0.0, -G)) -> Any:
    import dataclasses

    from hsa_elastica.params import EnvironmentParams, paper_robot_params

    p = paper_robot_params()
    return dataclasses.replace(
        p, rod=dataclasses.replace(p.rod, n_elements=10),
        simulation=dataclasses.replace(p.simulation, dt=5e-5, gravity=gravity),
        environment=EnvironmentParams(objects=objects))


def test_object_params_are_checked_and_round_trip() -> None:
    from hsa_elastica.params import EnvironmentParams, ObjectParams, RobotParams

    with pytest.raises(ParameterError, match=r"^ObjectParams.radius = -1") as e:
        ObjectParams(radius=-1.0)
    assert "\n" not in str(e.value)
    with pytest.raises(ParameterError, match=r"^ObjectParams.shape = 'cube' is invalid: must be one of sphere"):
        ObjectParams(shape="cube")
    with pytest.raises(ParameterError, match=r"^EnvironmentParams.objects\[0\]: unknown key"):
        EnvironmentParams(objects=({"colour": "red"},))
    p = _robot_params((ObjectParams(radius=0.03, mass=0.1, position=(0.2, 0.0, 0.03),
                                    contact=ContactParams(friction_coefficient=0.4)),))
    back = RobotParams.from_dict(p.to_dict())
    assert back.environment == p.environment
    assert back.environment.objects[0].contact.friction_coefficient == 0.4
    assert "environment" not in _robot_params(()).to_dict()


def test_a_robot_builds_its_objects_and_the_fused_engine_drops_them_under_gravity() -> None:
    """A sphere object away from the robot, no obstacle: it falls freely, ``g t^2 / 2``."""
    from hsa_elastica.params import ObjectParams
    from hsa_elastica.robots.builders import build_fast_robot

    p = _robot_params((ObjectParams(radius=0.02, mass=0.05, position=(0.3, 0.0, 0.05)),))
    robot = build_fast_robot(p, [0.0] * 4, record=False)
    contacts: Any = robot.robot.contacts  # type: ignore[union-attr]
    objects = [r for r in contacts if isinstance(r.instance, ObjectContact)]
    assert len(objects) == 5  # one per rod, then the platform's (its rims)
    assert objects[-1].system is robot.robot.platform  # type: ignore[union-attr]
    sphere = objects[0].instance.body
    assert isinstance(sphere, Sphere) and _mass(sphere) == pytest.approx(0.05, rel=1e-12)
    robot.run(0.05)
    # Verlet integrates a constant force exactly (round-off)
    assert sphere.position_collection[2, 0] == pytest.approx(0.05 - 0.5 * G * 0.05**2, abs=1e-12)


def test_a_robot_with_an_object_through_a_rod_is_refused_naming_the_node() -> None:
    from hsa_elastica.params import ObjectParams
    from hsa_elastica.robots.builders import build_robot

    free = build_robot(_robot_params(()), [0.0] * 4, record=False, finalize=False)
    x = free.rods[0].position_collection[:, 5]
    inside = (float(x[0]), float(x[1]), float(x[2]))
    with pytest.raises(ParameterError, match=r"^ObjectContact: node 5 of the rod starts 0.0175 m "
                                             r"inside the Sphere at"):
        build_robot(_robot_params((ObjectParams(radius=0.01, position=inside),)), [0.0] * 4,
                    record=False)


def test_a_static_solve_of_a_robot_with_a_free_object_is_refused_in_one_line(tmp_path: Any
                                                                              ) -> None:
    """A free object has no stiffness in its rotation: the static Jacobian is singular (a raw
    "Factor is exactly singular" before).  Every static entry point refuses it before any work,
    naming the field; the dynamic path stays open."""
    import subprocess
    import sys

    from hsa_elastica.experiments.datasets import build_dataset
    from hsa_elastica.params import ObjectParams, save_params
    from hsa_elastica.robots.statics_api import solve_static, solve_static_batch

    p = _robot_params((ObjectParams(radius=0.02, mass=0.05, position=(0.3, 0.0, 0.05)),))
    line = r"^RobotParams\.environment\.objects = 1 free object\(s\) is invalid for a static solve"
    with pytest.raises(ParameterError, match=line):
        solve_static(p, [0.1] * 4)
    with pytest.raises(ParameterError, match=line):
        solve_static_batch(p, [[0.1] * 4])
    with pytest.raises(ParameterError, match=line):
        build_dataset(tmp_path / "ds", p, np.zeros((2, 4)), {}, solver="static", progress=False)
    save_params(p, tmp_path / "objects.yaml")
    run = subprocess.run([sys.executable, "-m", "hsa_elastica.cli", "steady-state", "--params",
                          str(tmp_path / "objects.yaml"), "--angles", "0.1", "0.1", "0.1", "0.1"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "environment.objects" in lines[0], run.stderr


def test_a_free_cylinder_object_has_the_inertia_of_a_solid_cylinder() -> None:
    """``robots.environment.solid_cylinder`` (the gripper's object): mass ``rho pi R^2 L`` and
    the solid cylinder's principal moments ``M (3 R^2 + L^2) / 12`` about a diameter (twice)
    and ``M R^2 / 2`` about the axis (director rows normal, binormal, axis), written by hand
    here; kept by the memory block through ``finalize()`` (PyElastica's own ``Cylinder`` has
    ``M R^2 / 4`` about a diameter: 3 R^2 / (3 R^2 + L^2) = 0.43 of it at R = 20 mm, L = 40 mm)."""
    from hsa_elastica.robots.environment import solid_cylinder

    r, length, rho = 0.02, 0.04, 1000.0
    mass = rho * math.pi * r * r * length
    expected = np.array([mass * (3 * r * r + length * length) / 12] * 2 + [mass * r * r / 2])
    body = solid_cylinder([0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], length, r, rho)
    sim = _Sim()
    sim.append(body)
    sim.finalize()
    inertia = body.mass_second_moment_of_inertia[:, :, 0]
    assert float(np.sum(body.mass)) == pytest.approx(mass, rel=1e-12)
    np.testing.assert_allclose(np.diag(inertia), expected, rtol=1e-12)
    assert np.count_nonzero(inertia - np.diag(np.diag(inertia))) == 0
    np.testing.assert_allclose(body.inv_mass_second_moment_of_inertia[:, :, 0] @ inertia,
                               np.eye(3), atol=1e-12)
    stock = Cylinder(np.zeros(3), np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), length,
                     r, rho)
    assert stock.mass_second_moment_of_inertia[0, 0, 0] == pytest.approx(mass * r * r / 4)


def test_cylinder_object_params_are_checked_and_round_trip(tmp_path: Any) -> None:
    """A ``cylinder`` object: its length and axis checked, its mass from ``density`` (``rho pi
    R^2 L``, by hand here) or given (both must agree), the record written and read back."""
    from hsa_elastica.params import EnvironmentParams, ObjectParams, RobotParams, load_params, save_params

    c = ObjectParams(shape="cylinder", radius=0.015, length=0.03, density=1200.0, axis=(0.0, 0.0, 2.0))
    assert c.mass == pytest.approx(1200.0 * math.pi * 0.015**2 * 0.03, rel=1e-12)
    assert c.axis == (0.0, 0.0, 1.0)  # normalised
    s = ObjectParams(radius=0.02, density=1000.0)
    assert s.mass == pytest.approx(1000.0 * 4.0 / 3.0 * math.pi * 0.02**3, rel=1e-12)
    assert ObjectParams().mass == 0.05  # neither given: the default
    assert ObjectParams(shape="cylinder", mass=0.02, density=None).density is None
    bad = [
        (dict(shape="cylinder", length=0.0), r"^ObjectParams.length = 0.0 is invalid: must be a finite number > 0 and <= 1 \(m\)"),
        (dict(shape="cylinder", axis=(0.0, 0.0, 0.0)), r"^ObjectParams.axis = \(0.0, 0.0, 0.0\) is invalid: must be a non-zero vector"),
        (dict(mass=0.01, density=1000.0), r"^ObjectParams.mass = 0.01 is invalid: it disagrees with density \* volume = 0.0335103"),
        (dict(density=-1.0), r"^ObjectParams.density = -1.0 is invalid: must be None or a finite number > 0 and <= 100000 \(kg/m\^3\)"),
        (dict(radius=0.5, density=1e5), r"^ObjectParams.density = 100000.0 is invalid: the mass density \* volume = 52359.9 must be > 0 and <= 1000"),
    ]
    for kwargs, line in bad:
        with pytest.raises(ParameterError, match=line) as e:
            ObjectParams(**kwargs)  # type: ignore[arg-type]
        assert "\n" not in str(e.value)
    p = _robot_params((c, s))
    back = RobotParams.from_dict(p.to_dict())  # mass and density both written: they agree
    assert back.environment == p.environment
    save_params(p, tmp_path / "objects.yaml")
    assert load_params(tmp_path / "objects.yaml", RobotParams).environment == p.environment
    with pytest.raises(ParameterError, match=r"^EnvironmentParams.objects\[0\]: ObjectParams.shape = 'cone'"):
        EnvironmentParams(objects=({"shape": "cone"},))


@pytest.mark.parametrize("integrator, dt", [("explicit", 5e-5), ("implicit", 1e-3)])
def test_a_robot_builds_a_cylinder_object_that_stands_on_the_floor_with_its_weight(
        integrator: str, dt: float) -> None:
    """A ``cylinder`` object of a robot's parameters, upright on a damped floor beside the
    robot: the builder's body has the mass ``rho pi R^2 L`` and the solid cylinder's inertia
    (by hand), its axis along ``axis``; on the fused and the implicit engine it settles on its
    bottom rim with the floor carrying its weight (0.5 %: the floor's damping ratio 0.5 settles
    the bounce of its landing within the 0.3 s)."""
    import dataclasses

    from hsa_elastica.params import ObjectParams
    from hsa_elastica.robots.builders import build_fast_robot

    r, length, rho = 0.015, 0.03, 1000.0
    floor = PlaneObstacle(point=(0.0, 0.0, -0.01), normal=(0.0, 0.0, 1.0),
                          contact=ContactParams(stiffness=1e3, damping_ratio=0.5))
    cyl = ObjectParams(shape="cylinder", radius=r, length=length, density=rho,
                       position=(0.12, 0.0, -0.01 + 0.5 * length), axis=(0.0, 0.0, 1.0))
    p = _robot_params((cyl,))
    p = dataclasses.replace(p, environment=dataclasses.replace(p.environment, obstacles=(floor,)),
                            simulation=dataclasses.replace(p.simulation, dt=dt, integrator=integrator))
    robot = build_fast_robot(p, [0.0] * 4, record=False)
    contacts: Any = robot.robot.contacts  # type: ignore[union-attr]
    # per obstacle the rods' and the platform's contacts, then per object the obstacles' on
    # it and the rods' (docs/contact.md, "In a parameter file")
    on_floor = contacts[p.n_rods + 1]
    body = contacts[p.n_rods + 2].instance.body
    assert isinstance(body, Cylinder)
    mass = rho * math.pi * r * r * length
    assert _mass(body) == pytest.approx(mass, rel=1e-12)
    expected = [mass * (3 * r * r + length * length) / 12] * 2 + [mass * r * r / 2]
    np.testing.assert_allclose(np.diag(body.mass_second_moment_of_inertia[:, :, 0]), expected,
                               rtol=1e-12)
    np.testing.assert_allclose(body.director_collection[2, :, 0], [0.0, 0.0, 1.0], atol=1e-15)
    robot.run(0.3)
    weight = mass * G
    print("floor force / weight", on_floor.instance.total_force[2] / weight,
          "height", body.position_collection[2, 0])
    assert on_floor.instance.total_force[2] == pytest.approx(weight, rel=5e-3)
    assert body.position_collection[2, 0] == pytest.approx(-0.01 + 0.5 * length, abs=2e-3)
