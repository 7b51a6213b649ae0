"""The rods' common lean (RobotParams.rod_tilt): a default that changes nothing, the lean as a
rigid turn of the rods about their feet, the symmetries it keeps, validation, files, the
calibration's names and the imperfection study's merged rows.

Reference numbers do not come from the code under test: the lean's rotation is Rodrigues'
formula worked out by hand for a turn about x (the rods' axis ``(0, -sin a, cos a)``); the
straight assembly's platform height is the sum of the printed lengths; a gravity-free robot
under a command that loads every rod alike is the upright robot turned about the origin (the
equations of a free-standing assembly do not know which way is up); the mirror images follow
from the layout (rods at 45 + 90 i deg, handedness R, L, R, L: the mirror x -> -x maps rod
0 <-> 1 and 2 <-> 3, swaps handedness, turns a motor's sense and keeps a lean about x).
Static poses agree to 1e-9 m / 1e-9 (rotation entries): the static solver's residual tolerance
puts the platform within about 1e-12 m of the exact equilibrium, 1e-9 leaves room for
different starting states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hsa_elastica.experiments.calibration import CalibrationError
from hsa_elastica.experiments.parameter_names import check_names, fittable_names, get_value, with_values
from hsa_elastica.params import ParameterError, RobotParams, load_params, paper_robot_params, save_params
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.symmetry import robot_symmetries
from hsa_elastica.validation.real_robot_imperfections import CANDIDATES, merge_rows
from tests.test_imperfections import _pose, _settles_on_the_static_pose, _solve

P = paper_robot_params()  # no gravity
TOL = 1e-9  # [m] and [-]: see the module docstring


def _turn_about_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _height(p: RobotParams) -> float:
    return p.rod.cap_length_base + p.rod.length + p.rod.cap_length_top


def test_no_lean_is_the_default_and_builds_the_upright_robot_bit_for_bit() -> None:
    assert P.rod_tilt == (0.0, 0.0) and P.is_symmetric()
    zero = P.replace(rod_tilt=[0, -0.0])
    assert zero.rod_tilt == (0.0, -0.0) and zero.is_symmetric()
    a = build_robot(P, [0.3, -0.2, 0.1, 0.0], record=False)
    b = build_robot(zero, [0.3, -0.2, 0.1, 0.0], record=False)
    for ra, rb in zip(a.rods, b.rods):
        for name in ("position_collection", "director_collection", "rest_kappa", "rest_lengths"):
            assert np.array_equal(getattr(ra, name), getattr(rb, name))
    assert np.array_equal(a.platform.position_collection, b.platform.position_collection)
    assert np.array_equal(a.attachment_points, b.attachment_points)
    # the upright layout itself: each rod's first node cap_length_base above its foot, along +z
    for i, rod in enumerate(a.rods):
        x, y, _ = P.rod_base(i)
        assert np.array_equal(rod.position_collection[:, 0], [x, y, P.rod.cap_length_base])
        assert np.array_equal(a.attachment_points[i],
                              [x, y, -0.5 * P.platform.thickness - P.rod.cap_length_top])
    assert a.platform.position_collection[2, 0] == pytest.approx(
        _height(P) + 0.5 * P.platform.thickness, abs=1e-15)


def test_a_lean_about_x_turns_every_rod_about_its_foot_toward_minus_y() -> None:
    a = 0.04
    robot = build_robot(P.replace(rod_tilt=(a, 0.0)), [0.0] * 4, record=False, finalize=False)
    axis = np.array([0.0, -math.sin(a), math.cos(a)])
    for i, rod in enumerate(robot.rods):
        foot = np.array(P.rod_base(i))
        x = rod.position_collection
        assert np.allclose(x[:, 0], foot + P.rod.cap_length_base * axis, atol=1e-15, rtol=0.0)
        # the parameters say where the flexible part starts, lean included
        assert np.allclose(P.replace(rod_tilt=(a, 0.0)).rod_start(i), x[:, 0], atol=1e-15,
                           rtol=0.0)
        # straight along the leaning axis, printed length: tip = start + L axis
        assert np.allclose(x[:, -1] - x[:, 0], P.rod.length * axis, atol=1e-14, rtol=0.0)
        assert np.allclose(rod.director_collection[2], axis[:, None], atol=1e-15, rtol=0.0)


def test_at_rest_the_level_platform_sits_on_the_leaning_rods() -> None:
    """Unloaded, the built assembly is the equilibrium: the platform centre at ``H`` along the
    rods' axis plus half its thickness, not turned."""
    a = 0.05
    res = _solve(P.replace(rod_tilt=(a, 0.0)), [[0.0] * 4])[0]
    pos, rot = _pose(res)
    h = _height(P)
    assert np.allclose(pos, [0.0, -h * math.sin(a), h * math.cos(a) + 0.5 * P.platform.thickness],
                       atol=TOL, rtol=0.0)
    assert np.allclose(rot, np.eye(3), atol=TOL, rtol=0.0)


