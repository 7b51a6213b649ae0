"""Per-rod imperfections of a robot (RobotParams.motor_offset, rod_C_eps_deviation,
rod_bend_deviation): defaults that change nothing, the motor offset's meaning (the printed
rod's untwisted state sits at motor angle -offset), mirror symmetry, validation, files and
the calibration's dotted names.

Reference numbers do not come from the code under test: the straight assembly's platform
height is the sum of the printed lengths, a mirror image of a robot is worked out by hand from
its layout (rods at 45 + 90 i deg, handedness R, L, R, L: the mirror x -> -x maps rod 0 <-> 1
and 2 <-> 3, swaps handedness and turns a motor's sense).  Static poses agree to 1e-9 m /
1e-9 (rotation entries): the static solver's residual tolerance puts the platform within
about 1e-12 m of the exact equilibrium, 1e-9 leaves room for different starting states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hsa_elastica.experiments.calibration import CalibrationError
from hsa_elastica.experiments.parameter_names import (
    check_names,
    fittable_names,
    get_value,
    with_values,
)
from hsa_elastica.params import ParameterError, RobotParams, load_params, paper_robot_params, save_params
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.statics_api import solve_static_batch
from hsa_elastica.robots.symmetry import robot_symmetries
from hsa_elastica.validation.real_robot_imperfections import onset

P = paper_robot_params()  # no gravity: the mirror and the half turn are symmetries
TOL = 1e-9  # [m] and [-]: see the module docstring


def _solve(params: RobotParams, angles: list[list[float]]) -> list:  # type: ignore[type-arg]
    res = list(solve_static_batch(params, np.asarray(angles, dtype=np.float64), order="given"))
    assert all(r.converged and r.method == "static" for r in res)
    return res


def _pose(r) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    from hsa_elastica.io.render import quaternion_to_matrix

    return np.asarray(r.platform_position_m), quaternion_to_matrix(np.asarray(r.platform_quaternion_xyzw))


def test_defaults_are_zero_and_explicit_zeros_build_the_same_robot_bit_for_bit() -> None:
    assert P.motor_offset == P.rod_C_eps_deviation == P.rod_bend_deviation == ()
    assert P.is_symmetric()
    zeros = P.replace(motor_offset=(0.0,) * 4, rod_C_eps_deviation=(0, 0, 0, 0),
                      rod_bend_deviation=[0.0] * 4)
    assert zeros.is_symmetric() and zeros.rod_params(0) == P.rod_params(0)
    a = build_robot(P, [0.3, -0.2, 0.1, 0.0], record=False)
    b = build_robot(zeros, [0.3, -0.2, 0.1, 0.0], record=False)
    for ra, rb in zip(a.rods, b.rods):
        assert np.array_equal(ra.director_collection, rb.director_collection)
        assert np.array_equal(ra.position_collection, rb.position_collection)
    pa, pb = _solve(P, [[0.6, -0.3, 0.2, 0.1]]), _solve(zeros, [[0.6, -0.3, 0.2, 0.1]])
    assert np.array_equal(pa[0].platform_position_m, pb[0].platform_position_m)


def test_motor_offset_twists_the_built_rod_from_offset_at_the_base_to_zero_at_the_tip() -> None:
    d = 0.1
    robot = build_robot(P.replace(motor_offset=(d, 0.0, 0.0, 0.0)), [0.0] * 4, record=False,
                        finalize=False)
    q = robot.rods[0].director_collection
    n = q.shape[2]
    ref = build_robot(P, [0.0] * 4, record=False, finalize=False).rods[0].director_collection
    for k in (0, n // 2, n - 1):  # angle of d1 about the (unchanged) axis d3
        turned = math.atan2(float(q[0, :, k] @ ref[1, :, k]), float(q[0, :, k] @ ref[0, :, k]))
        assert turned == pytest.approx(d * (1.0 - k / (n - 1)), abs=1e-12)
        assert np.allclose(q[2, :, k], ref[2, :, k], atol=1e-15)


def test_common_offset_equals_commanding_the_offset() -> None:
    d = 0.05
    angles = np.array([[0.3, -0.3, 0.3, -0.3], [1.0, -0.5, 0.2, 0.0]])
    a = _solve(P.replace(motor_offset=(d,) * 4), angles.tolist())
    b = _solve(P, (angles + d).tolist())
    for x, y in zip(a, b):
        (pa, ra), (pb, rb) = _pose(x), _pose(y)
        assert np.allclose(pa, pb, atol=TOL, rtol=0.0)
        assert np.allclose(ra, rb, atol=TOL, rtol=0.0)


def test_commanding_minus_the_offsets_gives_the_straight_assembly() -> None:
    offsets = (0.05, -0.03, 0.02, 0.04)
    res = _solve(P.replace(motor_offset=offsets), [[-d for d in offsets]])[0]
    pos, rot = _pose(res)
    rod, plate = P.rod, P.platform  # printed lengths, no twist: no elongation, no load
    height = rod.cap_length_base + rod.length + rod.cap_length_top + 0.5 * plate.thickness
    assert np.allclose(pos, [0.0, 0.0, height], atol=TOL, rtol=0.0)
    assert np.allclose(rot, np.eye(3), atol=TOL, rtol=0.0)


def _mirrored(values: tuple[float, ...], sign: float) -> tuple[float, ...]:
    return tuple(sign * values[j] for j in (1, 0, 3, 2))  # rods 0 <-> 1, 2 <-> 3


@pytest.mark.parametrize("field", ["motor_offset", "rod_C_eps_deviation", "rod_bend_deviation"])
def test_mirror_image_imperfections_give_mirror_image_poses(field: str) -> None:
    values = (0.06, -0.02, 0.03, 0.01)
    sign = -1.0 if field == "motor_offset" else 1.0  # a mirror turns a motor's sense
    angles = [0.8, -0.4, 0.5, -0.1]
    a = _solve(P.replace(**{field: values}), [angles])[0]
    b = _solve(P.replace(**{field: _mirrored(values, sign)}), [list(_mirrored(tuple(angles), -1.0))])[0]
    (pa, ra), (pb, rb) = _pose(a), _pose(b)
    m = np.diag([-1.0, 1.0, 1.0])  # the mirror x -> -x
    assert abs(pa[0]) > 1e-5  # the pose is not its own image: the test can fail
    assert np.allclose(pb, m @ pa, atol=TOL, rtol=0.0)
    assert np.allclose(rb, m @ ra @ m, atol=TOL, rtol=0.0)


def test_equal_deviations_equal_the_scaled_rod() -> None:
    c, b = 0.2, -0.1
    dev = P.replace(rod_C_eps_deviation=(c,) * 4, rod_bend_deviation=(b,) * 4)
    scaled = P.replace(rod=P.rod.replace(C_eps=P.rod.C_eps * (1 + c), bend_rigidity=P.rod.B_xy * (1 + b)))
    x, y = _solve(dev, [[0.7, -0.2, 0.4, -0.6]])[0], _solve(scaled, [[0.7, -0.2, 0.4, -0.6]])[0]
    assert np.array_equal(x.platform_position_m, y.platform_position_m)


def test_symmetries_need_imperfections_that_map_onto_themselves() -> None:
    names = lambda p: {s.perm for s in robot_symmetries(p)}  # noqa: E731
    assert names(P) == {(2, 3, 0, 1), (1, 0, 3, 2), (3, 2, 1, 0)}
    # opposite rods equal: the half turn stays; the mirrors need offsets of opposite sign
    assert names(P.replace(rod_bend_deviation=(0.1, 0.2, 0.1, 0.2))) == {(2, 3, 0, 1)}
    assert names(P.replace(motor_offset=(0.1, -0.1, 0.1, -0.1))) == set(names(P))
    assert names(P.replace(rod_C_eps_deviation=(0.1, 0.0, 0.0, 0.0))) == set()


@pytest.mark.parametrize("field, value, allowed", [
    ("motor_offset", (0.1, 0.0), "n_rods = 4 finite numbers, each in [-0.261799, 0.261799]"),
    ("motor_offset", (0.3, 0.0, 0.0, 0.0), "each in [-0.261799, 0.261799]"),
    ("rod_C_eps_deviation", (0.0, float("nan"), 0.0, 0.0), "each in [-0.5, 0.5]"),
    ("rod_bend_deviation", "0.1", "must be [] or n_rods = 4"),
    ("rod_bend_deviation", (0.0, 0.0, 0.0, -0.6), "each in [-0.5, 0.5]"),
])
def test_bad_imperfections_are_refused_in_one_line_naming_field_and_range(
        field: str, value: object, allowed: str) -> None:
    with pytest.raises(ParameterError) as err:
        P.replace(**{field: value})
    msg = str(err.value)
    assert "\n" not in msg and f"RobotParams.{field} = " in msg and allowed in msg


def test_files_carry_the_imperfections_and_refuse_a_bad_one_whole(tmp_path) -> None:  # type: ignore[no-untyped-def]
    q = P.replace(motor_offset=(0.01, -0.02, 0.0, 0.03), rod_bend_deviation=(0.1, 0.0, 0.0, 0.0))
    for suffix in ("yaml", "toml"):
        path = save_params(q, tmp_path / f"robot.{suffix}")
        assert load_params(path) == q
    text = (tmp_path / "robot.yaml").read_text()
    (tmp_path / "bad.yaml").write_text(text.replace("motor_offset:\n- 0.01", "motor_offset:\n- 1.01"))
    with pytest.raises(ParameterError, match=r"RobotParams.motor_offset = .*each in"):
        load_params(tmp_path / "bad.yaml")


def test_calibration_names_reach_each_rod() -> None:
    names = fittable_names(P)
    for field in ("motor_offset", "rod_C_eps_deviation", "rod_bend_deviation"):
        assert [f"{field}.{i}" for i in range(4)] == [n for n in names if n.startswith(field + ".")]
    q = with_values(P, {"motor_offset.2": 0.05, "rod_bend_deviation.0": -0.1})
    assert q.motor_offset == (0.0, 0.0, 0.05, 0.0) and q.rod_bend_deviation == (-0.1, 0.0, 0.0, 0.0)
    assert q.rod_C_eps_deviation == () and get_value(P, "motor_offset.3") == 0.0
    assert get_value(q, "motor_offset.2") == 0.05
    check_names(P, ["motor_offset.0", "rod_C_eps_deviation.3"])
    with pytest.raises(CalibrationError, match="rod index 0..3"):
        check_names(P, ["motor_offset.4"])
    with pytest.raises(CalibrationError, match="one value per rod"):
        check_names(P, ["motor_offset"])
    with pytest.raises(ParameterError, match="motor_offset"):
        with_values(P, {"motor_offset.1": 0.5})


def test_onset_is_where_the_tilt_stays_above_the_threshold() -> None:
    delta = np.linspace(-170.0, 170.0, 35)  # 10 deg apart
    tilt = np.where(delta < -125.0, 8.0, 1.0) + np.where(delta > 135.0, 9.0, 0.0)
    assert onset(delta, tilt, threshold=5.0) == (pytest.approx(-130.0), pytest.approx(140.0))
    tilt[2] = 2.0  # a pose at -150 deg below the threshold: the onset is beyond it
    assert onset(delta, tilt, threshold=5.0)[0] == pytest.approx(-160.0)
    assert onset(delta, np.zeros_like(delta)) == (None, None)


def test_calibrate_cli_fits_a_rod_and_refuses_a_rod_that_is_not_there(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from hsa_elastica.cli import main

    out = tmp_path / "fitted.yaml"
    base = ["calibrate", "--data", "twisting", "--params", "fpu_robot_2022", "--max-poses", "6",
            "--mirror-branch", "gravity", "--quiet", "--out", str(out)]
    assert main(base + ["--free", "motor_offset.4"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "motor_offset.4" in err and "0..3" in err and not out.exists()
    assert main(base + ["--free", "rod_bend_deviation.1", "--bounds", "rod_bend_deviation.1",
                        "-0.4", "0.4", "--max-evaluations", "2"]) == 0
    fitted: RobotParams = load_params(out)
    assert fitted.rod_bend_deviation[1] != 0.0 and fitted.rod_bend_deviation[0::2] == (0.0, 0.0)
    assert -0.4 <= fitted.rod_bend_deviation[1] <= 0.4


def test_dynamic_relaxation_settles_on_the_static_pose_of_the_imperfect_robot() -> None:
    """The compiled explicit engine sees the offsets as the static solver does (both read the
    built model).  The relaxation stops at its speed tolerance: the settled platform was
    3e-8 m from the static pose; 1e-6 m allows for that and is far below the 0.9 mm these
    offsets move the platform by (checked: more than 0.1 mm)."""
    _settles_on_the_static_pose(P.replace(motor_offset=(0.05, -0.05, 0.1, 0.0)), moved=1e-4)


def _settles_on_the_static_pose(q: RobotParams, moved: float) -> None:
    """``q``'s dynamic relaxation at a mixed command ends within 1e-6 m of its static pose,
    which is more than ``moved`` [m] from the symmetric robot's."""
    from hsa_elastica.robots.steady_state import solve_steady_state

    angles = [0.5, -0.3, 0.2, 0.1]
    dyn = solve_steady_state(q, angles, record=False)
    stat = _solve(q, [angles])[0]
    plain = _solve(P, [angles])[0]
    assert dyn.converged and dyn.method == "dynamic"
    assert np.allclose(dyn.platform_position_m, stat.platform_position_m, atol=1e-6, rtol=0.0)
    assert np.abs(np.asarray(plain.platform_position_m) - stat.platform_position_m).max() > moved
