"""Real-robot geometry (rigid caps, marker point, hanging mount) and the calibration.

Physics references, none taken from the code under test:
* a rod with rigid caps elongates like its flexible part alone: ``L + C_eps * phi`` for the
  linear rest-length law (hsa_elastica/data/README.md), the caps add their lengths and nothing else;
* caps of length 0 reproduce the layout of the paper robot exactly (bases on z = 0, platform
  centre at ``L + thickness / 2``);
* a synthetic calibration (poses simulated from known parameters plus Gaussian noise) must find
  the known parameters within its reported uncertainty.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hsa_elastica.cli import main
from hsa_elastica.experiments.calibration import (
    MocapRun,
    POSITION_WEIGHT,
    calibrate,
    load_run,
    predict,
)
from hsa_elastica.params import (
    ParameterError,
    PlatformParams,
    RobotParams,
    RodParams,
    SimulationParams,
    load_params,
    paper_robot_params,
    resolve_params,
)
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.settling import SettleOptions
from hsa_elastica.robots.steady_state import solve_steady_state


def _small_robot(**rod_changes: float) -> RobotParams:
    """A coarse robot (8 elements, 0.2 s ramp) that settles in well under a second of wall
    time; caps 25 mm / 20 mm and a marker 11 mm above the platform centre."""
    rod = RodParams(
        n_elements=8, length=0.06, C_eps=0.01, bend_rigidity=0.03, twist_rigidity=0.014,
        cap_length_base=0.025, cap_length_top=0.02,
    ).replace(**rod_changes)
    return RobotParams(
        rod=rod,
        platform=PlatformParams(thickness=0.007, marker_offset=(0.0, 0.0, 0.011)),
        simulation=SimulationParams(ramp_time=0.2),
    )


def test_zero_caps_keep_the_paper_layout_bit_identical() -> None:
    p = paper_robot_params()
    explicit = p.replace(
        rod=p.rod.replace(cap_length_base=0.0, cap_length_top=0.0),
        platform=p.platform.replace(payload_mass=0.0, marker_offset=(0.0, 0.0, 0.0)),
    )
    for params in (p, explicit):
        robot = build_robot(params, [0.3, -0.3, 0.3, -0.3], record=False)
        for i, rod in enumerate(robot.rods):
            x, y, _ = params.rod_base(i)
            # exact: the builder must place the rods as before the caps existed
            assert rod.position_collection[2, 0] == 0.0
            assert (rod.position_collection[0, 0], rod.position_collection[1, 0]) == (x, y)
        assert robot.platform.position_collection[2, 0] == params.rod.length + 0.5 * params.platform.thickness
        np.testing.assert_array_equal(robot.attachment_points[:, 2], -0.5 * params.platform.thickness)
        assert float(robot.platform.mass[0]) == pytest.approx(params.platform.mass, rel=1e-12)
    # bit-identical trajectories: a difference shows from the first step on, so 0.05 s (1700
    # steps, the motors 5 % up their 1 s ramp) checks it as well as a longer run
    short = SettleOptions(max_time=0.05)
    a = solve_steady_state(p, [0.5, -0.5, 0.5, -0.5], record=False, settle=short)
    b = solve_steady_state(explicit, [0.5, -0.5, 0.5, -0.5], record=False, settle=short)
    np.testing.assert_array_equal(a.platform_position_m, b.platform_position_m)
    np.testing.assert_array_equal(a.rod_tip_positions_m, b.rod_tip_positions_m)


def test_caps_add_rigid_length_and_the_flexible_part_elongates_by_C_eps_phi() -> None:
    p = _small_robot()
    phi = 1.5
    res = solve_steady_state(p, [phi, -phi, phi, -phi], record=False)
    assert res.converged
    rod, plat = p.rod, p.platform
    # closed form: caps + flexible part (L + C_eps phi) + half the platform + marker offset.
    # Tolerance 0.3 mm: the joints' twist springs (k_tau = 20 N m/rad) let each rod tip turn by
    # about B_z phi / (L k_tau) = 0.017 rad, which costs C_eps * 0.017 = 0.2 mm of elongation.
    expected = rod.cap_length_base + rod.length + rod.C_eps * phi + rod.cap_length_top
    expected += 0.5 * plat.thickness + plat.marker_offset[2]
    assert res.platform_marker_position_m[2] == pytest.approx(expected, abs=3e-4)
    # the rods' flexible parts start at the cap top and end cap_length_top below the platform
    assert np.all(res.rod_tip_positions_m[:, 2] < res.platform_position_m[2] - rod.cap_length_top)
    np.testing.assert_allclose(
        res.platform_marker_position_m - res.platform_position_m, [0, 0, 0.011], atol=1e-6
    )


def test_caps_are_the_same_in_the_fused_and_the_reference_path() -> None:
    p = _small_robot()
    # the motors reach the bending pose in 0.02 s, so 0.04 s of the reference path (PyElastica's
    # operators in Python, the slow part) compare the two paths with the caps off-axis at full
    # angles, as the 0.1 s with the 0.2 s ramp did, at 40 % of the steps
    p = p.replace(simulation=p.simulation.replace(ramp_time=0.02))
    angles = [1.2, -0.3, 0.2, -1.0]  # a bending pose: exercises joints and caps off-axis
    kw = dict(record=False, settle=SettleOptions(max_time=0.04), stop_when_settled=False)
    fast = solve_steady_state(p, angles, **kw)  # type: ignore[arg-type]
    ref = solve_steady_state(p, angles, fast=False, **kw)  # type: ignore[arg-type]
    # same trajectory to round-off (the fused loop is the operators' arithmetic in one kernel)
    np.testing.assert_allclose(fast.platform_position_m, ref.platform_position_m, rtol=0, atol=1e-9)


def test_caps_and_marker_in_the_static_solver_match_dynamic_relaxation() -> None:
    from hsa_elastica.robots.statics_api import solve_static

    p = _small_robot()
    p = p.replace(simulation=p.simulation.replace(gravity=(0.0, -0.5, 9.81)))  # tilted mount
    angles = [1.2, -0.3, 0.2, -1.0]
    dyn = solve_steady_state(p, angles, record=False)
    sta = solve_static(p, angles)
    assert dyn.converged and sta.method == "static"
    # both are the same equilibrium; dynamic relaxation stops at node speeds < 0.1 mm/s with
    # damping 50 1/s, i.e. a few micrometres short of it: 20 um
    np.testing.assert_allclose(sta.platform_marker_position_m, dyn.platform_marker_position_m, atol=2e-5)
    np.testing.assert_allclose(sta.rod_tip_positions_m, dyn.rod_tip_positions_m, atol=2e-5)


def test_hanging_mount_stretches_along_plus_z() -> None:
    p = _small_robot()
    hang = p.replace(
        simulation=p.simulation.replace(gravity=(0.0, 0.0, 9.81)),
        platform=p.platform.replace(payload_mass=1.0),
    )
    a = solve_steady_state(p, [0.0] * 4, record=False)
    b = solve_steady_state(hang, [0.0] * 4, record=False)
    # 1 kg + platform + rods hanging on four rods of axial stiffness E A / L each: the platform
    # sinks by about m g L / (4 E A) (> 0, along +z); within 30 % (rod weight, shear, joints)
    m = hang.platform.total_mass + 2.0 * hang.rod.mass  # half of each rod's weight reaches the tip
    expected = m * 9.81 * p.rod.length / (4.0 * p.rod.axial_stiffness)
    dz = b.platform_position_m[2] - a.platform_position_m[2]
    assert dz == pytest.approx(expected, rel=0.3)


# --------------------------------------------------------------------------------------------
# calibration
# --------------------------------------------------------------------------------------------
def test_synthetic_calibration_recovers_known_parameters() -> None:
    truth = _small_robot(C_eps=0.0105, cap_length_top=0.018)
    start = _small_robot(C_eps=0.009, cap_length_top=0.02)
    angles = np.array([[0.4, -0.4, 0.4, -0.4], [1.6, -1.6, 1.6, -1.6], [1.5, -0.2, 0.3, -1.2]])
    exact = MocapRun("synthetic", angles, np.zeros((3, 3)), np.tile([0, 0, 0, 1.0], (3, 1)))
    pos, rot = predict(truth, exact)
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(7)
    noisy_pos = pos + rng.normal(0.0, 0.2 * POSITION_WEIGHT, pos.shape)  # 0.2 mm noise
    run = MocapRun("synthetic", angles, noisy_pos, Rotation.from_matrix(rot).as_quat())
    res = calibrate(start, [run], ["rod.C_eps", "rod.cap_length_top"], diff_step=1e-3)
    for name, true in (("rod.C_eps", 0.0105), ("rod.cap_length_top", 0.018)):
        i = res.names.index(name)
        # within 3 reported standard deviations (a 3-sigma test fails by chance 0.3 % of the
        # time for a fixed seed it either always passes or always fails)
        assert abs(res.values[i] - true) < 3.0 * res.std[i], (name, res.values[i], res.std[i])
        assert res.std[i] > 0.0
    # the fitted model explains the data to the noise level (0.2 mm per component)
    assert res.rms_mm_deg["synthetic"][0] < 1.0


def test_chord_step_jacobian_equals_differences_of_full_solves() -> None:
    """The calibration's default Jacobian (perturbed poses by chord steps from the current
    ones) against scipy-style forward differences of full static solves: both are first-order
    differences of the same converged equilibria (tolerance 1e-8 N), so the columns agree to
    well below the step's own truncation error (1e-3 relative here, measured ~1e-7)."""
    from hsa_elastica.experiments.calibration import _scale, _StaticModel, get_value

    p = _small_robot()
    angles = np.array([[0.4, -0.4, 0.4, -0.4], [1.5, -0.2, 0.3, -1.2], [2.0, -0.5, 1.0, -1.0]])
    run = MocapRun("r", angles, np.zeros((3, 3)), np.tile([0, 0, 0, 1.0], (3, 1)))
    names = ["rod.C_eps", "rod.bend_rigidity", "platform.marker_offset.x"]
    x0 = np.array([get_value(p, n) for n in names])
    scale = np.array([_scale(n, float(v), (-0.01, 0.01)) for n, v in zip(names, x0)])
    model = _StaticModel(p, [run], names, x0, scale, None, 1e-3, False)
    u = np.ones(len(names))
    fast = model.jac(u)
    r0 = model.fun(u)
    for i in range(len(names)):
        ui = u.copy()
        ui[i] += 1e-3
        full = (model.fun(ui) - r0) / 1e-3
        model.fun(u)
        assert np.linalg.norm(fast[:, i] - full) <= 1e-3 * np.linalg.norm(full), names[i]
        assert np.linalg.norm(full) > 0.0


