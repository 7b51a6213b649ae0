"""Bordered band LU of the static Jacobian (:mod:`hsa_elastica.engines.statics`).

The Jacobian of a robot's static residual has an arrow structure: each rod's unknowns (its
nodes and elements) couple only to their neighbours along the rod, so each rod's block is
banded once its unknowns are ordered along the rod (reverse Cuthill-McKee), and the rods couple
to one another only through the rigid bodies' few unknowns (6 per body, the border).  With
``A_r`` the band block of rod ``r``, ``B_r`` / ``C_r`` its coupling columns / rows to the border
and ``D`` the border block, the factorisation is

* ``A_r = P_r L_r U_r`` by LAPACK's band LU with partial pivoting (``dgbtrf``),
* ``Z_r = A_r^-1 B_r`` and the Schur complement ``S = D - sum_r C_r Z_r`` (dense LU),

and a solve of ``J x = b`` is ``y_r = A_r^-1 b_r``, ``x_border = S^-1 (b_border - sum_r C_r
y_r)``, ``x_r = y_r - Z_r x_border``.  Its cost grows linearly with the number of rod unknowns,
against the general sparse LU's ordering and symbolic work at every factorisation.

The factorisation and the solve are numba kernels on flat arrays (:class:`PackedLU`:
:func:`bordered_factor`, a port of LAPACK's unblocked band LU ``dgbtf2`` per block and a dense
LU with partial pivoting of ``S``; :func:`bordered_solve`), the one LU of the static solver
(through :class:`BorderedBandLU`) and of the implicit integrator's Newton iteration (inside its
kernel).  Without a band layout (rods coupled directly) the static solver uses SuperLU and the
implicit integrator one band block of every unknown (:func:`packed_lu`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from numpy.typing import NDArray
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee

__all__ = [
    "BorderedBandLU",
    "BorderedBandSolver",
    "FactorPlan",
    "PackedLU",
    "band_factor",
    "band_solve",
    "bordered_factor",
    "bordered_solve",
    "packed_lu",
]


class PackedLU(NamedTuple):
    """The bordered band LU as flat arrays (allocated by :func:`packed_lu`,
    filled by :func:`bordered_factor`): per diagonal block its unknowns ``idx[bptr[k]:bptr[k+1]]``, the
    transposed ``dgbtrf`` band ``ab[abptr[k]:abptr[k+1]]`` (leading dimension ``ldab[k]``,
    ``kl[k]``/``ku[k]``) and pivots, the border couplings ``zs``/``cs`` (offsets ``zptr``),
    the border unknowns and the Schur complement's LU ``slu`` with pivots ``spiv``."""

    idx: NDArray[np.int64]
    bptr: NDArray[np.int64]
    ab: NDArray[np.float64]
    abptr: NDArray[np.int64]
    ldab: NDArray[np.int64]
    kl: NDArray[np.int64]
    ku: NDArray[np.int64]
    piv: NDArray[np.int32]
    zs: NDArray[np.float64]
    zptr: NDArray[np.int64]
    cs: NDArray[np.float64]
    border: NDArray[np.int64]
    slu: NDArray[np.float64]
    spiv: NDArray[np.int64]



class FactorPlan(NamedTuple):
    """Where the Jacobian's CSC values go in the packed bordered band LU (:class:`PackedLU`,
    built by :meth:`hsa_elastica.engines.implicit.ImplicitEngine._factor_plan`): value
    ``band_src[e]`` to ``ab[band_dst[e]]``, ``b_src`` to ``zs[b_dst]`` (rod rows, border
    columns, per block ``(m, nb)``), ``c_src`` to ``cs[c_dst]`` (border rows, rod columns,
    per block ``(nb, m)``), ``d_src`` to ``slu.ravel()[d_dst]``; ``diag_q`` the diagonal's
    positions (where the inertia shift is subtracted); ``shifted`` / ``col`` (nb x nb) work."""

    band_src: NDArray[np.int64]
    band_dst: NDArray[np.int64]
    b_src: NDArray[np.int64]
    b_dst: NDArray[np.int64]
    c_src: NDArray[np.int64]
    c_dst: NDArray[np.int64]
    d_src: NDArray[np.int64]
    d_dst: NDArray[np.int64]
    diag_q: NDArray[np.int64]
    shifted: NDArray[np.float64]
    col: NDArray[np.float64]



