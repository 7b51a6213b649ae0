"""Symmetries of the robot and of a command, and steady states that break them
(hsa_elastica/robots/symmetry.py; ``symmetry_broken`` / ``symmetry_branch_m`` of every robot
steady state, in the JSON, the batch tables and ``hsa_elastica.steady_state``).

The symmetry groups are checked against the ones worked out by hand from the layout (rods at
45 + 90 i deg, handedness R, L, R, L): a half turn keeps handedness and maps rod i to i + 2, a
mirror swaps handedness (the mirror image of a right-handed helix is left-handed) and turns a
motor's sense.  The steady states: the command (1.5 pi, 0, 1.5 pi, 0) is symmetric under the
half turn and buckles (docs/stability.md: the platform leans about 20 mm to one of two mirror
poses), bend_north is symmetric under the mirror in x = 0 and does not buckle."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import hsa_elastica
from hsa_elastica.cli import main
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.symmetry import (
    broken_symmetry,
    command_symmetries,
    robot_symmetries,
)

P = paper_robot_params()
#: the buckling command of the CLI example: 1.5 pi (the largest motor angle) on the R rods
BUCKLING = [4.7123889, 0.0, 4.7123889, 0.0]


def _perms(syms):  # type: ignore[no-untyped-def]
    return {(s.perm, s.det) for s in syms}


def test_paper_robot_has_the_half_turn_and_two_mirrors() -> None:
    # by hand: rods NE, NW, SW, SE = 0..3; half turn 0<->2, 1<->3 (R->R, L->L); mirror x = 0
    # 0<->1, 2<->3 and mirror y = 0 0<->3, 1<->2 (R<->L); quarter turns map R onto L's place
    # with R kept, diagonal mirrors map a rod onto itself with its handedness swapped
    assert _perms(robot_symmetries(P)) == {((2, 3, 0, 1), 1), ((1, 0, 3, 2), -1), ((3, 2, 1, 0), -1)}


def test_handedness_and_lateral_gravity_remove_symmetries() -> None:
    rrll = P.replace(handedness=(1, 1, -1, -1))  # only the mirror y = 0 pairs R with L
    assert _perms(robot_symmetries(rrll)) == {((3, 2, 1, 0), -1)}
    tilted = P.replace(simulation=P.simulation.replace(gravity=(1.0, 0.0, -9.81)))
    assert _perms(robot_symmetries(tilted)) == {((3, 2, 1, 0), -1)}  # keeps g = (1, 0, -9.81)
    same = P.replace(handedness=(1, 1, 1, 1))  # quarter turns too, no mirror (R onto L)
    assert {s.det for s in robot_symmetries(same)} == {1} and len(robot_symmetries(same)) == 3


@pytest.mark.parametrize("name, expected", [
    ("bend_north", {((1, 0, 3, 2), -1)}),
    ("bend_east", {((3, 2, 1, 0), -1)}),
    ("twist_ccw", {((2, 3, 0, 1), 1)}),
    ("elongation", {((2, 3, 0, 1), 1), ((1, 0, 3, 2), -1), ((3, 2, 1, 0), -1)}),
])
def test_command_symmetries_of_the_primitives(name: str, expected: set) -> None:  # type: ignore[type-arg]
    assert _perms(command_symmetries(P, primitive_angles(name, 0.7, P))) == expected


def test_command_symmetry_needs_equal_angles_to_round_off() -> None:
    assert command_symmetries(P, [1.0, -0.3, 0.2, 0.5]) == []
    # a mirror maps phi_j = -phi_i: (a, -a, a, -a) is symmetric, (a, a, a, a) only under the turn
    assert _perms(command_symmetries(P, [1.0, 1.0, 1.0, 1.0])) == {((2, 3, 0, 1), 1)}
    assert command_symmetries(P, [1.0, 0.0, 1.0 + 1e-6, 0.0]) == []


def test_static_solver_treats_a_command_as_buckling_only_under_a_kept_rotation() -> None:
    """The static entry point solves a command that a rotation keeps from the straight pose
    (it may buckle onto either of two mirror branches); a motor offset on one rod breaks the
    half turn, and the command is then an ordinary one (a warm start is fine)."""
    from hsa_elastica.robots.statics_api import _mirror_symmetric

    angles = np.array(BUCKLING)
    assert _mirror_symmetric(P, angles)
    assert not _mirror_symmetric(P, np.array(primitive_angles("bend_north", 0.7, P)))  # a mirror
    offset = P.replace(motor_offset=(0.05, 0.0, 0.0, 0.0))
    assert not _mirror_symmetric(offset, angles)
    paired = P.replace(motor_offset=(0.05, 0.0, 0.05, 0.0))  # rods 0 and 2 alike: kept
    assert _mirror_symmetric(paired, angles)


def _pose(xy_mm: tuple[float, float], tilt_about_x: float = 0.0):  # type: ignore[no-untyped-def]
    """A pose made by hand: platform at (x, y, 110) mm turned about x, tips at the bases
    raised to 100 mm and moved with the platform's xy."""
    p = np.array([xy_mm[0] * 1e-3, xy_mm[1] * 1e-3, 0.110])
    q = np.array([math.sin(tilt_about_x / 2), 0.0, 0.0, math.cos(tilt_about_x / 2)])
    tips = np.array([[*P.rod_base(i)[:2], 0.100] for i in range(4)]) + [p[0], p[1], 0.0]
    return p, q, tips


