"""Compiled laws declared in one module (physics/compiled_laws.py), shown on the quadratic
drag law (physics/drag.py; its tangent is checked with every law's, tests/test_law_tangents.py):
the drag law against the closed-form terminal velocity on PyElastica's operator path,
the fused explicit step and the implicit integrator; the static solver with the law in the
model; the registration's checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numba
import numpy as np
import pytest
from elastica import CosseratRod, PositionVerlet
from elastica.external_forces import GravityForces, NoForces
from elastica.modules import BaseSystemCollection, Constraints, Damping, Forcing

from hsa_elastica.engines.compile import compile_simulator
from hsa_elastica.engines.fused import FusedEngine
from hsa_elastica.engines.implicit import ImplicitEngine
from hsa_elastica.engines.statics import StaticSolver
from hsa_elastica.engines.statics_contacts import node_unknowns
from hsa_elastica.params import ContactParams, ParameterError, PlaneObstacle
from hsa_elastica.physics.compiled_laws import LAW_REGISTRY, CompiledLaw, RodSlot, register_law
from hsa_elastica.physics.contact import add_contact
from hsa_elastica.physics.drag import QuadraticDrag

G = 9.81  # m/s^2
L, R, RHO = 0.2, 0.005, 1000.0  # rod length, radius [m], density [kg/m^3]
C_D = 1.2
# the fluid density that makes the terminal velocity 1 m/s: rho_f C_d D L v_t^2 = 2 m g
MASS = RHO * math.pi * R**2 * L
RHO_F = 2.0 * MASS * G / (C_D * 2.0 * R * L * 1.0**2)
V_T = math.sqrt(2.0 * MASS * G / (RHO_F * C_D * 2.0 * R * L))  # = 1 m/s


class _Sim(BaseSystemCollection, Constraints, Forcing, Damping):
    pass


def _falling_rod() -> tuple[_Sim, CosseratRod]:
    """A straight rod lying horizontally, falling broadside under gravity with the drag."""
    sim = _Sim()
    rod = CosseratRod.straight_rod(
        20, np.zeros(3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]), L, R, RHO,
        youngs_modulus=1e6, shear_modulus=1e6 / 3.0,
    )
    sim.append(rod)
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
    sim.add_forcing_to(rod).using(QuadraticDrag, density=RHO_F, drag_coefficient=C_D)
    sim.finalize()
    return sim, rod


def _terminal(rod: CosseratRod) -> float:
    return float(-np.mean(rod.velocity_collection[2]))


def _operators_and_fused(build: Callable[[], tuple[_Sim, Any]], dt: float,
                         n: int) -> tuple[Any, Any]:
    """Two copies of ``build()``'s scene after ``n`` steps of ``dt`` [s]: the first on
    PyElastica's operator path (Position Verlet), the second on the fused step."""
    ref_sim, ref = build()
    stepper, t = PositionVerlet(), np.float64(0.0)
    for _ in range(n):
        t = stepper.step(ref_sim, t, np.float64(dt))
    sim, out = build()
    FusedEngine(compile_simulator(sim), dt).run_steps(n, 0.0)
    return ref, out


def test_drag_gives_the_terminal_velocity_on_the_operator_path_and_the_fused_step() -> None:
    # 0.8 s: 8 time constants v_t / g, tanh(8) = 1 - 2e-7
    ref_rod, rod = _operators_and_fused(_falling_rod, 5e-5, 16000)
    print("terminal velocity: operator", _terminal(ref_rod), "fused", _terminal(rod),
          "closed form", V_T)
    # 1e-4: tanh(8) and the step's O(dt) error in the velocity's approach (dt / tau = 5e-4)
    assert _terminal(ref_rod) == pytest.approx(V_T, rel=1e-4)
    # the same law through the compiled model: the same numbers (gravity, then the drag, as
    # the operators' order) up to round-off
    worst = max(float(np.abs(a - b).max()) for a, b in (
        (rod.position_collection, ref_rod.position_collection),
        (rod.velocity_collection, ref_rod.velocity_collection)))
    assert worst < 1e-10
    # every node falls at the same speed: the rod stays straight (node drag ~ node mass)
    assert np.ptp(rod.velocity_collection[2]) < 1e-9


