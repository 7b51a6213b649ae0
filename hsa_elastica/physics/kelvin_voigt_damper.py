"""The Elastica damper of the TPU's Kelvin-Voigt material damping, :class:`KelvinVoigtDamping`
(a thin class around :func:`hsa_elastica.physics.material_damping.kelvin_voigt_damp`; the law,
its equations and its time integration are described there), and the table its kernel reads
(:func:`material_damping_table`, also built by the compiler for every damped rod)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from elastica.dissipation import DamperBase

from hsa_elastica.compat import compiled_entry
from hsa_elastica.params import invalid_parameter
from hsa_elastica.physics.material_damping import WORK_ROWS, DampedRod, kelvin_voigt_damp
from hsa_elastica.physics.tables import MaterialDampingTable

__all__ = ["KelvinVoigtDamping", "material_damping_table"]


def _check_time(name: str, value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if isinstance(value, bool) or not (math.isfinite(v) and 0.0 <= v <= 1.0):
        raise invalid_parameter("KelvinVoigtDamping", name, value, "a number in [0, 1] (s)")
    return v


class KelvinVoigtDamping(DamperBase):
    """PyElastica damper: Kelvin-Voigt material damping of one rod (see the module).

    Parameters (keyword-only): ``tau_axial``, ``tau_shear``, ``tau_bend``, ``tau_twist``
    retardation times [s] (0 = no damping of that strain), ``time_step`` [s] (the simulation's
    dt), ``hold_base`` / ``hold_tip`` (leave the end node and element to a boundary condition,
    e.g. :class:`~hsa_elastica.physics.actuation.MotorAngleBC` at the base).  It reads the
    rest lengths and stiffnesses the rod's
    :class:`~hsa_elastica.physics.auxetic_coupling.AuxeticCoupling` wrote in this step, and the
    strains (``sigma``, ``dilatation``) the rod's internal forces computed at the current pose:
    a damper runs after them in PyElastica's step; call
    ``rod.compute_internal_forces_and_torques`` first when calling it by hand.
    """

    def __init__(
        self,
        *,
        tau_axial: float,
        tau_shear: float,
        tau_bend: float,
        tau_twist: float,
        time_step: float,
        hold_base: bool = True,
        hold_tip: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.tau_axial = _check_time("tau_axial", tau_axial)
        self.tau_shear = _check_time("tau_shear", tau_shear)
        self.tau_bend = _check_time("tau_bend", tau_bend)
        self.tau_twist = _check_time("tau_twist", tau_twist)
        try:
            dt = float(time_step)
        except (TypeError, ValueError):
            dt = math.nan
        if not (math.isfinite(dt) and dt > 0.0):
            raise invalid_parameter("KelvinVoigtDamping", "time_step", time_step, "a number > 0 (s)")
        self.time_step = dt
        self.hold_base = bool(hold_base)
        self.hold_tip = bool(hold_tip)
        self._table: MaterialDampingTable | None = None  # one row, built at the first call
        self._rod: DampedRod | None = None
        self._kernel: Any = None  # compiled entry point of kelvin_voigt_damp for the records

    def dampen_rates(self, system: Any, time: np.float64) -> None:
        """Update the rod's velocities and angular velocities in place."""
        if self._table is None or self._rod is None:
            self._rod = DampedRod(
                system.sigma, system.dilatation, system.velocity_collection,
                system.omega_collection, system.director_collection, system.rest_lengths,
                system.rest_voronoi_lengths, system.shear_matrix, system.bend_matrix,
                system.mass, system.mass_second_moment_of_inertia,
            )
            self._table = material_damping_table([(self, system)], [(0, 0, 0)])
        if self._kernel is None:
            if not (system.velocity_collection.any() or system.omega_collection.any()):
                # a rod at rest stays at rest (the viscous stresses of zero rates are zero):
                # the call of PyElastica's finalize() at t = 0 does not compile the per-rod
                # kernel, which a fused or static run never calls (a shorter cold start).  The
                # table exists from that call on, so a state snapshot restores into it
                return
            self._kernel = compiled_entry(kelvin_voigt_damp, (self._rod, self._table, 0))
        self._kernel(self._rod, self._table, 0)


def material_damping_table(
    items: "list[tuple[KelvinVoigtDamping, Any]]", offsets: "list[tuple[int, int, int]]"
) -> MaterialDampingTable:
    """The :class:`~hsa_elastica.physics.tables.MaterialDampingTable` of the dampers ``items``
    (``(damper, rod)`` pairs), rod ``k``'s first node, element and Voronoi entry at
    ``offsets[k]`` of the arrays the kernel will be given (the damper's own one-row table:
    offsets 0; the compiler's: offsets into the memory block)."""
    sizes = [int(rod.n_elems) for _, rod in items]
    width = max(sizes, default=0) + 1
    return MaterialDampingTable(
        node_start=np.array([r[0] for r in offsets], dtype=np.int64),
        elem_start=np.array([r[1] for r in offsets], dtype=np.int64),
        vor_start=np.array([r[2] for r in offsets], dtype=np.int64),
        n_elems=np.array(sizes, dtype=np.int64),
        tau=np.array(
            [[op.tau_shear, op.tau_axial, op.tau_bend, op.tau_twist] for op, _ in items],
            dtype=np.float64,
        ).reshape(-1, 4),
        dt=np.array([op.time_step for op, _ in items], dtype=np.float64),
        hold=np.array([[op.hold_base, op.hold_tip] for op, _ in items], dtype=np.int64).reshape(-1, 2),
        work=np.zeros((len(items), WORK_ROWS, width)),
    )
