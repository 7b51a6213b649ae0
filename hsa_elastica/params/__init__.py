"""Validated parameter sets for HSA rods and robots, presets from the paper, YAML/TOML I/O.

All quantities are SI (m, kg, s, rad, Pa, N).  Every dataclass is frozen and validates itself in
``__post_init__``; an invalid value raises :class:`ParameterError` whose message names
``ClassName.field``, the offending value and the allowed range with its unit, e.g.::

    RodParams.youngs_modulus = -1.0 is invalid: must be a finite number >= 1000 and <= 1e+12 (Pa)

Presets
-------
* :func:`paper_robot_params` -- the four-rod robot of Section II-E of the paper
  (Stölzle et al., RoboSoft 2023).
* :func:`table1_rod_params` -- the closed FPU 50 characterization rods of Table I
  (Section II-C), for 4, 6, 8, 10 and 12 row tilings.

I/O
---
:func:`save_params` / :func:`load_params` read and write nested dictionaries as YAML
(``.yaml``/``.yml``, via PyYAML) or TOML (``.toml``: read with the standard library's ``tomllib``,
written by the small writer of :mod:`hsa_elastica.params.io`, no extra dependency).  TOML has no
null value, so an optional field that is ``None`` (for example ``bend_rigidity``) is written as the
string ``"none"``; ``"none"`` and ``null`` are both read back as ``None``.

Modules
-------
``base`` (ParameterError, field checks, ``MAX_*``/``MIN_*`` bounds), ``rod`` (RodParams), ``robot``
(PlatformParams, JointParams, SimulationParams, RobotParams), ``io`` (save/load), ``files``
(the atomic writer of every output file, output-path checks, the bounded YAML/TOML reader), ``presets``
(paper and Table I presets, named presets), ``integrators`` (the registry of the compiled
engines' time integrators: :func:`integrator` gives the record of a ``SimulationParams.integrator``
name).  Every public name is re-exported here.
"""

from __future__ import annotations

from hsa_elastica.params.base import ALPHA_C as ALPHA_C
from hsa_elastica.params.base import MAX_C_EPS as MAX_C_EPS
from hsa_elastica.params.base import MAX_DAMPING as MAX_DAMPING
from hsa_elastica.params.base import DEFAULT_IMPLICIT_DT as DEFAULT_IMPLICIT_DT
from hsa_elastica.params.base import HSADeprecationWarning as HSADeprecationWarning
from hsa_elastica.params.base import DEFAULT_MAX_HALVINGS as DEFAULT_MAX_HALVINGS
from hsa_elastica.params.base import MAX_HALVINGS as MAX_HALVINGS
from hsa_elastica.params.base import MAX_MODULUS as MAX_MODULUS
from hsa_elastica.params.base import MAX_MOTOR_ANGLE as MAX_MOTOR_ANGLE
from hsa_elastica.params.base import MAX_PLAY_WIDTH as MAX_PLAY_WIDTH
from hsa_elastica.params.base import check_motor_angles as check_motor_angles
from hsa_elastica.params.base import check_run_length as check_run_length
from hsa_elastica.params.base import MAX_STEPS as MAX_STEPS
from hsa_elastica.params.base import MAX_N_ELEMENTS as MAX_N_ELEMENTS
from hsa_elastica.params.base import MAX_RECORD_FPS as MAX_RECORD_FPS
from hsa_elastica.params.base import ParameterError
from hsa_elastica.params.base import MassWithoutGravityWarning as MassWithoutGravityWarning
from hsa_elastica.params.base import ContactStepWarning as ContactStepWarning
from hsa_elastica.params.base import mass_without_gravity as mass_without_gravity
from hsa_elastica.params.base import warn_mass_without_gravity as warn_mass_without_gravity
from hsa_elastica.params.base import _ParamsBase as _ParamsBase
from hsa_elastica.params.base import invalid_parameter as invalid_parameter
from hsa_elastica.params.base import is_finite_number as is_finite_number
from hsa_elastica.params.integrators import INTEGRATORS as INTEGRATORS
from hsa_elastica.params.integrators import INTEGRATOR_NAMES as INTEGRATOR_NAMES
from hsa_elastica.params.integrators import Integrator as Integrator
from hsa_elastica.params.integrators import integrator as integrator
from hsa_elastica.params.io import (
    load_params,
    load_params_per_key,
    save_params,
    save_params_per_key,
)
from hsa_elastica.params.presets import PRESETS, paper_robot_params, resolve_params, table1_rod_params
from hsa_elastica.params.robot import JointParams, PlatformParams, RobotParams, SimulationParams
from hsa_elastica.params.rod import RETARDATION_AXIAL as RETARDATION_AXIAL
from hsa_elastica.params.rod import RETARDATION_BEND as RETARDATION_BEND
from hsa_elastica.params.rod import RETARDATION_FIELDS as RETARDATION_FIELDS
from hsa_elastica.params.rod import TPU_LOSS_FACTOR as TPU_LOSS_FACTOR
from hsa_elastica.params.rod import RodParams
from hsa_elastica.params.environment import BoxObstacle as BoxObstacle
from hsa_elastica.params.environment import CapsuleObstacle as CapsuleObstacle
from hsa_elastica.params.environment import ContactParams as ContactParams
from hsa_elastica.params.environment import EnvironmentParams as EnvironmentParams
from hsa_elastica.params.environment import ObjectParams as ObjectParams
from hsa_elastica.params.environment import PlaneObstacle as PlaneObstacle
from hsa_elastica.params.environment import SphereObstacle as SphereObstacle

__all__ = [
    "ParameterError",
    "RodParams",
    "PlatformParams",
    "JointParams",
    "SimulationParams",
    "RobotParams",
    "paper_robot_params",
    "table1_rod_params",
    "save_params",
    "load_params",
    "load_params_per_key",
    "save_params_per_key",
    "resolve_params",
    "PRESETS",
    "INTEGRATORS",
    "INTEGRATOR_NAMES",
    "Integrator",
    "integrator",
    "ContactParams",
    "PlaneObstacle",
    "SphereObstacle",
    "CapsuleObstacle",
    "BoxObstacle",
    "EnvironmentParams",
    "ObjectParams",
]
