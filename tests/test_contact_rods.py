"""Contact between rods (physics/rod_contact.py, physics/rod_contact_laws.py) against numbers
from geometry and mechanics: the closest points of two segments against a sampled minimum;
a rod resting across two fixed rods carries its weight (fused, implicit, static); friction below and
above ``mu N`` (creep at the smoothed law's speed / slide at ``a - mu g``); a frictionless,
undamped collision of two free rods conserves momentum to round-off and does not gain energy;
PyElastica's own loop with the ``RodRodContact`` forcing agrees with the fused step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from elastica import CosseratRod, PositionVerlet
from elastica.boundary_conditions import FixedConstraint
from elastica.dissipation import AnalyticalLinearDamper
from elastica.external_forces import GravityForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.fused import FusedEngine
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.params import ContactParams, ParameterError
from hsa_elastica.params.environment import EnvironmentParams
from hsa_elastica.physics.contact import step_limits
from hsa_elastica.physics.contact_laws import ContactLaw, ContactOutput, ContactPoints
from hsa_elastica.physics.energy import rod_elastic_energy, rod_kinetic_energy
from hsa_elastica.physics.rod_contact import RodRodContact, add_rod_contacts, element_arrays
from hsa_elastica.physics.rod_contact_laws import closest_points, rod_rod_forces

G = 9.81  # m/s^2
L, R, RHO = 0.2, 0.005, 1000.0  # rod length, radius [m], density [kg/m^3]
DT = 5e-5  # s, below the rods' own explicit limit (~3e-4 s for 1 cm elements at E = 1 MPa)
DAMPING = 50.0  # 1/s, the linear damper on the resting rod
E_HIT = 1e7  # Pa, the colliding rods (wave speed 100 m/s: 0.5 element per step)


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _rod(start: Any, direction: Any, normal: Any, n: int = 20, e: float = 1e6) -> CosseratRod:
    """A straight rod of ``n`` elements of 1 cm, Young's modulus ``e`` [Pa]."""
    return CosseratRod.straight_rod(
        n, np.asarray(start, float), np.asarray(direction, float), np.asarray(normal, float),
        n * L / 20, R, RHO, youngs_modulus=e, shear_modulus=e / 3.0,
    )


# --------------------------------------------------------------------------------------------
# geometry: the closest points of two segments
# --------------------------------------------------------------------------------------------
def _sampled_distance(a: np.ndarray, ea: np.ndarray, b: np.ndarray, eb: np.ndarray) -> float:
    s = np.linspace(0.0, 1.0, 801)
    pa = a[:, None] + ea[:, None] * s
    pb = b[:, None] + eb[:, None] * s
    return float(np.min(np.linalg.norm(pa[:, :, None] - pb[:, None, :], axis=0)))


@pytest.mark.parametrize("seed", range(6))
def test_closest_points_match_a_sampled_minimum(seed: int) -> None:
    """Random segments (skew, one made parallel, one collinear): the distance between the
    returned points is at most the minimum over an 801 x 801 grid of points, and below it by
    at most the grid's spacing ((|ea| + |eb|) / 1600: the exact minimum lies within half a
    spacing of a grid point on each segment)."""
    rng = np.random.default_rng(seed)
    a, ea, b, eb = (rng.normal(size=3) for _ in range(4))
    if seed == 4:
        eb = -0.7 * ea
    if seed == 5:
        eb, b = 0.5 * ea, a + 0.6 * ea
    s, t = closest_points(tuple(a), tuple(ea), tuple(b), tuple(eb))
    assert 0.0 <= s <= 1.0 and 0.0 <= t <= 1.0
    exact = float(np.linalg.norm(a + s * ea - b - t * eb))
    sampled = _sampled_distance(a, ea, b, eb)
    spacing = (np.linalg.norm(ea) + np.linalg.norm(eb)) / 1600.0
    assert exact <= sampled + 1e-14
    assert sampled - exact <= spacing


