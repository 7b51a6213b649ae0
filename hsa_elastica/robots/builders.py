"""Builders of a single HSA rod and of an n-rod HSA robot (paper Sections II-C to II-E).

* :class:`HSASimulator` -- a PyElastica 1.0 ``BaseSystemCollection`` with the constraint,
  forcing, connection, damping and callback modules (users may extend it further).
* :func:`make_hsa_rod` -- a stock :class:`elastica.CosseratRod` with the hollow-tube section of
  an HSA (no subclass: the auxetic coupling is an operator, see ``auxetics.py``).
* :func:`build_single_rod` -- one rod with motor-angle or torque-driven base and a free,
  twist-locked or fixed distal end (the characterization experiments of Section II-C).
* :func:`build_robot` -- ``n_rods`` rods on a circle carrying a rigid cylindrical platform
  through spring-damper joints (Section II-D/E, Eqs. 6-7).

Hollow tube on a stock rod
--------------------------
PyElastica's ``straight_rod`` assumes a solid disk.  We build it with the *equivalent radius*
``r_eq = sqrt(A / pi)`` of the tube area ``A = pi (r_o^2 - r_i^2)``, so the element volume and
mass are ``rho A l`` and the factory's ``S = diag(alpha_c G A, alpha_c G A, E A)`` is already the
tube's, then overwrite in place (before ``finalize``, so the memory block copies them):

* ``shear_matrix[:, :, k] = diag(27/28 G A, 27/28 G A, E A)``  [N] (elements);
* ``bend_matrix[:, :, k] = diag(B_xy, B_xy, B_z)``  [N m^2] (Voronoi domain, n-1 entries; the
  factory's length-weighted average of uniform element values is that same value);
* ``mass_second_moment_of_inertia[:, :, k] = rho l_k diag(I, I, 2 I)``  [kg m^2] with the
  tube's ``I = pi/4 (r_o^4 - r_i^4)``, and its inverse.

``rod.radius`` stays ``r_eq`` (used by PyElastica only for contact and by renderers).

Robot layout (docs/architecture.md)
-----------------------------------
Origin at the centre of the circle of rod bases, +z toward the platform.  Rod ``i`` stands at
angle ``a_i = first_rod_angle + 2 pi i / n_rods`` on the circle of radius ``circle_radius``, is
built straight along +z with PyElastica ``normal`` = radial unit vector ``(cos a_i, sin a_i, 0)``
and has handedness ``handedness[i]``.  The platform is a PyElastica ``Cylinder`` along +z with
normal +x, so its local frame coincides with the lab frame initially (``Cylinder`` director rows
are ``(normal, direction x normal, direction)``); its centre is at ``z = L + thickness / 2`` so
its bottom face touches the rod tips, and rod ``i`` is attached at ``(x_i, y_i, -thickness / 2)``
in the platform's local frame.

Rigid end caps (``RodParams.cap_length_base`` / ``cap_length_top``, no new force law): the
base frame stays on the base plate; the flexible part of rod ``i`` starts at
``(x_i, y_i, cap_length_base)`` (the base cap turns with the motor about its own axis, so the
motor boundary condition is unchanged), the attachment point is ``(x_i, y_i, -thickness / 2 -
cap_length_top)`` in the platform frame (the top cap is rigidly part of the platform), and the
platform centre starts at ``z = cap_length_base + L + cap_length_top + thickness / 2``.  Every
path (operators, fused stepper, static solver) reads these positions from the built simulator,
so the caps act everywhere.  A payload (``PlatformParams.payload_mass``) raises the platform's
density.

Leaning rods (``RobotParams.rod_tilt``, rotation ``T``,
:meth:`~hsa_elastica.params.RobotParams.rod_tilt_matrix`): every rod, caps included, is
turned by ``T`` about its foot ``b_i`` on the base plate, so the flexible part starts at
``b_i + cap_length_base T e_z`` (``RobotParams.rod_start``) and is built along ``T e_z`` with normal
``T (cos a_i, sin a_i, 0)`` (its motor turns it about that leaning axis); the level platform
sits on the rods' tops, its centre at ``H T e_z + (0, 0, thickness / 2)`` with ``H =
cap_length_base + L + cap_length_top``, and rod ``i`` is attached at ``(x_i, y_i, -thickness /
2) - cap_length_top T e_z``.  The built assembly is unstressed (the joints take its
orientations as their rest).  No lean: exactly the upright layout above.

Operators
---------
Each rod of a robot gets an :class:`AuxeticCoupling` with its laws, a :class:`MotorAngleBC`
(or a :class:`MotorMountBC` on a body) at its base, a :class:`PlatformJoint` to the platform
(gains from ``robot_params.joint``) and linear damping; gravity (``GravityForces``) acts on
rods and platform when ``sim.gravity`` is set.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable, Sequence, cast

import numpy as np
from numpy.typing import NDArray

from elastica import CosseratRod
from elastica.rigidbody import Cylinder
from elastica.timestepper.symplectic_steppers import PositionVerlet

from hsa_elastica.physics.actuation import (
    MotorAngleBC,
    Ramp,
)
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling
from hsa_elastica.engines.timeloop import check_time_step
from hsa_elastica.physics.joints import PlatformJoint
from hsa_elastica.physics.mounts import MotorMount, TwistMount
from hsa_elastica.physics.rigid_mounts import MotorMountBC, MountReaction, TwistMountBC
from hsa_elastica.params import (
    JointParams,
    ObjectParams,
    ParameterError,
    RobotParams,
    RodParams,
)

# re-exported: these names lived here before the environment helpers moved out
from hsa_elastica.robots.handles import OperatorRef, Robot, SingleRod, _run  # noqa: F401
from hsa_elastica.robots.placement import (
    Frame,
    _base_frame,
    _check_drive,
    _placed,
    _with_joint,
)
from hsa_elastica.robots.environment import (
    HSASimulator,
    _add_environment,
    _add_gravity,
    _add_material_damping,
    _add_recorder,
    solid_cylinder,
)

if TYPE_CHECKING:  # pragma: no cover

    from hsa_elastica.robots.compiled import FastRobot

from hsa_elastica.robots.hsa_rod import (
    _motor_schedules,
    _scaled,
    coupling_kwargs,
    make_hsa_rod,
    pretwist,
)
from hsa_elastica.robots.single_rod import build_single_rod  # noqa: F401  (re-exported)

__all__ = [
    "HSASimulator",
    "make_hsa_rod",
    "build_single_rod",
    "build_robot",
    "SingleRod",
    "Robot",
    "OperatorRef",
    "build_fast_robot",
]





# --------------------------------------------------------------------------------------------
# robot
# --------------------------------------------------------------------------------------------
def build_robot(
    robot_params: RobotParams,
    motor_angles: Sequence[float],
    *,
    ramp: float | Callable[[float], float] | None = None,
    record: bool = True,
    finalize: bool = True,
    check_dt: bool = True,
    base: Any = None,
    simulator: HSASimulator | None = None,
    mount_offset: Sequence[float] | None = None,
    mount: JointParams | None = None,
    drive: str = "angle",
) -> Robot:
    """Build the n-rod HSA robot of Section II-D/E (layout: see the module docstring).

    Parameters
    ----------
    robot_params : RobotParams
    motor_angles : sequence of ``n_rods`` floats [rad] or callables ``t [s] -> phi [rad]``
        Target motor angle of each rod (right-hand rule about the rod's own +z axis), or the
        rod's own schedule (used as given, ``ramp`` does not apply to it; a ``rate(t)`` method,
        as :class:`Ramp` has, sets the base's angular velocity).  ``Robot.motor_angles`` holds
        NaN for a rod given a schedule.
    ramp : None, float [s] or callable ``t -> s in [0, 1]``
        None: each rod follows ``Ramp(target=motor_angles[i], duration=sim.ramp_time,
        shape=sim.ramp_shape)``; a float overrides the ramp duration; a callable is a common
        dimensionless profile, ``phi_i(t) = motor_angles[i] * ramp(t)``.
    record : bool
        Add a ``RodRecorder`` per rod and a ``RigidBodyRecorder`` on the platform.
    finalize : bool
        Call ``simulator.finalize()`` (set False to add operators first).
    check_dt : bool
        Refuse ``sim.dt`` above the stability limit of the integrator
        (:func:`hsa_elastica.engines.timeloop.check_time_step`); False only to study divergence.
    base : None, a pose, or a rigid body
        Where the base plate is.  None: the lab frame (the layout of the module docstring).
        A pose -- a (4, 4) homogeneous matrix or a pair ``(position (3,) [m], rotation (3, 3))``
        mapping the robot's frame to the lab frame -- places the whole robot there, motors
        still fixed in the lab (:class:`MotorAngleBC`).  A PyElastica rigid body (e.g. the
        platform of another robot) carries the motors: each rod's base is held relative to the
        body by a :class:`~hsa_elastica.physics.rigid_mounts.MotorMountBC` (the motor bolted to
        the body, turned by the motor angle) and a
        :class:`~hsa_elastica.physics.rigid_mounts.MountReaction` hands the base's load to the
        body.  The robot's frame is then the body's frame shifted by ``mount_offset``.
    simulator : HSASimulator or None
        Add the robot to this (not finalized) simulator; a ``base`` body not in it is appended (no damping or gravity).
    mount_offset : (3,) [m] or None
        Origin of the robot's frame in the base body's frame; default: the top face of a
        ``Cylinder`` body, ``(0, 0, length / 2)``, else the body's centre.
    mount : JointParams or None
        None (default): rigid mounts on a base body.  Joint gains: compliant mounts instead,
        the joint of Eq. 6-7 at each base (:class:`~hsa_elastica.physics.mounts.MotorMount` /
        ``TwistMount``; the base deflects by ``|F| / k_F`` and turns by ``|tau| / k_tau``,
        stiffer gains need a smaller stable time step).
    drive : ``"angle"`` | ``"torque"``
        On a base body: ``"angle"`` (default) drives each rod by its motor angle
        (:class:`MotorMountBC`); ``"torque"`` by a motor torque [N m] about the rod's axis with the
        base free to twist (:class:`~hsa_elastica.physics.rigid_mounts.TwistMountBC` and
        ``MountReaction(torque=...)``, which is then the motor's handle; ``motor_angles``
        then holds the torques, numbers ramped as the angles are).  ``"torque"`` needs a body.

    The operators of each rod: the module docstring, "Operators".
    """
    if not isinstance(robot_params, RobotParams):
        raise ParameterError(f"robot_params = {robot_params!r} is invalid: must be a RobotParams")
    per_rod = _motor_schedules(motor_angles, robot_params.n_rods, angles=drive == "angle" or base is None)
    check_ramp(ramp)
    if check_dt:  # (compliant mounts: their springs on the base nodes)
        check_time_steps(robot_params, mount if base is not None else None)
    sim = HSASimulator() if simulator is None else simulator
    frame, body = _base_frame(base, mount_offset)
    _check_drive(drive, body)
    if body is not None and not any(s is body for s in sim):
        sim.append(body)
    robot = _assemble_robot(sim, robot_params, per_rod, ramp, record, frame, body, mount, drive)
    announce_kernels(robot_params.simulation)  # after the placement checks (an obstacle's)
    if finalize:
        sim.finalize()
    return robot


def check_ramp(ramp: Any) -> None:
    """``ParameterError`` unless ``ramp`` is None, a duration >= 0 [s] or a callable."""
    if ramp is not None and not callable(ramp):
        if isinstance(ramp, bool) or not isinstance(ramp, (int, float)) or not ramp >= 0.0:
            raise ParameterError(
                f"ramp = {ramp!r} is invalid: must be None, a duration >= 0 (s) or a callable"
            )


def check_time_steps(robot_params: RobotParams, mount: JointParams | None) -> None:
    """``simulation.dt`` within the stability limit of one robot's parameters and, with the
    gains ``mount`` of compliant motor mounts, of its rods on those mounts
    (:func:`~hsa_elastica.engines.timeloop.check_time_step`: ``ParameterError`` otherwise)."""
    check_time_step(robot_params.simulation.dt, robot_params)
    if mount is not None:
        check_time_step(robot_params.simulation.dt, _with_joint(robot_params, mount))


def announce_kernels(integrator: Any = None) -> None:
    """Before a first run that compiles the kernels (about a minute): say so on stderr, and,
    from the command line (``precompile.enable``), compile them on every core (with the rows
    the time integrator of ``integrator``, a ``SimulationParams``, adds to the table)."""
    from hsa_elastica.io.compile_notice import announce_if_cold

    announce_if_cold(lambda: kernels_cached(integrator))
    from hsa_elastica.engines.precompile import precompile_if_cold

    precompile_if_cold(integrator=integrator)


def kernels_cached(integrator: Any = None) -> bool:
    """True if numba's cache holds the fused loop and, for a time integrator with its own rows
    in the kernel table (``integrator``: a ``SimulationParams`` or a name; the implicit
    integrator's Newton kernel, settling watch and tangents), those rows' entry points: a run
    on it will not spend minutes compiling first."""
    from hsa_elastica.engines.fused import kernels_cached as fused_cached

    if not fused_cached():
        return False
    if integrator is None:
        return True
    from hsa_elastica.engines.precompile import is_cold
    from hsa_elastica.params.integrators import integrator as integrator_record

    table = integrator_record(integrator).kernel_table
    return table is None or not is_cold(table)


def _assemble_robot(
    sim: HSASimulator,
    robot_params: RobotParams,
    per_rod: list[float | Callable[[float], float]],
    ramp: float | Callable[[float], float] | None,
    record: bool,
    frame: Frame | None,
    body: Any,
    mount: JointParams | None = None,
    drive: str = "angle",
) -> Robot:
    """Append one robot to ``sim`` (see :func:`build_robot`; arguments already checked).

    ``frame``: the robot frame in the lab (None: the lab); ``body``: the rigid body carrying
    the motors (None: motors fixed in the lab).  With a body, ``frame`` is the body's frame
    shifted to the mount origin, so the attachment of rod ``i`` in the body frame is the
    offset plus ``rod_start(i)``.
    """
    angles = tuple(float("nan") if callable(a) else a for a in per_rod)
    sp = robot_params.simulation
    if mount is not None and not isinstance(mount, JointParams):
        raise ParameterError(f"mount = {mount!r} is invalid: must be None or a JointParams")
    rod_params = [robot_params.rod_params(i) for i in range(robot_params.n_rods)]
    rods, bases, attachments, mounts = _place_rods(sim, robot_params, rod_params, frame, body)
    platform = _add_platform(sim, robot_params, frame)
    # motors on a body: rigidly bolted (MotorMountBC / TwistMountBC) unless joint gains are
    # given for a compliant mount (MotorMount / TwistMount, Eq. 6-7 at the base)
    rigid = body is not None and mount is None
    couplings: list[OperatorRef[AuxeticCoupling]] = []
    motors: list[OperatorRef[Any]] = []
    mount_bcs: list[OperatorRef[Any]] = []
    reactions: list[tuple[CosseratRod, OperatorRef[Any] | None, Any]] = []
    joints: list[OperatorRef[PlatformJoint]] = []
    recorders: dict[str, Any] = {}
    ramp_time = sp.ramp_time if ramp is None or callable(ramp) else float(ramp)
    for i, rod in enumerate(rods):
        c_ref: OperatorRef[AuxeticCoupling] = OperatorRef()
        sim.add_forcing_to(rod).using(
            c_ref.capture(AuxeticCoupling), **coupling_kwargs(rod_params[i])
        )
        couplings.append(c_ref)
        _add_material_damping(
            sim, rod, rod_params[i], sp.dt, hold_base=body is None or rigid, hold_tip=False
        )
        schedule = _rod_schedule(per_rod[i], ramp, angles[i], ramp_time, sp.ramp_shape)
        m_ref, bc_ref = _add_motor(sim, rod, schedule, body, drive, None if rigid else mount,
                                   mounts[i])
        if bc_ref is not None:  # a rigid mount: its reaction is registered after gravity
            mount_bcs.append(bc_ref)
            # the torque drive's command lives on its reaction
            reactions.append((rod, m_ref if drive == "torque" else None,
                              None if drive == "angle" else schedule))
        motors.append(m_ref)
        joints.append(_add_joint(sim, rod, platform, robot_params.joint, attachments[i],
                                 PlatformJoint, -1))
        recorders[f"rod{i}"] = _add_environment(sim, rod, sp, "rod" if record else None)

    for rod, r_ref, torque in reactions:
        sim.connect(
            first_rod=rod, second_rod=body, first_connect_idx=0, second_connect_idx=0
        ).using(MountReaction if r_ref is None else r_ref.capture(MountReaction), torque=torque)
    contacts = _add_surroundings(sim, robot_params, rods, platform, recorders if record else None)
    robot = Robot(
        simulator=sim, params=robot_params, motor_angles=angles, rods=rods, platform=platform,
        timestepper=PositionVerlet(), dt=sp.dt, rod_bases=bases, attachment_points=attachments,
        couplings=couplings, motors=motors, joints=joints,
        recorders=recorders if record else {}, base=body, mounts=mount_bcs, contacts=contacts,
    )
    if record:
        recorders["sensors"].bind(robot)
    return robot


def _rod_schedule(
    target: float | Callable[[float], float], ramp: float | Callable[[float], float] | None,
    angle: float, ramp_time: float, ramp_shape: str,
) -> Callable[[float], float]:
    """One rod's motor schedule ``t [s] -> phi [rad]``: its own callable ``target``, the
    common profile ``ramp`` scaled to its ``angle`` [rad], or a :class:`Ramp` to it over
    ``ramp_time`` [s]."""
    if callable(target):
        return target
    if callable(ramp):
        return _scaled(ramp, angle)
    return Ramp(target=angle, duration=ramp_time, shape=ramp_shape)


def _add_surroundings(
    sim: HSASimulator, robot_params: RobotParams, rods: list[CosseratRod], platform: Any,
    recorders: dict[str, Any] | None,
) -> list[OperatorRef[Any]]:
    """The platform's damping and gravity, the contacts and free objects
    (:func:`_add_obstacles`) and, into ``recorders`` (None: no recording), the platform's,
    the objects' and the robot's sensor recorders.  Returns the contacts' references."""
    sp = robot_params.simulation
    record = recorders is not None
    platform_recorder = _add_environment(sim, platform, sp, "rigid_body" if record else None)
    objects: list[Any] = []
    contacts = _add_obstacles(sim, robot_params, rods, platform, objects)
    if recorders is not None:
        from hsa_elastica.io.sensors import RobotSensorRecorder

        recorders["platform"] = platform_recorder
        recorders.update(_object_recorders(sim, objects, sp))
        recorders["sensors"] = RobotSensorRecorder(fps=sp.record_fps, dt=sp.dt).attach(sim, platform)
    return contacts


def _add_obstacles(
    sim: HSASimulator, robot_params: RobotParams, rods: list[CosseratRod], platform: Any,
    objects: list[Any] | None = None,
) -> list[OperatorRef[Any]]:
    """A ``RodContact`` on every rod and a ``BodyContact`` on the platform (its end discs'
    rims) for each obstacle of ``robot_params.environment``; each placement is checked first
    (``ParameterError`` if a system starts inside an obstacle).  A rod's end nodes are left
    out: the base node sits in the motor's hub (held by it) and the tip node in the platform,
    whose own points touch for it (a node's contact sphere, of the tube's radius, would reach
    above the platform's top face).  Then the free objects (:func:`_add_objects`; their
    bodies appended to ``objects``), then, with ``environment.rod_contact``, a
    ``RodRodContact`` per pair of rods (in the order of ``itertools.combinations``)."""
    from hsa_elastica.physics.contact import add_contact

    refs: list[OperatorRef[Any]] = []
    for obstacle in robot_params.environment.obstacles:
        refs += [add_contact(sim, rod, obstacle, nodes=(1, -1)) for rod in rods]
        refs.append(add_contact(sim, platform, obstacle))
    refs += _add_objects(sim, robot_params, rods, platform, objects)
    rod_contact = robot_params.environment.rod_contact
    if rod_contact is not None:  # one RodRodContact per pair of rods (physics/rod_contact.py)
        from hsa_elastica.physics.rod_contact import add_rod_contacts

        refs += add_rod_contacts(sim, rods, rod_contact)
    return refs


def _object_recorders(sim: HSASimulator, objects: list[Any], sp: Any) -> dict[str, Any]:
    """A ``RigidBodyRecorder`` per free object, ``"object{j}"``: its pose, what a video draws."""
    return {f"object{j}": _add_recorder(sim, body, "rigid_body", sp) for j, body in enumerate(objects)}


def _add_objects(sim: HSASimulator, robot_params: RobotParams, rods: list[CosseratRod],
                 platform: Any, objects: list[Any] | None = None) -> list[OperatorRef[Any]]:
    """Each free object of ``robot_params.environment`` (docs/contact.md, "Moving objects"): a
    PyElastica ``Sphere`` or a solid ``Cylinder`` (:func:`_object_body`) under the simulation's
    gravity (if any), resting on every obstacle (``BodyContact``: a sphere's point closest to
    it, a cylinder's rims), touched by every rod's nodes but the end ones and by the
    platform's rims (``ObjectContact``); placements checked first.  The references: per object
    the obstacles' contacts on it, then the rods', then the platform's
    (``ref.instance.body``: the object)."""
    from hsa_elastica.physics.contact import add_contact
    from hsa_elastica.physics.object_contact import add_object_contact

    refs: list[OperatorRef[Any]] = []
    for obj in robot_params.environment.objects:
        body = _object_body(obj)
        sim.append(body)
        if objects is not None:
            objects.append(body)
        _add_gravity(sim, body, robot_params.simulation)
        refs += [add_contact(sim, body, o) for o in robot_params.environment.obstacles]
        refs += [add_object_contact(sim, rod, body, obj.contact, nodes=(1, -1)) for rod in rods]
        refs.append(add_object_contact(sim, platform, body, obj.contact))
    return refs


def _object_body(obj: ObjectParams) -> Any:
    """The rigid body of ``obj``: a ``Sphere``, or a ``Cylinder`` centred at ``obj.position``
    along ``obj.axis`` with a solid cylinder's inertia (:func:`solid_cylinder`), of the
    object's mass (``obj.mass`` [kg] over the shape's volume as the density)."""
    from elastica import Sphere

    centre = np.array(obj.position, dtype=np.float64)
    density = cast(float, obj.mass) / obj.volume  # a float once the record is built
    if obj.shape == "sphere":
        return Sphere(centre, obj.radius, density)
    axis = np.array(obj.axis, dtype=np.float64)
    helper = np.eye(3)[int(np.argmin(np.abs(axis)))]  # the basis vector least along the axis
    normal = np.cross(axis, helper)
    normal /= np.linalg.norm(normal)
    return solid_cylinder(centre - 0.5 * obj.length * axis, axis, normal, obj.length,
                          obj.radius, density)


def _place_rods(
    sim: HSASimulator, robot_params: RobotParams, rod_params: list[RodParams],
    frame: Frame | None, body: Any,
) -> tuple[list[CosseratRod], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """The rods of a robot on their circle, appended to ``sim``; with the rod bases [m]
    (robot frame), the joint attachment points [m] (platform frame) and, on a base body, the
    rod starts in the body frame [m] (zeros without a body)."""
    n = robot_params.n_rods
    rp = robot_params.rod
    rods: list[CosseratRod] = []
    bases = np.zeros((n, 3))
    attachments = np.zeros((n, 3))
    mounts = np.zeros((n, 3))
    tilt = robot_params.rod_tilt_matrix()
    for i in range(n):
        a = robot_params.rod_angle(i)
        bases[i] = robot_params.rod_start(i)
        radial = np.array([math.cos(a), math.sin(a), 0.0])
        axis = np.array([0.0, 0.0, 1.0])
        if tilt is not None:  # the whole printed rod leans about its foot on the plate
            axis, radial = tilt[:, 2].copy(), tilt @ radial
        rod = make_hsa_rod(
            rod_params[i],
            base_position=_placed(frame, bases[i]),
            direction=_placed(frame, axis, vector=True),
            normal=_placed(frame, radial, vector=True),
        )
        pretwist(rod, robot_params.rod_motor_offset(i))  # before the motor reads its reference
        sim.append(rod)
        rods.append(rod)
        # rigid top cap: part of the platform, the joint holds the flexible tip below it
        attachments[i] = (bases[i, 0], bases[i, 1],
                          -0.5 * robot_params.platform.thickness - rp.cap_length_top)
        if tilt is not None:  # the top cap leans with its rod: tip = top of the rod - cap
            x, y, _ = robot_params.rod_base(i)
            attachments[i] = (np.array([x, y, -0.5 * robot_params.platform.thickness])
                              - rp.cap_length_top * axis)
        if body is not None and frame is not None:
            # rod start in the body frame: lab point -> body frame
            mounts[i] = frame[0].T @ (_placed(frame, bases[i]) - body.position_collection[:, 0])
    return rods, bases, attachments, mounts


def _add_platform(sim: HSASimulator, robot_params: RobotParams, frame: Frame | None) -> Cylinder:
    """The platform cylinder on the rod tips (see the module docstring), appended to ``sim``."""
    rp, pp = robot_params.rod, robot_params.platform
    height = rp.cap_length_base + rp.length + rp.cap_length_top
    tilt = robot_params.rod_tilt_matrix()
    # on leaning rods the level platform sits on their tops, `height` along their axis
    start = (0.0, 0.0, height) if tilt is None else height * tilt[:, 2]
    platform = Cylinder(
        start=_placed(frame, start),
        direction=_placed(frame, (0.0, 0.0, 1.0), vector=True),
        normal=_placed(frame, (1.0, 0.0, 0.0), vector=True),
        base_length=pp.thickness,
        base_radius=pp.radius,
        density=pp.effective_density,
    )
    sim.append(platform)
    return platform


def _add_motor(
    sim: HSASimulator, rod: CosseratRod, schedule: Callable[[float], float], body: Any,
    drive: str, compliant: JointParams | None, mount_point: NDArray[np.float64],
) -> tuple[OperatorRef[Any], OperatorRef[Any] | None]:
    """The motor at a rod's base: a :class:`MotorAngleBC` (no body), a rigid mount BC on
    ``body`` (``compliant`` None) or a compliant mount with the gains ``compliant``.  Returns
    the motor's handle and, for a rigid mount, the handle of its BC (the motor's handle is
    then the reaction's, registered by the caller, for ``drive="torque"``)."""
    m_ref: OperatorRef[Any] = OperatorRef()
    if body is None:
        sim.constrain(rod).using(
            m_ref.capture(MotorAngleBC),
            constrained_position_idx=(0,),
            constrained_director_idx=(0,),
            angle=schedule,
        )
        return m_ref, None
    if compliant is None:
        bc_ref: OperatorRef[Any] = m_ref if drive == "angle" else OperatorRef()
        sim.constrain(rod).using(
            bc_ref.capture(MotorMountBC if drive == "angle" else TwistMountBC),
            constrained_position_idx=(0,),
            constrained_director_idx=(0,),
            body=body,
            **({"angle": schedule} if drive == "angle" else {}),
        )
        return m_ref, bc_ref
    command = {"angle": schedule} if drive == "angle" else {"torque": schedule}
    _add_joint(sim, rod, body, compliant, mount_point, MotorMount if drive == "angle" else TwistMount,
               0, m_ref, **command)
    return m_ref, None


def _add_joint(
    sim: HSASimulator, rod: CosseratRod, body: Any, gains: JointParams,
    attachment: NDArray[np.float64], kind: type, rod_index: int,
    ref: OperatorRef[Any] | None = None, **kwargs: Any,
) -> OperatorRef[Any]:
    """A joint of Eq. 6-7 (``kind``: :class:`PlatformJoint` or a compliant mount) between
    node ``rod_index`` of ``rod`` and ``body`` at ``attachment`` (body frame, [m])."""
    ref = OperatorRef() if ref is None else ref
    sim.connect(
        first_rod=rod, second_rod=body, first_connect_idx=rod_index, second_connect_idx=0
    ).using(
        ref.capture(kind),
        k_F=gains.k_F,
        nu_F=gains.nu_F,
        k_tau=gains.k_tau,
        nu_tau=gains.nu_tau,
        attachment_point=attachment.copy(),
        **kwargs,
    )
    return ref


def build_fast_robot(
    robot_params: RobotParams,
    motor_angles: Sequence[float],
    *,
    ramp: float | Callable[[float], float] | None = None,
    record: bool = True,
    chunk: int = 500,
    check_dt: bool = True,
) -> FastRobot:
    """:func:`hsa_elastica.robots.builders.build_robot` stepped by the compiled engine that
    ``robot_params.simulation.integrator`` selects (same arguments): the fused explicit loop
    (:class:`~hsa_elastica.robots.compiled.FastRobot`) or the implicit integrator
    (:class:`~hsa_elastica.robots.compiled.ImplicitRobot`)."""
    from hsa_elastica.robots.compiled import compiled_engine

    robot = build_robot(
        robot_params, motor_angles, ramp=ramp, record=record, finalize=True, check_dt=check_dt
    )
    return compiled_engine(robot, chunk=chunk)