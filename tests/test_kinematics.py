"""Tests of the SPCS kinematics (paper Section III–IV, Eq. 8–16).

References are closed forms derived in the docstrings (with the convention dT/ds = T hat(xi),
i.e. dp/ds = R sigma and dR/ds = R hat(kappa)), scipy's independent rotation/expm code,
central finite differences, and PyElastica's own strain computation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.spatial.transform import Rotation

from hsa_elastica.spcs import (
    REST_STRAIN,
    STRAIN_NAMES,
    KinematicsError,
    SPCSModel,
    error_metrics,
    euler_xyz,
    inverse_kinematics_gradient,
    inverse_kinematics_lm,
    rod_element_poses,
    rotation_to_quaternion,
    se3_exp,
    se3_left_jacobian,
)

L = 0.1  # printed length [m] (paper robot)


def Rx(a: float) -> np.ndarray:
    return Rotation.from_rotvec([a, 0.0, 0.0]).as_matrix()


def Rz(a: float) -> np.ndarray:
    return Rotation.from_rotvec([0.0, 0.0, a]).as_matrix()


def hat6(x: np.ndarray) -> np.ndarray:
    """4x4 se(3) matrix [[hat(kappa), sigma], [0, 0]]."""
    k = x[:3]
    M = np.zeros((4, 4))
    M[:3, :3] = [[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]]
    M[:3, 3] = x[3:]
    return M


def q_uniform(model: SPCSModel, xi: np.ndarray, phi0: float = 0.0) -> np.ndarray:
    """q for the same strain xi in every segment (built by hand from q_names, not the code)."""
    q = np.zeros(model.n_q)
    q[0] = phi0
    for i, name in enumerate(model.q_names[1:], start=1):
        base = name.split("[")[0]
        q[i] = xi[STRAIN_NAMES.index(base)] - REST_STRAIN[STRAIN_NAMES.index(base)]
    return q


def random_q(model: SPCSModel, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    """A bent/twisted/sheared/stretched HSA-like configuration (kappa ~ rad/m, sigma ~ 1e-2)."""
    per = {"kappa_x": 8.0, "kappa_y": 8.0, "kappa_z": 15.0, "sigma_x": 0.05, "sigma_y": 0.05, "sigma_z": 0.2}
    q = np.empty(model.n_q)
    q[0] = 0.5 * rng.normal()
    for i, name in enumerate(model.q_names[1:], start=1):
        q[i] = scale * per[name.split("[")[0]] * rng.normal()
    return q


# ----------------------------------------------------------------------------- layout
def test_default_layout_has_11_variables_for_two_segments() -> None:
    m = SPCSModel(L, 2)
    assert m.n_q == 11  # 1 (phi0) + 2 (twist, stretch) + 2 x 4 (bend, shear), paper IV-E
    assert m.q_names[:3] == ("phi0", "kappa_z", "sigma_z")
    assert m.q_names[3:7] == ("kappa_x[0]", "kappa_y[0]", "sigma_x[0]", "sigma_y[0]")
    b_cs, b_pcs = m.strain_basis()
    # Eq. 11 written out
    assert np.array_equal(b_cs.T, [[0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1]])
    assert np.array_equal(b_pcs.T, [[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0]])
    np.testing.assert_array_equal(m.strains(np.zeros(11)), np.tile([0, 0, 0, 0, 0, 1.0], (2, 1)))


def test_selectable_bases_and_strain_roundtrip() -> None:
    m = SPCSModel(L, 3, cs_strains=("kappa_x",), pcs_strains=("sigma_z", "kappa_z"))
    assert m.n_q == 1 + 1 + 3 * 2
    q = np.array([0.1, 2.0, 0.1, -3.0, 0.2, 4.0, 0.3, 5.0])
    xi = m.strains(q)
    expected = np.array(
        [[2.0, 0, -3.0, 0, 0, 1.1], [2.0, 0, 4.0, 0, 0, 1.2], [2.0, 0, 5.0, 0, 0, 1.3]]
    )  # by hand from Eq. 10
    np.testing.assert_allclose(xi, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(m.q_from_strains(xi, phi0=0.1), q, atol=1e-15)
    with pytest.raises(KinematicsError, match="not representable"):
        m.q_from_strains(expected + np.array([0, 0.1, 0, 0, 0, 0]))  # kappa_y is in neither basis


# ----------------------------------------------------------------------------- closed forms
S = np.linspace(0.0, L, 41)


@pytest.mark.parametrize("k", [0.0, 1e-9, 1e-5, 1e-3, 3.0, 40.0])
def test_constant_curvature_arc(k: float) -> None:
    """kappa_x = k: dR/ds = R hat(k e_x) -> R = R_x(k s); dp/ds = R_x(k s) e_z = (0, -sin ks, cos ks)
    -> p = (0, -(1 - cos ks)/k, sin(ks)/k) = (0, -2 sin^2(ks/2)/k, s sinc(ks)) (cancellation-free,
    k = 0 limit (0, 0, s)). Tolerance 1e-13 relative to L: rounding only, no truncation allowed —
    this also checks the small-angle series (k s = 1e-10 vs 0 vs 1e-6 must all agree with the
    exact limit form)."""
    m = SPCSModel(L, 2)
    T = m.forward(q_uniform(m, np.array([k, 0, 0, 0, 0, 1.0])), S)
    y = -2.0 * np.sin(0.5 * k * S) ** 2 / k if k > 0 else 0.0 * S
    z = S * np.sinc(k * S / np.pi)
    np.testing.assert_allclose(T[:, :3, 3], np.stack([0 * S, y, z], 1), rtol=0, atol=1e-13 * L)
    np.testing.assert_allclose(T[:, :3, :3], [Rx(k * si) for si in S], rtol=0, atol=1e-13)


def test_pure_twist_stays_on_axis() -> None:
    """kappa_z = k: p = (0, 0, s), R = R_z(k s) (rounding tolerance)."""
    m = SPCSModel(L, 2)
    k = 25.0
    T = m.forward(q_uniform(m, np.array([0, 0, k, 0, 0, 1.0])), S)
    np.testing.assert_allclose(T[:, :3, 3], np.stack([0 * S, 0 * S, S], 1), atol=1e-15)
    np.testing.assert_allclose(T[:, :3, :3], [Rz(k * si) for si in S], atol=1e-14)


def test_helix_from_bend_and_twist() -> None:
    """Constant kappa = (kx, 0, kz), sigma = e_z: a screw motion. Axis direction u = kappa/theta,
    theta = |kappa|, through c = kappa x e_z / theta^2 = (0, -kx/theta^2, 0). So
    p(s) = c + R_u(theta s)(-c) + (kz/theta) s u, R(s) = R_u(theta s) (scipy Rodrigues): a helix of
    radius kx/theta^2 and pitch 2 pi kz/theta^2 (the classical kappa/(kappa^2+tau^2) formulas)."""
    kx, kz = 30.0, 50.0
    th = math.hypot(kx, kz)
    m = SPCSModel(L, 3)
    T = m.forward(q_uniform(m, np.array([kx, 0, kz, 0, 0, 1.0])), S)
    u = np.array([kx, 0.0, kz]) / th
    c = np.array([0.0, -kx / th**2, 0.0])
    Rs = Rotation.from_rotvec(np.outer(th * S, u)).as_matrix()
    p_ref = c + np.einsum("nij,j->ni", Rs, -c) + np.outer(kz / th * S, u)
    np.testing.assert_allclose(T[:, :3, 3], p_ref, atol=1e-15)
    np.testing.assert_allclose(T[:, :3, :3], Rs, atol=1e-14)
    # geometric helix parameters: distance from axis and advance along it
    rel = T[:, :3, 3] - c
    radius = np.linalg.norm(rel - np.outer(rel @ u, u), axis=1)
    np.testing.assert_allclose(radius, kx / th**2, rtol=1e-12)
    np.testing.assert_allclose(T[:, :3, 3] @ u, kz / th**2 * th * S, atol=1e-15)


def test_pure_stretch_and_shear() -> None:
    """sigma_z = 1 + eps: p = (0, 0, (1+eps) s); sigma_x = g: the straight slanted line (g s, 0, s);
    R = I in both (rounding tolerance)."""
    m = SPCSModel(L, 2)
    T = m.forward(q_uniform(m, np.array([0, 0, 0, 0, 0, 1.3])), S)
    np.testing.assert_allclose(T[:, :3, 3], np.stack([0 * S, 0 * S, 1.3 * S], 1), atol=1e-16)
    T = m.forward(q_uniform(m, np.array([0, 0, 0, 0.2, 0, 1.0])), S)
    np.testing.assert_allclose(T[:, :3, 3], np.stack([0.2 * S, 0 * S, S], 1), atol=1e-16)
    np.testing.assert_allclose(T[:, :3, :3], np.broadcast_to(np.eye(3), (len(S), 3, 3)), atol=0)


def test_piecewise_segments_chain() -> None:
    """Segment 1 straight, segment 2 bent (kappa_x = k): the second half is the arc of
    test_constant_curvature_arc started at (0, 0, L/2)."""
    m = SPCSModel(L, 2)
    k = 20.0
    q = np.zeros(m.n_q)
    q[m.q_names.index("kappa_x[1]")] = k
    s2 = np.linspace(L / 2, L, 11)
    h = s2 - L / 2
    p = m.positions(q, s2)
    np.testing.assert_allclose(p[:, 1], -(1 - np.cos(k * h)) / k, atol=1e-15)
    np.testing.assert_allclose(p[:, 2], L / 2 + np.sin(k * h) / k, atol=1e-15)
    np.testing.assert_allclose(m.positions(q, S[S <= L / 2])[:, 2], S[S <= L / 2], atol=1e-16)


@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-9, 1e-5, 0.3, 1.999999, 2.000001, 3.1, 7.0])
def test_se3_exp_matches_matrix_exponential(angle: float) -> None:
    """Eq. 12 vs scipy.linalg.expm (Pade) in a random direction, across the series/closed-form
    switch at |h kappa| = 2. Tolerance 1e-14: a few ulps times the entries' magnitude."""
    rng = np.random.default_rng(int(angle * 1e6) % 2**31)
    x = rng.normal(size=6)
    x[:3] *= angle / np.linalg.norm(x[:3])
    h = 0.37
    np.testing.assert_allclose(se3_exp(x / h, h), expm(hat6(x)), rtol=0, atol=1e-14 * (1 + angle))


