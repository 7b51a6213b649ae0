"""Frictional contact laws (hsa_elastica/physics/contact_laws.py, contact.py) against closed
forms, on PyElastica's own time loop.

Reference numbers come from mechanics, not from the code under test: the weight of the rod,
the sliding acceleration ``g (sin theta - mu cos theta)``, the creep speed of the smoothed
friction law ``v_s r / sqrt(1 - r^2)``, the tip stiffness of a Timoshenko cantilever, energy
conservation, central finite differences.  Each tolerance says where it comes from.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from elastica import CosseratRod, Cylinder, PositionVerlet
from elastica.boundary_conditions import OneEndFixedBC
from elastica.dissipation import AnalyticalLinearDamper
from elastica.external_forces import GravityForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing

from hsa_elastica.params import (
    ALPHA_C,
    BoxObstacle,
    CapsuleObstacle,
    ContactParams,
    EnvironmentParams,
    ParameterError,
    PlaneObstacle,
    SphereObstacle,
)
from hsa_elastica.physics.contact import BodyContact, RodContact, add_contact, check_placement
from hsa_elastica.physics.energy import rod_elastic_energy, rod_kinetic_energy
from hsa_elastica.physics.contact_laws import (
    ContactLaw,
    ContactOutput,
    ContactPoints,
    contact_forces,
    contact_tangent,
    geometry_record,
)

G = 9.81  # m/s^2
L, R, RHO = 0.2, 0.005, 1000.0  # rod length, radius [m], density [kg/m^3]
N_ELEM = 20


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _rod(start: Any, direction: Any, normal: Any, E: float = 1e6) -> CosseratRod:
    return CosseratRod.straight_rod(
        N_ELEM, np.asarray(start, float), np.asarray(direction, float), np.asarray(normal, float),
        L, R, RHO, youngs_modulus=E, shear_modulus=E / 3.0,
    )


def _damped_cylinder(sim: Any, base: Any, length: float, radius: float, dt: float) -> Cylinder:
    """A rigid cylinder (density 1000 kg/m^3) of ``length``, ``radius`` [m] with its bottom
    face centred at ``base`` [m], axis vertical, under gravity, damped at 20 /s, in ``sim``."""
    body = Cylinder(np.asarray(base, float), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]),
                    length, radius, 1000.0)
    sim.append(body)
    sim.add_forcing_to(body).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.dampen(body).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=dt)
    return body


def _run(sim: _Sim, duration: float, dt: float, t: float = 0.0) -> float:
    """PyElastica's Position Verlet on ``sim`` for ``duration`` [s] from time ``t``."""
    stepper = PositionVerlet()
    time = np.float64(t)
    for _ in range(int(round(duration / dt))):
        time = stepper.step(sim, time, np.float64(dt))
    return float(time)


# --------------------------------------------------------------------------------------------
# the consistent tangent against central finite differences
# --------------------------------------------------------------------------------------------
LAW = ContactLaw(1e3, 1e-4, 0.3, 0.5, 1e-3)  # k, l, zeta, mu, v_s
#: a box turned 30 degrees about z, edges rounded (inner half edges 26, 16, 36 mm)
BOX = BoxObstacle(center=(0.01, -0.02, 0.03), size=(0.06, 0.04, 0.08),
                  x_axis=(math.cos(math.pi / 6), math.sin(math.pi / 6), 0.0),
                  z_axis=(0.0, 0.0, 1.0), edge_radius=0.004)


