"""The rods' part of the hybrid Newton Jacobian (:mod:`hsa_elastica.engines.statics_hybrid`)
and of the implicit integrator's Newton matrix (:mod:`hsa_elastica.engines.implicit_tangent`).

Each rod's consistent tangent (:func:`~hsa_elastica.physics.rod_tangent.rod_tangent_band`,
plus :func:`~hsa_elastica.physics.auxetic_tangent.auxetic_tangent_band` for a rod with a
one-way auxetic coupling and :func:`~hsa_elastica.physics.compression_law.
compression_tangent_band` for one with the compression law) is computed as a band over all its nodes and elements and scattered
into the Jacobian's CSC values through precomputed pairs (:func:`tangent_entries`: held nodes
and elements are dropped, partly held elements keep their free rotation components).

An element whose twist is locked (``DistalTwistLockBC``: the static solver's ``KIND_SWING``
unknowns, rotations about its local x and y) is re-locked at every evaluation
(:func:`~hsa_elastica.physics.actuation.remove_twist`): turning a tilted element about its
own x or y also turns it about its axis, by
:func:`~hsa_elastica.physics.actuation.twist_lock_gradient` per radian.  So the column of a
swing unknown is the band's column of that rotation plus the band's twist column (of the
held rotation about local z) times that gradient (the chain rule, :func:`rod_tangents`); without
it the entries of a tilted locked end erred by 0.14 of their column on a single rod.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.engines.statics_build import rod_locals, rod_ranges
from hsa_elastica.engines.statics_kernels import KIND_NODE, KIND_SWING, ROTATION_KINDS
from hsa_elastica.engines.statics_mounts import mount_chain, mount_entries
from hsa_elastica.physics.actuation import twist_lock_gradient
from hsa_elastica.physics.auxetic_tangent import auxetic_tangent_band, auxetic_tangent_work
from hsa_elastica.physics.compression_law import compression_row, compression_tangent_band
from hsa_elastica.physics.rod_tangent import (
    HALF_BANDWIDTH,
    RodTangentState,
    rod_tangent_band,
    tangent_work,
)
from hsa_elastica.physics.tables import END_TWIST_LOCK

__all__ = ["WIDTH", "rod_tangents", "tangent_entries"]

WIDTH = 2 * HALF_BANDWIDTH + 1


@njit(cache=True)  # type: ignore[misc]
def _locked_twist(model: Any, plan: Any, r: int, flat: NDArray[np.float64],
                  data: NDArray[np.float64]) -> None:
    """The chain rule of rod ``r``'s twist-locked elements (module doc) added into ``data``:
    the band's twist-column entries ``flat[swing_src]`` times the lock's gradient, at the
    swing columns ``swing_dst`` (-1: not an entry)."""
    ends = model.tables.ends
    director = model.rod.director
    for p in range(plan.swing_ptr[r], plan.swing_ptr[r + 1]):
        row = plan.swing_end[p]
        gx, gy = twist_lock_gradient(ends.director[row], director[:, :, ends.element[row]])
        value = flat[plan.swing_src[p]]
        if plan.swing_dst[p, 0] >= 0:
            data[plan.swing_dst[p, 0]] += value * gx
        if plan.swing_dst[p, 1] >= 0:
            data[plan.swing_dst[p, 1]] += value * gy


@njit(cache=True)  # type: ignore[misc]
def rod_tangents(model: Any, plan: Any, data: NDArray[np.float64]) -> None:
    """Each rod's consistent tangent (plus the auxetic chain rule, the twist locks' and the
    rigid motor mounts', :mod:`~hsa_elastica.engines.statics_mounts`) added into ``data`` (``model`` a ``ForceModel``, ``plan`` a ``HybridPlan``)."""
    rod = model.rod
    ne_max = plan.n_elems.max()
    band = np.empty((6 * ne_max + 3, WIDTH))
    work = tangent_work(ne_max)
    aux = auxetic_tangent_work(ne_max)
    for r in range(plan.start.shape[0]):
        s = plan.start[r]
        ne = plan.n_elems[r]
        rows = band[: 6 * ne + 3]
        state = RodTangentState(
            rod.position[:, s : s + ne + 1], rod.director[:, :, s : s + ne],
            rod.rest_lengths[s : s + ne], rod.rest_voronoi_lengths[s : s + ne - 1],
            rod.rest_sigma[:, s : s + ne], rod.rest_kappa[:, s : s + ne - 1],
            rod.shear_matrix[:, :, s : s + ne], rod.bend_matrix[:, :, s : s + ne - 1],
        )
        rod_tangent_band(state, work, rows)
        if plan.coupling[r] >= 0:
            auxetic_tangent_band(state, model.tables.couplings, plan.coupling[r], aux, rows)
        comp = model.tables.compression
        for k in range(comp.elem_start.shape[0]):  # the compression law on this rod
            if comp.elem_start[k] == s:
                compression_tangent_band(state, compression_row(comp, k), comp.work[k],
                                         model.tables.couplings, plan.coupling[r], rows)
        flat = rows.ravel()
        for p in range(plan.ptr[r], plan.ptr[r + 1]):
            data[plan.dst[p]] += flat[plan.src[p]]
        _locked_twist(model, plan, r, flat, data)
        mount_chain(model, plan, r, rows, 1.0, True, data)


