"""Tests of the diagnostics recorders and DataFrame helpers (contract: "Diagnostics format")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from elastica import (
    BaseSystemCollection,
    CallBacks,
    Constraints,
    CosseratRod,
    Cylinder,
    Forcing,
    GravityForces,
    OneEndFixedBC,
    PositionVerlet,
)
from scipy.spatial.transform import Rotation

from hsa_elastica.io.recording import (
    RigidBodyRecorder,
    RodRecorder,
    combine,
    directors,
    node_positions,
)


class _Sim(BaseSystemCollection, Constraints, Forcing, CallBacks):
    pass


N_ELEM = 8


def _rod(direction=(0.0, 0.0, 1.0), normal=(1.0, 0.0, 0.0)) -> CosseratRod:
    return CosseratRod.straight_rod(
        N_ELEM, np.zeros(3), np.array(direction, float), np.array(normal, float), 0.1, 0.01, 1050.0,
        youngs_modulus=1e6, shear_modulus=4e5)


def _cylinder() -> Cylinder:
    return Cylinder(np.array([0.0, 0.0, 0.1]), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]),
                    0.003, 0.0475, 700.0)


def _sagging_rod_run(every: int, n_steps: int, dt: float = 1e-5):
    """Cantilever sagging under gravity, with a spinning free platform recorded alongside."""
    sim = _Sim()
    rod = _rod(direction=(1.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0))
    plat = _cylinder()
    plat.omega_collection[:, 0] = [3.0, -2.0, 5.0]
    plat.velocity_collection[:, 0] = [0.1, 0.0, -0.2]
    sim.append(rod)
    sim.append(plat)
    sim.constrain(rod).using(OneEndFixedBC, constrained_position_idx=(0,),
                             constrained_director_idx=(0,))
    sim.add_forcing_to(rod).using(GravityForces, acc_gravity=np.array([0.0, 0.0, -9.81]))
    rec = RodRecorder(every=every).attach(sim, rod)
    prec = RigidBodyRecorder(every=every).attach(sim, plat)
    sim.finalize()
    ts = PositionVerlet()
    t = 0.0
    truth_pos = [rod.position_collection.copy()]
    truth_dir = [rod.director_collection.copy()]
    truth_q = [plat.director_collection[:, :, 0].copy()]
    for step in range(1, n_steps + 1):
        t = ts.step(sim, t, dt)
        if step % every == 0:
            truth_pos.append(rod.position_collection.copy())
            truth_dir.append(rod.director_collection.copy())
            truth_q.append(plat.director_collection[:, :, 0].copy())
    return sim, rod, plat, rec, prec, np.array(truth_pos), np.array(truth_dir), np.array(truth_q)


def test_rod_recording_sampling_reshape_and_parquet_roundtrip(tmp_path):
    every, n_steps = 7, 200
    sim, rod, plat, rec, prec, pos, dirs, _ = _sagging_rod_run(every, n_steps)
    df = rec.to_dataframe()
    # sampling count: the sample at finalize (step 0) plus one per `every` steps
    assert len(df) == n_steps // every + 1 == len(pos)
    np.testing.assert_allclose(df["time"].to_numpy(), np.arange(len(df)) * every * 1e-5, rtol=1e-12)
    # reshaped positions/directors equal the rod state at those steps (bit-exact copies)
    np.testing.assert_array_equal(node_positions(df), pos)
    np.testing.assert_array_equal(directors(df), dirs)
    assert np.abs(pos[-1] - pos[0]).max() > 1e-6  # the rod did move: the check is not vacuous
    # parquet round trip (pyarrow)
    path = tmp_path / "diag.parquet"
    df.to_parquet(path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, df)


def test_rod_column_names_follow_contract():
    sim, rod, *_ = _sagging_rod_run(5, 10)
    rec = RodRecorder(every=1)
    rec.record(rod, 0.0)
    cols = rec.to_dataframe().columns.tolist()
    n, m = N_ELEM + 1, N_ELEM
    expected = (["time"]
                + [f"position_{c}_{i}" for c in "xyz" for i in range(n)]
                + [f"velocity_{c}_{i}" for c in "xyz" for i in range(n)]
                + [f"director_{r}{c}_{k}" for r in range(3) for c in range(3) for k in range(m)]
                + [f"sigma_{c}_{k}" for c in "xyz" for k in range(m)]
                + [f"kappa_{c}_{k}" for c in "xyz" for k in range(m - 1)]
                + [f"rest_length_{k}" for k in range(m)]
                + ["base_twist_angle"])
    assert cols == expected
    assert all(pd.api.types.is_float_dtype(t) for t in rec.to_dataframe().dtypes)


def test_strains_match_pyelastica_at_sample():
    """sigma and kappa in the recording are PyElastica's definitions evaluated at the sampled
    state: recompute them with the rod's own internal-force routine and compare (round-off)."""
    sim, rod, *_ = _sagging_rod_run(50, 200)
    rec = RodRecorder(every=1)
    rec.record(rod, 0.0)
    rod.compute_internal_forces_and_torques(np.float64(0.0))  # refreshes rod.sigma, rod.kappa
    df = rec.to_dataframe()
    sigma = df[[f"sigma_{c}_{k}" for c in "xyz" for k in range(N_ELEM)]].to_numpy().reshape(3, -1)
    kappa = df[[f"kappa_{c}_{k}" for c in "xyz" for k in range(N_ELEM - 1)]].to_numpy().reshape(3, -1)
    assert np.abs(rod.kappa).max() > 1e-3  # bent: a non-trivial comparison
    np.testing.assert_allclose(sigma, rod.sigma, atol=1e-12)
    np.testing.assert_allclose(kappa, rod.kappa, rtol=1e-9, atol=1e-10)