@pytest.mark.parametrize("tilt", [(0.05, 0.0), (0.03, -0.04)])
def test_under_a_common_elongation_the_leaning_robot_is_the_upright_one_turned(
        tilt: tuple[float, float]) -> None:
    """Every rod elongated alike (motor angle ``h_i phi``), no gravity: the rods stay
    straight along their leaning axis, so the pose is the upright robot's turned by the lean
    about the origin, the platform still level.  The lean's rotation: Rodrigues' formula with
    the unit axis ``u = (tx, ty, 0) / |t|`` and angle ``|t|``."""
    phi = 1.2
    angles = [[h * phi for h in P.handedness]]
    up_pos, up_rot = _pose(_solve(P, angles)[0])
    pos, rot = _pose(_solve(P.replace(rod_tilt=tilt), angles)[0])
    tx, ty = tilt
    ang = math.hypot(tx, ty)
    u = np.array([tx, ty, 0.0]) / ang
    k = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    turn = np.eye(3) + math.sin(ang) * k + (1.0 - math.cos(ang)) * k @ k
    half = np.array([0.0, 0.0, 0.5 * P.platform.thickness])
    assert up_pos[2] > _height(P) + half[2] + 0.01  # elongated by more than 10 mm
    assert np.allclose(pos - half, turn @ (up_pos - half), atol=TOL, rtol=0.0)
    assert np.allclose(rot, up_rot, atol=TOL, rtol=0.0)


def test_the_motor_turns_its_rod_about_the_leaning_axis() -> None:
    a, phi = 0.06, 0.7
    q = P.replace(rod_tilt=(a, 0.0))
    robot = build_robot(q, [phi, 0.0, 0.0, 0.0], ramp=0.0, record=False)
    turn = _turn_about_x(a)
    axis = turn[:, 2]
    robot.simulator.constrain_values(np.float64(0.0))  # the motors impose their angles
    q0 = robot.rods[0].director_collection[..., 0]
    radial = turn @ np.array([math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0])
    assert np.allclose(q0[2], axis, atol=1e-15, rtol=0.0)  # the axis is kept
    # d1 turned by phi about the axis from the leaning radial direction (right-hand rule)
    turned = math.atan2(float(q0[0] @ np.cross(axis, radial)), float(q0[0] @ radial))
    assert turned == pytest.approx(phi, abs=1e-12)


def test_a_lean_toward_minus_y_tilts_the_platform_in_proportion_to_the_differential() -> None:
    """The paper robot's twisting commands (one pair elongated, the other at rest): upright,
    the pose is its own image under the half turn (no pitch); leaning toward -y it pitches,
    and the mirror command (the other pair elongated) gives the mirror image: the same y, the
    opposite x and pitch (a lean about x is kept by the mirror x -> -x)."""
    u = 1.5
    left, right = [0.0, -u, 0.0, -u], [u, 0.0, u, 0.0]  # the mirror image of each other
    (up,) = _solve(P, [left])
    assert np.allclose(_pose(up)[1][:, 2], [0.0, 0.0, 1.0], atol=TOL, rtol=0.0)  # yawed, level
    a, b = _solve(P.replace(rod_tilt=(0.03, 0.0)), [left, right])
    (pa, ra), (pb, rb) = _pose(a), _pose(b)
    m = np.diag([-1.0, 1.0, 1.0])
    pitch = math.degrees(math.asin(ra[0, 2]))  # the platform normal's lean toward +x
    assert abs(pitch) > 0.05  # a first-order tilt (0.9 deg), absent upright: the test can fail
    assert np.allclose(pb, m @ pa, atol=TOL, rtol=0.0)
    assert np.allclose(rb, m @ ra @ m, atol=TOL, rtol=0.0)


