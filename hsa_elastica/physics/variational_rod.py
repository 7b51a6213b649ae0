"""Exact-gradient (variational) internal forces of a discrete Cosserat rod: the passive model.

PyElastica's discrete rod (Gazzola et al. 2018) is not the gradient of one energy: its
stretch force ``Q^T n / e`` and shear couple ``(Q t x n) l0`` carry a factor ``1/e``, its
bend/twist couple ``B kappa / E^3`` has no matching axial force, and it uses the first-order
log-map term ``A(kappa x tau)``.  These terms are small, but they are circulatory: measured on
the paper robot (``benchmarks/circulation.py``) they let an undamped, twisted and loaded robot
flutter with growth rates of 10-30 1/s, whatever the auxetic law.  The passive model replaces
them by the exact gradient of the discrete energy (SI units, J)

    U = sum_i l_i [S_zz (e_i - 1 - ln e_i) + (S_xx sx_i^2 + S_yy sy_i^2) / 2]
        + sum_k theta_k . B_k theta_k / (2 D_k)

with, per element ``i``, the rest length ``l_i``, the dilatation ``e_i = |x_{i+1} - x_i| / l_i``
and the strain ``s_i = Q_i (x_{i+1} - x_i) / l_i - d3`` (PyElastica's ``sigma``), and per
Voronoi region ``k`` the rest length ``D_k`` and the rotation vector
``theta_k = log(Q_{k+1} Q_k^T)`` (PyElastica's ``kappa * D``).  The axial force
``S_zz (e - 1) / e`` is PyElastica's; the bend/twist couple is ``B kappa`` (PyElastica:
``B kappa / E^3``, equal at ``E = 1``).  With the auxetic rest lengths of Eq. 2-4 and the twist
couple conjugate to them (:func:`~hsa_elastica.physics.auxetic_law.reciprocal_twist_couple`)
the rod's elastic forces are the gradient of ``U`` at every configuration, so the coupled rod
and robot (joints and motors are conservative) cannot create energy.

:func:`variational_correction` adds (exact gradient - PyElastica's elastic forces) to a rod's
external forces and torques, so every path -- the :class:`AuxeticCoupling` operator on a stock
``CosseratRod`` and the compiled engines, which compute PyElastica's internal forces first --
evaluates the same exact-gradient forces from one kernel.  ``U`` itself is
:func:`hsa_elastica.physics.energy.rod_elastic_energy` with ``voronoi_power = 0`` (zero rest
strains).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray


__all__ = ["ElasticState", "elastic_state", "variational_correction", "log_map_jacobian"]


@njit(cache=True)  # type: ignore[misc]
def log_map_jacobian(t0: float, t1: float, t2: float, out: NDArray[np.float64]) -> None:
    """``M = I + [theta]/2 + a(theta) [theta]^2`` into ``out`` (3, 3), with
    ``a = 1/theta^2 - (1 + cos theta) / (2 theta sin theta)``: the rate of PyElastica's rotation
    vector ``theta = log(Q_{k+1} Q_k^T)`` when ``Q_{k+1}`` turns by ``w`` (its local frame,
    ``dQ = -[w] Q dt``): ``d theta = M w dt``; turning ``Q_k`` gives ``d theta = -M R w dt``
    with ``R = Q_{k+1} Q_k^T``."""
    th2 = t0 * t0 + t1 * t1 + t2 * t2
    th = math.sqrt(th2)
    if th < 1e-4:
        a = 1.0 / 12.0 + th2 / 720.0
    else:
        a = 1.0 / th2 - (1.0 + math.cos(th)) / (2.0 * th * math.sin(th))
    # [theta] = [[0, -t2, t1], [t2, 0, -t0], [-t1, t0, 0]];  [theta]^2 = theta theta^T - th2 I
    out[0, 0] = 1.0 + a * (t0 * t0 - th2)
    out[1, 1] = 1.0 + a * (t1 * t1 - th2)
    out[2, 2] = 1.0 + a * (t2 * t2 - th2)
    out[0, 1] = -0.5 * t2 + a * t0 * t1
    out[1, 0] = 0.5 * t2 + a * t0 * t1
    out[0, 2] = 0.5 * t1 + a * t0 * t2
    out[2, 0] = -0.5 * t1 + a * t0 * t2
    out[1, 2] = -0.5 * t0 + a * t1 * t2
    out[2, 1] = 0.5 * t0 + a * t1 * t2


class ElasticState(NamedTuple):
    """One rod's directors ``director`` (3, 3, n), rest configuration (``rest_lengths`` (n,),
    ``rest_voronoi_lengths`` (n-1,) [m], diagonal ``shear_matrix`` (3, 3, n) [N] and
    ``bend_matrix`` (3, 3, n-1) [N m^2]) and the strains and stresses of its last
    internal-force evaluation (``sigma`` (3, n), ``dilatation`` (n,), ``voronoi_dilatation``
    (n-1,), ``kappa`` (3, n-1) [1/m], ``internal_stress`` (3, n) [N]): what
    :func:`variational_correction` reads."""

    director: NDArray[np.float64]
    rest_lengths: NDArray[np.float64]
    rest_voronoi_lengths: NDArray[np.float64]
    shear_matrix: NDArray[np.float64]
    bend_matrix: NDArray[np.float64]
    sigma: NDArray[np.float64]
    dilatation: NDArray[np.float64]
    voronoi_dilatation: NDArray[np.float64]
    kappa: NDArray[np.float64]
    internal_stress: NDArray[np.float64]


def elastic_state(rod: Any) -> ElasticState:
    """The :class:`ElasticState` of a PyElastica ``CosseratRod`` (views of its arrays)."""
    return ElasticState(
        rod.director_collection, rod.rest_lengths, rod.rest_voronoi_lengths, rod.shear_matrix,
        rod.bend_matrix, rod.sigma, rod.dilatation, rod.voronoi_dilatation, rod.kappa,
        rod.internal_stress,
    )


@njit(cache=True)  # type: ignore[misc]
def variational_correction(
    rod: ElasticState,
    twist_couple: NDArray[np.float64],
    external_forces: NDArray[np.float64],
    external_torques: NDArray[np.float64],
    work: NDArray[np.float64],
) -> None:
    """Add (exact gradient of ``U`` - PyElastica's elastic forces) to one rod's
    ``external_forces`` [N] (3, n+1) and ``external_torques`` [N m] (3, n, local frames).

    Reads PyElastica's strains and stresses of this step (``sigma``, ``dilatation``,
    ``voronoi_dilatation``, ``kappa`` [1/m], ``internal_stress`` [N], as written by the rod's
    ``compute_internal_forces_and_torques``) and the current rest configuration
    (``rest_lengths``, ``rest_voronoi_lengths`` [m], diagonal ``shear_matrix`` [N] and
    ``bend_matrix`` [N m^2]) from ``rod``.  ``twist_couple`` (n-1,) [N m] is an extra
    ``dU/dtheta_z`` per Voronoi region (the reciprocal auxetic couple; zeros for none), turned
    into element torques with the exact log-map Jacobian.  Rest strains and curvatures must be
    zero (straight rods).  ``work`` is (3, n) scratch.  Module docstring: the energy ``U``.
    """
    (director, rest_lengths, rest_voronoi_lengths, shear_matrix, bend_matrix, sigma, dilatation,
     voronoi_dilatation, kappa, internal_stress) = rod
    _stretch_shear_correction(director, rest_lengths, shear_matrix, sigma, dilatation,
                              internal_stress, external_torques, work)
    n = rest_lengths.shape[0]
    _node_differences_add(work, n, external_forces)
    _bend_twist_correction(director, n, rest_voronoi_lengths, bend_matrix, kappa,
                           voronoi_dilatation, twist_couple, external_torques, work)


@njit(cache=True)  # type: ignore[misc]
def _stretch_shear_correction(
    director: NDArray[np.float64], rest_lengths: NDArray[np.float64],
    shear_matrix: NDArray[np.float64], sigma: NDArray[np.float64],
    dilatation: NDArray[np.float64], internal_stress: NDArray[np.float64],
    external_torques: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Stretch and shear, per element ``i``: the exact couple minus PyElastica's added to
    ``external_torques`` [N m] and the lab-frame force difference (exact - PyElastica's) of the
    element written into ``work[:, i]`` [N] (:func:`_node_differences_add` puts it on the
    nodes)."""
    n = rest_lengths.shape[0]
    # local exact gradient g = dU_i/ds_i / l_i
    for i in range(n):
        e = dilatation[i]
        s0, s1, s2 = sigma[0, i], sigma[1, i], sigma[2, i]
        gx = shear_matrix[0, 0, i] * s0
        gy = shear_matrix[1, 1, i] * s1
        a = shear_matrix[2, 2, i] * (1.0 - 1.0 / e) / e
        n0, n1, n2 = internal_stress[0, i], internal_stress[1, i], internal_stress[2, i]
        # local force difference: exact (gx + a s0, gy + a s1, a (s2 + 1)) - PyElastica n / e
        d0 = gx + a * s0 - n0 / e
        d1 = gy + a * s1 - n1 / e
        d2 = a * (s2 + 1.0) - n2 / e
        for r in range(3):
            work[r, i] = director[0, r, i] * d0 + director[1, r, i] * d1 + director[2, r, i] * d2
        # couple: exact l (s + d3) x (gx, gy, 0) - PyElastica l (s + d3)/e x n
        l0 = rest_lengths[i]
        u0, u1, u2 = s0, s1, s2 + 1.0
        external_torques[0, i] += l0 * ((u1 * 0.0 - u2 * gy) - (u1 * n2 - u2 * n1) / e)
        external_torques[1, i] += l0 * ((u2 * gx - u0 * 0.0) - (u2 * n0 - u0 * n2) / e)
        external_torques[2, i] += l0 * ((u0 * gy - u1 * gx) - (u0 * n1 - u1 * n0) / e)


