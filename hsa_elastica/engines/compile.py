"""Compile a finalized HSA simulator into the tables of :mod:`hsa_elastica.physics.tables`.

The fused stepper and the static solver do not walk the operators every step: they read one
:class:`CompiledModel` -- views of the memory blocks (the state), one table per law (auxetic
couplings, joints, motors, dampers, gravity) and the *programs* that list the operators in
PyElastica's call order.  The operator instances are read through their public attributes;
where PyElastica keeps things private (feature groups, memory-block layout, damper factors) the
access goes through :mod:`hsa_elastica.compat`.  Only the package's own operators and
PyElastica's ``GravityForces`` / ``AnalyticalLinearDamper`` are supported (the contact law's
``RodContact`` / ``BodyContact`` / ``ObjectContact`` / ``RodRodContact`` included; PyElastica's own contact classes are not); anything else raises
:class:`FastPathUnsupported` naming it.  This module walks the operators and writes the
programs; the per-law tables are built by :mod:`hsa_elastica.engines.compile_tables`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Collection

import numpy as np
from numpy.typing import NDArray

from elastica.boundary_conditions import FixedConstraint
from elastica.external_forces import EndpointForces, GravityForces

from hsa_elastica import compat
from hsa_elastica.engines.compile_tables import (
    FastPathUnsupported,
    TableBuilder,
    end_table,
    gravity_table,
)
from hsa_elastica.physics.actuation import (
    BaseTwistTorque,
    DistalTwistLockBC,
    FreeTwistBC,
    MotorAngleBC,
)
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling
from hsa_elastica.physics.compression_law import AxialCompressionLaw
from hsa_elastica.physics.compiled_laws import CompiledLaw, RodSlot, law_for, law_key, law_tables
from hsa_elastica.physics.contact import BodyContact, RodContact, contact_table
from hsa_elastica.physics.object_contact import ObjectContact
from hsa_elastica.physics.rod_contact import RodRodContact
from hsa_elastica.physics.joints import PlatformJoint
from hsa_elastica.physics.mounts import MotorMount, TwistMount
from hsa_elastica.physics.kelvin_voigt_damper import KelvinVoigtDamping
from hsa_elastica.physics.rigid_mounts import MountReaction, _BodyMountBC
from hsa_elastica.physics.tables import (
    OP_COMPRESSION,
    OP_CONTACT,
    OP_LAW,
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
    BLOCK_CONSTANTS,
    LAW_MEMORY,
    OUTPUTS,
    ROD_FIELDS,
    BodyBlockArrays,
    BodyDamperTable,
    LoadTable,
    ModelTables,
    RodBlockArrays,
    State,
)
from hsa_elastica.params import ParameterError

__all__ = ["CompiledModel", "FastPathUnsupported", "Inputs", "compile_simulator"]


@dataclass
class Inputs:
    """What drives a compiled model from outside (live objects, never in its tables or state).

    ``motor_bcs``: the command holders of the ``motors`` rows (a :class:`MotorAngleBC`, a rigid
    ``MotorMountBC``, or a ``TwistMountBC``'s ``MountReaction``), then the compliant
    ``MotorMount`` / ``TwistMount`` (the joint rows whose ``angle_col`` is their index here); their
    ``angle`` / ``angle_rate`` (``torque`` for torque-driven mounts) are read at every engine
    call, so a schedule reassigned after compilation is followed.  ``scheduled_loads``: (row of
    ``loads``, BaseTwistTorque) whose torque ``t -> tau`` a driver writes into the row.
    ``callbacks``: the recorders; ``callback_every``: the gcd of their ``every`` in steps (0:
    none; 1 if one has none).
    """

    motor_bcs: list[Any]
    scheduled_loads: list[tuple[int, Any]]
    callbacks: list[Any]
    callback_every: int


@dataclass
class CompiledModel:
    """One compiled simulator: the memory-block views ``rod_arrays`` / ``body_arrays`` (empty
    body arrays without rigid bodies), the law tables and programs ``tables`` (held once;
    e.g. ``model.tables.joints``) and the :class:`Inputs`."""

    rod_arrays: RodBlockArrays
    body_arrays: BodyBlockArrays
    tables: ModelTables
    inputs: Inputs

    @property
    def state(self) -> State:
        """The model's own :class:`State`: views of the memory blocks and of the laws' memory
        arrays in :attr:`tables` (``state.copy()`` for one that stepping does not touch)."""
        return State(self.rod_arrays, self.body_arrays, {
            law: {f: getattr(getattr(self.tables, law), f) for f in fields}
            for law, fields in LAW_MEMORY.items()})

    def commands(self, t: float) -> NDArray[np.float64]:
        """Each motor's command at time ``t`` [s], in the order of ``inputs.motor_bcs``: the motor
        angle [rad] (``MotorAngleBC``, ``MotorMount``) or torque [N m] (``TwistMount``)."""
        return np.array(
            [float((bc.angle if hasattr(bc, "angle") else bc.torque)(t)) for bc in self.inputs.motor_bcs],
            dtype=np.float64,
        )

    def motor_schedules(self) -> list[tuple[Any, Any]]:
        """``(schedule, rate)`` of each command holder of ``inputs.motor_bcs``, read now: its
        ``angle`` ``t -> [rad]`` and ``angle_rate`` ``t -> [rad/s]`` (or None), or for a
        torque-driven mount its ``torque`` ``t -> [N m]`` and None.  Sets the motor table's
        ``has_rate`` of the BC rows to match (the mounts after them use no rate)."""
        out: list[tuple[Any, Any]] = []
        for i, bc in enumerate(self.inputs.motor_bcs):
            angle, rate = (bc.angle, bc.angle_rate) if hasattr(bc, "angle") else (bc.torque, None)
            if i < self.tables.motors.has_rate.shape[0]:
                self.tables.motors.has_rate[i] = rate is not None
            out.append((angle, rate))
        return out

    def state_arrays(self) -> dict[str, NDArray[Any]]:
        """The state an engine advances, by name: the memory blocks (``rod``, ``body``) and
        every writable array of the tables (twist-filter memory, joint rest orientations,
        damper workspaces, ...)."""
        named: dict[str, Any] = {"rod": self.rod_arrays, "body": self.body_arrays,
                                 **self.tables._asdict()}
        named.pop("laws")  # the registered compiled laws hold no state (physics/compiled_laws)
        return {key: a for prefix, record in named.items()  # (the programs are arrays)
                for key, a in ([(prefix, record)] if isinstance(record, np.ndarray) else
                               [(f"{prefix}.{n}", v) for n, v in record._asdict().items()
                                if isinstance(v, np.ndarray) and v.flags.writeable])}

    def instant_arrays(self, reads: Collection[str] | None = None) -> list[NDArray[np.float64]]:
        """The float arrays a record of an instant holds (what a recorder may read of it): the
        :attr:`state`'s but for the memory blocks' constants (``BLOCK_CONSTANTS``) and the
        force evaluation's outputs (``OUTPUTS``, the contacts' sensor arrays).  Between two
        instants the rest of the model is unchanged or scratch written before it is read.

        ``reads``: the names (``"rod.position"``, ``"body.director"``, ``"couplings.couple"``,
        ...) of the arrays the readers need; the others are given as empty views, so that the
        list has the same length and types for every model and every set of readers (one
        compiled loop).  None: all of them."""
        state = self.state
        named = [(f"{name}.{f}", a) for block, name in ((state.rod, "rod"), (state.body, "body"))
                 for f, a in block._asdict().items() if f not in BLOCK_CONSTANTS[name]]
        named += [(f"{law}.{f}", a) for law, memory in state.memory.items()
                  for f, a in memory.items()]
        named += [(f"{t}.{f}", getattr(getattr(self.tables, t), f))
                  for t, fs in OUTPUTS.items() for f in fs]
        if reads is not None:
            known = {f"rod.{f}" for f in RodBlockArrays._fields}
            known |= {f"body.{f}" for f in BodyBlockArrays._fields}
            known |= {f"{t}.{f}" for t, table in self.tables._asdict().items()
                      if hasattr(table, "_fields") for f in table._fields}
            unknown = sorted(set(reads) - known)
            if unknown:
                raise ParameterError(
                    f"a recorder's reads = {unknown[0]!r} is invalid: not an array of the "
                    "compiled model (rod.<field>, body.<field> or <table>.<field>, e.g. "
                    "rod.position)")
        return [a if reads is None or key in reads else a.reshape(-1)[:0]
                for key, a in named if a.dtype == np.float64]

    def tip_joint_row(self, director: NDArray[np.float64]) -> int:
        """The row of :attr:`joints` at the tip element of the rod whose director array is
        ``director`` (a view into the rod block); FastPathUnsupported unless exactly one."""
        tip = compat.block_offset(director, self.rod_arrays.director) + director.shape[2] - 1
        match = np.flatnonzero(self.tables.joints.element == tip)
        if match.size != 1:
            raise FastPathUnsupported("sensor recorder: a rod has no single tip joint")
        return int(match[0])

    def reciprocal_coupling_row(self, director: NDArray[np.float64]) -> int:
        """The row of :attr:`couplings` of the rod whose director array is ``director`` if its
        coupling applies the reciprocal twist couple (the passive law), else -1."""
        reciprocal = {int(i) for code, i in self.tables.sync_program if code == OP_COUPLING_TORQUE}
        e0 = compat.block_offset(director, self.rod_arrays.director)
        match = np.flatnonzero(self.tables.couplings.elem_start == e0)
        return int(match[0]) if match.size == 1 and int(match[0]) in reciprocal else -1


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


class _Compiler(TableBuilder):
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
        self.model = CompiledModel(self.rod_arrays, self.body_arrays, *self._compile(sim))

    # -- compilation ---------------------------------------------------------------------
    def _compile(self, sim: Any) -> tuple[ModelTables, Inputs]:
        """Walk the operators in PyElastica's call order (synchronize, constrain_values,
        constrain_rates, damping) into row lists and programs, then write the tables."""
        self._couplings: list[tuple[AuxeticCoupling, Any]] = []
        self._joints: list[tuple[PlatformJoint, Any, Any, Any, Any]] = []
        # gravity rows: (first node / body index in the block, node / body count, g [m/s^2])
        self._rod_gravity: list[tuple[int, int, NDArray[np.float64]]] = []
        self._body_gravity: list[tuple[int, int, NDArray[np.float64]]] = []
        self._material: list[tuple[KelvinVoigtDamping, Any]] = []
        self._loads: list[tuple[int, NDArray[np.float64], int, float, float, Any]] = []
        self._compression: list[tuple[AxialCompressionLaw, Any]] = []
        # (operator, system, block start, object body index or -1)
        self._contacts: list[tuple[Any, Any, int, int]] = []
        # the operators of the registered compiled laws, by law name
        self._laws: dict[str, list[tuple[Any, Any, RodSlot]]] = {}
        self._reactions: list[tuple[MountReaction, Any, Any]] = []
        self._motors: list[tuple[Any, Any]] = []
        self._ends: list[tuple[int, int, int, NDArray[np.float64], NDArray[np.float64]]] = []
        self._rod_dampers: list[tuple[Any, Any, Any, bool]] = []
        self._body_dampers: list[tuple[Any, float, float]] = []
        sync = self._synchronize_rows(sim)
        values, motor_of, ends_of = self._value_rows(sim)
        sync = self._resolve_reactions(sync, self._reactions, self._motors)
        rates = self._rate_rows(sim, motor_of, ends_of)
        tables, inputs = self._write_tables(sim)
        def program(rows: list[tuple[int, int]]) -> NDArray[np.int64]:
            return np.array(rows, dtype=np.int64).reshape(-1, 2)

        return tables._replace(sync_program=program(sync), values_program=program(values),
                               rates_program=program(rates)), inputs

    def _synchronize_rows(self, sim: Any) -> list[tuple[int, int]]:
        """The sync program (forcings and connections, FIFO order); fills the row lists of the
        couplings, joints, mount reactions, loads, compression laws and gravity."""
        sync: list[tuple[int, int]] = []
        seen: dict[int, int] = {}
        coupling_of: dict[int, int] = {}
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
                coupling_of[id(inst)] = len(self._couplings)
                sync.append((OP_COUPLING, len(self._couplings)))
                self._couplings.append((inst, kw["system"]))
            elif isinstance(inst, PlatformJoint):
                key = id(inst)
                if key not in seen:
                    if inst.rest_relative_orientation is not None:
                        raise FastPathUnsupported("PlatformJoint was already applied (not fresh)")
                    seen[key] = len(self._joints)
                    self._joints.append(
                        (inst, kw["system_one"], kw["index_one"], kw["system_two"], kw["index_two"])
                    )
                code = OP_JOINT_FORCE if method == "apply_forces" else OP_JOINT_TORQUE
                sync.append((code, seen[key]))
            elif method != "apply_torques" or isinstance(inst, BaseTwistTorque):
                sync += self._forcing_rows(inst, method, kw)
            elif not isinstance(inst, (MountReaction, EndpointForces, AxialCompressionLaw,
                                       GravityForces, RodContact, BodyContact,
                                       ObjectContact, RodRodContact)) and law_for(inst) is None:
                raise FastPathUnsupported(
                    f"forcing/connection {type(inst).__name__} is not supported by the fast path"
                )
        return sync

    def _forcing_rows(self, inst: Any, method: str, kw: dict[str, Any]) -> list[tuple[int, int]]:
        """Sync rows of one call of a mount reaction, point load, compression law or gravity
        (their ``apply_torques`` halves add nothing; a ``BaseTwistTorque``'s ``apply_forces``
        is PyElastica's no-op)."""
        if isinstance(inst, MountReaction):
            if not self._is_rod(kw["system_one"]) or not self._is_body(kw["system_two"]):
                raise FastPathUnsupported("MountReaction must connect a rod (first) to a body")
            self._reactions.append((inst, kw["system_one"], kw["system_two"]))
            return [(OP_MOUNT_REACTION, len(self._reactions) - 1)]
        if isinstance(inst, (EndpointForces, BaseTwistTorque)):
            if isinstance(inst, BaseTwistTorque) and method != "apply_torques":
                return []  # the other half is PyElastica's no-op
            if not self._is_rod(kw["system"]):
                raise FastPathUnsupported(f"{type(inst).__name__} on a system outside the rod block")
            rows: list[tuple[int, int]] = []
            for row in self._load_rows(inst, kw["system"]):
                rows.append((OP_LOAD, len(self._loads)))
                self._loads.append(row)
            return rows
        if isinstance(inst, AxialCompressionLaw):
            if not self._is_rod(kw["system"]):
                raise FastPathUnsupported("AxialCompressionLaw on a system outside the rod block")
            self._compression.append((inst, kw["system"]))
            return [(OP_COMPRESSION, len(self._compression) - 1)]
        if isinstance(inst, (RodContact, BodyContact, ObjectContact, RodRodContact)):
            return [(OP_CONTACT, self._contact_row(inst, kw["system"]))]
        law = law_for(inst)
        if law is not None:
            return self._law_rows(inst, law, kw["system"])
        if isinstance(inst, GravityForces):
            system = kw["system"]
            g = np.array(inst.acc_gravity, dtype=np.float64).reshape(3)
            if self._is_rod(system):
                self._rod_gravity.append(
                    (self._rod_offsets(system)[0], system.position_collection.shape[1], g)
                )
                return [(OP_GRAVITY_ROD, len(self._rod_gravity) - 1)]
            if self._is_body(system):
                self._body_gravity.append((self._body_index(system), 1, g))
                return [(OP_GRAVITY_BODY, len(self._body_gravity) - 1)]
            raise FastPathUnsupported("GravityForces on an unknown system")
        raise FastPathUnsupported(
            f"forcing/connection {type(inst).__name__} is not supported by the fast path"
        )

    def _law_rows(self, inst: Any, law: CompiledLaw, system: Any) -> list[tuple[int, int]]:
        """The table of a registered compiled law's operator on one rod
        (:mod:`hsa_elastica.physics.compiled_laws`): a row of the law's table and its sync
        row."""
        if not self._is_rod(system):
            raise FastPathUnsupported(f"{type(inst).__name__} on a system outside the rod block")
        node, elem, _ = self._rod_offsets(system)
        slot = RodSlot(node, int(system.position_collection.shape[1]), elem,
                       int(system.director_collection.shape[2]))
        rows = self._laws.setdefault(law.name, [])
        rows.append((inst, system, slot))
        return [(OP_LAW, law_key(law, len(rows) - 1))]

    def _contact_row(self, inst: Any, system: Any) -> int:
        """Row of a contact forcing: a rod's nodes (from its first node) or a body's points;
        against an object, the object's index in the body block too."""
        obj = -1
        if isinstance(inst, RodRodContact):  # obj: the other rod's first node
            if not self._is_rod(system) or not self._is_rod(inst.other):
                raise FastPathUnsupported("RodRodContact between systems outside the rod block")
            self._contacts.append((inst, system, self._rod_offsets(system)[0],
                                   self._rod_offsets(inst.other)[0]))
            return len(self._contacts) - 1
        if isinstance(inst, ObjectContact):
            if not self._is_body(inst.body):
                raise FastPathUnsupported("ObjectContact.body is not a rigid body of the simulator")
            obj = self._body_index(inst.body)
        if isinstance(inst, (RodContact, ObjectContact)) and self._is_rod(system):
            start = self._rod_offsets(system)[0] + inst.node_range(system)[0]
        elif isinstance(inst, (BodyContact, ObjectContact)) and self._is_body(system):
            start = self._body_index(system)
        else:
            raise FastPathUnsupported(f"{type(inst).__name__} on a system outside its memory block")
        self._contacts.append((inst, system, start, obj))
        return len(self._contacts) - 1

    def _value_rows(
        self, sim: Any
    ) -> tuple[list[tuple[int, int]], dict[int, int], dict[int, list[int]]]:
        """The constrain_values program; fills the motor and rod-end rows.  Also returns the
        motor row of each motor BC and the end rows of each end constraint (by ``id``)."""
        values: list[tuple[int, int]] = []
        motor_of: dict[int, int] = {}
        ends_of: dict[int, list[int]] = {}
        supported = (MotorAngleBC, _BodyMountBC, FreeTwistBC, DistalTwistLockBC, FixedConstraint)
        for op in compat.feature_group(sim, "constrain_values"):
            inst, method, kw = compat.bound_operator(op)
            if not isinstance(inst, supported) or not self._is_rod(kw["system"]):
                raise FastPathUnsupported(
                    f"constraint {type(inst).__name__} is not supported by the fast path"
                )
            if isinstance(inst, _BodyMountBC) and not self._is_body(inst.body):
                raise FastPathUnsupported(f"{type(inst).__name__}.body is not a rigid body of the simulator")
            if isinstance(inst, (MotorAngleBC, _BodyMountBC)):
                motor_of[id(inst)] = len(self._motors)
                values.append((OP_MOTOR, len(self._motors)))
                self._motors.append((inst, kw["system"]))
                continue
            rows = self._end_rows(inst, kw["system"])
            ends_of[id(inst)] = list(range(len(self._ends), len(self._ends) + len(rows)))
            values += [(OP_END, k) for k in ends_of[id(inst)]]
            self._ends += rows
        return values, motor_of, ends_of

    def _rate_rows(
        self, sim: Any, motor_of: dict[int, int], ends_of: dict[int, list[int]]
    ) -> list[tuple[int, int]]:
        """The constrain_rates program followed by the dampers; fills the damper rows."""
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
        for op in compat.feature_group(sim, "damping"):
            inst, method, kw = compat.bound_operator(op)
            system = kw["system"]
            if isinstance(inst, KelvinVoigtDamping):
                if not self._is_rod(system):
                    raise FastPathUnsupported("KelvinVoigtDamping on a system outside the rod block")
                rates.append((OP_MATERIAL_DAMPING, len(self._material)))
                self._material.append((inst, system))
                continue
            factors = compat.damper_coefficients(inst)
            if factors is None:
                raise FastPathUnsupported(
                    f"damper {type(inst).__name__} is not supported by the fast path"
                )
            ct, cr = factors
            if self._is_rod(system):
                rates.append((OP_DAMP_ROD, len(self._rod_dampers)))
                self._rod_dampers.append((system, ct, cr, np.ndim(cr) > 0))
            elif self._is_body(system) and np.ndim(ct) == 0 and np.ndim(cr) == 0:
                rates.append((OP_DAMP_BODY, len(self._body_dampers)))
                self._body_dampers.append((system, float(ct), float(cr)))
            else:
                raise FastPathUnsupported("damper on an unsupported system")
        return rates

    def _write_tables(self, sim: Any) -> tuple[ModelTables, Inputs]:
        """The law tables of the collected rows (programs empty) and the inputs: the motors'
        command holders, the scheduled loads and the callbacks."""
        motors, joints, loads, body_dampers = self._motors, self._joints, self._loads, self._body_dampers
        # the command of a torque-driven mount is its reaction's torque schedule
        torque_of = {id(rod): r for r, rod, _ in self._reactions if r.free_twist}
        motor_bcs: list[Any] = [
            torque_of[id(rod)] if getattr(bc, "free_twist", False) else bc for bc, rod in motors
        ] + [j for j, *_ in joints if isinstance(j, (MotorMount, TwistMount))]
        no_program = np.zeros((0, 2), dtype=np.int64)
        tables = ModelTables(
            couplings=self._coupling_table(self._couplings),
            joints=self._joint_table(joints, len(motors)),
            motors=self._motor_table(motors),
            rod_dampers=self._rod_damper_table(self._rod_dampers),
            body_dampers=BodyDamperTable(
                body=np.array([self._body_index(s) for s, _, _ in body_dampers], dtype=np.int64),
                translational=np.array([c for _, c, _ in body_dampers], dtype=np.float64),
                rotational=np.array([c for _, _, c in body_dampers], dtype=np.float64),
            ),
            rod_gravity=gravity_table(self._rod_gravity),
            body_gravity=gravity_table(self._body_gravity),
            material=self._material_table(self._material),
            ends=end_table(self._ends),
            loads=LoadTable(
                node=np.array([r[0] for r in loads], dtype=np.int64),
                force=np.array([r[1] for r in loads], dtype=np.float64).reshape(-1, 3),
                element=np.array([r[2] for r in loads], dtype=np.int64),
                torque=np.array([r[3] for r in loads], dtype=np.float64),
                ramp=np.array([r[4] for r in loads], dtype=np.float64),
            ),
            compression=self._compression_table(self._compression),
            contacts=contact_table(self._contacts),
            laws=law_tables(self._laws),
            sync_program=no_program, values_program=no_program, rates_program=no_program,
        )
        inputs = Inputs(
            motor_bcs=motor_bcs,
            scheduled_loads=[(k, r[5]) for k, r in enumerate(loads) if r[5] is not None],
            callbacks=[compat.callback_instance(op) for op in compat.feature_group(sim, "callback")],
            callback_every=self._callback_period(sim),
        )
        return tables, inputs

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