def test_gravity_branch_rule_takes_the_side_of_the_lateral_load() -> None:
    """A robot twisted by one handed pair (3 rad) buckles sideways (here along y) onto one of
    two mirror-image poses; with gravity tilted toward -y or +y the ``"gravity"`` rule keeps
    the pose displaced toward that side (no dynamic relaxation is run).  Buckled means a
    lateral displacement > 5 mm: the straight robot's response to the same lateral load is
    about 0.01 mm (measured at 1 rad)."""
    from hsa_elastica.robots.statics_api import solve_static

    p = _small_robot()
    for gy in (-0.5, 0.5):
        tilted = p.replace(simulation=p.simulation.replace(gravity=(0.0, gy, 9.8)))
        res = solve_static(tilted, [3.0, 0.0, 3.0, 0.0], mirror_branch="gravity")
        assert res.method == "static" and res.converged
        lateral = float(res.platform_position_m[1])
        assert abs(lateral) > 5e-3 and lateral * gy > 0.0, (gy, res.platform_position_m)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


_HEADER = ("motor_angle_rad_0,motor_angle_rad_1,motor_angle_rad_2,motor_angle_rad_3,"
           "platform_x_m,platform_y_m,platform_z_m,platform_qx,platform_qy,platform_qz,platform_qw\n")