def test_parallel_and_crossing_segments_touch_at_their_middles() -> None:
    """Two aligned, equal elements one above the other (parallel: the points are not unique)
    touch at their middles, as two crossing ones do; half an element along, the middle of
    the overlap."""
    up, ex, ey = (0.0, 0.0, 0.01), (0.01, 0.0, 0.0), (0.0, 0.01, 0.0)
    assert closest_points(up, ex, (0.0, 0.0, 0.0), ex) == pytest.approx((0.5, 0.5))
    assert closest_points((-0.005, 0.0, 0.01), ex, (0.0, -0.005, 0.0), ey) == pytest.approx((0.5, 0.5))
    assert closest_points(up, ex, (0.005, 0.0, 0.0), ex) == pytest.approx((0.75, 0.25))


def _kernel_pair(rod_a: CosseratRod, rod_b: CosseratRod, law: ContactLaw) -> tuple[Any, ...]:
    ra, ma = element_arrays(rod_a)
    rb, mb = element_arrays(rod_b)
    a = ContactPoints(rod_a.position_collection, rod_a.velocity_collection, ra, ma)
    b = ContactPoints(rod_b.position_collection, rod_b.velocity_collection, rb, mb)
    n = rod_a.position_collection.shape[1]
    out = ContactOutput(np.zeros((3, n)), np.zeros(n - 1), np.zeros(n - 1))
    fb = np.zeros_like(rod_b.position_collection)
    pairs = rod_rod_forces(a, b, law, fb, out)
    return out, fb, pairs


def test_kernel_forces_are_equal_and_opposite_and_far_pairs_are_skipped() -> None:
    """Two crossing rods 0.01 mm (one smoothing length) into each other: the forces on A's nodes sum to minus those
    on B's (to round-off), push A away from B along the common normal (+z), and only the
    pairs near the crossing pass the broad phase; 1 m apart, none does."""
    law = ContactLaw(1e3, 1e-5, 0.3, 0.5, 1e-3)
    b = _rod([-0.1, 0.0, 0.0], [1, 0, 0], [0, 0, 1])
    a = _rod([0.0033, -0.097, 2 * R - 1e-5], [0, 1, 0], [0, 0, 1])
    a.velocity_collection[0] = 2e-3  # sliding along B: friction along -x
    out, fb, pairs = _kernel_pair(a, b, law)
    total_a, total_b = out.force.sum(axis=1), fb.sum(axis=1)
    assert np.abs(total_a + total_b).max() <= 1e-15 * np.abs(total_a).max()
    # k l softplus(-g / l) at g = -l (A's neighbouring element is 34 l away: 1e-15 of it)
    f_el = 1e3 * 1e-5 * math.log1p(math.exp(1.0))
    assert total_a[2] == pytest.approx(f_el, rel=1e-9)  # one pair, normal +z, no damping (v_n = 0)
    assert total_a[0] < 0.0 and abs(total_a[1]) < 1e-9 * f_el
    print("pairs past the broad phase", pairs)
    assert 0 < pairs <= 9  # of 400
    assert out.gap.min() == pytest.approx(-1e-5, abs=1e-12)
    a.position_collection[2] += 1.0
    assert _kernel_pair(a, b, law)[2] == 0


# --------------------------------------------------------------------------------------------
# a rod resting across two fixed rods
# --------------------------------------------------------------------------------------------
def _across(damping: float, dt: float, mu: float = 0.0,
            slip_velocity: float = 1e-3) -> tuple[_Sim, Any, list[Any]]:
    """Rod A along y resting (gap 0) across rods B1, B2 along x at y = -5 cm, +5 cm (held at
    both ends), 21 elements each, all symmetric about x = 0 and y = 0 and crossing inside
    elements; gravity on A only (the compiled model's gravity row 0); A damped by ``damping``
    [1/s]."""
    sim = _Sim()
    a = _rod([0.0, -0.105, 2 * R], [0, 1, 0], [0, 0, 1], n=21)
    b1 = _rod([-0.105, -0.05, 0.0], [1, 0, 0], [0, 0, 1], n=21)
    b2 = _rod([-0.105, 0.05, 0.0], [1, 0, 0], [0, 0, 1], n=21)
    for rod in (a, b1, b2):
        sim.append(rod)
    for rod in (b1, b2):
        sim.constrain(rod).using(FixedConstraint, constrained_position_idx=(0, -1),
                                 constrained_director_idx=(0, -1))
        sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=dt)
    sim.add_forcing_to(a).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.dampen(a).using(AnalyticalLinearDamper, uniform_damping_constant=damping, time_step=dt)
    law = ContactParams(stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5,
                        friction_coefficient=mu, slip_velocity=slip_velocity)
    refs = add_rod_contacts(sim, [a, b1, b2], law)
    sim.finalize()
    return sim, a, refs


