"""Compile a finalized HSA simulator into the tables of :mod:`hsa_elastica.physics.tables`.

The fused stepper and the static solver do not walk the operators every step: they read one
:class:`CompiledModel` -- views of the memory blocks (the state), one table per law (auxetic
couplings, joints, motors, dampers, gravity) and the *programs* that list the operators in
PyElastica's call order.  The operator instances are read through their public attributes;
where PyElastica keeps things private (feature groups, memory-block layout, damper factors) the
access goes through :mod:`hsa_elastica.compat`.  Only the package's own operators and
PyElastica's ``GravityForces`` / ``AnalyticalLinearDamper`` are supported; anything else raises
:class:`FastPathUnsupported` naming it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from elastica.boundary_conditions import FixedConstraint
from elastica.external_forces import EndpointForces, GravityForces

from hsa_elastica import compat
from hsa_elastica.physics.actuation import (
    BaseTwistTorque,
    DistalTwistLockBC,
    FreeTwistBC,
    MotorAngleBC,
)
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling
from hsa_elastica.physics.compression_law import AxialCompressionLaw
from hsa_elastica.physics.joints import PlatformJoint, resolve_joint_indices
from hsa_elastica.physics.mounts import MotorMount, TwistMount
from hsa_elastica.physics.material_damping import WORK_ROWS, KelvinVoigtDamping
from hsa_elastica.physics.rigid_mounts import MountReaction, _BodyMountBC
from hsa_elastica.physics.tables import (
    END_FIXED,
    END_FREE_TWIST,
    END_TWIST_LOCK,
    OP_COMPRESSION,
    OP_COUPLING,
    OP_DAMP_BODY,
    OP_END,
    OP_LOAD,
    OP_DAMP_ROD,
    OP_GRAVITY_BODY,
    OP_GRAVITY_ROD,
    OP_JOINT_FORCE,
    OP_JOINT_TORQUE,
    OP_MATERIAL_DAMPING,
    OP_COUPLING_TORQUE,
    OP_MOTOR,
    OP_MOUNT_REACTION,
    ROD_FIELDS,
    BodyBlockArrays,
    BodyDamperTable,
    CompressionTable,
    CouplingTable,
    EndTable,
    GravityTable,
    LoadTable,
    JointTable,
    MaterialDampingTable,
    MotorTable,
    RodBlockArrays,
    RodDamperTable,
)

__all__ = ["CompiledModel", "FastPathUnsupported", "compile_simulator"]


class FastPathUnsupported(compat.CompatError):
    """The simulator holds an operator (or layout) the compiled engines do not implement."""


@dataclass
class CompiledModel:
    """State views, law tables and operator programs of one finalized simulator.

    ``motor_bcs`` holds the command holders of the ``motors`` rows (row ``i``: a
    :class:`MotorAngleBC` or a rigid :class:`~hsa_elastica.physics.rigid_mounts.MotorMountBC`,
    or for a ``TwistMountBC`` its ``MountReaction``, whose schedule is its ``torque``), then the
    compliant :class:`~hsa_elastica.physics.mounts.MotorMount` / ``TwistMount`` instances (the
    joint rows whose ``angle_col`` is their index in this list; a ``TwistMount``'s schedule is
    its ``torque``): their ``angle`` / ``angle_rate`` schedules are read at every call of the engine, so a schedule
    reassigned after compilation is followed.  ``callbacks`` are the callback objects (the
    recorders behind PyElastica's wrappers); ``callback_every`` is the gcd of their ``every``
    attributes in steps (0: none; 1 if one has none).  ``ends``, ``loads`` and
    ``compression`` are the rod-end constraints, point loads and compression law of the
    single-rod experiments (empty for a robot).  A model without rigid bodies (a single rod)
    has empty body arrays.
    """

    rod_arrays: RodBlockArrays
    body_arrays: BodyBlockArrays
    couplings: CouplingTable
    joints: JointTable
    motors: MotorTable
    motor_bcs: list[Any]
    rod_dampers: RodDamperTable
    body_dampers: BodyDamperTable
    rod_gravity: GravityTable
    body_gravity: GravityTable
    material: MaterialDampingTable
    sync_program: NDArray[np.int64]
    values_program: NDArray[np.int64]
    rates_program: NDArray[np.int64]
    callback_every: int
    callbacks: list[Any]
    ends: EndTable
    loads: LoadTable
    compression: CompressionTable
    #: (row of ``loads``, BaseTwistTorque) whose torque is a schedule ``t -> tau``: the table
    #: holds ``tau(0)``; a driver that advances time must refresh the row
    scheduled_loads: list[tuple[int, Any]]

    def commands(self, t: float) -> NDArray[np.float64]:
        """Each motor's command at time ``t`` [s], in the order of :attr:`motor_bcs`: the motor
        angle [rad] (``MotorAngleBC``, ``MotorMount``) or torque [N m] (``TwistMount``)."""
        return np.array(
            [float((bc.angle if hasattr(bc, "angle") else bc.torque)(t)) for bc in self.motor_bcs],
            dtype=np.float64,
        )


def compile_simulator(sim: Any) -> CompiledModel:
    """The :class:`CompiledModel` of a finalized simulator whose operators were not applied yet."""
    return _Compiler(sim).model


class _NoBodies:
    """Stand-in for the rigid-body memory block of a model without bodies (empty arrays)."""

    def __init__(self) -> None:
        for f in BodyBlockArrays._fields:
            name = ROD_FIELDS.get(f, f)
            shape: tuple[int, ...] = {"director": (3, 3, 0), "v_w": (2, 0), "dvdt_dwdt": (2, 0),
                                      "mass": (0,), "mass_second_moment_of_inertia": (3, 3, 0),
                                      "inv_mass_second_moment_of_inertia": (3, 3, 0)}.get(f, (3, 0))
            setattr(self, name, np.zeros(shape))


def _end_table(rows: list[tuple[int, int, int, NDArray[np.float64], NDArray[np.float64]]]
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


def _gravity_table(rows: list[tuple[int, int, NDArray[np.float64]]]) -> GravityTable:
    """:class:`GravityTable` of ``(start, size, g)`` rows."""
    return GravityTable(
        start=np.array([r[0] for r in rows], dtype=np.int64),
        size=np.array([r[1] for r in rows], dtype=np.int64),
        acceleration=np.array([r[2] for r in rows], dtype=np.float64).reshape(-1, 3),
    )


class _Compiler:
    """Reads the operators of one simulator into tables (used once, by :func:`compile_simulator`)."""

    def __init__(self, sim: Any) -> None:
        blocks = compat.memory_blocks(sim)
        rod_blocks = [b for b in blocks if hasattr(b, "ghost_elems_idx")]
        body_blocks = [b for b in blocks if not hasattr(b, "ghost_elems_idx")]
        if len(rod_blocks) != 1 or len(body_blocks) > 1 or len(blocks) != 1 + len(body_blocks):
            raise FastPathUnsupported(
                "the fast path needs exactly one rod memory block and at most one rigid-body "
                "block (straight CosseratRods + Cylinder/Sphere bodies)"
            )
        rb = rod_blocks[0]
        bb = body_blocks[0] if body_blocks else _NoBodies()
        if getattr(rb, "ring_rod_flag", False):
            raise FastPathUnsupported("ring rods are not supported by the fast path")
        self._rod_block, self._body_block = rb, bb
        self.rod_arrays = RodBlockArrays(
            **{
                f: getattr(rb, ROD_FIELDS.get(f, f))
                for f in RodBlockArrays._fields
            }
        )
        self.body_arrays = BodyBlockArrays(
            **{f: getattr(bb, ROD_FIELDS.get(f, f)) for f in BodyBlockArrays._fields}
        )
        for arr in (*self.rod_arrays, *self.body_arrays):
            if arr.dtype.kind == "f" and arr.dtype != np.float64:
                raise FastPathUnsupported("memory-block arrays must be float64")
        self._compile(sim)
        self.model = CompiledModel(
            rod_arrays=self.rod_arrays,
            body_arrays=self.body_arrays,
            couplings=self.couplings,
            joints=self.joints,
            motors=self.motors,
            motor_bcs=self._motor_bcs,
            rod_dampers=self.rod_dampers,
            body_dampers=self.body_dampers,
            rod_gravity=self.rod_gravity,
            body_gravity=self.body_gravity,
            material=self.material,
            sync_program=self.sync_program,
            values_program=self.values_program,
            rates_program=self.rates_program,
            callback_every=self._callback_period(sim),
            callbacks=[compat.callback_instance(op) for op in compat.feature_group(sim, "callback")],
            ends=self.ends,
            loads=self.loads,
            compression=self.compression,
            scheduled_loads=self.scheduled_loads,
        )

    # -- compilation ---------------------------------------------------------------------
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

    def _compile(self, sim: Any) -> None:
        couplings: list[tuple[AuxeticCoupling, Any]] = []
        joints: list[tuple[PlatformJoint, Any, Any, Any, Any]] = []
        # gravity rows: (first node / body index in the block, node / body count, g [m/s^2])
        rod_gravity: list[tuple[int, int, NDArray[np.float64]]] = []
        body_gravity: list[tuple[int, int, NDArray[np.float64]]] = []
        material: list[tuple[KelvinVoigtDamping, Any]] = []
        loads: list[tuple[int, NDArray[np.float64], int, float, float, Any]] = []
        compression: list[tuple[AxialCompressionLaw, Any]] = []
        sync: list[tuple[int, int]] = []
        seen: dict[int, int] = {}
        coupling_of: dict[int, int] = {}
        reactions: list[tuple[MountReaction, Any, Any]] = []
        for op in compat.feature_group(sim, "synchronize"):
            inst, method, kw = compat.bound_operator(op)
            if isinstance(inst, AuxeticCoupling):
                if method == "apply_torques":
                    # the reciprocal twist couple, applied where the operator applies it
                    if inst.reciprocal:
                        sync.append((OP_COUPLING_TORQUE, coupling_of[id(inst)]))
                    continue
                if not self._is_rod(kw["system"]):
                    raise FastPathUnsupported("AuxeticCoupling on a system outside the rod block")
                if inst.eps is not None:
                    raise FastPathUnsupported("AuxeticCoupling was already applied (not fresh)")
                coupling_of[id(inst)] = len(couplings)
                sync.append((OP_COUPLING, len(couplings)))
                couplings.append((inst, kw["system"]))
            elif isinstance(inst, PlatformJoint):
                key = id(inst)
                if key not in seen:
                    if inst.rest_relative_orientation is not None:
                        raise FastPathUnsupported("PlatformJoint was already applied (not fresh)")
                    seen[key] = len(joints)
                    joints.append(
                        (inst, kw["system_one"], kw["index_one"], kw["system_two"], kw["index_two"])
                    )
                code = OP_JOINT_FORCE if method == "apply_forces" else OP_JOINT_TORQUE
                sync.append((code, seen[key]))
            elif isinstance(inst, MountReaction):
                if method == "apply_torques":
                    continue  # apply_forces hands the whole wrench over
                if not self._is_rod(kw["system_one"]) or not self._is_body(kw["system_two"]):
                    raise FastPathUnsupported("MountReaction must connect a rod (first) to a body")
                sync.append((OP_MOUNT_REACTION, len(reactions)))
                reactions.append((inst, kw["system_one"], kw["system_two"]))
            elif isinstance(inst, (EndpointForces, BaseTwistTorque)):
                if isinstance(inst, EndpointForces) == (method == "apply_torques"):
                    continue  # the other half is PyElastica's no-op
                if not self._is_rod(kw["system"]):
                    raise FastPathUnsupported(f"{type(inst).__name__} on a system outside the rod block")
                for row in self._load_rows(inst, kw["system"]):
                    sync.append((OP_LOAD, len(loads)))
                    loads.append(row)
            elif isinstance(inst, AxialCompressionLaw):
                if method == "apply_torques":
                    continue
                if not self._is_rod(kw["system"]):
                    raise FastPathUnsupported("AxialCompressionLaw on a system outside the rod block")
                sync.append((OP_COMPRESSION, len(compression)))
                compression.append((inst, kw["system"]))
            elif isinstance(inst, GravityForces):
                if method == "apply_torques":
                    continue
                system = kw["system"]
                g = np.array(inst.acc_gravity, dtype=np.float64).reshape(3)
                if self._is_rod(system):
                    sync.append((OP_GRAVITY_ROD, len(rod_gravity)))
                    rod_gravity.append(
                        (self._rod_offsets(system)[0], system.position_collection.shape[1], g)
                    )
                elif self._is_body(system):
                    sync.append((OP_GRAVITY_BODY, len(body_gravity)))
                    body_gravity.append((self._body_index(system), 1, g))
                else:
                    raise FastPathUnsupported("GravityForces on an unknown system")
            else:
                raise FastPathUnsupported(
                    f"forcing/connection {type(inst).__name__} is not supported by the fast path"
                )

        motors: list[tuple[Any, Any]] = []
        values: list[tuple[int, int]] = []
        motor_of: dict[int, int] = {}
        ends: list[tuple[int, int, int, NDArray[np.float64], NDArray[np.float64]]] = []
        ends_of: dict[int, list[int]] = {}
        for op in compat.feature_group(sim, "constrain_values"):
            inst, method, kw = compat.bound_operator(op)
            supported = (MotorAngleBC, _BodyMountBC, FreeTwistBC, DistalTwistLockBC, FixedConstraint)
            if not isinstance(inst, supported) or not self._is_rod(kw["system"]):
                raise FastPathUnsupported(
                    f"constraint {type(inst).__name__} is not supported by the fast path"
                )
            if isinstance(inst, _BodyMountBC) and not self._is_body(inst.body):
                raise FastPathUnsupported(f"{type(inst).__name__}.body is not a rigid body of the simulator")
            if isinstance(inst, (MotorAngleBC, _BodyMountBC)):
                motor_of[id(inst)] = len(motors)
                values.append((OP_MOTOR, len(motors)))
                motors.append((inst, kw["system"]))
                continue
            rows = self._end_rows(inst, kw["system"])
            ends_of[id(inst)] = list(range(len(ends), len(ends) + len(rows)))
            values += [(OP_END, k) for k in ends_of[id(inst)]]
            ends += rows

        sync = self._resolve_reactions(sync, reactions, motors)

        rates: list[tuple[int, int]] = []
        for op in compat.feature_group(sim, "constrain_rates"):
            inst, method, kw = compat.bound_operator(op)
            if id(inst) in ends_of:
                rates += [(OP_END, k) for k in ends_of[id(inst)]]
                continue
            if id(inst) not in motor_of:
                raise FastPathUnsupported(
                    f"constraint {type(inst).__name__} is not supported by the fast path"
                )
            rates.append((OP_MOTOR, motor_of[id(inst)]))
        rod_dampers: list[tuple[Any, Any, Any, bool]] = []
        body_dampers: list[tuple[Any, float, float]] = []
        for op in compat.feature_group(sim, "damping"):
            inst, method, kw = compat.bound_operator(op)
            system = kw["system"]
            if isinstance(inst, KelvinVoigtDamping):
                if not self._is_rod(system):
                    raise FastPathUnsupported("KelvinVoigtDamping on a system outside the rod block")
                rates.append((OP_MATERIAL_DAMPING, len(material)))
                material.append((inst, system))
                continue
            factors = compat.damper_coefficients(inst)
            if factors is None:
                raise FastPathUnsupported(
                    f"damper {type(inst).__name__} is not supported by the fast path"
                )
            ct, cr = factors
            if self._is_rod(system):
                rates.append((OP_DAMP_ROD, len(rod_dampers)))
                rod_dampers.append((system, ct, cr, np.ndim(cr) > 0))
            elif self._is_body(system) and np.ndim(ct) == 0 and np.ndim(cr) == 0:
                rates.append((OP_DAMP_BODY, len(body_dampers)))
                body_dampers.append((system, float(ct), float(cr)))
            else:
                raise FastPathUnsupported("damper on an unsupported system")

        # ---- tables ----------------------------------------------------------------------
        self.couplings = self._coupling_table(couplings)
        self.joints = self._joint_table(joints, len(motors))
        self.motors = self._motor_table(motors)
        # the command of a torque-driven mount is its reaction's torque schedule
        torque_of = {id(rod): r for r, rod, _ in reactions if r.free_twist}
        self._motor_bcs: list[Any] = [
            torque_of[id(rod)] if getattr(bc, "free_twist", False) else bc for bc, rod in motors
        ]
        self._motor_bcs += [j for j, *_ in joints if isinstance(j, (MotorMount, TwistMount))]
        self.rod_dampers = self._rod_damper_table(rod_dampers)
        self.body_dampers = BodyDamperTable(
            body=np.array([self._body_index(s) for s, _, _ in body_dampers], dtype=np.int64),
            translational=np.array([c for _, c, _ in body_dampers], dtype=np.float64),
            rotational=np.array([c for _, _, c in body_dampers], dtype=np.float64),
        )
        self.rod_gravity = _gravity_table(rod_gravity)
        self.body_gravity = _gravity_table(body_gravity)
        self.material = self._material_table(material)
        self.ends = _end_table(ends)
        self.loads = LoadTable(
            node=np.array([r[0] for r in loads], dtype=np.int64),
            force=np.array([r[1] for r in loads], dtype=np.float64).reshape(-1, 3),
            element=np.array([r[2] for r in loads], dtype=np.int64),
            torque=np.array([r[3] for r in loads], dtype=np.float64),
            ramp=np.array([r[4] for r in loads], dtype=np.float64),
        )
        self.scheduled_loads = [(k, r[5]) for k, r in enumerate(loads) if r[5] is not None]
        self.compression = self._compression_table(compression)
        self.sync_program = np.array(sync, dtype=np.int64).reshape(-1, 2)
        self.values_program = np.array(values, dtype=np.int64).reshape(-1, 2)
        self.rates_program = np.array(rates, dtype=np.int64).reshape(-1, 2)

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
        rows = [self._rod_offsets(rod) for _, rod in items]
        sizes = [int(rod.n_elems) for _, rod in items]
        width = max(sizes, default=0) + 1
        return MaterialDampingTable(
            node_start=np.array([r[0] for r in rows], dtype=np.int64),
            elem_start=np.array([r[1] for r in rows], dtype=np.int64),
            vor_start=np.array([r[2] for r in rows], dtype=np.int64),
            n_elems=np.array(sizes, dtype=np.int64),
            tau=np.array(
                [[op.tau_shear, op.tau_axial, op.tau_bend, op.tau_twist] for op, _ in items],
                dtype=np.float64,
            ).reshape(-1, 4),
            dt=np.array([op.time_step for op, _ in items], dtype=np.float64),
            hold=np.array(
                [[op.hold_base, op.hold_tip] for op, _ in items], dtype=np.int64
            ).reshape(-1, 2),
            work=np.zeros((len(items), WORK_ROWS, width)),
        )

    def _coupling_table(self, items: list[tuple[AuxeticCoupling, Any]]) -> CouplingTable:
        n = len(items)
        if n == 0:
            ne = nv = 1
        else:
            sizes = {int(rod.n_elems) for _, rod in items}
            if len(sizes) != 1:
                raise FastPathUnsupported("the fast path needs rods with equal element counts")
            ne = sizes.pop()
            nv = ne - 1
        offsets = [self._rod_offsets(rod) for _, rod in items]

        def col(f: Callable[[AuxeticCoupling], float]) -> NDArray[np.float64]:
            return np.array([f(c) for c, _ in items], dtype=np.float64)

        areas = []
        for c, rod in items:
            if c.area is None:
                areas.append(float(np.mean(np.asarray(rod.volume) / np.asarray(rod.rest_lengths))))
            else:
                areas.append(float(c.area))
        z = lambda *shape: np.zeros((n, *shape))  # noqa: E731
        return CouplingTable(
            elem_start=np.array([o[1] for o in offsets], dtype=np.int64),
            vor_start=np.array([o[2] for o in offsets], dtype=np.int64),
            handedness=col(lambda c: float(c.handedness)),
            C_eps=col(lambda c: c.C_eps),
            C_eps2=col(lambda c: float(getattr(c, "C_eps2", 0.0))),
            eps_min=col(lambda c: c.eps_min),
            eps_max=col(lambda c: c.eps_max),
            kappa_min=col(lambda c: c.kappa_h_min),
            kappa_max=col(lambda c: c.kappa_h_max),
            area=np.array(areas, dtype=np.float64),
            E_slope=col(lambda c: c.stiffness.E_slope),
            G_slope=col(lambda c: c.stiffness.G_slope),
            bend_slope=col(lambda c: c.stiffness.bend_rigidity_slope),
            twist_slope=col(lambda c: c.stiffness.twist_rigidity_slope),
            E_quad=col(lambda c: c.stiffness.E_quad),
            twist_quad=col(lambda c: c.stiffness.twist_rigidity_quad),
            filter_time=col(lambda c: float(getattr(c, "twist_filter_time", 0.0))),
            printed_lengths=np.array([np.array(r.rest_lengths) for _, r in items]).reshape(n, ne),
            printed_voronoi=np.array([np.array(r.rest_voronoi_lengths) for _, r in items]).reshape(n, nv),
            printed_shear=np.array([np.array(r.shear_matrix) for _, r in items]).reshape(n, 3, 3, ne),
            printed_bend=np.array([np.array(r.bend_matrix) for _, r in items]).reshape(n, 3, 3, nv),
            kappa_vor_raw=z(nv),
            kappa_vor=z(nv),
            kappa_vor_clipped=z(nv),
            kappa_elem=z(ne),
            kappa_elem_clipped=z(ne),
            eps=z(ne),
            last_time=np.zeros(n),
            initialized=np.zeros(n, dtype=np.int64),
            couple=z(nv),
            node_start=np.array([o[0] for o in offsets], dtype=np.int64),
            clip_width=col(lambda c: c.clip_width),
            work=z(3, ne),
        )

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
        for joint, one, idx_one, two, idx_two in items:
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

    def _resolve_reactions(
        self, sync: list[tuple[int, int]], reactions: list[tuple[MountReaction, Any, Any]],
        motors: list[tuple[Any, Any]],
    ) -> list[tuple[int, int]]:
        """The sync rows of the :class:`MountReaction` connections pointed at the motor-table
        row of their mount (same rod, same body); every mount needs exactly one, of its kind."""
        row_of: dict[tuple[int, int], int] = {}
        for r, (bc, rod) in enumerate(motors):
            if isinstance(bc, _BodyMountBC):
                row_of[(id(rod), self._body_index(bc.body))] = r
        rows: list[int] = []
        for inst, rod, body in reactions:
            key = (id(rod), self._body_index(body))
            if key not in row_of:
                raise FastPathUnsupported(
                    "MountReaction connects a rod and a body without a MotorMountBC/TwistMountBC")
            r = row_of.pop(key)
            if inst.free_twist != motors[r][0].free_twist:
                raise FastPathUnsupported(
                    f"MountReaction(torque=...) pairs with TwistMountBC and MountReaction() with "
                    f"MotorMountBC; got {type(motors[r][0]).__name__} with torque="
                    f"{'set' if inst.free_twist else 'None'}")
            rows.append(r)
        if row_of:
            raise FastPathUnsupported(
                f"{len(row_of)} motor mount(s) without a MountReaction: the body would not "
                "carry the rod's load")
        return [(code, rows[i]) if code == OP_MOUNT_REACTION else (code, i) for code, i in sync]

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

    def _callback_period(self, sim: Any) -> int:
        """Steps between callback calls: the gcd of the recorders' ``every`` (1 if unknown)."""
        period = 0
        for op in compat.feature_group(sim, "callback"):
            target = compat.callback_instance(op)
            every = getattr(target, "every", None)
            if not isinstance(every, (int, np.integer)) or every < 1:
                return 1
            period = math.gcd(period, int(every))
        return period  # 0: no callbacks

    # -- running -------------------------------------------------------------------------
