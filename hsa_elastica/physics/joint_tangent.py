"""Consistent tangent of the rod-end <-> body joint of Eq. 6-7 (:mod:`hsa_elastica.physics.joints`).

The joint's generalised forces are, in the static solver's order of one joint's twelve
unknowns and rows (:data:`JOINT_BLOCK`):

* rows: force on the rod node [N, lab], couple on the rod element [N m, element frame], force
  on the body [N, lab], couple on the body [N m, body frame];
* columns: the node position [m, lab], a rotation increment ``w_t`` of the element [rad, its
  own frame], the body position [m, lab], a rotation increment ``w_p`` of the body [rad, its own
  frame] -- the static solver's unknowns: a director turned by ``w`` becomes
  ``Q <- exp(-[w]) Q`` (``statics_kernels.perturb_colour``, the kinematic update at dt = 1),
  i.e. the frame turns by the lab rotation ``W = Q^T w``.

Derivation (``[a]`` the cross-product matrix, the sub-expressions from
:func:`~hsa_elastica.physics.joints.joint_force_terms` / ``joint_torque_terms``):

* Eq. 6, ``F = k_F (x_b + r - x_n) + nu_F (v_b + w x r - v_n)`` with ``r = Q_p^T a``,
  ``w = Q_p^T omega_p``: turning the body by ``W`` turns ``r`` and ``w x r`` with it, so
  ``dF/dW = -k_F [r] - nu_F [w x r]``; ``dF/dx_n = -k_F I``, ``dF/dx_b = k_F I``.  The body's
  couple ``T_b = Q_p t``, ``t = F x r``: ``dt = [F] dr - [r] dF`` and the frame term
  ``dT_b/dw_p += [T_b]`` (``Q_p`` itself turns).
* Eq. 7, ``tau_p = -k_tau theta - nu_tau (w_p - w_t)``, ``theta = log(E)``,
  ``E = Q_p^T C0 Q_t``: turning the body gives ``E <- exp([W_p]) E``, turning the element
  ``E <- E exp(-[W_t])``, so ``d theta/dW_p = J_l^-1(theta) = M^T`` and
  ``d theta/dW_t = -J_r^-1(theta) = -M`` with ``M`` the log map's Jacobian
  (:func:`~hsa_elastica.physics.variational_rod.log_map_jacobian`); the lab angular velocities
  turn with their frames (``d w/dW = -[w]``).  The couples ``T_b = Q_p tau_p`` and
  ``T_t = -Q_t tau_p`` add their frame terms ``[T_b]``, ``[T_t]``.

The velocities are held (the tangent is ``d/dx`` at the present velocities; the static
solver's are zero, where the damping terms drop out).

The velocity tangents (:func:`joint_force_velocity_tangent`,
:func:`joint_torque_velocity_tangent`) are the derivatives wrt the velocities of the same
unknowns at the present pose -- the node velocity [m/s, lab], the element's angular velocity
[rad/s, its own frame], the body's velocity [m/s, lab] and angular velocity [rad/s, its own
frame], in the order of :data:`JOINT_BLOCK` -- which the implicit integrator's Newton matrix
adds times ``gamma / (beta h)`` (:mod:`hsa_elastica.engines.implicit_tangent`).  Both laws
are linear in the velocities, through their damping terms alone:

* Eq. 6: ``dF/dv_n = -nu_F I``, ``dF/dv_b = nu_F I``, ``dF/domega_p = -nu_F [r] Q_p^T``
  (``w x r = -[r] Q_p^T omega_p``); the rows are ``+F``, ``-F`` and the body's couple
  ``T_b = -Q_p [r] F``.
* Eq. 7: ``d tau_p/domega_p = -nu_tau Q_p^T``, ``d tau_p/domega_t = nu_tau Q_t^T``; the rows
  are ``T_b = Q_p tau_p`` and ``T_t = -Q_t tau_p``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.joints import joint_force_terms, joint_torque_terms
from hsa_elastica.physics.mount_kernels import SystemLike
from hsa_elastica.physics.variational_rod import log_map_jacobian

__all__ = ["joint_force_tangent", "joint_torque_tangent", "joint_force_velocity_tangent",
           "joint_torque_velocity_tangent", "tangent_scratch", "skew_add",
           "frame_block", "JOINT_BLOCK", "NODE", "ELEMENT", "BODY_POS", "BODY_ROT"]

#: size of one joint's tangent block and the offsets of its four groups of three
JOINT_BLOCK = 12
NODE, ELEMENT, BODY_POS, BODY_ROT = 0, 3, 6, 9
#: 3 x 3 work matrices a tangent kernel takes (:func:`tangent_scratch`)
SCRATCH = 6


@njit(cache=True)  # type: ignore[misc]
def tangent_scratch() -> NDArray[np.float64]:
    """The work array of :func:`joint_force_tangent` / :func:`joint_torque_tangent`: made
    once by the caller, so that a tangent allocates nothing but what the force kernel's
    sub-expressions do."""
    return np.zeros((SCRATCH, 3, 3))


@njit(cache=True, inline="always")  # type: ignore[misc]
def skew_add(out: NDArray[np.float64], r0: int, c0: int, s: float, a0: float, a1: float,
              a2: float) -> None:
    """``out[r0:r0+3, c0:c0+3] += s [a]``."""
    out[r0, c0 + 1] -= s * a2
    out[r0, c0 + 2] += s * a1
    out[r0 + 1, c0] += s * a2
    out[r0 + 1, c0 + 2] -= s * a0
    out[r0 + 2, c0] -= s * a1
    out[r0 + 2, c0 + 1] += s * a0


@njit(cache=True, inline="always")  # type: ignore[misc]
def _skew(out: NDArray[np.float64], a0: float, a1: float, a2: float) -> NDArray[np.float64]:
    """``out = [a]`` (returned)."""
    out[:] = 0.0
    skew_add(out, 0, 0, 1.0, a0, a1, a2)
    return out


@njit(cache=True, inline="always")  # type: ignore[misc]
def frame_block(out: NDArray[np.float64], r0: int, c0: int, A: NDArray[np.float64],
                 G: NDArray[np.float64], B: NDArray[np.float64], s: float,
                 AG: NDArray[np.float64]) -> None:
    """``out[r0:r0+3, c0:c0+3] += s A G B^T`` (``A``, ``B`` directors ``Q``: lab -> local;
    ``AG`` work), in loops: numba's ``@`` calls BLAS, whose call costs more than these 54
    products."""
    for i in range(3):
        for j in range(3):
            AG[i, j] = A[i, 0] * G[0, j] + A[i, 1] * G[1, j] + A[i, 2] * G[2, j]
    for i in range(3):
        for j in range(3):
            out[r0 + i, c0 + j] += s * (AG[i, 0] * B[j, 0] + AG[i, 1] * B[j, 1]
                                        + AG[i, 2] * B[j, 2])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _rotate_to_local(Q: NDArray[np.float64], v0: float, v1: float, v2: float
                     ) -> tuple[float, float, float]:
    """``Q v``: a lab vector in the frame of the director ``Q``."""
    return (Q[0, 0] * v0 + Q[0, 1] * v1 + Q[0, 2] * v2,
            Q[1, 0] * v0 + Q[1, 1] * v1 + Q[1, 2] * v2,
            Q[2, 0] * v0 + Q[2, 1] * v1 + Q[2, 2] * v2)


@njit(cache=True)  # type: ignore[misc]
def joint_force_tangent(
    rod: SystemLike, node: int, body: SystemLike, b: int, attachment_point: NDArray[np.float64],
    k_F: float, nu_F: float, out: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Tangent of :func:`~hsa_elastica.physics.joints.joint_force_kernel` (Eq. 6) added into
    ``out`` (12, 12; rows and columns :data:`JOINT_BLOCK`, module docstring): N/m, N/rad,
    N m/m, N m/rad.  ``work``: :func:`tangent_scratch`."""
    r0, r1, r2, w0, w1, w2, f0, f1, f2 = joint_force_terms(rod, node, body, b, attachment_point,
                                                           k_F, nu_F)
    Qp = body[3][:, :, b]
    R, G, dt, AG, eye = _skew(work[0], r0, r1, r2), work[1], work[2], work[3], work[4]
    # G = dF/dW = -k_F [r] - nu_F [w x r] (lab rotation of the body)
    _skew(G, w1 * r2 - w2 * r1, w2 * r0 - w0 * r2, w0 * r1 - w1 * r0)
    for i in range(3):
        for j in range(3):
            G[i, j] = -k_F * R[i, j] - nu_F * G[i, j]
            eye[i, j] = 1.0 if i == j else 0.0
    for i in range(3):
        out[NODE + i, NODE + i] -= k_F
        out[NODE + i, BODY_POS + i] += k_F
        out[BODY_POS + i, NODE + i] += k_F
        out[BODY_POS + i, BODY_POS + i] -= k_F
    # forces against the body's rotation: +-G Q_p^T
    frame_block(out, NODE, BODY_ROT, eye, G, Qp, 1.0, AG)
    frame_block(out, BODY_POS, BODY_ROT, eye, G, Qp, -1.0, AG)
    # body couple T_b = Q_p t, t = F x r: dt = [F] dr - [r] dF, dr/dW = -[r]
    frame_block(out, BODY_ROT, NODE, Qp, R, eye, k_F, AG)
    frame_block(out, BODY_ROT, BODY_POS, Qp, R, eye, -k_F, AG)
    F = _skew(work[5], f0, f1, f2)
    for i in range(3):
        for j in range(3):
            dt[i, j] = -(F[i, 0] * R[0, j] + F[i, 1] * R[1, j] + F[i, 2] * R[2, j]) - (
                R[i, 0] * G[0, j] + R[i, 1] * G[1, j] + R[i, 2] * G[2, j])
    frame_block(out, BODY_ROT, BODY_ROT, Qp, dt, Qp, 1.0, AG)
    tb0, tb1, tb2 = _rotate_to_local(Qp, f1 * r2 - f2 * r1, f2 * r0 - f0 * r2, f0 * r1 - f1 * r0)
    skew_add(out, BODY_ROT, BODY_ROT, 1.0, tb0, tb1, tb2)