def _load_on_a(refs: list[Any]) -> np.ndarray:
    """The contact force on A: its two contacts (A-B1, A-B2; B1-B2 never touch)."""
    return np.asarray(refs[0].instance.total_force + refs[1].instance.total_force)


@pytest.mark.parametrize("executor", ["fused", "implicit", "static"])
def test_rod_resting_across_two_rods_carries_its_weight(executor: str) -> None:
    """The normal force equals the weight it carries, half at each crossing (symmetry).  0.5 %:
    A's slowest bending mode (~7 Hz) rings after landing, its amplitude decaying as
    exp(-c t / 2) under the damper c = 50 /s: e^-7.5 = 6e-4 of the landing's ~40 % swing of the
    normal force is left after 0.3 s (the static solver: to its residual's tolerance)."""
    dt = DT if executor == "fused" else 1e-3
    sim, a, refs = _across(DAMPING, dt)
    model = compile_simulator(sim)
    if executor == "fused":
        FusedEngine(model, dt).run_steps(6000, 0.0)
    elif executor == "implicit":  # 1e-3 s: 20 x the fused step, above the contact's limit
        ImplicitEngine(model, dt, dt_table=dt).run_steps(300, 0.0)
    else:  # frictionless and symmetric: the equilibrium from the pose at rest on B1, B2
        assert StaticSolver(model).solve(np.zeros(0), check_stability=False).converged
    weight = float(np.sum(a.mass)) * G
    load = _load_on_a(refs)
    print(executor, "normal / weight", load[2] / weight)
    assert load[2] == pytest.approx(weight, rel=5e-3)
    assert abs(load[0]) + abs(load[1]) < 1e-6 * weight  # symmetric: no sideways push
    for ref in refs[:2]:
        assert ref.instance.total_force[2] == pytest.approx(0.5 * weight, rel=5e-3)
    assert not refs[2].instance.in_contact.any()  # B1 and B2 are 10 cm apart


def test_rod_lying_along_another_carries_its_weight() -> None:
    """The degenerate case of the closest points: A lying along B (held at its ends), their
    elements aligned (parallel segments: every pair touches at the middle of its overlap, the
    neighbouring pairs at the shared nodes).  The normal force is A's weight (0.5 %, the
    damped settling as across two rods), with no sideways push; A sinks into B by less than a
    fifth of what one crossing carrying half of the weight would (a line contact, not a
    point)."""
    sim = _Sim()
    a = _rod([-0.105, 0.0, 2 * R], [1, 0, 0], [0, 0, 1], n=21)
    b = _rod([-0.105, 0.0, 0.0], [1, 0, 0], [0, 0, 1], n=21)
    sim.append(a)
    sim.append(b)
    sim.constrain(b).using(FixedConstraint, constrained_position_idx=(0, -1),
                           constrained_director_idx=(0, -1))
    sim.dampen(b).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=DT)
    sim.add_forcing_to(a).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.dampen(a).using(AnalyticalLinearDamper, uniform_damping_constant=DAMPING, time_step=DT)
    ref = add_rod_contacts(sim, [a, b], ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                                      damping_ratio=0.5))[0]
    sim.finalize()
    FusedEngine(compile_simulator(sim), DT).run_steps(6000, 0.0)
    weight = float(np.sum(a.mass)) * G
    load = ref.instance.total_force
    print("parallel: normal / weight", load[2] / weight, "smallest gap", ref.instance.gap.min())
    assert load[2] == pytest.approx(weight, rel=5e-3)
    assert abs(load[0]) + abs(load[1]) < 1e-6 * weight
    # every element of A touches but the end ones (over B's clamps, where B's sag bends most)
    assert ref.instance.in_contact[1:-1].all()
    # a crossing carrying half the weight sinks l ln(exp(W / (2 k l)) - 1) = 8.1 l; spread
    # over the 21 elements (and their neighbours at the shared nodes) A sinks 0.4 l
    sink = 1e-5 * math.log(math.expm1(0.5 * weight / (1e3 * 1e-5)))
    print("parallel sink / crossing sink", -ref.instance.gap.min() / sink)
    assert -ref.instance.gap.min() < 0.2 * sink


