"""Box obstacles (``BoxObstacle``; physics/contact_laws.py): the signed distance against an
independent closed form, the parameters' checks, and a rod resting across a box on every
executor against its weight.

References do not come from the code under test: the signed distance of a rounded box in the
closed form ``|max(q, 0)| + min(max_i q_i, 0) - r`` with ``q = |p| - h`` (a different
algorithm from the kernel's clamp and nearest face), its central differences for the normal,
the rod's weight, the operator path on PyElastica's own Position Verlet.  The tangent on a
box's face, edge and corner is checked against central differences with the other
obstacles' in ``tests/test_contact_laws.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from elastica import CosseratRod, PositionVerlet
from elastica.dissipation import AnalyticalLinearDamper
from elastica.external_forces import GravityForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.fused import FusedEngine
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.params import BoxObstacle, ContactParams, EnvironmentParams, ParameterError
from hsa_elastica.physics.contact import add_contact
from hsa_elastica.physics.contact_laws import geometry_record, surface_values
from test_contact_laws import _damped_cylinder  # tests/ is on sys.path

G = 9.81  # m/s^2
L, R, RHO = 0.2, 0.005, 1000.0  # rod length, radius [m], density [kg/m^3]

def _rotation(box: BoxObstacle) -> np.ndarray:
    x, z = np.array(box.x_axis), np.array(box.z_axis)
    return np.column_stack([x, np.cross(z, x), z])


def _closed_form(box: BoxObstacle, x: np.ndarray) -> np.ndarray:
    """The rounded box's signed distance at the points ``x`` (n, 3), closed form."""
    p = (x - np.array(box.center)) @ _rotation(box)  # the box's coordinates
    h = 0.5 * np.array(box.size) - box.edge_radius
    q = np.abs(p) - h
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=1)
    inside = np.minimum(q.max(axis=1), 0.0)
    return np.asarray(outside + inside - box.edge_radius)


def test_signed_distance_and_normal_equal_the_closed_form() -> None:
    rng = np.random.default_rng(3)
    box = BoxObstacle(center=(0.01, -0.02, 0.03), size=(0.06, 0.04, 0.08),
                      x_axis=(math.cos(0.4), math.sin(0.4) * math.cos(0.3),
                              math.sin(0.4) * math.sin(0.3)),
                      z_axis=(0.0, -math.sin(0.3), math.cos(0.3)), edge_radius=0.004)
    # points from deep inside to 2 cm outside, in every face, edge and corner region
    x = np.array(box.center) + rng.uniform(-0.06, 0.06, size=(4000, 3))
    phi, n = np.empty(len(x)), np.empty((3, len(x)))
    surface_values(np.ascontiguousarray(x.T), geometry_record(box), phi, n)
    exact = _closed_form(box, x)
    print("phi: worst error", np.abs(phi - exact).max(), "inside:", int((exact < 0).sum()))
    assert np.abs(phi - exact).max() < 1e-15  # round-off of ~0.1 m coordinates
    assert (exact < 0).sum() > 100 and (exact > 0.01).sum() > 100  # both sides sampled
    # the normal is the gradient: central differences of the closed form, step 1e-7 m
    # (truncation ~ (1e-7 / 4 mm)^2 at the rounded edges, round-off ~1e-17 / 1e-7); away
    # from the inner medial surface, where the inside distance has a kink
    h = 1e-7
    grad = np.column_stack([(_closed_form(box, x + h * e) - _closed_form(box, x - h * e)) / (2 * h)
                            for e in np.eye(3)])
    smooth = np.abs(np.linalg.norm(grad, axis=1) - 1.0) < 1e-6
    err = np.linalg.norm(grad[smooth] - n.T[smooth], axis=1).max()
    print("normal: worst error", err, "over", int(smooth.sum()), "points")
    assert err < 1e-6 and smooth.sum() > 3500


@pytest.mark.parametrize("fields, named", [
    (dict(size=(0.1, 0.0, 0.1)), "BoxObstacle.size"),
    (dict(size=(0.1, 0.1)), "BoxObstacle.size"),
    (dict(x_axis=(1.0, 0.0, 0.1)), "BoxObstacle.z_axis"),
    (dict(z_axis=(0.0, 0.0, 0.0)), "BoxObstacle.z_axis"),
    (dict(edge_radius=0.05), "BoxObstacle.edge_radius"),
    (dict(edge_radius=-1e-3), "BoxObstacle.edge_radius"),
    (dict(contact=dict(friction_coefficient=-1.0)), "friction_coefficient"),
])
def test_bad_box_values_raise_one_line_naming_the_field(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ParameterError) as err:
        BoxObstacle(**fields)
    text = str(err.value)
    print(text)
    assert named in text and "\n" not in text


def test_a_box_reads_from_a_mapping_and_writes_it_back() -> None:
    env = EnvironmentParams.from_dict({"obstacles": [
        {"kind": "box", "center": [0, 0, 0.1], "size": [0.2, 0.1, 0.05], "x_axis": [0, 2, 0],
         "contact": {"friction_coefficient": 0.4}}]})
    box = env.obstacles[0]
    assert isinstance(box, BoxObstacle) and box.x_axis == (0.0, 1.0, 0.0)  # normalised
    assert EnvironmentParams.from_dict(env.to_dict()) == env
    with pytest.raises(ParameterError, match=r"obstacles\[0\]"):
        EnvironmentParams.from_dict({"obstacles": [{"kind": "box", "size": [0.1, 0.1, -1]}]})


