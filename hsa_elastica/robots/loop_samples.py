"""The built-in recorders' samples taken inside the compiled settling loop.

The compiled settling loop (:mod:`hsa_elastica.robots.settling_watch`) ends an engine call
only where Python has work to do; the recorders are Python callbacks.  Their samples can be
taken two ways:

* **copies**: the loop copies the instant's state into a row at each recording step, and the
  rows are put back into the model one at a time after the call, for PyElastica's callbacks to
  read.  Any callback works so, at about 70 us of Python per sample for a four-rod robot and a
  row of 45 kB per sample in the call;
* **compiled** (:class:`LoopSamples`): the samples of the package's recorders --
  :class:`~hsa_elastica.io.recording.RodRecorder`,
  :class:`~hsa_elastica.io.recording.RigidBodyRecorder`,
  :class:`~hsa_elastica.io.sensors.RobotSensorRecorder` -- are taken by the loop itself
  (:func:`~hsa_elastica.io.sample_kernels.take_samples`, the kernels the recorders call, on
  the same numbers) straight into the recorders' row buffers, which share one array per kind
  sized for the run; after the call, what depends on Python objects is filled in over all the
  call's samples at once, where numpy gives the same numbers elementwise: the time column, the
  unwrapped base twist (sample after sample, as the recorder does), the motor angles (the
  schedules asked at each sample's time), the platform's velocity and body-frame angular
  velocity.

The recordings are the same bit for bit (``tests/test_settling_watch.py`` compares them).
The compiled way applies when every callback of the model is one of the three recorders,
exactly (a subclass may sample differently), attached to systems of the model's memory
blocks, all at the same rate, each with its first sample taken; the sensor recorder with the
compiled plan of its rods, its joints' rest orientations stored in a joint table, no obstacle
contacts and no passive twist couple.  Otherwise the copies are used.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hsa_elastica import compat
from hsa_elastica.io.recording import RigidBodyRecorder, RodRecorder, _RowBuffer
from hsa_elastica.io.sample_kernels import (
    BodySamples,
    RodSamples,
    SamplePlan,
    SensorSamples,
    no_sensors,
)
from hsa_elastica.io.sensors import JointRests, RobotSensorRecorder, _BlockPlan, motor_columns

__all__ = ["LoopSamples"]

#: the rod and body block fields of a rod recorder's system (attribute, block field)
_ROD_ARRAYS = (("position_collection", "position"), ("director_collection", "director"),
               ("rest_voronoi_lengths", "rest_voronoi_lengths"))


def _buf(rec: Any) -> _RowBuffer:
    """A recorder's row buffer (it has taken its first sample)."""
    buf = rec._buffer
    assert buf is not None
    return buf  # type: ignore[no-any-return]


def _offsets(system: Any, block: Any, names: tuple[tuple[str, str], ...]) -> list[int]:
    """The offsets of ``system``'s arrays (attribute, block field) in the memory block."""
    return [compat.block_offset(getattr(system, a), getattr(block, f)) for a, f in names]


