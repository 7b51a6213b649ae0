"""Contact between two rods as a law: their elements as capsules, the obstacles' law between
the closest points of every element pair (docs/contact.md, "Rod against rod").

Element ``i`` of rod A (nodes ``x_i``, ``x_{i+1}``, radius ``r_a``) and element ``j`` of rod B
(radius ``r_b``) touch where their centre-line segments come closest: ``p_a = x_i + s e_a``,
``p_b = y_j + t e_b`` (``e`` the element vectors, ``s, t`` in [0, 1]; :func:`closest_points`,
the segment-segment distance of PyElastica's ``RodRodContact`` geometry).  With
``d = p_a - p_b``, the gap is ``g = |d| - r_a - r_b``, the normal ``n = d / |d|`` (B to A) and
the relative velocity ``v = v_a(s) - v_b(t)`` (the nodes' velocities interpolated with the same
weights).  The force on A at ``p_a`` is the obstacles' law
(:func:`~hsa_elastica.physics.contact_laws.law_force`, the same function) with the pair's
reduced mass ``m_a m_b / (m_a + m_b)`` (``m``: an element's mass, the mean of its nodes');
it is split onto A's two nodes as ``(1 - s, s)`` and its negative onto B's as ``(1 - t, t)``:
the total force is zero pair by pair (momentum conserved to round-off).

No couples: as against obstacles, the force acts on the centre lines with their velocities
(rolling of one rod on the other is not modelled); the friction's moment about the centre
lines, ``(r_a + r_b) |f_t|``, is left out, which keeps the law a function of the node positions
and velocities only (the rotations do not enter its tangent).

Parallel segments (the closest points not unique) take the middle of their overlap, so that a
pair of aligned elements pushes at their centres; where two rods lie along each other each
node also touches the neighbouring elements at the shared node, so a line contact is stiffer
per length than a crossing: the equilibrium force is the same, the penetration smaller.

Broad phase (:func:`rod_rod_forces`): the bounding box of rod B (grown by its largest radius
and the law's reach, :data:`~hsa_elastica.physics.contact_laws.FAR_SMOOTHING_LENGTHS`
smoothing lengths) against each element of A, then each element of B's box against that
element's: pairs farther apart than the law's reach cost a few comparisons.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.contact_laws import (
    FAR_SMOOTHING_LENGTHS,
    SPHERE,
    ContactLaw,
    ContactOutput,
    ContactPoints,
    ObstacleGeometry,
    contact_tangent,
    law_force,
)

__all__ = ["closest_points", "rod_rod_forces", "segment_pair_forces", "segment_pair_tangent",
           "rod_rod_tangent", "csc_add", "PARALLEL_TOLERANCE"]

#: segments whose ``1 - cos^2`` of the angle between them is below this are parallel (the
#: closest points are then the middle of the overlap)
PARALLEL_TOLERANCE = 1e-12


@njit(cache=True)  # type: ignore[misc]
def _clamp(x: float) -> float:
    return 0.0 if x < 0.0 else (1.0 if x > 1.0 else x)


@njit(cache=True)  # type: ignore[misc]
def closest_points(
    a: tuple[float, float, float], ea: tuple[float, float, float],
    b: tuple[float, float, float], eb: tuple[float, float, float],
) -> tuple[float, float]:
    """Parameters ``(s, t)`` in [0, 1] of the closest points ``a + s ea`` and ``b + t eb`` of
    two segments (Ericson, Real-Time Collision Detection, 5.1.9; parallel segments: the middle
    of the overlap of their projections, else the nearest ends)."""
    r = (a[0] - b[0], a[1] - b[1], a[2] - b[2])
    aa = ea[0] * ea[0] + ea[1] * ea[1] + ea[2] * ea[2]
    ee = eb[0] * eb[0] + eb[1] * eb[1] + eb[2] * eb[2]
    f = eb[0] * r[0] + eb[1] * r[1] + eb[2] * r[2]
    c = ea[0] * r[0] + ea[1] * r[1] + ea[2] * r[2]
    bb = ea[0] * eb[0] + ea[1] * eb[1] + ea[2] * eb[2]
    denom = aa * ee - bb * bb
    if denom > PARALLEL_TOLERANCE * aa * ee:
        s = _clamp((bb * f - c * ee) / denom)
    else:  # parallel: B's ends projected on A, the middle of the overlap with [0, 1]
        s0, s1 = -c / aa, (bb - c) / aa
        lo, hi = max(min(s0, s1), 0.0), min(max(s0, s1), 1.0)
        s = 0.5 * (lo + hi) if lo <= hi else (0.0 if max(s0, s1) < 0.0 else 1.0)
    t = (bb * s + f) / ee
    if t < 0.0:
        return _clamp(-c / aa), 0.0
    if t > 1.0:
        return _clamp((bb - c) / aa), 1.0
    return s, t


@njit(cache=True)  # type: ignore[misc]
def _pair(
    xa: NDArray[np.float64], va: NDArray[np.float64], i: int,
    xb: NDArray[np.float64], vb: NDArray[np.float64], j: int,
    radii: float, mass: float, law: ContactLaw,
) -> tuple[float, float, float, float, float, float, float]:
    """Element ``i`` of A against element ``j`` of B: ``(s, t, g, f0, f1, f2, slip)``, the
    force on A (0 beyond the law's reach)."""
    s, t = closest_points((xa[0, i], xa[1, i], xa[2, i]),
                          (xa[0, i + 1] - xa[0, i], xa[1, i + 1] - xa[1, i], xa[2, i + 1] - xa[2, i]),
                          (xb[0, j], xb[1, j], xb[2, j]),
                          (xb[0, j + 1] - xb[0, j], xb[1, j + 1] - xb[1, j], xb[2, j + 1] - xb[2, j]))
    sa, ta = 1.0 - s, 1.0 - t
    d0 = (sa * xa[0, i] + s * xa[0, i + 1]) - (ta * xb[0, j] + t * xb[0, j + 1])
    d1 = (sa * xa[1, i] + s * xa[1, i + 1]) - (ta * xb[1, j] + t * xb[1, j + 1])
    d2 = (sa * xa[2, i] + s * xa[2, i + 1]) - (ta * xb[2, j] + t * xb[2, j + 1])
    dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    g = dist - radii
    if g > FAR_SMOOTHING_LENGTHS * law.smoothing_length:
        return s, t, g, 0.0, 0.0, 0.0, 0.0
    w0 = (sa * va[0, i] + s * va[0, i + 1]) - (ta * vb[0, j] + t * vb[0, j + 1])
    w1 = (sa * va[1, i] + s * va[1, i + 1]) - (ta * vb[1, j] + t * vb[1, j + 1])
    w2 = (sa * va[2, i] + s * va[2, i + 1]) - (ta * vb[2, j] + t * vb[2, j + 1])
    if dist < 1e-300:  # centre lines crossing: any normal is as good (as contact_laws._surface)
        n0, n1, n2 = 0.0, 0.0, 1.0
    else:
        n0, n1, n2 = d0 / dist, d1 / dist, d2 / dist
    f0, f1, f2, slip = law_force(g, n0, n1, n2, w0, w1, w2, mass, law)
    return s, t, g, f0, f1, f2, slip


@njit(cache=True)  # type: ignore[misc]
def _box(x: NDArray[np.float64], grow: float) -> tuple[float, float, float, float, float, float]:
    """Bounding box ``(lo0, lo1, lo2, hi0, hi1, hi2)`` of the points ``x`` (3, n), grown by
    ``grow`` [m]."""
    lo0 = hi0 = x[0, 0]
    lo1 = hi1 = x[1, 0]
    lo2 = hi2 = x[2, 0]
    for p in range(1, x.shape[1]):
        lo0, hi0 = min(lo0, x[0, p]), max(hi0, x[0, p])
        lo1, hi1 = min(lo1, x[1, p]), max(hi1, x[1, p])
        lo2, hi2 = min(lo2, x[2, p]), max(hi2, x[2, p])
    return lo0 - grow, lo1 - grow, lo2 - grow, hi0 + grow, hi1 + grow, hi2 + grow


@njit(cache=True)  # type: ignore[misc]
def _apart(x: NDArray[np.float64], i: int, box: tuple[float, float, float, float, float, float],
           grow: float) -> bool:
    """Whether element ``i`` of ``x`` (its two nodes' box grown by ``grow``) misses ``box``."""
    for k in range(3):
        lo = min(x[k, i], x[k, i + 1]) - grow
        hi = max(x[k, i], x[k, i + 1]) + grow
        if hi < box[k] or lo > box[k + 3]:
            return True
    return False


@njit(cache=True)  # type: ignore[misc]
def rod_rod_forces(
    a: ContactPoints, b: ContactPoints, law: ContactLaw, force_b: NDArray[np.float64],
    out: ContactOutput,
) -> int:
    """Contact of rods A and B: ``a``, ``b`` their nodes' positions and velocities (3, n) and
    their elements' radii and masses (n - 1,).  Writes the force on A's nodes to ``out.force``
    (3, n_a) (not accumulated), per element of A its smallest gap to B (``out.gap``, 1e300
    beyond the broad phase) and the tangential speed at that pair (``out.slip``); *adds* the
    reactions to ``force_b`` (3, n_b).  Returns the number of element pairs that passed the
    broad phase (evaluated exactly)."""
    xa, va, ra, ma = a
    xb, vb, rb, mb = b
    force, gap, slip = out
    reach = FAR_SMOOTHING_LENGTHS * law.smoothing_length
    force[:, :] = 0.0
    gap[:] = 1e300
    slip[:] = 0.0
    rb_max = 0.0
    for j in range(rb.shape[0]):
        rb_max = max(rb_max, rb[j])
    box_b = _box(xb, rb_max + reach)
    exact = 0
    for i in range(ra.shape[0]):
        if _apart(xa, i, box_b, ra[i]):
            continue
        lo0, hi0 = min(xa[0, i], xa[0, i + 1]), max(xa[0, i], xa[0, i + 1])
        lo1, hi1 = min(xa[1, i], xa[1, i + 1]), max(xa[1, i], xa[1, i + 1])
        lo2, hi2 = min(xa[2, i], xa[2, i + 1]), max(xa[2, i], xa[2, i + 1])
        for j in range(rb.shape[0]):
            grow = ra[i] + rb[j] + reach  # element j's box against element i's, grown
            if (max(xb[0, j], xb[0, j + 1]) < lo0 - grow or min(xb[0, j], xb[0, j + 1]) > hi0 + grow
                    or max(xb[1, j], xb[1, j + 1]) < lo1 - grow
                    or min(xb[1, j], xb[1, j + 1]) > hi1 + grow
                    or max(xb[2, j], xb[2, j + 1]) < lo2 - grow
                    or min(xb[2, j], xb[2, j + 1]) > hi2 + grow):
                continue
            exact += 1
            mass = ma[i] * mb[j] / (ma[i] + mb[j])
            s, t, g, f0, f1, f2, sp = _pair(xa, va, i, xb, vb, j, ra[i] + rb[j], mass, law)
            if g < gap[i]:
                gap[i] = g
                slip[i] = sp
            if f0 == 0.0 and f1 == 0.0 and f2 == 0.0:
                continue
            f = (f0, f1, f2)
            for k in range(3):
                force[k, i] += (1.0 - s) * f[k]
                force[k, i + 1] += s * f[k]
                force_b[k, j] -= (1.0 - t) * f[k]
                force_b[k, j + 1] -= t * f[k]
    return exact


@njit(cache=True)  # type: ignore[misc]
def segment_pair_forces(
    x: NDArray[np.float64], v: NDArray[np.float64], radii: float, mass: float, law: ContactLaw,
    f: NDArray[np.float64],
) -> None:
    """The law on one element pair: nodes ``x``, ``v`` (3, 4) = A's two, then B's two; the pair's
    radius sum ``radii`` [m] and reduced mass ``mass`` [kg] -> forces on the four nodes ``f``
    (3, 4) [N] (written): the kernel the tangent is checked against."""
    s, t, _, f0, f1, f2, _ = _pair(x[:, 0:2], v[:, 0:2], 0, x[:, 2:4], v[:, 2:4], 0, radii,
                                   mass, law)
    w = (1.0 - s, s, -(1.0 - t), -t)
    fa = (f0, f1, f2)
    for p in range(4):
        for k in range(3):
            f[k, p] = w[p] * fa[k]


@njit(cache=True)  # type: ignore[misc]
def _active_rates(
    x: NDArray[np.float64], s: float, t: float, ds: NDArray[np.float64], dt: NDArray[np.float64],
) -> None:
    """``ds``, ``dt`` (12,): derivatives of the closest points' parameters w.r.t. the four nodes'
    positions, from the stationarity of ``|d|^2`` in the parameters that are inside (0, 1)
    (an end's parameter is held: its derivative is zero)."""
    ea = x[:, 1] - x[:, 0]
    eb = x[:, 3] - x[:, 2]
    d = (1.0 - s) * x[:, 0] + s * x[:, 1] - (1.0 - t) * x[:, 2] - t * x[:, 3]
    # rows: d(e_a . d)/dX and d(-e_b . d)/dX, 4 blocks of 3
    g1 = np.concatenate((-d + (1.0 - s) * ea, d + s * ea, -(1.0 - t) * ea, -t * ea))
    g2 = -np.concatenate(((1.0 - s) * eb, s * eb, -d - (1.0 - t) * eb, d - t * eb))
    h11, h12, h22 = ea @ ea, -(ea @ eb), eb @ eb
    free_s, free_t = 0.0 < s < 1.0, 0.0 < t < 1.0
    ds[:] = 0.0
    dt[:] = 0.0
    if free_s and free_t:
        det = h11 * h22 - h12 * h12
        ds[:] = -(h22 * g1 - h12 * g2) / det
        dt[:] = -(-h12 * g1 + h11 * g2) / det
    elif free_s:
        ds[:] = -g1 / h11
    elif free_t:
        dt[:] = -g2 / h22


@njit(cache=True)  # type: ignore[misc]
def segment_pair_tangent(
    x: NDArray[np.float64], v: NDArray[np.float64], radii: float, mass: float, law: ContactLaw,
    kx: NDArray[np.float64], kv: NDArray[np.float64],
) -> None:
    """The consistent tangent of :func:`segment_pair_forces`: ``kx`` = d f / d x, ``kv`` =
    d f / d v (12, 12; node-major, 3 per node), the closest points' motion included (the
    stationarity of the distance in the parameters inside (0, 1); a parameter at a segment's
    end is held).  The law's 3x3 blocks ``K = d f / d d``, ``C = d f / d v_rel`` are the
    obstacles' tangent (:func:`~hsa_elastica.physics.contact_laws.contact_tangent`) of a point
    at ``p_a`` against a sphere of radius ``r_b`` at ``p_b``.  Not defined for parallel
    segments (the closest points jump)."""
    s, t, _, f0, f1, f2, _ = _pair(x[:, 0:2], v[:, 0:2], 0, x[:, 2:4], v[:, 2:4], 0, radii,
                                   mass, law)
    w = np.array([1.0 - s, s, -(1.0 - t), -t])
    pa = (1.0 - s) * x[:, 0] + s * x[:, 1]
    pb = (1.0 - t) * x[:, 2] + t * x[:, 3]
    vrel = w[0] * v[:, 0] + w[1] * v[:, 1] + w[2] * v[:, 2] + w[3] * v[:, 3]
    d_dx, d_dv = np.zeros((3, 3, 1)), np.zeros((3, 3, 1))
    point = ContactPoints(pa.reshape(3, 1), vrel.reshape(3, 1), np.zeros(1), np.full(1, mass))
    contact_tangent(point, ObstacleGeometry(SPHERE, pb, np.zeros(3), radii, 0.0, np.zeros(6)), law,
                    d_dx, d_dv)
    kd, kc = np.ascontiguousarray(d_dx[:, :, 0]), np.ascontiguousarray(d_dv[:, :, 0])  # BLAS
    ds, dt = np.zeros(12), np.zeros(12)
    _active_rates(x, s, t, ds, dt)
    # d d / dX and d v_rel / dX (3, 12): the weights held, plus the parameters' motion
    ea, eb = x[:, 1] - x[:, 0], x[:, 3] - x[:, 2]
    wa, wb = v[:, 1] - v[:, 0], v[:, 3] - v[:, 2]
    dd = np.zeros((3, 12))
    dvr = np.zeros((3, 12))
    for p in range(4):
        for k in range(3):
            dd[k, 3 * p + k] = w[p]
    for k in range(3):
        dd[k, :] += ea[k] * ds - eb[k] * dt
        dvr[k, :] = wa[k] * ds - wb[k] * dt
    df = kd @ dd + kc @ dvr  # d f_a / dX (3, 12)
    fa = np.array([f0, f1, f2])
    dw = (-ds, ds, dt, -dt)  # d w_p / dX
    for p in range(4):
        for k in range(3):
            kx[3 * p + k, :] = w[p] * df[k, :] + fa[k] * dw[p]
    jd = np.zeros((3, 12))  # d v_rel / dV: the weights
    for p in range(4):
        for k in range(3):
            jd[k, 3 * p + k] = w[p]
    kvel = kc @ jd
    for p in range(4):
        for k in range(3):
            kv[3 * p + k, :] = w[p] * kvel[k, :]


@njit(cache=True)  # type: ignore[misc]
def csc_add(indptr: NDArray[np.int64], indices: NDArray[np.int64], r: int, c: int,
             value: float, data: NDArray[np.float64]) -> None:
    """``data[(r, c)] += value`` in a CSC pattern with sorted row indices (nothing if the
    entry is not in it)."""
    lo, hi = indptr[c], indptr[c + 1]
    q = lo + np.searchsorted(indices[lo:hi], r)
    if q < hi and indices[q] == r:
        data[q] += value


@njit(cache=True)  # type: ignore[misc]
def rod_rod_tangent(
    a: ContactPoints, b: ContactPoints, law: ContactLaw, nodes: tuple[int, int],
    csc: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]],
    scales: tuple[float, float], data: NDArray[np.float64],
) -> int:
    """The tangent of :func:`rod_rod_forces` (rods A and B: ``a``, ``b`` as there, their
    first nodes ``nodes`` in the block), ``sx d f / d x + sv d f / d v`` (``scales``), added
    into the CSC values ``data``: every element pair within the law's reach contributes its
    :func:`segment_pair_tangent` (12 x 12) at the rows and columns of its four nodes.  ``csc``
    = (``unknown`` (n_nodes, 3): the unknown of a node's component, -1 held; the pattern's
    ``indptr``, ``indices``, rows sorted).  Returns the number of pairs within reach."""
    xa, va, ra, ma = a
    xb, vb, rb, mb = b
    unknown, indptr, indices = csc
    sx, sv = scales
    reach = FAR_SMOOTHING_LENGTHS * law.smoothing_length
    x, v = np.empty((3, 4)), np.empty((3, 4))
    kx, kv = np.empty((12, 12)), np.empty((12, 12))
    glob = np.empty(4, dtype=np.int64)
    n = 0
    for i in range(ra.shape[0]):
        for j in range(rb.shape[0]):
            radii = ra[i] + rb[j]
            if _apart(xa, i, _box(xb[:, j : j + 2], radii + reach), 0.0):
                continue
            mass = ma[i] * mb[j] / (ma[i] + mb[j])
            if _pair(xa, va, i, xb, vb, j, radii, mass, law)[2] > reach:
                continue
            x[:, 0:2], x[:, 2:4] = xa[:, i : i + 2], xb[:, j : j + 2]
            v[:, 0:2], v[:, 2:4] = va[:, i : i + 2], vb[:, j : j + 2]
            segment_pair_tangent(x, v, radii, mass, law, kx, kv)
            glob[0], glob[1] = nodes[0] + i, nodes[0] + i + 1
            glob[2], glob[3] = nodes[1] + j, nodes[1] + j + 1
            n += 1
            for p in range(12):
                r = unknown[glob[p // 3], p % 3]
                if r < 0:
                    continue
                for q in range(12):
                    c = unknown[glob[q // 3], q % 3]
                    if c >= 0:
                        csc_add(indptr, indices, r, c, sx * kx[p, q] + sv * kv[p, q], data)
    return n