@njit(cache=True)  # type: ignore[misc]
def joint_torque_tangent(
    rod: SystemLike, element: int, body: SystemLike, b: int,
    rest_relative_orientation: NDArray[np.float64], k_tau: float, nu_tau: float,
    out: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Tangent of :func:`~hsa_elastica.physics.joints.joint_torque_kernel` (Eq. 7) added into
    ``out`` (12, 12; :data:`JOINT_BLOCK`, module docstring): N m/rad.  ``work``:
    :func:`tangent_scratch`; it holds the log map's Jacobian ``M`` at ``theta`` in
    ``work[0]`` on return (the free-twist mount's tangent reads it)."""
    terms = joint_torque_terms(rod, element, body, b, rest_relative_orientation, k_tau, nu_tau)
    Qp = body[3][:, :, b]
    Qt = rod[3][:, :, element]
    M, AG = work[0], work[3]
    log_map_jacobian(terms[0], terms[1], terms[2], M)
    # d tau_p / dW_p = -k M^T + nu [w_p], d tau_p / dW_t = k M - nu [w_t] (lab rotations)
    dp = _skew(work[1], terms[3], terms[4], terms[5])
    dt = _skew(work[2], terms[6], terms[7], terms[8])
    for i in range(3):
        for j in range(3):
            dp[i, j] = -k_tau * M[j, i] + nu_tau * dp[i, j]
            dt[i, j] = k_tau * M[i, j] - nu_tau * dt[i, j]
    tb0, tb1, tb2 = _rotate_to_local(Qp, terms[9], terms[10], terms[11])
    tt0, tt1, tt2 = _rotate_to_local(Qt, terms[9], terms[10], terms[11])
    frame_block(out, BODY_ROT, BODY_ROT, Qp, dp, Qp, 1.0, AG)
    frame_block(out, BODY_ROT, ELEMENT, Qp, dt, Qt, 1.0, AG)
    frame_block(out, ELEMENT, ELEMENT, Qt, dt, Qt, -1.0, AG)
    frame_block(out, ELEMENT, BODY_ROT, Qt, dp, Qp, -1.0, AG)
    skew_add(out, BODY_ROT, BODY_ROT, 1.0, tb0, tb1, tb2)
    skew_add(out, ELEMENT, ELEMENT, -1.0, tt0, tt1, tt2)  # T_t = -Q_t tau_p


@njit(cache=True)  # type: ignore[misc]
def joint_force_velocity_tangent(
    rod: SystemLike, node: int, body: SystemLike, b: int, attachment_point: NDArray[np.float64],
    k_F: float, nu_F: float, out: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Derivative of :func:`~hsa_elastica.physics.joints.joint_force_kernel` (Eq. 6) wrt the
    velocities of the joint's unknowns (module docstring) added into ``out`` (12, 12;
    :data:`JOINT_BLOCK`): N s/m, N s/rad, N m s/m, N m s/rad.  The lever ``r`` is the force
    kernel's sub-expression; ``work``: :func:`tangent_scratch`."""
    r0, r1, r2, _, _, _, _, _, _ = joint_force_terms(rod, node, body, b, attachment_point,
                                                     k_F, nu_F)
    Qp = body[3][:, :, b]
    R, RR, AG, eye = _skew(work[0], r0, r1, r2), work[1], work[3], work[4]
    for i in range(3):
        for j in range(3):
            RR[i, j] = R[i, 0] * R[0, j] + R[i, 1] * R[1, j] + R[i, 2] * R[2, j]
            eye[i, j] = 1.0 if i == j else 0.0
    for i in range(3):
        out[NODE + i, NODE + i] -= nu_F
        out[NODE + i, BODY_POS + i] += nu_F
        out[BODY_POS + i, NODE + i] += nu_F
        out[BODY_POS + i, BODY_POS + i] -= nu_F
    # dF/domega_p = -nu_F [r] Q_p^T on +F (node) and -F (body)
    frame_block(out, NODE, BODY_ROT, eye, R, Qp, -nu_F, AG)
    frame_block(out, BODY_POS, BODY_ROT, eye, R, Qp, nu_F, AG)
    # the body's couple T_b = -Q_p [r] F
    frame_block(out, BODY_ROT, NODE, Qp, R, eye, nu_F, AG)
    frame_block(out, BODY_ROT, BODY_POS, Qp, R, eye, -nu_F, AG)
    frame_block(out, BODY_ROT, BODY_ROT, Qp, RR, Qp, nu_F, AG)


@njit(cache=True)  # type: ignore[misc]
def joint_torque_velocity_tangent(
    rod: SystemLike, element: int, body: SystemLike, b: int, nu_tau: float,
    out: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Derivative of :func:`~hsa_elastica.physics.joints.joint_torque_kernel` (Eq. 7) wrt the
    angular velocities of the element and the body (module docstring) added into ``out``
    (12, 12; :data:`JOINT_BLOCK`) [N m s/rad].  Only the damper ``-nu_tau (w_p - w_t)`` of
    ``tau_p`` depends on them (neither the spring nor the rest orientation: the same for the
    motor mounts of :mod:`~hsa_elastica.physics.mounts`); ``work``: :func:`tangent_scratch`."""
    Qp = body[3][:, :, b]
    Qt = rod[3][:, :, element]
    eye, AG = work[4], work[3]
    for i in range(3):
        for j in range(3):
            eye[i, j] = 1.0 if i == j else 0.0
    frame_block(out, BODY_ROT, BODY_ROT, Qp, eye, Qp, -nu_tau, AG)
    frame_block(out, BODY_ROT, ELEMENT, Qp, eye, Qt, nu_tau, AG)
    frame_block(out, ELEMENT, BODY_ROT, Qt, eye, Qp, nu_tau, AG)
    frame_block(out, ELEMENT, ELEMENT, Qt, eye, Qt, -nu_tau, AG)