def test_broken_symmetry_of_poses_made_by_hand() -> None:
    north = primitive_angles("bend_north", 1.0, P)
    assert not broken_symmetry(P, north, *_pose((0.0, 40.0), 0.7)).is_broken
    off = broken_symmetry(P, north, *_pose((1.0, 40.0), 0.7))
    assert off.is_broken and [s.perm for s in off.broken] == [(1, 0, 3, 2)]
    np.testing.assert_allclose(off.offset_m, [1e-3, 0.0, 0.0], atol=1e-15)  # x alone flips
    turn = broken_symmetry(P, BUCKLING, *_pose((3.0, -4.0)))
    np.testing.assert_allclose(turn.offset_m, [3e-3, -4e-3, 0.0], atol=1e-15)  # x and y flip
    assert "half turn about z" in turn.describe(_pose((3.0, -4.0))[0])
    assert "(-3.00, 4.00, 110.00) mm" in turn.describe(_pose((3.0, -4.0))[0])
    # 0.5 um off is within the tolerance (1 um) that settled symmetric poses keep by 1e6
    assert not broken_symmetry(P, north, *_pose((0.5e-3, 40.0), 0.7)).is_broken
    # a command without symmetry has nothing to break
    none = broken_symmetry(P, [1.0, -0.3, 0.2, 0.5], *_pose((3.0, -4.0)))
    assert not none.is_broken and not none.symmetries and not np.any(none.offset_m)


@pytest.mark.slow
def test_buckled_symmetric_command_is_flagged_with_its_branch() -> None:
    """Static and dynamic steady states of (1.5 pi, 0, 1.5 pi, 0) lean ~20 mm to one of two
    mirror poses (docs/stability.md: 5.12, 19.59 mm up to sign); both say so, and the
    symmetric equilibrium the static solver passes is unstable (negative eigenvalue)."""
    from hsa_elastica.robots.statics_api import solve_static, static_solver
    from hsa_elastica.robots.steady_state import solve_steady_state

    static = hsa_elastica.steady_state(P, BUCKLING)
    assert static.converged and static.symmetry_broken is True
    branch = static.symmetry_branch_m
    assert branch is not None and branch[2] == 0.0
    # the lean of docs/stability.md's example, within 0.05 mm (its two decimals and round-off)
    assert math.hypot(branch[0], branch[1]) * 1e3 == pytest.approx(math.hypot(5.12, 19.59), abs=0.05)
    # the half turn's image of the platform is -x, -y: the offset is the platform's xy
    np.testing.assert_allclose(branch[:2], static.top.platform_position_m[:2], atol=1e-15)
    dynamic = solve_steady_state(P, BUCKLING, record=False)
    assert dynamic.converged and dynamic.symmetry_broken is True
    # the same pose or its mirror image (round-off chooses), within the settling tolerance
    sign = 1.0 if dynamic.symmetry_branch_m @ branch > 0 else -1.0
    np.testing.assert_allclose(sign * dynamic.symmetry_branch_m, branch, atol=5e-5)
    # the stability test knows why: the symmetric equilibrium (no branch switch) is unstable
    symmetric = solve_static(P, BUCKLING, check_stability=False, fallback=False)
    assert symmetric.converged and symmetric.symmetry_broken is False
    solver, _ = static_solver(P)
    solver.set_pose(symmetric.state[1])
    lam_sym, _ = solver.stability(np.array(BUCKLING), solver.stability_modes, vectors=False)
    solver.set_pose(static.top.state[1])
    lam_branch, _ = solver.stability(np.array(BUCKLING), solver.stability_modes, vectors=False)
    assert lam_sym < 0.0 < lam_branch


def test_symmetric_command_that_does_not_buckle_is_not_flagged() -> None:
    from hsa_elastica.robots.steady_state import solve_steady_state

    north = primitive_angles("bend_north", 1.0, P)
    for res in (hsa_elastica.steady_state(P, north).top, solve_steady_state(P, north, record=False)):
        assert res.converged and res.symmetry_broken is False
        assert res.symmetry_branch_m is not None and not np.any(res.symmetry_branch_m)
        assert res.platform_position_m[1] > 0.03  # it does bend north (44 mm, docs/primitives.md)
        d = res.to_json_dict()
        assert d["symmetry_broken"] is False and d["symmetry_branch_m"] == [0.0, 0.0, 0.0]


def test_cli_json_summary_and_batch_table_carry_it(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "s.json"
    assert main(["steady-state", "--angles", *map(str, BUCKLING), "--json", str(out)]) == 0
    line = capsys.readouterr().out
    assert "broken symmetry: the motor angles are symmetric under the half turn about z" in line
    d = json.loads(out.read_text())
    assert d["symmetry_broken"] is True and len(d["symmetry_branch_m"]) == 3
    csv = tmp_path / "a.csv"
    north = primitive_angles("bend_north", 1.0, P)
    csv.write_text("angle_0,angle_1,angle_2,angle_3\n" + ",".join(map(str, north)) + "\n"
                   + ",".join(map(str, BUCKLING)) + "\n")
    table = tmp_path / "t.parquet"
    assert main(["steady-state", "--angles-csv", str(csv), "--out", str(table), "--quiet"]) == 0
    df = pd.read_parquet(table)
    assert df["symmetry_broken"].tolist() == [False, True]
    assert [c for c in df.columns if c.startswith("symmetry_branch_m")] == [
        "symmetry_branch_m_x", "symmetry_branch_m_y", "symmetry_branch_m_z"]
    from hsa_elastica.io.columns import read_column_metadata

    assert read_column_metadata(table)["symmetry_branch_m_x"]["unit"] == "m"
