"""Tests of the settling test / steady-state solver (hsa_elastica.robots.steady_state).

Reference values are closed forms written out here (axial compliance of the rods under gravity,
the auxetic extension C_eps * phi of Eq. 3), not outputs of the code under test.

Time step: 2e-5 s, half the axial wave limit l / sqrt(E / rho) = 4.1e-5 s of the paper robot rod
(4e-5 s diverges within milliseconds; see docs/stability.md), set explicitly so these tests do
not depend on the default.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hsa_elastica.params import RobotParams
from hsa_elastica.robots.primitives import primitive_angles
from hsa_elastica.robots.settling import SettleOptions
from hsa_elastica.robots.steady_state import JSON_KEYS, solve_steady_state

DT = 2e-5


def _params(**sim: object) -> RobotParams:
    p = RobotParams()
    return p.replace(simulation=p.simulation.replace(dt=DT, **sim))


def test_stops_at_end_of_window_when_at_rest() -> None:
    # Zero angles, no gravity: every speed is exactly 0, so the test passes at the first check
    # after the ramp and the run must stop one window later (to one check interval).
    ramp, window, chk = 0.02, 0.01, 0.002
    res = solve_steady_state(
        _params(ramp_time=ramp), [0.0] * 4,
        settle=SettleOptions(window=window, check_interval=chk, max_time=1.0), record=False,
    )
    assert res.converged
    assert ramp + window - 1e-9 <= res.sim_time_s <= ramp + window + chk + 1e-9
    assert res.n_steps == round(res.sim_time_s / DT)
    assert res.diagnostics is None


def test_not_converged_before_ramp_end_and_fixed_duration() -> None:
    # max_time inside the ramp: the settling test never starts -> not converged, stops at max_time
    res = solve_steady_state(_params(ramp_time=0.05), [0.0] * 4,
                             settle=SettleOptions(max_time=0.01), record=False)
    assert not res.converged
    assert res.sim_time_s == pytest.approx(0.01, abs=DT)
    # stop_when_settled=False runs to max_time although settled long before, still reports it
    res = solve_steady_state(
        _params(ramp_time=0.01), [0.0] * 4, settle=SettleOptions(window=0.005, max_time=0.04),
        stop_when_settled=False, record=True,
    )
    assert res.converged
    assert res.sim_time_s == pytest.approx(0.04, abs=DT)
    df = res.diagnostics
    assert df is not None and df["time"].iloc[-1] == pytest.approx(res.sim_time_s, abs=1e-12)


def test_gravity_sag_matches_axial_compliance() -> None:
    # Closed form: each rod carries a quarter of the platform weight through its joint spring
    # and the rod's axial stiffness EA/L, plus its own weight, whose tip displacement for
    # lumped node masses is exactly rho g L^2 / (2 E) (sum of (n - j + 1/2) rho A l g l / EA).
    p = _params(ramp_time=0.02, gravity=(0.0, 0.0, -9.81))
    rod, plat = p.rod, p.platform
    g = 9.81
    m_plat = plat.density * math.pi * plat.radius**2 * plat.thickness
    EA = rod.youngs_modulus * rod.area
    drop = 0.25 * m_plat * g * (rod.length / EA + 1.0 / p.joint.k_F)
    drop += rod.density * g * rod.length**2 / (2.0 * rod.youngs_modulus)  # ~7.3 um in total
    res = solve_steady_state(
        p, [0.0] * 4, settle=SettleOptions(tol_velocity=1e-5, window=0.03, max_time=2.0),
        record=False,
    )
    assert res.converged
    # it stopped on its own, well before max_time (velocity decay exp(-20 t) from ~4e-3 m/s)
    assert res.sim_time_s < 1.0
    z0 = rod.length + 0.5 * plat.thickness
    measured = z0 - res.platform_position_m[2]
    # 2 %: residual oscillation amplitude <= tol / omega ~ 1e-5 / 1900 m = 0.07 % of the drop;
    # finite strain (7e-5) and the joint's rotational coupling are far below that.
    assert measured == pytest.approx(drop, rel=0.02)
    assert res.platform_tilt_rad < 1e-6  # symmetric load
    np.testing.assert_allclose(res.platform_position_m[:2], 0.0, atol=1e-9)


def _actuated_params() -> RobotParams:
    # The paper's coupling (no twist low pass) diverges a few tenths of a second after the ramp
    # for phi ~ pi (docs/stability.md); the 10 ms low pass leaves steady states unchanged.
    p = _params(ramp_time=0.3)
    return p.replace(rod=p.rod.replace(twist_filter_time=0.01))


def test_elongation_full_magnitude_raises_platform() -> None:
    # Eq. 3: a rod twisted by phi extends by C_eps * phi (0.01 m/rad * pi = 31.4 mm).  The
    # distal twist is held by the joint's rotational spring k_tau in series with the rod's
    # twist stiffness B_z / D (D = sum of the printed Voronoi lengths = (n-1) L / n), so the rod
    # keeps phi * k_tau D / (k_tau D + B_z) of the motor angle: 0.7 % less, 31.19 mm.  There is
    # no external load, so the platform rises by that extension and does not tilt or twist
    # (a quarter turn combined with a reflection maps the layout onto itself with R <-> L).
    p = _actuated_params()
    angles = primitive_angles("elongation", 1.0, p)
    res = solve_steady_state(p, angles, settle=SettleOptions(max_time=2.0), record=False)
    assert res.converged, res
    assert res.sim_time_s < 1.5  # stopped by the settling test, not by max_time
    rod = p.rod
    D = (rod.n_elements - 1) * rod.length / rod.n_elements
    k = p.joint.k_tau * D
    expected = rod.C_eps * math.pi * k / (k + rod.B_z)
    rise = res.platform_position_m[2] - (rod.length + 0.5 * p.platform.thickness)
    # 0.2 % (0.06 mm): the state is within tol / omega (< 1 um) of equilibrium; the tolerance
    # still separates the series-spring value from the bare C_eps * phi_max (0.7 % apart).
    assert rise == pytest.approx(expected, rel=2e-3)
    assert abs(rise - rod.C_eps * math.pi) < 0.02 * rod.C_eps * math.pi  # "about 31 mm"
    assert res.platform_tilt_rad < 1e-3  # 0.06 deg: symmetric actuation
    assert abs(res.platform_twist_rad) < 1e-3
    np.testing.assert_allclose(res.platform_position_m[:2], 0.0, atol=1e-4)
    tips = res.rod_tip_positions_m
    np.testing.assert_allclose(tips[:, 2], tips[0, 2], atol=1e-4)  # all rods equally long


def test_bend_north_tilts_platform_toward_plus_y() -> None:
    # Sign convention of docs/primitives.md through the whole robot: bend_north lengthens the
    # south rods (y < 0), so the platform normal tilts toward +y (north) and the platform moves
    # north; by the mirror symmetry x -> -x of the actuation the normal has no x component.
    p = _actuated_params()
    res = solve_steady_state(p, primitive_angles("bend_north", 1.0, p),
                             settle=SettleOptions(max_time=2.0), record=False)
    assert res.converged
    normal = res.platform_rotation[:, 2]
    assert normal[1] > 0.3  # a clear tilt (the two sides differ by C_eps * pi = 31 mm)
    assert abs(normal[0]) < 1e-6
    assert res.platform_position_m[1] > 0.01
    tips = res.rod_tip_positions_m  # south rods (2: SW, 3: SE) end higher than north (0, 1)
    assert min(tips[2, 2], tips[3, 2]) > max(tips[0, 2], tips[1, 2])


def test_json_dict_contract() -> None:
    res = solve_steady_state(_params(ramp_time=0.01), [0.0] * 4,
                             settle=SettleOptions(window=0.004, max_time=0.1), record=False)
    d = res.to_json_dict()
    assert tuple(d) == JSON_KEYS
    assert len(d["motor_angles_rad"]) == 4
    assert len(d["platform_position_m"]) == 3
    assert len(d["platform_quaternion_xyzw"]) == 4
    assert np.asarray(d["rod_tip_positions_m"]).shape == (4, 3)
    # unactuated, no gravity: the platform stays at L + t/2 with identity orientation and the
    # rod tips at their bases + L e_z (robot layout: radius 24 mm at 45 deg + 90 deg i)
    np.testing.assert_allclose(d["platform_position_m"], [0, 0, 0.1015], atol=1e-12)
    np.testing.assert_allclose(d["platform_quaternion_xyzw"], [0, 0, 0, 1], atol=1e-12)
    a = np.radians([45, 135, 225, 315])
    tips = np.stack([0.024 * np.cos(a), 0.024 * np.sin(a), np.full(4, 0.1)], axis=1)
    np.testing.assert_allclose(d["rod_tip_positions_m"], tips, atol=1e-12)


def test_runaway_speed_guard() -> None:
    # gravity starts the robot moving at ~1e-3 m/s; a (deliberately tiny) max_speed of 1e-6 m/s
    # must stop the run at the first check with SimulationDiverged naming the speed
    from hsa_elastica.engines.timeloop import SimulationDiverged

    p = _params(ramp_time=0.01, gravity=(0.0, 0.0, -9.81))
    with pytest.raises(SimulationDiverged, match="max_speed") as err:
        solve_steady_state(p, [0.0] * 4, settle=SettleOptions(max_speed=1e-6), record=False)
    assert err.value.time == pytest.approx(0.002, abs=DT)


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(tol_velocity=-1.0), "tol_velocity"),
        (dict(tol_omega=0.0), "tol_omega"),
        (dict(window=float("nan")), "window"),
        (dict(max_time=-2.0), "max_time"),
        (dict(check_interval=0.0), "check_interval"),
        (dict(max_speed=0.0), "max_speed"),
    ],
)
def test_invalid_arguments(kw: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        solve_steady_state(_params(), [0.0] * 4, settle=SettleOptions(**kw))


def test_fast_path_same_pose_as_reference_operators() -> None:
    # The fused loop (default) and the per-rod operators step the same equations in the same
    # order (tests/test_fast.py: trajectories equal to 1e-10); here the whole solver path is
    # compared: bend-north at full magnitude, a 10 ms ramp and a fixed 30 ms run (1500 steps,
    # platform and rods in motion), poses within 1e-9 m (round-off of a 0.1 m robot is ~1e-16 m;
    # 1e-9 m leaves room for its growth over the run only, not for a lag or a missed operator).
    p = _params(ramp_time=0.01)
    angles = primitive_angles("bend_north", 1.0, p)
    kw = dict(settle=SettleOptions(max_time=0.03), stop_when_settled=False, record=True)
    fast = solve_steady_state(p, angles, **kw)  # type: ignore[arg-type]
    ref = solve_steady_state(p, angles, fast=False, **kw)  # type: ignore[arg-type]
    assert fast.n_steps == ref.n_steps == 1500
    assert fast.sim_time_s == ref.sim_time_s
    assert np.linalg.norm(ref.platform_position_m - p.rod.length * np.array([0, 0, 1])) > 1e-4
    np.testing.assert_allclose(fast.platform_position_m, ref.platform_position_m, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.rod_tip_positions_m, ref.rod_tip_positions_m, rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        fast.platform_quaternion_xyzw, ref.platform_quaternion_xyzw, rtol=0, atol=1e-9
    )
    assert fast.diagnostics is not None and ref.diagnostics is not None
    assert fast.diagnostics.shape == ref.diagnostics.shape
    np.testing.assert_allclose(
        fast.diagnostics.to_numpy(), ref.diagnostics.to_numpy(), rtol=0, atol=1e-9
    )
