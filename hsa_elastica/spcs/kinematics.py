r"""Selective piecewise constant strain (SPCS) kinematics of an HSA rod (paper Sections III–IV).

Conventions
-----------
* Strain vector (Eq. 8): ``xi = (kappa_x, kappa_y, kappa_z, sigma_x, sigma_y, sigma_z)``, angular
  part first, expressed in the local (material) frame, per unit *printed* arc length.
  ``kappa`` in rad/m, ``sigma`` dimensionless; rest strain ``(0, 0, 0, 0, 0, 1)``.
* ``hat(xi) = [[hat(kappa), sigma], [0, 0]]`` and the pose ``T(s) = [[R, p], [0, 1]]`` (base frame
  ``{S_B}`` ← local frame ``{S_s}``) obeys ``dT/ds = T hat(xi)``, i.e. ``dp/ds = R sigma`` and
  ``dR/ds = R hat(kappa)``. A positive ``kappa_x`` therefore bends the backbone towards local
  ``-y``; positive ``kappa_z`` twists the cross-section counter-clockwise about ``+z``.
* Configuration (Eq. 9): ``q = (phi0, q_CS, q_PCS_1, ..., q_PCS_nS)``; per segment
  ``xi_i = xi_rest + B_CS q_CS + B_PCS q_PCS_i`` (Eq. 10–11). Strains in neither basis stay at rest.
  ``phi0`` [rad] rotates the whole rod about the base ``+z`` axis (``T_B^0 = R_z(phi0)``).
* Arc length ``s`` in ``[0, L]`` on the printed length ``L`` [m]; ``n_S`` equal segments by default.
* Jacobians: rows ``0:3`` are ``dp/dq`` [m per unit of q], rows ``3:6`` the rotational Jacobian
  ``omega`` expressed in the base frame, defined by ``dR = hat(omega dq) R`` [rad per unit of q].

Relation to a PyElastica rod
----------------------------
PyElastica stores the directors as rows, ``Q = director_collection[:, :, k]`` maps lab → local,
so the SE(3) rotation of element ``k`` is ``R_lab←local = Q.T`` (columns = d1, d2, d3; local z =
d3 = tangent along the backbone). PyElastica's ``kappa = -log(Q_{k+1} Q_k^T) / rest_voronoi``
(``elastica._rotations._inv_rotate``) equals the ``kappa`` of this module's ``dR/ds = R hat(kappa)``
measured per *rest* Voronoi length, and PyElastica's ``sigma = Q (x_{k+1}-x_k)/rest_length - e3``.
On the printed length, therefore ``kappa_SPCS = kappa_PE * rest_voronoi / printed_voronoi`` and
``sigma_SPCS = (sigma_PE + e3) * rest_length / printed_length``. :func:`rod_element_poses`
converts a rod's nodes and directors into poses ``T_B(s_k)`` at the printed element centres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares

__all__ = [
    "REST_STRAIN",
    "STRAIN_NAMES",
    "ErrorMetrics",
    "IKResult",
    "KinematicsError",
    "SPCSModel",
    "error_metrics",
    "euler_xyz",
    "inverse_kinematics_gradient",
    "inverse_kinematics_lm",
    "pose_vectors",
    "rod_element_poses",
    "rotation_to_quaternion",
    "se3_exp",
    "se3_left_jacobian",
]

FloatArray = NDArray[np.float64]

STRAIN_NAMES: tuple[str, ...] = ("kappa_x", "kappa_y", "kappa_z", "sigma_x", "sigma_y", "sigma_z")
REST_STRAIN: FloatArray = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
REST_STRAIN.flags.writeable = False

#: tolerance on R^T R = I and det R = 1 for measured poses
ROTATION_TOLERANCE = 1e-6


class KinematicsError(ValueError):
    """Invalid input to the SPCS kinematics (message names the argument and the allowed range)."""


# --------------------------------------------------------------------------------------------
# Trigonometric coefficient functions with exact small-angle series (no 0/0)
# --------------------------------------------------------------------------------------------
# a = sin t / t, b = (1 - cos t)/t^2, c = (t - sin t)/t^3,
# d = (t^2 + 2 cos t - 2)/(2 t^4), e = (2 t - 3 sin t + t cos t)/(2 t^5).
# Power series in x = t^2 (alternating, factorial decay); used for t < _SERIES_BELOW where the
# closed forms lose digits by cancellation (e loses ~eps/t^4). 16 terms are exact to machine
# precision for t < 2 (last term < 4^15/33! ~ 1e-28).
_N_SERIES = 16
_SERIES_BELOW = 2.0
_SER_A = np.array([(-1.0) ** m / math.factorial(2 * m + 1) for m in range(_N_SERIES)])
_SER_B = np.array([(-1.0) ** m / math.factorial(2 * m + 2) for m in range(_N_SERIES)])
_SER_C = np.array([(-1.0) ** m / math.factorial(2 * m + 3) for m in range(_N_SERIES)])
_SER_D = np.array([(-1.0) ** m / math.factorial(2 * m + 4) for m in range(_N_SERIES)])
_SER_E = np.array([(-1.0) ** m * (m + 1) / math.factorial(2 * m + 5) for m in range(_N_SERIES)])


@njit(cache=True)
def _horner(coef: FloatArray, x: float) -> float:
    r = 0.0
    for m in range(coef.shape[0] - 1, -1, -1):
        r = r * x + coef[m]
    return r


@njit(cache=True)
def _trig_coefficients(t: float) -> tuple[float, float, float, float, float]:
    """(a, b, c, d, e) of the SO(3)/SE(3) exponential and its Jacobian at angle ``t`` >= 0."""
    if t < _SERIES_BELOW:
        x = t * t
        return (
            _horner(_SER_A, x),
            _horner(_SER_B, x),
            _horner(_SER_C, x),
            _horner(_SER_D, x),
            _horner(_SER_E, x),
        )
    st = math.sin(t)
    ct = math.cos(t)
    t2 = t * t
    return (
        st / t,
        (1.0 - ct) / t2,
        (t - st) / (t2 * t),
        (t2 + 2.0 * ct - 2.0) / (2.0 * t2 * t2),
        (2.0 * t - 3.0 * st + t * ct) / (2.0 * t2 * t2 * t),
    )


# --------------------------------------------------------------------------------------------
# Small dense helpers (3x3) for numba
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _hat(v: FloatArray | tuple[float, float, float], out: FloatArray) -> None:
    out[0, 0] = 0.0
    out[0, 1] = -v[2]
    out[0, 2] = v[1]
    out[1, 0] = v[2]
    out[1, 1] = 0.0
    out[1, 2] = -v[0]
    out[2, 0] = -v[1]
    out[2, 1] = v[0]
    out[2, 2] = 0.0


@njit(cache=True)
def _mm3(a: FloatArray, b: FloatArray, out: FloatArray) -> None:
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@njit(cache=True)
def _mm3_new(a: FloatArray, b: FloatArray) -> FloatArray:
    """New 3x3 array ``a @ b`` (as :func:`_mm3`)."""
    out = np.empty((3, 3))
    _mm3(a, b, out)
    return out


@njit(cache=True)
def _exp_se3_kernel(xi: FloatArray, h: float, R: FloatArray, p: FloatArray) -> None:
    """Eq. 12: exp(h hat(xi)) = I + X + b X^2 + c X^3, X = h hat(xi), written in blocks.

    With k = h kappa, t = |k|, K = hat(k) (K^2 = k k^T - t^2 I):
    R = I + a K + b K^2 and p = (I + b K + c K^2) h sigma.
    """
    k0 = h * xi[0]
    k1 = h * xi[1]
    k2 = h * xi[2]
    t2 = k0 * k0 + k1 * k1 + k2 * k2
    a, b, c, _, _ = _trig_coefficients(math.sqrt(t2))
    k = (k0, k1, k2)
    r0 = h * xi[3]
    r1 = h * xi[4]
    r2 = h * xi[5]
    K = np.empty((3, 3))
    _hat(k, K)
    for i in range(3):
        pi = 0.0
        for j in range(3):
            K2 = k[i] * k[j] - (t2 if i == j else 0.0)
            eye = 1.0 if i == j else 0.0
            R[i, j] = eye + a * K[i, j] + b * K2
            V = eye + b * K[i, j] + c * K2
            pi += V * (r0 if j == 0 else (r1 if j == 1 else r2))
        p[i] = pi


@njit(cache=True)
def _left_jacobian_kernel(xi: FloatArray, h: float, J: FloatArray) -> None:
    """Left Jacobian of SE(3) at X = h xi, ordering (angular, linear).

    J_l(X) = sum_n ad_X^n / (n+1)! = [[V, 0], [Q, V]] with V = I + b Phi + c Phi^2 and the
    closed form of Q (Barfoot, State Estimation for Robotics, Eq. 7.86):
    Q = P/2 + c (Phi P + P Phi + Phi P Phi) + d (Phi^2 P + P Phi^2 - 3 Phi P Phi)
        + e (Phi P Phi^2 + Phi^2 P Phi),  Phi = hat(h kappa), P = hat(h sigma).
    Property used: d/dX exp(hat(X)) = hat(J_l(X) dX) exp(hat(X)).
    """
    k = np.empty(3)
    r = np.empty(3)
    for i in range(3):
        k[i] = h * xi[i]
        r[i] = h * xi[3 + i]
    t = math.sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2])
    _, b, c, d, e = _trig_coefficients(t)
    Phi = np.empty((3, 3))
    P = np.empty((3, 3))
    _hat(k, Phi)
    _hat(r, P)
    Phi2 = _mm3_new(Phi, Phi)
    PhiP = _mm3_new(Phi, P)
    PPhi = _mm3_new(P, Phi)
    PhiPPhi = _mm3_new(PhiP, Phi)
    Phi2P = _mm3_new(Phi2, P)
    PPhi2 = _mm3_new(P, Phi2)
    PhiPPhi2 = _mm3_new(PhiP, Phi2)
    Phi2PPhi = _mm3_new(Phi2P, Phi)
    for i in range(3):
        for j in range(3):
            eye = 1.0 if i == j else 0.0
            V = eye + b * Phi[i, j] + c * Phi2[i, j]
            J[i, j] = V
            J[3 + i, 3 + j] = V
            J[i, 3 + j] = 0.0
            J[3 + i, j] = (
                0.5 * P[i, j]
                + c * (PhiP[i, j] + PPhi[i, j] + PhiPPhi[i, j])
                + d * (Phi2P[i, j] + PPhi2[i, j] - 3.0 * PhiPPhi[i, j])
                + e * (PhiPPhi2[i, j] + Phi2PPhi[i, j])
            )


# --------------------------------------------------------------------------------------------
# Forward kinematics and Jacobian (Eq. 13) for many arc lengths
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _strains_kernel(q: FloatArray, rest: FloatArray, amap: FloatArray) -> FloatArray:
    n_seg = amap.shape[0]
    n_q = amap.shape[2]
    xi = np.empty((n_seg, 6))
    for j in range(n_seg):
        for r in range(6):
            acc = rest[r]
            for m in range(n_q):
                acc += amap[j, r, m] * q[m]
            xi[j, r] = acc
    return xi


@njit(cache=True)
def _fk_jac_kernel(
    q: FloatArray,
    rest: FloatArray,
    amap: FloatArray,
    seg_start: FloatArray,
    s: FloatArray,
    want_jac: bool,
    T_out: FloatArray,
    J_out: FloatArray,
) -> None:
    """Poses T_B(s_n) (Eq. 13) and, if ``want_jac``, the analytic pose Jacobian.

    Product of exponentials: T(s) = R_z(phi0) E_1 ... E_{i-1} exp(h hat(xi_i)), h = s - s_{i-1}.
    A strain change dxi_j of segment j with proximal frame T_{j-1} and length l gives the base-frame
    twist Ad_{T_{j-1}} J_l(l xi_j) l dxi_j (left Jacobian); phi0 gives the twist (e_z, 0). With a
    base-frame twist (w, v): dR = hat(w) R, dp = v + w x p.
    """
    n_seg = amap.shape[0]
    n_q = amap.shape[2]
    xi = _strains_kernel(q, rest, amap)
    Rb = np.empty((n_seg + 1, 3, 3))
    pb = np.zeros((n_seg + 1, 3))
    c0 = math.cos(q[0])
    s0 = math.sin(q[0])
    for i in range(3):
        for j in range(3):
            Rb[0, i, j] = 0.0
    Rb[0, 0, 0] = c0
    Rb[0, 0, 1] = -s0
    Rb[0, 1, 0] = s0
    Rb[0, 1, 1] = c0
    Rb[0, 2, 2] = 1.0
    Rt = np.empty((3, 3))
    pt = np.empty(3)
    Jl = np.empty((6, 6))
    JA = np.empty((6, n_q))
    G = np.zeros((n_seg + 1, 6, n_q))  # accumulated twists of full proximal segments

    for j in range(n_seg):
        length = seg_start[j + 1] - seg_start[j]
        _exp_se3_kernel(xi[j], length, Rt, pt)
        _mm3(Rb[j], Rt, Rb[j + 1])
        for i in range(3):
            pb[j + 1, i] = pb[j, i] + Rb[j, i, 0] * pt[0] + Rb[j, i, 1] * pt[1] + Rb[j, i, 2] * pt[2]
        if want_jac:
            _left_jacobian_kernel(xi[j], length, Jl)
            _twist_columns(Jl, amap[j], length, Rb[j], pb[j], JA)
            for r in range(6):
                for m in range(n_q):
                    G[j + 1, r, m] = G[j, r, m] + JA[r, m]

    R = np.empty((3, 3))
    p = np.empty(3)
    for n in range(s.shape[0]):
        sn = s[n]
        iseg = 0
        while iseg < n_seg - 1 and sn >= seg_start[iseg + 1]:
            iseg += 1
        h = sn - seg_start[iseg]
        _exp_se3_kernel(xi[iseg], h, Rt, pt)
        _mm3(Rb[iseg], Rt, R)
        for i in range(3):
            p[i] = pb[iseg, i] + Rb[iseg, i, 0] * pt[0] + Rb[iseg, i, 1] * pt[1] + Rb[iseg, i, 2] * pt[2]
        for i in range(3):
            for j in range(3):
                T_out[n, i, j] = R[i, j]
            T_out[n, i, 3] = p[i]
            T_out[n, 3, i] = 0.0
        T_out[n, 3, 3] = 1.0
        if want_jac:
            _left_jacobian_kernel(xi[iseg], h, Jl)
            _twist_columns(Jl, amap[iseg], h, Rb[iseg], pb[iseg], JA)
            for m in range(n_q):
                w0 = G[iseg, 0, m] + JA[0, m]
                w1 = G[iseg, 1, m] + JA[1, m]
                w2 = G[iseg, 2, m] + JA[2, m]
                if m == 0:
                    w2 += 1.0  # phi0: rotation about the base z axis through the origin
                v0 = G[iseg, 3, m] + JA[3, m]
                v1 = G[iseg, 4, m] + JA[4, m]
                v2 = G[iseg, 5, m] + JA[5, m]
                J_out[n, 0, m] = v0 + w1 * p[2] - w2 * p[1]
                J_out[n, 1, m] = v1 + w2 * p[0] - w0 * p[2]
                J_out[n, 2, m] = v2 + w0 * p[1] - w1 * p[0]
                J_out[n, 3, m] = w0
                J_out[n, 4, m] = w1
                J_out[n, 5, m] = w2


@njit(cache=True)
def _twist_columns(
    Jl: FloatArray, amap_j: FloatArray, h: float, Rb: FloatArray, pb: FloatArray, out: FloatArray
) -> None:
    """out = Ad_{(Rb, pb)} J_l h amap_j, Ad = [[R, 0], [hat(p) R, R]] (angular, linear)."""
    n_q = amap_j.shape[1]
    loc = np.empty(6)
    for m in range(n_q):
        nonzero = False
        for r in range(6):
            if amap_j[r, m] != 0.0:
                nonzero = True
        if not nonzero:
            for r in range(6):
                out[r, m] = 0.0
            continue
        for r in range(6):
            acc = 0.0
            for k in range(6):
                acc += Jl[r, k] * amap_j[k, m]
            loc[r] = h * acc
        w0 = Rb[0, 0] * loc[0] + Rb[0, 1] * loc[1] + Rb[0, 2] * loc[2]
        w1 = Rb[1, 0] * loc[0] + Rb[1, 1] * loc[1] + Rb[1, 2] * loc[2]
        w2 = Rb[2, 0] * loc[0] + Rb[2, 1] * loc[1] + Rb[2, 2] * loc[2]
        out[0, m] = w0
        out[1, m] = w1
        out[2, m] = w2
        out[3, m] = Rb[0, 0] * loc[3] + Rb[0, 1] * loc[4] + Rb[0, 2] * loc[5] + pb[1] * w2 - pb[2] * w1
        out[4, m] = Rb[1, 0] * loc[3] + Rb[1, 1] * loc[4] + Rb[1, 2] * loc[5] + pb[2] * w0 - pb[0] * w2
        out[5, m] = Rb[2, 0] * loc[3] + Rb[2, 1] * loc[4] + Rb[2, 2] * loc[5] + pb[0] * w1 - pb[1] * w0


# --------------------------------------------------------------------------------------------
# Rotations: quaternion (x, y, z, w), rotation vector, left Jacobian inverse
# --------------------------------------------------------------------------------------------
@njit(cache=True)
def _rot_to_quat_kernel(R: FloatArray, out: FloatArray) -> None:
    """Shepperd's method; quaternion (x, y, z, w) with w >= 0."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0.0:
        S = math.sqrt(tr + 1.0) * 2.0
        w = 0.25 * S
        x = (R[2, 1] - R[1, 2]) / S
        y = (R[0, 2] - R[2, 0]) / S
        z = (R[1, 0] - R[0, 1]) / S
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        S = math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2]) * 2.0
        w = (R[2, 1] - R[1, 2]) / S
        x = 0.25 * S
        y = (R[0, 1] + R[1, 0]) / S
        z = (R[0, 2] + R[2, 0]) / S
    elif R[1, 1] > R[2, 2]:
        S = math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2]) * 2.0
        w = (R[0, 2] - R[2, 0]) / S
        x = (R[0, 1] + R[1, 0]) / S
        y = 0.25 * S
        z = (R[1, 2] + R[2, 1]) / S
    else:
        S = math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1]) * 2.0
        w = (R[1, 0] - R[0, 1]) / S
        x = (R[0, 2] + R[2, 0]) / S
        y = (R[1, 2] + R[2, 1]) / S
        z = 0.25 * S
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    nrm = math.sqrt(x * x + y * y + z * z + w * w)
    out[0] = x / nrm
    out[1] = y / nrm
    out[2] = z / nrm
    out[3] = w / nrm


