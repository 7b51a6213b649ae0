"""hsa-elastica: Handed Shearing Auxetic rods and robots as a PyElastica 1.0 plugin.

Stölzle et al., "Modelling Handed Shearing Auxetics", RoboSoft 2023.  The physics lives in
Elastica-native operators that work on the stock ``CosseratRod``:

* :class:`AuxeticCoupling` (forcing, Eq. 2-5) and :class:`TwistStiffnessLaw` (Eq. 5),
* :class:`MotorAngleBC`, :class:`FreeTwistBC`, :class:`DistalTwistLockBC` (constraints) and
  :class:`BaseTwistTorque` (forcing) of Section II-D,
* :class:`PlatformJoint` (connection, Eq. 6-7), :class:`MotorMountBC` / :class:`TwistMountBC`
  with :class:`MountReaction` (motors bolted to a moving body, driven by a motor angle or
  torque) and :class:`MotorMount` / :class:`TwistMount` (the same motors on a compliant
  mount, the joint of Eq. 6-7 at the rod's base),
* :class:`KelvinVoigtDamping` (damper: material damping of the TPU, docs/stability.md),
* :class:`RodRecorder` / :class:`RigidBodyRecorder` (callbacks → ``pandas.DataFrame``).

Builders (:func:`build_robot`, :func:`build_single_rod`, :func:`build_stack`), the fused fast path
(:func:`build_fast_robot`), steady states, motion primitives, rendering and the SPCS kinematics
(Sections III-IV) sit on top.  SI units throughout.  Rendering (pyvista) and kinematics (scipy)
are imported lazily on first use.  Module map: ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib
from typing import Any

from hsa_elastica import _gym

_gym.install()  # gym.make("HSARobot-v1") / ("HSAStack-v1") once gymnasium is imported (extra `rl`)

# name -> module, imported on first attribute access: ``import hsa_elastica`` (and so the
# ``hsa-elastica`` command before it parses its arguments) loads no numba/PyElastica code, so
# an interrupt or a bad argument is handled by the command line without a traceback
_LAZY: dict[str, str] = {
    # parameters
    **dict.fromkeys(
        ("JointParams", "ParameterError", "PlatformParams", "RobotParams", "RodParams",
         "SimulationParams", "load_params", "paper_robot_params", "save_params",
         "table1_rod_params", "resolve_params", "PRESETS"),
        "hsa_elastica.params",
    ),
    # operators
    **dict.fromkeys(
        ("BaseTwistTorque", "DistalTwistLockBC", "FreeTwistBC", "MotorAngleBC", "Ramp",
         "base_twist_angle"),
        "hsa_elastica.physics.actuation",
    ),
    "AuxeticCoupling": "hsa_elastica.physics.auxetic_coupling",
    "TwistStiffnessLaw": "hsa_elastica.physics.auxetic_coupling",
    "AxialCompressionLaw": "hsa_elastica.physics.compression_law",
    "AxialLawParams": "hsa_elastica.physics.compression_law",
    "PlatformJoint": "hsa_elastica.physics.joints",
    "MotorMount": "hsa_elastica.physics.mounts",
    "MotorMountBC": "hsa_elastica.physics.rigid_mounts",
    "TwistMountBC": "hsa_elastica.physics.rigid_mounts",
    "MountReaction": "hsa_elastica.physics.rigid_mounts",
    "TwistMount": "hsa_elastica.physics.mounts",
    "KelvinVoigtDamping": "hsa_elastica.physics.kelvin_voigt_damper",
    "QuadraticDrag": "hsa_elastica.physics.drag",
    **dict.fromkeys(
        ("RigidBodyRecorder", "RodRecorder", "combine", "directors", "node_positions"),
        "hsa_elastica.io.recording",
    ),
    # builders and time loop
    **dict.fromkeys(
        ("HSASimulator", "Robot", "SingleRod", "build_robot", "build_single_rod", "make_hsa_rod"),
        "hsa_elastica.robots.builders",
    ),
    "SimulationDiverged": "hsa_elastica.engines.timeloop",
    "SimulationFailed": "hsa_elastica.engines.timeloop",
    "run": "hsa_elastica.engines.timeloop",
    "max_stable_dt": "hsa_elastica.engines.timeloop",
    # motion primitives
    **dict.fromkeys(
        ("PRIMITIVES", "platform_to_angles", "primitive_angles"), "hsa_elastica.robots.primitives"
    ),
    # fused fast path
    "FastRobot": "hsa_elastica.robots.compiled",
    "build_fast_robot": "hsa_elastica.robots.builders",
    # multi-segment robots (stages stacked platform on platform)
    **dict.fromkeys(
        ("Stack", "StackStaticResult", "build_stack", "stack_primitive_angles"),
        "hsa_elastica.robots.stack",
    ),
    "StackSteadyStateResult": "hsa_elastica.robots.stack_steady_state",
    # steady states and run directories: steady_state is the entry point (the solvers behind
    # it are importable from their modules, see _REMOVED)
    "steady_state": "hsa_elastica.robots.steady_state_api",
    "SteadyState": "hsa_elastica.robots.steady_state_api",
    "SteadyStateResult": "hsa_elastica.robots.steady_state",
    "static_residual": "hsa_elastica.robots.statics_api",
    "RodSteadyState": "hsa_elastica.robots.rod_statics",
    "save_run": "hsa_elastica.io.rundir",
    "load_run": "hsa_elastica.io.rundir",
    "read_column_metadata": "hsa_elastica.io.columns",
    "load_steady_states": "hsa_elastica.io.columns",
    "RobotSensorRecorder": "hsa_elastica.io.sensors",
    # rendering (pyvista, off screen)
    "render_video": "hsa_elastica.io.render",
    "render_still": "hsa_elastica.io.render",
    # the interactive 3D view (plotly) and the time plots (matplotlib)
    "show": "hsa_elastica.io.view",
    "view_figure": "hsa_elastica.io.view",
    "write_view_html": "hsa_elastica.io.view",
    "run_plot": "hsa_elastica.io.plot",
    "write_run_plot": "hsa_elastica.io.plot",
    # SPCS kinematics (Eq. 8-16)
    "SPCSModel": "hsa_elastica.spcs",
    "IKResult": "hsa_elastica.spcs",
    "ErrorMetrics": "hsa_elastica.spcs",
    "KinematicsError": "hsa_elastica.spcs",
    "inverse_kinematics_lm": "hsa_elastica.spcs",
    "inverse_kinematics_gradient": "hsa_elastica.spcs",
    "error_metrics": "hsa_elastica.spcs",
    "rod_element_poses": "hsa_elastica.spcs",
    # steady-state datasets (Dask imported only when a dataset is built)
    "build_dataset": "hsa_elastica.experiments.datasets",
    "load_dataset": "hsa_elastica.experiments.datasets",
    # calibration against measured steady states (motion capture)
    "calibrate": "hsa_elastica.experiments.calibration",
    "CalibrationResult": "hsa_elastica.experiments.calibration",
    "CalibrationError": "hsa_elastica.experiments.calibration",
    "load_mocap_run": "hsa_elastica.experiments.calibration",
}

# submodules reachable as attributes, e.g. ``hsa_elastica.dataset.load(DIR)``
_LAZY_MODULES: dict[str, str] = {"dataset": "hsa_elastica.experiments.datasets"}

__all__ = ["__version__", *_LAZY]


#: old top-level steady-state entry points (removed; deprecated for one release before) -> the
#: module that still holds the solver: use ``steady_state(system_or_params, angles, method=...)``
_REMOVED: dict[str, str] = {
    "solve_steady_state": "hsa_elastica.robots.steady_state",
    "solve_static": "hsa_elastica.robots.statics_api",
    "solve_static_batch": "hsa_elastica.robots.statics_api",
    "solve_stack_steady_state": "hsa_elastica.robots.stack_steady_state",
    "solve_stack_static": "hsa_elastica.robots.stack",
    "solve_static_rod": "hsa_elastica.robots.rod_statics",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the installed distribution's (setup.cfg), read on first use
        from importlib.metadata import PackageNotFoundError, version

        try:
            globals()[name] = version("hsa-elastica")
        except PackageNotFoundError:  # a source tree on sys.path, never installed
            globals()[name] = "0+unknown"
        return globals()[name]
    if name in _REMOVED:
        raise AttributeError(
            f"hsa_elastica.{name} was removed from the top level: use "
            f"hsa_elastica.steady_state(system_or_params, motor_angles, method='static' | "
            f"'dynamic') (or import {name} from its module, {_REMOVED[name]})",
            name=name, obj=None,
        )
    if name in _LAZY_MODULES:
        value: Any = importlib.import_module(_LAZY_MODULES[name])
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hsa_elastica' has no attribute {name!r}")
    module, _, attr = module.partition(":")
    value = getattr(importlib.import_module(module), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))
