"""Handles of built HSA simulations: the operators PyElastica instantiates at ``finalize()``
(:class:`OperatorRef`), a single rod (:class:`SingleRod`) and a robot (:class:`Robot`, with the
step API of :class:`~hsa_elastica.engines.control.ControlMixin`), and running them with
:func:`hsa_elastica.engines.timeloop.run`.  Built by :mod:`hsa_elastica.robots.builders`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from elastica import CosseratRod
from elastica.rigidbody import Cylinder
from elastica.timestepper.symplectic_steppers import PositionVerlet

from hsa_elastica.engines import timeloop
from hsa_elastica.engines.control import ControlMixin
from hsa_elastica.params import RobotParams, RodParams, SimulationParams
from hsa_elastica.physics.actuation import BaseTwistTorque
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling
from hsa_elastica.physics.joints import PlatformJoint
from hsa_elastica.physics.operator_ref import OperatorRef
from hsa_elastica.robots.environment import HSASimulator

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["OperatorRef", "SingleRod", "Robot"]

def _run(handle: Any, duration: float, names: dict[Any, str], **kwargs: Any) -> float:
    """Advance ``handle`` by ``duration`` [s] from ``handle.time``; returns the new time.

    ``names`` maps the handle's own systems to their names; systems a user appended to the
    simulator keep the default names of :func:`hsa_elastica.engines.timeloop.run`.
    """
    handle.time = timeloop.run(
        handle.simulator,
        handle.timestepper,
        duration=duration,
        dt=handle.dt,
        time=handle.time,
        systems_names=names,
        **kwargs,
    )
    return float(handle.time)


@dataclass
class SingleRod:
    """Handle of a single-rod simulation built by :func:`build_single_rod`.

    ``coupling``, ``base_bc``, ``base_torque`` and ``distal_bc`` are :class:`OperatorRef` whose
    ``.instance`` is available after ``finalize()`` (``None`` when not requested); ``recorder``
    is the ``recording.RodRecorder`` (None with ``record=False``).  ``time`` [s] is the simulated
    time reached by :meth:`run`.
    """

    simulator: HSASimulator
    rod: CosseratRod
    rod_params: RodParams
    sim_params: SimulationParams
    timestepper: PositionVerlet
    dt: float
    coupling: OperatorRef[AuxeticCoupling]
    base_bc: OperatorRef[Any]
    base_torque: OperatorRef[BaseTwistTorque] | None
    distal_bc: OperatorRef[Any] | None
    recorder: Any | None
    recorders: dict[str, Any] = field(default_factory=dict)
    time: float = 0.0

    def finalize(self) -> None:
        """``simulator.finalize()`` (done by the builder unless ``finalize=False``)."""
        self.simulator.finalize()

    @property
    def rods(self) -> list[CosseratRod]:
        """``[rod]``: the handle's rods as a robot lists them (the compiled engines read it)."""
        return [self.rod]

    @property
    def motors(self) -> list[OperatorRef[Any]]:
        """``[base_bc]``: the base's boundary condition as a robot lists its motors (the
        settling loop's lost-twist test reads a motor-angle base)."""
        return [self.base_bc]

    def named_systems(self) -> dict[Any, str]:
        """``{rod: "rod"}``: the name divergence and Newton-failure reports give the rod."""
        return {self.rod: "rod"}

    def run(self, duration: float, **kwargs: Any) -> float:
        """Advance by ``duration`` [s] from :attr:`time` with :func:`hsa_elastica.engines.timeloop.run`
        (keyword arguments are passed on); returns the new simulated time [s].  The compiled
        engines run the same handle too: ``compiled_engine(handle)``
        (:func:`hsa_elastica.robots.compiled.compiled_engine`, selected by
        ``sim_params.integrator``)."""
        return _run(self, duration, self.named_systems(), **kwargs)

    def diagnostics(self) -> "pd.DataFrame":
        """Recorded samples of the rod (columns as in ``recording.RodRecorder``)."""
        if self.recorder is None:
            raise RuntimeError("built with record=False: nothing was recorded")
        return self.recorder.to_dataframe()  # type: ignore[no-any-return]