@njit(cache=True)  # type: ignore[misc]
def band_solve(abt: NDArray[np.float64], piv: NDArray[np.int32], kl: int, ku: int,
               b: NDArray[np.float64]) -> None:
    """LAPACK ``dgbtrs`` (no transpose, one right-hand side) in place on ``b``: ``abt`` the
    transpose of ``dgbtrf``'s band storage ``ab`` (``abt[j, r] = ab[r, j]``, ``ldab = 2 kl +
    ku + 1``), ``piv`` its pivots (0-based, as scipy returns them)."""
    n = b.shape[0]
    kd = kl + ku
    for j in range(n - 1):
        lm = min(kl, n - j - 1)
        p = piv[j]
        if p != j:
            tmp = b[p]
            b[p] = b[j]
            b[j] = tmp
        bj = b[j]
        # slices indexed from 0: numba drops the negative-index wrap-around and LLVM
        # vectorises the update (same operations, 2x faster)
        lv = abt[j, kd + 1:kd + 1 + lm]
        seg = b[j + 1:j + 1 + lm]
        for i in range(lm):
            seg[i] -= lv[i] * bj
    for j in range(n - 1, -1, -1):
        b[j] /= abt[j, kd]
        bj = b[j]
        i0 = max(0, j - kd)
        uv = abt[j, kd + i0 - j:kd]
        seg = b[i0:j]
        for i in range(j - i0):
            seg[i] -= uv[i] * bj


@njit(cache=True)  # type: ignore[misc]
def bordered_solve(lu: PackedLU, rhs: NDArray[np.float64], x: NDArray[np.float64],
                   work: NDArray[np.float64]) -> None:
    """``x = J^-1 rhs`` with the bordered band LU of :func:`bordered_factor` (the steps of
    the module doc); ``work`` (n,) scratch."""
    (idx, bptr, ab, abptr, ldab, kl, ku, piv, zs, zptr, cs, border, slu, spiv) = lu
    nb = border.shape[0]
    rb = np.empty(2 * nb)
    acc = rb[nb:]
    rb = rb[:nb]
    for q in range(nb):
        rb[q] = rhs[border[q]]
    for k in range(bptr.shape[0] - 1):
        m = bptr[k + 1] - bptr[k]
        y = work[bptr[k]:bptr[k + 1]]
        for q in range(m):
            y[q] = rhs[idx[bptr[k] + q]]
        abk = ab[abptr[k]:abptr[k + 1]].reshape((m, ldab[k]))
        band_solve(abk, piv[bptr[k]:bptr[k + 1]], kl[k], ku[k], y)
        if nb:
            # the nb sums side by side (each in the order of q: the same sums, no chain of
            # dependent additions across the rod's unknowns)
            c = cs[zptr[k]:zptr[k + 1]].reshape((nb, m))
            acc[:] = 0.0
            for q in range(m):
                yq = y[q]
                for p in range(nb):
                    acc[p] += c[p, q] * yq
            for p in range(nb):
                rb[p] -= acc[p]
    if nb:
        for i in range(nb):
            p = spiv[i]
            if p != i:
                tmp = rb[p]
                rb[p] = rb[i]
                rb[i] = tmp
        for i in range(nb):
            for j in range(i):
                rb[i] -= slu[i, j] * rb[j]
        for i in range(nb - 1, -1, -1):
            for j in range(i + 1, nb):
                rb[i] -= slu[i, j] * rb[j]
            rb[i] /= slu[i, i]
    for k in range(bptr.shape[0] - 1):
        m = bptr[k + 1] - bptr[k]
        y = work[bptr[k]:bptr[k + 1]]
        if nb:
            z = zs[zptr[k]:zptr[k + 1]].reshape((m, nb))
            for q in range(m):
                s = 0.0
                for p in range(nb):
                    s += z[q, p] * rb[p]
                x[idx[bptr[k] + q]] = y[q] - s
        else:
            for q in range(m):
                x[idx[bptr[k] + q]] = y[q]
    for q in range(nb):
        x[border[q]] = rb[q]



