"""Inverse kinematics of the SPCS model (Section IV-B): Levenberg-Marquardt and the Eq. 14 iteration.

Both fit a configuration ``q`` of an :class:`~hsa_elastica.spcs.model.SPCSModel` to N measured
poses at printed arc lengths ``s``; :func:`inverse_kinematics_lm` uses the exact Jacobian of a
position + rotation-vector residual, :func:`inverse_kinematics_gradient` is the paper's
differential IK on quaternion pose vectors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import least_squares

from hsa_elastica.physics.rotations import rotation_vector_from_matrix
from hsa_elastica.spcs.lie import (
    KinematicsError,
    _as_poses,
    _finite_array,
    _so3_left_jacobian_inverse,
    rotation_to_quaternion,
)
from hsa_elastica.spcs.model import REST_STRAIN, SPCSModel, _fk_jac_kernel, _quat_pose_jacobian

__all__ = ["IKResult", "inverse_kinematics_gradient", "inverse_kinematics_lm"]

FloatArray = NDArray[np.float64]

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
        rv[0], rv[1], rv[2] = rotation_vector_from_matrix(D)
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
    hemisphere (q and -q are the same rotation). Stops when ``max |dq| < tol``.
    Returns ``(q, iterations, last max |dq|)``.
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
    ang = np.empty(len(D))
    for k in range(len(D)):
        ang[k] = np.linalg.norm(rotation_vector_from_matrix(np.ascontiguousarray(D[k])))
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
    Stops when ``max |dq| < tol`` or after ``max_iter`` iterations (then ``success`` is False).
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