@njit(cache=True)
def _log_so3_kernel(R: FloatArray, out: FloatArray) -> None:
    """Rotation vector of R (angle in [0, pi]) via the quaternion (robust near 0 and pi)."""
    qv = np.empty(4)
    _rot_to_quat_kernel(R, qv)
    vn = math.sqrt(qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2])
    if vn < 1e-300:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        return
    angle = 2.0 * math.atan2(vn, qv[3])
    # angle / vn = 2 atan2(vn, w)/vn -> 2/w for small vn (w ~ 1): fine numerically
    f = angle / vn
    out[0] = f * qv[0]
    out[1] = f * qv[1]
    out[2] = f * qv[2]


@njit(cache=True)
def _so3_left_jacobian_inverse(r: FloatArray, out: FloatArray) -> None:
    """J_l^{-1}(r) = I - hat(r)/2 + g hat(r)^2, g = 1/t^2 - (1 + cos t)/(2 t sin t)."""
    t2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    t = math.sqrt(t2)
    if t < 0.1:
        g = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0 + t2 * t2 * t2 / 1209600.0
    else:
        g = 1.0 / t2 - (1.0 + math.cos(t)) / (2.0 * t * math.sin(t))
    H = np.empty((3, 3))
    _hat(r, H)
    for i in range(3):
        for j in range(3):
            H2 = r[i] * r[j] - (t2 if i == j else 0.0)
            out[i, j] = (1.0 if i == j else 0.0) - 0.5 * H[i, j] + g * H2