def test_small_angle_limit_is_continuous() -> None:
    """|X| = 1e-9: exp = I + X + X^2/2 + X^3/6 + O(|X|^4 = 1e-36), and angles 0, 1e-9, 1e-5 give
    left Jacobians equal to the series sum_n ad^n/(n+1)! to 1e-15 (no 0/0, no lost digits)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=6)
    for ang in (0.0, 1e-9, 1e-5):
        y = x.copy()
        y[:3] *= ang / np.linalg.norm(y[:3])
        X = hat6(y)
        if ang <= 1e-9:
            np.testing.assert_allclose(se3_exp(y), np.eye(4) + X + X @ X / 2 + X @ X @ X / 6, rtol=0, atol=4e-16)  # ~2 ulp of O(1) entries
        K = hat6(np.r_[y[:3], 0, 0, 0])[:3, :3]
        P = hat6(np.r_[y[3:], 0, 0, 0])[:3, :3]
        ad = np.block([[K, np.zeros((3, 3))], [P, K]])
        ref = sum(np.linalg.matrix_power(ad, n) / math.factorial(n + 1) for n in range(30))
        np.testing.assert_allclose(se3_left_jacobian(y), ref, rtol=0, atol=1e-15)


def test_left_jacobian_matches_series_at_large_angles() -> None:
    """Barfoot's closed-form Q block vs the defining series sum_n ad^n/(n+1)! (60 terms, converged
    for |ad| <= 6); tolerance 1e-12 covers the series' own rounding at |X| ~ 6."""
    rng = np.random.default_rng(4)
    for ang in (0.5, 2.5, 6.0):
        y = rng.normal(size=6)
        y[:3] *= ang / np.linalg.norm(y[:3])
        K = hat6(np.r_[y[:3], 0, 0, 0])[:3, :3]
        P = hat6(np.r_[y[3:], 0, 0, 0])[:3, :3]
        ad = np.block([[K, np.zeros((3, 3))], [P, K]])
        ref = np.zeros((6, 6))
        term = np.eye(6)
        for n in range(60):
            ref += term / math.factorial(n + 1)
            term = term @ ad
        np.testing.assert_allclose(se3_left_jacobian(y), ref, rtol=0, atol=1e-12)


