"""Tests of the actuation mapping and the Fig. 2(a) motion primitives (pure math, fast).

Reference values come from the paper's layout (Section II-E / Fig. 2: rods at 45 deg + 90 deg*i,
R/L/R/L, phi_max = pi) written out by hand here, not from the code under test.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from hsa_elastica.robots.primitives import (
    PRIMITIVES,
    commands_to_angles,
    platform_to_angles,
    platform_to_commands,
    primitive_angles,
    primitive_commands,
    rod_layout,
)

# The paper robot's layout, typed in by hand: NE (R), NW (L), SW (R), SE (L).
LAYOUT = SimpleNamespace(n_rods=4, first_rod_angle=math.pi / 4, handedness=(1, -1, 1, -1))
H = np.array([1, -1, 1, -1])
NE, NW, SW, SE = 0, 1, 2, 3
# Mirror across the x axis (y -> -y): NE <-> SE, NW <-> SW; handedness is swapped by the map.
MIRROR_X = np.array([SE, SW, NW, NE])
# Mirror across the y axis (x -> -x): NE <-> NW, SE <-> SW.
MIRROR_Y = np.array([NW, NE, SE, SW])
EXACT = 1e-12  # pure float arithmetic on values of order pi: only round-off


def test_default_params_layout_matches_paper() -> None:
    theta, h = rod_layout(None)  # RobotParams defaults
    np.testing.assert_allclose(np.degrees(theta), [45, 135, 225, 315], atol=1e-9)
    np.testing.assert_array_equal(h, H)


def test_pure_elongation_equal_handed_magnitudes() -> None:
    for m in (0.0, 0.3, 1.0):
        phi = primitive_angles("elongation", m, LAYOUT)
        np.testing.assert_allclose(np.abs(phi), m * math.pi, atol=EXACT)
        # each angle points along its rod's handedness (R positive, L negative)
        if m > 0:
            np.testing.assert_array_equal(np.sign(phi), H)
        assert abs(phi.sum()) < EXACT  # same magnitude, opposite direction for R and L


@pytest.mark.parametrize(
    "name, full",
    [
        ("bend_north", (SW, SE)),  # south rods elongate -> normal tilts north
        ("bend_south", (NE, NW)),
        ("bend_east", (NW, SW)),  # west rods elongate -> normal tilts east
        ("bend_west", (NE, SE)),
        ("twist_ccw", (NE, SW)),  # right-handed rods (Fig. 2 caption)
        ("twist_cw", (NW, SE)),  # left-handed rods
    ],
)
def test_primitives_match_fig2a(name: str, full: tuple[int, int]) -> None:
    m = 0.7
    expected_u = np.zeros(4)
    expected_u[list(full)] = m
    np.testing.assert_allclose(primitive_commands(name, m, LAYOUT), expected_u, atol=EXACT)
    np.testing.assert_allclose(
        primitive_angles(name, m, LAYOUT), H * math.pi * expected_u, atol=EXACT
    )


@pytest.mark.parametrize("name", ["bend_north", "bend_south", "bend_east", "bend_west"])
def test_bending_sum_of_handed_commands_is_zero(name: str) -> None:
    for m in np.linspace(0.0, 1.0, 7):
        u = primitive_commands(name, float(m), LAYOUT)
        assert abs(np.sum(H * u)) < EXACT
        assert abs(np.sum(primitive_angles(name, float(m), LAYOUT))) < 10 * EXACT


def test_twist_sum_of_torques_sign() -> None:
    # CCW: more on right-handed rods -> net positive (CCW about +z) motor rotation; CW opposite.
    assert np.sum(primitive_angles("twist_ccw", 1.0, LAYOUT)) == pytest.approx(2 * math.pi)
    assert np.sum(primitive_angles("twist_cw", 1.0, LAYOUT)) == pytest.approx(-2 * math.pi)


def test_north_south_mirror_relation() -> None:
    # Reflection y -> -y maps rod i onto rod MIRROR_X[i] of the opposite handedness and reverses
    # the sense of rotation, so phi_south[MIRROR_X[i]] = -phi_north[i]; commands map unchanged.
    for m in (0.2, 0.5, 1.0):
        un = primitive_commands("bend_north", m, LAYOUT)
        us = primitive_commands("bend_south", m, LAYOUT)
        np.testing.assert_allclose(us[MIRROR_X], un, atol=EXACT)
        pn = primitive_angles("bend_north", m, LAYOUT)
        ps = primitive_angles("bend_south", m, LAYOUT)
        np.testing.assert_allclose(ps[MIRROR_X], -pn, atol=EXACT)
        # the same mirror relation holds for east/west under x -> -x
        pe = primitive_angles("bend_east", m, LAYOUT)
        pw = primitive_angles("bend_west", m, LAYOUT)
        np.testing.assert_allclose(pw[MIRROR_Y], -pe, atol=EXACT)
        # and a reflection turns CCW into CW twisting
        pccw = primitive_angles("twist_ccw", m, LAYOUT)
        pcw = primitive_angles("twist_cw", m, LAYOUT)
        np.testing.assert_allclose(pcw[MIRROR_X], -pccw, atol=EXACT)


def test_general_mapping_mirror_relation() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        e, bx, by, t = rng.uniform(0, 1), *rng.uniform(-1, 1, size=3)
        p = platform_to_angles(e, bx, by, t, LAYOUT)
        q = platform_to_angles(e, bx, -by, -t, LAYOUT)
        np.testing.assert_allclose(q[MIRROR_X], -p, atol=EXACT)


def test_angles_never_leave_handed_range() -> None:
    rng = np.random.default_rng(1)
    grid = np.linspace(-1.0, 1.0, 9)
    samples = [(abs(a), b, c, d) for a in grid for b in grid for c in grid for d in grid]
    samples += [(rng.uniform(0, 1), *rng.uniform(-1, 1, size=3)) for _ in range(2000)]
    for phi_max in (math.pi, 2.0):
        for e, bx, by, t in samples:
            phi = platform_to_angles(e, bx, by, t, LAYOUT, phi_max=phi_max)
            along = H * phi  # angle along each rod's handedness
            assert np.all(along >= 0.0) and np.all(along <= phi_max + 1e-15)


def test_bend_direction_is_monotone_in_rod_position() -> None:
    # Bending toward +y lengthens rods with smaller y: along the handedness the south rods get
    # more angle than the north rods (independent of the 1/sqrt(2) scaling).
    u = platform_to_commands(0.5, 0.0, 0.4, 0.0, LAYOUT)
    assert u[SW] > u[NW] and u[SE] > u[NE]
    u = platform_to_commands(0.5, 0.4, 0.0, 0.0, LAYOUT)
    assert u[NW] > u[NE] and u[SW] > u[SE]


@pytest.mark.parametrize("bad", ["bend_up", "Elongation", ""])
def test_unknown_primitive(bad: str) -> None:
    with pytest.raises(ValueError) as err:
        primitive_angles(bad, 1.0, LAYOUT)
    msg = str(err.value)
    assert repr(bad) in msg
    for name in PRIMITIVES:
        assert name in msg


@pytest.mark.parametrize("bad", [-0.1, 1.01, float("nan"), float("inf")])
def test_magnitude_out_of_range(bad: float) -> None:
    with pytest.raises(ValueError, match=r"magnitude .*\[0\.0, 1\.0\]"):
        primitive_angles("elongation", bad, LAYOUT)


def test_platform_inputs_validated() -> None:
    with pytest.raises(ValueError, match="elongation"):
        platform_to_angles(-0.5, 0, 0, 0, LAYOUT)
    with pytest.raises(ValueError, match="bend_y"):
        platform_to_angles(0.5, 0, 1.5, 0, LAYOUT)
    with pytest.raises(ValueError, match="twist"):
        platform_to_angles(0.5, 0, 0, -2, LAYOUT)
    with pytest.raises(ValueError, match="phi_max"):
        platform_to_angles(0.5, 0, 0, 0, LAYOUT, phi_max=-1.0)
    with pytest.raises(ValueError, match="commands"):
        commands_to_angles([0.1, 0.2, 0.3], LAYOUT)