def _box_point(inner: tuple[float, ...], n_local: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The centre of a node of radius 5 mm touching the box (gap 0) outside the inner box's
    point ``inner`` (box axes) along ``n_local``, and the normal there (lab)."""
    x = np.array(BOX.x_axis)
    z = np.array(BOX.z_axis)
    rot = np.column_stack([x, np.cross(z, x), z])
    n = rot @ (np.array(n_local) / np.linalg.norm(n_local))
    return np.array(BOX.center) + rot @ np.array(inner) + (BOX.edge_radius + 0.005) * n, n


GEOMETRIES = {
    "plane": geometry_record(PlaneObstacle(point=(0.1, 0.2, 0.3), normal=(0.3, -0.2, 1.0))),
    "sphere": geometry_record(SphereObstacle(center=(0.0, 0.0, 0.0), radius=0.05)),
    "capsule": geometry_record(CapsuleObstacle(start=(0, 0, 0), end=(0, 0, 0.1), radius=0.02)),
    "box": geometry_record(BOX),
}
#: a point on each surface (gap 0 for a node of radius 5 mm) and its outward normal
SURFACE = {
    "plane": (np.array([0.1, 0.2, 0.3]) + 0.005 * np.array([0.3, -0.2, 1.0]) / math.sqrt(1.13),
              np.array([0.3, -0.2, 1.0]) / math.sqrt(1.13)),
    "sphere": (np.array([0.055, 0.0, 0.0]), np.array([1.0, 0.0, 0.0])),
    "capsule": (np.array([0.025, 0.0, 0.05]), np.array([1.0, 0.0, 0.0])),
    "capsule cap": (np.array([0.0, 0.0, 0.125]), np.array([0.0, 0.0, 1.0])),
    "box face": _box_point((0.026, 0.004, -0.01), (1.0, 0.0, 0.0)),
    "box edge": _box_point((0.026, 0.016, 0.01), (1.0, 1.0, 0.0)),
    "box corner": _box_point((-0.026, 0.016, 0.036), (-1.0, 2.0, 1.5)),
}


def _force(geom: Any, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    pts = ContactPoints(x.reshape(3, 1).copy(), v.reshape(3, 1).copy(), np.array([0.005]),
                        np.array([1e-3]))
    out = ContactOutput(np.zeros((3, 1)), np.zeros(1), np.zeros(1))
    contact_forces(pts, geom, LAW, out)
    return out.force[:, 0].copy()


def _fd_tangent(geom: Any, x: np.ndarray, v: np.ndarray, step: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of :func:`_force` in the position and the velocity, with steps
    ``step`` times the smoothing length and the slip velocity."""
    hx, hv = step * LAW.smoothing_length, step * LAW.slip_velocity
    fd_x, fd_v = np.zeros((3, 3)), np.zeros((3, 3))
    for j in range(3):
        e = np.eye(3)[j]
        fd_x[:, j] = (_force(geom, x + hx * e, v) - _force(geom, x - hx * e, v)) / (2 * hx)
        fd_v[:, j] = (_force(geom, x, v + hv * e) - _force(geom, x, v - hv * e)) / (2 * hv)
    return fd_x, fd_v


def _states() -> list[tuple[str, float, float]]:
    """(surface, gap / l, tangential speed / v_s): inside the smoothed zones and outside."""
    return [(s, g, w) for s in SURFACE for g in (-20.0, -1.0, 0.0, 1.5, 6.0)
            for w in (0.0, 0.3, 1.0, 3.0, 30.0)]


def test_tangent_equals_central_differences() -> None:
    rng = np.random.default_rng(7)
    worst = 0.0
    for surface, g_over_l, w_over_vs in _states():
        geom = GEOMETRIES[surface.split()[0]]
        x0, n = SURFACE[surface]
        x = x0 + g_over_l * LAW.smoothing_length * n
        t = np.cross(n, rng.normal(size=3))
        t /= np.linalg.norm(t)
        v = w_over_vs * LAW.slip_velocity * t + 0.2 * LAW.slip_velocity * rng.normal() * n
        pts = ContactPoints(x.reshape(3, 1).copy(), v.reshape(3, 1).copy(), np.array([0.005]),
                            np.array([1e-3]))
        d_dx, d_dv = np.zeros((3, 3, 1)), np.zeros((3, 3, 1))
        contact_tangent(pts, geom, LAW, d_dx, d_dv)
        # steps: 1e-4 of the smoothing length and of the slip velocity, the scales on which
        # the force varies: truncation ~(1e-4)^2, round-off ~1e-16 / 1e-4 relative
        fd_x, fd_v = _fd_tangent(geom, x, v, 1e-4)
        for exact, fd in ((d_dx[:, :, 0], fd_x), (d_dv[:, :, 0], fd_v)):
            scale = np.linalg.norm(fd)
            if scale == 0.0:  # frictionless far out: both vanish
                assert np.linalg.norm(exact) == 0.0
                continue
            err = np.linalg.norm(exact - fd) / scale
            worst = max(worst, err)
            assert err < 1e-6, (surface, g_over_l, w_over_vs, err)
    print("tangent: worst relative error", worst)
    assert worst > 0.0  # the comparison ran on non-trivial tangents


@pytest.mark.parametrize("surface", list(SURFACE))
def test_a_separating_point_is_not_pulled_back(surface: str) -> None:
    """The damping ``-c s v_n`` exceeds the elastic force ``k l softplus(-g / l)`` of a point
    leaving the surface fast enough; the normal force is then zero, not a pull (a contact only
    pushes).  Reference: the elastic force from its closed form with numpy; half of the
    separating speed that cancels it leaves half of it."""
    geom = GEOMETRIES[surface.split()[0]]
    x0, n = SURFACE[surface]
    k, ell, zeta = LAW.stiffness, LAW.smoothing_length, LAW.damping_ratio
    c = 2.0 * zeta * math.sqrt(k * 1e-3)  # the point's mass in _force: 1 g
    t = np.cross(n, [0.3, 0.5, 0.7])
    t /= np.linalg.norm(t)
    for g_over_l in (-20.0, -1.0, 0.0, 1.5):
        x = x0 + g_over_l * ell * n
        f_el = k * ell * np.logaddexp(0.0, -g_over_l)
        s = 1.0 / (1.0 + math.exp(g_over_l))
        v_cancel = f_el / (c * s)  # the separating speed at which damping cancels f_el
        half = _force(geom, x, 0.5 * v_cancel * n + 2e-3 * t)
        assert n @ half == pytest.approx(0.5 * f_el, rel=1e-9)  # round-off of the closed form
        fast = _force(geom, x, 3.0 * v_cancel * n + 2e-3 * t)
        assert abs(n @ fast) <= 1e-9 * np.linalg.norm(fast)  # only the friction (round-off)
        assert np.linalg.norm(fast) > 0.0
        # the tangent of the clipped force is the friction's alone, still exact.  Step 1e-5
        # l: a normal speed of ~10 m/s turns the normal on a curved surface, so a step of x
        # moves v_t by v_n h / R, which must stay far below rho (truncation (v_n h / R rho)^2
        # ~1e-8); shorter steps meet v_t's round-off (|v| eps ~ 1e-15 m/s over h)
        pts = ContactPoints(x.reshape(3, 1).copy(), (3.0 * v_cancel * n + 2e-3 * t).reshape(3, 1),
                            np.array([0.005]), np.array([1e-3]))
        d_dx, d_dv = np.zeros((3, 3, 1)), np.zeros((3, 3, 1))
        contact_tangent(pts, geom, LAW, d_dx, d_dv)
        fd_x, fd_v = _fd_tangent(geom, x, 3.0 * v_cancel * n + 2e-3 * t, 1e-5)
        for exact, fd in ((d_dx[:, :, 0], fd_x), (d_dv[:, :, 0], fd_v)):
            assert np.linalg.norm(exact - fd) <= 1e-6 * np.linalg.norm(fd), (surface, g_over_l)


# --------------------------------------------------------------------------------------------
# a rod resting on a floor; a rigid cylinder standing on it
# --------------------------------------------------------------------------------------------
def test_a_rod_pushed_off_a_damped_floor_is_never_pulled_down() -> None:
    """A rod started 0.1 mm into a rough, damped floor (zeta 0.5) springs off it.  While it
    leaves, the damping ``c s v_n`` exceeds the elastic force of the fast nodes; the unclipped
    law pulled nodes down with up to 0.018 N (sampled every 0.5 ms).  Every node's normal force
    stays >= 0 (a contact only pushes), and the rod leaves the floor."""
    sim, dt = _Sim(), 1e-5
    rod = _rod([0.0, 0.0, R - 1e-4], [1, 0, 0], [0, 0, 1])
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    floor = PlaneObstacle(contact=ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                                damping_ratio=0.5, friction_coefficient=0.5))
    ref = add_contact(sim, rod, floor)
    sim.finalize()
    contact = ref.instance
    t, lowest = 0.0, math.inf
    for _ in range(10):  # 5 ms in 0.5 ms pieces
        t = _run(sim, 5e-4, dt, t)
        lowest = min(lowest, float(contact.force[2].min()))
    print("lowest node normal force", lowest, "gap", contact.gap.min())
    assert lowest >= 0.0
    assert contact.gap.min() > 5e-5  # airborne: 5 smoothing lengths clear of the floor