def _local_unknowns(solver: Any, s: int, ne: int) -> NDArray[np.int64]:
    """The unknown of each of a rod's band rows (nodes' 3, elements' 3 components; -1 held)."""
    local = -np.ones(6 * ne + 3, dtype=np.int64)
    for j in range(solver.n):
        k, i, a = int(solver.kind[j]), int(solver.index[j]), int(solver.comp[j])
        if k == KIND_NODE and s <= i <= s + ne:
            local[6 * (i - s) + a] = j
        elif k in ROTATION_KINDS and s <= i < s + ne:
            local[6 * (i - s) + 3 + a] = j
    return local


def _swing_entries(solver: Any, pos: dict[tuple[int, int], int], s: int, ne: int,
                   local: NDArray[np.int64], out: tuple[list[Any], ...]) -> None:
    """Append the twist-lock entries of the rod's swing elements (module doc) to ``out`` =
    (band flat indices of the twist column, (CSC x, CSC y) positions, end-table rows)."""
    ends = solver.tables.ends
    swing = np.unique(solver.index[solver.kind == KIND_SWING])
    for i in swing[(swing >= s) & (swing < s + ne)].tolist():
        row = int(np.nonzero((ends.element == i) & (ends.kind == END_TWIST_LOCK))[0][0])
        lz = 6 * (i - s) + 5
        ux, uy = int(local[lz - 2]), int(local[lz - 1])
        for lr in np.nonzero(local >= 0)[0].tolist():
            if abs(lr - lz) <= HALF_BANDWIDTH:
                out[0].append(lr * WIDTH + lz - lr + HALF_BANDWIDTH)
                out[1].append((pos.get((int(local[lr]), ux), -1),
                               pos.get((int(local[lr]), uy), -1)))
                out[2].append(row)


def tangent_entries(solver: Any, pos: dict[tuple[int, int], int]) -> dict[str, NDArray[np.int64]]:
    """Per rod: start, elements, coupling row, the (band flat index, CSC position) pairs of its
    free rows and columns (``ptr``, ``src``, ``dst``) and its twist locks' entries
    (``swing_ptr``, ``swing_src``, ``swing_dst``, ``swing_end``) and its rigid mounts' (``mount_*``,
    ``side_*``: :func:`~hsa_elastica.engines.statics_mounts.mount_entries`), as int64 arrays
    named as the ``HybridPlan`` fields."""
    rod = solver.state.rod
    ranges = rod_ranges(np.asarray(rod.ghost_elems_idx, dtype=np.int64), rod.director.shape[2])
    start, n_elems, coupling, ptr, src, dst = [], [], [], [0], [], []
    swing: tuple[list[Any], ...] = ([0], [], [], [])
    for s, ne in ranges:
        local = _local_unknowns(solver, s, ne)
        for lr in np.nonzero(local >= 0)[0].tolist():
            for lc in range(max(0, lr - HALF_BANDWIDTH), min(6 * ne + 3, lr + HALF_BANDWIDTH + 1)):
                q = pos.get((int(local[lr]), int(local[lc]))) if local[lc] >= 0 else None
                if q is not None:
                    src.append(lr * WIDTH + lc - lr + HALF_BANDWIDTH)
                    dst.append(q)
        _swing_entries(solver, pos, s, ne, local, swing[1:])
        rows = np.nonzero(solver.couplings.elem_start == s)[0]
        start.append(s)
        n_elems.append(ne)
        coupling.append(int(rows[0]) if rows.shape[0] else -1)
        ptr.append(len(src))
        swing[0].append(len(swing[1]))
    i64 = np.int64
    return {**mount_entries(solver, pos, rod_locals(solver)),
            "start": np.array(start, i64), "n_elems": np.array(n_elems, i64),
            "coupling": np.array(coupling, i64), "ptr": np.array(ptr, i64),
            "src": np.array(src, i64), "dst": np.array(dst, i64),
            "swing_ptr": np.array(swing[0], i64), "swing_src": np.array(swing[1], i64),
            "swing_dst": np.array(swing[2], i64).reshape(-1, 2),
            "swing_end": np.array(swing[3], i64)}
