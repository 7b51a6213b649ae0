"""Allocation-free kernels of the discrete Cosserat rod and the rigid body (PyElastica 1.0).

Same arithmetic, in the same order, as PyElastica 1.0's kernels (named in each docstring), but
writing into the memory block's arrays and a workspace instead of allocating a dozen
temporaries per call.  PyElastica's own kernels remain the reference (the operator path uses
them); ``tests/test_fast.py`` compares each kernel with PyElastica's on random data.  These are
the rod internal forces (Gazzola et al. 2018) every engine evaluates: the fused stepper and the
static solver call them through :func:`hsa_elastica.physics.forces.evaluate_forces`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.tables import BodyBlockArrays, RodBlockArrays

__all__ = [
    "RodWork",
    "rod_work",
    "kinematic_update_inplace",
    "rotation_log_inplace",
    "internal_forces_inplace",
    "internal_torques_inplace",
    "rigid_body_accelerations",
]


class RodWork(NamedTuple):
    """Scratch arrays of the fused rod kernels (allocated once per :func:`advance` call)."""

    elem3: NDArray[np.float64]  # (3, n_elems)
    elem3b: NDArray[np.float64]  # (3, n_elems)
    vor3: NDArray[np.float64]  # (3, n_voronoi)
    vor3b: NDArray[np.float64]  # (3, n_voronoi)
    vor1: NDArray[np.float64]  # (n_voronoi,)
    rotation: NDArray[np.float64]  # (3, 3, max(n_elems, n_bodies))


@njit(cache=True)  # type: ignore[misc]
def rod_work(n_elems: int, n_bodies: int) -> RodWork:
    """:class:`RodWork` for a rod block of ``n_elems`` elements (ghosts included) and a
    rigid-body block of ``n_bodies`` bodies."""
    nv = max(n_elems - 1, 0)
    return RodWork(
        np.empty((3, n_elems)), np.empty((3, n_elems)), np.empty((3, nv)), np.empty((3, nv)),
        np.empty(nv), np.empty((3, 3, max(n_elems, n_bodies))),
    )


@njit(cache=True)  # type: ignore[misc]
def kinematic_update_inplace(
    prefac: float,
    position: NDArray[np.float64],
    director: NDArray[np.float64],
    velocity: NDArray[np.float64],
    omega: NDArray[np.float64],
    rotation: NDArray[np.float64],
) -> None:
    """PyElastica's ``overload_operator_kinematic_numba`` without temporaries.

    ``x += prefac v`` [m]; ``Q <- R(prefac omega) Q`` with Rodrigues' formula for the rotation
    of angle ``prefac |omega|`` [rad] about ``omega / (|omega| + 1e-14)`` (as
    ``_get_rotation_matrix``), the 3x3 product summed in ``_batch_matmul``'s order.
    ``rotation`` (3, 3, >= n_elems) is scratch space (the loops run along the last, contiguous
    axis so that LLVM vectorises them).
    """
    for i in range(3):
        for k in range(position.shape[1]):
            position[i, k] += prefac * velocity[i, k]
    n = director.shape[2]
    for k in range(n):
        v0 = omega[0, k]
        v1 = omega[1, k]
        v2 = omega[2, k]
        theta = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
        v0 /= theta + 1e-14
        v1 /= theta + 1e-14
        v2 /= theta + 1e-14
        theta *= prefac
        u = math.sin(theta)
        w = 1.0 - math.cos(theta)
        rotation[0, 0, k] = 1.0 - w * (v1 * v1 + v2 * v2)
        rotation[1, 1, k] = 1.0 - w * (v0 * v0 + v2 * v2)
        rotation[2, 2, k] = 1.0 - w * (v0 * v0 + v1 * v1)
        rotation[0, 1, k] = u * v2 + w * v0 * v1
        rotation[1, 0, k] = -u * v2 + w * v0 * v1
        rotation[0, 2, k] = -u * v1 + w * v0 * v2
        rotation[2, 0, k] = u * v1 + w * v0 * v2
        rotation[1, 2, k] = u * v0 + w * v1 * v2
        rotation[2, 1, k] = -u * v0 + w * v1 * v2
    for m in range(3):
        for k in range(n):
            d0 = director[0, m, k]
            d1 = director[1, m, k]
            d2 = director[2, m, k]
            director[0, m, k] = (
                (0.0 + rotation[0, 0, k] * d0) + rotation[0, 1, k] * d1
            ) + rotation[0, 2, k] * d2
            director[1, m, k] = (
                (0.0 + rotation[1, 0, k] * d0) + rotation[1, 1, k] * d1
            ) + rotation[1, 2, k] * d2
            director[2, m, k] = (
                (0.0 + rotation[2, 0, k] * d0) + rotation[2, 1, k] * d1
            ) + rotation[2, 2, k] * d2


# inlined into its caller: called with constant row indices, a separate function would be
# compiled once per combination of them (numba specialises on integer literals; 9 of them)
@njit(cache=True, inline="always")  # type: ignore[misc]
def _row_dot(director: NDArray[np.float64], i: int, j: int, k: int) -> float:
    """``Q_{k+1}[i, :] . Q_k[j, :]`` summed left to right (``_batch_matmul``'s order)."""
    return (
        director[i, 0, k + 1] * director[j, 0, k]
        + director[i, 1, k + 1] * director[j, 1, k]
        + director[i, 2, k + 1] * director[j, 2, k]
    )


@njit(cache=True)  # type: ignore[misc]
def rotation_log_inplace(director: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """PyElastica's ``_inv_rotate`` written into ``out`` (3, n-1): the rotation vector [rad]
    ``log(Q_{k+1} Q_k^T)`` (axis times angle, with ``theta = arccos((tr - 1) / 2) + 1e-14``
    and the trace clipped to [-1, 3]) between consecutive directors."""
    for k in range(director.shape[2] - 1):
        a0 = _row_dot(director, 2, 1, k) - _row_dot(director, 1, 2, k)
        a1 = _row_dot(director, 0, 2, k) - _row_dot(director, 2, 0, k)
        a2 = _row_dot(director, 1, 0, k) - _row_dot(director, 0, 1, k)
        trace = _row_dot(director, 0, 0, k) + _row_dot(director, 1, 1, k) + _row_dot(director, 2, 2, k)
        trace = min(trace, 3.0)
        trace = max(trace, -1.0)
        theta = math.acos(0.5 * trace - 0.5) + 1e-14
        magnitude = -0.5 * theta / math.sin(theta)
        out[0, k] = a0 * magnitude
        out[1, k] = a1 * magnitude
        out[2, k] = a2 * magnitude


@njit(cache=True)  # type: ignore[misc]
def internal_forces_inplace(rod: RodBlockArrays, work: RodWork) -> None:
    """PyElastica's ``_compute_internal_forces`` (Gazzola et al. 2018, Eq. 3.3-3.4 and the
    shear/stretch force ``Delta(Q^T S (sigma - sigma_0) / e)``) without temporaries.

    Updates ``lengths`` [m], ``tangents``, ``radius`` [m] (volume conserved), ``dilatation``,
    ``voronoi_dilatation``, ``sigma``, ``internal_stress`` [N] and ``internal_forces`` [N].
    """
    x = rod.position
    q = rod.director
    ne = rod.lengths.shape[0]
    for k in range(ne):
        d0 = 0.0 + (x[0, k + 1] - x[0, k])
        d1 = 0.0 + (x[1, k + 1] - x[1, k])
        d2 = 0.0 + (x[2, k + 1] - x[2, k])
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) + 1e-14
        rod.lengths[k] = length
        t0 = d0 / length
        t1 = d1 / length
        t2 = d2 / length
        rod.tangents[0, k] = t0
        rod.tangents[1, k] = t1
        rod.tangents[2, k] = t2
        rod.radius[k] = np.sqrt(rod.volume[k] / length / np.pi)
        e = length / rod.rest_lengths[k]
        rod.dilatation[k] = e
        # sigma = e Q t - d3;  n = S (sigma - sigma_0)
        s0 = e * (((0.0 + q[0, 0, k] * t0) + q[0, 1, k] * t1) + q[0, 2, k] * t2) - 0.0
        s1 = e * (((0.0 + q[1, 0, k] * t0) + q[1, 1, k] * t1) + q[1, 2, k] * t2) - 0.0
        s2 = e * (((0.0 + q[2, 0, k] * t0) + q[2, 1, k] * t1) + q[2, 2, k] * t2) - 1.0
        rod.sigma[0, k] = s0
        rod.sigma[1, k] = s1
        rod.sigma[2, k] = s2
        r0 = s0 - rod.rest_sigma[0, k]
        r1 = s1 - rod.rest_sigma[1, k]
        r2 = s2 - rod.rest_sigma[2, k]
        sm = rod.shear_matrix
        n0 = ((0.0 + sm[0, 0, k] * r0) + sm[0, 1, k] * r1) + sm[0, 2, k] * r2
        n1 = ((0.0 + sm[1, 0, k] * r0) + sm[1, 1, k] * r1) + sm[1, 2, k] * r2
        n2 = ((0.0 + sm[2, 0, k] * r0) + sm[2, 1, k] * r1) + sm[2, 2, k] * r2
        rod.internal_stress[0, k] = n0
        rod.internal_stress[1, k] = n1
        rod.internal_stress[2, k] = n2
        # Q^T n / e
        c = work.elem3
        c[0, k] = (((0.0 + q[0, 0, k] * n0) + q[1, 0, k] * n1) + q[2, 0, k] * n2) / e
        c[1, k] = (((0.0 + q[0, 1, k] * n0) + q[1, 1, k] * n1) + q[2, 1, k] * n2) / e
        c[2, k] = (((0.0 + q[0, 2, k] * n0) + q[1, 2, k] * n1) + q[2, 2, k] * n2) / e
    for k in range(ne - 1):
        rod.voronoi_dilatation[k] = (0.5 * (rod.lengths[k + 1] + rod.lengths[k])) / rod.rest_voronoi_lengths[k]
    _two_point_difference_into(work.elem3, rod.ghost_elems_idx, rod.internal_forces)


@njit(cache=True)  # type: ignore[misc]
def _two_point_difference_into(
    a: NDArray[np.float64], ghost_idx: NDArray[Any], out: NDArray[np.float64]
) -> None:
    """``_two_point_difference_for_block_structure(a, ghost_idx)`` written into ``out``
    (ghost entries of ``a`` are zeroed first, as PyElastica does)."""
    n = a.shape[1]
    for g in range(ghost_idx.shape[0]):
        for i in range(3):
            a[i, ghost_idx[g]] = 0.0
    for i in range(3):
        out[i, 0] = a[i, 0]
        out[i, n] = -a[i, n - 1]
        for k in range(1, n):
            out[i, k] = a[i, k] - a[i, k - 1]


@njit(cache=True)  # type: ignore[misc]
def _trapezoidal_into(
    a: NDArray[np.float64], ghost_idx: NDArray[Any], out: NDArray[np.float64]
) -> None:
    """``_trapezoidal_for_block_structure(a, ghost_idx)`` written into ``out``."""
    n = a.shape[1]
    for g in range(ghost_idx.shape[0]):
        for i in range(3):
            a[i, ghost_idx[g]] = 0.0
    for i in range(3):
        out[i, 0] = 0.5 * a[i, 0]
        out[i, n] = 0.5 * a[i, n - 1]
        for k in range(1, n):
            out[i, k] = 0.5 * (a[i, k] + a[i, k - 1])


@njit(cache=True)  # type: ignore[misc]
def internal_torques_inplace(
    rod: RodBlockArrays, work: RodWork, rotation_ready: bool = False
) -> None:
    """PyElastica's ``_compute_internal_torques`` (Gazzola et al. 2018, Eq. 2.14: bend/twist
    couple ``Delta(B (kappa - kappa_0) / E^3) + A(kappa x tau D / E^3)``, shear couple
    ``(Q t x n) l0``, Lagrangian transport and unsteady dilatation) without temporaries.

    Needs ``lengths``, ``tangents``, ``dilatation``, ``voronoi_dilatation`` and
    ``internal_stress`` from :func:`internal_forces_inplace` (as PyElastica's pair).  Updates
    ``kappa`` [1/m], ``internal_couple`` [N m], ``dilatation_rate`` [1/s] and
    ``internal_torques`` [N m].  ``rotation_ready``: ``work.vor3`` already holds
    :func:`rotation_log_inplace` of the present directors (it is computed otherwise).
    """
    if not rotation_ready:
        rotation_log_inplace(rod.director, work.vor3)
    # work.vor3 becomes the bend/twist couple / E^3, work.vor3b kappa x tau * D / E^3
    _bend_twist_couples(
        rod.rest_voronoi_lengths, rod.rest_kappa, rod.bend_matrix, rod.voronoi_dilatation,
        rod.kappa, rod.internal_couple, work.vor3, work.vor3b, work.vor1,
    )
    _two_point_difference_into(work.vor3, rod.ghost_voronoi_idx, work.elem3)
    _trapezoidal_into(work.vor3b, rod.ghost_voronoi_idx, work.elem3b)
    _element_torques(rod, work.elem3, work.elem3b)


@njit(cache=True)  # type: ignore[misc]
def _bend_twist_couples(
    rest_voronoi_lengths: NDArray[np.float64], rest_kappa: NDArray[np.float64],
    bend_matrix: NDArray[np.float64], voronoi_dilatation: NDArray[np.float64],
    kappa: NDArray[np.float64], internal_couple: NDArray[np.float64], a: NDArray[np.float64],
    b: NDArray[np.float64], inv_cube: NDArray[np.float64],
) -> None:
    """Per Voronoi region: the curvature ``kappa = theta / D`` [1/m] from the rotation vectors
    ``theta`` in ``a`` (3, n-1), the couple ``B (kappa - kappa_0)`` [N m] into
    ``internal_couple``, and, in place of ``theta``, ``a = couple / E^3``; ``b = (kappa x
    couple) D / E^3`` and ``inv_cube = 1 / E^3``."""
    bm = bend_matrix
    for k in range(rest_voronoi_lengths.shape[0]):
        rv = rest_voronoi_lengths[k]
        k0 = a[0, k] / rv
        k1 = a[1, k] / rv
        k2 = a[2, k] / rv
        kappa[0, k] = k0
        kappa[1, k] = k1
        kappa[2, k] = k2
        r0 = k0 - rest_kappa[0, k]
        r1 = k1 - rest_kappa[1, k]
        r2 = k2 - rest_kappa[2, k]
        c0 = ((0.0 + bm[0, 0, k] * r0) + bm[0, 1, k] * r1) + bm[0, 2, k] * r2
        c1 = ((0.0 + bm[1, 0, k] * r0) + bm[1, 1, k] * r1) + bm[1, 2, k] * r2
        c2 = ((0.0 + bm[2, 0, k] * r0) + bm[2, 1, k] * r1) + bm[2, 2, k] * r2
        internal_couple[0, k] = c0
        internal_couple[1, k] = c1
        internal_couple[2, k] = c2
        ic = 1.0 / voronoi_dilatation[k] ** 3
        inv_cube[k] = ic
        a[0, k] = c0 * ic
        a[1, k] = c1 * ic
        a[2, k] = c2 * ic
        b[0, k] = ((k1 * c2 - k2 * c1) * rv) * ic
        b[1, k] = ((k2 * c0 - k0 * c2) * rv) * ic
        b[2, k] = ((k0 * c1 - k1 * c0) * rv) * ic


@njit(cache=True)  # type: ignore[misc]
def _element_torques(
    rod: RodBlockArrays, couple_2d: NDArray[np.float64], couple_3d: NDArray[np.float64]
) -> None:
    """Per element: ``dilatation_rate`` [1/s] and ``internal_torques`` [N m] = the bend/twist
    couples' difference ``couple_2d`` and average ``couple_3d`` (3, n) + the shear couple
    ``(Q t x n) l0`` + Lagrangian transport ``(J w / e) x w`` + unsteady dilatation ``J w
    e_rate / e^2``."""
    q = rod.director
    x = rod.position
    v = rod.velocity
    J = rod.mass_second_moment_of_inertia
    w = rod.omega
    n = rod.internal_stress
    for k in range(rod.lengths.shape[0]):
        r_dot_v = ((0.0 + x[0, k] * v[0, k]) + x[1, k] * v[1, k]) + x[2, k] * v[2, k]
        r1_dot_v1 = ((0.0 + x[0, k + 1] * v[0, k + 1]) + x[1, k + 1] * v[1, k + 1]) + x[2, k + 1] * v[2, k + 1]
        r_dot_v1 = ((0.0 + x[0, k] * v[0, k + 1]) + x[1, k] * v[1, k + 1]) + x[2, k] * v[2, k + 1]
        r1_dot_v = ((0.0 + x[0, k + 1] * v[0, k]) + x[1, k + 1] * v[1, k]) + x[2, k + 1] * v[2, k]
        e = rod.dilatation[k]
        e_rate = (r_dot_v + r1_dot_v1 - r_dot_v1 - r1_dot_v) / rod.lengths[k] / rod.rest_lengths[k]
        rod.dilatation_rate[k] = e_rate
        t0 = rod.tangents[0, k]
        t1 = rod.tangents[1, k]
        t2 = rod.tangents[2, k]
        qt0 = ((0.0 + q[0, 0, k] * t0) + q[0, 1, k] * t1) + q[0, 2, k] * t2
        qt1 = ((0.0 + q[1, 0, k] * t0) + q[1, 1, k] * t1) + q[1, 2, k] * t2
        qt2 = ((0.0 + q[2, 0, k] * t0) + q[2, 1, k] * t1) + q[2, 2, k] * t2
        l0 = rod.rest_lengths[k]
        ss0 = (qt1 * n[2, k] - qt2 * n[1, k]) * l0
        ss1 = (qt2 * n[0, k] - qt0 * n[2, k]) * l0
        ss2 = (qt0 * n[1, k] - qt1 * n[0, k]) * l0
        w0 = w[0, k]
        w1 = w[1, k]
        w2 = w[2, k]
        jw0 = (((0.0 + J[0, 0, k] * w0) + J[0, 1, k] * w1) + J[0, 2, k] * w2) / e
        jw1 = (((0.0 + J[1, 0, k] * w0) + J[1, 1, k] * w1) + J[1, 2, k] * w2) / e
        jw2 = (((0.0 + J[2, 0, k] * w0) + J[2, 1, k] * w1) + J[2, 2, k] * w2) / e
        lt0 = jw1 * w2 - jw2 * w1
        lt1 = jw2 * w0 - jw0 * w2
        lt2 = jw0 * w1 - jw1 * w0
        rod.internal_torques[0, k] = couple_2d[0, k] + couple_3d[0, k] + ss0 + lt0 + jw0 * e_rate / e
        rod.internal_torques[1, k] = couple_2d[1, k] + couple_3d[1, k] + ss1 + lt1 + jw1 * e_rate / e
        rod.internal_torques[2, k] = couple_2d[2, k] + couple_3d[2, k] + ss2 + lt2 + jw2 * e_rate / e



@njit(cache=True)  # type: ignore[misc]
def rigid_body_accelerations(body: BodyBlockArrays) -> None:
    """``RigidBodyBase.update_accelerations`` (PyElastica 1.0) for the rigid-body block.

    ``a = F / m`` [m/s^2] and ``alpha = J^-1 ((J omega) x omega + tau)`` [rad/s^2] (body
    frame), with the products summed in ``_batch_matvec`` / ``_batch_cross`` order, without
    temporaries.
    """
    n = body.mass.shape[0]
    for i in range(3):
        for k in range(n):
            body.acceleration[i, k] = body.external_forces[i, k] / body.mass[k]
    J = body.mass_second_moment_of_inertia
    Ji = body.inv_mass_second_moment_of_inertia
    w = body.omega
    tau = body.external_torques
    for k in range(n):
        w0 = w[0, k]
        w1 = w[1, k]
        w2 = w[2, k]
        jw0 = ((0.0 + J[0, 0, k] * w0) + J[0, 1, k] * w1) + J[0, 2, k] * w2
        jw1 = ((0.0 + J[1, 0, k] * w0) + J[1, 1, k] * w1) + J[1, 2, k] * w2
        jw2 = ((0.0 + J[2, 0, k] * w0) + J[2, 1, k] * w1) + J[2, 2, k] * w2
        r0 = (jw1 * w2 - jw2 * w1) + tau[0, k]
        r1 = (jw2 * w0 - jw0 * w2) + tau[1, k]
        r2 = (jw0 * w1 - jw1 * w0) + tau[2, k]
        body.alpha[0, k] = ((0.0 + Ji[0, 0, k] * r0) + Ji[0, 1, k] * r1) + Ji[0, 2, k] * r2
        body.alpha[1, k] = ((0.0 + Ji[1, 0, k] * r0) + Ji[1, 1, k] * r1) + Ji[1, 2, k] * r2
        body.alpha[2, k] = ((0.0 + Ji[2, 0, k] * r0) + Ji[2, 1, k] * r1) + Ji[2, 2, k] * r2

