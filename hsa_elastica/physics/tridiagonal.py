"""Thomas elimination of the tridiagonal and block-tridiagonal systems of the Kelvin-Voigt
damper (:mod:`hsa_elastica.physics.material_damping`), written for elimination row by row as
each row of the system is completed (so that the damper's passes over the rod need no second
loop for the solve).

* :func:`forward_row`: a symmetric scalar tridiagonal matrix with three right-hand sides (the
  node velocities' x, y, z components);
* :func:`forward_block`: a symmetric block-tridiagonal matrix with symmetric 3x3 diagonal
  blocks and scalar off-diagonal blocks (the element angular velocities in the lab frame),
  in either direction;
* :func:`hold_block`: a held unknown (its block scaled by 1e20 and no load).

Symmetric 3x3 blocks and vectors are passed as tuples of per-entry arrays (:data:`Blocks`,
:data:`Vectors`).  The caller does the back substitution (it fuses it with the velocity updates).  All helpers
are inlined into their numba caller.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

__all__ = ["CONTRACT", "Blocks", "Vectors", "forward_row", "forward_block", "hold_block"]

_F64 = NDArray[np.float64]
#: the six entries ``(00, 11, 22, 01, 02, 12)`` of symmetric 3x3 blocks, one array each
Blocks = tuple[_F64, _F64, _F64, _F64, _F64, _F64]
#: the three components of vectors (right-hand sides), one array each
Vectors = tuple[_F64, _F64, _F64]

#: numba's fast-math flags of these solves and of the damper: only the contraction of
#: ``a * b + c`` into one fused multiply-add (one rounding instead of two; no reassociation,
#: NaN and inf kept)
CONTRACT = {"contract"}


@njit(cache=True, inline="always", error_model="numpy", fastmath=CONTRACT)  # type: ignore[misc]
def forward_row(
    i: int, diag: NDArray[np.float64], off: NDArray[np.float64], c: NDArray[np.float64],
    r: Vectors, last: bool,
) -> None:
    """Forward elimination of row ``i`` of the symmetric tridiagonal system (``diag``, ``off``)
    with three right-hand sides ``r = (r0, r1, r2)`` (Thomas algorithm, one division per row;
    the matrices here are diagonally dominant).  Rows are eliminated in order, each once
    complete; ``c`` holds the eliminated super-diagonal (not needed for the ``last`` row)."""
    r0, r1, r2 = r
    if i == 0:
        inv = 1.0 / diag[0]
    else:
        o = off[i - 1]
        inv = 1.0 / (diag[i] - o * c[i - 1])
        r0[i] -= o * r0[i - 1]
        r1[i] -= o * r1[i - 1]
        r2[i] -= o * r2[i - 1]
    if not last:
        c[i] = off[i] * inv
    r0[i] *= inv
    r1[i] *= inv
    r2[i] *= inv


@njit(cache=True, inline="always", error_model="numpy", fastmath=CONTRACT)  # type: ignore[misc]
def hold_block(i: int, m: Blocks, r: Vectors) -> None:
    """A held element keeps its angular velocity: its block ``m`` scaled by 1e20, no load."""
    m00, m11, m22, m01, m02, m12 = m
    r0, r1, r2 = r
    big = 1e20
    m00[i] *= big
    m11[i] *= big
    m22[i] *= big
    m01[i] *= big
    m02[i] *= big
    m12[i] *= big
    r0[i] = 0.0
    r1[i] = 0.0
    r2[i] = 0.0


@njit(cache=True, inline="always", error_model="numpy", fastmath=CONTRACT)  # type: ignore[misc]
def forward_block(
    i: int, j: int, o_prev: float, o_next: float, m: Blocks, g: Blocks, r: Vectors,
    first: bool, last: bool,
) -> None:
    """Forward elimination of block row ``i`` of a symmetric block-tridiagonal system with
    symmetric 3x3 diagonal blocks ``M_i`` (entries ``m00 .. m12``) and scalar off-diagonal
    blocks (block Thomas algorithm, rows eliminated in either direction): ``j`` is the row
    eliminated before (coupled to ``i`` by ``o_prev I``; none if ``first``), ``o_next`` couples
    ``i`` to the row eliminated after it.  ``S_i = M_i - o_prev G_j``,
    ``r_i <- S_i^-1 (r_i - o_prev r_j)`` and, unless ``last``, ``G_i = o_next S_i^-1``
    (``g``, entries in the order of ``m``); back substitution is ``x_i = r_i - G_i x_next``.
    The blocks transform with the frame (``R M R^T``), so the solve is frame-indifferent."""
    m00, m11, m22, m01, m02, m12 = m
    g00, g11, g22, g01, g02, g12 = g
    r0, r1, r2 = r
    a = m00[i]
    b = m11[i]
    c = m22[i]
    d = m01[i]
    e = m02[i]
    f = m12[i]
    x0 = r0[i]
    x1 = r1[i]
    x2 = r2[i]
    if not first:
        o = o_prev
        a -= o * g00[j]
        b -= o * g11[j]
        c -= o * g22[j]
        d -= o * g01[j]
        e -= o * g02[j]
        f -= o * g12[j]
        x0 -= o * r0[j]
        x1 -= o * r1[j]
        x2 -= o * r2[j]
    # symmetric inverse by cofactors
    c00 = b * c - f * f
    c01 = e * f - d * c
    c02 = d * f - b * e
    c11 = a * c - e * e
    c12 = d * e - a * f
    c22 = a * b - d * d
    idet = 1.0 / (a * c00 + d * c01 + e * c02)
    r0[i] = idet * (c00 * x0 + c01 * x1 + c02 * x2)
    r1[i] = idet * (c01 * x0 + c11 * x1 + c12 * x2)
    r2[i] = idet * (c02 * x0 + c12 * x1 + c22 * x2)
    if not last:
        o = o_next * idet
        g00[i] = o * c00
        g11[i] = o * c11
        g22[i] = o * c22
        g01[i] = o * c01
        g02[i] = o * c02
        g12[i] = o * c12