def test_phi0_rotates_whole_rod_about_base_z() -> None:
    """T(phi0, rest of q) = [R_z(phi0), 0; 0, 1] T(0, rest of q) (Eq. 13, T_B^0 = R_z(phi0))."""
    m = SPCSModel(L, 2)
    q = random_q(m, np.random.default_rng(5))
    q0 = q.copy()
    q0[0] = 0.0
    Tz = np.eye(4)
    Tz[:3, :3] = Rz(q[0])
    np.testing.assert_allclose(m.forward(q, S), Tz @ m.forward(q0, S), atol=1e-15)


# ----------------------------------------------------------------------------- Jacobians
def _fd_jacobian(m: SPCSModel, q: np.ndarray, s: np.ndarray, h: float) -> np.ndarray:
    J = np.zeros((len(s), 6, m.n_q))
    T = m.forward(q, s)
    for i in range(m.n_q):
        dq = np.zeros(m.n_q)
        dq[i] = h
        Tp, Tm = m.forward(q + dq, s), m.forward(q - dq, s)
        J[:, :3, i] = (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * h)
        W = np.einsum("nij,nkj->nik", (Tp[:, :3, :3] - Tm[:, :3, :3]) / (2 * h), T[:, :3, :3])  # dR R^T
        J[:, 3:, i] = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)
    return J


