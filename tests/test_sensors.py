"""Sensors in the recording: motor angles and torques, joint wrenches, platform twist,
and the unit/frame metadata of every Parquet column.

Physics checks use numbers that do not come from the sensor code:

* at a static pose the motor torque (read as the reaction of the base element) equals minus
  the rod's internal twist couple at its first Voronoi domain, ``B_zz (kappa_z - kappa0_z) /
  eps_v^3``, with ``kappa`` recomputed from positions and directors
  (:func:`hsa_elastica.io.recording.rod_strains`);
* at rest the joint forces on the rods sum to the platform's weight and their moments about the
  platform's centre of mass cancel (Newton's second law on the platform, Euler's for moments);
* the per-rod path and the fused path record the same sensor values (round-off only).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.experiments.dataset_chunks import arrow_schema, column_docs
from hsa_elastica.io.columns import (
    METADATA_KEY,
    column_metadata,
    read_column_metadata,
    write_parquet,
)
from hsa_elastica.io.recording import rod_strains
from hsa_elastica.io.rundir import load_run, save_run
from hsa_elastica.io.sensors import sensor_columns
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.builders import build_robot

G = 9.81  # m/s^2
ANGLES = [1.0, -0.3, 0.5, -1.2]  # rad, inside each rod's elongating range (R, L, R, L)


def _params(**sim: object):  # type: ignore[no-untyped-def]
    # 10 elements and dt = 5e-5 s: a coarse but stable robot, so the test reaches rest fast
    p = paper_robot_params()
    s: dict[str, object] = dict(
        dt=5e-5, ramp_time=0.05, record_fps=50.0, damping=50.0, gravity=(0.0, 0.0, -G)
    )
    s.update(sim)
    return dataclasses.replace(
        p,
        rod=dataclasses.replace(p.rod, n_elements=10),
        simulation=dataclasses.replace(p.simulation, **s),
    )


@pytest.fixture(scope="module")
def at_rest() -> FastRobot:
    robot = FastRobot(build_robot(_params(), ANGLES, record=True))
    robot.run(0.5)  # ramp 0.05 s, then 0.45 s at 50 1/s damping: speeds ~1e-9 m/s
    return robot


def _last(robot: FastRobot) -> pd.Series:
    return robot.diagnostics().iloc[-1]


def test_sensor_columns_recorded(at_rest: FastRobot) -> None:
    df = at_rest.diagnostics()
    cols = [c for c in df.columns if c.startswith("sensors/")]
    assert cols == [f"sensors/{c}" for c in sensor_columns(4)[1:]]
    assert not df[cols].isna().to_numpy().any()
    last = df.iloc[-1]
    for i, a in enumerate(ANGLES):
        assert last[f"sensors/motor_angle_command_{i}"] == a
        # the base element is turned by exactly the imposed angle (round-off of the rotation)
        assert last[f"sensors/motor_angle_{i}"] == pytest.approx(a, abs=1e-12)
    # platform twist in the lab frame: the recorder's lab velocity, and the body-frame omega
    # rotated to the lab frame
    np.testing.assert_array_equal(
        [last[f"sensors/platform_velocity_{c}"] for c in "xyz"],
        [last[f"platform/velocity_{c}"] for c in "xyz"],
    )
    Q = at_rest.platform.director_collection[:, :, 0]
    np.testing.assert_allclose(
        [last[f"sensors/platform_angular_velocity_{c}"] for c in "xyz"],
        Q.T @ np.array([last[f"platform/omega_{c}"] for c in "xyz"]),
        rtol=0, atol=1e-15,
    )


def test_motor_torque_is_the_base_twist_couple_at_rest(at_rest: FastRobot) -> None:
    last = _last(at_rest)
    for i, rod in enumerate(at_rest.rods):
        ne = rod.director_collection.shape[2]
        sigma, kappa = np.empty((3, ne)), np.empty((3, ne - 1))
        rod_strains(rod.position_collection, rod.director_collection, rod.rest_lengths,
                    rod.rest_voronoi_lengths, sigma, kappa)
        lengths = np.linalg.norm(np.diff(rod.position_collection, axis=1), axis=0)
        eps_v = 0.5 * (lengths[0] + lengths[1]) / rod.rest_voronoi_lengths[0]
        couple = rod.bend_matrix[2, 2, 0] * (kappa[2, 0] - rod.rest_kappa[2, 0]) / eps_v**3
        # the motor balances the couple the rod exerts on its base element.  1e-6 relative:
        # the bend-twist (kappa x B kappa) and shear terms of the base element's torque have
        # no z part for a symmetric section, the rest is residual motion (speeds ~1e-9 m/s)
        # and the half-step lag of the reading; a sign or dilatation error is O(1)
        assert abs(couple) > 1e-2  # N m: a loaded motor
        assert last[f"sensors/motor_torque_{i}"] == pytest.approx(-couple, rel=1e-6)
        assert np.sign(last[f"sensors/motor_torque_{i}"]) == np.sign(ANGLES[i])


def test_joint_wrenches_balance_the_platform_at_rest(at_rest: FastRobot) -> None:
    last = _last(at_rest)
    F = np.array([[last[f"sensors/joint_force_{c}_{i}"] for c in "xyz"] for i in range(4)])
    T = np.array([[last[f"sensors/joint_torque_{c}_{i}"] for c in "xyz"] for i in range(4)])
    weight = float(at_rest.platform.mass[0]) * G
    # Newton: the platform gets -F_i from each joint and its weight; 1e-5 of the weight (1.5 uN)
    # covers the residual motion: the joint springs (k_F = 5e5 N/m) turn a 1e-12 m jitter of a
    # tip node into 5e-7 N (seen: 4e-7 N); a missing rod or a wrong sign is O(weight)
    np.testing.assert_allclose(F.sum(axis=0), [0.0, 0.0, -weight], rtol=0, atol=1e-5 * weight)
    # the rods of this uneven pose pull and push with forces ~20x the weight: the balance is
    # a cancellation, not a small number checked against a small number
    assert np.abs(F[:, 2]).max() > 10.0 * weight
    # Euler about the centre of mass (gravity has no moment there): the joint forces at the
    # attachment points and the joint torques on the platform (-T_i) cancel
    Q = at_rest.platform.director_collection[:, :, 0]
    arms = [Q.T @ a for a in at_rest.attachment_points]
    moment = sum(np.cross(r, -f) - t for r, f, t in zip(arms, F, T))
    scale = max(np.abs(T).max(), np.abs(F).max() * np.linalg.norm(arms[0]))
    np.testing.assert_allclose(moment, 0.0, rtol=0, atol=1e-5 * scale)


def test_a_payload_loads_the_joints_with_its_weight() -> None:
    # PlatformParams.payload_mass [kg] rides at the platform centre: at rest the joints carry
    # the disc and the payload (Newton), and the payload's weight alone is the difference
    p = _params()
    payload = 0.05  # kg, ~3x the disc
    heavy = dataclasses.replace(p, platform=dataclasses.replace(p.platform, payload_mass=payload))
    sums = []
    for params in (p, heavy):
        robot = FastRobot(build_robot(params, ANGLES, record=True))
        robot.run(0.5)
        last = _last(robot)
        sums.append(sum(last[f"sensors/joint_force_z_{i}"] for i in range(4)))
    disc = p.platform.mass
    # 1e-5 of the weights: the residual motion at rest, as above
    assert sums[0] == pytest.approx(-disc * G, abs=1e-5 * disc * G)
    assert sums[1] == pytest.approx(-(disc + payload) * G, abs=1e-5 * (disc + payload) * G)


def test_both_paths_record_the_same_sensors() -> None:
    p = _params(record_fps=1000.0, ramp_time=0.01, gravity=(0.0, 0.0, -G))
    ref = build_robot(p, ANGLES, record=True)
    fast = FastRobot(build_robot(p, ANGLES, record=True))
    for robot in (ref, fast):
        robot.run(0.005)
        robot.set_motor_angles([0.5, -0.5, 0.5, -0.5])
        robot.step(0.005)
    a = ref.diagnostics().filter(like="sensors/")
    b = fast.diagnostics().filter(like="sensors/")
    assert a.shape == b.shape and a.shape[0] == 11  # samples every 1 ms (t = 0 excluded)
    # round-off only, as tests/test_fast.py (1e-10 of each column's scale)
    scale = np.maximum(a.abs().max().to_numpy(), 1e-12)
    assert np.all(np.abs(a.to_numpy() - b.to_numpy()) <= 1e-10 * scale)
    # the commanded angle follows the step API; the measured one the imposed ramp
    assert list(b.iloc[-1][[f"sensors/motor_angle_command_{i}" for i in range(4)]]) == [
        0.5, -0.5, 0.5, -0.5
    ]


def test_run_directory_metadata_round_trips(tmp_path, at_rest: FastRobot) -> None:  # type: ignore[no-untyped-def]
    df = at_rest.diagnostics()
    save_run(tmp_path / "run", df, at_rest.params, {"note": "test"})
    meta = read_column_metadata(tmp_path / "run" / "diagnostics.parquet")
    assert meta == column_metadata(df.columns)
    assert set(meta) == set(df.columns)
    unknown = [c for c, m in meta.items() if m["unit"] == "?" or m["frame"] == "?"]
    assert unknown == []
    assert meta["time"]["unit"] == "s"
    assert (meta["sensors/motor_torque_2"]["unit"], meta["sensors/motor_torque_2"]["frame"]) == ("N m", "motor")
    assert (meta["sensors/joint_force_z_1"]["unit"], meta["sensors/joint_force_z_1"]["frame"]) == ("N", "robot_base")
    assert (meta["platform/omega_x"]["unit"], meta["platform/omega_x"]["frame"]) == ("rad/s", "body")
    assert (meta["rod3/kappa_z_4"]["unit"], meta["rod3/kappa_z_4"]["frame"]) == ("1/m", "material")
    assert (meta["rod0/position_y_10"]["unit"], meta["rod0/position_y_10"]["frame"]) == ("m", "robot_base")
    loaded = load_run(tmp_path / "run")
    pd.testing.assert_frame_equal(loaded.diagnostics, df.reset_index(drop=True))
    assert loaded.diagnostics.attrs["columns"] == meta
    import pyarrow.parquet as pq

    stored = pq.read_schema(tmp_path / "run" / "diagnostics.parquet").metadata
    assert json.loads(stored[METADATA_KEY.encode()]) == meta


def test_dataset_chunk_metadata_round_trips(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pyarrow.parquet as pq

    schema = arrow_schema(4, True)
    path = tmp_path / "chunk.parquet"
    pq.write_table(schema.empty_table(), path)
    meta = read_column_metadata(path)
    docs = {c["name"]: c for c in column_docs(4, True)}
    assert set(meta) == set(docs)
    for name, m in meta.items():
        assert m == {k: docs[name][k] for k in ("unit", "frame", "description")}
    assert (meta["motor_angles_rad_1"]["unit"], meta["motor_angles_rad_1"]["frame"]) == ("rad", "motor")
    kappa = meta["rod_curvatures_per_m_2_twist"]
    assert (kappa["unit"], kappa["frame"]) == ("1/m", "material")
    assert meta["platform_quaternion_xyzw_w"]["frame"] == "body->robot_base"
    assert meta["rod_tip_positions_m_3_z"]["frame"] == "robot_base"
    stored = json.loads(pq.read_schema(path).metadata[METADATA_KEY.encode()])
    assert stored == meta


def test_write_parquet_keeps_explicit_metadata(tmp_path) -> None:  # type: ignore[no-untyped-def]
    df = pd.DataFrame({"time": [0.0, 0.1], "custom": [1.0, 2.0]})
    write_parquet(df, tmp_path / "x.parquet")
    meta = read_column_metadata(tmp_path / "x.parquet")
    assert meta["time"]["unit"] == "s" and meta["custom"]["unit"] == "?"
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "x.parquet"), df)


def test_motor_angles_of_schedules_are_evaluated_now() -> None:
    p = _params(gravity=None)
    robot = build_robot(p, [lambda t: 2.0 * t, 0.25, 0.5, lambda t: -3.0 * t], record=False)
    assert robot.motor_angles == (0.0, 0.25, 0.5, -0.0)
    robot.run(0.002)
    t = robot.time
    assert robot.motor_angles == (2.0 * t, 0.25, 0.5, -3.0 * t)
    assert not any(math.isnan(a) for a in robot.motor_angles)
    fast = FastRobot(build_robot(p, [lambda t: 2.0 * t, 0.25, 0.5, 0.0], record=False))
    fast.run(0.001)
    assert fast.motor_angles[0] == 2.0 * fast.time


@pytest.mark.parametrize("law", ["one_way", "passive"])
def test_stack_sensors_same_on_both_paths(law: str) -> None:
    # a two-segment stack (upper motors on the lower platform, MotorMountBC): each segment records
    # its sensors; the fused stepper reads the tip joints' rest orientations (and the passive
    # couplings' reciprocal couples) from its own tables
    from hsa_elastica.robots.stack import build_stack

    p = _params(record_fps=5000.0, ramp_time=0.003, gravity=(0.0, 0.0, -G))
    p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, coupling_law=law))
    u1, u2 = [0.8, -0.8, 0.8, -0.8], [0.0, 1.0, 0.0, -1.0]
    ref = build_stack([p, p], [u1, u2], motor_mass=0.05, record=True)
    fast = FastRobot(build_stack([p, p], [u1, u2], motor_mass=0.05, record=True))
    for robot in (ref, fast):
        robot.run(0.004)
    a = ref.diagnostics().filter(like="sensors/")
    b = fast.diagnostics().filter(like="sensors/")
    assert a.shape == b.shape and a.shape[0] >= 20  # every 0.2 ms over 4 ms
    assert {c.split("/")[0] for c in a.columns} == {"seg0", "seg1"}
    # motors rigidly mounted on a moving body measure their twist relative to the body: the
    # imposed angle (round-off), on both paths; everything equal on both paths
    mounted = [c for c in a.columns if c.startswith("seg1/sensors/motor_angle_")
               and "command" not in c and "imposed" not in c]
    assert len(mounted) == 4
    times = ref.diagnostics()["time"].to_numpy()
    imposed = np.array([[m.instance.angle(t) for m in ref.segments[1].motors] for t in times])
    assert np.abs(imposed).max() > 0.5  # the ramp turned the motors
    np.testing.assert_allclose(a[mounted].to_numpy(), imposed, atol=1e-12)
    # the recorded imposed angle is that schedule (a mount's own, on the moving body)
    recorded = a[[f"seg1/sensors/motor_angle_imposed_{i}" for i in range(4)]].to_numpy()
    np.testing.assert_array_equal(recorded, imposed)
    rest = list(a.columns)
    x, y = a[rest].to_numpy(), b[rest].to_numpy()
    assert np.isfinite(x).all()
    # round-off relative to each column's scale; angle columns that stay 0 (unturned motors)
    # carry round-off of the O(1) director entries (up to 6e-17 with the passive law), hence
    # the floor of 1e-6 on the scale (1e-16 absolute)
    scale = np.maximum(np.abs(x).max(axis=0), 1e-6)
    assert np.all(np.abs(x - y) <= 1e-10 * scale)
    # the upper joints carry load (the joint spring terms are read from the right rest state)
    assert np.abs(a[[c for c in rest if "seg1/sensors/joint_torque" in c]].to_numpy()).max() > 1e-6
    # the state API reads the motor torques the recorders recorded, stage by stage
    last = [f"seg{k}/sensors/motor_torque_{i}" for k in range(2) for i in range(4)]
    for robot, df in ((ref, a), (fast, b)):
        np.testing.assert_array_equal(robot.state()["motor_torques_nm"], df[last].to_numpy()[-1])


@pytest.mark.parametrize(
    ("law", "fast", "rel"),
    [
        # PyElastica's discrete rod (the one-way model) balances moments only to ~1e-5 of the
        # load at these strains (its couples are not the exact gradient of an energy), so 2e-5
        ("one_way", True, 2e-5),
        # the passive model's forces are the exact gradient of a rotation-invariant energy: its
        # balance is exact up to the residual motion after 0.5 s at 50 1/s (measured 2e-9), so
        # 1e-7; without the passive correction the reading is off by 9-160 %
        ("passive", True, 1e-7),
        ("passive", False, 1e-7),
    ],
)
def test_motor_torque_balances_each_rod_about_its_axis(law: str, fast: bool, rel: float) -> None:
    """Moment balance of each rod at rest, about its base node, along the motor axis ``d3``:
    the motor torque plus the moment of the joint's force and torque at the tip is zero (no
    gravity; the base reaction force has no moment about the base node).  The joint wrench is
    read by its own sensor; the reference is Euler's law, not the motor-torque code."""
    p = _params(gravity=(0.0, 0.0, 0.0))
    p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, coupling_law=law))
    handle = build_robot(p, ANGLES, record=True)
    robot = FastRobot(handle) if fast else handle
    robot.run(0.5)
    last = robot.diagnostics().iloc[-1]
    for i, rod in enumerate(robot.rods):
        lever = rod.position_collection[:, -1] - rod.position_collection[:, 0]
        force = np.array([last[f"sensors/joint_force_{c}_{i}"] for c in "xyz"])
        torque = np.array([last[f"sensors/joint_torque_{c}_{i}"] for c in "xyz"])
        moment = rod.director_collection[2, :, 0] @ (np.cross(lever, force) + torque)
        assert abs(moment) > 1e-2  # N m: a loaded motor
        assert last[f"sensors/motor_torque_{i}"] == pytest.approx(-moment, rel=rel)
        # the state API reads the same torque
        assert robot.state()["motor_torques_nm"][i] == last[f"sensors/motor_torque_{i}"]


