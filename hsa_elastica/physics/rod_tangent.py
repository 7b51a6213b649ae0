r"""Consistent tangent of one discrete Cosserat rod's elastic internal forces and couples.

The exact derivative of what :func:`~hsa_elastica.physics.rod_kernels.internal_forces_inplace`
and :func:`~hsa_elastica.physics.rod_kernels.internal_torques_inplace` (PyElastica 1.0's
``_compute_internal_forces`` / ``_compute_internal_torques``) return at zero velocities, with
respect to the static solver's unknowns of one rod: the node positions ``x_i`` [m] (3 per node)
and a rotation increment ``w_k`` [rad] per element, applied as the kinematic update does,
``Q_k <- R(w_k) Q_k`` with ``w_k`` in the element's local frame, i.e. ``dQ_k = -[w_k] Q_k``
(``[v]`` is the cross-product matrix of ``v``).  Rest lengths, rest Voronoi lengths, rest
strains and the shear/bend matrices are held fixed.  The finite-difference Jacobian of the
engines stays the fallback and the test oracle (``tests/test_rod_tangent.py``: central
differences of the two kernels, every entry within 1e-6 of its column's norm).  The derivation
follows the consistent linearisation of a geometrically exact rod (Grazioso, Di Gironimo &
Siciliano, Soft Robotics 6(6), 2019) applied to PyElastica's discretisation (Gazzola et al.
2018).

Notation (PyElastica's kernels; element ``k`` between nodes ``k`` and ``k+1``, Voronoi ``k``
between elements ``k`` and ``k+1``; ``Q`` rows are the directors, lab -> local):

* (1) ``d_k = x_{k+1} - x_k``, ``l = |d|``, ``t = d / l``, ``e = l / l0``;
  ``s = e Q t = Q d / l0``, ``sigma = s - d3``, ``n = S (sigma - sigma0)``;
* (2) element force ``f_k = Q^T n / e``; nodal force ``F_i = f_i - f_{i-1}``
  (``f_{-1} = f_N = 0``);
* (3) ``theta_k = log(Q_{k+1} Q_k^T)``, ``kappa = theta / rv0``, ``c = B (kappa - kappa0)``,
  ``E = (l_k + l_{k+1}) / (2 rv0)``, ``a_k = c / E^3``, ``b_k = rv0 (kappa x c) / E^3``;
* (4) element couple ``tau_k = a_k - a_{k-1} + (b_k + b_{k-1}) / 2 + l0 (Q t) x n``
  (``a, b`` zero outside ``0..N-2``; Lagrangian transport and unsteady dilatation vanish at
  zero velocity).

Variations (``p = Q t``, ``P = I - t t^T``):

* (5) ``dsigma = Q dd / l0 + [s] w``, ``de = t . dd / l0``;
* (6) ``df = (Q^T S Q - f t^T) / (e l0) dd + Q^T (S [s] - [n]) / e w``
  (from ``dQ^T = Q^T [w]``);
* (7) ``d(l0 p x n) = ([p] S Q - [n] Q P / e) dd + l0 ([p] S [s] - [n] [p]) w``;
* (8) ``dtheta_k = M (w_{k+1} - R w_k)`` with ``R = Q_{k+1} Q_k^T`` and ``M`` the log-map
  Jacobian :func:`~hsa_elastica.physics.variational_rod.log_map_jacobian`;
* (9) ``da = B dtheta / (rv0 E^3) - 3 a dE / E``,
  ``db = ([kappa] B - [c]) dtheta / E^3 - 3 b dE / E``,
  ``dE = (t_k . dd_k + t_{k+1} . dd_{k+1}) / (2 rv0)``.

Layout: the unknowns ordered along the rod, node 0, element 0, node 1, ..., element N-1, node N
(``6 N + 3`` of them; node ``i`` at ``6 i``, element ``k`` at ``6 k + 3``), the residual rows in
the same order (forces on nodes, couples on elements).  A row couples to the unknowns at most
11 places away (a couple through the Voronoi dilatation of its neighbours: node ``k+2`` from
element ``k``); the band has :data:`HALF_BANDWIDTH` = 14, the reach of the auxetic law's
chain rule (:mod:`hsa_elastica.physics.auxetic_tangent`: a Voronoi twist moves the rest lengths
of two elements and so the rest Voronoi lengths of three) and the static solver's band, so
that both add into one band ``band[r, c - r + 14]`` of shape ``(6 N + 3, 29)``, written by
:func:`rod_tangent_band`; :func:`band_to_dense` and :func:`band_to_dgbtrf` copy it to a dense
matrix (tests) or LAPACK's ``dgbtrf`` band storage (transposed, as
:mod:`hsa_elastica.engines.statics_linalg` factors it).  Held ends (a motor's node and element)
are the caller's: their rows and columns are dropped when the band is scattered.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.variational_rod import log_map_jacobian

__all__ = [
    "HALF_BANDWIDTH",
    "RodTangentState",
    "TangentWork",
    "tangent_work",
    "rod_tangent_band",
    "band_to_dense",
    "band_to_dgbtrf",
]

HALF_BANDWIDTH = 14


class RodTangentState(NamedTuple):
    """One rod's configuration and rest state (views of its slice of the rod block):
    ``position`` (3, N+1) [m], ``director`` (3, 3, N), ``rest_lengths`` (N,),
    ``rest_voronoi_lengths`` (N-1,) [m], ``rest_sigma`` (3, N), ``rest_kappa`` (3, N-1) [1/m],
    ``shear_matrix`` (3, 3, N) [N], ``bend_matrix`` (3, 3, N-1) [N m^2]."""

    position: NDArray[np.float64]
    director: NDArray[np.float64]
    rest_lengths: NDArray[np.float64]
    rest_voronoi_lengths: NDArray[np.float64]
    rest_sigma: NDArray[np.float64]
    rest_kappa: NDArray[np.float64]
    shear_matrix: NDArray[np.float64]
    bend_matrix: NDArray[np.float64]


class TangentWork(NamedTuple):
    """Scratch of :func:`rod_tangent_band`: element lengths/tangents and 3x3 / 3-vector slots."""

    length: NDArray[np.float64]  # (N,)
    tangent: NDArray[np.float64]  # (3, N)
    mat: NDArray[np.float64]  # (12, 3, 3)
    vec: NDArray[np.float64]  # (8, 3)


@njit(cache=True)  # type: ignore[misc]
def tangent_work(n_elems: int) -> TangentWork:
    """:class:`TangentWork` for a rod of ``n_elems`` elements."""
    return TangentWork(np.empty(n_elems), np.empty((3, n_elems)), np.empty((12, 3, 3)),
                       np.empty((8, 3)))


# --------------------------------------------------------------------------------------------
# 3x3 helpers (inlined; no allocation)
# --------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")  # type: ignore[misc]
def _hat(v: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``out = [v]`` (cross-product matrix)."""
    out[0, 0] = 0.0
    out[1, 1] = 0.0
    out[2, 2] = 0.0
    out[0, 1] = -v[2]
    out[1, 0] = v[2]
    out[0, 2] = v[1]
    out[2, 0] = -v[1]
    out[1, 2] = -v[0]
    out[2, 1] = v[0]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _mm(a: NDArray[np.float64], b: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``out = a b`` (``out`` distinct from ``a`` and ``b``)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _mtm(a: NDArray[np.float64], b: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """``out = a^T b``."""
    for i in range(3):
        for j in range(3):
            out[i, j] = a[0, i] * b[0, j] + a[1, i] * b[1, j] + a[2, i] * b[2, j]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _add_block(
    band: NDArray[np.float64], row: int, col: int, blk: NDArray[np.float64], scale: float
) -> None:
    """``band[row:row+3, col:col+3] += scale * blk`` in band storage."""
    for i in range(3):
        for j in range(3):
            band[row + i, col + j - row - i + HALF_BANDWIDTH] += scale * blk[i, j]


@njit(cache=True, inline="always")  # type: ignore[misc]
def _add_outer(
    band: NDArray[np.float64], row: int, col: int, g: NDArray[np.float64],
    t: NDArray[np.float64], k: int, scale: float,
) -> None:
    """``band[row:row+3, col:col+3] += scale * g t[:, k]^T`` in band storage."""
    for i in range(3):
        for j in range(3):
            band[row + i, col + j - row - i + HALF_BANDWIDTH] += scale * g[i] * t[j, k]


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------
@njit(cache=True)  # type: ignore[misc]
def _element_blocks(rod: RodTangentState, work: TangentWork, band: NDArray[np.float64]) -> None:
    """Eq. (1), (2), (5)-(7): the nodal forces' rows and the shear couple of each element."""
    x = rod.position
    mat = work.mat
    vec = work.vec
    q_t, sq, fd, tmp, tmp2, hn = mat[0], mat[1], mat[2], mat[3], mat[4], mat[5]
    hs, hp, q, S, shs = mat[6], mat[7], mat[8], mat[9], mat[10]  # S[s]: the product S [s]
    n_vec, s_vec, f_vec, p_vec = vec[0], vec[1], vec[2], vec[3]
    for k in range(rod.rest_lengths.shape[0]):
        for i in range(3):  # contiguous copies of the element's director and stiffness
            for j in range(3):
                q[i, j] = rod.director[i, j, k]
                S[i, j] = rod.shear_matrix[i, j, k]
        l0 = rod.rest_lengths[k]
        d0 = x[0, k + 1] - x[0, k]
        d1 = x[1, k + 1] - x[1, k]
        d2 = x[2, k + 1] - x[2, k]
        length = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) + 1e-14
        work.length[k] = length
        t = work.tangent
        t[0, k] = d0 / length
        t[1, k] = d1 / length
        t[2, k] = d2 / length
        e = length / l0
        for i in range(3):
            p_vec[i] = q[i, 0] * t[0, k] + q[i, 1] * t[1, k] + q[i, 2] * t[2, k]
            s_vec[i] = e * p_vec[i]
        r0 = s_vec[0] - rod.rest_sigma[0, k]
        r1 = s_vec[1] - rod.rest_sigma[1, k]
        r2 = s_vec[2] - 1.0 - rod.rest_sigma[2, k]
        for i in range(3):
            n_vec[i] = S[i, 0] * r0 + S[i, 1] * r1 + S[i, 2] * r2
        for i in range(3):
            f_vec[i] = (q[0, i] * n_vec[0] + q[1, i] * n_vec[1] + q[2, i] * n_vec[2]) / e
        _mm(S, q, sq)
        _mtm(q, sq, q_t)  # Q^T S Q
        for i in range(3):
            for j in range(3):
                fd[i, j] = (q_t[i, j] - f_vec[i] * t[j, k]) / (e * l0)  # Eq. (6), dd
        node = 6 * k
        elem = node + 3
        _add_block(band, node, node + 6, fd, 1.0)
        _add_block(band, node, node, fd, -1.0)
        _add_block(band, node + 6, node + 6, fd, -1.0)
        _add_block(band, node + 6, node, fd, 1.0)
        _hat(n_vec, hn)
        _hat(s_vec, hs)
        _mm(S, hs, shs)
        for i in range(3):
            for j in range(3):
                tmp[i, j] = (shs[i, j] - hn[i, j]) / e
        _mtm(q, tmp, tmp2)  # Eq. (6), w
        _add_block(band, node, elem, tmp2, 1.0)
        _add_block(band, node + 6, elem, tmp2, -1.0)
        # Eq. (7): shear couple l0 (Q t) x n
        _hat(p_vec, hp)
        _mm(hp, sq, tmp)  # [p] S Q
        _mm(hn, q, tmp2)  # [n] Q
        for i in range(3):
            for j in range(3):
                pq = (tmp2[i, 0] * t[0, k] + tmp2[i, 1] * t[1, k] + tmp2[i, 2] * t[2, k]) * t[j, k]
                fd[i, j] = tmp[i, j] - (tmp2[i, j] - pq) / e
        _add_block(band, elem, node + 6, fd, 1.0)
        _add_block(band, elem, node, fd, -1.0)
        _mm(hp, shs, tmp2)  # [p] S [s]
        _mm(hn, hp, tmp)  # [n] [p]
        for i in range(3):
            for j in range(3):
                fd[i, j] = l0 * (tmp2[i, j] - tmp[i, j])
        _add_block(band, elem, elem, fd, 1.0)


@njit(cache=True, inline="always")  # type: ignore[misc]
def voronoi_curvature(q: NDArray[np.float64], k: int, rv: float, rot: NDArray[np.float64],
                      theta: NDArray[np.float64]) -> None:
    """``rot`` = ``Q_{k+1} Q_k^T`` and ``theta`` = its rotation vector (PyElastica's
    ``_inv_rotate``, the ``1e-14`` of its angle included) [rad] at Voronoi region ``k``; the
    curvature is ``theta / rv`` (Eq. 3 of the module docstring)."""
    for i in range(3):
        for j in range(3):
            rot[i, j] = q[i, 0, k + 1] * q[j, 0, k] + q[i, 1, k + 1] * q[j, 1, k] + q[i, 2, k + 1] * q[j, 2, k]
    trace = min(max(rot[0, 0] + rot[1, 1] + rot[2, 2], -1.0), 3.0)
    angle = math.acos(0.5 * trace - 0.5) + 1e-14
    mag = -0.5 * angle / math.sin(angle)
    theta[0] = (rot[2, 1] - rot[1, 2]) * mag
    theta[1] = (rot[0, 2] - rot[2, 0]) * mag
    theta[2] = (rot[1, 0] - rot[0, 1]) * mag


@njit(cache=True)  # type: ignore[misc]
def _voronoi_blocks(rod: RodTangentState, work: TangentWork, band: NDArray[np.float64]) -> None:
    """Eq. (3), (4), (8), (9): the bend/twist couples' rows (after :func:`_element_blocks`,
    which leaves the element lengths and tangents in ``work``)."""
    q = rod.director
    mat = work.mat
    vec = work.vec
    m_log = mat[0]
    rot = mat[1]
    a_th = mat[2]  # B / (rv0 E^3)
    b_th = mat[3]  # ([kappa] B - [c]) / E^3
    g_th = mat[4]
    blk = mat[5]
    tmp = mat[6]
    hk = mat[7]
    B = mat[8]
    th = vec[0]
    kap = vec[1]
    cpl = vec[2]
    g_e = vec[3]
    a_v = vec[4]
    b_v = vec[5]
    for k in range(rod.rest_voronoi_lengths.shape[0]):
        for i in range(3):
            for j in range(3):
                B[i, j] = rod.bend_matrix[i, j, k]
        rv = rod.rest_voronoi_lengths[k]
        voronoi_curvature(q, k, rv, rot, th)
        for i in range(3):
            kap[i] = th[i] / rv
        r0 = kap[0] - rod.rest_kappa[0, k]
        r1 = kap[1] - rod.rest_kappa[1, k]
        r2 = kap[2] - rod.rest_kappa[2, k]
        for i in range(3):
            cpl[i] = B[i, 0] * r0 + B[i, 1] * r1 + B[i, 2] * r2
        big_e = 0.5 * (work.length[k] + work.length[k + 1]) / rv
        ic = 1.0 / big_e**3
        a_v[0] = cpl[0] * ic
        a_v[1] = cpl[1] * ic
        a_v[2] = cpl[2] * ic
        b_v[0] = (kap[1] * cpl[2] - kap[2] * cpl[1]) * rv * ic
        b_v[1] = (kap[2] * cpl[0] - kap[0] * cpl[2]) * rv * ic
        b_v[2] = (kap[0] * cpl[1] - kap[1] * cpl[0]) * rv * ic
        log_map_jacobian(th[0], th[1], th[2], m_log)
        _hat(kap, hk)
        _mm(hk, B, b_th)
        _hat(cpl, tmp)
        for i in range(3):
            for j in range(3):
                a_th[i, j] = B[i, j] * ic / rv
                b_th[i, j] = (b_th[i, j] - tmp[i, j]) * ic
        _voronoi_scatter(band, k, work, a_v, b_v, big_e, rv, (a_th, b_th, g_th, blk, tmp, m_log,
                                                                  rot), g_e)


@njit(cache=True, inline="always")  # type: ignore[misc]
def _voronoi_scatter(
    band: NDArray[np.float64], k: int, work: TangentWork, a_v: NDArray[np.float64],
    b_v: NDArray[np.float64], big_e: float, rv: float,
    mats: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                NDArray[np.float64]],
    g_e: NDArray[np.float64],
) -> None:
    """Voronoi ``k``'s share ``+-a_k + b_k / 2`` of the couples of elements ``k`` (``+``) and
    ``k+1`` (``-``), chained through Eq. (8) to the rotations and through ``dE`` (Eq. 9) to the
    nodes ``k .. k+2``."""
    a_th, b_th, g_th, blk, tmp, m_log, rot = mats
    t = work.tangent
    for side in range(2):
        sign = 1.0 if side == 0 else -1.0
        row = 6 * (k + side) + 3
        for i in range(3):
            for j in range(3):
                g_th[i, j] = sign * a_th[i, j] + 0.5 * b_th[i, j]
            g_e[i] = -3.0 * (sign * a_v[i] + 0.5 * b_v[i]) / big_e
        _mm(g_th, m_log, blk)
        _add_block(band, row, 6 * k + 9, blk, 1.0)  # element k+1
        _mm(blk, rot, tmp)
        _add_block(band, row, 6 * k + 3, tmp, -1.0)  # element k
        h = 0.5 / rv
        _add_outer(band, row, 6 * k + 6, g_e, t, k, h)  # d_k: node k+1 (+), node k (-)
        _add_outer(band, row, 6 * k, g_e, t, k, -h)
        _add_outer(band, row, 6 * k + 12, g_e, t, k + 1, h)  # d_{k+1}: node k+2, node k+1
        _add_outer(band, row, 6 * k + 6, g_e, t, k + 1, -h)


