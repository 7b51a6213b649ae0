"""Tests of the actuation operators (paper Section II-D, hsa_elastica/actuation.py).

References are closed forms (smoothstep polynomial values, torsion of a uniform rod) or
independent scipy rotation algebra; the rod is the Table I (4 rows) tube with dt = 1e-4 s and
damping rates of 300 1/s (see test_auxetics.py for the choice).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import (
    TABLE1_ROW4,
    RodSimulator,
    add_rate_damping,
    make_tube_rod,
    run_steps,
)
from elastica import EndpointForces
from scipy.spatial.transform import Rotation

from hsa_elastica.physics.actuation import (
    BaseTwistTorque,
    DistalTwistLockBC,
    FreeTwistBC,
    MotorAngleBC,
    Ramp,
    base_twist_angle,
    twist_about_axis,
)
from hsa_elastica.params import ParameterError

L = TABLE1_ROW4["length"]
N = TABLE1_ROW4["n_elements"]
ELEM = L / N
B_Z = TABLE1_ROW4["twist_rigidity"]
DT = 1e-4
RATE = 300.0


def scipy_twist(reference: np.ndarray, current: np.ndarray) -> float:
    """Twist of ``current`` about the reference axis (swing-twist via quaternions, scipy).

    Directors are rows (lab -> local); the rotation taking the reference frame to the current
    one is R = current^T reference (lab frame).  Its twist about the reference d3 is
    2 atan2(q_vec . a, q_w), wrapped to (-pi, pi] (q and -q are the same rotation).
    """
    R = Rotation.from_matrix(current.T @ reference)
    x, y, z, w = R.as_quat()
    a = reference[2]
    return math.remainder(2.0 * math.atan2(np.dot([x, y, z], a), w), 2.0 * math.pi)


# ------------------------------------------------------------------------------------------
# Ramp
# ------------------------------------------------------------------------------------------
def test_linear_ramp_values() -> None:
    r = Ramp(target=2.0, duration=0.5, shape="linear", start=1.0, delay=0.1)
    assert r(0.0) == 1.0 and r(0.1) == 1.0
    assert r(0.35) == pytest.approx(1.5)  # half way
    assert r(0.6) == 2.0 and r(10.0) == 2.0
    assert r.rate(0.3) == pytest.approx(2.0)  # (2 - 1) / 0.5
    assert r.rate(0.05) == 0.0 and r.rate(0.7) == 0.0


def test_smooth_ramp_is_quintic_smoothstep() -> None:
    """s(x) = 10x^3 - 15x^4 + 6x^5: s(1/4) = 0.103515625, s(1/2) = 1/2, s'(1/2) = 15/8 / T;
    C2: rate and its slope vanish at both ends (checked by finite differences)."""
    r = Ramp(target=3.0, duration=2.0)
    assert r.shape == "smooth"
    assert r(0.5) == pytest.approx(3.0 * 0.103515625, rel=1e-14)
    assert r(1.0) == pytest.approx(1.5, rel=1e-14)
    assert r.rate(1.0) == pytest.approx(3.0 * 15.0 / 8.0 / 2.0, rel=1e-14)
    h = 1e-6
    for t in (0.3, 1.0, 1.7):
        assert r.rate(t) == pytest.approx((r(t + h) - r(t - h)) / (2 * h), rel=1e-7)
    for t_end in (0.0, 2.0):
        assert abs(r.rate(t_end)) < 1e-12
        # second derivative ~ 0 near the ends: rate(t_end +- 1e-3) = O(1e-6)
        assert abs(r.rate(min(max(t_end, 1e-3), 2.0 - 1e-3))) < 1e-4


def test_step_ramp() -> None:
    r = Ramp(target=-1.0, duration=0.0, delay=0.2)
    assert r(0.19999) == 0.0 and r(0.2) == -1.0 and r.rate(0.2) == 0.0


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(target=1.0, duration=-1.0), "duration"),
        (dict(target=1.0, duration=float("nan")), "duration"),
        (dict(target=float("inf"), duration=1.0), "target"),
        (dict(target=1.0, duration=1.0, shape="cubic"), "shape"),
        (dict(target=1.0, duration=1.0, delay=-0.1), "delay"),
        (dict(target=1.0, duration=1.0, start="a"), "start"),
    ],
)
def test_bad_ramp_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ParameterError, match=f"Ramp.{field} ="):
        Ramp(**kwargs)


# ------------------------------------------------------------------------------------------
# rotation helpers
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("psi", [-2.5, -0.3, 0.0, 0.7, 3.0])
def test_twist_angle_matches_scipy_and_ignores_swing(psi: float) -> None:
    rng = np.random.default_rng(7)
    reference = Rotation.random(random_state=11).as_matrix().T  # rows = frame axes
    a = reference[2]
    swing_axis = np.cross(a, rng.normal(size=3))
    swing = Rotation.from_rotvec(0.4 * swing_axis / np.linalg.norm(swing_axis))
    twist = Rotation.from_rotvec(psi * a)
    current = (swing * twist).as_matrix() @ reference.T  # columns = rotated axes
    current = current.T
    expected = scipy_twist(reference, current)
    assert expected == pytest.approx(psi, abs=1e-12)
    assert twist_about_axis(reference, current) == pytest.approx(expected, abs=1e-12)


# ------------------------------------------------------------------------------------------
# boundary conditions in a simulation
# ------------------------------------------------------------------------------------------
def _sim(rod_force: tuple[float, float, float] | None = None) -> tuple[RodSimulator, object]:
    sim = RodSimulator()
    rod = make_tube_rod(**TABLE1_ROW4)
    sim.append(rod)
    if rod_force is not None:
        sim.add_forcing_to(rod).using(
            EndpointForces,
            start_force=np.zeros(3),
            end_force=np.array(rod_force, float),
            ramp_up_time=0.02,
        )
    return sim, rod


def test_motor_angle_bc_follows_the_ramp() -> None:
    """During the ramp the base element is at phi(t) (rotation about its own d3, right-hand)
    and the base node stays put, while the rest of the rod follows dynamically."""
    ramp = Ramp(target=1.2, duration=0.02, shape="smooth")
    sim, rod = _sim(rod_force=(0.01, 0.0, 0.0))
    reference = rod.director_collection[..., 0].copy()
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,), angle=ramp
    )
    add_rate_damping(sim, rod, DT, RATE, RATE)
    t = 0.0
    for _ in range(30):
        t = run_steps(sim, DT, 10, t)
        Q0 = rod.director_collection[..., 0]
        assert scipy_twist(reference, Q0) == pytest.approx(ramp(t), abs=1e-12)
        np.testing.assert_allclose(Q0[2], reference[2], atol=1e-14)  # axis unchanged
        np.testing.assert_array_equal(rod.position_collection[:, 0], 0.0)
        # right-hand rule about +z: d1 = (cos phi, sin phi, 0) for d1 = x initially
        np.testing.assert_allclose(Q0[0], [math.cos(ramp(t)), math.sin(ramp(t)), 0], atol=1e-14)
    assert rod.position_collection[0, -1] > 1e-6  # the rod bent under the tip load


def test_motor_angle_constant_float() -> None:
    sim, rod = _sim()
    sim.constrain(rod).using(
        MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,), angle=-0.4
    )
    reference = rod.director_collection[..., 0].copy()
    run_steps(sim, DT, 5)
    assert base_twist_angle(rod, reference) == pytest.approx(-0.4, abs=1e-12)


def test_free_twist_bc_and_base_torque_torsion() -> None:
    """FreeTwistBC + BaseTwistTorque(tau) + DistalTwistLockBC, no coupling: a uniform rod is a
    torsion spring of rigidity B_z / ((n-1) l) (n-1 Voronoi regions of length l), so
    phi = tau (n-1) l / B_z = +0.54 rad for tau = +0.03 N m (positive torque about +z turns
    the base positively).  Tolerance 1e-6 (static equilibrium, settled to ~1e-12)."""
    tau = 0.03
    sim, rod = _sim()
    reference = rod.director_collection[..., 0].copy()
    sim.constrain(rod).using(
        FreeTwistBC, constrained_position_idx=(0,), constrained_director_idx=(0,)
    )
    sim.add_forcing_to(rod).using(BaseTwistTorque, torque=Ramp(target=tau, duration=0.05))
    sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
    add_rate_damping(sim, rod, DT, RATE, RATE)
    run_steps(sim, DT, 3000)
    phi = base_twist_angle(rod, reference)
    assert phi == pytest.approx(tau * (N - 1) * ELEM / B_Z, rel=1e-6)
    assert scipy_twist(reference, rod.director_collection[..., 0]) == pytest.approx(phi, abs=1e-12)


def test_free_twist_bc_holds_roll_and_pitch() -> None:
    """A lateral tip load on a FreeTwistBC rod: base node fixed, base axis stays +z (roll and
    pitch held) and, with no torque about the axis, the base does not twist."""
    sim, rod = _sim(rod_force=(0.02, 0.01, 0.0))
    sim.constrain(rod).using(
        FreeTwistBC, constrained_position_idx=(0,), constrained_director_idx=(0,)
    )
    add_rate_damping(sim, rod, DT, RATE, RATE)
    run_steps(sim, DT, 2000)
    np.testing.assert_array_equal(rod.position_collection[:, 0], 0.0)
    np.testing.assert_allclose(rod.director_collection[2, :, 0], [0, 0, 1], atol=1e-12)
    assert abs(base_twist_angle(rod, np.eye(3))) < 1e-9
    assert rod.position_collection[0, -1] > 1e-4  # the rod did bend


def test_distal_twist_lock_allows_tilt_not_twist() -> None:
    """Motor angle 0.8 rad at the base, lateral tip load: with the lock the tip element tilts
    (its axis leaves +z) but its twist (scipy swing-twist) stays 0; without the lock the free
    rod turns rigidly and the tip twist is the motor angle."""
    for lock, expected_twist in ((True, 0.0), (False, 0.8)):
        sim, rod = _sim(rod_force=(0.1, 0.0, 0.0))
        reference_tip = rod.director_collection[..., -1].copy()
        sim.constrain(rod).using(
            MotorAngleBC, constrained_position_idx=(0,), constrained_director_idx=(0,),
            angle=Ramp(target=0.8, duration=0.05),
        )
        if lock:
            sim.constrain(rod).using(DistalTwistLockBC, constrained_director_idx=(-1,))
        add_rate_damping(sim, rod, DT, RATE, RATE)
        run_steps(sim, DT, 3000)
        tip = rod.director_collection[..., -1]
        tilt = math.acos(min(1.0, float(tip[2] @ reference_tip[2])))
        assert tilt > 0.005  # F L^2 / (2 B_xy) ~ 0.013 rad
        assert scipy_twist(reference_tip, tip) == pytest.approx(expected_twist, abs=1e-6)


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------
def _direct(cls: type, *fixed: np.ndarray, **kwargs: object) -> object:
    rod = make_tube_rod(**TABLE1_ROW4)
    return cls(*fixed, _system=rod, **kwargs)


def test_bad_actuation_parameters_name_the_field() -> None:
    p, q = np.zeros(3), np.eye(3)
    with pytest.raises(ParameterError, match="MotorAngleBC.angle ="):
        _direct(MotorAngleBC, p, q, angle="ninety", constrained_position_idx=(0,),
                constrained_director_idx=(0,))
    with pytest.raises(ParameterError, match="MotorAngleBC.angle ="):
        _direct(MotorAngleBC, p, q, angle=float("nan"), constrained_position_idx=(0,),
                constrained_director_idx=(0,))
    with pytest.raises(ParameterError, match="MotorAngleBC.constrained_director_idx ="):
        _direct(MotorAngleBC, p, q, angle=0.1, constrained_position_idx=(0,),
                constrained_director_idx=(0, 1))
    with pytest.raises(ParameterError, match="FreeTwistBC.constrained_position_idx ="):
        _direct(FreeTwistBC, p, q, constrained_position_idx=(), constrained_director_idx=(0,))
    with pytest.raises(ParameterError, match="DistalTwistLockBC.constrained_position_idx ="):
        _direct(DistalTwistLockBC, q, constrained_position_idx=(-1,),
                constrained_director_idx=(-1,))
    with pytest.raises(ParameterError, match="BaseTwistTorque.torque ="):
        BaseTwistTorque(torque=float("inf"))
    with pytest.raises(ParameterError, match="BaseTwistTorque.element_index ="):
        BaseTwistTorque(torque=0.1, element_index=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reference_directors"):
        base_twist_angle(make_tube_rod(**TABLE1_ROW4), np.eye(2))


def test_twist_lock_gradient_equals_central_differences_of_the_lock() -> None:
    """The twist the lock adds when a tilted locked element turns about its own x or y
    (``twist_lock_gradient``) against central differences of ``remove_twist`` (step 1e-6 rad:
    truncation O(1e-12), round-off ~1e-10); the gradient is of order the tilt (about 0.3 rad here:
    measured -0.171 and 0.067, the kernel within 2e-11), so a missing or sign-flipped term
    fails by far more than the bound 1e-8."""
    from hsa_elastica.physics.actuation import remove_twist, twist_lock_gradient

    rng = np.random.default_rng(5)
    reference = Rotation.from_rotvec(rng.normal(0.0, 1.0, 3)).as_matrix()
    tilted = Rotation.from_rotvec(0.3 * rng.normal(0.0, 1.0, 3)).as_matrix() @ reference
    locked = np.empty((3, 3))
    remove_twist(reference, tilted, locked)

    def twist(w: np.ndarray) -> float:
        turned = Rotation.from_rotvec(-w).as_matrix() @ locked  # exp(-[w]) Q, local w
        out = np.empty((3, 3))
        remove_twist(reference, turned, out)
        r = out @ turned.T  # exp(-[tau e3]) = [[cos, sin, 0], [-sin, cos, 0], [0, 0, 1]]
        return math.atan2(r[0, 1], r[0, 0])

    h = 1e-6
    fd = [(twist(h * e) - twist(-h * e)) / (2.0 * h) for e in np.eye(3)[:2]]
    exact = twist_lock_gradient(reference, locked)
    print("twist per radian of swing:", fd, "kernel:", exact)
    assert max(abs(x) for x in fd) > 0.1  # the tilt couples swing and twist
    assert np.allclose(exact, fd, rtol=0.0, atol=1e-8)
    untilted = np.empty((3, 3))
    remove_twist(reference, reference, untilted)
    assert np.allclose(twist_lock_gradient(reference, untilted), 0.0, rtol=0.0, atol=1e-15)