@pytest.mark.parametrize("case", ["rest", "random", "random3seg", "small"])
def test_jacobian_matches_central_differences(case: str) -> None:
    """Analytic J vs central differences (step 1e-6 in q; truncation ~h^2 * |d3T| ~ 1e-12 and
    rounding ~1e-16/1e-6 = 1e-10, both far below the 1e-6 relative bound of the issue).
    Includes the segment boundaries and s = 0, L."""
    rng = np.random.default_rng(7)
    m = SPCSModel(L, 3 if case == "random3seg" else 2)
    q = {"rest": np.zeros(m.n_q), "small": random_q(m, rng, 1e-7)}.get(case, random_q(m, rng))
    s = np.unique(np.r_[np.linspace(0, L, 23), m.segment_starts])
    J = m.jacobian(q, s)
    Jfd = _fd_jacobian(m, q, s, 1e-6)
    rel = np.abs(J - Jfd).max() / np.abs(Jfd).max()
    assert rel < 1e-6, rel
    # phi0 column: a rotation about base z moves p by e_z x p
    p = m.positions(q, s)
    np.testing.assert_allclose(J[:, :3, 0], np.cross([0.0, 0.0, 1.0], p), atol=1e-15)


def test_quaternion_jacobian_matches_central_differences() -> None:
    """J_A of the pose vector chi = (eps, eta, p) used by Eq. 14 (same tolerance argument)."""
    m = SPCSModel(L, 2)
    q = random_q(m, np.random.default_rng(8))
    s = np.linspace(0.01, L, 9)
    chi, JA = m.quaternion_jacobian(q, s)
    np.testing.assert_allclose(np.linalg.norm(chi[:, :4], axis=1), 1.0, atol=1e-15)
    h = 1e-6
    JA_fd = np.zeros_like(JA)
    for i in range(m.n_q):
        dq = np.zeros(m.n_q)
        dq[i] = h
        cp = m.quaternion_jacobian(q + dq, s)[0]
        cm = m.quaternion_jacobian(q - dq, s)[0]
        cp[:, :4] *= np.sign(np.sum(cp[:, :4] * chi[:, :4], 1))[:, None]
        cm[:, :4] *= np.sign(np.sum(cm[:, :4] * chi[:, :4], 1))[:, None]
        JA_fd[:, :, i] = (cp - cm) / (2 * h)
    assert np.abs(JA - JA_fd).max() / np.abs(JA_fd).max() < 1e-6