@njit(cache=True)  # type: ignore[misc]
def band_factor(abt: NDArray[np.float64], piv: NDArray[np.int32], kl: int, ku: int) -> bool:
    """LAPACK ``dgbtf2`` (band LU with partial pivoting, unblocked) in place on ``abt``, the
    transpose of the band storage (``abt[j, kl + ku + i - j] = A[i, j]``, ``ldab = 2 kl + ku +
    1``, fill-in rows zero on entry); ``piv`` 0-based.  False if a pivot is zero (singular)."""
    n = abt.shape[0]
    kv = ku + kl
    ju = 0
    ok = True
    for j in range(n):
        km = min(kl, n - 1 - j)
        jp = 0
        big = abs(abt[j, kv])
        for p in range(1, km + 1):
            if abs(abt[j, kv + p]) > big:
                big = abs(abt[j, kv + p])
                jp = p
        piv[j] = j + jp
        if abt[j, kv + jp] == 0.0:
            ok = False
            continue
        ju = max(ju, min(j + ku + jp, n - 1))
        if jp != 0:
            for c in range(j, ju + 1):
                tmp = abt[c, kv + j + jp - c]
                abt[c, kv + j + jp - c] = abt[c, kv + j - c]
                abt[c, kv + j - c] = tmp
        if km > 0:
            inv = 1.0 / abt[j, kv]
            lv = abt[j, kv + 1:kv + 1 + km]  # slices: see band_solve
            for i in range(km):
                lv[i] *= inv
            for c in range(j + 1, ju + 1):
                ujc = abt[c, kv + j - c]
                if ujc != 0.0:
                    dst = abt[c, kv + j + 1 - c:kv + j + 1 - c + km]
                    for i in range(km):
                        dst[i] -= lv[i] * ujc
    return ok


@njit(cache=True)  # type: ignore[misc]
def _band_solve_rows(abt: NDArray[np.float64], piv: NDArray[np.int32], kl: int, ku: int,
                     z: NDArray[np.float64]) -> None:
    """:func:`band_solve` of every column of ``z`` (m, nb) at once, in place (each column's
    operations as :func:`band_solve`'s; the rows are contiguous)."""
    n = z.shape[0]
    kd = kl + ku
    nc = z.shape[1]
    for j in range(n - 1):
        lm = min(kl, n - j - 1)
        p = piv[j]
        zj = z[j]
        if p != j:
            zp = z[p]
            for c in range(nc):
                tmp = zp[c]
                zp[c] = zj[c]
                zj[c] = tmp
        for i in range(lm):
            lij = abt[j, kd + 1 + i]
            zi = z[j + 1 + i]
            for c in range(nc):
                zi[c] -= lij * zj[c]
    for j in range(n - 1, -1, -1):
        zj = z[j]
        d = abt[j, kd]
        for c in range(nc):
            zj[c] /= d
        i0 = max(0, j - kd)
        for i in range(j - i0):
            uij = abt[j, kd + i0 - j + i]
            zi = z[i0 + i]
            for c in range(nc):
                zi[c] -= uij * zj[c]


