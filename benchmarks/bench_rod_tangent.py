"""Cost of the consistent rod tangent (physics/rod_tangent.py) against one force evaluation.

One 25-element PyElastica rod, bent, twisted and stretched.  "Force evaluation" is what the
static residual evaluates for a rod: ``internal_forces_inplace`` + ``internal_torques_inplace``;
"tangent" is :func:`rod_tangent_band` (the whole 153 x 153 band).  Both run ``REPS`` times inside
one compiled loop (no Python call overhead in the figure), after warm-up, the two alternating
round by round; the figures are the median (and the fastest) of ``ROUNDS`` rounds, in µs per
call, and the median of the rounds' ratios.  The coloured forward-difference Jacobian it
would replace costs one force evaluation per colour (``1 + colours``).  The second pair
adds the one-way auxetic law: its update before the forces, its chain rule
(:mod:`hsa_elastica.physics.auxetic_tangent`) after the tangent.

Run: python benchmarks/bench_rod_tangent.py
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.auxetic_law import auxetic_update
from hsa_elastica.physics.auxetic_tangent import auxetic_tangent_band, auxetic_tangent_work
from hsa_elastica.physics.rod_kernels import (
    internal_forces_inplace,
    internal_torques_inplace,
    rod_work,
    rotation_log_inplace,
)
from hsa_elastica.physics.rod_tangent import (
    HALF_BANDWIDTH,
    RodTangentState,
    rod_tangent_band,
    tangent_work,
)
from hsa_elastica.physics.tables import CouplingTable, RodBlockArrays

N_ELEMS = 25
REPS = 2000
ROUNDS = 31


@njit  # type: ignore[misc]
def _forces_loop(rod, work, reps):  # type: ignore[no-untyped-def]
    for _ in range(reps):
        internal_forces_inplace(rod, work)
        internal_torques_inplace(rod, work)


@njit  # type: ignore[misc]
def _tangent_loop(state, work, band, reps):  # type: ignore[no-untyped-def]
    for _ in range(reps):
        rod_tangent_band(state, work, band)


def _rod() -> RodBlockArrays:
    from elastica.rod.cosserat_rod import CosseratRod

    rod = CosseratRod.straight_rod(N_ELEMS, np.zeros(3), np.array([0.0, 0.0, 1.0]),
                                   np.array([1.0, 0.0, 0.0]), 0.1, 5e-3, 1000.0,
                                   youngs_modulus=1e6, shear_modulus=1e6 / 3.0)
    rng = np.random.default_rng(0)
    rod.position_collection[:] += 4e-4 * rng.normal(size=rod.position_collection.shape)
    rod.position_collection[2] *= 1.05
    for k in range(N_ELEMS):
        c, s = np.cos(0.1 * k), np.sin(0.1 * k)
        rod.director_collection[:, :, k] = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    nn = N_ELEMS + 1
    fields = {"position": rod.position_collection, "velocity": np.zeros((3, nn)),
              "omega": np.zeros((3, N_ELEMS)), "director": rod.director_collection,
              "v_w": np.zeros((2, 3, nn)), "dvdt_dwdt": np.zeros((2, 3, nn)),
              "acceleration": np.zeros((3, nn)), "alpha": np.zeros((3, N_ELEMS)),
              "ghost_elems_idx": np.zeros(0, dtype=np.int64),
              "ghost_voronoi_idx": np.zeros(0, dtype=np.int64)}
    for name in RodBlockArrays._fields:
        if name not in fields:
            fields[name] = getattr(rod, name)
    return RodBlockArrays(**fields)


def _per_call(fn) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    fn(REPS)
    return (time.perf_counter() - t0) / REPS * 1e6


def _rounds(*fns) -> NDArray[np.float64]:  # type: ignore[no-untyped-def]
    """(ROUNDS, len(fns)) µs per call of each, measured in alternation (a shared machine's
    load falls on all alike)."""
    for fn in fns:
        fn(10)  # warm-up (compiles)
    return np.array([[_per_call(fn) for fn in fns] for _ in range(ROUNDS)])


@njit  # type: ignore[misc]
def _coupled_forces_loop(rod, work, table, reps):  # type: ignore[no-untyped-def]
    for _ in range(reps):
        rotation_log_inplace(rod.director, work.vor3)
        auxetic_update(work.vor3, table, 0, -1.0, rod.rest_lengths, rod.rest_voronoi_lengths,
                       rod.shear_matrix, rod.bend_matrix)
        internal_forces_inplace(rod, work)
        internal_torques_inplace(rod, work, True)


@njit  # type: ignore[misc]
def _coupled_tangent_loop(state, work, awork, table, band, reps):  # type: ignore[no-untyped-def]
    for _ in range(reps):
        rod_tangent_band(state, work, band)
        auxetic_tangent_band(state, table, 0, awork, band)


def _table(b: RodBlockArrays) -> CouplingTable:
    """A one-row one-way coupling on the rod (slopes of the order of the paper's rods)."""
    one = np.ones(1)
    nv = N_ELEMS - 1
    return CouplingTable(**{f: np.zeros(1) for f in CouplingTable._fields})._replace(
        handedness=one, C_eps=0.01 * one, eps_min=-0.3 * one, eps_max=0.5 * one,
        kappa_min=-40.0 * one, kappa_max=40.0 * one, area=np.pi * 5e-3**2 * one,
        E_slope=1e4 * one, G_slope=5e3 * one, bend_slope=5e-6 * one, twist_slope=4e-6 * one,
        clip_width=0.05 * one, printed_lengths=b.rest_lengths.copy()[None],
        printed_voronoi=b.rest_voronoi_lengths.copy()[None],
        printed_shear=b.shear_matrix.copy()[None], printed_bend=b.bend_matrix.copy()[None],
        **{f: np.zeros((1, nv)) for f in ("kappa_vor_raw", "kappa_vor", "kappa_vor_clipped", "couple")},
        **{f: np.zeros((1, N_ELEMS)) for f in ("kappa_elem", "kappa_elem_clipped", "eps", "eps_creep", "play", "play_trial")},
    )


def main() -> None:
    b = _rod()
    work = rod_work(N_ELEMS, 1)
    state = RodTangentState(b.position, b.director, b.rest_lengths, b.rest_voronoi_lengths,
                            b.rest_sigma, b.rest_kappa, b.shear_matrix, b.bend_matrix)
    twork = tangent_work(N_ELEMS)
    awork = auxetic_tangent_work(N_ELEMS)
    table = _table(b)
    band = np.zeros((6 * N_ELEMS + 3, 2 * HALF_BANDWIDTH + 1))
    t = _rounds(lambda r: _forces_loop(b, work, r), lambda r: _tangent_loop(state, twork, band, r),
                lambda r: _coupled_forces_loop(b, work, table, r),
                lambda r: _coupled_tangent_loop(state, twork, awork, table, band, r))
    med = np.median(t, axis=0)
    low = np.min(t, axis=0)
    print(f"rod of {N_ELEMS} elements, {ROUNDS} rounds x {REPS} calls: median (fastest round) [us]")
    for label, f, g in (("rod alone", 0, 1), ("with the one-way auxetic law", 2, 3)):
        print(f"  {label}: force evaluation {med[f]:.2f} ({low[f]:.2f}), tangent {med[g]:.2f} "
              f"({low[g]:.2f}); tangent / force evaluation: median of the rounds' ratios "
              f"{np.median(t[:, g] / t[:, f]):.2f} (fastest rounds {low[g] / low[f]:.2f})")


if __name__ == "__main__":
    main()