@njit(cache=True)
def _lm_residual_kernel(
    q: FloatArray,
    rest: FloatArray,
    amap: FloatArray,
    seg_start: FloatArray,
    s: FloatArray,
    R_meas: FloatArray,
    p_meas: FloatArray,
    weight: float,
    res: FloatArray,
    jac: FloatArray,
) -> None:
    """Residual per pose: (p_model - p_meas, w Log(R_model R_meas^T)) and its exact Jacobian.

    d Log(exp(hat(omega)) exp(hat(r))) = J_l^{-1}(r) omega for the base-frame rotational twist.
    """
    n = s.shape[0]
    n_q = amap.shape[2]
    T = np.empty((n, 4, 4))
    J = np.empty((n, 6, n_q))
    _fk_jac_kernel(q, rest, amap, seg_start, s, True, T, J)
    D = np.empty((3, 3))
    rv = np.empty(3)
    Jinv = np.empty((3, 3))
    for k in range(n):
        for i in range(3):
            res[6 * k + i] = T[k, i, 3] - p_meas[k, i]
            for j in range(3):
                D[i, j] = T[k, i, 0] * R_meas[k, j, 0] + T[k, i, 1] * R_meas[k, j, 1] + T[k, i, 2] * R_meas[k, j, 2]
        _log_so3_kernel(D, rv)
        _so3_left_jacobian_inverse(rv, Jinv)
        for i in range(3):
            res[6 * k + 3 + i] = weight * rv[i]
        for m in range(n_q):
            for i in range(3):
                jac[6 * k + i, m] = J[k, i, m]
                jac[6 * k + 3 + i, m] = weight * (
                    Jinv[i, 0] * J[k, 3, m] + Jinv[i, 1] * J[k, 4, m] + Jinv[i, 2] * J[k, 5, m]
                )