@njit(cache=True)  # type: ignore[misc]
def bordered_factor(data: NDArray[np.float64], shift: NDArray[np.float64], plan: FactorPlan,
                    lu: PackedLU) -> bool:
    """The bordered band LU (:mod:`hsa_elastica.engines.statics_linalg`: band LU of each
    rod's block, ``Z_r = A_r^-1 B_r``, Schur complement ``S = D - sum_r C_r Z_r`` by dense
    LU with partial pivoting) of ``J - diag(shift)`` (``J``'s CSC values ``data``) into the
    packed arrays ``lu`` (what :func:`bordered_solve` reads).  False if singular."""
    (_idx, bptr, ab, abptr, ldab, kl, ku, piv, zs, zptr, cs, border, slu, spiv) = lu
    (band_src, band_dst, b_src, b_dst, c_src, c_dst, d_src, d_dst, diag_q, w, col) = plan
    w[:] = data
    for j in range(diag_q.shape[0]):
        w[diag_q[j]] -= shift[j]
    ab[:] = 0.0
    for e in range(band_src.shape[0]):
        ab[band_dst[e]] = w[band_src[e]]
    nb = border.shape[0]
    zs[:] = 0.0
    cs[:] = 0.0
    for e in range(b_src.shape[0]):
        zs[b_dst[e]] = w[b_src[e]]
    for e in range(c_src.shape[0]):
        cs[c_dst[e]] = w[c_src[e]]
    flat = slu.reshape(-1)
    flat[:] = 0.0
    for e in range(d_src.shape[0]):
        flat[d_dst[e]] = w[d_src[e]]
    for k in range(bptr.shape[0] - 1):
        m = bptr[k + 1] - bptr[k]
        abk = ab[abptr[k]:abptr[k + 1]].reshape((m, ldab[k]))
        pk = piv[bptr[k]:bptr[k + 1]]
        if not band_factor(abk, pk, kl[k], ku[k]):
            return False
        if nb:
            z = zs[zptr[k]:zptr[k + 1]].reshape((m, nb))
            c = cs[zptr[k]:zptr[k + 1]].reshape((nb, m))
            _band_solve_rows(abk, pk, kl[k], ku[k], z)
            acc = col[:nb * nb].reshape((nb, nb))
            acc[:] = 0.0
            for q in range(m):  # each sum in the order of q, the nb x nb sums side by side
                zq = z[q]
                for i in range(nb):
                    ciq = c[i, q]
                    ai = acc[i]
                    for p in range(nb):
                        ai[p] += ciq * zq[p]
            for i in range(nb):
                for p in range(nb):
                    slu[i, p] -= acc[i, p]
    for k in range(nb):  # dense LU with partial pivoting (LAPACK getrf's arithmetic)
        p = k
        big = abs(slu[k, k])
        for i in range(k + 1, nb):
            if abs(slu[i, k]) > big:
                big = abs(slu[i, k])
                p = i
        spiv[k] = p
        if p != k:
            for c2 in range(nb):
                tmp = slu[k, c2]
                slu[k, c2] = slu[p, c2]
                slu[p, c2] = tmp
        d = slu[k, k]
        if d == 0.0 or not np.isfinite(d):
            return False
        for i in range(k + 1, nb):
            slu[i, k] /= d
            lik = slu[i, k]
            for c2 in range(k + 1, nb):
                slu[i, c2] -= lik * slu[k, c2]
    return True