def _mean_velocity_y(a: CosseratRod) -> float:
    return float(np.sum(a.mass * a.velocity_collection[1]) / np.sum(a.mass))


def _held_speed(r: float, mu: float, v_s: float, c: float) -> float:
    """Speed ``u`` at which the smoothed friction and the damper ``c`` [1/s] take a load
    ``r mu m g`` along the rod: ``r mu g = mu g u / sqrt(u^2 + v_s^2) + c u`` (bisection)."""
    lo, hi = 0.0, r * mu * G / c
    for _ in range(200):
        u = 0.5 * (lo + hi)
        if mu * G * u / math.hypot(u, v_s) + c * u > r * mu * G:
            hi = u
        else:
            lo = u
    return 0.5 * (lo + hi)


V_S = 1e-2  # m/s: the friction tests' slip velocity (the sticking step limit 3.8e-4 s > DT)


def _settled_then_pulled(r: float, mu: float, steps: int) -> tuple[CosseratRod, list[Any]]:
    """A settled on B1, B2 (0.3 s: the landing's ringing down to e^-7.5), then pulled along
    its axis by ``r mu m g`` (gravity's y component, written into the compiled gravity row)
    for ``steps`` steps."""
    sim, a, refs = _across(DAMPING, DT, mu=mu, slip_velocity=V_S)
    model = compile_simulator(sim)
    engine = FusedEngine(model, DT)
    t = engine.run_steps(6000, 0.0)
    normal, friction = step_limits(refs[0].instance, a)
    assert min(normal, friction) > DT  # explicit steps inside the contact's limits
    model.tables.rod_gravity.acceleration[0, 1] = r * mu * G
    engine.run_steps(steps, t)
    return a, refs


def test_friction_holds_a_rod_below_mu_n() -> None:
    """A tangential load half of ``mu N`` along A's axis: A stays stuck (every touching
    element below the slip velocity) and creeps at the speed at which the smoothed law and the
    damper hold it, ``r mu g = mu g u / sqrt(u^2 + v_s^2) + c u`` (0.50 v_s).  10 %: the pull
    drags B1, B2 sideways (soft rods held at their ends, a slow mode damped at 20 /s: the
    speed at the crossings is not A's alone; measured 6 % above after 0.8 s, steady)."""
    mu, r = 0.5, 0.5
    a, refs = _settled_then_pulled(r, mu, 16000)
    creep = _held_speed(r, mu, V_S, DAMPING)
    v = _mean_velocity_y(a)
    print("stick: mean speed / creep speed", v / creep, "creep / v_s", creep / V_S)
    assert v == pytest.approx(creep, rel=1e-1)
    for ref in refs[:2]:
        touching = ref.instance.in_contact
        assert touching.any() and ref.instance.sticking[touching].all()


