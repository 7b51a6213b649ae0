"""A new law in three pieces: a play-type hysteresis of a rod's rest length.

The rest strain ``m`` of every element follows the element's strain against its printed
length, ``s = l / l_printed - 1``, with a dead band of half-width ``w`` (a play operator):
``m <- clip(m, s - w, s + w)``, rest length ``(1 + m) l_printed``.
"""

from typing import NamedTuple

import numpy as np
from elastica import CosseratRod
from elastica.external_forces import NoForces
from numba import njit


class HysteresisTable(NamedTuple):
    """One row per rod: the law's parameter and its state (as the tables in physics/tables.py)."""

    width: np.ndarray  # (n,) half-width w of the dead band [-]
    printed_lengths: np.ndarray  # (n, n_elements) [m]
    memory: np.ndarray  # (n, n_elements) rest strain m [-], the state


@njit
def play_rest_lengths(table, i, lengths, rest_lengths):
    """The kernel: row ``i`` of ``table`` on one rod's element ``lengths`` [m]; writes its
    ``rest_lengths`` [m] and the row's memory."""
    w = table.width[i]
    for k in range(rest_lengths.shape[0]):
        s = lengths[k] / table.printed_lengths[i, k] - 1.0
        m = min(max(table.memory[i, k], s - w), s + w)
        table.memory[i, k] = m
        rest_lengths[k] = (1.0 + m) * table.printed_lengths[i, k]


class RestLengthHysteresis(NoForces):
    """The operator: holds a one-row table (built at the first call) and calls the kernel."""

    def __init__(self, *, width: float) -> None:
        super().__init__()
        if not 0.0 <= width < 1.0:
            raise ValueError(f"RestLengthHysteresis.width = {width!r} is invalid: must be in [0, 1)")
        self.width = float(width)
        self.table = None

    def apply_forces(self, system, time=0.0):
        if self.table is None:
            n = system.rest_lengths.shape[0]
            self.table = HysteresisTable(
                np.array([self.width]), np.array(system.rest_lengths).reshape(1, n), np.zeros((1, n))
            )
        play_rest_lengths(self.table, 0, system.lengths, system.rest_lengths)


if __name__ == "__main__":
    rod = CosseratRod.straight_rod(
        5, np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]),
        0.1, 0.01, 1000.0, youngs_modulus=1e6, shear_modulus=4e5,
    )
    law = RestLengthHysteresis(width=0.02)
    x0 = rod.position_collection.copy()
    for stretch in (1.05, 1.0, 0.99):  # stretch the rod by hand, then apply the law
        rod.position_collection[:] = x0 * np.array([[1.0], [1.0], [stretch]])
        rod.compute_internal_forces_and_torques(np.float64(0.0))  # element lengths
        law.apply_forces(rod)
        print(f"stretch {stretch}: rest strain {law.table.memory[0, 0]:.12f}")
