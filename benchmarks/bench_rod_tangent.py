"""Cost of the consistent rod tangent (physics/rod_tangent.py) against one force evaluation.

One 25-element PyElastica rod, bent, twisted and stretched.  "Force evaluation" is what the
static residual evaluates for a rod: ``internal_forces_inplace`` + ``internal_torques_inplace``;
"tangent" is :func:`rod_tangent_band` (the whole 153 x 153 band).  Both run ``REPS`` times inside
one compiled loop (no Python call overhead in the figure), after warm-up, the two alternating
round by round; the figures are the median (and the fastest) of ``ROUNDS`` rounds, in µs per
call, and the median of the rounds' ratios.  The coloured forward-difference Jacobian it
would replace costs one force evaluation per colour (``1 + colours``).

Run: python benchmarks/bench_rod_tangent.py
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit
from numpy.typing import NDArray

from hsa_elastica.physics.rod_kernels import internal_forces_inplace, internal_torques_inplace, rod_work
from hsa_elastica.physics.rod_tangent import (
    HALF_BANDWIDTH,
    RodTangentState,
    rod_tangent_band,
    tangent_work,
)
from hsa_elastica.physics.tables import RodBlockArrays

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


def _rounds(force, tangent) -> NDArray[np.float64]:  # type: ignore[no-untyped-def]
    """(ROUNDS, 2) µs per call of both, measured in alternation (a shared machine's load
    falls on both alike)."""
    force(10)  # warm-up (compiles)
    tangent(10)
    return np.array([(_per_call(force), _per_call(tangent)) for _ in range(ROUNDS)])


def main() -> None:
    b = _rod()
    work = rod_work(N_ELEMS, 1)
    state = RodTangentState(b.position, b.director, b.rest_lengths, b.rest_voronoi_lengths,
                            b.rest_sigma, b.rest_kappa, b.shear_matrix, b.bend_matrix)
    twork = tangent_work(N_ELEMS)
    band = np.zeros((6 * N_ELEMS + 3, 2 * HALF_BANDWIDTH + 1))
    t = _rounds(lambda r: _forces_loop(b, work, r), lambda r: _tangent_loop(state, twork, band, r))
    med = np.median(t, axis=0)
    low = np.min(t, axis=0)
    print(f"rod of {N_ELEMS} elements, {ROUNDS} rounds x {REPS} calls: median (fastest round)")
    print(f"  force evaluation (internal forces + torques): {med[0]:7.2f} ({low[0]:.2f}) us")
    print(f"  consistent tangent ({6 * N_ELEMS + 3} unknowns, band): {med[1]:7.2f} ({low[1]:.2f}) us")
    print(f"  tangent / force evaluation: median of the rounds' ratios "
          f"{np.median(t[:, 1] / t[:, 0]):.2f} (fastest rounds {low[1] / low[0]:.2f})")


if __name__ == "__main__":
    main()