# ----------------------------------------------------------------------------- PyElastica frame
def test_pyelastica_convention_strains_and_frames() -> None:
    """Put a constant-strain SPCS shape into a PyElastica CosseratRod (nodes at s_k, directors
    Q_k = R(s_k + ds/2)^T) and let PyElastica compute its strains. kappa: Q_{k+1} Q_k^T =
    exp(-hat(kappa) ds) exactly, so kappa_PE = kappa (tolerance 1e-10: PyElastica adds 1e-14 to
    theta in _inv_rotate). sigma_PE + e3 = (1/ds) int_{-ds/2}^{ds/2} exp(u hat kappa) du sigma =
    sigma + O((|kappa| ds)^2/24 |sigma|): bound used as tolerance. rod_element_poses returns the
    FK poses at the element centres."""
    from elastica import CosseratRod

    n = 40
    rod = CosseratRod.straight_rod(
        n, np.zeros(3), np.array([0.0, 0, 1]), np.array([1.0, 0, 0]), L, 0.01, 1000.0, youngs_modulus=1e6
    )
    s_el, T_rest = rod_element_poses(rod.position_collection, rod.director_collection, L)
    m = SPCSModel(L, 1)
    np.testing.assert_allclose(T_rest, m.forward(np.zeros(m.n_q), s_el), atol=1e-15)  # R = director.T = I
    xi = np.array([6.0, -4.0, 12.0, 0.03, -0.02, 1.1])
    q = m.q_from_strains(xi[None], phi0=0.4)
    ds = L / n
    rod.position_collection[:] = m.positions(q, np.linspace(0, L, n + 1)).T
    T_mid = m.forward(q, (np.arange(n) + 0.5) * ds)
    rod.director_collection[:] = np.transpose(T_mid[:, :3, :3], (2, 1, 0))
    rod.compute_internal_forces_and_torques(0.0)
    np.testing.assert_allclose(rod.kappa, np.broadcast_to(xi[:3, None], rod.kappa.shape), atol=1e-10)
    bound = np.linalg.norm(xi[:3]) ** 2 * ds**2 / 24 * np.linalg.norm(xi[3:]) * 1.01
    np.testing.assert_allclose(rod.sigma + np.array([[0.0], [0.0], [1.0]]), np.broadcast_to(xi[3:, None], rod.sigma.shape), atol=bound)
    s_el, T_el = rod_element_poses(rod.position_collection, rod.director_collection, L)
    np.testing.assert_allclose(T_el[:, :3, :3], T_mid[:, :3, :3], atol=1e-15)
    # element midpoint vs FK at the element centre differ by the chord sagitta <= |kappa| ds^2/8 |sigma|
    assert np.abs(T_el[:, :3, 3] - T_mid[:, :3, 3]).max() <= np.linalg.norm(xi[:3]) * ds**2 / 8 * 1.2
    # base_pose: expressing lab poses in a shifted and rotated base frame
    B = np.eye(4)
    B[:3, :3] = Rz(0.7)
    B[:3, 3] = [0.01, 0.02, 0.03]
    _, T_b = rod_element_poses(rod.position_collection, rod.director_collection, L, base_pose=B)
    np.testing.assert_allclose(B @ T_b, T_el, atol=1e-15)


# ----------------------------------------------------------------------------- inverse kinematics
def _synthetic(seed: int, n_seg: int = 2, n_poses: int = 25) -> tuple[SPCSModel, np.ndarray, np.ndarray, np.ndarray]:
    m = SPCSModel(L, n_seg)
    q = random_q(m, np.random.default_rng(seed), 0.5)
    s = np.linspace(L / n_poses, L, n_poses)
    return m, q, s, m.forward(q, s)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_lm_recovers_known_configuration(seed: int) -> None:
    """Noise-free poses from a known q: LM from the straight rest state recovers q to 1e-8
    (the issue's bound; the problem is well posed: 25 poses, 150 residuals, 11 unknowns)."""
    m, q, s, T = _synthetic(seed)
    res = inverse_kinematics_lm(m, T, s)
    assert res.success
    np.testing.assert_allclose(res.q, q, rtol=0, atol=1e-8)
    assert res.position_rmse < 1e-12 and res.rotation_rmse < 1e-10
    # (R, p) input, phi0 fixed from the "motor", and only two poses (paper IV-E: 12 residuals, 10 free)
    idx = [12, 24]  # s = 0.052 m (near the segment boundary) and the tip
    res2 = inverse_kinematics_lm(m, (T[idx, :3, :3], T[idx, :3, 3]), s[idx], phi0=q[0])
    assert res2.q[0] == q[0]
    np.testing.assert_allclose(res2.q, q, atol=1e-8)