def test_friction_lets_a_rod_slide_above_mu_n() -> None:
    """A tangential load of 1.5 ``mu N``: A slides against the friction and reaches the speed
    at which the damper takes the rest, ``1.5 mu g = mu g u / sqrt(u^2 + v_s^2) + c u``
    (4.7 v_s, sliding: the friction is 0.98 mu N there; ``(1.5 - 1) mu g / c`` = 4.9 v_s with
    the Coulomb law).  2 %: after 0.1 s the approach to it is down to below e^-5; the damper's
    discrete factor ``exp(-c dt)`` lowers it by ``c dt / 2`` = 0.1 %."""
    mu = 0.5
    a, refs = _settled_then_pulled(1.5, mu, 2000)
    terminal = _held_speed(1.5, mu, V_S, DAMPING)
    v = _mean_velocity_y(a)
    print("slide: mean speed / terminal speed", v / terminal, "terminal / v_s", terminal / V_S)
    assert v == pytest.approx(terminal, rel=2e-2)
    assert refs[0].instance.sliding[refs[0].instance.in_contact].all()


# --------------------------------------------------------------------------------------------
# a frictionless collision of two free rods
# --------------------------------------------------------------------------------------------
def _collision() -> tuple[_Sim, CosseratRod, CosseratRod, Any]:
    """Free rod A along y falling at 0.1 m/s onto free rod B along x (1 mm gap), no gravity,
    no damping, frictionless."""
    sim = _Sim()
    a = _rod([0.0033, -0.097, 2 * R + 1e-3], [0, 1, 0], [0, 0, 1], e=E_HIT)
    b = _rod([-0.1, 0.0, 0.0], [1, 0, 0], [0, 0, 1], e=E_HIT)
    a.velocity_collection[2] = -0.1
    sim.append(a)
    sim.append(b)
    ref = add_rod_contacts(sim, [a, b], ContactParams(stiffness=1e3, smoothing_length=1e-5))[0]
    sim.finalize()
    return sim, a, b, ref


def _energy(rod: CosseratRod) -> float:
    return float(rod_kinetic_energy(rod.position_collection, rod.velocity_collection,
                                    rod.omega_collection, rod.mass,
                                    rod.mass_second_moment_of_inertia, rod.rest_lengths)
                 + rod_elastic_energy(rod.position_collection, rod.director_collection,
                                      rod.rest_lengths, rod.rest_voronoi_lengths,
                                      rod.shear_matrix, rod.bend_matrix, rod.rest_sigma,
                                      rod.rest_kappa))


def test_frictionless_collision_conserves_momentum_and_does_not_gain_energy() -> None:
    """A hits B (the rods bend: the contact lasts ~25 ms) and they part again: the total
    momentum stays the initial one to round-off (1e-12 of it: the forces cancel pair by pair),
    B takes most of it (equal masses), and the total energy (kinetic + elastic) does not grow
    (1e-3: Position Verlet's energy error, a few 1e-2 while the rods press on each other and
    back to within 1e-5 of its start after) nor vanish (nothing dissipates: above 0.9)."""
    sim, a, b, ref = _collision()
    p0 = sum(np.sum(r.mass * r.velocity_collection, axis=1) for r in (a, b))
    e0 = _energy(a) + _energy(b)
    FusedEngine(compile_simulator(sim), DT).run_steps(1000, 0.0)  # 50 ms
    p1 = sum(np.sum(r.mass * r.velocity_collection, axis=1) for r in (a, b))
    e1 = _energy(a) + _energy(b)
    print("momentum error", np.abs(p1 - p0).max() / np.abs(p0).max(), "energy ratio", e1 / e0)
    assert np.abs(p1 - p0).max() <= 1e-12 * np.abs(p0).max()
    assert np.mean(b.velocity_collection[2]) < -0.05 < np.mean(a.velocity_collection[2])
    assert not ref.instance.in_contact.any()  # separated again
    assert 0.9 * e0 <= e1 <= (1.0 + 1e-3) * e0


