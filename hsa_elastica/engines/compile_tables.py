"""Per-law tables of a compiled model (:mod:`hsa_elastica.engines.compile`).

:class:`TableBuilder` turns the operators of one kind -- each with the system(s) it acts on --
into the NamedTuple table of :mod:`hsa_elastica.physics.tables` that the fused stepper and the
static solver read: rod-end constraints, point loads, the axial compression law, the
Kelvin-Voigt material damping, the auxetic couplings, the platform joints, the motors and the
rods' velocity dampers.  Indices are offsets into the memory blocks (``rod_arrays`` /
``body_arrays``); operator parameters are read through their public attributes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from elastica.boundary_conditions import FixedConstraint
from elastica.external_forces import EndpointForces

from hsa_elastica import compat
from hsa_elastica.physics.actuation import DistalTwistLockBC
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling, coupling_table
from hsa_elastica.physics.compression_law import AxialCompressionLaw
from hsa_elastica.physics.joints import PlatformJoint, resolve_joint_indices
from hsa_elastica.physics.kelvin_voigt_damper import KelvinVoigtDamping, material_damping_table
from hsa_elastica.physics.mounts import MotorMount, TwistMount
from hsa_elastica.physics.rigid_mounts import _BodyMountBC
from hsa_elastica.physics.tables import (
    END_FIXED,
    END_FREE_TWIST,
    END_TWIST_LOCK,
    BodyBlockArrays,
    CompressionTable,
    CouplingTable,
    EndTable,
    GravityTable,
    JointTable,
    MaterialDampingTable,
    MotorTable,
    RodBlockArrays,
    RodDamperTable,
)

__all__ = ["FastPathUnsupported", "TableBuilder", "end_table", "gravity_table"]


class FastPathUnsupported(compat.CompatError):
    """The simulator holds an operator (or layout) the compiled engines do not implement."""


def end_table(rows: list[tuple[int, int, int, NDArray[np.float64], NDArray[np.float64]]]
               ) -> EndTable:
    """:class:`EndTable` of ``(kind, node, element, position, director)`` rows."""
    n = len(rows)
    return EndTable(
        kind=np.array([r[0] for r in rows], dtype=np.int64),
        node=np.array([r[1] for r in rows], dtype=np.int64),
        element=np.array([r[2] for r in rows], dtype=np.int64),
        position=np.array([r[3] for r in rows], dtype=np.float64).reshape(n, 3),
        director=np.array([r[4] for r in rows], dtype=np.float64).reshape(n, 3, 3),
        work=np.zeros((3, 3)),
    )


def gravity_table(rows: list[tuple[int, int, NDArray[np.float64]]]) -> GravityTable:
    """:class:`GravityTable` of ``(start, size, g)`` rows."""
    return GravityTable(
        start=np.array([r[0] for r in rows], dtype=np.int64),
        size=np.array([r[1] for r in rows], dtype=np.int64),
        acceleration=np.array([r[2] for r in rows], dtype=np.float64).reshape(-1, 3),
    )


class TableBuilder:
    """The table builders of the compiler, over the memory blocks ``rod_arrays`` and
    ``body_arrays`` (set by the subclass before any table is built)."""

    rod_arrays: RodBlockArrays
    body_arrays: BodyBlockArrays

    def _rod_offsets(self, rod: Any) -> tuple[int, int, int]:
        r = self.rod_arrays
        return (
            compat.block_offset(rod.position_collection, r.position),
            compat.block_offset(rod.director_collection, r.director),
            compat.block_offset(rod.bend_matrix, r.bend_matrix),
        )

    def _body_index(self, body: Any) -> int:
        return compat.block_offset(body.position_collection, self.body_arrays.position)

    def _is_rod(self, system: Any) -> bool:
        return hasattr(system, "rest_lengths") and np.shares_memory(
            system.position_collection, self.rod_arrays.position
        )

    def _is_body(self, system: Any) -> bool:
        return not hasattr(system, "rest_lengths") and np.shares_memory(
            system.position_collection, self.body_arrays.position
        )

    def _end_rows(self, bc: Any, rod: Any
                  ) -> list[tuple[int, int, int, NDArray[np.float64], NDArray[np.float64]]]:
        """Rows ``(kind, node, element, position, director)`` of a rod-end constraint."""
        n0, e0, _ = self._rod_offsets(rod)
        nn = rod.position_collection.shape[1]
        ne = rod.director_collection.shape[2]
        pos_idx = [int(i) % nn for i in np.asarray(bc.constrained_position_idx).reshape(-1)]
        dir_idx = [int(i) % ne for i in np.asarray(bc.constrained_director_idx).reshape(-1)]
        if isinstance(bc, FixedConstraint):
            pos = np.asarray(bc.fixed_positions, dtype=np.float64).reshape(3, -1)
            dirs = np.asarray(bc.fixed_directors, dtype=np.float64).reshape(3, 3, -1)
            return (
                [(END_FIXED, n0 + k, -1, pos[:, j].copy(), np.eye(3)) for j, k in enumerate(pos_idx)]
                + [(END_FIXED, -1, e0 + k, np.zeros(3), dirs[:, :, j].copy())
                   for j, k in enumerate(dir_idx)]
            )
        if isinstance(bc, DistalTwistLockBC):
            return [(END_TWIST_LOCK, -1, e0 + dir_idx[0], np.zeros(3),
                     np.array(bc.reference_director, dtype=np.float64))]
        return [(END_FREE_TWIST, n0 + pos_idx[0], e0 + dir_idx[0],
                 np.array(bc.fixed_position, dtype=np.float64),
                 np.array(bc.reference_director, dtype=np.float64))]

    def _load_rows(self, op: Any, rod: Any
                   ) -> list[tuple[int, NDArray[np.float64], int, float, float, Any]]:
        """Rows ``(node, force, element, torque, ramp, schedule)`` of a point load."""
        n0, e0, _ = self._rod_offsets(rod)
        if isinstance(op, EndpointForces):
            ramp = float(op.ramp_up_time)
            last = n0 + rod.position_collection.shape[1] - 1
            return [
                (node, np.asarray(f, dtype=np.float64).reshape(3).copy(), -1, 0.0, ramp, None)
                for node, f in ((n0, op.start_force), (last, op.end_force))
                if node == last or np.any(np.asarray(f) != 0.0)  # (a tip row even at 0 N)
            ]
        elem = e0 + int(op.element_index) % rod.director_collection.shape[2]
        return [(-1, np.zeros(3), elem, float(op.torque(0.0)), 0.0, op)]

    def _compression_table(self, items: list[tuple[AxialCompressionLaw, Any]]) -> CompressionTable:
        n = len(items)
        rows = [self._rod_offsets(rod) for _, rod in items]
        sizes = [int(rod.n_elems) for _, rod in items]
        width = max(sizes, default=1)
        printed = np.zeros((n, max(width - 1, 1)))
        for k, (_, rod) in enumerate(items):
            printed[k, : sizes[k] - 1] = rod.rest_voronoi_lengths
        return CompressionTable(
            node_start=np.array([r[0] for r in rows], dtype=np.int64),
            elem_start=np.array([r[1] for r in rows], dtype=np.int64),
            vor_start=np.array([r[2] for r in rows], dtype=np.int64),
            n_elems=np.array(sizes, dtype=np.int64),
            handedness=np.array([op.handedness for op, _ in items], dtype=np.float64),
            kappa_min=np.array([op.kappa_h_min for op, _ in items], dtype=np.float64),
            kappa_max=np.array([op.kappa_h_max for op, _ in items], dtype=np.float64),
            ratio=np.array([op.law.compression_ratio for op, _ in items], dtype=np.float64),
            slope=np.array([op.law.compression_ratio_slope for op, _ in items], dtype=np.float64),
            printed_voronoi=printed,
            work=np.zeros((n, 5, width)),
        )

    def _material_table(self, items: list[tuple[KelvinVoigtDamping, Any]]) -> MaterialDampingTable:
        return material_damping_table(items, [self._rod_offsets(rod) for _, rod in items])

    def _coupling_table(self, items: list[tuple[AuxeticCoupling, Any]]) -> CouplingTable:
        if len({int(rod.n_elems) for _, rod in items}) > 1:
            raise FastPathUnsupported("the fast path needs rods with equal element counts")
        return coupling_table(items, [self._rod_offsets(rod) for _, rod in items])

    def _joint_table(
        self, items: list[tuple[PlatformJoint, Any, Any, Any, Any]], n_motors: int
    ) -> JointTable:
        """Joint rows; a :class:`MotorMount` row reads the motor angle in column ``n_motors +``
        its index among the mounts."""
        nodes, elems, bodies = [], [], []
        cols: list[int] = []
        for joint, *_ in items:
            mount = isinstance(joint, (MotorMount, TwistMount))
            cols.append(n_motors + sum(c >= 0 for c in cols) if mount else -1)
        for _joint, one, idx_one, two, idx_two in items:
            if not self._is_rod(one) or not self._is_body(two):
                raise FastPathUnsupported("PlatformJoint must connect a rod (first) to a body")
            node, elem, body = resolve_joint_indices(one, idx_one, two, idx_two)
            n0, e0, _ = self._rod_offsets(one)
            nodes.append(n0 + node)
            elems.append(e0 + elem)
            bodies.append(self._body_index(two) + body)
        n = len(items)
        return JointTable(
            node=np.array(nodes, dtype=np.int64),
            element=np.array(elems, dtype=np.int64),
            body=np.array(bodies, dtype=np.int64),
            attachment=np.array([j.attachment_point for j, *_ in items], dtype=np.float64).reshape(n, 3),
            k_F=np.array([j.k_F for j, *_ in items], dtype=np.float64),
            nu_F=np.array([j.nu_F for j, *_ in items], dtype=np.float64),
            k_tau=np.array([j.k_tau for j, *_ in items], dtype=np.float64),
            nu_tau=np.array([j.nu_tau for j, *_ in items], dtype=np.float64),
            rest_orientation=np.zeros((n, 3, 3)),
            initialized=np.zeros(n, dtype=np.int64),
            angle_col=np.array(cols, dtype=np.int64),
            base_orientation=np.zeros((n, 3, 3)),
            free_twist=np.array([isinstance(j, TwistMount) for j, *_ in items], dtype=np.int64),
        )

    def _motor_table(self, items: list[tuple[Any, Any]]) -> MotorTable:
        nodes, elems = [], []
        for bc, rod in items:
            n0, e0, _ = self._rod_offsets(rod)
            pos_idx = int(np.asarray(bc.constrained_position_idx).reshape(-1)[0])
            dir_idx = int(np.asarray(bc.constrained_director_idx).reshape(-1)[0])
            nodes.append(n0 + pos_idx % rod.position_collection.shape[1])
            elems.append(e0 + dir_idx % rod.director_collection.shape[2])
        n = len(items)
        mounted = [isinstance(bc, _BodyMountBC) for bc, _ in items]
        return MotorTable(
            node=np.array(nodes, dtype=np.int64),
            element=np.array(elems, dtype=np.int64),
            fixed_position=np.array([bc.fixed_position for bc, _ in items], dtype=np.float64).reshape(n, 3),
            reference_director=np.array(
                [bc.relative_director if m else bc.reference_director
                 for (bc, _), m in zip(items, mounted)], dtype=np.float64
            ).reshape(n, 3, 3),
            has_rate=np.array(
                [getattr(bc, "angle_rate", None) is not None for bc, _ in items], dtype=np.int64),
            work=np.zeros((3, 3)),
            body=np.array([self._body_index(bc.body) if m else -1
                           for (bc, _), m in zip(items, mounted)], dtype=np.int64),
            offset=np.array([bc.offset if m else np.zeros(3)
                             for (bc, _), m in zip(items, mounted)], dtype=np.float64).reshape(n, 3),
            free_twist=np.array([getattr(bc, "free_twist", False) for bc, _ in items], dtype=np.int64),
            mount_work=np.zeros((3, 3, 3)),
        )

    def _rod_damper_table(self, items: list[tuple[Any, Any, Any, bool]]) -> RodDamperTable:
        n = len(items)
        if n == 0:
            return RodDamperTable(
                node_start=np.zeros(0, dtype=np.int64),
                elem_start=np.zeros(0, dtype=np.int64),
                translational=np.zeros((0, 1)),
                rotational=np.zeros((0, 3, 1)),
                power=np.zeros(0, dtype=np.int64),
            )
        nn = {rod.position_collection.shape[1] for rod, *_ in items}
        if len(nn) != 1:
            raise FastPathUnsupported("the fast path needs rods with equal element counts")
        n_nodes = nn.pop()
        n_elems = n_nodes - 1
        trans = np.empty((n, n_nodes))
        rot = np.empty((n, 3, n_elems))
        starts_n, starts_e = [], []
        for k, (rod, ct, cr, _) in enumerate(items):
            n0, e0, _ = self._rod_offsets(rod)
            starts_n.append(n0)
            starts_e.append(e0)
            trans[k] = np.broadcast_to(np.asarray(ct, dtype=np.float64), (n_nodes,))
            rot[k] = np.broadcast_to(np.asarray(cr, dtype=np.float64), (3, n_elems))
        return RodDamperTable(
            node_start=np.array(starts_n, dtype=np.int64),
            elem_start=np.array(starts_e, dtype=np.int64),
            translational=trans,
            rotational=rot,
            power=np.array([p for *_, p in items], dtype=np.int64),
        )
