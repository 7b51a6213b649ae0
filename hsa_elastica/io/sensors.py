"""Sensor recorder of an HSA robot: motor angles and torques, joint wrenches, platform twist.

:class:`RobotSensorRecorder` is a PyElastica callback attached to the platform that samples, at
the recorders' sampling steps, what a real robot's sensors would measure.  Built by
``build_robot(..., record=True)`` (key ``"sensors"`` of ``Robot.recorders``, columns prefixed
``sensors/`` in ``Robot.diagnostics()``) and read the same way on the per-rod and the fused
path.  Columns (``i`` = rod, ``c`` in x, y, z):

==================================  ======  =========  ========================================
column                              unit    frame      meaning
==================================  ======  =========  ========================================
``motor_angle_command_{i}``         rad     motor      the commanded angle: the target of the
                                                       motor's :class:`Ramp` (the builder's or
                                                       the step API's), else the schedule's
                                                       value now; NaN for a torque drive
``motor_angle_{i}``                 rad     motor      the measured angle: rotation of the base
                                                       element about its own axis relative to
                                                       the motor's reference (an encoder),
                                                       2 pi branch nearest the imposed angle;
                                                       on a body: the twist relative to
                                                       the body (rigid mounts); NaN on a
                                                       compliant ``MotorMount`` /
                                                       ``TwistMount``
``motor_torque_{i}``                N m     motor      the torque the motor supplies about the
                                                       rod axis (right-hand rule, base -> tip;
                                                       :func:`~hsa_elastica.physics.sensors.motor_torque`)
``joint_force_{c}_{i}``             N       lab        force of the platform joint on the tip
                                                       node of rod ``i`` (Eq. 6)
``joint_torque_{c}_{i}``            N m     lab        torque of the platform joint on the tip
                                                       element of rod ``i`` (Eq. 7)
``platform_velocity_{c}``           m/s     lab        platform centre-of-mass velocity
``platform_angular_velocity_{c}``   rad/s   lab        platform angular velocity
``motor_angle_imposed_{i}``         rad     motor      the angle the motor's schedule imposes
                                                       at the sample (the ramp as the run
                                                       applied it); NaN for a torque drive
``contact_force_{c}_{k}``           N       lab        force of obstacle contact ``k`` on its
                                                       system (a rod's nodes or the platform's
                                                       rim points), summed over its points
``contact_points_{k}``              count   none       number of points in contact (gap below
                                                       5 smoothing lengths)
``contact_sliding_{k}``             count   none       number of those sliding (tangential
                                                       speed above the slip velocity)
``contact_sticking_{k}``            count   none       number of those sticking
``contact_min_gap_{k}``             m       none       smallest gap of its points (negative:
                                                       penetration)
==================================  ======  =========  ========================================

Contact columns exist for a robot with obstacles (``RobotParams.environment``): ``k`` counts the
robot's contacts (``Robot.contacts``: per obstacle, the rods' in order, then the platform's).
They read the contact's last force evaluation (the step's, half a step before the sample on
the fused path, as on PyElastica's loop); NaN before the first one.

"motor" frame: about the rod's axis ``d3`` at its base, positive counter-clockwise seen from
the tip.  The platform receives the opposite of the joint wrenches (the force at the attachment
point); at rest the joint forces on the rods sum to the platform's weight.  Motor torques are
read from the rods' internal torques of the last force evaluation (half a step before the
sample), with the passive coupling law plus the passive correction on the base element
(:func:`~hsa_elastica.physics.sensors.motor_torque`); everything else from the state at the
sample.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from hsa_elastica import compat
from hsa_elastica.io.recording import _Recorder, _vector_columns
from hsa_elastica.io.sample_kernels import block_views
from hsa_elastica.physics.actuation import MotorAngleBC, Ramp, twist_about_axis
from hsa_elastica.physics.mount_kernels import system_arrays
from hsa_elastica.physics.sensors import (
    SENSOR_INDEX,
    SENSOR_VALUES,
    joint_rest_orientation,
    joint_wrench,
    motor_torque,
    passive_correction_torque,
    robot_sensor_kernel,
)

__all__ = ["JointRests", "RobotSensorRecorder", "motor_columns", "sensor_columns"]

#: ``joint_rest(i)`` -> the stored rest orientation of rod ``i``'s joint (None: not applied yet)
JointRest = Callable[[int], "NDArray[np.float64] | None"]
#: ``twist_couple(i)`` -> the reciprocal twist couple of rod ``i``'s passive coupling (None:
#: the one-way law)
TwistCouple = Callable[[int], "NDArray[np.float64] | None"]


class JointRests:
    """The rest orientations of the rods' tip joints where an engine keeps them: rows ``rows``
    (one per rod) of a joint table's ``rest_orientation`` (n, 3, 3) and ``initialized`` (n,)
    arrays.  Called with a rod's index it is a :data:`JointRest`; :meth:`gather` reads all of
    them in one copy (what :class:`RobotSensorRecorder` does at each sample)."""

    def __init__(self, rest_orientation: NDArray[np.float64], initialized: NDArray[Any],
                 rows: list[int]) -> None:
        self.rest_orientation = rest_orientation
        self.initialized = initialized
        self.rows = np.asarray(rows, dtype=np.int64)

    def __call__(self, i: int) -> NDArray[np.float64] | None:
        k = self.rows[i]
        return self.rest_orientation[k] if self.initialized[k] != 0 else None

    def gather(self, out: NDArray[np.float64]) -> bool:
        """Every rod's stored rest orientation into ``out`` (n_rods, 3, 3); False (``out``
        untouched) if a joint was not applied yet."""
        if not self.initialized[self.rows].all():
            return False
        np.take(self.rest_orientation, self.rows, axis=0, out=out)
        return True


def sensor_columns(n_rods: int, n_contacts: int = 0) -> list[str]:
    """Column names of :class:`RobotSensorRecorder` for ``n_rods`` rods and ``n_contacts``
    obstacle contacts (``time`` first)."""
    cols = ["time"]
    cols += [f"motor_angle_command_{i}" for i in range(n_rods)]
    cols += [f"motor_angle_{i}" for i in range(n_rods)]
    cols += [f"motor_torque_{i}" for i in range(n_rods)]
    cols += _vector_columns("joint_force", n_rods)
    cols += _vector_columns("joint_torque", n_rods)
    cols += _vector_columns("platform_velocity", None)
    cols += _vector_columns("platform_angular_velocity", None)
    cols += [f"motor_angle_imposed_{i}" for i in range(n_rods)]
    if n_contacts:
        cols += _vector_columns("contact_force", n_contacts)
        for name in ("contact_points", "contact_sliding", "contact_sticking", "contact_min_gap"):
            cols += [f"{name}_{k}" for k in range(n_contacts)]
    return cols


def _contact_readings(contacts: Any, row: NDArray[np.float64], start: int) -> None:
    """The contact columns of ``row`` from ``start`` (layout of :func:`sensor_columns`)."""
    m = len(contacts)
    for k, ref in enumerate(contacts):
        try:
            values = ref.instance.readings()
        except RuntimeError:  # not evaluated yet
            values = (math.nan,) * 7
        for j, v in enumerate(values):
            row[start + j * m + k] = v


def _commanded(schedule: Callable[[float], float], t: float) -> float:
    if isinstance(schedule, Ramp):
        return float(schedule.target)
    return float(schedule(t))


def _motor_angles(row: NDArray[np.float64], i: int, n: int, schedule: Any, t: float,
                  measured: float) -> None:
    """Motor ``i``'s angle columns of ``row`` (``n`` rods) at time ``t`` [s]: commanded,
    imposed (None ``schedule``: a torque-driven mount, NaN) and ``measured`` [rad], the
    measured angle taken on the 2 pi branch nearest the imposed one."""
    imposed = math.nan if schedule is None else float(schedule(t))
    if not math.isnan(imposed) and not math.isnan(measured):
        measured += 2.0 * math.pi * round((imposed - measured) / (2.0 * math.pi))
    row[1 + i] = math.nan if schedule is None else _commanded(schedule, t)
    row[1 + 9 * n + 6 + i] = imposed
    row[1 + n + i] = measured


def motor_columns(rows: NDArray[np.float64], i: int, n: int, schedule: Any,
                  times: NDArray[np.float64], measured: NDArray[np.float64]) -> None:
    """:func:`_motor_angles` of many samples at once: motor ``i``'s columns of ``rows`` (one
    row per time of ``times`` [s]) from its ``measured`` angles [rad], the same numbers (numpy's
    elementwise arithmetic and ``rint`` round as Python's floats and ``round`` do)."""
    if schedule is None:
        imposed = np.full(times.shape[0], math.nan)
        commanded = imposed
    else:
        imposed = np.array([float(schedule(t)) for t in times.tolist()], dtype=np.float64)
        commanded = (np.full(times.shape[0], float(schedule.target))
                     if isinstance(schedule, Ramp) else imposed)
    branch = np.array(measured, dtype=np.float64)
    ok = ~(np.isnan(imposed) | np.isnan(branch))
    branch[ok] += 2.0 * math.pi * np.rint((imposed[ok] - branch[ok]) / (2.0 * math.pi))
    rows[:, 1 + i] = commanded
    rows[:, 1 + 9 * n + 6 + i] = imposed
    rows[:, 1 + n + i] = branch


class RobotSensorRecorder(_Recorder):
    """Samples the sensors of a robot (columns in the module docstring) every ``every`` steps
    (or at ``fps`` for a step ``dt``).

    Attach it to the platform (:meth:`attach`) and :meth:`bind` it to the robot handle
    (``rods``, ``platform``, ``motors``/``joints`` as ``OperatorRef`` of ``MotorAngleBC`` /
    ``PlatformJoint``, ``time``) before the first sample.  Each rod's joint is taken at its
    distal node and element on body 0 of the platform (as :func:`build_robot` connects them).
    """

    #: the rods' and the platform's motion, the rods' strains, stresses and stiffnesses (the
    #: motor torque, with the passive law's correction), the joints' rest orientations, the
    #: passive law's twist couple and the contacts' outputs
    reads = ("rod.position", "rod.velocity", "rod.omega", "rod.director", "rod.internal_torques",
             "rod.rest_lengths", "rod.rest_voronoi_lengths", "rod.shear_matrix", "rod.bend_matrix",
             "rod.sigma", "rod.dilatation", "rod.voronoi_dilatation", "rod.kappa",
             "rod.internal_stress", "body.position", "body.velocity", "body.omega",
             "body.director", "joints.rest_orientation", "couplings.couple", "contacts.output")

    def __init__(
        self, *, every: int | None = None, fps: float | None = None, dt: float | None = None
    ) -> None:
        super().__init__(every=every, fps=fps, dt=dt)
        self._robot: Any = None
        self._joint_rest: JointRest | None = None
        self._twist_couple: TwistCouple | None = None
        self._wrench = np.empty(6)
        self._blocks: tuple[Any, Any] | None = None
        self._plan: _BlockPlan | None | bool = None  # False: no plan applies

    def bind(
        self, robot: Any, *, joint_rest: JointRest | None = None,
        twist_couple: TwistCouple | None = None, blocks: tuple[Any, Any] | None = None,
    ) -> RobotSensorRecorder:
        """Read the sensors of ``robot``; ``joint_rest(i)`` gives the stored rest orientation
        of rod ``i``'s joint (default: the ``PlatformJoint`` instance's) and ``twist_couple(i)``
        the reciprocal twist couple of rod ``i``'s passive coupling (default: the robot's
        ``twist_couple`` method, if any); the fused stepper passes readers of its own tables.
        ``blocks``: the rod and body memory-block arrays (``RodBlockArrays``,
        ``BodyBlockArrays``) the robot's rods and platform are views of, if known (the compiled
        handles pass their model's): the rods are then read in one compiled call per sample
        (:func:`~hsa_elastica.physics.sensors.robot_sensor_kernel`, the same numbers).
        Returns self."""
        self._robot = robot
        self._joint_rest = joint_rest
        self._twist_couple = twist_couple if twist_couple is not None else getattr(
            robot, "twist_couple", None)
        self._blocks = blocks
        self._plan = None
        return self

    def _rest(self, i: int) -> NDArray[np.float64] | None:
        if self._joint_rest is not None:
            return self._joint_rest(i)
        return self._robot.joints[i].instance.rest_relative_orientation  # type: ignore[no-any-return]

    def _make_columns(self, platform: Any) -> list[str]:
        if self._robot is None:
            raise RuntimeError("RobotSensorRecorder: call bind(robot) before the first sample")
        return sensor_columns(len(self._robot.rods), len(getattr(self._robot, "contacts", ())))

    def _fill(self, platform: Any, row: NDArray[np.float64]) -> None:
        n = len(self._robot.rods)
        if self._plan is None:
            self._plan = _BlockPlan.make(self, platform) or False
        if isinstance(self._plan, _BlockPlan):
            self._plan.fill(self, platform, row)
        else:
            self._fill_rods(platform, row)
        o = 1 + 9 * n
        row[o : o + 3] = platform.velocity_collection[:, 0]
        q = platform.director_collection[:, :, 0]
        row[o + 3 : o + 6] = q.T @ platform.omega_collection[:, 0]
        contacts = getattr(self._robot, "contacts", ())
        if contacts:
            _contact_readings(contacts, row, 1 + 10 * n + 6)

    def _fill_rods(self, platform: Any, row: NDArray[np.float64]) -> None:
        """The rods' columns, one rod at a time on the rods' own arrays."""
        robot = self._robot
        rods = robot.rods
        n = len(rods)
        t = float(row[0])
        for i, rod in enumerate(rods):
            bc = robot.motors[i].instance
            n_elems = rod.director_collection.shape[2]
            schedule = getattr(bc, "angle", None)  # None: a torque-driven mount
            measured = math.nan
            elem = 0  # a motor mount holds the base element
            mounts = getattr(robot, "mounts", None)
            if mounts:  # rigid mounts on a body: the twist relative to the body
                measured = mounts[i].instance.twist(rod)
            elif isinstance(bc, MotorAngleBC):
                elem = int(np.asarray(bc.constrained_director_idx).reshape(-1)[0]) % n_elems
                measured = float(
                    twist_about_axis(
                        bc.reference_director,
                        np.ascontiguousarray(rod.director_collection[:, :, elem]),
                    )
                )
            _motor_angles(row, i, n, schedule, t, measured)
            couple = self._twist_couple(i) if self._twist_couple is not None else None
            row[1 + 2 * n + i] = motor_torque(rod, elem, couple)
            joint = robot.joints[i].instance
            tip_node = rod.position_collection.shape[1] - 1
            tip_elem = n_elems - 1
            rest = joint_rest_orientation(
                self._rest(i), platform.director_collection, 0, rod.director_collection, tip_elem
            )
            # C-contiguous copies of the block views: the joint kernels are then the
            # specialisations the fused loop compiles anyway, not a second (strided) set
            joint_wrench(
                system_arrays(rod, copy=True), tip_node, tip_elem,
                system_arrays(platform, copy=True), 0, np.ascontiguousarray(joint.attachment_point),
                float(joint.k_F), float(joint.nu_F), rest, float(joint.k_tau),
                float(joint.nu_tau), self._wrench,
            )
            o = 1 + 3 * n
            for c in range(3):
                row[o + c * n + i] = self._wrench[c]
                row[o + 3 * n + c * n + i] = self._wrench[3 + c]


class _BlockPlan:
    """The rods' sensor columns of a :class:`RobotSensorRecorder` read in one compiled call
    (:func:`~hsa_elastica.physics.sensors.robot_sensor_kernel`) on the memory blocks the rods
    and the platform are views of: indices, gains and reference directors gathered once, the
    rest orientations and the schedules read at each sample (the step API may replace a
    schedule).  Same numbers as :meth:`RobotSensorRecorder._fill_rods`."""

    def __init__(self, rods: tuple[Any, ...], body: tuple[Any, ...], internal_torques: Any,
                 b: int, motors: list[Any], elems: list[int]) -> None:
        n = len(motors)
        self.rods, self.body, self.internal_torques, self.b = rods, body, internal_torques, b
        self.motors, self.elems = motors, elems
        self.index = np.zeros((n, SENSOR_INDEX), dtype=np.int64)
        self.gains = np.zeros((n, 4))
        self.attachments = np.zeros((n, 3))
        self.rests = np.zeros((n, 3, 3))
        self.references = np.zeros((n, 3, 3))
        self.out = np.zeros((n, SENSOR_VALUES))
        # the row's columns of the joint force (3) and torque (3) of each rod
        self.wrench_columns = np.array(
            [[1 + 3 * n + c * n + i for c in range(3)] + [1 + 6 * n + c * n + i for c in range(3)]
             for i in range(n)], dtype=np.int64).reshape(n, 6)

    @classmethod
    def make(cls, rec: RobotSensorRecorder, platform: Any) -> _BlockPlan | None:
        """The plan of ``rec``'s robot, or None where it does not apply (no blocks bound,
        rigid motor mounts, an array outside the blocks)."""
        robot = rec._robot
        if rec._blocks is None or getattr(robot, "mounts", None):
            return None
        rod_block, body_block = rec._blocks
        try:
            b = compat.block_offset(platform.position_collection, body_block.position)
            n0 = [compat.block_offset(r.position_collection, rod_block.position) for r in robot.rods]
            e0 = [compat.block_offset(r.director_collection, rod_block.director) for r in robot.rods]
        except compat.CompatError:
            return None
        motors = [robot.motors[i].instance for i in range(len(robot.rods))]
        elems: list[int] = []
        plan = cls(block_views(rod_block), block_views(body_block), rod_block.internal_torques,
                   b, motors, elems)
        for i, rod in enumerate(robot.rods):
            bc, n_elems = motors[i], int(rod.director_collection.shape[2])
            elem, encoder = 0, isinstance(bc, MotorAngleBC)
            if encoder:
                elem = int(np.asarray(bc.constrained_director_idx).reshape(-1)[0]) % n_elems
                plan.references[i] = bc.reference_director
            elems.append(elem)
            plan.index[i] = (n0[i] + n_elems, e0[i] + n_elems - 1, e0[i] + elem, int(encoder),
                             int(n_elems >= 2))
            joint = robot.joints[i].instance
            plan.gains[i] = (joint.k_F, joint.nu_F, joint.k_tau, joint.nu_tau)
            plan.attachments[i] = joint.attachment_point
        return plan

    def fill(self, rec: RobotSensorRecorder, platform: Any, row: NDArray[np.float64]) -> None:
        """The rods' columns of ``row`` (time in ``row[0]``)."""
        robot = rec._robot
        rods = robot.rods
        n = len(rods)
        gather = getattr(rec._joint_rest, "gather", None)  # a JointRests: one copy
        if gather is None or not gather(self.rests):
            for i, rod in enumerate(rods):
                self.rests[i] = joint_rest_orientation(
                    rec._rest(i), platform.director_collection, 0, rod.director_collection,
                    rod.director_collection.shape[2] - 1)
        out = self.out
        robot_sensor_kernel(self.rods, self.body, self.internal_torques, self.index, self.gains,
                            self.attachments, self.rests, self.references, self.b, out)
        row[self.wrench_columns] = out[:, 2:]
        t = float(row[0])
        couples = rec._twist_couple
        for i, bc in enumerate(self.motors):
            schedule = getattr(bc, "angle", None)  # None: a torque-driven mount
            _motor_angles(row, i, n, schedule, t, float(out[i, 0]))
            tau = float(out[i, 1])
            couple = couples(i) if couples is not None else None
            if couple is not None and self.index[i, 4]:
                tau -= passive_correction_torque(rods[i], couple, self.elems[i])
            row[1 + 2 * n + i] = tau
