r"""Chain-rule part of the rod tangent for the one-way auxetic law (Eq. 2-5).

With the auxetic coupling (:func:`~hsa_elastica.physics.auxetic_law.auxetic_update`, one-way
law, filter off as in the static solve) a rod's rest lengths, rest Voronoi lengths and the
diagonals of its shear and bend matrices follow the handed twist strain of its present
directors.  :func:`~hsa_elastica.physics.rod_tangent.rod_tangent_band` holds them fixed; this
kernel adds their contribution, so that the sum is the derivative of "auxetic update, then
internal forces and couples" with respect to the rod's node positions and element rotation
increments (notation of :mod:`hsa_elastica.physics.rod_tangent`, Eq. 1-9; ``h`` handedness,
``pl``/``pv`` printed lengths / Voronoi lengths, ``S0``/``B0`` printed matrices):

* (10) ``kv_j = -h theta_{j,z} / pv_j``, so ``dkv_j = -h/pv_j [M_j (w_{j+1} - R_j w_j)]_z``;
  ``ke_e = (kv_{e-1} + kv_e) / 2`` (zero padded);
* (11) ``l0_e = (1 + eps(ke_e)) pl_e``, ``dl0_e = eps'(ke_e) pl_e dke_e``
  (:func:`~hsa_elastica.physics.auxetic_law.rest_strain_slope`, the rounded clip's slope);
  ``rv_j = (l0_j + l0_{j+1}) / 2``; with hysteresis (11') the law's input is the play's
  ``y(ke_e)`` and ``dl0_e = eps'(y) y'(ke_e) pl_e dke_e``
  (:func:`~hsa_elastica.physics.hysteresis.hysteretic_input`: ``y' = 1 - w`` inside the play,
  1 while it slides, the memory held as the static solver holds it);
* (12) ``S_xx = S_yy = S0 + alpha_c G' A kc``, ``S_zz = S0 + E' A kc + E'' A kc^2`` with
  ``kc = clip(ke, kappa_min, kappa_max)`` (slope 1 inside the range, 0 outside);
  ``B_xx = B_yy = B0 + b' kvc``, ``B_zz = (B0 + t' kvc + t'' kvc^2) rv / pv``;
* (13) element ``e`` at fixed ``x, Q``: ``df/dl0 = Q^T (n - S s) / l``,
  ``d(l0 p x n)/dl0 = p x (n - S s)``, ``df/dS_aa = Q^T e_a r_a / e``,
  ``d(l0 p x n)/dS_aa = l0 p x e_a r_a`` (``r = sigma - sigma0``);
* (14) Voronoi ``j``: ``da/drv = (3 c - B kappa) / (rv E^3)``,
  ``db/drv = 3 b / rv - kappa x B kappa / E^3``, ``da/dB_aa = e_a q_a / E^3``,
  ``db/dB_aa = rv kappa x e_a q_a / E^3`` (``q = kappa - kappa0``), ``B_zz`` also through
  ``rv`` (``dB_zz/drv = B_zz / rv``).

The response of the residual rows to one ``kv_m`` spans nodes ``m .. m+2`` and elements
``m-1 .. m+2``; its columns are the rotations of elements ``m`` and ``m+1``, hence the band's
half-bandwidth 14 (element ``m-1``'s couple row against element ``m+1``'s last rotation).  The rod's arrays must hold the rest configuration that
``auxetic_update`` wrote for the present directors, and the table row its strains
(``kappa_vor``, ``kappa_elem``).  Tested against central differences of
``auxetic_update`` + the force kernels (``tests/test_rod_tangent.py``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.auxetic_law import ALPHA_C, rest_law, rest_strain_slope
from hsa_elastica.physics.hysteresis import hysteretic_input
from hsa_elastica.physics.rod_tangent import HALF_BANDWIDTH, RodTangentState, voronoi_curvature
from hsa_elastica.physics.tables import CouplingTable
from hsa_elastica.physics.variational_rod import log_map_jacobian

__all__ = ["AuxeticTangentWork", "auxetic_tangent_work", "auxetic_tangent_band", "rest_slopes",
           "rest_slopes_of", "slope_coefficients"]


class AuxeticTangentWork(NamedTuple):
    """Scratch of :func:`auxetic_tangent_band` for a rod of N elements."""

    rv_a: NDArray[np.float64]  # (6, N-1) d(a, b)/drv: rows 0-2 da, 3-5 db
    kv_a: NDArray[np.float64]  # (6, N-1) the same for the direct dependence of B on kv
    z: NDArray[np.float64]  # (6, N-1) dkv/dw_j (0-2) and dkv/dw_{j+1} (3-5)
    ve: NDArray[np.float64]  # (15, N) response of the rows to ke_e (window 6e-3 .. 6e+11)
    y: NDArray[np.float64]  # (21,)
    mat: NDArray[np.float64]  # (3, 3, 3)
    vec: NDArray[np.float64]  # (3, 3)


@njit(cache=True)  # type: ignore[misc]
def auxetic_tangent_work(n_elems: int) -> AuxeticTangentWork:
    """:class:`AuxeticTangentWork` for a rod of ``n_elems`` elements."""
    nv = n_elems - 1
    return AuxeticTangentWork(np.empty((6, nv)), np.empty((6, nv)), np.empty((6, nv)),
                              np.empty((15, n_elems)), np.empty(21), np.empty((3, 3, 3)),
                              np.empty((3, 3)))


@njit(cache=True)  # type: ignore[misc]
def _voronoi_sensitivities(
    rod: RodTangentState, c: CouplingTable, i: int, work: AuxeticTangentWork
) -> None:
    """Eq. (10), (12), (14) per Voronoi ``j``: ``d(a, b)/drv_j`` into ``rv_a``,
    ``d(a, b)/dkv_j`` through ``B`` into ``kv_a``, ``dkv_j/dw`` into ``z``."""
    q = rod.director
    rot = work.mat[0]
    m_log = work.mat[1]
    theta = work.vec[1]
    # the table read before the loop (docs/architecture.md, "Rules for physics code")
    kmin = c.kappa_min[i]
    kmax = c.kappa_max[i]
    h = c.handedness[i]
    kappa_vor, printed_voronoi = c.kappa_vor[i], c.printed_voronoi[i]
    bend_slope, twist_slope, twist_quad = c.bend_slope[i], c.twist_slope[i], c.twist_quad[i]
    for j in range(rod.rest_voronoi_lengths.shape[0]):
        rv = rod.rest_voronoi_lengths[j]
        voronoi_curvature(q, j, rv, rot, theta)
        kap = (theta[0] / rv, theta[1] / rv, theta[2] / rv)
        qv = (kap[0] - rod.rest_kappa[0, j], kap[1] - rod.rest_kappa[1, j],
              kap[2] - rod.rest_kappa[2, j])
        B = rod.bend_matrix
        big_e = 0.5 * (_len(rod.position, j) + _len(rod.position, j + 1)) / rv
        ic = 1.0 / big_e**3
        cb = _mv(B, j, qv)
        bk = _mv(B, j, kap)
        # dB_aa/dkv (Eq. 12, clipped) and dB_zz/drv
        inside = 1.0 if kmin < kappa_vor[j] < kmax else 0.0
        kvc = min(max(kappa_vor[j], kmin), kmax)
        pv = printed_voronoi[j]
        db_dk = (inside * bend_slope, inside * bend_slope,
                 inside * (twist_slope + 2.0 * twist_quad * kvc) * rv / pv)
        bzz_rv = B[2, 2, j] / rv
        for r in range(3):
            # da/drv (with B_zz(rv)) and da/dkv (Eq. 14)
            work.rv_a[r, j] = ic * (3.0 * cb[r] - bk[r]) / rv + (ic * qv[2] * bzz_rv if r == 2 else 0.0)
            work.kv_a[r, j] = ic * db_dk[r] * qv[r]
        # b = rv kappa x c / E^3
        gz = (0.0, 0.0, qv[2] * bzz_rv)
        gk = (db_dk[0] * qv[0], db_dk[1] * qv[1], db_dk[2] * qv[2])
        for r in range(3):
            r1 = (r + 1) % 3
            r2 = (r + 2) % 3
            b_r = rv * ic * (kap[r1] * cb[r2] - kap[r2] * cb[r1])
            work.rv_a[3 + r, j] = (3.0 * b_r / rv - ic * (kap[r1] * bk[r2] - kap[r2] * bk[r1])
                                   + rv * ic * (kap[r1] * gz[r2] - kap[r2] * gz[r1]))
            work.kv_a[3 + r, j] = rv * ic * (kap[r1] * gk[r2] - kap[r2] * gk[r1])
        log_map_jacobian(theta[0], theta[1], theta[2], m_log)
        f = -h / printed_voronoi[j]
        for s in range(3):
            mr = m_log[2, 0] * rot[0, s] + m_log[2, 1] * rot[1, s] + m_log[2, 2] * rot[2, s]
            work.z[s, j] = -f * mr  # w_j
            work.z[3 + s, j] = f * m_log[2, s]  # w_{j+1}


@njit(cache=True, inline="always")  # type: ignore[misc]
def _mv(
    m: NDArray[np.float64], k: int, v: tuple[float, float, float]
) -> tuple[float, float, float]:
    """``m[:, :, k] v`` as a tuple (no allocation)."""
    return (m[0, 0, k] * v[0] + m[0, 1, k] * v[1] + m[0, 2, k] * v[2],
            m[1, 0, k] * v[0] + m[1, 1, k] * v[1] + m[1, 2, k] * v[2],
            m[2, 0, k] * v[0] + m[2, 1, k] * v[1] + m[2, 2, k] * v[2])


@njit(cache=True, inline="always")  # type: ignore[misc]
def _len(x: NDArray[np.float64], k: int) -> float:
    d0 = x[0, k + 1] - x[0, k]
    d1 = x[1, k + 1] - x[1, k]
    d2 = x[2, k + 1] - x[2, k]
    return math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) + 1e-14


@njit(cache=True, inline="always")  # type: ignore[misc]
def slope_coefficients(c: CouplingTable, i: int) -> tuple[float, float, float, float, float, float]:
    """Row ``i``'s stiffness-law coefficients the slopes read, ``(kappa_min, kappa_max, area,
    G_slope, E_slope, E_quad)`` (:func:`rest_slopes_of`)."""
    return (c.kappa_min[i], c.kappa_max[i], c.area[i], c.G_slope[i], c.E_slope[i], c.E_quad[i])


@njit(cache=True, inline="always")  # type: ignore[misc]
def rest_slopes_of(
    ke: float, law: tuple[float, float, float, float, float, float, float],
    play: tuple[float, int, float], memory: float, trial: float, printed_length: float,
    coefficients: tuple[float, float, float, float, float, float],
) -> tuple[float, tuple[float, float, float]]:
    """How an element's rest state moves with its handed twist strain ``ke`` [rad/m] (``law``
    = :func:`~hsa_elastica.physics.auxetic_law.rest_law`, ``play`` = the play's ``(weight,
    frozen, width)`` with the element's ``memory`` and ``trial`` [rad/m], its printed length
    [m], the :func:`slope_coefficients`): ``d l0_e / d ke_e`` [m^2/rad] (Eq. 11, through the
    hysteresis play, Eq. 11') and the diagonal ``d S_aa / d ke_e`` [N m/rad] (Eq. 12, 0 where
    the stiffness law is clipped).  Scalars only: the element loops call it per element."""
    y, dy = hysteretic_input(ke, play[0], play[1], play[2], memory, trial)
    dl0 = rest_strain_slope(y, *law) * dy * printed_length
    kmin, kmax, area, G_slope, E_slope, E_quad = coefficients
    inside = 1.0 if kmin < ke < kmax else 0.0
    kc = min(max(ke, kmin), kmax)
    dxy = inside * ALPHA_C * G_slope * area
    return dl0, (dxy, dxy, inside * (E_slope + 2.0 * E_quad * kc) * area)


@njit(cache=True, inline="always")  # type: ignore[misc]
def rest_slopes(
    c: CouplingTable, i: int, e: int,
    law: tuple[float, float, float, float, float, float, float],
) -> tuple[float, tuple[float, float, float]]:
    """:func:`rest_slopes_of` of element ``e`` of row ``i`` of the coupling table (``law`` =
    :func:`~hsa_elastica.physics.auxetic_law.rest_law` of it)."""
    return rest_slopes_of(  # type: ignore[no-any-return]
        c.kappa_elem[i][e], law, (c.play_weight[i], c.play_frozen[i], c.play_width[i]),
        c.play[i][e], c.play_trial[i][e], c.printed_lengths[i][e], slope_coefficients(c, i),
    )


@njit(cache=True)  # type: ignore[misc]
def _element_responses(
    rod: RodTangentState, c: CouplingTable, i: int, work: AuxeticTangentWork
) -> None:
    """Eq. (11)-(13): the rows' response ``ve[:, e]`` to ``ke_e`` (window: element e-1,
    node e, element e, node e+1, element e+1)."""
    x = rod.position
    n = rod.rest_lengths.shape[0]
    # the table read before the loop (docs/architecture.md, "Rules for physics code")
    law = rest_law(c, i)
    kappa_elem, printed, memory, trial = c.kappa_elem[i], c.printed_lengths[i], c.play[i], c.play_trial[i]
    play = (c.play_weight[i], c.play_frozen[i], c.play_width[i])
    coefficients = slope_coefficients(c, i)
    ve = work.ve
    for e in range(n):
        q = rod.director
        S = rod.shear_matrix
        l0 = rod.rest_lengths[e]
        d = (x[0, e + 1] - x[0, e], x[1, e + 1] - x[1, e], x[2, e + 1] - x[2, e])
        length = _len(x, e)
        qd = _mv(q, e, d)
        s = (qd[0] / l0, qd[1] / l0, qd[2] / l0)
        rr = (s[0] - rod.rest_sigma[0, e], s[1] - rod.rest_sigma[1, e],
              s[2] - 1.0 - rod.rest_sigma[2, e])
        dl0, ds = rest_slopes_of(kappa_elem[e], law, play, memory[e], trial[e], printed[e],
                                 coefficients)
        dil = length / l0
        # stress-space response g = (n - S s) dl0 / l + dS r / e  (force: Q^T g)
        g = work.vec[0]
        h = work.vec[1]  # for the shear couple: p x ((n - S s) dl0 + l0 dS r)
        p = work.vec[2]  # Q t
        n_v = _mv(S, e, rr)
        ss_v = _mv(S, e, s)
        for r in range(3):
            g[r] = (n_v[r] - ss_v[r]) * dl0 / length + ds[r] * rr[r] / dil
            h[r] = (n_v[r] - ss_v[r]) * dl0 + l0 * ds[r] * rr[r]
            p[r] = s[r] / dil
        for r in range(15):
            ve[r, e] = 0.0
        for r in range(3):
            fr = q[0, r, e] * g[0] + q[1, r, e] * g[1] + q[2, r, e] * g[2]
            ve[3 + r, e] = fr
            ve[9 + r, e] = -fr
            ve[6 + r, e] = p[(r + 1) % 3] * h[(r + 2) % 3] - p[(r + 2) % 3] * h[(r + 1) % 3]
        # rest Voronoi lengths j = e-1 (rows e-1 +, e -) and j = e (rows e +, e+1 -)
        half = 0.5 * dl0
        for r in range(3):
            if e >= 1:
                a = work.rv_a[r, e - 1]
                b = work.rv_a[3 + r, e - 1]
                ve[r, e] += half * (a + 0.5 * b)
                ve[6 + r, e] += half * (-a + 0.5 * b)
            if e <= n - 2:
                a = work.rv_a[r, e]
                b = work.rv_a[3 + r, e]
                ve[6 + r, e] += half * (a + 0.5 * b)
                ve[12 + r, e] += half * (-a + 0.5 * b)


@njit(cache=True)  # type: ignore[misc]
def auxetic_tangent_band(
    rod: RodTangentState, c: CouplingTable, i: int, work: AuxeticTangentWork,
    band: NDArray[np.float64],
) -> None:
    """Add the auxetic law's chain-rule part (module docstring) for the rod of row ``i`` of
    the coupling table ``c`` into ``band`` (the layout of
    :func:`~hsa_elastica.physics.rod_tangent.rod_tangent_band`, after it)."""
    _voronoi_sensitivities(rod, c, i, work)
    _element_responses(rod, c, i, work)
    n_rows = band.shape[0]
    y = work.y
    for m in range(rod.rest_voronoi_lengths.shape[0]):
        # response to kv_m: ke_m and ke_{m+1} each move by 1/2, and B_m directly
        for r in range(21):
            y[r] = 0.0
        for r in range(15):
            y[r] += 0.5 * work.ve[r, m]
            y[6 + r] += 0.5 * work.ve[r, m + 1]
        for r in range(3):
            a = work.kv_a[r, m]
            b = work.kv_a[3 + r, m]
            y[6 + r] += a + 0.5 * b
            y[12 + r] += -a + 0.5 * b
        row0 = 6 * m - 3
        for r in range(21):
            row = row0 + r
            if row < 0 or row >= n_rows or y[r] == 0.0:
                continue
            for s in range(3):
                band[row, 6 * m + 3 + s - row + HALF_BANDWIDTH] += y[r] * work.z[s, m]
                band[row, 6 * m + 9 + s - row + HALF_BANDWIDTH] += y[r] * work.z[3 + s, m]
