"""Tests of the auxetic coupling (paper Eq. 2-5, hsa_elastica/auxetics.py).

Every reference number is a closed form derived by hand (see each docstring) or an independent
numpy/scipy computation; none comes from the code under test.

Common setup: the Table I (4 rows) characterization rod (10 elements, L = 75 mm, tube 19/17 mm,
E0 = 576.9 kPa, B_z = 0.00375 N m^2), base turned by MotorAngleBC, distal twist locked,
otherwise free, no gravity.  dt = 1e-4 s is ~0.3 of the axial wave limit l / sqrt(E/rho) =
3.2e-4 s; a damping rate of 300 1/s (~2x the lowest twist eigenfrequency, 146 rad/s) settles
the rod to ~1e-13 m/s residual velocity within 0.3 s.

Hand derivation used below: with the base turned by phi and the distal twist held, a uniform
rod twists uniformly: theta_k = phi / (n - 1) per Voronoi region, kappa_h = phi / ((n-1) l)
(Eq. 4 against the printed Voronoi length l).  Zero-padded averaging (Eq. 3) gives interior
elements kappa_h and the two end elements kappa_h / 2, so the total extension is
C_eps * kappa_h * l * (n - 2 + 2 * 1/2) = C_eps * phi.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import (
    TABLE1_ROW4,
    TABLE1_ROW4_C_EPS,
    TABLE1_ROW4_E_SLOPE,
    RodSimulator,
    add_rate_damping,
    find_operators,
    make_tube_rod,
    run_steps,
    tube_section,
)
from elastica import EndpointForces
from scipy.spatial.transform import Rotation

from hsa_elastica.physics.actuation import (
    BaseTwistTorque,
    DistalTwistLockBC,
    FreeTwistBC,
    MotorAngleBC,
    Ramp,
    base_twist_angle,
)
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling, TwistStiffnessLaw
from hsa_elastica.params import ParameterError

L = TABLE1_ROW4["length"]
N = TABLE1_ROW4["n_elements"]
ELEM = L / N
E0 = TABLE1_ROW4["youngs_modulus"]
G0 = TABLE1_ROW4["shear_modulus"]
B_Z = TABLE1_ROW4["twist_rigidity"]
AREA, I_XX = tube_section(TABLE1_ROW4["outer_radius"], TABLE1_ROW4["wall_thickness"])
B_XY = E0 * I_XX
C_EPS = TABLE1_ROW4_C_EPS
DT = 1e-4
RATE = 300.0  # 1/s
SETTLE_STEPS = 3000  # 0.3 s


def build(
    *,
    phi: float = 0.0,
    handedness: int = 1,
    C_eps: float = C_EPS,
    eps_min: float = 0.0,
    eps_max: float = 0.5,
    stiffness: TwistStiffnessLaw | None = None,
    tip_force: tuple[float, float, float] | None = None,
    base_torque: float | None = None,
    coupling: bool = True,
    coupling_kwargs: dict | None = None,
) -> tuple[RodSimulator, object]:
    sim = RodSimulator()
    rod = make_tube_rod(**TABLE1_ROW4)
    sim.append(rod)
    if base_torque is None:
        sim.constrain(rod).using(
            MotorAngleBC,
            constrained_position_idx=(0,),
            constrained_director_idx=(0,),
            angle=Ramp(target=phi, duration=0.05),
        )
    else:
        sim.constrain(rod).using(
            FreeTwistBC, constrained_position_idx=(0,), constrained_director_idx=(0,)
        )
        sim.add_forcing_to(rod).using(
            BaseTwistTorque, torque=Ramp(target=base_torque, duration=0.05)
        )
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    if coupling:
        sim.add_forcing_to(rod).using(
            AuxeticCoupling,
            handedness=handedness,
            C_eps=C_eps,
            eps_min=eps_min,
            eps_max=eps_max,
            **{"stiffness": stiffness, **(coupling_kwargs or {})},
        )
    if tip_force is not None:
        sim.add_forcing_to(rod).using(
            EndpointForces,
            start_force=np.zeros(3),
            end_force=np.array(tip_force, dtype=float),
            ramp_up_time=0.02,
        )
    add_rate_damping(sim, rod, DT, RATE, RATE)
    return sim, rod


def rod_length(rod: object) -> float:
    return float(rod.position_collection[2, -1] - rod.position_collection[2, 0])  # type: ignore[attr-defined]


def handed_strain_profile(phi: float) -> np.ndarray:
    """Hand-derived element averages of kappa_h for a uniformly twisted rod (see module doc)."""
    kappa = abs(phi) / ((N - 1) * ELEM)
    k = np.full(N, kappa)
    k[0] = k[-1] = 0.5 * kappa
    return k


# ------------------------------------------------------------------------------------------
# minimum energy length (Eq. 2-3), sign convention
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "handedness, phi",
    [(1, 0.5), (1, 1.0), (1, 2.0), (-1, -0.5), (-1, -1.0), (-1, -2.0)],
)
def test_steady_length_is_L_plus_C_eps_phi(handedness: int, phi: float) -> None:
    """Steady length = L + C_eps |phi| when twisting with the handedness (right: +phi,
    left: -phi).  Tolerance 0.5 % (an acceptance bound far above round-off); it is a static equilibrium with no external load, so
    the measured error is ~1e-15 (round-off)."""
    sim, rod = build(phi=phi, handedness=handedness)
    reference = rod.director_collection[..., 0].copy()
    run_steps(sim, DT, SETTLE_STEPS)
    expected = L + C_EPS * abs(phi)
    assert rod_length(rod) == pytest.approx(expected, rel=5e-3)
    assert rod_length(rod) == pytest.approx(expected, rel=1e-9)  # measured: ~1e-15
    assert np.abs(rod.velocity_collection).max() < 1e-8  # settled
    assert base_twist_angle(rod, reference) == pytest.approx(phi, abs=1e-12)


@pytest.mark.parametrize("handedness, phi", [(1, -1.0), (-1, 1.0)])
def test_twist_against_handedness_does_not_elongate(handedness: int, phi: float) -> None:
    """With eps_min = 0 (closed HSA) a twist against the handedness keeps the printed length."""
    sim, rod = build(phi=phi, handedness=handedness, eps_min=0.0)
    run_steps(sim, DT, SETTLE_STEPS)
    assert rod_length(rod) == pytest.approx(L, rel=1e-9)


def test_negative_eps_min_shortens_linearly() -> None:
    """eps_min = -0.05 allows shortening: phi = -0.5 on a right rod gives L - C_eps * 0.5 (the
    interior eps = -C kappa = -0.0225 stays above eps_min, so no clipping)."""
    sim, rod = build(phi=-0.5, handedness=1, eps_min=-0.05)
    run_steps(sim, DT, SETTLE_STEPS)
    assert rod_length(rod) == pytest.approx(L - C_EPS * 0.5, rel=1e-9)


def test_saturation_at_eps_max() -> None:
    """eps_max = 0.02: with phi = 2 rad even the end elements (kappa_h/2 -> C kappa/2 = 0.045)
    exceed eps_max, so every element saturates and the length is L (1 + eps_max)."""
    sim, rod = build(phi=2.0, eps_max=0.02)
    run_steps(sim, DT, SETTLE_STEPS)
    assert rod_length(rod) == pytest.approx(L * 1.02, rel=1e-9)
    # beyond saturation, more twist gives no more length
    sim2, rod2 = build(phi=3.0, eps_max=0.02)
    run_steps(sim2, DT, SETTLE_STEPS)
    assert rod_length(rod2) == pytest.approx(L * 1.02, rel=1e-9)


# ------------------------------------------------------------------------------------------
# neutrality
# ------------------------------------------------------------------------------------------
def test_zero_coupling_reproduces_plain_rod_exactly() -> None:
    """C_eps = 0 and all slopes 0: the operator rewrites the printed values (and scales B_z by
    1.0), so a twisted, laterally loaded rod follows the plain CosseratRod trajectory to 1e-12 m
    after 600 steps (in practice bit for bit)."""
    runs = []
    for coupling in (False, True):
        sim, rod = build(
            phi=1.0,
            C_eps=0.0,
            stiffness=TwistStiffnessLaw(),
            tip_force=(0.01, -0.005, 0.02),
            coupling=coupling,
        )
        run_steps(sim, DT, 600)
        runs.append(rod.position_collection.copy())
    assert np.abs(runs[1] - runs[0]).max() <= 1e-12
    assert np.abs(runs[0][:, -1] - np.array([0, 0, L])).max() > 1e-5  # the rod did move


# ------------------------------------------------------------------------------------------
# stiffness law (Eq. 5)
# ------------------------------------------------------------------------------------------
def test_axial_spring_constant_of_twisted_rod() -> None:
    """Spring constant from a small tip pull (0.1 N) at phi = 2 rad with E_slope = 36.1 kPa m/rad
    (Table I, 4 rows).  Reference: elements in series, 1/k = sum_i l_i (1 + C k_i) /
    ((E0 + E_slope k_i) A), with the hand-derived strain profile k_i (ends at half the twist).
    Tolerance 2 %: the only model difference is the finite pull F/S_zz ~ 3e-4."""
    phi, pull = 2.0, 0.1
    law = TwistStiffnessLaw(E_slope=TABLE1_ROW4_E_SLOPE)
    lengths = []
    for force in (0.0, pull):
        sim, rod = build(phi=phi, stiffness=law, tip_force=(0.0, 0.0, force))
        run_steps(sim, DT, SETTLE_STEPS)
        lengths.append(rod_length(rod))
    k_meas = pull / (lengths[1] - lengths[0])
    k_i = handed_strain_profile(phi)
    k_ref = 1.0 / np.sum(ELEM * (1 + C_EPS * k_i) / ((E0 + TABLE1_ROW4_E_SLOPE * k_i) * AREA))
    assert k_meas == pytest.approx(k_ref, rel=2e-2)
    assert k_meas == pytest.approx(k_ref, rel=1e-3)  # measured: -0.03 %
    # the twist stiffened the rod: printed k = E0 A / L is far below
    assert k_meas > 1.5 * E0 * AREA / L


def _twisted_bent_directors(n: int, seed: int, sign: float) -> np.ndarray:
    """Directors of a rod twisted about z (sense ``sign``) plus small random bends (rows = d_i)."""
    rng = np.random.default_rng(seed)
    Q = np.empty((3, 3, n))
    # per-Voronoi twist increments [rad] spanning unclipped, eps_max- and eps_min-clipped values
    increments = np.resize([0.02, 0.16, 0.2, -0.06, 0.15, 0.03, 0.12, 0.3, -0.1, 0.04], n)
    twist = sign * np.cumsum(increments)
    for i in range(n):
        bend = Rotation.from_rotvec(rng.normal(0.0, 0.05, 3) * np.array([1, 1, 0]))
        R = bend * Rotation.from_rotvec([0.0, 0.0, twist[i]])
        Q[..., i] = R.as_matrix().T  # rows are the rotated lab axes
    return Q


@pytest.mark.parametrize("handedness", [1, -1])
def test_rest_length_and_stiffness_laws_see_one_clipped_strain(handedness: int) -> None:
    """Operator arrays vs an independent numpy/scipy evaluation of Eq. 2-5 from the directors
    (scipy's rotation log instead of PyElastica's _inv_rotate).  eps_max = 0.02 makes clipping
    active in most elements; where eps saturates, S_zz must stop at (E0 + slope eps_max/C) A."""
    rod = make_tube_rod(**TABLE1_ROW4)
    Q = _twisted_bent_directors(N, seed=3, sign=-handedness)  # elongating sense
    rod.director_collection[:] = Q
    law = TwistStiffnessLaw(
        E_slope=36.1e3, G_slope=5e3, bend_rigidity_slope=1e-4, twist_rigidity_slope=-2e-5
    )
    eps_min, eps_max = -0.01, 0.02
    op = AuxeticCoupling(
        handedness=handedness, C_eps=C_EPS, eps_min=eps_min, eps_max=eps_max, stiffness=law
    )
    printed_l = rod.rest_lengths.copy()
    printed_vor = rod.rest_voronoi_lengths.copy()
    op.apply_forces(rod, np.float64(0.0))

    # independent evaluation
    rotvec_z = np.array(
        [Rotation.from_matrix(Q[..., k + 1] @ Q[..., k].T).as_rotvec()[2] for k in range(N - 1)]
    )
    kappa_z = -rotvec_z / printed_vor  # PyElastica's sign: kappa = -log(Q_{k+1} Q_k^T) / D
    kappa_h_vor = -handedness * kappa_z
    padded = np.concatenate([[0.0], kappa_h_vor, [0.0]])
    kappa_h_el = 0.5 * (padded[:-1] + padded[1:])
    eps = np.clip(C_EPS * kappa_h_el, eps_min, eps_max)
    k_el = np.clip(kappa_h_el, eps_min / C_EPS, eps_max / C_EPS)
    k_vor = np.clip(kappa_h_vor, eps_min / C_EPS, eps_max / C_EPS)
    rest = (1 + eps) * printed_l
    rest_vor = 0.5 * (rest[1:] + rest[:-1])

    assert np.count_nonzero(eps == eps_max) >= 3 and np.count_nonzero(eps < eps_max) >= 2
    np.testing.assert_allclose(op.kappa_h, kappa_h_el, rtol=1e-9)
    np.testing.assert_allclose(op.eps, eps, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(rod.rest_lengths, rest, rtol=1e-12)
    np.testing.assert_allclose(rod.rest_voronoi_lengths, rest_vor, rtol=1e-12)
    np.testing.assert_allclose(rod.shear_matrix[2, 2], (E0 + law.E_slope * k_el) * AREA, rtol=1e-9)
    np.testing.assert_allclose(
        rod.shear_matrix[0, 0], 27 / 28 * (G0 + law.G_slope * k_el) * AREA, rtol=1e-9
    )
    np.testing.assert_allclose(rod.shear_matrix[1, 1], rod.shear_matrix[0, 0], rtol=0)
    np.testing.assert_allclose(rod.bend_matrix[0, 0], B_XY + law.bend_rigidity_slope * k_vor, rtol=1e-9)
    np.testing.assert_allclose(
        rod.bend_matrix[2, 2],
        (B_Z + law.twist_rigidity_slope * k_vor) * rest_vor / printed_vor,
        rtol=1e-9,
    )
    # the axial stiffness stops growing exactly where the elongation saturates
    saturated = eps == eps_max
    s_cap = (E0 + law.E_slope * eps_max / C_EPS) * AREA
    np.testing.assert_allclose(rod.shear_matrix[2, 2][saturated], s_cap, rtol=1e-12)
    assert np.all(rod.shear_matrix[2, 2][~saturated] < s_cap)


def test_twist_rigidity_scaling_holding_torque() -> None:
    """Holding torque with the coupling on: FreeTwistBC + BaseTwistTorque(tau) + distal twist
    lock.  Hand derivation (Eq. 4): each Voronoi region carries the couple B_z theta_k /
    printed_vor_k = tau, so phi = tau sum(printed_vor) / B_z = tau (n-1) l / B_z = 0.9 rad for
    tau = 0.05 N m.  The rod is elongated by C_eps phi (eps ~ 4 %), so measuring twist against
    the extended Voronoi lengths (no B_z scaling) would give a 4 % larger angle; tolerance
    0.5 % separates the two."""
    tau = 0.05
    sim, rod = build(base_torque=tau)
    reference = rod.director_collection[..., 0].copy()
    run_steps(sim, DT, SETTLE_STEPS)
    phi_expected = tau * (N - 1) * ELEM / B_Z
    phi = base_twist_angle(rod, reference)
    assert phi == pytest.approx(phi_expected, rel=5e-3)
    assert phi == pytest.approx(phi_expected, rel=1e-6)  # measured: 4e-12
    assert rod_length(rod) == pytest.approx(L + C_EPS * phi_expected, rel=1e-6)


def test_bending_stiffness_of_elongated_rod() -> None:
    """Cantilever (base clamped and twisted by MotorAngleBC, tip twist locked), lateral tip force
    F = 2 mN, C_eps = 0.02 m/rad, phi = 0.5 rad (interior eps = 14.8 %).

    Reference (hand derivation of the discretized Euler-Bernoulli + shear cantilever): element 0
    is clamped, each Voronoi region k (at node k+1, arc length s_{k+1}) rotates by
    F (L_ext - s_{k+1}) D_k / B_xy, so delta = F/B_xy sum_k (L_ext - s_{k+1})^2 D_k
    + F L_ext / (alpha_c G A), with the extended lengths of the hand-derived strain profile.
    (For uniform elements this is F l^3 (n-1) n (2n-1) / (6 B) -> F L^3 / (3 B) as n -> inf; at
    n = 10 it is 14 % below the continuum value, which is why the discrete sum is used.)
    Tolerance 1 %: the twisting moment T = B_z phi / ((n-1) l) = 0.028 N m changes the in-plane
    deflection at second order, ~(T L / B_xy)^2 ~ 1 %, measured -0.12 %.  Using the printed
    lengths instead would be ~35 % off.
    """
    C, phi, F = 0.02, 0.5, 0.002
    sim, rod = build(phi=phi, C_eps=C, tip_force=(F, 0.0, 0.0))
    run_steps(sim, DT, 4000)
    k_i = handed_strain_profile(phi)
    l_ext = ELEM * (1 + C * k_i)
    s = np.concatenate([[0.0], np.cumsum(l_ext)])
    L_ext = s[-1]
    D = 0.5 * (l_ext[1:] + l_ext[:-1])
    delta_ref = F / B_XY * np.sum((L_ext - s[1:-1]) ** 2 * D) + F * L_ext / (27 / 28 * G0 * AREA)
    delta = rod.position_collection[0, -1] - rod.position_collection[0, 0]
    assert delta == pytest.approx(delta_ref, rel=1e-2)
    # printed-length reference would be much smaller: the elongation matters
    s0 = np.arange(N + 1) * ELEM
    delta_printed = F / B_XY * np.sum((L - s0[1:-1]) ** 2 * ELEM) + F * L / (27 / 28 * G0 * AREA)
    assert delta > 1.25 * delta_printed


# ------------------------------------------------------------------------------------------
# diagnostics, robustness option, bad input
# ------------------------------------------------------------------------------------------
def test_diagnostics_are_read_only_and_available_after_run() -> None:
    sim, rod = build(phi=1.0)
    run_steps(sim, DT, SETTLE_STEPS)
    (op,) = find_operators(sim, AuxeticCoupling)
    eps = op.eps
    assert eps is not None and eps.shape == (N,)
    with pytest.raises(ValueError):
        eps[0] = 1.0
    # at the steady state the interior strain is C kappa_h = C phi / ((n-1) l)
    assert eps[N // 2] == pytest.approx(C_EPS * 1.0 / ((N - 1) * ELEM), rel=1e-6)
    assert AuxeticCoupling(handedness=1, C_eps=0.01).eps is None


def test_twist_filter_keeps_steady_state() -> None:
    """The low-pass option (twist_filter_time > 0) changes only the transient: the steady length
    is still L + C_eps phi."""
    sim = RodSimulator()
    rod = make_tube_rod(**TABLE1_ROW4)
    sim.append(rod)
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
        angle=Ramp(target=1.0, duration=0.05),
    )
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    sim.add_forcing_to(rod).using(
        AuxeticCoupling, handedness=1, C_eps=C_EPS, twist_filter_time=0.02
    )
    add_rate_damping(sim, rod, DT, RATE, RATE)
    run_steps(sim, DT, 1000)  # 0.1 s: filter still lagging (ramp ended at 0.05 s)
    lag_length = rod_length(rod)
    run_steps(sim, DT, 4000, 0.1)
    assert lag_length < L + C_EPS * 1.0 - 1e-5
    assert rod_length(rod) == pytest.approx(L + C_EPS * 1.0, rel=1e-6)


def test_twist_filter_stabilizes_paper_robot_rod() -> None:
    """Paper robot rod (25 elements, C_eps = 0.01 m/rad) twisted to pi in 0.5 s with the
    contract's SimulationParams (dt = 4e-5 s, damping 20 1/s): without the filter the same rod
    diverges at phi ~ 1.2 rad during a 1 s ramp (benchmarks/stability_scan.py,
    docs/stability.md); with
    twist_filter_time = 10 ms it settles at L + C_eps pi = 131.4 mm (0.5 %: the filter lag
    after a 0.2 s hold is ~exp(-20) of the last increment)."""
    from conftest import PAPER_ROD

    dt = 4e-5
    sim = RodSimulator()
    rod = make_tube_rod(**PAPER_ROD)
    sim.append(rod)
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
        angle=Ramp(target=math.pi, duration=0.5),
    )
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    sim.add_forcing_to(rod).using(
        AuxeticCoupling, handedness=1, C_eps=0.01, twist_filter_time=0.01
    )
    add_rate_damping(sim, rod, dt, 20.0, 20.0)
    run_steps(sim, dt, 17500)  # 0.7 s
    assert np.all(np.isfinite(rod.position_collection))
    assert rod_length(rod) == pytest.approx(0.100 + 0.01 * math.pi, rel=5e-3)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(handedness=0, C_eps=0.01), "handedness"),
        (dict(handedness=2, C_eps=0.01), "handedness"),
        (dict(handedness=True, C_eps=0.01), "handedness"),
        (dict(handedness=1, C_eps=-0.01), "C_eps"),
        (dict(handedness=1, C_eps=float("nan")), "C_eps"),
        (dict(handedness=1, C_eps=float("inf")), "C_eps"),
        (dict(handedness=1, C_eps=0.01, eps_min=-1.0), "eps_min"),
        (dict(handedness=1, C_eps=0.01, eps_max=11.0), "eps_max"),
        (dict(handedness=1, C_eps=0.01, eps_min=0.2, eps_max=0.1), "eps_min"),
        (dict(handedness=1, C_eps=0.01, stiffness="stiff"), "stiffness"),
        (dict(handedness=1, C_eps=0.01, area=0.0), "area"),
        (dict(handedness=1, C_eps=0.01, twist_filter_time=-1.0), "twist_filter_time"),
        (dict(handedness=1, C_eps=0.01, reciprocal=1), "reciprocal"),
        (dict(handedness=1, C_eps=0.01, reciprocal=True, twist_filter_time=0.01), "reciprocal"),
    ],
)
def test_bad_coupling_parameters_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ParameterError, match=f"AuxeticCoupling.{field} ="):
        AuxeticCoupling(**kwargs)


@pytest.mark.parametrize(
    "name", ["E_slope", "G_slope", "bend_rigidity_slope", "twist_rigidity_slope"]
)
def test_bad_stiffness_law_names_the_field(name: str) -> None:
    with pytest.raises(ParameterError, match=f"TwistStiffnessLaw.{name} ="):
        TwistStiffnessLaw(**{name: float("nan")})


def test_stiffness_that_turns_non_positive_in_range_is_rejected() -> None:
    """E0 = 576.9 kPa, E_slope = -1e5 Pa m/rad: at kappa_h = eps_max / C_eps = 164 rad/m
    the modulus would be 576.9e3 - 1.64e7 < 0, rejected on first application (the operator
    gets the rod only then)."""
    rod = make_tube_rod(**TABLE1_ROW4)
    op = AuxeticCoupling(
        handedness=1, C_eps=C_EPS, eps_max=0.5, stiffness=TwistStiffnessLaw(E_slope=-1e5)
    )
    with pytest.raises(ValueError, match="E_slope"):
        op.apply_forces(rod, np.float64(0.0))


# ------------------------------------------------------------------------------------------
# reciprocal twist couple (Maxwell-Betti), conservative coupling
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("handedness", [1, -1])
def test_axial_pull_twists_free_base_reciprocally(handedness: int) -> None:
    """Free-twist base (FreeTwistBC, no torque), distal twist locked, tip pulled by F = 0.2 N.
    Hand derivation: minimizing 1/2 k_a (dz - C phi)^2 + 1/2 (B_z / sum Dbar) phi^2 - F dz
    gives phi = C_eps F sum(Dbar) / B_z (= 1.094e-2 rad, along the handedness) and
    dz = F / k_a + C_eps phi with k_a = E A / L.  Tolerance 2 %: the closed form is linear,
    the rod has axial strain s = F/(EA) = 1.5e-3 and PyElastica's axial force S s/(1+s), the
    1/e_v^3 couple scaling and the quadratic-energy couple n_z + sigma.n/2 add O(s) terms
    (~4.5 s = 0.7 %).  With reciprocal=False the base does not twist at all."""
    F = 0.2
    phi_ref = handedness * C_EPS * F * (N - 1) * ELEM / B_Z
    k_a = E0 * AREA / L
    for reciprocal in (True, False):
        sim = RodSimulator()
        rod = make_tube_rod(**TABLE1_ROW4)
        sim.append(rod)
        sim.constrain(rod).using(
            FreeTwistBC, constrained_position_idx=(0,), constrained_director_idx=(0,)
        )
        sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
        sim.add_forcing_to(rod).using(
            AuxeticCoupling, handedness=handedness, C_eps=C_EPS, reciprocal=reciprocal
        )
        sim.add_forcing_to(rod).using(
            EndpointForces, start_force=np.zeros(3), end_force=np.array([0.0, 0.0, F]),
            ramp_up_time=0.02,
        )
        add_rate_damping(sim, rod, DT, RATE, RATE)
        reference = rod.director_collection[..., 0].copy()
        run_steps(sim, DT, SETTLE_STEPS)
        phi = base_twist_angle(rod, reference)
        if reciprocal:
            assert phi == pytest.approx(phi_ref, rel=2e-2)
            assert rod_length(rod) - L == pytest.approx(F / k_a + C_EPS * abs(phi_ref), rel=2e-2)
        else:
            assert abs(phi) < 1e-9
            assert rod_length(rod) - L == pytest.approx(F / k_a, rel=2e-2)


def _undamped_twisted_rod_energy_drift(reciprocal: bool, c_eps2: float = 0.0) -> np.ndarray:
    """Paper robot rod twisted uniformly by phi = 1 rad (base held by MotorAngleBC at its
    initial, pre-twisted orientation, distal twist locked), axial positions at the hand-derived
    equilibrium plus a 20 um quarter-sine perturbation, no damping, dt = 2e-5 s, 0.3 s.
    Returns (E(t) - E(0)) / (E(0) - E_eq) sampled every 15 ms, with the total mechanical
    energy E of PyElastica's energy functions and E_eq = B_z phi^2 / (2 sum Dbar) the twist
    energy of the equilibrium (no stretch there)."""
    from conftest import PAPER_ROD

    phi, dt, n, length, c_eps = 1.0, 2e-5, PAPER_ROD["n_elements"], PAPER_ROD["length"], 0.01
    sim = RodSimulator()
    rod = make_tube_rod(**PAPER_ROD)
    sim.append(rod)
    for i in range(n):
        twist = Rotation.from_rotvec([0.0, 0.0, phi * (1.0 - i / (n - 1))]).as_matrix()
        rod.director_collection[..., i] = rod.director_collection[..., i] @ twist.T
    kappa = phi / ((n - 1) * length / n)
    k_i = np.full(n, kappa)
    k_i[0] = k_i[-1] = 0.5 * kappa
    z = np.concatenate([[0.0], np.cumsum(length / n * (1.0 + c_eps * k_i + c_eps2 * k_i**2))])
    z[1:] += 2e-4 * length * np.sin(0.5 * np.pi * np.arange(1, n + 1) / n)
    rod.position_collection[2] = z
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
        angle=lambda t: 0.0,
    )
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    sim.add_forcing_to(rod).using(
        AuxeticCoupling, handedness=1, C_eps=c_eps, reciprocal=reciprocal, C_eps2=c_eps2
    )

    def energy() -> float:
        return float(
            rod.compute_bending_energy() + rod.compute_shear_energy()
            + rod.compute_translational_energy() + rod.compute_rotational_energy()
        )

    t = run_steps(sim, dt, 1)
    e0 = energy()
    e_eq = PAPER_ROD["twist_rigidity"] * phi**2 / (2 * (n - 1) * length / n)
    drift = []
    for _ in range(20):
        t = run_steps(sim, dt, 750, t)
        drift.append((energy() - e0) / (e0 - e_eq))
    return np.array(drift)


def test_reciprocal_coupling_conserves_energy() -> None:
    """Undamped, so the total mechanical energy must be conserved by a conservative model.
    With the reciprocal couple the energy stays within 10 % of the perturbation energy
    (measured <= 3 %: Position Verlet's O(dt^2) energy oscillation and PyElastica's own
    non-conservative O(strain) terms, e.g. axial force S s/(1+s) vs the quadratic energy).
    The one-way law (reciprocal=False) exchanges energy with nothing: its 'energy' swings by
    ~45 % of the perturbation energy (measured), i.e. it is not a conservative model."""
    with_couple = _undamped_twisted_rod_energy_drift(True)
    without = _undamped_twisted_rod_energy_drift(False)
    assert np.all(np.isfinite(with_couple))
    assert np.abs(with_couple).max() < 0.1
    assert np.abs(without).max() > 0.2


def test_reciprocal_coupling_settles_paper_robot_rod_without_filter() -> None:
    """Paper robot rod (25 elements, C_eps = 0.01 m/rad), dt = 3e-5 s, damping 20 1/s, base
    ramped to pi in 1 s, distal twist locked, NO twist filter, 3 s hold.  The one-way law with
    a one-step rest-length lag diverged at phi ~ 1.2 rad (docs/stability.md).  Settled: max
    speed < 1e-5 m/s (the 20 1/s damping takes the 0.03 m/s ramp speed to ~1e-28 in 3 s, so
    anything above 1e-5 is a live instability); length L + C_eps pi (no axial load, so the
    reciprocal couple vanishes at equilibrium) within 0.5 % (a margin far above round-off; measured ~1e-13)."""
    from conftest import PAPER_ROD

    dt = 3e-5
    sim = RodSimulator()
    rod = make_tube_rod(**PAPER_ROD)
    sim.append(rod)
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
        angle=Ramp(target=math.pi, duration=1.0),
    )
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    sim.add_forcing_to(rod).using(AuxeticCoupling, handedness=1, C_eps=0.01, reciprocal=True)
    add_rate_damping(sim, rod, dt, 20.0, 20.0)
    t = run_steps(sim, dt, int(round(1.0 / dt)))
    for _ in range(6):  # 3 s hold, checked every 0.5 s
        t = run_steps(sim, dt, int(round(0.5 / dt)), t)
        assert np.all(np.isfinite(rod.position_collection))
        assert rod_length(rod) == pytest.approx(0.100 + 0.01 * math.pi, rel=5e-3)
    assert np.abs(rod.velocity_collection).max() < 1e-5


# ------------------------------------------------------------------------------------------
# optional quadratic twist laws (not in the paper; default 0 = the linear law)
# ------------------------------------------------------------------------------------------
C_EPS2 = 5e-4  # m^2/rad^2: at phi = 1 rad (kappa ~ 10 rad/m) the quadratic term is ~half the linear


def test_quadratic_rest_length_law_steady_length() -> None:
    """Free rod twisted by phi, distal twist held: the hand formula of the discrete model with
    eps = C_eps k + C_eps2 k^2 per element (interior elements k = phi / ((N-1) l), the two end
    elements k / 2, zero-padded average of Eq. 3).  Static equilibrium without load, so the
    measured error is round-off (~1e-15); 1e-9 relative."""
    phi = 1.0
    sim, rod = build(phi=phi, handedness=1, coupling_kwargs=dict(C_eps2=C_EPS2))
    run_steps(sim, DT, SETTLE_STEPS)
    k = handed_strain_profile(phi)
    expected = float(np.sum(ELEM * (1.0 + C_EPS * k + C_EPS2 * k**2)))
    assert expected - (L + C_EPS * phi) > 1e-3  # the quadratic term matters (> 1 mm)
    assert rod_length(rod) == pytest.approx(expected, rel=1e-9)


def test_quadratic_laws_zero_is_bit_identical_to_linear() -> None:
    """C_eps2 = E_quad = twist_rigidity_quad = 0 must reproduce the paper's linear law exactly
    (bitwise: the defaults are the paper's model)."""
    runs = []
    for extra in ({}, dict(C_eps2=0.0, stiffness=TwistStiffnessLaw(E_slope=1e5, E_quad=0.0,
                                                                   twist_rigidity_quad=0.0))):
        kw = dict(stiffness=TwistStiffnessLaw(E_slope=1e5))
        kw.update(extra)
        sim, rod = build(phi=1.0, handedness=1, coupling_kwargs=kw)
        run_steps(sim, DT, 200)
        runs.append(np.array(rod.position_collection))
    assert np.array_equal(runs[0], runs[1])


def test_quadratic_stiffness_law_spring_constant() -> None:
    """Quadratic E law: the kernel writes S_zz = (E0 + E_slope k + E_quad k^2) A on the clipped
    element strains (hand formula, exact up to round-off)."""
    from hsa_elastica.physics.auxetic_law import twist_dependent_stiffness
    from hsa_elastica.physics.tables import CouplingTable

    n, A, e0 = 4, 2e-4, 1e6
    k_e = np.array([5.0, 10.0, 10.0, 5.0])
    k_v = np.array([10.0, 10.0, 10.0])
    shear0 = np.zeros((3, 3, n))
    bend0 = np.zeros((3, 3, n - 1))
    for d in range(3):
        shear0[d, d] = e0 * A
        bend0[d, d] = 1e-3
    shear, bend = shear0.copy(), bend0.copy()
    vor = np.full(n - 1, 0.01)
    # a one-row coupling table holding only what the stiffness law reads
    one = np.ones(1)
    table = CouplingTable(**{f: np.zeros(1) for f in CouplingTable._fields})._replace(
        area=A * one, E_slope=2e4 * one, G_slope=0.0 * one, bend_slope=0.0 * one,
        twist_slope=1e-5 * one, E_quad=300.0 * one, twist_quad=2e-7 * one,
        printed_shear=shear0[None], printed_bend=bend0[None], printed_voronoi=vor[None],
    )
    twist_dependent_stiffness(k_e, k_v, table, 0, vor, shear, bend)
    assert np.allclose(shear[2, 2], (e0 + 2e4 * k_e + 300.0 * k_e**2) * A, rtol=1e-14)
    assert np.allclose(bend[2, 2], 1e-3 + 1e-5 * k_v + 2e-7 * k_v**2, rtol=1e-14)


def test_reciprocal_coupling_conserves_energy_with_quadratic_law() -> None:
    """The reciprocal couple must use d eps / d k = C_eps + 2 C_eps2 k of the quadratic law;
    same undamped check and 10 % tolerance as the linear law (a couple with C_eps only would
    miss ~half of the coupling at kappa ~ 10 rad/m and not conserve the energy)."""
    drift = _undamped_twisted_rod_energy_drift(True, C_EPS2)
    assert np.all(np.isfinite(drift))
    assert np.abs(drift).max() < 0.1


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(handedness=1, C_eps=0.0, C_eps2=1e-4), "C_eps2"),
        (dict(handedness=1, C_eps=0.01, C_eps2=-1e-3), "C_eps2"),  # decreasing before eps_max
        (dict(handedness=1, C_eps=0.01, C_eps2=float("nan")), "C_eps2"),
    ],
)
def test_bad_quadratic_rest_length_law_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        AuxeticCoupling(**kwargs)
