"""Mechanical energy of the discrete model: rods, platform and joints (for energy balances).

PyElastica's discrete rod (Gazzola et al. 2018) is not written as the gradient of one energy,
so these are the energies whose gradients its internal forces are to leading order:

* stretch/shear of element k (rest length ``l0``, dilatation ``e``, local strain ``sigma``):
  ``l0 [1/2 S_xx sigma_x^2 + 1/2 S_yy sigma_y^2 + S_zz (e - 1 - ln e)]`` [J].  The axial term
  is exact for PyElastica's axial force ``S_zz (e - 1) / e`` (``Q^T n / e``); the shear terms
  are the quadratic energy of ``n = S sigma``;
* bend/twist of Voronoi region k (rest length ``D0``, Voronoi dilatation ``E``, curvature
  ``kappa`` = rotation vector / ``D0``): ``1/2 D0 (kappa - kappa0)^T B (kappa - kappa0) / E^3``
  [J], whose derivative with respect to the rotation vector is PyElastica's couple
  ``B (kappa - kappa0) / E^3``;
* kinetic: ``1/2 m v^2`` per node and ``1/2 omega^T (J / e) omega`` per element (PyElastica's
  rotational inertia of a stretched element is ``J / e``); rigid body ``1/2 m v^2 +
  1/2 omega^T J omega``;
* platform joint (Eq. 6-7): ``1/2 k_F |r_p - x_tip|^2 + 1/2 k_tau |theta|^2`` with ``theta`` the
  joint's rotation error (:func:`~hsa_elastica.physics.joints.joint_torque_kernel`).

The differences between these energies and PyElastica's forces are of second order in the
strains (shear x stretch, curvature^2 x stretch); a conservative model conserves their sum to
that order (``tests/test_passivity.py``).  Units: J; inputs are PyElastica arrays in SI.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.joints import rotation_vector_from_matrix
from hsa_elastica.physics.rod_kernels import rotation_log_inplace

__all__ = [
    "rod_elastic_energy",
    "stretch_shear_energy",
    "rod_kinetic_energy",
    "rigid_body_kinetic_energy",
    "joint_energy",
]


@njit(cache=True)  # type: ignore[misc]
def stretch_shear_energy(
    position: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    rest_sigma: NDArray[np.float64],
    lengths: NDArray[np.float64],
) -> float:
    """``sum l0 [S_xx sx^2/2 + S_yy sy^2/2 + S_zz (e - 1 - ln e)]`` [J] of one rod (module
    docstring; the passive model's stretch/shear energy too); writes the element lengths [m]
    into ``lengths``."""
    q = director
    u = 0.0
    for k in range(rest_lengths.shape[0]):
        d0 = position[0, k + 1] - position[0, k]
        d1 = position[1, k + 1] - position[1, k]
        d2 = position[2, k + 1] - position[2, k]
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        lengths[k] = length
        l0 = rest_lengths[k]
        e = length / l0
        s0 = (q[0, 0, k] * d0 + q[0, 1, k] * d1 + q[0, 2, k] * d2) / l0 - rest_sigma[0, k]
        s1 = (q[1, 0, k] * d0 + q[1, 1, k] * d1 + q[1, 2, k] * d2) / l0 - rest_sigma[1, k]
        u += l0 * (
            0.5 * shear_matrix[0, 0, k] * s0 * s0
            + 0.5 * shear_matrix[1, 1, k] * s1 * s1
            + shear_matrix[2, 2, k] * (e - 1.0 - math.log(e))
        )
    return u


@njit(cache=True)  # type: ignore[misc]
def rod_elastic_energy(
    position: NDArray[np.float64],
    director: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
    rest_voronoi_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64],
    bend_matrix: NDArray[np.float64],
    rest_sigma: NDArray[np.float64],
    rest_kappa: NDArray[np.float64],
    voronoi_power: int = 3,
) -> float:
    """Stretch/shear + bend/twist energy [J] of one rod (module docstring), from its state.

    ``voronoi_power``: the bend/twist energy density is divided by ``E^voronoi_power``; 3 for
    PyElastica's rod (its couple ``B kappa / E^3``), 0 for the passive model's energy ``U``
    (:mod:`hsa_elastica.physics.variational_rod`, whose couple is ``B kappa``)."""
    ne = rest_lengths.shape[0]
    lengths = np.empty(ne)
    u = stretch_shear_energy(position, director, rest_lengths, shear_matrix, rest_sigma, lengths)
    theta = np.empty((3, max(ne - 1, 0)))
    rotation_log_inplace(director, theta)
    for k in range(ne - 1):
        d0v = rest_voronoi_lengths[k]
        big_e = 0.5 * (lengths[k] + lengths[k + 1]) / d0v
        r0 = theta[0, k] / d0v - rest_kappa[0, k]
        r1 = theta[1, k] / d0v - rest_kappa[1, k]
        r2 = theta[2, k] / d0v - rest_kappa[2, k]
        b = bend_matrix
        quad = (
            r0 * (b[0, 0, k] * r0 + b[0, 1, k] * r1 + b[0, 2, k] * r2)
            + r1 * (b[1, 0, k] * r0 + b[1, 1, k] * r1 + b[1, 2, k] * r2)
            + r2 * (b[2, 0, k] * r0 + b[2, 1, k] * r1 + b[2, 2, k] * r2)
        )
        u += 0.5 * d0v * quad / big_e**voronoi_power
    return u


@njit(cache=True)  # type: ignore[misc]
def rod_kinetic_energy(
    position: NDArray[np.float64],
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    mass: NDArray[np.float64],
    inertia: NDArray[np.float64],
    rest_lengths: NDArray[np.float64],
) -> float:
    """``sum 1/2 m v^2 + sum 1/2 omega^T (J / e) omega`` [J] of one rod."""
    t = 0.0
    for i in range(mass.shape[0]):
        t += 0.5 * mass[i] * (velocity[0, i] ** 2 + velocity[1, i] ** 2 + velocity[2, i] ** 2)
    for k in range(rest_lengths.shape[0]):
        d0 = position[0, k + 1] - position[0, k]
        d1 = position[1, k + 1] - position[1, k]
        d2 = position[2, k + 1] - position[2, k]
        e = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) / rest_lengths[k]
        w = omega[:, k]
        J = inertia[:, :, k]
        quad = 0.0
        for a in range(3):
            for b in range(3):
                quad += w[a] * J[a, b] * w[b]
        t += 0.5 * quad / e
    return t


@njit(cache=True)  # type: ignore[misc]
def rigid_body_kinetic_energy(
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    mass: NDArray[np.float64],
    inertia: NDArray[np.float64],
) -> float:
    """``sum 1/2 m v^2 + 1/2 omega^T J omega`` [J] of rigid bodies (body-frame omega)."""
    t = 0.0
    for k in range(mass.shape[0]):
        t += 0.5 * mass[k] * (velocity[0, k] ** 2 + velocity[1, k] ** 2 + velocity[2, k] ** 2)
        for a in range(3):
            for b in range(3):
                t += 0.5 * omega[a, k] * inertia[a, b, k] * omega[b, k]
    return t


@njit(cache=True)  # type: ignore[misc]
def joint_energy(
    rod_position: NDArray[np.float64],
    rod_director: NDArray[np.float64],
    node: int,
    element: int,
    platform_position: NDArray[np.float64],
    platform_director: NDArray[np.float64],
    body: int,
    attachment_point: NDArray[np.float64],
    rest_relative_orientation: NDArray[np.float64],
    k_F: float,
    k_tau: float,
) -> float:
    """Spring energy [J] of one platform joint (Eq. 6-7), same geometry as its kernels."""
    Qp = platform_director[:, :, body]
    gap = 0.0
    for i in range(3):
        r = Qp[0, i] * attachment_point[0] + Qp[1, i] * attachment_point[1] + Qp[2, i] * attachment_point[2]
        d = platform_position[i, body] + r - rod_position[i, node]
        gap += d * d
    Qt = rod_director[:, :, element]
    E = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            acc = 0.0
            for a in range(3):
                m_aj = 0.0
                for b in range(3):
                    m_aj += rest_relative_orientation[a, b] * Qt[b, j]
                acc += Qp[a, i] * m_aj
            E[i, j] = acc
    th0, th1, th2 = rotation_vector_from_matrix(E)
    return 0.5 * k_F * gap + 0.5 * k_tau * (th0 * th0 + th1 * th1 + th2 * th2)