def test_rest_length_column_reads_rod():
    rod = _rod()
    rec = RodRecorder(every=1)
    rec.record(rod, 0.0)
    rod.rest_lengths[:] *= np.linspace(1.0, 1.3, N_ELEM)  # what the auxetic coupling does
    rec.record(rod, 1.0)
    df = rec.to_dataframe()
    rest = df[[f"rest_length_{k}" for k in range(N_ELEM)]].to_numpy()
    np.testing.assert_allclose(rest[0], 0.1 / N_ELEM, rtol=1e-12)
    np.testing.assert_allclose(rest[1], 0.1 / N_ELEM * np.linspace(1.0, 1.3, N_ELEM), rtol=1e-12)


@pytest.mark.parametrize("direction", [(0.0, 0.0, 1.0), (1.0, -2.0, 0.5)])
def test_base_twist_angle_closed_form_and_unwrapping(direction):
    """Rotate element 0 about the rod's initial axis by a known sequence of angles (imposed as
    the contract's motor rotation Q0 R^T); the column returns the angle, continuous past pi."""
    d = np.array(direction) / np.linalg.norm(direction)
    normal = np.cross(d, [0.3, 0.9, 0.1])
    normal /= np.linalg.norm(normal)
    rod = _rod(direction=d, normal=normal)
    Q0 = rod.director_collection[:, :, 0].copy()
    rec = RodRecorder(every=1)
    angles = [0.0, 0.5, -1.0, 1.5, 2.8, 4.0, 5.5, 7.0, 8.0, -0.3]
    # the recorder unwraps between samples: supply steps < pi apart
    path = []
    for a0, a1 in zip(angles[:-1], angles[1:]):
        path += list(np.linspace(a0, a1, 4, endpoint=False))
    path.append(angles[-1])
    for i, phi in enumerate(path):
        R = Rotation.from_rotvec(phi * d).as_matrix()
        rod.director_collection[:, :, 0] = Q0 @ R.T
        rec.record(rod, float(i))
    got = rec.to_dataframe()["base_twist_angle"].to_numpy()
    np.testing.assert_allclose(got, path, atol=1e-12)


def test_base_twist_angle_ignores_small_tilt():
    """A tilt eps of the base element about an axis normal to the rod changes the twist angle
    only at O(eps^2) (swing-twist decomposition): tilt 1e-3 rad -> error < 1e-6 rad."""
    rod = _rod()
    Q0 = rod.director_collection[:, :, 0].copy()
    rec = RodRecorder(every=1)
    rec.record(rod, 0.0)
    R = Rotation.from_rotvec([1e-3, 0.0, 0.0]).as_matrix() @ Rotation.from_rotvec([0, 0, 0.7]).as_matrix()
    rod.director_collection[:, :, 0] = Q0 @ R.T
    rec.record(rod, 1.0)
    assert rec.to_dataframe()["base_twist_angle"].iloc[1] == pytest.approx(0.7, abs=1e-6)


def test_rigid_body_recorder_against_scipy():
    every, n_steps = 10, 100
    sim, rod, plat, rec, prec, _, _, qs = _sagging_rod_run(every, n_steps)
    df = prec.to_dataframe()
    assert df.columns.tolist() == (["time"] + [f"position_{c}" for c in "xyz"]
                                   + [f"quaternion_{c}" for c in "xyzw"]
                                   + [f"velocity_{c}" for c in "xyz"]
                                   + [f"omega_{c}" for c in "xyz"])
    assert len(df) == n_steps // every + 1
    q = df[[f"quaternion_{c}" for c in "xyzw"]].to_numpy()
    ref = Rotation.from_matrix(np.transpose(qs, (0, 2, 1))).as_quat()  # body -> lab = Q^T
    ref *= np.sign(ref[:, 3:4])
    np.testing.assert_allclose(q, ref, atol=1e-12)
    # the free platform spins: the quaternion varies, omega stays in the body frame
    assert np.ptp(q[:, 0]) > 1e-3
    np.testing.assert_allclose(df[["omega_x", "omega_y", "omega_z"]].to_numpy()[-1],
                               plat.omega_collection[:, 0], atol=0)
    np.testing.assert_allclose(df[["position_x", "position_y", "position_z"]].to_numpy()[-1],
                               plat.position_collection[:, 0], atol=0)


