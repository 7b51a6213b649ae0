"""SE(3)/SO(3) math of the SPCS model: exponential (Eq. 12), left Jacobians, quaternions.

Trigonometric coefficients use exact power series at small angles (no 0/0).  The quaternion and
rotation-vector kernels are the package's single ones in
:mod:`hsa_elastica.physics.rotations`; this module adds the SE(3) exponential and Jacobians, the
pose-vector representation of Section IV-B and the input checks shared by the SPCS modules.
Conventions: see :mod:`hsa_elastica.spcs`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from hsa_elastica.physics.rotations import rotation_matrix_to_quaternion

__all__ = [
    "KinematicsError",
    "ROTATION_TOLERANCE",
    "euler_xyz",
    "pose_vectors",
    "rotation_to_quaternion",
    "se3_exp",
    "se3_left_jacobian",
]

FloatArray = NDArray[np.float64]

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
        out[k] = rotation_matrix_to_quaternion(flat[k])
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
