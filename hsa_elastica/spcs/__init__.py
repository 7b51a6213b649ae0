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
(PyElastica's inverse-rotation kernel) equals the ``kappa`` of this module's ``dR/ds = R hat(kappa)``
measured per *rest* Voronoi length, and PyElastica's ``sigma = Q (x_{k+1}-x_k)/rest_length - e3``.
On the printed length, therefore ``kappa_SPCS = kappa_PE * rest_voronoi / printed_voronoi`` and
``sigma_SPCS = (sigma_PE + e3) * rest_length / printed_length``. :func:`rod_element_poses`
converts a rod's nodes and directors into poses ``T_B(s_k)`` at the printed element centres.

The package is split by concern: :mod:`~hsa_elastica.spcs.lie` (SE(3)/SO(3) math),
:mod:`~hsa_elastica.spcs.model` (:class:`SPCSModel`, FK, Jacobians),
:mod:`~hsa_elastica.spcs.ik` (inverse kinematics) and :mod:`~hsa_elastica.spcs.metrics`
(Eq. 15-16, rod poses).  All public names are re-exported here.
"""

from __future__ import annotations

from hsa_elastica.spcs.ik import IKResult, inverse_kinematics_gradient, inverse_kinematics_lm
from hsa_elastica.spcs.lie import (
    ROTATION_TOLERANCE,
    KinematicsError,
    euler_xyz,
    pose_vectors,
    rotation_to_quaternion,
    se3_exp,
    se3_left_jacobian,
)
from hsa_elastica.spcs.metrics import ErrorMetrics, error_metrics, rod_element_poses
from hsa_elastica.spcs.model import REST_STRAIN, STRAIN_NAMES, SPCSModel

__all__ = [
    "REST_STRAIN",
    "ROTATION_TOLERANCE",
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