@pytest.mark.parametrize(
    "body, needle",
    [
        ("motor_angle_rad_0,platform_x_m\n0,0\n", "missing column"),
        (_HEADER + "0,0,0,0,0,0,0.12,0,0,0,1\n0,0,,0,0,0,0.12,0,0,0,1\n", "non-finite"),
        (_HEADER, "no rows"),
    ],
)
def test_bad_csv_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       body: str, needle: str) -> None:
    data = _write(tmp_path, "run.csv", body)
    code = main(["calibrate", "--data", str(data), "--params", "paper_robot", "--free", "rod.C_eps",
                 "--out", str(tmp_path / "f.yaml")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and needle in err


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--free", "rod.C_epz"], "unknown parameter 'rod.C_epz'"),
        (["--free", "rod.handedness_x"], "unknown parameter"),
        (["--free", "rod.length", "--bounds", "rod.length", "-0.01", "0.2"], "makes the robot invalid"),
        (["--free", "rod.C_eps", "--bounds", "rod.length", "0.01", "0.2"], "not free"),
    ],
)
def test_bad_free_names_and_bounds_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          extra: list[str], needle: str) -> None:
    code = main(["calibrate", "--data", "elongation", "--params", "paper_robot",
                 "--out", str(tmp_path / "f.yaml"), *extra])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and needle in err, err


