"""Simulation environment of HSA builds: the PyElastica system collection, material damping,
rigid-body rate damping, gravity and recorders shared by every builder."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from elastica import CosseratRod, Cylinder
from elastica.dissipation import AnalyticalLinearDamper, DamperBase
from elastica.external_forces import GravityForces
from elastica.modules import (
    BaseSystemCollection,
    CallBacks,
    Connections,
    Constraints,
    Contact,
    Damping,
    Forcing,
)

from hsa_elastica.compat import set_body_inertia
from hsa_elastica.physics.kelvin_voigt_damper import KelvinVoigtDamping
from hsa_elastica.params import RodParams, SimulationParams

__all__ = ["HSASimulator", "material_damping_kwargs", "solid_cylinder", "solid_cylinder_inertia"]

class HSASimulator(
    BaseSystemCollection, Constraints, Forcing, Connections, Damping, CallBacks, Contact
):
    """PyElastica system collection with every module an HSA simulation needs.

    ``Contact`` lets a user add PyElastica's contact classes (e.g. ``CylinderPlaneContact``
    between the platform and a ``Plane``, ``RodPlaneContact`` for a rod) before
    ``finalize()``; they run on the per-rod operator path (``Robot.run``) only: the fused
    stepper refuses them (``FastPathUnsupported``).  The package's own frictional contact
    with fixed obstacles (``RodContact``, ``BodyContact``: :mod:`hsa_elastica.physics.contact`,
    docs/contact.md) is a forcing (``add_forcing_to``) and runs on the same path.
    """


def solid_cylinder_inertia(mass: float, radius: float, length: float) -> tuple[float, float, float]:
    """Principal mass moments of inertia [kg m^2] of a uniform solid cylinder of ``mass``
    [kg], ``radius`` and ``length`` [m] about its centre, in a ``Cylinder``'s director order
    (normal, binormal, axis): ``M (3 R^2 + L^2) / 12`` about a diameter (twice), ``M R^2 / 2``
    about the axis."""
    diameter = mass * (3.0 * radius**2 + length**2) / 12.0
    return diameter, diameter, 0.5 * mass * radius**2


def solid_cylinder(start: Any, direction: Any, normal: Any, base_length: float,
                   base_radius: float, density: float) -> Cylinder:
    """A PyElastica ``Cylinder`` (same arguments) with the inertia of a solid cylinder
    (:func:`solid_cylinder_inertia`): PyElastica 1.0's takes ``M R^2 / 4`` about a diameter,
    the thin disc's, leaving out ``M L^2 / 12``."""
    body = Cylinder(np.asarray(start, dtype=np.float64), np.asarray(direction, dtype=np.float64),
                    np.asarray(normal, dtype=np.float64), base_length, base_radius, density)
    set_body_inertia(body, solid_cylinder_inertia(float(np.sum(body.mass)), base_radius, base_length))
    return body


def material_damping_kwargs(rod_params: RodParams, dt: float) -> dict[str, Any] | None:
    """Keyword arguments of :class:`KelvinVoigtDamping` for the rod (None: all times are 0)."""
    taus = dict(
        tau_axial=rod_params.retardation_time_axial,
        tau_shear=rod_params.retardation_time_shear,
        tau_bend=rod_params.retardation_time_bend,
        tau_twist=rod_params.retardation_time_twist,
    )
    if not any(v > 0.0 for v in taus.values()):
        return None
    return dict(taus, time_step=dt)


def _add_material_damping(
    sim: HSASimulator, rod: Any, rod_params: RodParams, dt: float, *, hold_base: bool,
    hold_tip: bool,
) -> None:
    """Kelvin-Voigt damping of the TPU (a damper; reads the coupling's rest state)."""
    kw = material_damping_kwargs(rod_params, dt)
    if kw is not None:
        sim.dampen(rod).using(KelvinVoigtDamping, hold_base=hold_base, hold_tip=hold_tip, **kw)


# --------------------------------------------------------------------------------------------
# shared operators: damping, gravity, recording
# --------------------------------------------------------------------------------------------
class _RigidBodyRateDamper(DamperBase):
    """``v *= exp(-c_t dt)``, ``omega *= exp(-c_r dt)`` for a rigid body (rates in 1/s).

    Used only when the translational and rotational rates differ: PyElastica's
    ``AnalyticalLinearDamper`` then needs the rod-only ``dilatation`` array.
    """

    def __init__(self, *, translational: float, rotational: float, time_step: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.velocity_factors = (
            math.exp(-translational * time_step),  # per step, translational [-]
            math.exp(-rotational * time_step),  # per step, rotational [-]
        )

    def dampen_rates(self, system: Any, time: np.float64) -> None:
        system.velocity_collection *= self.velocity_factors[0]
        system.omega_collection *= self.velocity_factors[1]


def _add_damping(sim: HSASimulator, system: Any, sim_params: SimulationParams) -> None:
    """Linear damping with rates ``sim_params.damping`` / ``rotational_damping`` [1/s].

    Equal rates: ``AnalyticalLinearDamper(uniform_damping_constant=rate)``, i.e.
    ``v *= exp(-rate dt)`` and ``omega *= exp(-rate dt)`` each step (rods and platform).
    Different rates, rods: the physical protocol with ``rate * mass`` and ``rate * J`` (arrays)
    so that the decay rates are exactly the given ones per unit mass / inertia.
    """
    c_t, c_r, dt = sim_params.damping, sim_params.rotational_damping, sim_params.dt
    if c_t == 0.0 and c_r == 0.0:
        return
    if c_t == c_r:
        sim.dampen(system).using(AnalyticalLinearDamper, uniform_damping_constant=c_t, time_step=dt)
    elif isinstance(system, CosseratRod):
        sim.dampen(system).using(
            AnalyticalLinearDamper,
            translational_damping_constant=c_t * np.array(system.mass),
            rotational_damping_constant=c_r
            * np.diagonal(system.mass_second_moment_of_inertia).T.copy(),
            time_step=dt,
        )
    else:
        sim.dampen(system).using(
            _RigidBodyRateDamper, translational=c_t, rotational=c_r, time_step=dt
        )


def _add_gravity(sim: HSASimulator, system: Any, sim_params: SimulationParams) -> None:
    if sim_params.gravity is not None:
        sim.add_forcing_to(system).using(
            GravityForces, acc_gravity=np.array(sim_params.gravity, dtype=np.float64)
        )


def _add_recorder(sim: HSASimulator, system: Any, kind: str, sim_params: SimulationParams) -> Any:
    """A ``recording.RodRecorder`` / ``RigidBodyRecorder`` attached to ``system``, sampling at
    ``sim_params.record_fps`` (sample ``k`` at the step nearest to ``k / record_fps``)."""
    from hsa_elastica.io import recording as recording

    cls = recording.RodRecorder if kind == "rod" else recording.RigidBodyRecorder
    return cls(fps=sim_params.record_fps, dt=sim_params.dt).attach(sim, system)


def _add_environment(
    sim: HSASimulator, system: Any, sim_params: SimulationParams, record_as: str | None
) -> Any:
    """Gravity and damping on ``system``, plus a recorder of kind ``record_as`` (``"rod"`` |
    ``"rigid_body"``) sampling at ``sim_params.record_fps``; returns the recorder (or None)."""
    _add_gravity(sim, system, sim_params)
    _add_damping(sim, system, sim_params)
    if record_as is None:
        return None
    return _add_recorder(sim, system, record_as, sim_params)