def test_a_model_with_the_law_has_the_types_of_one_without() -> None:
    """Every model holds one table per registered law (empty when unused): the engines'
    kernels compiled for the robot (the kernel table) serve a model with the drag."""
    sim, _ = _falling_rod()
    bare = _Sim()
    rod = CosseratRod.straight_rod(5, np.zeros(3), np.array([1.0, 0.0, 0.0]),
                                   np.array([0.0, 0.0, 1.0]), L, R, RHO, youngs_modulus=1e6,
                                   shear_modulus=1e6 / 3.0)
    bare.append(rod)
    bare.finalize()
    with_law, without = compile_simulator(sim).tables, compile_simulator(bare).tables
    assert numba.typeof(with_law) == numba.typeof(without)
    assert [t.slots.shape[0] for t in with_law.laws] == [1]
    assert [t.slots.shape[0] for t in without.laws] == [0]


def test_two_rods_with_their_own_drag_match_the_operator_path() -> None:
    """Two rods of different lengths, each with its own drag (rows 0 and 1 of the law's table,
    their coefficients one after the other): the fused step gives the operators' numbers up to
    round-off, and the rod in the denser fluid falls slower (terminal velocity ~ rho_f^-1/2)."""
    def build() -> tuple[_Sim, list[CosseratRod]]:
        sim, rods = _Sim(), []
        for n, length, rho_f in ((20, L, RHO_F), (13, 0.7 * L, 4.0 * RHO_F)):
            rod = CosseratRod.straight_rod(
                n, np.zeros(3), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]), length,
                R, RHO, youngs_modulus=1e6, shear_modulus=1e6 / 3.0)
            sim.append(rod)
            sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
            sim.add_forcing_to(rod).using(QuadraticDrag, density=rho_f, drag_coefficient=C_D)
            rods.append(rod)
        sim.finalize()
        return sim, rods

    # 0.8 s, as the one-rod test: both rods at their terminal velocities
    ref_rods, rods = _operators_and_fused(build, 5e-5, 16000)
    for rod, ref in zip(rods, ref_rods):
        assert np.abs(rod.velocity_collection - ref.velocity_collection).max() < 1e-10
    # the terminal velocity does not depend on the rod's length: sqrt(2 m g / (rho_f C_d D L))
    assert _terminal(rods[0]) == pytest.approx(V_T, rel=1e-4)
    assert _terminal(rods[1]) == pytest.approx(V_T / 2.0, rel=1e-4)


def test_drag_gives_the_terminal_velocity_on_the_implicit_integrator() -> None:
    dt = 2e-3  # 50 steps per time constant v_t / g
    sim, rod = _falling_rod()
    ImplicitEngine(compile_simulator(sim), dt, dt_table=dt).run_steps(400, 0.0)  # 0.8 s
    print("terminal velocity: implicit", _terminal(rod), "closed form", V_T)
    assert _terminal(rod) == pytest.approx(V_T, rel=1e-4)


def test_the_static_solver_runs_a_model_with_the_law() -> None:
    """A rod resting on a floor: the drag is zero at rest, so the static pose is the one
    without it (the solver assembles the law's tangent into its hybrid Jacobian)."""
    poses = []
    for drag in (False, True):
        sim = _Sim()
        rod = CosseratRod.straight_rod(
            20, np.array([0.0, 0.0, R]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]),
            L, R, RHO, youngs_modulus=1e6, shear_modulus=1e6 / 3.0,
        )
        sim.append(rod)
        sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -G]))
        if drag:
            sim.add_forcing_to(rod).using(QuadraticDrag, density=RHO_F)
        add_contact(sim, rod, PlaneObstacle(contact=ContactParams(
            stiffness=1e3, smoothing_length=1e-5, damping_ratio=0.5)))
        sim.finalize()
        solver = StaticSolver(compile_simulator(sim))
        assert solver.solve(np.zeros(0), check_stability=False).converged
        assert solver.hybrid is not None  # the law's tangent assembled, no whole differences
        poses.append(rod.position_collection.copy())
    # the solver's tolerance on a pose whose penalty springs give 7.7 um per N/m of residual
    assert np.abs(poses[0] - poses[1]).max() < 1e-9