def test_the_symmetries_a_lean_keeps() -> None:
    perms = lambda p: {s.perm for s in robot_symmetries(p)}  # noqa: E731
    assert perms(P) == {(2, 3, 0, 1), (1, 0, 3, 2), (3, 2, 1, 0)}
    assert perms(P.replace(rod_tilt=(0.02, 0.0))) == {(1, 0, 3, 2)}  # mirror x = 0 only
    assert perms(P.replace(rod_tilt=(0.0, -0.02))) == {(3, 2, 1, 0)}  # mirror y = 0 only
    assert perms(P.replace(rod_tilt=(0.02, 0.01))) == set()


@pytest.mark.parametrize("value, allowed", [
    ((0.11, 0.0), "each in [-0.1, 0.1]"),
    ((0.0, -0.2), "each in [-0.1, 0.1]"),
    ((0.01,), "must be 2 finite numbers"),
    ((0.0, float("inf")), "must be 2 finite numbers"),
    ("0.01", "must be 2 finite numbers"),
    (0.01, "must be 2 finite numbers"),
])
def test_a_bad_lean_is_refused_in_one_line_naming_field_and_range(value: object, allowed: str) -> None:
    with pytest.raises(ParameterError) as err:
        P.replace(rod_tilt=value)
    msg = str(err.value)
    assert "\n" not in msg and "RobotParams.rod_tilt = " in msg and allowed in msg
    assert P.replace(rod_tilt=(0.1, -0.1)).rod_tilt == (0.1, -0.1)  # the bounds are allowed


def test_files_carry_the_lean_and_refuse_a_bad_one(tmp_path) -> None:  # type: ignore[no-untyped-def]
    q = P.replace(rod_tilt=(0.02, -0.01))
    for suffix in ("yaml", "toml"):
        assert load_params(save_params(q, tmp_path / f"robot.{suffix}")) == q
    text = (tmp_path / "robot.yaml").read_text()
    assert "rod_tilt:\n- 0.02\n- -0.01" in text
    (tmp_path / "bad.yaml").write_text(text.replace("rod_tilt:\n- 0.02", "rod_tilt:\n- 0.5"))
    with pytest.raises(ParameterError, match=r"RobotParams.rod_tilt = .*each in \[-0.1, 0.1\]"):
        load_params(tmp_path / "bad.yaml")


def test_calibration_names_of_the_lean() -> None:
    names = fittable_names(P)
    assert [n for n in names if n.startswith("rod_tilt")] == ["rod_tilt.x", "rod_tilt.y"]
    q = with_values(P, {"rod_tilt.y": -0.03})
    assert q.rod_tilt == (0.0, -0.03) and get_value(q, "rod_tilt.y") == -0.03
    check_names(P, ["rod_tilt.x", "rod_tilt.y"])
    with pytest.raises(CalibrationError, match="rod_tilt has the components x, y only"):
        check_names(P, ["rod_tilt.z"])
    with pytest.raises(ParameterError, match="rod_tilt"):
        with_values(P, {"rod_tilt.x": 0.3})
    assert set(CANDIDATES["T"]) == {"rod_tilt.x", "rod_tilt.y"}


def test_a_study_of_some_candidates_keeps_the_rows_of_the_others() -> None:
    old = [{"candidate": "B", "split": "blocks", "v": 1}, {"candidate": "T", "split": "blocks", "v": 2}]
    new = [{"candidate": "T", "split": "blocks", "v": 3}, {"candidate": "T", "split": "halves", "v": 4}]
    assert [r["v"] for r in merge_rows(old, new)] == [1, 3, 4]
    assert [r["v"] for r in old] == [1, 2]  # not changed in place


@pytest.mark.parametrize("integrator", ["explicit", "implicit"])
def test_dynamic_relaxation_settles_on_the_static_pose_of_the_leaning_robot(integrator: str) -> None:
    """The compiled engines (the fused explicit stepper, the implicit integrator) see the lean
    as the static solver does (all read the built model, the joints take the built
    orientations as their rest).  The relaxation stops at its speed tolerance: 1e-6 m allows
    for that (measured 1e-8 m on the implicit integrator with a lean of (0.03, -0.02)) and is
    far below the 3.1 mm this lean moves the platform by (checked: more than 1 mm)."""
    from hsa_elastica.params import DEFAULT_IMPLICIT_DT
    q = P.replace(rod_tilt=(0.03, 0.0))
    if integrator == "implicit":
        q = q.replace(simulation=q.simulation.replace(integrator="implicit", dt=DEFAULT_IMPLICIT_DT))
    _settles_on_the_static_pose(q, moved=1e-3)