def test_fused_rod_contact_matches_the_operator_path() -> None:
    """The collision, 400 steps through the contact, on PyElastica's Position Verlet with the
    ``RodRodContact`` forcing and on the fused step: the same numbers up to round-off (1e-10
    m, m/s, N: the two paths call the same kernel in the same order; measured identical)."""
    n = 400
    ref_sim, ref_a, ref_b, ref_op = _collision()
    stepper, t = PositionVerlet(), np.float64(0.0)
    for _ in range(n):
        t = stepper.step(ref_sim, t, np.float64(DT))
    sim, a, b, op = _collision()
    FusedEngine(compile_simulator(sim), DT).run_steps(n, 0.0)
    assert op.instance.in_contact.any()  # in the middle of the contact
    pairs = [(a.position_collection, ref_a.position_collection),
             (b.velocity_collection, ref_b.velocity_collection),
             (op.instance.force, ref_op.instance.force), (op.instance.gap, ref_op.instance.gap)]
    worst = max(float(np.abs(x - y).max()) for x, y in pairs)
    print("fused vs operator: largest difference", worst)
    assert worst < 1e-10


def test_step_limit_of_a_rod_contact() -> None:
    """In contact, the normal limit is ``2 / omega`` with ``omega^2 = k s / m`` of the
    pair's reduced mass (no damping): sigmoid(0) = 1/2 at gap 0."""
    sim, a, b, ref = _collision()
    a.position_collection[2] -= 1e-3  # gap 0
    normal, _ = step_limits(ref.instance, a)
    m_a, m_b = element_arrays(a)[1].max(), element_arrays(b)[1].min()
    m = m_a * m_b / (m_a + m_b)
    assert normal == pytest.approx(2.0 / math.sqrt(0.5 * 1e3 / m), rel=1e-6)


# --------------------------------------------------------------------------------------------
# parameters and placement
# --------------------------------------------------------------------------------------------
def test_rod_contact_parameter_is_checked_and_round_trips() -> None:
    with pytest.raises(ParameterError, match=r"^EnvironmentParams.rod_contact = .* must be None"):
        EnvironmentParams(rod_contact="yes")
    with pytest.raises(ParameterError, match=r"^EnvironmentParams.rod_contact: ContactParams.stiffness = -1.0 is invalid"):
        EnvironmentParams(rod_contact={"stiffness": -1.0})
    env = EnvironmentParams(rod_contact={"stiffness": 2e3, "friction_coefficient": 0.3})
    assert env.rod_contact == ContactParams(stiffness=2e3, friction_coefficient=0.3)
    assert EnvironmentParams.from_dict(env.to_dict()) == env
    assert "rod_contact" not in EnvironmentParams().to_dict()


def test_overlapping_rods_are_refused() -> None:
    a = _rod([0.0033, -0.097, 0.0], [0, 1, 0], [0, 0, 1])
    b = _rod([-0.1, 0.0, 0.0], [1, 0, 0], [0, 0, 1])
    with pytest.raises(ParameterError, match=r"^RodRodContact: element 9 of the rod starts"):
        RodRodContact(b)._setup(a)
    with pytest.raises(ParameterError, match=r"^RodRodContact.other = "):
        RodRodContact(object())


def test_the_paper_robot_s_rods_never_touch_in_a_twist() -> None:
    """The paper robot twisting (where its rods come closest, 8 mm apart): with
    ``environment.rod_contact`` on, six rows (one per pair of its four rods), no element pair
    within the law's reach, and the same motion as without (1e-12 m: round-off only)."""
    from hsa_elastica.params import paper_robot_params
    from hsa_elastica.robots.builders import build_robot
    from hsa_elastica.robots.primitives import primitive_angles

    base = paper_robot_params()
    on = base.replace(environment=base.environment.replace(rod_contact=ContactParams()))
    states = []
    for params in (base, on):
        robot = build_robot(params, primitive_angles("twist_cw", 1.0, params), ramp=0.05,
                            record=False)
        model = compile_simulator(robot.simulator)
        FusedEngine(model, robot.dt).run_steps(2000, 0.0)
        states.append(model.rod_arrays.position.copy())
    rows = [ref.instance for ref in robot.contacts if isinstance(ref.instance, RodRodContact)]
    assert len(rows) == 6 and model.tables.contacts.ids.shape[0] == 6
    assert min(float(op.gap.min()) for op in rows) > 40 * ContactParams().smoothing_length
    assert np.abs(states[0] - states[1]).max() < 1e-12