def test_shipped_runs_load_and_fitted_files_resolve() -> None:
    from hsa_elastica import data

    run = load_run(data.path("elongation"))
    assert len(run) == 100 and run.motor_angles.shape == (100, 4)
    assert 0.11 < run.position[0, 2] < 0.13  # README: rest marker height 119.6 mm
    fitted = sorted(Path(data.path("good2022_closed_fpu50.csv")).parent.glob("fitted_params*.yaml"))
    assert len(fitted) == 5  # shipped as package data (linear, compression, nonlinear x2, shared)
    for f in fitted:
        rod = load_params(f"{f}#10", RodParams)
        assert rod.length == pytest.approx(0.112)  # Table I: 10 rows, 112 mm
        # as a robot: four 19 mm rods do not fit the default 24 mm circle (>= 26.9 mm), and
        # a robot has no compression law; each is named, never read in part
        with pytest.raises(ParameterError, match="axial_law" if "compression" in f.name else "circle_radius"):
            resolve_params(f"{f}#10")
    assert math.isclose(resolve_params("paper_robot").rod.length, 0.1)


def test_preset_by_name_dumps_and_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fpu.yaml"
    assert main(["params", "--preset", "fpu_robot_2022", "--dump", str(out)]) == 0
    p = load_params(out)
    assert p == resolve_params("fpu_robot_2022")
    # the README's facts, within a factor 2 (physically plausible calibration)
    assert 0.0125 <= p.rod.cap_length_base <= 0.05 and 0.007 <= p.rod.cap_length_top <= 0.04
    assert 0.03 <= p.rod.length <= 0.12 and 0.005 <= p.rod.C_eps <= 0.02
    assert p.simulation.gravity is not None and p.simulation.gravity[2] > 9.0  # hanging mount
    assert main(["params", "--preset", "nope", "--dump", str(out)]) == 2
    assert "unknown" in capsys.readouterr().err


@pytest.mark.parametrize("flag, expected", [([], "dynamic"), (["--mirror-branch", "gravity"], "gravity"),
                                            (["--mirror-branch", "+y"], "+y")])
def test_mirror_branch_flag_reaches_the_calibration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    flag: list[str], expected: str,
) -> None:
    from hsa_elastica.experiments import calibration as module

    seen = {}

    def stub(*args: object, **kwargs: object) -> None:
        seen.update(kwargs)
        raise module.CalibrationError("stopped by the test")

    monkeypatch.setattr(module, "calibrate", stub)
    code = main(["calibrate", "--data", "elongation", "--params", "paper_robot", "--free",
                 "rod.C_eps", "--out", str(tmp_path / "f.yaml"), *flag])
    assert code == 2 and "stopped by the test" in capsys.readouterr().err
    assert seen["mirror_branch"] == expected


def test_bad_mirror_branch_exits_2_naming_the_flag(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["calibrate", "--data", "elongation", "--params", "paper_robot", "--free",
                 "rod.C_eps", "--out", str(tmp_path / "f.yaml"), "--mirror-branch", "sideways"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--mirror-branch" in err and "'gravity'" in err and "'+y'" in err
    assert not (tmp_path / "f.yaml").exists()


def test_json_report_is_valid_json_with_unbounded_and_undetermined_values() -> None:
    # JSON (RFC 8259) has no Infinity/NaN: an unbounded side of a parameter's bounds and an
    # undetermined standard deviation are written as null, and the CLI refuses to emit either
    import json

    from hsa_elastica.experiments.calibration import CalibrationResult
    from hsa_elastica.params import RobotParams

    result = CalibrationResult(
        params=RobotParams(), names=["rod.C_eps", "platform.marker_offset.x"],
        start=np.array([0.01, 0.0]), values=np.array([0.0101, 0.003]),
        std=np.array([1e-5, math.nan]), correlation=np.array([[1.0, math.nan], [math.nan, 1.0]]),
        rms_start_mm_deg={"run": (5.0, 1.0)}, rms_mm_deg={"run": (1.0, 0.5)}, cost=0.1, n_residuals=10,
        n_evaluations=5, wall_time_s=1.0, success=True, message="ok",
        bounds=[(0.0, 0.1), (-math.inf, math.inf)],
    )
    text = json.dumps(result.to_json_dict(), allow_nan=False)
    back = json.loads(text)
    assert back["parameters"]["platform.marker_offset.x"]["bounds"] == [None, None]
    assert back["parameters"]["platform.marker_offset.x"]["std"] is None
    assert back["parameters"]["rod.C_eps"]["bounds"] == [0.0, 0.1]
    assert back["correlation"][0] == [1.0, None]