@dataclass
class Robot(ControlMixin):
    """Handle of an HSA robot built by :func:`build_robot`.

    Step API (:class:`~hsa_elastica.engines.control.ControlMixin`): ``set_motor_angles(u)``,
    ``step(dt_control)``, ``state()``.

    Operator handles (:class:`OperatorRef`, filled at ``finalize()``): ``couplings``,
    ``motors`` (:class:`MotorAngleBC`; when ``base`` is a rigid body carrying the motors
    :class:`~hsa_elastica.physics.rigid_mounts.MotorMountBC`, or the ``MountReaction`` holding
    the torque of a torque drive, or the compliant ``MotorMount`` / ``TwistMount``), ``mounts``
    (the rigid mounts' constraints, empty otherwise), ``joints``; ``recorders`` maps ``"rod{i}"`` /
    ``"platform"`` / ``"sensors"`` to the recorders (``recording.RodRecorder``,
    ``recording.RigidBodyRecorder``, ``sensors.RobotSensorRecorder``; empty with
    ``record=False``); ``contacts`` (the ``RodContact`` / ``BodyContact`` of the obstacles
    of ``params.environment``: per obstacle the rods' in rod order, then the platform's).
    ``time`` [s] is the simulated time reached by :meth:`run`.

    ``motor_angles`` [rad]: the target angle of each rod given as a number, and for a rod
    given a schedule (a callable ``t -> phi``) that schedule evaluated at :attr:`time`.
    """

    simulator: HSASimulator
    params: RobotParams
    motor_angles: tuple[float, ...]
    rods: list[CosseratRod]
    platform: Cylinder
    timestepper: PositionVerlet
    dt: float
    rod_bases: NDArray[np.float64]  # (n_rods, 3) [m], first node of each flexible part
    attachment_points: NDArray[np.float64]  # (n_rods, 3) [m], platform local frame
    couplings: list[OperatorRef[AuxeticCoupling]]
    motors: list[OperatorRef[Any]]  # MotorAngleBC, or a mount's command holder on a base body
    joints: list[OperatorRef[PlatformJoint]]
    recorders: dict[str, Any]
    time: float = 0.0
    base: Any = None  # the rigid body carrying the motors (None: fixed in the lab)
    #: the rigid mounts' constraints (MotorMountBC / TwistMountBC) on ``base``; empty otherwise
    mounts: list[OperatorRef[Any]] = field(default_factory=list)
    #: the contact forcings of the environment's obstacles (docs/contact.md)
    contacts: list[OperatorRef[Any]] = field(default_factory=list)

    def finalize(self) -> None:
        """``simulator.finalize()`` (done by the builder unless ``finalize=False``)."""
        self.simulator.finalize()

    def run(self, duration: float, **kwargs: Any) -> float:
        """Advance by ``duration`` [s] from :attr:`time` with :func:`hsa_elastica.engines.timeloop.run`
        (keyword arguments are passed on); returns the new simulated time [s]."""
        names: dict[Any, str] = {rod: f"rod{i}" for i, rod in enumerate(self.rods)}
        names[self.platform] = "platform"
        return _run(self, duration, names, **kwargs)

    def diagnostics(self) -> "pd.DataFrame":
        """All recorders in one DataFrame: ``time`` and columns prefixed ``rod{i}/``,
        ``platform/`` (the contract's robot format)."""
        if not self.recorders:
            raise RuntimeError("built with record=False: nothing was recorded")
        from hsa_elastica.io.recording import combine

        return combine({key: rec.to_dataframe() for key, rec in self.recorders.items()})


def _get_motor_angles(self: Robot) -> tuple[float, ...]:
    """Targets given as numbers; schedules (stored as NaN) evaluated at the current time."""
    given: tuple[float, ...] = self._given_motor_angles  # type: ignore[attr-defined]
    out = []
    for i, a in enumerate(given):
        schedule = None
        if math.isnan(a) and i < len(self.motors) and self.motors[i].ready:
            # a torque-driven mount (TwistMount) imposes no angle: it stays NaN
            schedule = getattr(self.motors[i].instance, "angle", None)
        if schedule is not None:
            out.append(float(schedule(float(self.time))))
        else:
            out.append(float(a))
    return tuple(out)


def _set_motor_angles(self: Robot, value: Any) -> None:
    self._given_motor_angles = tuple(float(a) for a in value)  # type: ignore[attr-defined]


# a property over the dataclass field: ``Robot(..., motor_angles=...)`` keeps its signature
Robot.motor_angles = property(_get_motor_angles, _set_motor_angles)  # type: ignore[assignment]