def test_lm_degrades_gracefully_with_noise() -> None:
    """Pose noise of std sigma (positions, m) and sigma/L (rotation vector, rad): for a
    well-posed least-squares problem the estimate error is linear in sigma. Averaged over 6
    draws, a 10x larger noise must give a 10x larger error within a factor 2 (5..20), and the
    fit RMSE must be of the order of the noise (0.3..3 sigma)."""
    m, q, s, T = _synthetic(21)
    errs = []
    for sigma in (1e-6, 1e-5, 1e-4):
        e = []
        for d in range(6):
            rng = np.random.default_rng(100 + d)
            Rn = Rotation.from_rotvec(rng.normal(scale=sigma / L, size=(len(s), 3))).as_matrix() @ T[:, :3, :3]
            pn = T[:, :3, 3] + rng.normal(scale=sigma, size=(len(s), 3))
            res = inverse_kinematics_lm(m, (Rn, pn), s)
            assert res.success
            e.append(np.linalg.norm(res.q - q))
            assert 0.3 * sigma < res.position_rmse < 3 * sigma
        errs.append(np.mean(e))
    ratios = np.array(errs[1:]) / np.array(errs[:-1])
    assert np.all((ratios > 5) & (ratios < 20)), (errs, ratios)


def test_gradient_iteration_converges_on_easy_case() -> None:
    """Eq. 14 with lambda = 0.3 on a 1-segment model (7 unknowns, 10 poses) from the rest state.
    It is gradient descent on 1/2 |chi_d - chi|^2 with sigma_max(J_A)^2 = 2.5 (stable for
    lambda < 0.8) and sigma_min^2 = 2.0e-3; stopping at max|dq| = lambda |J_A^T e| < tol = 1e-13
    leaves |q - q_true| <~ tol / (lambda sigma_min^2) = 1.7e-10: checked with a 1e-8 margin.
    The second case (phi0 = 3.1 rad) has tip rotations near pi, so the model's and the measured
    quaternions change hemisphere during the iteration (sign alignment needed); phi0 is only
    defined modulo 2 pi."""
    m = SPCSModel(L, 1)
    s = np.linspace(0.01, L, 10)
    for phi0 in (0.2, 3.1):
        q = np.array([phi0, 3.0, 0.05, 4.0, -2.0, 0.02, -0.01])
        T = m.forward(q, s)
        res = inverse_kinematics_gradient(m, T, s, step_size=0.3, max_iter=100_000, tol=1e-13)
        assert res.success, res.message
        dq = res.q - q
        dq[0] = (dq[0] + math.pi) % (2 * math.pi) - math.pi
        np.testing.assert_allclose(dq, 0.0, atol=1e-8)
    # phi0 fixed from the motor is never changed; max_iter is honoured and reported
    res_fixed = inverse_kinematics_gradient(m, T, s, step_size=0.3, max_iter=200, phi0=q[0])
    assert res_fixed.q[0] == q[0] and res_fixed.n_iterations == 200 and not res_fixed.success


# ----------------------------------------------------------------------------- metrics
def test_error_metrics_against_hand_values() -> None:
    """Eq. 15: position errors 1 mm and 2 mm -> e_p = sqrt((1 + 4)/2) mm. Rotation errors R_x(a)
    vs identity: quaternion vector (sin(a/2), 0, 0) -> e_quat = sin(a/2) even if the estimate is
    given with the opposite quaternion sign; Eq. 16: XYZ Euler of R_x(a) = (a, 0, 0)."""
    a = 0.3
    Tt = np.tile(np.eye(4), (2, 1, 1))
    Tt[:, :3, :3] = Rx(a)
    Te = np.tile(np.eye(4), (2, 1, 1))
    Te[0, :3, 3] = [1e-3, 0, 0]
    Te[1, :3, 3] = [0, 0, -2e-3]
    met = error_metrics(Tt, Te)
    assert met.e_p == pytest.approx(math.sqrt(2.5) * 1e-3, rel=1e-14)
    assert met.e_quat == pytest.approx(math.sin(a / 2), rel=1e-14)
    np.testing.assert_allclose(met.e_eul, [a, 0, 0], atol=1e-15)
    # (t, i) shaped input, rotation by pi + something (w sign flip) handled
    Tt2 = np.tile(np.eye(4), (3, 2, 1, 1))
    Te2 = Tt2.copy()
    Te2[..., :3, :3] = Rz(2 * math.pi - 0.2)  # quaternion of this has w < 0 before normalisation
    assert error_metrics(Tt2, Te2).e_quat == pytest.approx(math.sin(0.1), rel=1e-13)


