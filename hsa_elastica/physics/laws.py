"""The registry of the laws' consistent tangents.

Each law the static solver's Jacobian assembles has one :class:`LawTangent` in :data:`LAWS`:
its name, its force kernel, its tangent kernel (None: the law's part of the Jacobian is taken
by coloured finite differences, :func:`tangent_source` says ``"finite differences"``) and a
function building a random valid configuration of it (:class:`LawCase`), on which
``tests/test_law_tangents.py`` checks every registered tangent against central differences of
the force kernel.  A configuration's unknowns are the static solver's: positions [m] added,
rotations [rad] applied to a director ``Q`` as ``Q <- exp(-[w]) Q`` with the kinematic-update
kernel at dt = 1 (:func:`turn`, what ``statics_kernels.perturb_colour`` does); its forces are
the law's generalised forces on those unknowns (lab forces, couples in the local frame).

A law whose forces depend on the velocities of its unknowns through a tangent the implicit
integrator uses (the joints' and mounts' dampers) registers its derivative wrt those
velocities as well (``velocity_kernel``; the case's ``velocity_forces`` / ``velocity_tangent``,
checked against central differences in the velocities); None: no such tangent (the rods'
elastic forces do not depend on the velocities; the obstacle contact's velocity derivative is
the contact kernel's own; the rod contact's, the free objects' and the rolling couple's are
checked).  The velocity-proportional forces the implicit integrator adds (the linear, body and
Kelvin-Voigt dampers, the gyroscopic couple: :mod:`hsa_elastica.physics.rate_dampers`)
register their velocity tangents alone (``tangent_kernel`` None, :func:`tangent_source`
``"velocities only"``): the Newton matrix leaves their pose dependence out.

The laws declared in their own modules (:mod:`hsa_elastica.physics.compiled_laws`) join
this registry through :func:`all_laws`: their node-local tangents are checked the same way,
in the positions and in the velocities.

The configurations live in :mod:`hsa_elastica.physics.law_cases` and (the free objects'
contact rows, as the engines compile them) :mod:`hsa_elastica.physics.object_contact_cases`.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable, NamedTuple

import numpy as np

from hsa_elastica.physics.auxetic_law import auxetic_update, reciprocal_twist_couple
from hsa_elastica.physics.auxetic_tangent import auxetic_tangent_band
from hsa_elastica.physics.contact_laws import contact_forces, contact_tangent
from hsa_elastica.physics.joint_tangent import (
    joint_force_tangent,
    joint_force_velocity_tangent,
    joint_torque_tangent,
    joint_torque_velocity_tangent,
)
from hsa_elastica.physics.joints import joint_force_kernel, joint_torque_kernel
from hsa_elastica.physics.compiled_laws import LAW_REGISTRY, CompiledLaw
from hsa_elastica.physics.law_cases import (
    LawCase,
    auxetic_case,
    compression_case,
    contact_case,
    joint_case,
    motor_mount_case,
    node_law_case,
    rod_case,
    rod_contact_case,
    turn,
    twist_mount_case,
)
from hsa_elastica.physics.compression_law import compression_law_forces, compression_tangent_band
from hsa_elastica.physics.damper_cases import (
    body_damper_case,
    gyroscopic_case,
    kelvin_voigt_case,
    rod_damper_case,
)
from hsa_elastica.physics.material_damping import kelvin_voigt_forces, kelvin_voigt_tangent
from hsa_elastica.physics.rate_dampers import (
    damper_forces,
    damper_tangent,
    gyroscopic_couples,
    gyroscopic_tangent,
)
from hsa_elastica.physics.mounts import (
    free_twist_rest_orientation,
    mount_torque_tangent,
    twist_mount_torque_tangent,
)
from hsa_elastica.physics.object_contact_cases import (
    body_object_contact_case,
    cylinder_contact_case,
    object_contact_case,
    rolling_couple_case,
)
from hsa_elastica.physics.object_contact_laws import (
    object_contact_forces,
    rolling_couple,
    rolling_couple_tangent,
)
from hsa_elastica.physics.point_tangent import contact_point_block
from hsa_elastica.physics.rod_contact_laws import segment_pair_forces, segment_pair_tangent
from hsa_elastica.physics.rod_kernels import internal_forces_inplace
from hsa_elastica.physics.rod_tangent import rod_tangent_band

__all__ = ["LawCase", "LawTangent", "LAWS", "all_laws", "compiled_law_tangent", "law",
           "tangent_source", "turn"]


class LawTangent(NamedTuple):
    """A registered law: ``name``, its force kernel, its tangent kernel (None: finite
    differences), ``case(rng)`` -> :class:`LawCase`, a random valid configuration (None
    for a law without tangent: nothing to check) and its velocity tangent kernel (module
    doc; None: none)."""

    name: str
    force_kernel: Callable[..., Any]
    tangent_kernel: Callable[..., Any] | None
    case: Callable[[np.random.Generator], LawCase] | None
    velocity_kernel: Callable[..., Any] | None = None


#: every law of the static Jacobian, with the kernels that evaluate it and its tangent
LAWS: tuple[LawTangent, ...] = (
    LawTangent("rod", internal_forces_inplace, rod_tangent_band, rod_case),
    LawTangent("auxetic coupling", auxetic_update, auxetic_tangent_band, auxetic_case),
    LawTangent("contact", contact_forces, contact_tangent, contact_case),
    # rod nodes on a free object (a sphere; a Cylinder as a capsule turning with it) and a
    # free sphere's rolling resistance: the engines' point blocks, positions and velocities
    LawTangent("object contact", object_contact_forces, contact_point_block,
               object_contact_case, contact_point_block),
    LawTangent("cylinder contact", object_contact_forces, contact_point_block,
               cylinder_contact_case, contact_point_block),
    # a rigid body's points (the platform's rims) on a free sphere / Cylinder: two bodies
    LawTangent("body object contact", object_contact_forces, contact_point_block,
               body_object_contact_case, contact_point_block),
    LawTangent("body cylinder contact", object_contact_forces, contact_point_block,
               lambda rng: body_object_contact_case(rng, capsule=True), contact_point_block),
    LawTangent("rolling couple", rolling_couple, rolling_couple_tangent, rolling_couple_case,
               rolling_couple_tangent),
    # rod against rod: one element pair, the closest points' motion included; its velocity
    # tangent comes from the same kernel
    LawTangent("rod contact", segment_pair_forces, segment_pair_tangent, rod_contact_case,
               segment_pair_tangent),
    LawTangent("joint force", joint_force_kernel, joint_force_tangent,
               lambda rng: joint_case(rng, force=True), joint_force_velocity_tangent),
    LawTangent("joint couple", joint_torque_kernel, joint_torque_tangent,
               lambda rng: joint_case(rng, force=False), joint_torque_velocity_tangent),
    # the mounts' velocity dependence is the joint couple's damper (mount_torque_tangent)
    LawTangent("motor mount", joint_torque_kernel, mount_torque_tangent, motor_mount_case,
               joint_torque_velocity_tangent),
    LawTangent("twist mount", free_twist_rest_orientation, twist_mount_torque_tangent,
               twist_mount_case, joint_torque_velocity_tangent),
    # the velocity-proportional forces of the implicit integrator: their velocity tangents
    # only (the Newton matrix leaves their pose dependence out)
    LawTangent("Kelvin-Voigt damping", kelvin_voigt_forces, None, kelvin_voigt_case,
               kelvin_voigt_tangent),
    LawTangent("linear damper", damper_forces, None, rod_damper_case, damper_tangent),
    LawTangent("body damper", damper_forces, None, body_damper_case, damper_tangent),
    LawTangent("gyroscopic couple", gyroscopic_couples, None, gyroscopic_case,
               gyroscopic_tangent),
    LawTangent("compression law", compression_law_forces, compression_tangent_band,
               compression_case),
    # without a tangent: the static solver differences the whole residual of a model using it
    LawTangent("passive coupling", reciprocal_twist_couple, None, None),
)


def compiled_law_tangent(entry: CompiledLaw) -> LawTangent:
    """The registry entry of a law declared in its own module
    (:mod:`hsa_elastica.physics.compiled_laws`): its kernel, its node-local tangent (for the
    positions and the velocities alike) and its configuration as a :class:`LawCase`
    (:func:`~hsa_elastica.physics.law_cases.node_law_case`)."""
    if entry.tangent is None or entry.case is None:
        return LawTangent(entry.name, entry.kernel, None, None)
    return LawTangent(entry.name, entry.kernel, entry.tangent,
                      lambda rng: node_law_case(entry, rng), entry.tangent)


def all_laws() -> tuple[LawTangent, ...]:
    """:data:`LAWS` and every law registered by a module of :mod:`hsa_elastica.physics`
    (each module imported first, so that its ``register_law`` call has run)."""
    import hsa_elastica.physics as physics

    for info in pkgutil.iter_modules(physics.__path__):
        importlib.import_module(f"{physics.__name__}.{info.name}")
    return LAWS + tuple(compiled_law_tangent(e) for e in LAW_REGISTRY.values())


def law(name: str) -> LawTangent:
    """The registered law ``name`` (KeyError naming the registered ones otherwise)."""
    for entry in all_laws():
        if entry.name == name:
            return entry
    raise KeyError(f"no law {name!r}; registered: {', '.join(e.name for e in all_laws())}")


def tangent_source(entry: LawTangent) -> str:
    """``"exact"`` for a law with a tangent kernel, ``"velocities only"`` for one with a
    velocity tangent alone (module doc), ``"finite differences"`` without either."""
    if entry.tangent_kernel is not None:
        return "exact"
    return "velocities only" if entry.velocity_kernel is not None else "finite differences"