@pytest.mark.parametrize("smoothing_length", [1e-5, 1e-6])
def test_rod_resting_on_a_plane_carries_its_weight(smoothing_length: float) -> None:
    sim, dt = _Sim(), 5e-5
    rod = _rod([0.0, 0.0, R], [1, 0, 0], [0, 0, 1])
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=dt)
    floor = PlaneObstacle(contact=ContactParams(stiffness=1e3, smoothing_length=smoothing_length,
                                                damping_ratio=0.5))
    ref = add_contact(sim, rod, floor)
    sim.finalize()
    _run(sim, 0.3, dt)
    weight = float(np.sum(rod.mass)) * G
    contact = ref.instance
    total = contact.total_force
    print("rest: normal/weight", total[2] / weight, "gap", contact.gap.min(), contact.gap.max())
    assert total[2] == pytest.approx(weight, rel=5e-3)
    assert abs(total[0]) + abs(total[1]) < 1e-6 * weight
    # every node touches, resting within a few smoothing lengths of the surface plus the
    # penetration f / k of the linear penalty (7.7 um under an interior node's weight)
    rest = 5 * smoothing_length + float(rod.mass.max()) * G / 1e3
    assert contact.in_contact.all() and np.abs(contact.gap).max() < rest


def test_cylinder_on_its_rim_carries_its_weight() -> None:
    sim, dt = _Sim(), 5e-5
    body = _damped_cylinder(sim, [0.0, 0.0, 0.0], 0.02, 0.04, dt)
    ref = add_contact(sim, body, PlaneObstacle(contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5, friction_coefficient=0.5)))
    sim.finalize()
    _run(sim, 0.2, dt)
    weight = float(np.sum(body.mass)) * G
    contact = ref.instance
    print("cylinder: normal/weight", contact.total_force[2] / weight)
    assert contact.total_force[2] == pytest.approx(weight, rel=5e-3)
    assert contact.force.shape == (3, 32)
    # on its rim, symmetric: the axis stays vertical (round-off of the 32 rim points' moments)
    assert np.abs(body.director_collection[2, :, 0] - [0.0, 0.0, 1.0]).max() < 1e-9
    assert contact.in_contact.sum() == 16  # the bottom rim only