def test_combine_prefixes_and_joins_on_time():
    sim, rod, plat, rec, prec, pos, dirs, _ = _sagging_rod_run(7, 70)
    df = combine({"rod0": rec.to_dataframe(), "platform": prec.to_dataframe()})
    assert df.columns[0] == "time"
    assert "rod0/position_x_0" in df.columns and "platform/quaternion_w" in df.columns
    assert "rod0/base_twist_angle" in df.columns
    assert len(df) == len(pos)
    assert not df.isna().any().any()
    np.testing.assert_array_equal(node_positions(df, prefix="rod0/"), pos)
    np.testing.assert_array_equal(directors(df, prefix="rod0/"), dirs)
    with pytest.raises(KeyError):
        node_positions(df)  # no unprefixed rod columns in a combined frame


def test_combine_different_rates_outer_join():
    a = pd.DataFrame({"time": [0.0, 1.0, 2.0], "v": [1.0, 2.0, 3.0]})
    b = pd.DataFrame({"time": [0.0, 2.0], "v": [5.0, 6.0]})
    df = combine({"rod0": a, "platform": b})
    assert df["time"].tolist() == [0.0, 1.0, 2.0]
    assert np.isnan(df["platform/v"].iloc[1]) and df["platform/v"].iloc[2] == 6.0


def test_using_directly_and_fps_sampling():
    """The recorder also works when PyElastica instantiates it (``.using``), and fps + dt
    gives every = round(1 / (fps dt))."""
    assert RodRecorder(fps=100.0, dt=4e-5).every == 250
    assert RodRecorder(fps=1e9, dt=1e-5).every == 1
    sim = _Sim()
    rod = _rod()
    sim.append(rod)
    sim.collect_diagnostics(rod).using(RodRecorder, fps=1000.0, dt=1e-4)  # every 10 steps
    sim.finalize()


@pytest.mark.parametrize("kw", [dict(every=0), dict(every=2.5), dict(fps=10.0),
                                dict(fps=-1.0, dt=1e-3), dict(every=3, fps=1.0, dt=1.0),
                                dict(fps=10.0, dt=float("nan"))])
def test_invalid_sampling_arguments(kw):
    with pytest.raises(ValueError, match="RodRecorder"):
        RodRecorder(**kw)


def test_rod_sample_is_the_arrays_strains_and_twist_bit_for_bit():
    """One compiled call fills a sample (``recording.rod_sample``): the row holds the rod's
    own arrays copied, the strains of ``rod_strains`` and the twist of
    ``actuation.base_twist_angle``, bit for bit (the rod a view of its memory block,
    bent, sagging and turned about its base axis)."""
    from hsa_elastica.io.recording import rod_strains
    from hsa_elastica.physics.actuation import base_twist_angle

    sim, rod, _, rec, _, *_ = _sagging_rod_run(every=50, n_steps=200)
    assert not rod.position_collection.flags.owndata  # a view into the memory block
    c, s = np.cos(0.4), np.sin(0.4)
    rod.director_collection[:, :, 0] = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]) @ (
        rod.director_collection[:, :, 0])
    rec.record(rod, 1.0)
    row = rec.to_array()[-1]
    n = N_ELEM
    sigma, kappa = np.empty((3, n)), np.empty((3, n - 1))
    rod_strains(rod.position_collection, rod.director_collection, rod.rest_lengths,
                rod.rest_voronoi_lengths, sigma, kappa)
    expected = np.concatenate([
        [1.0], rod.position_collection.ravel(), rod.velocity_collection.ravel(),
        rod.director_collection.ravel(), sigma.ravel(), kappa.ravel(), rod.rest_lengths,
        [base_twist_angle(rod, rec._director0)]])
    np.testing.assert_array_equal(row, expected)
    assert abs(row[-1]) > 0.3  # the turn of element 0 is read (rad)


@pytest.mark.parametrize("fps, dt", [(100.0, 2e-3), (30.0, 1e-3), (1.0 / 10.5e-3, 1e-3),
                                     (700.0, 1e-3), (33.0, 5e-4)])
def test_sample_steps_are_the_steps_one_at_a_time(fps: float, dt: float) -> None:
    # the steps of a range at once (the settling loop's batches) against is_sample_step
    rec = RodRecorder(fps=fps, dt=dt)
    for first, last in ((0, 0), (0, 400), (17, 351), (1000, 1003)):
        expected = [s for s in range(first, last + 1) if rec.is_sample_step(s)]
        assert rec.sample_steps(first, last).tolist() == expected