class BorderedBandLU:
    """A factorised Jacobian; :meth:`solve` as SuperLU's (one right-hand side, shape (n,))."""

    def __init__(self, lu: PackedLU, n: int) -> None:
        self.lu = lu
        self.n = n

    def solve(self, rhs: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.empty(self.n)
        bordered_solve(self.lu, np.ascontiguousarray(rhs, dtype=np.float64), x,
                       np.empty(self.n))
        return x


class BorderedBandSolver:
    """Factorisations of matrices with one fixed CSC pattern (``indptr``, ``indices``, n x n)
    whose unknowns ``border_mask`` (the bodies') are the border; see the module doc.

    :meth:`factor` takes the CSC ``data`` (and an optional diagonal ``shift``, subtracted:
    ``J - diag(shift)``) and returns a :class:`BorderedBandLU`; raises ``RuntimeError`` when
    a band block or the Schur complement is singular.
    """

    def __init__(self, indptr: NDArray[np.int64], indices: NDArray[np.int64],
                 border_mask: NDArray[np.bool_]) -> None:
        n = int(indptr.shape[0] - 1)
        self.n = n
        pattern = sp.csc_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
        self.border = np.nonzero(border_mask)[0].astype(np.int64)
        self.nb = int(self.border.shape[0])
        inner = np.nonzero(~np.asarray(border_mask))[0]
        sym = (abs(pattern) + abs(pattern.T)).tocsr()[inner][:, inner].tocsr()
        ncomp, labels = connected_components(sym, directed=False)
        # position of each unknown: (block, local index) or border (-1, index in border)
        block_of = -np.ones(n, dtype=np.int64)
        local = np.zeros(n, dtype=np.int64)
        local[self.border] = np.arange(self.nb)
        # position q of each entry in the CSC data array
        q_of = np.arange(indices.shape[0], dtype=np.int64)
        col_of_q = np.repeat(np.arange(n), np.diff(indptr))
        self.blocks: list[tuple[NDArray[np.int64], int, int]] = []
        for c in range(ncomp):
            sel = np.nonzero(labels == c)[0]
            order = reverse_cuthill_mckee(sym[sel][:, sel].tocsr(), symmetric_mode=True)
            idx = inner[sel[order]].astype(np.int64)
            block_of[idx] = c
            local[idx] = np.arange(idx.shape[0])
            self.blocks.append((idx, 0, 0))
        rows, cols = np.asarray(indices, dtype=np.int64), col_of_q
        rb, cb = block_of[rows], block_of[cols]
        if np.any((rb >= 0) & (cb >= 0) & (rb != cb)):
            raise ValueError("pattern couples two rods directly")
        self.maps: list[dict[str, Any]] = []
        for c, (idx, _, _) in enumerate(self.blocks):
            m = idx.shape[0]
            inb = (rb == c) & (cb == c)
            di = local[rows[inb]] - local[cols[inb]]
            kl = int(max(di.max(initial=0), 0))
            ku = int(max((-di).max(initial=0), 0))
            ldab = 2 * kl + ku + 1
            self.blocks[c] = (idx, kl, ku)
            band_dst = (kl + ku + local[rows[inb]] - local[cols[inb]]) + ldab * local[cols[inb]]
            bsel = (rb == c) & (cb < 0)   # rod rows, border columns: B (m x nb)
            csel = (rb < 0) & (cb == c)   # border rows, rod columns: C (nb x m)
            self.maps.append(dict(
                shape=(ldab, m), band_src=q_of[inb], band_dst=band_dst,
                b_src=q_of[bsel], b_dst=local[rows[bsel]] * max(self.nb, 1) + local[cols[bsel]],
                c_src=q_of[csel], c_dst=local[rows[csel]] * m + local[cols[csel]],
            ))
        dsel = (rb < 0) & (cb < 0)
        self.d_src = q_of[dsel]
        self.d_dst = local[rows[dsel]] * max(self.nb, 1) + local[cols[dsel]]
        self.diag_q = _diagonal_positions(n, indptr, indices)
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int64)
        self._plan: FactorPlan | None = None
        self._template: PackedLU

    def factor(self, data: NDArray[np.float64],
               shift: NDArray[np.float64] | None = None) -> BorderedBandLU:
        if self._plan is None:
            self._template, self._plan = packed_lu(self, self.n, self.indptr, self.indices)
        t = self._template
        lu = t._replace(ab=np.zeros_like(t.ab), piv=np.zeros_like(t.piv),
                        zs=np.zeros_like(t.zs), cs=np.zeros_like(t.cs),
                        slu=np.zeros_like(t.slu), spiv=np.zeros_like(t.spiv))
        sh = np.zeros(self.n) if shift is None else np.ascontiguousarray(shift, dtype=np.float64)
        if not bordered_factor(np.ascontiguousarray(data, dtype=np.float64), sh, self._plan, lu):
            raise RuntimeError("singular band block or Schur complement")
        return BorderedBandLU(lu, self.n)