def _drag_blocks(engine: ImplicitEngine, rod: CosseratRod, cv: float) -> np.ndarray:
    """The drag's ``cv d f / d v`` in the Newton matrix's CSC values, from the closed form
    ``-c_i (|v| I + v v^T / |v|)`` in numpy (not the law's tangent kernel)."""
    s = engine.solver
    unknown = node_unknowns(s)
    c = 0.5 * RHO_F * C_D * 2.0 * R * np.r_[0.5, np.ones(rod.n_elems - 1), 0.5] * L / rod.n_elems
    out = np.zeros(s.indices.shape[0])
    for k in range(rod.n_elems + 1):
        v = rod.velocity_collection[:, k]
        speed = float(np.linalg.norm(v))
        block = -c[k] * (speed * np.eye(3) + np.outer(v, v) / speed)
        for a in range(3):
            for b in range(3):
                col = unknown[k, b]
                rows = s.indices[s.indptr[col]:s.indptr[col + 1]]
                out[s.indptr[col] + int(np.searchsorted(rows, unknown[k, a]))] += cv * block[a, b]
    return out


def test_the_newton_matrix_assembles_the_drag_tangent() -> None:
    """The implicit integrator takes a registered law's tangent into its Newton matrix instead
    of differencing the whole residual.  On the falling rod after 0.1 s (0.6 m/s): the matrix
    equals the forward differences of the whole residual to 1.0e-6 of a column's largest entry
    (inertia shift included; the differences' own error, as for the robot in
    tests/test_implicit_tangent.py; bound 1e-4); without the drag's blocks, computed here from
    the closed form, it misses by the drag's share, 2.3e-3 of a column (bound 1e-3)."""
    from tests.test_implicit_tangent import _column_error, _jacobians

    sim, rod = _falling_rod()
    engine = ImplicitEngine(compile_simulator(sim), 2e-3, dt_table=2e-3)
    assert engine.jacobian == "tangent"
    engine.run_steps(50, 0.0)
    assert _terminal(rod) > 0.5
    none = np.zeros(0)
    data, fd = _jacobians(engine, none, none)
    cv = engine.gamma / (engine.beta * engine.dt)
    err, without = (_column_error(engine, data, fd),
                    _column_error(engine, data - _drag_blocks(engine, rod, cv), fd))
    print("Newton matrix against the differences:", err, "without the drag's blocks:", without)
    assert err < 1e-4
    assert without > 1e-3


class _Outside(NamedTuple):
    slots: np.ndarray


class _NoSlot(NamedTuple):
    slot: RodSlot


def test_registration_refuses_a_table_outside_the_package_or_without_a_slot() -> None:
    law = CompiledLaw("test law", NoForces, lambda entries: (), None)
    with pytest.raises(ParameterError, match="table_class"):
        register_law(law, _Outside)  # defined in tests/: not importable everywhere
    with pytest.raises(ParameterError, match="'slots' field"):
        register_law(law, _NoSlot)
    assert _Outside not in LAW_REGISTRY and _NoSlot not in LAW_REGISTRY


@pytest.mark.parametrize("field,value", [("density", -1.0), ("drag_coefficient", 20.0),
                                         ("diameter", 0.0)])
def test_the_drag_operator_refuses_bad_input(field: str, value: Any) -> None:
    kwargs: dict[str, Any] = {"density": 1.2, field: value}
    with pytest.raises(ParameterError, match=f"QuadraticDrag.{field}"):
        QuadraticDrag(**kwargs)
