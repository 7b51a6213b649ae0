"""Tests of the time loop: step count, final time, divergence detection without data loss."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from elastica import (
    BaseSystemCollection,
    CallBacks,
    Connections,
    Constraints,
    CosseratRod,
    Cylinder,
    Forcing,
    GravityForces,
    OneEndFixedBC,
    PositionVerlet,
)

from hsa_elastica.physics.joints import PlatformJoint
from hsa_elastica.io.recording import RigidBodyRecorder, RodRecorder
from hsa_elastica.engines.timeloop import SimulationDiverged, run


class _Sim(BaseSystemCollection, Constraints, Forcing, Connections, CallBacks):
    pass


def _build(every=10, k_F=None):
    sim = _Sim()
    rods = []
    for i in range(3):
        rod = CosseratRod.straight_rod(
            10, np.array([0.05 * i, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]),
            np.array([1.0, 0.0, 0.0]), 0.1, 0.0127, 1050.0, youngs_modulus=1e6, shear_modulus=4e5)
        sim.append(rod)
        sim.constrain(rod).using(OneEndFixedBC, constrained_position_idx=(0,),
                                 constrained_director_idx=(0,))
        sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([9.81, 0.0, 0.0]))
        rods.append(rod)
    plat = Cylinder(np.array([0.0, 0.0, 0.2]), np.array([0.0, 0.0, 1.0]),
                    np.array([1.0, 0.0, 0.0]), 0.003, 0.0475, 700.0)
    sim.append(plat)
    if k_F is not None:  # platform hanging on rod 2's tip
        sim.connect(rods[2], plat, -1, 0).using(PlatformJoint, k_F=k_F, k_tau=1.0,
                                                attachment_point=np.array([-0.1, 0.0, -0.0015]))
    recs = [RodRecorder(every=every).attach(sim, r) for r in rods]
    prec = RigidBodyRecorder(every=every).attach(sim, plat)
    sim.finalize()
    return sim, rods, plat, recs, prec


def test_run_steps_and_final_time_and_continuation():
    sim, rods, plat, recs, prec = _build(every=10)
    dt = 1e-5
    t = run(sim, PositionVerlet(), duration=1e-3, dt=dt, check_every=30)
    # 1e-3 / 1e-5 = 100 steps exactly (the ceil tolerates the float quotient 99.999...)
    assert t == pytest.approx(1e-3, rel=1e-12)
    assert recs[0].n_samples == 100 // 10 + 1
    t = run(sim, PositionVerlet(), duration=5e-4, dt=dt, time=t, progress=True)
    assert t == pytest.approx(1.5e-3, rel=1e-12)
    df = recs[2].to_dataframe()
    assert len(df) == 150 // 10 + 1
    np.testing.assert_allclose(np.diff(df["time"]), 10 * dt, rtol=1e-9)
    assert run(sim, PositionVerlet(), duration=0.0, dt=dt, time=t) == t


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # overflow in the blow-up is the point
def test_divergence_raises_with_time_and_name_and_keeps_samples():
    """A stiff joint (k_F = 1e6 N/m between rod 2's tip node (~5 g) and the platform (~15 g):
    omega >~ 8e3 rad/s) stepped with dt = 2e-3 s, far beyond Verlet's limit omega dt < 2,
    grows exponentially (a linear spring does not saturate) until the state overflows. The
    exception names the system and the simulated time of the failing check; the recorders keep
    every sample, finite ones included."""
    sim, rods, plat, recs, prec = _build(every=5, k_F=1e6)
    dt = 2e-3
    caught = []
    with pytest.raises(SimulationDiverged) as info:
        # speed/stretch bounds off: this test is about the non-finite check
        run(sim, PositionVerlet(), duration=10.0, dt=dt, check_every=20,
            max_speed=np.inf, max_stretch=np.inf,
            systems_names={rods[0]: "rod 0 (right-handed)", 1: "rod 1 (left-handed)",
                           rods[2]: "rod 2 (left-handed)", plat: "platform"},
            on_diverge=caught.append)
    exc = info.value
    assert caught == [exc]
    # rod 2 is checked before the platform (append order); rods 0 and 1 stay finite
    assert exc.name == "rod 2 (left-handed)"
    assert "rod 2 (left-handed)" in str(exc) and f"{exc.time:.6g}" in str(exc)
    n_steps_at_check = round(exc.time / dt)
    assert n_steps_at_check % 20 == 0 and 0 < n_steps_at_check < 10.0 / dt
    assert exc.last_good_time == pytest.approx(exc.time - 20 * dt, rel=1e-9)
    df = recs[2].to_dataframe()
    assert len(df) == n_steps_at_check // 5 + 1  # nothing lost: a sample every 5 steps
    good = df[df["time"] <= exc.last_good_time + 0.5 * dt]
    assert len(good) >= 1 and np.isfinite(good.to_numpy()).all()
    assert not np.isfinite(df.iloc[-1].to_numpy()).all()
    # rod 0, not connected, recorded normally
    assert np.isfinite(recs[0].to_dataframe().to_numpy()).all()
    # picklable (e.g. across multiprocessing workers)
    back = pickle.loads(pickle.dumps(exc))
    assert (back.time, back.name, str(back)) == (exc.time, exc.name, str(exc))


def test_finite_blow_up_caught_by_speed_bound():
    """Free rods (no joint) stepped with dt = 2e-3 s, six times the axial wave time
    l / sqrt(E / rho) = 0.01 m / 31 m/s = 3.2e-4 s of their elements: Verlet is unstable but the
    state stays finite (PyElastica's rods saturate at hundreds of m/s instead of overflowing),
    so the non-finite check alone never fires.  Gravity (9.81 m/s^2 for 0.04 s) can give at
    most 0.4 m/s, so a node above the default bound of 100 m/s is a blow-up: the first check
    (step 20) raises, naming rod 0 (first in append order), the time and the speed."""
    sim, rods, plat, recs, prec = _build()
    dt = 2e-3
    run(sim, PositionVerlet(), duration=0.2, dt=dt, check_every=20,
        max_speed=np.inf, max_stretch=np.inf)  # finite: the NaN check alone passes
    assert max(np.linalg.norm(r.velocity_collection, axis=0).max() for r in rods) > 100.0
    sim, rods, plat, recs, prec = _build()
    with pytest.raises(SimulationDiverged, match=r"max_speed = 100 m/s") as info:
        run(sim, PositionVerlet(), duration=0.2, dt=dt, check_every=20,
            systems_names=["rod 0", "rod 1", "rod 2", "platform"], max_stretch=np.inf)
    exc = info.value
    assert exc.name == "rod 0" and f"t = {exc.time:.6g} s" in str(exc)
    assert exc.time == pytest.approx(20 * dt, rel=1e-9)
    assert np.isfinite(rods[0].position_collection).all()
    assert np.linalg.norm(rods[0].velocity_collection, axis=0).max() > 100.0
    assert pickle.loads(pickle.dumps(exc)).reason == exc.reason


def test_finite_blow_up_caught_by_stretch_bound():
    """A rod stretched (finite, at rest) to 3x its rest length trips the default bound of 2x;
    1.5x does not (the bound is on sum |x_i+1 - x_i| / sum rest_lengths, here 0.15 / 0.1).
    Tiny dt and gravity only: the stretch does not change within the one step taken."""
    sim, rods, plat, recs, prec = _build()
    base = rods[1].position_collection[:, :1].copy()
    rods[1].position_collection[:] = base + 1.5 * (rods[1].position_collection - base)
    run(sim, PositionVerlet(), duration=1e-9, dt=1e-9)  # 1.5x: no error
    rods[1].position_collection[:] = base + 2.0 * (rods[1].position_collection - base)  # 3x
    with pytest.raises(SimulationDiverged, match=r"rod 1 .* is 300 mm long, 3 times its rest") as info:
        run(sim, PositionVerlet(), duration=1e-9, dt=1e-9, time=1.0)
    assert info.value.time == pytest.approx(1.0 + 1e-9, abs=1e-15)
    assert "max_stretch = 2" in str(info.value)
    # the bound is a parameter
    run(sim, PositionVerlet(), duration=1e-9, dt=1e-9, max_stretch=3.5)


def test_default_names_and_sequence_names():
    sim, rods, plat, recs, prec = _build()
    rods[1].velocity_collection[0, 3] = np.nan
    with pytest.raises(SimulationDiverged, match=r"rod 1 \(system 1, CosseratRod\)"):
        run(sim, PositionVerlet(), duration=1e-4, dt=1e-5)
    sim, rods, plat, recs, prec = _build()
    plat.position_collection[2, 0] = np.inf
    with pytest.raises(SimulationDiverged, match="the platform"):
        run(sim, PositionVerlet(), duration=1e-4, dt=1e-5,
            systems_names=["a", "b", "c", "the platform"])
    with pytest.raises(ValueError, match="systems_names"):
        run(sim, PositionVerlet(), duration=1e-4, dt=1e-5, systems_names=["a"])


@pytest.mark.parametrize("kw,name", [(dict(duration=-1.0, dt=1e-5), "duration"),
                                     (dict(duration=1.0, dt=0.0), "dt"),
                                     (dict(duration=np.nan, dt=1e-5), "duration"),
                                     (dict(duration=1.0, dt=1e-5, check_every=0), "check_every"),
                                     (dict(duration=1.0, dt=1e-5, max_speed=0.0), "max_speed"),
                                     (dict(duration=1.0, dt=1e-5, max_stretch=np.nan), "max_stretch")])
def test_invalid_arguments(kw, name):
    sim, *_ = _build()
    with pytest.raises(ValueError, match=name):
        run(sim, PositionVerlet(), **kw)