def test_rod_draped_over_a_capsule_bar_carries_its_weight() -> None:
    """The curved obstacles in a run: a rod across a horizontal bar (capsule along y) hangs
    over it; the bar carries the whole weight and pushes along the surface normals only."""
    sim, dt = _Sim(), 5e-5
    bar_r = 0.01
    rod = _rod([-L / 2, 0.0, bar_r + R], [1, 0, 0], [0, 0, 1])
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=60.0, time_step=dt)
    bar = CapsuleObstacle(start=(0.0, -0.05, 0.0), end=(0.0, 0.05, 0.0), radius=bar_r,
                          contact=ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                                damping_ratio=0.5))
    ref = add_contact(sim, rod, bar)
    sim.finalize()
    _run(sim, 0.4, dt)  # damping 60 1/s ~ critical for the halves' first mode (28 rad/s)
    contact = ref.instance
    weight = float(np.sum(rod.mass)) * G
    print("bar: vertical/weight", contact.total_force[2] / weight, "touching",
          contact.in_contact.sum())
    assert contact.total_force[2] == pytest.approx(weight, rel=5e-3)
    assert 0 < contact.in_contact.sum() < N_ELEM + 1  # the ends hang free
    # frictionless: each node's force lies along the bar's normal through the node (x, z plane)
    assert np.abs(contact.force[1]).max() < 1e-12