@njit(cache=True)  # type: ignore[misc]
def _node_differences_add(
    work: NDArray[np.float64], n: int, external_forces: NDArray[np.float64]
) -> None:
    """Add the forces of the ``n`` elements in ``work`` (3, n) to ``external_forces`` (3, n+1)
    [N] as node differences: node ``i`` gets ``work[:, i] - work[:, i - 1]`` (the ends one
    term)."""
    for i in range(n + 1):
        for r in range(3):
            f = 0.0
            if i < n:
                f += work[r, i]
            if i > 0:
                f -= work[r, i - 1]
            external_forces[r, i] += f


@njit(cache=True)  # type: ignore[misc]
def _bend_twist_correction(
    director: NDArray[np.float64], n: int, rest_voronoi_lengths: NDArray[np.float64],
    bend_matrix: NDArray[np.float64], kappa: NDArray[np.float64],
    voronoi_dilatation: NDArray[np.float64], twist_couple: NDArray[np.float64],
    external_torques: NDArray[np.float64], work: NDArray[np.float64],
) -> None:
    """Bend and twist, per Voronoi region ``k`` of a rod of ``n`` elements: the exact torques of ``theta.B theta / (2 D)``
    plus ``twist_couple`` minus PyElastica's ``B kappa / E^3`` couples, added to
    ``external_torques`` [N m] of elements ``k`` and ``k + 1`` (``work[:, 0]``: scratch)."""
    m = np.empty((3, 3))
    for k in range(n - 1):
        dv = rest_voronoi_lengths[k]
        t0, t1, t2 = kappa[0, k] * dv, kappa[1, k] * dv, kappa[2, k] * dv
        c0 = bend_matrix[0, 0, k] * kappa[0, k]
        c1 = bend_matrix[1, 1, k] * kappa[1, k]
        c2 = bend_matrix[2, 2, k] * kappa[2, k]
        # PyElastica: c / E^3 (+ on k, - on k+1) and (theta x c / E^3) / 2 on both
        ic = 1.0 / voronoi_dilatation[k] ** 3
        p0, p1, p2 = c0 * ic, c1 * ic, c2 * ic
        x0 = 0.5 * (t1 * p2 - t2 * p1)
        x1 = 0.5 * (t2 * p0 - t0 * p2)
        x2 = 0.5 * (t0 * p1 - t1 * p0)
        external_torques[0, k] -= p0 + x0
        external_torques[1, k] -= p1 + x1
        external_torques[2, k] -= p2 + x2
        external_torques[0, k + 1] -= -p0 + x0
        external_torques[1, k + 1] -= -p1 + x1
        external_torques[2, k + 1] -= -p2 + x2
        # exact: element k+1 gets -M^T c, element k gets R^T M^T c (c = dU/dtheta)
        c2 += twist_couple[k]
        log_map_jacobian(t0, t1, t2, m)
        mt0 = m[0, 0] * c0 + m[1, 0] * c1 + m[2, 0] * c2
        mt1 = m[0, 1] * c0 + m[1, 1] * c1 + m[2, 1] * c2
        mt2 = m[0, 2] * c0 + m[1, 2] * c1 + m[2, 2] * c2
        external_torques[0, k + 1] -= mt0
        external_torques[1, k + 1] -= mt1
        external_torques[2, k + 1] -= mt2
        # R^T v (in frame k) = Q_k Q_{k+1}^T v
        for r in range(3):
            lab = director[0, r, k + 1] * mt0 + director[1, r, k + 1] * mt1 + director[2, r, k + 1] * mt2
            work[r, 0] = lab
        for r in range(3):
            external_torques[r, k] += (
                director[r, 0, k] * work[0, 0] + director[r, 1, k] * work[1, 0]
                + director[r, 2, k] * work[2, 0]
            )