def test_rotation_helpers_match_scipy() -> None:
    """Quaternions (up to sign) and intrinsic XYZ Euler angles vs scipy, incl. angles near pi."""
    rng = np.random.default_rng(9)
    rv = rng.normal(size=(50, 3))
    rv[:10] *= (math.pi - 1e-9) / np.linalg.norm(rv[:10], axis=1)[:, None]
    rot = Rotation.from_rotvec(rv)
    q = rotation_to_quaternion(rot.as_matrix())
    qs = rot.as_quat()
    np.testing.assert_allclose(np.abs(np.sum(q * qs, axis=1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(euler_xyz(rot.as_matrix()[10:]), rot[10:].as_euler("XYZ"), atol=1e-12)


# ----------------------------------------------------------------------------- bad inputs
def test_bad_inputs_raise_clear_errors() -> None:
    m = SPCSModel(L, 2)
    q = np.zeros(m.n_q)
    s = np.array([0.05, 0.1])
    T = m.forward(q, s)
    with pytest.raises(KinematicsError, match=r"length n_q = 11"):
        m.forward(np.zeros(10), s)
    with pytest.raises(KinematicsError, match=r"outside the printed length: must lie in \[0, 0.1\]"):
        m.forward(q, [0.05, 0.11])
    with pytest.raises(KinematicsError, match=r"outside"):
        m.jacobian(q, -1e-3)
    with pytest.raises(KinematicsError, match="NaN"):
        m.forward([np.nan] + [0.0] * 10, s)
    bad = T.copy()
    bad[0, :3, :3] *= 1.01  # not orthogonal
    with pytest.raises(KinematicsError, match=r"poses\[0\] is not a rotation"):
        inverse_kinematics_lm(m, bad, s)
    refl = T.copy()
    refl[1, :3, :3] = np.diag([1.0, 1.0, -1.0])  # orthogonal but det = -1
    with pytest.raises(KinematicsError, match=r"poses\[1\] is not a rotation.*det"):
        inverse_kinematics_gradient(m, refl, s)
    with pytest.raises(KinematicsError, match="N >= 1|N = 0"):
        inverse_kinematics_lm(m, np.zeros((0, 4, 4)), np.zeros(0))
    nan = T.copy()
    nan[0, 0, 3] = np.nan
    with pytest.raises(KinematicsError, match="NaN"):
        inverse_kinematics_lm(m, nan, s)
    with pytest.raises(KinematicsError, match="must match"):
        inverse_kinematics_lm(m, T, [0.1])
    with pytest.raises(KinematicsError, match="q0 has shape"):
        inverse_kinematics_lm(m, T, s, q0=np.zeros(3))
    with pytest.raises(KinematicsError, match="orientation_weight"):
        inverse_kinematics_lm(m, T, s, orientation_weight=-1.0)
    with pytest.raises(KinematicsError, match="SPCSModel.length"):
        SPCSModel(0.0, 2)
    with pytest.raises(KinematicsError, match="n_segments"):
        SPCSModel(L, 0)
    with pytest.raises(KinematicsError, match="allowed names"):
        SPCSModel(L, 2, cs_strains=("kappa_w",))
    with pytest.raises(KinematicsError, match="both"):
        SPCSModel(L, 2, cs_strains=("kappa_x",))
    with pytest.raises(KinematicsError, match="segment_lengths"):
        SPCSModel(L, 2, segment_lengths=(0.05, 0.06))