def test_body_contact_on_given_points() -> None:
    """``BodyContact(points=...)``: a cylinder on three feet under its bottom face."""
    sim, dt = _Sim(), 5e-5
    body = _damped_cylinder(sim, [0.0, 0.0, 0.001], 0.02, 0.04, dt)
    angles = 2 * np.pi * np.arange(3) / 3
    feet = np.stack([0.03 * np.cos(angles), 0.03 * np.sin(angles), np.full(3, -0.011)])
    ref = add_contact(sim, body, PlaneObstacle(contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5)), points=feet)
    sim.finalize()
    _run(sim, 0.3, dt)
    contact = ref.instance
    weight = float(np.sum(body.mass)) * G
    assert contact.force.shape == (3, 3)
    # three symmetric feet share the weight equally (0.5 %: the settling's residual motion)
    assert contact.force[2] == pytest.approx(np.full(3, weight / 3), rel=5e-3)
    # the feet start on the floor (centre 11 mm up) and sink by the linear penalty's F / k
    # (0.33 mm): F >> k l, so softplus(z) = z up to exp(-F / (k l)) = exp(-33)
    sink = weight / 3 / 1e3
    assert float(body.position_collection[2, 0]) == pytest.approx(0.011 - sink, abs=1e-3 * sink)


# --------------------------------------------------------------------------------------------
# a rod on an incline: stuck below the friction angle, sliding above it
# --------------------------------------------------------------------------------------------
def _rod_on_incline(theta: float, mu: float, v_s: float) -> tuple[_Sim, CosseratRod, Any]:
    """A rod lying along the fall line of a plane tilted by ``theta`` [rad] (normal
    ``(sin theta, 0, cos theta)``, downhill ``+x``), its centre line at gap 0."""
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    downhill = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    sim = _Sim()
    rod = _rod(R * n, downhill, n)
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    incline = PlaneObstacle(point=(0.0, 0.0, 0.0), normal=tuple(n), contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5, friction_coefficient=mu,
        slip_velocity=v_s))
    ref = add_contact(sim, rod, incline)
    sim.finalize()
    return sim, rod, (ref, downhill)


def _downhill(rod: CosseratRod, downhill: np.ndarray, what: str = "position") -> float:
    """Mass-weighted mean of the nodes' position / velocity along the fall line."""
    arr = rod.position_collection if what == "position" else rod.velocity_collection
    return float(np.sum(rod.mass * (downhill @ arr)) / np.sum(rod.mass))


def test_rod_below_the_friction_angle_only_creeps() -> None:
    mu, v_s, dt, T = 0.5, 1e-3, 5e-5, 0.5
    theta = math.atan(0.3)  # tan(theta) = 0.6 mu
    sim, rod, (ref, downhill) = _rod_on_incline(theta, mu, v_s)
    x0 = _downhill(rod, downhill)
    _run(sim, T, dt)
    moved = _downhill(rod, downhill) - x0
    # the smoothed law holds a tangential load r mu f_n (r = tan(theta) / mu) only while the
    # contact slips at v_s r / sqrt(1 - r^2): 0.75 v_s here, 0.375 mm in 0.5 s
    r = math.tan(theta) / mu
    creep = v_s * r / math.sqrt(1.0 - r * r) * T
    print("stick: moved", moved, "creep bound", creep, "sticking", ref.instance.sticking.sum())
    # 5 %: the normal settling (damping ratio 0.5, ~5 ms) modulates f_n early on
    assert 0.0 < moved < 1.05 * creep
    assert ref.instance.sticking.all()