def test_imposed_angle_is_the_ramp_as_applied(at_rest: FastRobot) -> None:
    """``motor_angle_imposed_{i}`` is the command at each sample (the ramp of 0.05 s from 0 to
    the target), unlike ``motor_angle_command_{i}`` (the ramp's target throughout): 0 at t = 0,
    strictly between 0 and the target during the ramp, the target after it; and the motor,
    rigidly held, turns the base element by exactly it (the encoder reading, to round-off)."""
    df = at_rest.diagnostics()
    t = df["time"].to_numpy()
    during = (t > 0.0) & (t < 0.05)
    assert during.any() and (t >= 0.05).any()
    for i, a in enumerate(ANGLES):
        imposed = df[f"sensors/motor_angle_imposed_{i}"].to_numpy()
        assert imposed[0] == 0.0 and np.all(imposed[t >= 0.05] == a)
        assert np.all((imposed[during] / a > 0.0) & (imposed[during] / a < 1.0))
        assert np.all(np.diff(imposed / a) >= 0.0)  # monotonic toward the target
        assert np.all(df[f"sensors/motor_angle_command_{i}"].to_numpy() == a)
        np.testing.assert_allclose(df[f"sensors/motor_angle_{i}"].to_numpy(), imposed, rtol=0, atol=1e-12)