# --------------------------------------------------------------------------------------------
# a rod lying across a box: the box carries its weight on every executor
# --------------------------------------------------------------------------------------------
class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _ridge(width: float) -> BoxObstacle:
    """A beam ``width`` [m] wide and 4 cm high (top at z = 0, edges rounded 2 mm) turned 30
    degrees about z, 0.3 m long."""
    return BoxObstacle(center=(0.0, 0.0, -0.02), size=(width, 0.3, 0.04),
                       x_axis=(math.cos(math.pi / 6), math.sin(math.pi / 6), 0.0),
                       edge_radius=0.002, contact=ContactParams(
                           stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5))


def _across(dt: float, damping: bool = True, width: float = 0.04) -> tuple[_Sim, CosseratRod, Any]:
    """The rod across a ridge ``width`` wide (perpendicular to its long axis, centre line at
    gap 0 above the top face; 4 cm: the ends overhang by 8 cm each side and droop, the rod
    lies on the two rounded edges), gravity, optional linear damping (60 /s: about critical
    for the overhangs' first bending mode)."""
    sim = _Sim()
    across = np.array([math.cos(math.pi / 6), math.sin(math.pi / 6), 0.0])
    rod = CosseratRod.straight_rod(20, -0.5 * L * across + np.array([0.0, 0.0, R]), across,
                                   np.array([0.0, 0.0, 1.0]), L, R, RHO, youngs_modulus=1e6,
                                   shear_modulus=1e6 / 3.0)
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    if damping:
        sim.dampen(rod).using(AnalyticalLinearDamper, uniform_damping_constant=60.0, time_step=dt)
    ref = add_contact(sim, rod, _ridge(width))
    sim.finalize()
    return sim, rod, ref


def _carried(rod: CosseratRod, ref: Any, overhang: bool = True) -> None:
    """The ridge carries the weight (0.5 %: the damped settling leaves < 1e-6 of it in
    inertia) and, frictionless, pushes only across its long axis; the overhangs hang free."""
    contact = ref.instance
    weight = float(np.sum(rod.mass)) * G
    along = np.array([-math.sin(math.pi / 6), math.cos(math.pi / 6), 0.0])  # the ridge's y
    print("vertical / weight", contact.total_force[2] / weight, "touching",
          int(contact.in_contact.sum()))
    assert contact.total_force[2] == pytest.approx(weight, rel=5e-3)
    assert np.abs(along @ contact.force).max() < 1e-9 * weight
    if overhang:
        assert 0 < contact.in_contact.sum() < rod.n_elems + 1


def test_rod_across_a_box_on_pyelasticas_loop() -> None:
    dt = 5e-5
    sim, rod, ref = _across(dt)
    stepper, t = PositionVerlet(), np.float64(0.0)
    for _ in range(8000):  # 0.4 s
        t = stepper.step(sim, t, np.float64(dt))
    _carried(rod, ref)


def test_rod_across_a_box_fused_equals_pyelasticas_loop() -> None:
    dt = 5e-5
    sim, rod, ref = _across(dt)
    stepper, t = PositionVerlet(), np.float64(0.0)
    for _ in range(400):  # 20 ms: landing on the two rounded edges
        t = stepper.step(sim, t, np.float64(dt))
    sim2, rod2, _ = _across(dt)
    FusedEngine(compile_simulator(sim2), dt).run_steps(400, 0.0)
    diff = np.abs(rod2.position_collection - rod.position_collection).max()
    print("fused - operators:", diff, "m")
    assert diff < 1e-12  # the same kernels in another order: round-off


def test_rod_across_a_box_implicit() -> None:
    dt = 1e-3
    sim, rod, ref = _across(dt)
    ImplicitEngine(compile_simulator(sim), dt, dt_table=dt).run_steps(800, 0.0)  # 0.8 s
    _carried(rod, ref)


def test_rod_on_a_box_static() -> None:
    """The static solver on a box's top face (a ridge 0.3 m wide: the whole rod on it)."""
    sim, rod, ref = _across(1e-3, damping=False, width=0.3)
    outcome = StaticSolver(compile_simulator(sim)).solve(np.zeros(0), check_stability=False)
    assert outcome.converged
    _carried(rod, ref, overhang=False)
    assert ref.instance.in_contact.all()


def test_a_cylinder_stands_on_a_box_by_its_rim() -> None:
    """A rigid cylinder (radius 2 cm, length 4 cm) standing on the top face of a turned box,
    on PyElastica's loop: the face carries its weight (0.5 %: the damped settling leaves
    < 1e-6 of it in inertia) on the 16 points of its bottom rim, the axis stays vertical."""
    sim, dt = _Sim(), 5e-5
    body = _damped_cylinder(sim, [0.0, 0.0, 0.0], 0.04, 0.02, dt)
    ref = add_contact(sim, body, _ridge(0.1))  # top at z = 0, 10 cm x 30 cm
    sim.finalize()
    stepper, t = PositionVerlet(), np.float64(0.0)
    for _ in range(4000):  # 0.2 s
        t = stepper.step(sim, t, np.float64(dt))
    contact = ref.instance
    weight = float(np.sum(body.mass)) * G
    print("cylinder on a box: normal / weight", contact.total_force[2] / weight)
    assert contact.total_force[2] == pytest.approx(weight, rel=5e-3)
    assert contact.in_contact.sum() == 16
    assert np.abs(body.director_collection[2, :, 0] - [0.0, 0.0, 1.0]).max() < 1e-9
