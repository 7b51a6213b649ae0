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
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.linalg import lapack
from scipy.sparse.csgraph import connected_components, reverse_cuthill_mckee

__all__ = ["BorderedBandSolver", "BorderedBandLU"]


class BorderedBandLU:
    """A factorised Jacobian; :meth:`solve` as SuperLU's (one right-hand side, shape (n,))."""

    def __init__(self, solver: "BorderedBandSolver", bands: list[tuple[Any, Any]],
                 zs: list[NDArray[np.float64]], cs: list[NDArray[np.float64]],
                 schur: Any) -> None:
        self.s = solver
        self.bands = bands
        self.zs = zs
        self.cs = cs
        self.schur = schur

    def solve(self, rhs: NDArray[np.float64]) -> NDArray[np.float64]:
        s = self.s
        b = np.asarray(rhs, dtype=np.float64)
        x = np.empty(s.n)
        ys = []
        rb = b[s.border].copy()
        for k, (idx, kl, ku) in enumerate(s.blocks):
            lu, piv = self.bands[k]
            y, info = lapack.dgbtrs(lu, kl, ku, b[idx], piv)
            if info != 0:
                raise ValueError(f"band solve failed (info {info})")
            ys.append(y)
            if s.nb:
                rb -= self.cs[k] @ y
        xb = sla.lu_solve(self.schur, rb, check_finite=False) if s.nb else rb
        for k, (idx, _, _) in enumerate(s.blocks):
            x[idx] = ys[k] - self.zs[k] @ xb if s.nb else ys[k]
        if s.nb:
            x[s.border] = xb
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
        self.diag_q = np.array([indptr[j] + int(np.nonzero(indices[indptr[j]:indptr[j + 1]] == j)[0][0])
                                for j in range(n)], dtype=np.int64)

    def factor(self, data: NDArray[np.float64],
               shift: NDArray[np.float64] | None = None) -> BorderedBandLU:
        if shift is not None:
            data = data.copy()
            data[self.diag_q] -= shift
        nb = self.nb
        bands, zs, cs = [], [], []
        schur = np.zeros((nb, nb))
        schur.reshape(-1)[self.d_dst] = data[self.d_src]
        for (idx, kl, ku), mp in zip(self.blocks, self.maps):
            ab = np.zeros(mp["shape"], order="F")
            ab.reshape(-1, order="F")[mp["band_dst"]] = data[mp["band_src"]]
            lu, piv, info = lapack.dgbtrf(ab, kl, ku, overwrite_ab=1)
            if info != 0:
                raise RuntimeError(f"singular band block (info {info})")
            bands.append((lu, piv))
            if nb:
                m = idx.shape[0]
                bmat = np.zeros((m, nb))
                bmat.reshape(-1)[mp["b_dst"]] = data[mp["b_src"]]
                z, info = lapack.dgbtrs(lu, kl, ku, bmat, piv)
                cmat = np.zeros((nb, m))
                cmat.reshape(-1)[mp["c_dst"]] = data[mp["c_src"]]
                schur -= cmat @ z
                zs.append(z)
                cs.append(cmat)
        lu_s: Any = None
        if nb:
            lu_s = sla.lu_factor(schur, check_finite=False)
            if not np.all(np.isfinite(lu_s[0])) or np.any(np.diag(lu_s[0]) == 0.0):
                raise RuntimeError("singular Schur complement")
        return BorderedBandLU(self, bands, zs, cs, lu_s)