@njit(cache=True)  # type: ignore[misc]
def rod_tangent_band(rod: RodTangentState, work: TangentWork, band: NDArray[np.float64]) -> None:
    """The consistent tangent of one rod's internal forces and couples (module docstring) into
    ``band`` (6 N + 3, 2 * HALF_BANDWIDTH + 1): ``band[r, c - r + HALF_BANDWIDTH] = dF_r/du_c``
    (overwritten; entries outside the matrix stay zero)."""
    band[:] = 0.0
    _element_blocks(rod, work, band)
    _voronoi_blocks(rod, work, band)


@njit(cache=True)  # type: ignore[misc]
def band_to_dense(band: NDArray[np.float64], out: NDArray[np.float64]) -> None:
    """Copy the band of :func:`rod_tangent_band` into a dense ``out`` (6 N + 3, 6 N + 3)."""
    n = out.shape[0]
    out[:] = 0.0
    for r in range(n):
        for c in range(max(0, r - HALF_BANDWIDTH), min(n, r + HALF_BANDWIDTH + 1)):
            out[r, c] = band[r, c - r + HALF_BANDWIDTH]


@njit(cache=True)  # type: ignore[misc]
def band_to_dgbtrf(
    band: NDArray[np.float64], kl: int, ku: int, offset: int, abt: NDArray[np.float64]
) -> None:
    """Add the band of :func:`rod_tangent_band` into the transposed ``dgbtrf`` storage of a
    block whose unknowns ``offset ..`` are this rod's in the same order:
    ``abt[j, kl + ku + i - j] += A[i, j]`` (``kl, ku >= HALF_BANDWIDTH``)."""
    n = band.shape[0]
    for r in range(n):
        for c in range(max(0, r - HALF_BANDWIDTH), min(n, r + HALF_BANDWIDTH + 1)):
            abt[offset + c, kl + ku + r - c] += band[r, c - r + HALF_BANDWIDTH]