@njit(cache=True)
def _quat_pose_jacobian(T: FloatArray, J: FloatArray, chi: FloatArray, JA: FloatArray) -> None:
    """Pose vector chi = (eps_x, eps_y, eps_z, eta, p) and its Jacobian J_A (paper IV-B).

    With the base-frame rotational twist omega: d eps = (eta omega + omega x eps)/2,
    d eta = -omega . eps / 2.
    """
    n = T.shape[0]
    n_q = J.shape[2]
    qv = np.empty(4)
    for k in range(n):
        _rot_to_quat_kernel(T[k, :3, :3], qv)
        for i in range(4):
            chi[k, i] = qv[i]
        for i in range(3):
            chi[k, 4 + i] = T[k, i, 3]
        ex, ey, ez, eta = qv[0], qv[1], qv[2], qv[3]
        for m in range(n_q):
            w0 = J[k, 3, m]
            w1 = J[k, 4, m]
            w2 = J[k, 5, m]
            JA[k, 0, m] = 0.5 * (eta * w0 + w1 * ez - w2 * ey)
            JA[k, 1, m] = 0.5 * (eta * w1 + w2 * ex - w0 * ez)
            JA[k, 2, m] = 0.5 * (eta * w2 + w0 * ey - w1 * ex)
            JA[k, 3, m] = -0.5 * (w0 * ex + w1 * ey + w2 * ez)
            for i in range(3):
                JA[k, 4 + i, m] = J[k, i, m]


@njit(cache=True)
def _gradient_ik_kernel(
    q0: FloatArray,
    step: FloatArray,
    rest: FloatArray,
    amap: FloatArray,
    seg_start: FloatArray,
    s: FloatArray,
    chi_d: FloatArray,
    max_iter: int,
    tol: float,
) -> tuple[FloatArray, int, float]:
    """Eq. 14: q <- q + lambda * J_A^T (chi_d - chi(q)); ``step`` = lambda per coordinate (0 = fixed).

    The desired quaternion's sign is chosen per pose and iteration to lie in the model's
    hemisphere (q and -q are the same rotation). Stops when max |dq| < tol.
    Returns (q, iterations, last max|dq|).
    """
    n = s.shape[0]
    n_q = amap.shape[2]
    q = q0.copy()
    T = np.empty((n, 4, 4))
    J = np.empty((n, 6, n_q))
    chi = np.empty((n, 7))
    JA = np.empty((n, 7, n_q))
    e = np.empty(7)
    dq_max = np.inf
    it = 0
    while it < max_iter:
        _fk_jac_kernel(q, rest, amap, seg_start, s, True, T, J)
        _quat_pose_jacobian(T, J, chi, JA)
        dq = np.zeros(n_q)
        for k in range(n):
            dot = chi_d[k, 0] * chi[k, 0] + chi_d[k, 1] * chi[k, 1] + chi_d[k, 2] * chi[k, 2] + chi_d[k, 3] * chi[k, 3]
            sgn = 1.0 if dot >= 0.0 else -1.0
            for i in range(7):
                e[i] = (sgn * chi_d[k, i] if i < 4 else chi_d[k, i]) - chi[k, i]
            for m in range(n_q):
                acc = 0.0
                for i in range(7):
                    acc += JA[k, i, m] * e[i]
                dq[m] += acc
        dq_max = 0.0
        for m in range(n_q):
            d = step[m] * dq[m]
            q[m] += d
            dq_max = max(dq_max, abs(d))
        it += 1
        if dq_max < tol:
            break
    return q, it, dq_max


# --------------------------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------------------------
def _finite_array(value: ArrayLike, name: str) -> FloatArray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise KinematicsError(f"{name} must be a numeric array, got {value!r}") from exc
    if not np.all(np.isfinite(arr)):
        raise KinematicsError(f"{name} contains NaN or inf: all entries must be finite numbers")
    return arr


def _validate_rotations(R: FloatArray, name: str) -> None:
    err_orth = np.abs(np.einsum("nki,nkj->nij", R, R) - np.eye(3)).max(axis=(1, 2))
    det = np.linalg.det(R)
    bad = np.flatnonzero((err_orth > ROTATION_TOLERANCE) | (np.abs(det - 1.0) > ROTATION_TOLERANCE))
    if bad.size:
        k = int(bad[0])
        raise KinematicsError(
            f"{name}[{k}] is not a rotation: max|R^T R - I| = {err_orth[k]:.3g}, det R = {det[k]:.9g}; "
            f"allowed: |R^T R - I| <= {ROTATION_TOLERANCE:g} and |det R - 1| <= {ROTATION_TOLERANCE:g}"
        )


def _as_poses(poses: Any, name: str = "poses") -> tuple[FloatArray, FloatArray]:
    """Accept (N, 4, 4) / (4, 4) homogeneous matrices or a tuple (R (N,3,3), p (N,3)).

    Returns contiguous (R (N,3,3), p (N,3)).
    """
    if isinstance(poses, tuple) and len(poses) == 2:
        R = _finite_array(poses[0], f"{name}[0] (rotations)")
        p = _finite_array(poses[1], f"{name}[1] (positions)")
        if R.shape == (3, 3):
            R = R[None]
        if p.shape == (3,):
            p = p[None]
        if R.ndim != 3 or R.shape[1:] != (3, 3) or p.ndim != 2 or p.shape[1] != 3 or len(R) != len(p):
            raise KinematicsError(
                f"{name} as (R, p) must have shapes (N, 3, 3) and (N, 3) with equal N >= 1, "
                f"got {R.shape} and {p.shape}"
            )
    else:
        T = _finite_array(poses, name)
        if T.shape == (4, 4):
            T = T[None]
        if T.ndim != 3 or T.shape[1:] != (4, 4):
            raise KinematicsError(f"{name} must have shape (N, 4, 4) or (4, 4) or be (R, p), got {T.shape}")
        bottom = np.abs(T[:, 3, :] - np.array([0.0, 0.0, 0.0, 1.0])).max(axis=1)
        if np.any(bottom > ROTATION_TOLERANCE):
            k = int(np.argmax(bottom))
            raise KinematicsError(f"{name}[{k}] bottom row must be (0, 0, 0, 1), got {T[k, 3]}")
        R = T[:, :3, :3]
        p = T[:, :3, 3]
    if len(R) < 1:
        raise KinematicsError(f"{name}: number of poses N = 0 is invalid: need N >= 1")
    _validate_rotations(R, name)
    return np.ascontiguousarray(R), np.ascontiguousarray(p)