def test_rod_above_the_friction_angle_slides_at_the_coulomb_acceleration() -> None:
    mu, v_s, dt = 0.3, 1e-3, 5e-5
    theta = math.radians(30.0)  # tan(theta) = 0.577 > mu
    sim, rod, (ref, downhill) = _rod_on_incline(theta, mu, v_s)
    t = _run(sim, 0.1, dt)
    v1 = _downhill(rod, downhill, "velocity")
    _run(sim, 0.3, dt, t)
    v2 = _downhill(rod, downhill, "velocity")
    expected = G * (math.sin(theta) - mu * math.cos(theta))
    # v >= 0.2 m/s >> v_s: the smoothing lowers friction by (v_s / v)^2 / 2 < 1e-5
    print("slide: a", (v2 - v1) / 0.3, "expected", expected)
    assert (v2 - v1) / 0.3 == pytest.approx(expected, rel=0.02)
    assert ref.instance.sliding.all()


# --------------------------------------------------------------------------------------------
# a cantilever pressed against a frictionless wall
# --------------------------------------------------------------------------------------------
def test_cantilever_tip_on_a_frictionless_wall() -> None:
    E, dt, press = 1e7, 2e-5, 0.002  # Pa, s, m (tip pushed 1 % of L into the wall)
    alpha = 0.05  # rad, the wall's tilt: only the tip touches (tip slope ~1.5 press / L = 0.015)
    sim = _Sim()
    rod = _rod([0.0, 0.0, 0.0], [1, 0, 0], [0, 1, 0], E=E)
    sim.append(rod)
    sim.constrain(rod).using(OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=60.0, time_step=dt)
    n = np.array([-math.sin(alpha), math.cos(alpha), 0.0])
    tip = np.array([L, 0.0, 0.0])
    wall = PlaneObstacle(point=tuple(tip - (R - press) * n), normal=tuple(n), contact=ContactParams(
        stiffness=1e2, smoothing_length=1e-6, damping_ratio=0.5))
    ref = add_contact(sim, rod, wall)
    sim.finalize()
    _run(sim, 0.5, dt)
    contact = ref.instance
    f_y = float(contact.total_force[1])
    w = float(rod.position_collection[1, -1])
    EI = E * math.pi * R**4 / 4.0
    GA = ALPHA_C * E / 3.0 * math.pi * R**2
    dx = L / N_ELEM
    # closed form of the clamped beam as PyElastica discretises it: the bending moment
    # F (L - x_k) turns the elements at the n - 1 Voronoi points x_k = k dx by
    # F (L - x_k) dx / EI, so w = F (dx^3 / EI) sum_{j=1}^{n-1} j^2 (+ shear F L / GA); the sum
    # tends to L^3 / (3 EI) as n grows (1.5 / n softer: 7.4 % at n = 20).  The elastica's
    # correction at w / L = 0.01 is ~1e-4 relative, the wall's axial push F sin(alpha)
    # changes the bending stiffness by ~0.4 P L^2 / (E I) = 6e-4: both below the 1 % tolerance
    j = np.arange(1, N_ELEM)
    expected = w / (dx**3 * float(np.sum(j * j)) / EI + L / GA)
    continuum = w / (L**3 / (3.0 * EI) + L / GA)
    print("cantilever: F", f_y, "expected", expected, "continuum", continuum, "w", w, "touching", contact.in_contact.sum())
    assert f_y == pytest.approx(expected, rel=0.01)
    assert contact.force[:, :-1].max() < 1e-9 * abs(f_y)  # only the tip node touches
    assert abs(float(contact.force[:, -1] @ np.cross(n, [0, 0, 1]))) < 1e-12  # no friction


