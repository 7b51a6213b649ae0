"""Old flat module paths (hsa-elastica 0.1) still import, with a DeprecationWarning.

The names below are the ``__all__`` lists of the 0.1 modules (the old public contract, copied
from the release, not from the shim); each must still resolve through the old path to the
object defined in its new module.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import hsa_elastica
from hsa_elastica import _legacy

ROOT = Path(__file__).resolve().parents[1]

#: old module -> (new home, __all__ of the old module)
OLD_API: dict[str, tuple[str, tuple[str, ...]]] = {
    "actuation": ("physics.actuation", ("Ramp", "MotorAngleBC", "FreeTwistBC", "BaseTwistTorque",
                  "DistalTwistLockBC", "base_twist_angle", "twist_about_axis", "remove_twist",
                  "rotate_about_own_axis")),
    "auxetics": ("physics.auxetic_coupling", ("ALPHA_C", "AuxeticCoupling", "TwistStiffnessLaw",
                 "handed_twist_strain", "average_to_elements", "clip_strain", "auxetic_rest_lengths",
                 "rest_strain", "twist_dependent_stiffness", "low_pass", "reciprocal_twist_couple")),
    "axial_law": ("physics.compression_law", ("AxialLawParams", "AxialCompressionLaw",
                  "compression_ratio_kernel", "compression_correction_forces", "twist_range")),
    "joints": ("physics.joints", ("PlatformJoint", "resolve_joint_indices", "joint_force_kernel",
               "joint_torque_kernel", "rotation_matrix_to_quaternion", "rotation_vector_from_matrix")),
    "fast": ("engines.fused", ("FastPathUnsupported", "FastRobot", "build_fast_robot", "advance")),
    "simulation": ("engines.timeloop", ("SimulationDiverged", "run", "find_runaway", "DEFAULT_MAX_SPEED",
                   "DEFAULT_MAX_STRETCH")),
    "steady_state": ("robots.steady_state", ("SteadyStateResult", "solve_steady_state", "robot_state",
                     "JSON_KEYS")),
    "robot": ("robots.builders", ("HSASimulator", "make_hsa_rod", "build_single_rod", "build_robot",
              "SingleRod", "Robot", "OperatorRef")),
    "primitives": ("robots.primitives", ("PRIMITIVES", "PlatformCommand", "primitive_angles",
                   "primitive_commands", "platform_to_angles", "platform_to_commands", "rod_layout",
                   "commands_to_angles")),
    "kinematics": ("spcs", ("REST_STRAIN", "STRAIN_NAMES", "ErrorMetrics", "IKResult", "KinematicsError",
                   "SPCSModel", "error_metrics", "euler_xyz", "inverse_kinematics_gradient",
                   "inverse_kinematics_lm", "pose_vectors", "rod_element_poses", "rotation_to_quaternion",
                   "se3_exp", "se3_left_jacobian")),
    "recording": ("io.recording", ("RigidBodyRecorder", "RodRecorder", "combine", "directors",
                  "node_positions", "rod_strains")),
    "rundir": ("io.rundir", ("RunData", "save_run", "load_run", "to_jsonable", "DIAGNOSTICS", "PARAMS",
               "SUMMARY")),
    "render": ("io.render", ("render_video", "render_still", "RobotScene", "select_frames")),
    "characterization": ("experiments.characterization", ("CHARACTERISTICS", "DATA_UNITS", "DATA_COLUMNS",
                         "NotSettledError", "SettleOptions", "default_data_path",
                         "load_characterization_data", "to_data_unit", "closed_form",
                         "settling_sim_params", "holding_torque", "twist_angle_under_torque",
                         "minimum_energy_length", "spring_constant", "spring_constant_details",
                         "blocked_force", "simulate_point")),
}


def fresh_import(name: str) -> tuple[object, list[warnings.WarningMessage]]:
    """Import ``name`` as if for the first time; return the module and the warnings raised."""
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    if child in vars(sys.modules[parent]):
        delattr(sys.modules[parent], child)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(name)
    return module, [w for w in caught if issubclass(w.category, DeprecationWarning)]


def test_the_map_covers_exactly_the_old_modules() -> None:
    old = {f"hsa_elastica.{m}" for m in OLD_API}
    assert old <= set(_legacy.LEGACY)
    # no legacy name shadows a module that exists in the tree
    for name in _legacy.LEGACY:
        rel = Path(*name.split("."))
        assert not (ROOT / rel.with_suffix(".py")).exists() and not (ROOT / rel / "__init__.py").exists(), name


@pytest.mark.parametrize("old", sorted(OLD_API))
def test_old_path_imports_with_a_deprecation_warning(old: str) -> None:
    new, names = OLD_API[old]
    module, caught = fresh_import(f"hsa_elastica.{old}")
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert f"hsa_elastica.{old} is deprecated" in message and f"hsa_elastica.{new}" in message
    # the warning points at the importing code, not at importlib or the shim
    assert caught[0].filename == __file__
    new_module = importlib.import_module(f"hsa_elastica.{new}")
    for name in names:
        value = getattr(module, name)
        if hasattr(new_module, name):
            assert value is getattr(new_module, name), name
        else:  # names of a split module (auxetics, fast) live in a second new module
            assert getattr(value, "__module__", "").startswith("hsa_elastica."), name
            assert not getattr(value, "__module__", "").endswith(f".{old}"), name


def test_from_import_and_attribute_access() -> None:
    sys.modules.pop("hsa_elastica.fast", None)
    vars(hsa_elastica).pop("fast", None)
    with pytest.warns(DeprecationWarning, match="hsa_elastica.fast is deprecated"):
        from hsa_elastica.fast import build_fast_robot
    from hsa_elastica.robots.builders import build_fast_robot as new

    assert build_fast_robot is new
    sys.modules.pop("hsa_elastica.robot", None)
    vars(hsa_elastica).pop("robot", None)
    with pytest.warns(DeprecationWarning, match="hsa_elastica.robot is deprecated"):
        builders = hsa_elastica.robot  # type: ignore[attr-defined]
    assert builders is importlib.import_module("hsa_elastica.robots.builders")


def test_unknown_names_still_fail() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("hsa_elastica.no_such_module")
    with pytest.raises(AttributeError):
        hsa_elastica.no_such_attribute  # type: ignore[attr-defined]  # noqa: B018


def test_new_paths_import_without_warnings() -> None:
    modules = sorted({f"hsa_elastica.{new}" for new, _ in OLD_API.values()})
    code = "import importlib\nfor m in %r:\n    importlib.import_module(m)\n" % (modules,)
    proc = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:hsa_elastica", "-c", code],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