@pytest.mark.parametrize("law", ["one_way", "passive"])
def test_compiled_sensor_readings_equal_the_per_rod_readings(law: str) -> None:
    """A compiled handle reads every rod's sensors in one kernel call on the memory blocks
    (``physics.sensors.robot_sensor_kernel``); at the same state the row is bit for bit the
    one the per-rod reading (each rod's own arrays, ``joint_wrench``, ``motor_torque``)
    gives: the same kernels on the same numbers."""
    from hsa_elastica.io.sensors import _BlockPlan

    p = _params(gravity=(0.0, 0.0, -G))
    p = dataclasses.replace(p, rod=dataclasses.replace(p.rod, coupling_law=law))
    robot = FastRobot(build_robot(p, ANGLES, record=True))
    robot.run(0.02)  # moving: the dampers' velocity terms are in the wrenches
    rec = robot.recorders["sensors"]
    plan = rec._plan
    assert isinstance(plan, _BlockPlan)  # the compiled handle bound the blocks
    n = len(rec.columns)
    block, per_rod = np.full(n, np.nan), np.full(n, np.nan)
    block[0] = per_rod[0] = robot.time
    rec._fill(robot.platform, block)
    rec._plan = False
    rec._fill(robot.platform, per_rod)
    assert np.isfinite(block).all()
    np.testing.assert_array_equal(block, per_rod)
    if law == "passive":  # the passive correction is part of the reading
        assert robot.twist_couple(0) is not None
