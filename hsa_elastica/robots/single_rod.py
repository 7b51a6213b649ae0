"""One HSA rod on its own: the characterization set-ups of Good et al. (motor or free-twist
base with a torque schedule; free, twist-locked or fixed distal end; a tip force), built on the
rod of :mod:`hsa_elastica.robots.hsa_rod` (re-exported by :mod:`hsa_elastica.robots.builders`)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from elastica import CosseratRod
from elastica.boundary_conditions import FixedConstraint
from elastica.external_forces import EndpointForces
from elastica.timestepper.symplectic_steppers import PositionVerlet
from numpy.typing import NDArray

from hsa_elastica.engines.timeloop import check_time_step
from hsa_elastica.params import (
    ParameterError,
    RodParams,
    SimulationParams,
    integrator,
)
from hsa_elastica.physics.actuation import (
    BaseTwistTorque,
    DistalTwistLockBC,
    FreeTwistBC,
    MotorAngleBC,
)
from hsa_elastica.physics.auxetic_coupling import AuxeticCoupling
from hsa_elastica.robots.environment import (
    HSASimulator,
    _add_environment,
    _add_material_damping,
)
from hsa_elastica.robots.handles import OperatorRef, SingleRod
from hsa_elastica.robots.hsa_rod import (
    Schedule,
    _as_schedule,
    coupling_kwargs,
    make_hsa_rod,
)

__all__ = ["build_single_rod", "check_setup"]


# --------------------------------------------------------------------------------------------
# single rod
# --------------------------------------------------------------------------------------------
_BASES = ("motor", "free_twist")
_DISTALS = ("free", "twist_locked", "fixed")


def build_single_rod(
    rod_params: RodParams,
    sim_params: SimulationParams | None = None,
    *,
    base: str = "motor",
    angle: Schedule = 0.0,
    torque: Schedule = 0.0,
    distal: str = "twist_locked",
    tip_force: Sequence[float] | NDArray[np.float64] | float | None = None,
    record: bool = True,
    base_position: Sequence[float] = (0.0, 0.0, 0.0),
    normal: Sequence[float] = (1.0, 0.0, 0.0),
    finalize: bool = True,
    check_dt: bool = True,
) -> SingleRod:
    """One HSA rod along +z from ``base_position`` (Section II-C experiments).

    Parameters
    ----------
    rod_params, sim_params
        Rod and simulation parameters (``sim_params`` defaults to ``SimulationParams()``).
    base : ``"motor"`` | ``"free_twist"``
        ``"motor"``: :class:`MotorAngleBC` driven by ``angle`` (option (a) of Section II-D);
        ``"free_twist"``: :class:`FreeTwistBC` + :class:`BaseTwistTorque` driven by ``torque``
        (option (b)).
    angle : float [rad] or callable ``t -> phi``
        Motor angle; a number is ramped with ``Ramp(target, sim.ramp_time, sim.ramp_shape)``.
    torque : float [N m] or callable ``t -> tau``
        Base twist torque about +z; a number is ramped likewise.
    distal : ``"free"`` | ``"twist_locked"`` | ``"fixed"``
        Distal end: free; :class:`DistalTwistLockBC` (moves and tilts, does not twist; the
        characterization setup); or PyElastica's ``FixedConstraint`` on the last node and
        element (blocked force).
    tip_force : (3,) [N], a number (along +z) or None
        Force on the distal node, ramped linearly over ``sim.ramp_time`` (``EndpointForces``).
    record : bool
        Add a ``recording.RodRecorder`` sampling at ``sim.record_fps``.
    finalize : bool
        Call ``simulator.finalize()`` (set False to add more operators first).
    check_dt : bool
        Refuse ``sim.dt`` above the stability limit of the integrator
        (:func:`hsa_elastica.engines.timeloop.check_time_step`); False only to study divergence.
        Not applied with ``sim.integrator = "implicit"`` (the handle is then stepped by
        :func:`hsa_elastica.robots.compiled.compiled_engine`, which refuses a step whose
        Newton iteration does not converge).
    """
    sim_params = SimulationParams() if sim_params is None else sim_params
    if not isinstance(sim_params, SimulationParams):
        raise ParameterError(f"sim_params = {sim_params!r} is invalid: must be a SimulationParams")
    check_setup(base, distal)
    dt = sim_params.dt
    if check_dt and integrator(sim_params).checks_stability_limit:  # implicit: Newton refuses a dt
        check_time_step(dt, rod_params)
    sim = HSASimulator()
    rod = make_hsa_rod(rod_params, base_position=base_position, normal=normal)
    sim.append(rod)

    coupling: OperatorRef[AuxeticCoupling] = OperatorRef()
    sim.add_forcing_to(rod).using(coupling.capture(AuxeticCoupling), **coupling_kwargs(rod_params))
    _add_material_damping(
        sim, rod, rod_params, dt, hold_base=True, hold_tip=distal in ("twist_locked", "fixed")
    )

    base_bc, base_torque = _add_rod_base(sim, rod, base, angle, torque, sim_params)
    distal_bc = _add_rod_distal(sim, rod, distal)
    if tip_force is not None:
        _add_tip_force(sim, rod, tip_force, sim_params)

    recorder = _add_environment(sim, rod, sim_params, "rod" if record else None)
    handle = SingleRod(
        simulator=sim, rod=rod, rod_params=rod_params, sim_params=sim_params,
        timestepper=PositionVerlet(), dt=dt, coupling=coupling, base_bc=base_bc,
        base_torque=base_torque, distal_bc=distal_bc, recorder=recorder,
        recorders={"rod": recorder} if recorder is not None else {},
    )
    if finalize:
        sim.finalize()
    return handle


def check_setup(base: str, distal: str) -> None:
    """``ParameterError`` unless ``base`` is one of ``"motor"``, ``"free_twist"`` and
    ``distal`` one of ``"free"``, ``"twist_locked"``, ``"fixed"`` (the single-rod set-ups)."""
    if base not in _BASES:
        raise ParameterError(f"base = {base!r} is invalid: must be one of {_BASES}")
    if distal not in _DISTALS:
        raise ParameterError(f"distal = {distal!r} is invalid: must be one of {_DISTALS}")


def _add_rod_base(
    sim: HSASimulator, rod: CosseratRod, base: str, angle: Schedule, torque: Schedule,
    sim_params: SimulationParams,
) -> tuple[OperatorRef[Any], OperatorRef[BaseTwistTorque] | None]:
    """The base of a single rod (see :func:`build_single_rod`): its boundary condition and,
    for ``base="free_twist"``, the base twist torque."""
    base_bc: OperatorRef[Any] = OperatorRef()
    if base == "motor":
        sim.constrain(rod).using(
            base_bc.capture(MotorAngleBC),
            constrained_position_idx=(0,),
            constrained_director_idx=(0,),
            angle=_as_schedule("angle", angle, sim_params),
        )
        return base_bc, None
    sim.constrain(rod).using(
        base_bc.capture(FreeTwistBC),
        constrained_position_idx=(0,),
        constrained_director_idx=(0,),
    )
    base_torque: OperatorRef[BaseTwistTorque] = OperatorRef()
    sim.add_forcing_to(rod).using(
        base_torque.capture(BaseTwistTorque), torque=_as_schedule("torque", torque, sim_params)
    )
    return base_bc, base_torque


def _add_rod_distal(sim: HSASimulator, rod: CosseratRod, distal: str) -> OperatorRef[Any] | None:
    """The distal-end constraint of a single rod (None for a free end)."""
    if distal == "free":
        return None
    distal_bc: OperatorRef[Any] = OperatorRef()
    if distal == "twist_locked":
        sim.constrain(rod).using(distal_bc.capture(DistalTwistLockBC), constrained_director_idx=(-1,))
    else:  # "fixed"
        sim.constrain(rod).using(
            distal_bc.capture(FixedConstraint),
            constrained_position_idx=(-1,),
            constrained_director_idx=(-1,),
        )
    return distal_bc


def _add_tip_force(
    sim: HSASimulator, rod: CosseratRod, tip_force: Any, sim_params: SimulationParams
) -> None:
    """``EndpointForces`` on the distal node, ramped linearly over ``sim_params.ramp_time``."""
    f = np.array(tip_force, dtype=np.float64).reshape(-1)
    if f.shape == (1,):
        f = np.array([0.0, 0.0, f[0]])
    if f.shape != (3,) or not np.all(np.isfinite(f)):
        raise ParameterError(
            f"tip_force = {tip_force!r} is invalid: must be None, a number or 3 finite numbers (N)"
        )
    sim.add_forcing_to(rod).using(
        EndpointForces, start_force=np.zeros(3), end_force=f, ramp_up_time=sim_params.ramp_time
    )


