"""The contact law (physics/contact.py) on the compiled executors: the fused explicit step,
the implicit (generalized-alpha) step and the static solver, against closed forms, and the
fused step against PyElastica's own loop.

References come from mechanics, not from the code under test: the weight a floor carries,
the sliding acceleration ``g (sin theta - mu cos theta)`` of a rod on a rough incline; the
fused path is compared with the operator path (``RodContact`` / ``BodyContact`` on
PyElastica's Position Verlet), which ``tests/test_contact_laws.py`` checks against mechanics.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from elastica import CosseratRod, Cylinder, PositionVerlet
from elastica.dissipation import AnalyticalLinearDamper
from elastica.external_forces import GravityForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.fused import FusedEngine
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.params import ContactParams, PlaneObstacle
from hsa_elastica.physics.contact import add_contact

G = 9.81  # m/s^2
L, R, RHO = 0.2, 0.005, 1000.0  # rod length, radius [m], density [kg/m^3]


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _rod(start: Any, direction: Any, normal: Any) -> CosseratRod:
    return CosseratRod.straight_rod(
        20, np.asarray(start, float), np.asarray(direction, float), np.asarray(normal, float),
        L, R, RHO, youngs_modulus=1e6, shear_modulus=1e6 / 3.0,
    )


def _resting(dt: float, damping: bool = True) -> tuple[_Sim, CosseratRod, Any]:
    """A rod lying on a floor (centre line at gap 0), gravity, optional linear damping."""
    sim = _Sim()
    rod = _rod([0.0, 0.0, R], [1, 0, 0], [0, 0, 1])
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    if damping:
        sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=20.0, time_step=dt)
    floor = PlaneObstacle(contact=ContactParams(stiffness=1e3, smoothing_length=1e-5,
                                                damping_ratio=0.5))
    ref = add_contact(sim, rod, floor)
    sim.finalize()
    return sim, rod, ref


def _incline(theta: float, mu: float, body: bool = False) -> tuple[_Sim, CosseratRod, Any]:
    """A rod along the fall line of a plane tilted by ``theta`` (downhill: the second item of
    the returned triple's last entry); with ``body``, a tilted cylinder standing on the
    same plane too (its rim points touching or a little above it)."""
    n = np.array([math.sin(theta), 0.0, math.cos(theta)])
    downhill = np.array([math.cos(theta), 0.0, -math.sin(theta)])
    sim = _Sim()
    rod = _rod(R * n, downhill, n)
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    plane = PlaneObstacle(normal=tuple(n), contact=ContactParams(
        stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5, friction_coefficient=mu,
        slip_velocity=1e-3))
    refs = [add_contact(sim, rod, plane)]
    if body:
        axis = np.array([0.3, 0.0, 1.0]) / math.sqrt(1.09)
        # (radius 2 cm, length 4 cm) its base disc's centre 6.1 mm above the plane: the
        # lowest rim point 1.5 mm above it (lands after ~0.02 s)
        cyl = Cylinder(-0.1 * downhill + 0.0061 * n, axis, np.array([0.0, 1.0, 0.0]), 0.04,
                       0.02, 500.0)
        sim.append(cyl)
        sim.add_forcing_to(cyl).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
        refs.append(add_contact(sim, cyl, plane, n_rim=8))
    sim.finalize()
    return sim, rod, (refs, downhill)


def _downhill_velocity(rod: CosseratRod, downhill: np.ndarray) -> float:
    return float(np.sum(rod.mass * (downhill @ rod.velocity_collection)) / np.sum(rod.mass))


# --------------------------------------------------------------------------------------------
# a rod resting on a floor carries its weight on every executor
# --------------------------------------------------------------------------------------------
def test_fused_rod_resting_on_a_plane_carries_its_weight() -> None:
    dt = 5e-5
    sim, rod, ref = _resting(dt)
    FusedEngine(compile_simulator(sim), dt).run_steps(6000, 0.0)  # 0.3 s
    weight = float(np.sum(rod.mass)) * G
    total = ref.instance.total_force  # the operator's sensor reads the compiled row
    print("fused rest: normal / weight", total[2] / weight)
    # 0.5 %: the damped settling (20 /s, ~0.05 s) leaves < 1e-6 of the weight in inertia
    assert total[2] == pytest.approx(weight, rel=5e-3)
    assert abs(total[0]) + abs(total[1]) < 1e-6 * weight
    assert ref.instance.in_contact.all()


def test_implicit_rod_resting_on_a_plane_carries_its_weight() -> None:
    dt = 1e-3  # 20 x the explicit limit of the contact spring: the implicit step's regime
    sim, rod, ref = _resting(dt)
    ImplicitEngine(compile_simulator(sim), dt, dt_table=dt).run_steps(300, 0.0)
    weight = float(np.sum(rod.mass)) * G
    total = ref.instance.total_force
    print("implicit rest: normal / weight", total[2] / weight)
    assert total[2] == pytest.approx(weight, rel=5e-3)


def test_static_rod_resting_on_a_plane_carries_its_weight() -> None:
    sim, rod, ref = _resting(5e-5, damping=False)
    outcome = StaticSolver(compile_simulator(sim)).solve(np.zeros(0), check_stability=False)
    assert outcome.converged
    weight = float(np.sum(rod.mass)) * G
    total = ref.instance.total_force
    print("static rest: normal / weight", total[2] / weight, "gap", ref.instance.gap.min())
    # equilibrium: the floor carries the weight to the solver's force tolerance
    assert total[2] == pytest.approx(weight, rel=5e-3)
    # resting within a few smoothing lengths plus the penalty's f / k (7.7 um per node)
    assert np.abs(ref.instance.gap).max() < 5 * 1e-5 + float(rod.mass.max()) * G / 1e3


# --------------------------------------------------------------------------------------------
# sliding above the friction angle at the Coulomb acceleration
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ["fused", "implicit"])
def test_rod_above_the_friction_angle_slides_at_the_coulomb_acceleration(engine: str) -> None:
    mu, theta = 0.3, math.radians(30.0)  # tan(theta) = 0.577 > mu
    sim, rod, (refs, downhill) = _incline(theta, mu)
    model = compile_simulator(sim)
    if engine == "fused":
        dt = 5e-5
        stepper: Any = FusedEngine(model, dt)
    else:
        # 5e-4 s: 11 steps per period of a node on the contact spring (2 pi sqrt(m / k) =
        # 5.6 ms); at 1e-3 s (5 steps) the normal bounce is integrated coarsely enough to lower
        # the sliding acceleration by 4.8 % (measured; 5e-4: 0.04 %, 2e-4: 1e-6)
        dt = 5e-4
        stepper = ImplicitEngine(model, dt, dt_table=dt)
    t = stepper.run_steps(int(round(0.1 / dt)), 0.0)
    v1 = _downhill_velocity(rod, downhill)
    stepper.run_steps(int(round(0.3 / dt)), t)
    v2 = _downhill_velocity(rod, downhill)
    expected = G * (math.sin(theta) - mu * math.cos(theta))
    # v >= 0.2 m/s >> v_s: the smoothing lowers friction by (v_s / v)^2 / 2 < 1e-5
    print(engine, "slide: a", (v2 - v1) / 0.3, "expected", expected)
    assert (v2 - v1) / 0.3 == pytest.approx(expected, rel=0.02)
    assert refs[0].instance.sliding.all()


# --------------------------------------------------------------------------------------------
# the fused step against PyElastica's loop with the operators
# --------------------------------------------------------------------------------------------
def test_fused_contact_matches_the_operator_path() -> None:
    """A rod sliding down a rough incline and a tilted cylinder dropping onto it on its rim:
    600 steps on PyElastica's Position Verlet with ``RodContact`` / ``BodyContact`` and on the
    fused step.  Measured bit-identical; 1e-10 (m, m/s, N) would leave room for round-off
    only (the contact radii are the rod's at compilation, the operator's at its first call)."""
    dt, n = 5e-5, 600
    ref_sim, ref_rod, (ref_refs, _) = _incline(math.radians(30.0), 0.3, body=True)
    stepper, t = PositionVerlet(), np.float64(0.0)
    for _ in range(n):
        t = stepper.step(ref_sim, t, np.float64(dt))
    sim, rod, (refs, _) = _incline(math.radians(30.0), 0.3, body=True)
    FusedEngine(compile_simulator(sim), dt).run_steps(n, 0.0)
    cyl, ref_cyl = sim[1], ref_sim[1]
    assert refs[1].instance.in_contact.any()  # the cylinder landed within the run
    pairs = [
        (rod.position_collection, ref_rod.position_collection),
        (rod.velocity_collection, ref_rod.velocity_collection),
        (cyl.position_collection, ref_cyl.position_collection),
        (cyl.omega_collection, ref_cyl.omega_collection),
        (refs[0].instance.force, ref_refs[0].instance.force),
        (refs[1].instance.force, ref_refs[1].instance.force),
        (refs[1].instance.gap, ref_refs[1].instance.gap),
    ]
    worst = max(float(np.abs(a - b).max()) for a, b in pairs)
    print("fused vs operator: largest difference", worst)
    assert worst < 1e-10