def packed_lu(band: BorderedBandSolver | None, n: int, indptr: NDArray[np.int64],
              indices: NDArray[np.int64]) -> tuple[PackedLU, FactorPlan]:
    """The packed bordered band LU's arrays (:class:`PackedLU`, filled by
    :func:`bordered_factor`) and where a Jacobian's CSC values (pattern ``indptr`` /
    ``indices``, n x n) go in them, from the band layout ``band`` (one band block per rod, the
    bodies' unknowns the border); with None (rods coupled directly), one band block of all
    unknowns in reverse Cuthill-McKee order and no border."""
    i64 = np.int64
    if band is not None:
        blocks: list[tuple[NDArray[np.int64], int, int, dict[str, Any]]] = [
            (idx, kl, ku, mp) for (idx, kl, ku), mp in zip(band.blocks, band.maps)]
        border, nb = band.border.astype(i64), band.nb
        d_src, d_dst, diag_q = band.d_src, band.d_dst, band.diag_q
    else:
        pat = sp.csc_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
        order = reverse_cuthill_mckee((abs(pat) + abs(pat.T)).tocsr(), symmetric_mode=True)
        local = np.empty(n, dtype=i64)
        local[order] = np.arange(n)
        cols = np.repeat(np.arange(n), np.diff(indptr))
        di = local[indices] - local[cols]
        kl, ku = int(max(di.max(initial=0), 0)), int(max((-di).max(initial=0), 0))
        ldab = 2 * kl + ku + 1
        q = np.arange(indices.shape[0], dtype=i64)
        mp: dict[str, Any] = {
            "shape": (ldab, n), "band_src": q, "band_dst": (kl + ku + di) + ldab * local[cols],
            "b_src": q[:0], "b_dst": q[:0], "c_src": q[:0], "c_dst": q[:0]}
        blocks = [(order.astype(i64), kl, ku, mp)]
        border, nb = np.zeros(0, dtype=i64), 0
        d_src = d_dst = q[:0]
        diag_q = _diagonal_positions(n, indptr, indices)
    bptr, abptr, zptr = [0], [0], [0]
    band_src, band_dst, b_src, b_dst, c_src, c_dst = ([] for _ in range(6))
    for idx, _kl, _ku, mp in blocks:
        m = idx.shape[0]
        band_src.append(mp["band_src"])
        band_dst.append(mp["band_dst"] + abptr[-1])
        b_src.append(mp["b_src"])
        b_dst.append(mp["b_dst"] + zptr[-1])
        c_src.append(mp["c_src"])
        c_dst.append(mp["c_dst"] + zptr[-1])
        bptr.append(bptr[-1] + m)
        abptr.append(abptr[-1] + mp["shape"][0] * m)
        zptr.append(zptr[-1] + m * nb)

    def cat(parts: list[Any]) -> NDArray[np.int64]:
        return np.concatenate(parts).astype(i64)

    lu = PackedLU(
        cat([b[0] for b in blocks]), np.array(bptr, dtype=i64), np.zeros(abptr[-1]),
        np.array(abptr, dtype=i64), np.array([b[3]["shape"][0] for b in blocks], dtype=i64),
        np.array([b[1] for b in blocks], dtype=i64), np.array([b[2] for b in blocks], dtype=i64),
        np.zeros(bptr[-1], dtype=np.int32), np.zeros(zptr[-1]), np.array(zptr, dtype=i64),
        np.zeros(zptr[-1]), border, np.zeros((nb, nb)), np.zeros(nb, dtype=i64))
    plan = FactorPlan(cat(band_src), cat(band_dst), cat(b_src), cat(b_dst), cat(c_src),
                      cat(c_dst), np.asarray(d_src, dtype=i64), np.asarray(d_dst, dtype=i64),
                      np.asarray(diag_q, dtype=i64), np.zeros(indices.shape[0]),
                      np.zeros(max(nb * nb, 1)))
    return lu, plan


def _diagonal_positions(n: int, indptr: NDArray[np.int64], indices: NDArray[np.int64]
                        ) -> NDArray[np.int64]:
    """Position of each diagonal entry in the CSC values."""
    return np.array([indptr[j] + int(np.nonzero(indices[indptr[j]:indptr[j + 1]] == j)[0][0])
                     for j in range(n)], dtype=np.int64)