# --------------------------------------------------------------------------------------------
# frictionless contact is conservative
# --------------------------------------------------------------------------------------------
def _energy(rod: CosseratRod) -> float:
    """Kinetic + elastic + gravitational energy [J] of a rod (the contact potential excluded:
    sampled in flight); the elastic energy whose gradient PyElastica's forces are up to
    second order (physics/energy.py)."""
    kin = rod_kinetic_energy(rod.position_collection, rod.velocity_collection,
                             rod.omega_collection, rod.mass, rod.mass_second_moment_of_inertia,
                             rod.rest_lengths)
    el = rod_elastic_energy(rod.position_collection, rod.director_collection, rod.rest_lengths,
                            rod.rest_voronoi_lengths, rod.shear_matrix, rod.bend_matrix,
                            rod.rest_sigma, rod.rest_kappa)
    return float(kin + el) + G * float(np.sum(rod.mass * rod.position_collection[2]))


def _in_flight_energies(sim: _Sim, energy: Any, contact: Any, dt: float) -> list[float]:
    """The energy every 1 ms over 0.3 s whenever no point is within 50 smoothing lengths of
    the plane (contact potential < k l^2 exp(-50))."""
    t, samples = 0.0, []
    while t < 0.3:
        t = _run(sim, 1e-3, dt, t)
        if contact.instance.gap.min() > 50 * contact.instance.obstacle.contact.smoothing_length:
            samples.append(energy())
    return samples


def test_frictionless_bounces_of_a_rod_do_not_add_energy() -> None:
    dt, drop = 2e-5, 0.002  # s, m
    sim = _Sim()
    rod = _rod([0.0, 0.0, R + drop], [1, 0, 0], [0, 0, 1], E=1e7)
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    ref = add_contact(sim, rod, PlaneObstacle(contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5)))
    sim.finalize()
    e0 = _energy(rod)
    samples = _in_flight_energies(sim, lambda: _energy(rod), ref, dt)
    scale = float(np.sum(rod.mass)) * G * drop  # the drop's energy
    print("rod energy: samples", len(samples), "max rise / mgh", (max(samples) - e0) / scale)
    assert len(samples) > 100  # many bounces (the ends bounce at their own rate), in flight
    # 1e-3 of m g h: PyElastica's rod forces are the gradient of its energy only up to second
    # order in the strains (physics/variational_rod.py) and Verlet's error is O(dt^2); the
    # vibrations the bounces excite give 9e-5 (E = 1e7 Pa; 3e-3 at 1e6 Pa, larger strains)
    assert max(samples) - e0 < 1e-3 * scale


def test_frictionless_bounces_of_a_rigid_cylinder_do_not_add_energy() -> None:
    dt, drop, tilt = 2e-5, 0.002, 0.1  # s, m, rad: lands on one point of its rim, spins
    axis = np.array([math.sin(tilt), 0.0, math.cos(tilt)])
    radius = 0.03
    sim = _Sim()
    body = Cylinder(np.array([0.0, 0.0, drop + radius * math.sin(tilt)]), axis,
                    np.array([math.cos(tilt), 0.0, -math.sin(tilt)]), 0.02, radius, 1000.0)
    sim.append(body)
    sim.add_forcing_to(body).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    ref = add_contact(sim, body, PlaneObstacle(contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5)))
    sim.finalize()
    mass = float(np.sum(body.mass))

    def energy() -> float:
        return float(np.sum(body.compute_translational_energy() + body.compute_rotational_energy())
                     + mass * G * body.position_collection[2, 0])

    e0 = energy()
    samples = _in_flight_energies(sim, energy, ref, dt)
    print("cylinder energy: samples", len(samples), "max rise / mgh",
          (max(samples) - e0) / (mass * G * drop), "spin", np.abs(body.omega_collection).max())
    # it bounced on its rim: started without spin, spins after (13 rad/s after the first bounce)
    assert len(samples) > 100 and np.abs(body.omega_collection).max() > 1e-2
    # a rigid body has no internal forces: between contacts only Verlet's round-off is left
    # (1e-10 of m g h measured); 1e-6 would still catch a contact that pumps energy
    assert max(samples) - e0 < 1e-6 * mass * G * drop