def rotation_to_quaternion(R: ArrayLike) -> FloatArray:
    """Unit quaternion(s) (x, y, z, w), w >= 0, of rotation matrices (..., 3, 3)."""
    Ra = _finite_array(R, "R")
    if Ra.shape[-2:] != (3, 3):
        raise KinematicsError(f"R must have shape (..., 3, 3), got {Ra.shape}")
    flat = np.ascontiguousarray(Ra.reshape(-1, 3, 3))
    out = np.empty((len(flat), 4))
    for k in range(len(flat)):
        _rot_to_quat_kernel(flat[k], out[k])
    return out.reshape(Ra.shape[:-2] + (4,))


def euler_xyz(R: ArrayLike) -> FloatArray:
    """Intrinsic XYZ Euler angles (alpha, beta, gamma) [rad] with R = R_x(alpha) R_y(beta) R_z(gamma).

    This is the operator f_theta of Eq. 16 (scipy: ``Rotation.as_euler("XYZ")``).
    """
    Ra = _finite_array(R, "R")
    if Ra.shape[-2:] != (3, 3):
        raise KinematicsError(f"R must have shape (..., 3, 3), got {Ra.shape}")
    alpha = np.arctan2(-Ra[..., 1, 2], Ra[..., 2, 2])
    beta = np.arcsin(np.clip(Ra[..., 0, 2], -1.0, 1.0))
    gamma = np.arctan2(-Ra[..., 0, 1], Ra[..., 0, 0])
    return np.stack([alpha, beta, gamma], axis=-1)


def pose_vectors(T: ArrayLike) -> FloatArray:
    """Paper IV-B pose representation chi = (eps_x, eps_y, eps_z, eta, p_x, p_y, p_z) of (..., 4, 4)."""
    Ta = _finite_array(T, "T")
    if Ta.shape[-2:] != (4, 4):
        raise KinematicsError(f"T must have shape (..., 4, 4), got {Ta.shape}")
    quat = rotation_to_quaternion(Ta[..., :3, :3])
    return np.concatenate([quat, Ta[..., :3, 3]], axis=-1)


# --------------------------------------------------------------------------------------------
# Public SE(3) helpers
# --------------------------------------------------------------------------------------------
def se3_exp(xi: ArrayLike, h: float = 1.0) -> FloatArray:
    """Eq. 12: the 4x4 transform exp(h hat(xi)) of a constant strain ``xi`` over length ``h`` [m].

    Closed form with a power-series evaluation of the coefficients for small ``|h kappa|`` (exact
    limit, no 0/0).
    """
    x = _finite_array(xi, "xi")
    if x.shape != (6,):
        raise KinematicsError(f"xi must have shape (6,) = (kappa_x..z, sigma_x..z), got {x.shape}")
    if not math.isfinite(h):
        raise KinematicsError(f"h = {h!r} must be a finite arc length (m)")
    R = np.empty((3, 3))
    p = np.empty(3)
    _exp_se3_kernel(x, float(h), R, p)
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def se3_left_jacobian(xi: ArrayLike, h: float = 1.0) -> FloatArray:
    """6x6 left Jacobian J_l(h xi) of SE(3), ordering (angular, linear):

    d/dxi exp(h hat(xi)) = hat(J_l(h xi) h dxi) exp(h hat(xi)).
    """
    x = _finite_array(xi, "xi")
    if x.shape != (6,):
        raise KinematicsError(f"xi must have shape (6,), got {x.shape}")
    J = np.empty((6, 6))
    _left_jacobian_kernel(x, float(h), J)
    return J


# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SPCSModel:
    """SPCS kinematic model of one HSA rod (Eq. 9–13).

    Parameters
    ----------
    length:
        printed (initial) length ``L`` of the rod [m], > 0.
    n_segments:
        number ``n_S`` >= 1 of piecewise constant strain segments.
    cs_strains:
        names (from :data:`STRAIN_NAMES`) of the strains constant over the whole rod (Eq. 11,
        ``B_CS``); default twist and stretch.
    pcs_strains:
        names of the strains constant per segment (``B_PCS``); default bend and shear.
    segment_lengths:
        optional printed segment lengths [m] (each > 0, summing to ``length``); default equal.

    ``q = (phi0, q_CS, q_PCS_1, ..., q_PCS_nS)`` has ``n_q = 1 + n_CS + n_S n_PCS`` entries;
    ``q = 0`` is the straight rod at rest. Default: 11 variables for ``n_S = 2``.
    """

    length: float
    n_segments: int = 2
    cs_strains: tuple[str, ...] = ("kappa_z", "sigma_z")
    pcs_strains: tuple[str, ...] = ("kappa_x", "kappa_y", "sigma_x", "sigma_y")
    segment_lengths: tuple[float, ...] | None = None
    _seg_start: FloatArray = field(init=False, repr=False, compare=False)
    _amap: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        L = self.length
        if isinstance(L, bool) or not isinstance(L, (int, float, np.floating, np.integer)) or not (
            math.isfinite(float(L)) and float(L) > 0.0
        ):
            raise KinematicsError(f"SPCSModel.length = {L!r} is invalid: must be a finite number > 0 (m)")
        object.__setattr__(self, "length", float(L))
        nS = self.n_segments
        if isinstance(nS, bool) or not isinstance(nS, (int, np.integer)) or nS < 1:
            raise KinematicsError(f"SPCSModel.n_segments = {nS!r} is invalid: must be an integer >= 1")
        object.__setattr__(self, "n_segments", int(nS))
        cs = tuple(self.cs_strains)
        pcs = tuple(self.pcs_strains)
        for label, names in (("cs_strains", cs), ("pcs_strains", pcs)):
            for nm in names:
                if nm not in STRAIN_NAMES:
                    raise KinematicsError(
                        f"SPCSModel.{label} contains {nm!r}: allowed names are {', '.join(STRAIN_NAMES)}"
                    )
            if len(set(names)) != len(names):
                raise KinematicsError(f"SPCSModel.{label} = {names!r} contains duplicates")
        both = set(cs) & set(pcs)
        if both:
            raise KinematicsError(
                f"SPCSModel: strains {sorted(both)} are in both cs_strains and pcs_strains; "
                "each strain may be constant (CS) or piecewise constant (PCS), not both"
            )
        object.__setattr__(self, "cs_strains", cs)
        object.__setattr__(self, "pcs_strains", pcs)
        if self.segment_lengths is None:
            seg = np.linspace(0.0, self.length, self.n_segments + 1)
        else:
            lens = np.asarray(self.segment_lengths, dtype=np.float64)
            if lens.shape != (self.n_segments,) or not np.all(np.isfinite(lens)) or np.any(lens <= 0.0):
                raise KinematicsError(
                    f"SPCSModel.segment_lengths = {self.segment_lengths!r} is invalid: need "
                    f"{self.n_segments} finite lengths > 0 (m)"
                )
            if abs(lens.sum() - self.length) > 1e-9 * self.length:
                raise KinematicsError(
                    f"SPCSModel.segment_lengths sum to {lens.sum()!r} m: must equal length = {self.length!r} m"
                )
            object.__setattr__(self, "segment_lengths", tuple(float(v) for v in lens))
            seg = np.concatenate([[0.0], np.cumsum(lens)])
            seg[-1] = self.length
        seg.flags.writeable = False
        object.__setattr__(self, "_seg_start", seg)
        # xi_j = REST_STRAIN + A[j] q: columns (phi0, q_CS, q_PCS_0, ..., q_PCS_{nS-1})
        b_cs, b_pcs = self.strain_basis()
        n_cs, n_pcs = len(cs), len(pcs)
        amap = np.zeros((self.n_segments, 6, self.n_q))
        amap[:, :, 1 : 1 + n_cs] = b_cs
        for j in range(self.n_segments):
            start = 1 + n_cs + j * n_pcs
            amap[j, :, start : start + n_pcs] = b_pcs
        amap.flags.writeable = False
        object.__setattr__(self, "_amap", amap)

    # -- layout ---------------------------------------------------------------------------
    @property
    def n_q(self) -> int:
        """Number of configuration variables 1 + n_CS + n_S n_PCS."""
        return 1 + len(self.cs_strains) + self.n_segments * len(self.pcs_strains)

    @property
    def q_names(self) -> tuple[str, ...]:
        """Labels of q: ``phi0``, the CS names, then ``<name>[i]`` for segment i (0-based)."""
        names = ["phi0", *self.cs_strains]
        for j in range(self.n_segments):
            names += [f"{nm}[{j}]" for nm in self.pcs_strains]
        return tuple(names)

    @property
    def segment_starts(self) -> FloatArray:
        """Printed arc lengths of the segment boundaries, shape (n_S + 1,) [m]."""
        return self._seg_start

    @property
    def strain_map(self) -> FloatArray:
        """A of shape (n_S, 6, n_q) with xi_i = REST_STRAIN + A[i] q (Eq. 10; phi0 column zero)."""
        return self._amap

    def strain_basis(self) -> tuple[FloatArray, FloatArray]:
        """The bases (B_CS (6, n_CS), B_PCS (6, n_PCS)) of Eq. 11."""
        b_cs = np.zeros((6, len(self.cs_strains)))
        for c, nm in enumerate(self.cs_strains):
            b_cs[STRAIN_NAMES.index(nm), c] = 1.0
        b_pcs = np.zeros((6, len(self.pcs_strains)))
        for c, nm in enumerate(self.pcs_strains):
            b_pcs[STRAIN_NAMES.index(nm), c] = 1.0
        return b_cs, b_pcs

    # -- validation -----------------------------------------------------------------------
    def check_q(self, q: ArrayLike, name: str = "q") -> FloatArray:
        """Return q as a contiguous float array of length n_q or raise :class:`KinematicsError`."""
        qa = _finite_array(q, name)
        if qa.shape != (self.n_q,):
            raise KinematicsError(
                f"{name} has shape {qa.shape}: must be a 1-D array of length n_q = {self.n_q} "
                f"({', '.join(self.q_names)})"
            )
        return np.ascontiguousarray(qa)

    def check_s(self, s: ArrayLike, name: str = "s") -> FloatArray:
        """Return arc lengths as a 1-D array within [0, L] (m) or raise :class:`KinematicsError`."""
        sa = np.atleast_1d(_finite_array(s, name))
        if sa.ndim != 1:
            raise KinematicsError(f"{name} must be a scalar or 1-D array of arc lengths, got shape {sa.shape}")
        tol = 1e-12 * self.length
        bad = np.flatnonzero((sa < -tol) | (sa > self.length + tol))
        if bad.size:
            raise KinematicsError(
                f"{name}[{int(bad[0])}] = {sa[bad[0]]!r} m is outside the printed length: "
                f"must lie in [0, {self.length!r}] m"
            )
        return np.ascontiguousarray(np.clip(sa, 0.0, self.length))

    # -- kinematics -----------------------------------------------------------------------
    def strains(self, q: ArrayLike) -> FloatArray:
        """Strains xi_i of each segment (Eq. 10), shape (n_S, 6) [rad/m, -]."""
        return _strains_kernel(self.check_q(q), REST_STRAIN, self._amap)

    def q_from_strains(self, xi: ArrayLike, phi0: float = 0.0, *, atol: float = 1e-12) -> FloatArray:
        """Configuration q representing the segment strains ``xi`` (n_S, 6) and base angle ``phi0``.

        Raises if ``xi`` is not representable: CS strains must agree over segments and strains
        outside both bases must equal the rest strain (within ``atol``).
        """
        x = _finite_array(xi, "xi")
        if x.shape != (self.n_segments, 6):
            raise KinematicsError(f"xi must have shape (n_S, 6) = ({self.n_segments}, 6), got {x.shape}")
        A = self._amap
        q = np.zeros(self.n_q)
        q[0] = phi0
        dev = x - REST_STRAIN
        col = 1
        for nm in self.cs_strains:
            r = STRAIN_NAMES.index(nm)
            q[col] = dev[:, r].mean()
            col += 1
        for j in range(self.n_segments):
            for nm in self.pcs_strains:
                q[col] = dev[j, STRAIN_NAMES.index(nm)]
                col += 1
        back = REST_STRAIN + np.einsum("jrm,m->jr", A, q)
        err = np.abs(back - x).max()
        if err > atol:
            raise KinematicsError(
                f"xi is not representable by this SPCS basis (max deviation {err:.3g} > atol = {atol:g})"
            )
        return q

    def forward(self, q: ArrayLike, s: ArrayLike) -> FloatArray:
        """Poses T_B(s) (Eq. 13): (4, 4) for scalar s, else (n_s, 4, 4). Positions in m."""
        qa = self.check_q(q)
        sa = self.check_s(s)
        T = np.empty((len(sa), 4, 4))
        _fk_jac_kernel(qa, REST_STRAIN, self._amap, self._seg_start, sa, False, T, np.empty((0, 6, self.n_q)))
        return T[0] if np.ndim(s) == 0 else T

    def positions(self, q: ArrayLike, s: ArrayLike) -> FloatArray:
        """Backbone positions p(s) [m], (3,) for scalar s, else (n_s, 3)."""
        T = self.forward(q, s)
        return T[..., :3, 3]

    def forward_with_jacobian(self, q: ArrayLike, s: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """(T (n_s, 4, 4), J (n_s, 6, n_q)); J rows 0:3 = dp/dq, rows 3:6 = base-frame omega."""
        qa = self.check_q(q)
        sa = self.check_s(s)
        T = np.empty((len(sa), 4, 4))
        J = np.empty((len(sa), 6, self.n_q))
        _fk_jac_kernel(qa, REST_STRAIN, self._amap, self._seg_start, sa, True, T, J)
        if np.ndim(s) == 0:
            return T[0], J[0]
        return T, J

    def jacobian(self, q: ArrayLike, s: ArrayLike) -> FloatArray:
        """Analytic pose Jacobian, (6, n_q) for scalar s, else (n_s, 6, n_q).

        Rows 0:3: dp/dq [m per unit q]; rows 3:6: omega with dR = hat(omega dq) R (base frame).
        """
        return self.forward_with_jacobian(q, s)[1]

    def quaternion_jacobian(self, q: ArrayLike, s: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Pose vectors chi (n_s, 7) = (eps, eta, p) and the analytic J_A (n_s, 7, n_q) of IV-B."""
        qa = self.check_q(q)
        sa = self.check_s(s)
        T = np.empty((len(sa), 4, 4))
        J = np.empty((len(sa), 6, self.n_q))
        _fk_jac_kernel(qa, REST_STRAIN, self._amap, self._seg_start, sa, True, T, J)
        chi = np.empty((len(sa), 7))
        JA = np.empty((len(sa), 7, self.n_q))
        _quat_pose_jacobian(T, J, chi, JA)
        return chi, JA


# --------------------------------------------------------------------------------------------
# Inverse kinematics (IV-B)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class IKResult:
    """Result of an inverse-kinematics fit.

    ``q``: configuration (n_q,); ``success``: solver's convergence flag; ``n_iterations``:
    iterations (gradient) or residual evaluations (LM); ``position_rmse`` [m] and
    ``rotation_rmse`` [rad] (RMS of the rotation-vector error norm) over the N poses at ``q``.
    """

    q: FloatArray
    success: bool
    n_iterations: int
    position_rmse: float
    rotation_rmse: float
    message: str


def _prepare_ik(
    model: SPCSModel, poses: Any, s: ArrayLike, q0: ArrayLike | None, phi0: float | None
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    R, p = _as_poses(poses, "poses")
    sa = model.check_s(s)
    if len(sa) != len(R):
        raise KinematicsError(f"s has {len(sa)} arc lengths but poses has N = {len(R)}: they must match")
    q_init = np.zeros(model.n_q) if q0 is None else model.check_q(q0, "q0").copy()
    if phi0 is not None:
        if not math.isfinite(phi0):
            raise KinematicsError(f"phi0 = {phi0!r} must be a finite angle (rad) or None")
        q_init[0] = float(phi0)
    return R, p, sa, q_init


def _fit_errors(model: SPCSModel, q: FloatArray, s: FloatArray, R: FloatArray, p: FloatArray) -> tuple[float, float]:
    T = model.forward(q, s)
    ep = float(np.sqrt(np.mean(np.sum((T[:, :3, 3] - p) ** 2, axis=1))))
    D = np.einsum("nij,nkj->nik", T[:, :3, :3], R)
    rv = np.empty(3)
    ang = np.empty(len(D))
    for k in range(len(D)):
        _log_so3_kernel(np.ascontiguousarray(D[k]), rv)
        ang[k] = np.linalg.norm(rv)
    return ep, float(np.sqrt(np.mean(ang**2)))


def inverse_kinematics_lm(
    model: SPCSModel,
    poses: Any,
    s: ArrayLike,
    *,
    q0: ArrayLike | None = None,
    phi0: float | None = None,
    orientation_weight: float | None = None,
    xtol: float = 1e-12,
    ftol: float = 1e-12,
    gtol: float = 1e-12,
    max_nfev: int | None = None,
) -> IKResult:
    """Levenberg–Marquardt / Gauss–Newton fit of q to N measured poses at arc lengths ``s``.

    Residual per pose: position error ``p(q, s_i) - p_i`` [m] and the rotation-vector error
    ``w Log(R(q, s_i) R_i^T)`` [rad x w], with the exact analytic Jacobian. ``orientation_weight`` w
    [m/rad] (default 0.1 L, i.e. 0.01 m/rad for a 0.1 m rod: 1 mm of position ~ 0.1 rad) trades
    orientation against position; 0 ignores orientation. ``phi0`` [rad] fixes the base angle (read
    from the motor) instead of fitting it. ``poses``: (N, 4, 4) or (R (N, 3, 3), p (N, 3)).
    Uses MINPACK ``lm`` when there are at least as many residuals as free variables, else ``trf``.
    """
    R, p, sa, q_init = _prepare_ik(model, poses, s, q0, phi0)
    w = 0.1 * model.length if orientation_weight is None else float(orientation_weight)
    if not (math.isfinite(w) and w >= 0.0):
        raise KinematicsError(f"orientation_weight = {orientation_weight!r} must be a finite number >= 0 (m/rad)")
    free = np.arange(model.n_q) if phi0 is None else np.arange(1, model.n_q)
    n_res = 6 * len(sa)
    res = np.empty(n_res)
    jac_full = np.empty((n_res, model.n_q))
    qfull = q_init.copy()
    cache: dict[str, Any] = {"x": None}
    amap = model.strain_map
    seg = model.segment_starts

    def evaluate(x: FloatArray) -> None:
        if cache["x"] is not None and np.array_equal(cache["x"], x):
            return
        qfull[free] = x
        _lm_residual_kernel(qfull, REST_STRAIN, amap, seg, sa, R, p, w, res, jac_full)
        cache["x"] = x.copy()

    def fun(x: FloatArray) -> FloatArray:
        evaluate(x)
        return res.copy()

    def jac(x: FloatArray) -> FloatArray:
        evaluate(x)
        return jac_full[:, free].copy()

    method = "lm" if n_res >= len(free) else "trf"
    sol = least_squares(
        fun, q_init[free], jac=jac, method=method, xtol=xtol, ftol=ftol, gtol=gtol, max_nfev=max_nfev
    )
    q = q_init.copy()
    q[free] = sol.x
    ep, er = _fit_errors(model, q, sa, R, p)
    return IKResult(q=q, success=bool(sol.success), n_iterations=int(sol.nfev), position_rmse=ep,
                    rotation_rmse=er, message=str(sol.message))


def inverse_kinematics_gradient(
    model: SPCSModel,
    poses: Any,
    s: ArrayLike,
    *,
    q0: ArrayLike | None = None,
    phi0: float | None = None,
    step_size: float | ArrayLike = 0.2,
    max_iter: int = 10000,
    tol: float = 1e-10,
) -> IKResult:
    """Differential IK of Eq. 14: q <- q + lambda J_A^T (chi_d - chi(q)).

    chi = (eps_x, eps_y, eps_z, eta, p_x, p_y, p_z) per pose (unit quaternion, position in m);
    the measured quaternion's sign is aligned with the model's. ``step_size`` lambda: scalar or
    per-coordinate array of length n_q (the paper uses 0.2, and 1 for the twist strains); it must
    be small enough for stability (lambda < 2 / sigma_max(J_A)^2). ``phi0`` fixes the base angle.
    Stops when max |dq| < ``tol`` or after ``max_iter`` iterations (then ``success`` is False).
    """
    R, p, sa, q_init = _prepare_ik(model, poses, s, q0, phi0)
    step = _finite_array(step_size, "step_size")
    if step.ndim == 0:
        step = np.full(model.n_q, float(step))
    if step.shape != (model.n_q,) or np.any(step < 0.0):
        raise KinematicsError(f"step_size must be a number >= 0 or an array of n_q = {model.n_q} numbers >= 0")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise KinematicsError(f"max_iter = {max_iter!r} must be an integer >= 1")
    if not (math.isfinite(tol) and tol > 0.0):
        raise KinematicsError(f"tol = {tol!r} must be a finite number > 0")
    if phi0 is not None:
        step[0] = 0.0
    chi_d = np.concatenate([rotation_to_quaternion(R), p], axis=1)
    q, n_it, dq_max = _gradient_ik_kernel(
        q_init, step, REST_STRAIN, model.strain_map, model.segment_starts, sa, chi_d, int(max_iter), float(tol)
    )
    ok = bool(dq_max < tol and np.all(np.isfinite(q)))
    ep, er = _fit_errors(model, q, sa, R, p) if np.all(np.isfinite(q)) else (math.inf, math.inf)
    msg = f"converged: max|dq| = {dq_max:.3g} < tol" if ok else f"stopped after {n_it} iterations, max|dq| = {dq_max:.3g}"
    return IKResult(q=q, success=ok, n_iterations=int(n_it), position_rmse=ep, rotation_rmse=er, message=msg)


# --------------------------------------------------------------------------------------------
# Error metrics (IV-C)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ErrorMetrics:
    """Eq. 15–16: position RMSE ``e_p`` [m], quaternion-vector RMSE ``e_quat`` [-], and the
    RMSE of the XYZ Euler angles of R_true R_est^T, ``e_eul`` (alpha, beta, gamma) [rad]."""

    e_p: float
    e_quat: float
    e_eul: FloatArray


def error_metrics(true_poses: Any, estimated_poses: Any) -> ErrorMetrics:
    """Eq. 15–16 over all samples (time steps x poses, flattened) of equal-shape pose sets.

    Poses: (..., 4, 4) arrays or (R, p) tuples. The quaternion sign ambiguity is removed by
    choosing the sign of each estimated quaternion with a non-negative dot product with the true one.
    """

    def flat(x: Any, name: str) -> tuple[FloatArray, FloatArray]:
        if isinstance(x, tuple) and len(x) == 2:
            return _as_poses((np.reshape(x[0], (-1, 3, 3)), np.reshape(x[1], (-1, 3))), name)
        arr = np.asarray(x)
        if arr.ndim >= 2 and arr.shape[-2:] == (4, 4):
            arr = arr.reshape((-1, 4, 4))
        return _as_poses(arr, name)

    Rt, pt = flat(true_poses, "true_poses")
    Re, pe = flat(estimated_poses, "estimated_poses")
    if Rt.shape != Re.shape:
        raise KinematicsError(
            f"true_poses ({len(Rt)} poses) and estimated_poses ({len(Re)} poses) must have the same count"
        )
    e_p = float(np.sqrt(np.mean(np.sum((pe - pt) ** 2, axis=1))))
    qt = rotation_to_quaternion(Rt)
    qe = rotation_to_quaternion(Re)
    sign = np.where(np.sum(qt * qe, axis=1) < 0.0, -1.0, 1.0)
    e_quat = float(np.sqrt(np.mean(np.sum((sign[:, None] * qe[:, :3] - qt[:, :3]) ** 2, axis=1))))
    eul = euler_xyz(np.einsum("nij,nkj->nik", Rt, Re))
    e_eul = np.sqrt(np.mean(eul**2, axis=0))
    return ErrorMetrics(e_p=e_p, e_quat=e_quat, e_eul=e_eul)


# --------------------------------------------------------------------------------------------
# PyElastica rod → SE(3) poses
# --------------------------------------------------------------------------------------------
def rod_element_poses(
    position_collection: ArrayLike,
    director_collection: ArrayLike,
    printed_lengths: float | ArrayLike,
    base_pose: ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Element poses of a PyElastica rod in the kinematic base frame, at printed arc lengths.

    Parameters
    ----------
    position_collection: (3, n + 1) node positions [m] (lab frame).
    director_collection: (3, 3, n) directors (rows d1, d2, d3; lab → local).
    printed_lengths: total printed length [m] (uniform elements) or the n printed element lengths.
    base_pose: 4x4 pose of the kinematic base frame {S_B} in the lab frame (default identity);
        for a rod built along lab +z with ``normal`` +x from ``start``, use translation ``start``
        and identity rotation (the *un-actuated* base frame; the motor angle is phi0 of q).

    Returns
    -------
    s: (n,) printed arc lengths of the element centres [m];
    T: (n, 4, 4) poses with R = director.T (local z = tangent) and p = element midpoint.
    """
    x = _finite_array(position_collection, "position_collection")
    Q = _finite_array(director_collection, "director_collection")
    if x.ndim != 2 or x.shape[0] != 3 or Q.ndim != 3 or Q.shape[:2] != (3, 3) or x.shape[1] != Q.shape[2] + 1:
        raise KinematicsError(
            f"position_collection (3, n+1) and director_collection (3, 3, n) shapes mismatch: {x.shape}, {Q.shape}"
        )
    n = Q.shape[2]
    lens = _finite_array(printed_lengths, "printed_lengths")
    if lens.ndim == 0:
        lens = np.full(n, float(lens) / n)
    if lens.shape != (n,) or np.any(lens <= 0.0):
        raise KinematicsError(f"printed_lengths must be a length > 0 (m) or {n} element lengths > 0 (m)")
    s = np.cumsum(lens) - 0.5 * lens
    T = np.zeros((n, 4, 4))
    T[:, :3, :3] = np.transpose(Q, (2, 1, 0))  # R[k] = Q[:, :, k].T
    T[:, :3, 3] = 0.5 * (x[:, 1:] + x[:, :-1]).T
    T[:, 3, 3] = 1.0
    if base_pose is not None:
        B = _finite_array(base_pose, "base_pose")
        if B.shape != (4, 4):
            raise KinematicsError(f"base_pose must be a 4x4 homogeneous transform, got shape {B.shape}")
        _as_poses(B, "base_pose")
        Binv = np.eye(4)
        Binv[:3, :3] = B[:3, :3].T
        Binv[:3, 3] = -B[:3, :3].T @ B[:3, 3]
        T = np.einsum("ij,njk->nik", Binv, T)
    return s, T