class LoopSamples:
    """The samples of a model's built-in recorders taken inside the compiled loop (see the
    module doc); :meth:`make` says whether it applies."""

    def __init__(self, model: Any, rods: list[RodRecorder], bodies: list[RigidBodyRecorder],
                 sensor: RobotSensorRecorder | None, capacity: int) -> None:
        self.model = model
        self.rod_recorders, self.body_recorders, self.sensor = rods, bodies, sensor
        self.rod_index = np.zeros((len(rods), 6), dtype=np.int64)
        for i, rec in enumerate(rods):
            n0, e0, v0 = _offsets(rec._system, model.rod_arrays, _ROD_ARRAYS)
            n = rec._system.director_collection.shape[2]
            self.rod_index[i] = (n0, n0 + n + 1, e0, e0 + n, v0, v0 + n - 1)
        self.body_index = np.array([_offsets(rec._system, model.body_arrays, (
            ("position_collection", "position"),))[0] for rec in bodies], dtype=np.int64)
        self.director0 = np.array([r._director0 for r in rods]).reshape(-1, 3, 3)
        self._plan = None if sensor is None else _BlockPlan.make(sensor, sensor._system)
        self.capacity = 0
        self._rod_views: list[NDArray[np.float64]] = []
        self._body_views: list[NDArray[np.float64]] = []
        self._ensure(max(int(capacity), 1))

    @classmethod
    def make(cls, model: Any, capacity: int) -> LoopSamples | None:
        """The compiled samples of ``model``'s callbacks, or None where they do not apply;
        ``capacity``: the samples one call may take (the outputs grow if a call takes more)."""
        kinds: dict[type, list[Any]] = {RodRecorder: [], RigidBodyRecorder: [],
                                         RobotSensorRecorder: []}
        callbacks = model.inputs.callbacks
        for cb in callbacks:
            group = kinds.get(type(cb))
            if group is None or cb._system is None or cb._buffer is None:
                return None
            group.append(cb)
        rods, sensors = kinds[RodRecorder], kinds[RobotSensorRecorder]
        if not callbacks or len(sensors) > 1 or any(r._director0 is None for r in rods):
            return None
        if len({len(r.columns) for r in rods}) > 1:  # one shared array of rows
            return None
        if len({float(cb.steps_per_sample) for cb in callbacks}) != 1:
            return None
        sensor = sensors[0] if sensors else None
        if sensor is not None and not _plannable(sensor):
            return None
        try:
            replay = cls(model, rods, kinds[RigidBodyRecorder], sensor, capacity)
        except compat.CompatError:
            return None
        if sensor is not None and replay._plan is None:
            return None
        return replay

    # -- the outputs ------------------------------------------------------------------------
    def _shared(self, recorders: list[Any],
                rows: int) -> tuple[NDArray[np.float64], list[NDArray[np.float64]]]:
        """One array (recorders, rows, columns) holding the recorders' row buffers (their rows
        so far copied in), each buffer's data a view of it."""
        width = max((len(r.columns) for r in recorders), default=14)
        shared = np.empty((len(recorders), rows, width))
        views = []
        for i, rec in enumerate(recorders):
            buf = _buf(rec)
            shared[i, :buf.n] = buf.data[:buf.n]
            buf.data = shared[i]
            views.append(buf.data)
        return shared, views

    def _ensure(self, count: int) -> None:
        """Room in the shared buffers for ``count`` more samples (and the buffers still the
        shared arrays' views: a Python sample taken meanwhile may have grown one)."""
        recs = (*self.rod_recorders, *self.body_recorders)
        n = max((_buf(r).n for r in recs), default=0)
        views = (*self._rod_views, *self._body_views)
        if (n + count <= self.capacity and len(views) == len(recs)
                and all(_buf(r).data is v for r, v in zip(recs, views))):
            return
        self.capacity = n + max(count, self.capacity)
        self._rods, self._rod_views = self._shared(self.rod_recorders, self.capacity)
        self._bodies, self._body_views = self._shared(self.body_recorders, self.capacity)
        self._angle = np.empty((len(self.rod_recorders), self.capacity))
        k = 0 if self._plan is None else self._plan.index.shape[0]
        shape = self.model.body_arrays.director.shape
        values = 0 if self._plan is None else self._plan.out.shape[1]
        self._sensor_out = np.empty((self.capacity, k, values))
        self._velocity = np.empty((self.capacity, 3, shape[2]))
        self._director = np.empty((self.capacity, *shape))
        self._omega = np.empty((self.capacity, 3, shape[2]))

    def plan(self, count: int) -> SamplePlan | None:
        """The loop's plan for a call of ``count`` samples, or None (take copies this call)
        where a joint's rest orientation is not stored yet."""
        if self.sensor is not None:
            rests = self.sensor._joint_rest
            if not rests.initialized[rests.rows].all():  # type: ignore[union-attr]
                return None
        self._ensure(count)
        first = np.array([_buf(r).n for r in self.rod_recorders], dtype=np.int64)
        rods = RodSamples(self.rod_index, self.director0, self._rods, first, self._angle)
        bodies = BodySamples(self.body_index, self._bodies, np.array(
            [_buf(r).n for r in self.body_recorders], dtype=np.int64))
        return SamplePlan(rods, bodies, self._sensors())

    def _sensors(self) -> SensorSamples:
        plan = self._plan
        if plan is None:
            return no_sensors(self.model.rod_arrays, self.model.body_arrays)
        rests: Any = self.sensor._joint_rest  # type: ignore[union-attr]
        return SensorSamples(plan.rods, plan.body, plan.internal_torques, plan.index, plan.gains,
                             plan.attachments, plan.rests, plan.references, int(plan.b),
                             rests.rest_orientation, rests.rows, self._sensor_out,
                             self._velocity, self._director, self._omega)

    # -- after the call ---------------------------------------------------------------------
    def finish(self, times: list[float]) -> None:
        """The columns of the call's samples (at ``times`` [s]) that Python fills in."""
        t = np.array(times, dtype=np.float64)
        count = t.shape[0]
        for i, rec in enumerate(self.rod_recorders):
            _rod_rows(rec, self._angle[i, :count], t)
        for body in self.body_recorders:
            buf = _buf(body)
            buf.data[buf.n:buf.n + count, 0] = t
            buf.n += count
        if self.sensor is not None:
            self._sensor_rows(t)

    def _sensor_rows(self, t: NDArray[np.float64]) -> None:
        """The sensor recorder's rows (``RobotSensorRecorder._fill``'s columns)."""
        rec, plan = self.sensor, self._plan
        assert rec is not None and plan is not None
        count = t.shape[0]
        rows = rec._buffer.extend_empty(count)  # type: ignore[union-attr]
        n = plan.index.shape[0]
        out = self._sensor_out[:count]
        rows[:, 0] = t
        rows[:, plan.wrench_columns] = out[:, :, 2:]
        for i, bc in enumerate(plan.motors):
            motor_columns(rows, i, n, getattr(bc, "angle", None), t, out[:, i, 0])
            rows[:, 1 + 2 * n + i] = out[:, i, 1]
        o, b = 1 + 9 * n, int(plan.b)
        rows[:, o:o + 3] = self._velocity[:count, :, b]
        for s in range(count):
            q = self._director[s][:, :, b]
            rows[s, o + 3:o + 6] = q.T @ self._omega[s][:, b]


def _rod_rows(rec: RodRecorder, angle: NDArray[np.float64], t: NDArray[np.float64]) -> None:
    """A rod recorder's new rows: the time, the base twist unwrapped sample after sample
    (``RodRecorder._fill``)."""
    buf = _buf(rec)
    rows = buf.data[buf.n:buf.n + t.shape[0]]
    rows[:, 0] = t
    last = rec._last_twist
    for s, a in enumerate(angle.tolist()):
        a += 2.0 * math.pi * round((last - a) / (2.0 * math.pi))
        rows[s, -1] = last = a
    rec._last_twist = last
    buf.n += t.shape[0]


def _plannable(rec: RobotSensorRecorder) -> bool:
    """Whether the sensor recorder's columns are all taken by the loop: its robot's joints'
    rest orientations in a joint table, no obstacle contacts, no passive twist couple."""
    robot = rec._robot
    if robot is None or not isinstance(rec._joint_rest, JointRests):
        return False
    if getattr(robot, "contacts", ()) or getattr(robot, "mounts", None):
        return False
    couple = rec._twist_couple
    return couple is None or all(couple(i) is None for i in range(len(robot.rods)))