# --------------------------------------------------------------------------------------------
# bad input: one line naming the field and the allowed range, before any step
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda: ContactParams(friction_coefficient=-0.1), "ContactParams.friction_coefficient"),
        (lambda: ContactParams(smoothing_length=0.0), "ContactParams.smoothing_length"),
        (lambda: ContactParams(slip_velocity=float("nan")), "ContactParams.slip_velocity"),
        (lambda: ContactParams(stiffness=-1.0), "ContactParams.stiffness"),
        (lambda: SphereObstacle(radius=0.0), "SphereObstacle.radius"),
        (lambda: CapsuleObstacle(radius=-1e-3), "CapsuleObstacle.radius"),
        (lambda: CapsuleObstacle(start=(0, 0, 0), end=(0, 0, 0)), "CapsuleObstacle.end"),
        (lambda: PlaneObstacle(normal=(0.0, 0.0, 0.0)), "PlaneObstacle.normal"),
        (lambda: PlaneObstacle(contact={"mu": 0.3}), "PlaneObstacle.contact: unknown key(s) 'mu'"),
        (lambda: EnvironmentParams(obstacles=[{"kind": "sphere", "centre": [0, 0, 0]}]),
         "EnvironmentParams.obstacles[0]: unknown key(s) 'centre'"),
        (lambda: EnvironmentParams(obstacles=[{"kind": "cone"}]), "obstacles[0].kind"),
        (lambda: RodContact(obstacle="floor"), "RodContact.obstacle"),
        (lambda: BodyContact(obstacle=PlaneObstacle(), n_rim=2), "BodyContact.n_rim"),
    ],
)
def test_bad_values_raise_one_line_naming_the_field(make: Any, named: str) -> None:
    with pytest.raises(ParameterError) as err:
        make()
    message = str(err.value)
    assert named in message and ("must" in message or "allowed" in message)
    assert "\n" not in message


def test_an_overlapping_placement_is_refused_before_any_step() -> None:
    sim = _Sim()
    rod = _rod([0.0, 0.0, -0.002], [1, 0, 0], [0, 0, 1])  # centre line 2 mm below the floor
    sim.append(rod)
    before = rod.position_collection.copy()
    with pytest.raises(ParameterError) as err:
        add_contact(sim, rod, PlaneObstacle())
    assert "inside the PlaneObstacle" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ParameterError):
        check_placement(rod, SphereObstacle(center=(0.1, 0.0, 0.0), radius=0.01))
    # the forcing itself refuses it on its first evaluation, before adding any force
    contact = RodContact(obstacle=PlaneObstacle())
    with pytest.raises(ParameterError):
        contact.apply_forces(rod)
    assert np.array_equal(rod.position_collection, before)
    assert not rod.external_forces.any()
    # a sphere touches with its point closest to the obstacle: its centre on the floor, refused
    from elastica import Sphere
    with pytest.raises(ParameterError, match="^BodyContact: point 0 starts 0.05 m inside"):
        check_placement(Sphere(np.array([0.0, 0.0, 0.0]), 0.05, 1000.0), PlaneObstacle())
    # a point resting in the smoothing zone (a few smoothing lengths deep) is accepted
    check_placement(_rod([0.0, 0.0, R - 5e-4], [1, 0, 0], [0, 0, 1]), PlaneObstacle())


def test_environment_reads_obstacles_from_mappings() -> None:
    env = EnvironmentParams(obstacles=[
        {"kind": "plane", "normal": [0, 0, 2]},
        {"kind": "capsule", "start": [0, 0, 0], "end": [0, 0, 0.1], "radius": 0.01,
         "contact": {"friction_coefficient": 0.4}},
    ])
    plane, capsule = env.obstacles
    assert plane.normal == (0.0, 0.0, 1.0)  # normalised
    assert isinstance(capsule, CapsuleObstacle) and capsule.contact.friction_coefficient == 0.4
    # a plain nested mapping (YAML-ready) and back
    data = env.to_dict()
    assert data["obstacles"][1]["kind"] == "capsule"
    assert data["obstacles"][1]["contact"]["friction_coefficient"] == 0.4
    assert EnvironmentParams.from_dict(data) == env
