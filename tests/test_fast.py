"""The fused fast path (hsa_elastica.engines.fused) against the per-rod reference operators.

Reference: the same robot stepped by PyElastica's ``PositionVerlet.step`` with the per-rod
operators (``Robot.run``).  The fused loop calls the same kernels in the same order, so the
trajectories may differ only by floating-point evaluation order; we require agreement to
1e-10 (positions in m, directors dimensionless, velocities in m/s over a few thousand steps
of a 0.1 m robot: round-off is ~1e-16, so 1e-10 leaves room only for round-off growth, not
for any modelling difference such as a one-step lag or a missed operator).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from elastica.external_forces import EndpointForces, UniformTorques

from hsa_elastica.engines.fused import FastPathUnsupported
from hsa_elastica.robots.compiled import FastRobot
from hsa_elastica.robots.builders import build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.engines.timeloop import SimulationDiverged

TOL = 1e-10
DT = 2e-5  # below the stability limit of the paper robot (docs/performance.md)


def _params(**changes: object):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    rod = {k: v for k, v in changes.items() if k in {f.name for f in dataclasses.fields(p.rod)}}
    sim = {
        k: v for k, v in changes.items() if k in {f.name for f in dataclasses.fields(p.simulation)}
    }
    joint = {
        k: v for k, v in changes.items() if k in {f.name for f in dataclasses.fields(p.joint)}
    }
    return dataclasses.replace(
        p,
        rod=dataclasses.replace(p.rod, **rod),
        simulation=dataclasses.replace(p.simulation, **{"dt": DT, **sim}),
        joint=dataclasses.replace(p.joint, **joint),
    )


def _state(robot) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    out = {}
    for i, rod in enumerate(robot.rods):
        out[f"rod{i}/position"] = np.array(rod.position_collection)
        out[f"rod{i}/velocity"] = np.array(rod.velocity_collection)
        out[f"rod{i}/director"] = np.array(rod.director_collection)
        out[f"rod{i}/omega"] = np.array(rod.omega_collection)
        out[f"rod{i}/rest_lengths"] = np.array(rod.rest_lengths)
    for name in ("position_collection", "velocity_collection", "director_collection", "omega_collection"):
        out[f"platform/{name}"] = np.array(getattr(robot.platform, name))
    return out


def _compare(ref, fast) -> float:  # type: ignore[no-untyped-def]
    a, b = _state(ref), _state(fast)
    worst = 0.0
    for key in a:
        assert np.all(np.isfinite(a[key])), key
        err = float(np.max(np.abs(a[key] - b[key])))
        assert err <= TOL, f"{key}: fast path differs from the reference by {err:.3g}"
        worst = max(worst, err)
    return worst


# Asymmetric angles (no symmetry can hide an indexing error), a short ramp so that the
# coupling, the joints and the platform all move within the test's steps.
ANGLES = (0.9, -0.4, 0.3, -0.7)


@pytest.mark.parametrize(
    "changes, ramp",
    [
        # paper robot without the twist low pass, recording every 100 steps
        (dict(ramp_time=0.01, record_fps=500.0, twist_filter_time=0.0), None),
        # twist low pass, Eq. 5 slopes, gravity, joint damping, unequal damping rates
        # (PyElastica's physical damping protocol with power(dilatation) + the rigid-body
        # rate damper)
        (
            dict(
                ramp_time=0.01,
                record_fps=500.0,
                twist_filter_time=2e-3,
                E_slope=2e5,
                bend_rigidity_slope=1e-4,
                gravity=(0.0, -9.81, -3.0),
                nu_F=1.0,
                nu_tau=1e-4,
                damping=15.0,
                rotational_damping=25.0,
            ),
            None,
        ),
        # a callable ramp (tabulated in Python, no rate): phi_i(t) = angle_i * s(t)
        (dict(record_fps=500.0), lambda t: min(t / 0.01, 1.0) ** 2),
        # optional quadratic twist laws (rest length, E and B_z), not in the paper
        (
            dict(ramp_time=0.01, record_fps=500.0, twist_filter_time=2e-3, E_slope=2e5,
                 C_eps2=5e-4, E_quad=2e3, twist_rigidity_quad=1e-6),
            None,
        ),
    ],
    ids=["paper", "filter-slopes-gravity-damping", "callable-ramp", "quadratic-laws"],
)
def test_fast_path_matches_reference_trajectory(changes, ramp) -> None:  # type: ignore[no-untyped-def]
    params = _params(**changes)
    ref = build_robot(params, ANGLES, ramp=ramp, record=True)
    fast = build_fast_robot(params, ANGLES, ramp=ramp, record=True, chunk=333)
    n_steps = 1500
    # two run() calls each, with lengths that do not align with chunks or recording steps
    for duration in (611 * DT, (n_steps - 611) * DT):
        ref.run(duration)
        fast.run(duration)
        assert fast.time == ref.time
        _compare(ref, fast)
    # the robot really moved: rods elongated and the platform rose (not a trivial match)
    lift = fast.platform.position_collection[2, 0] - (params.rod.length + params.platform.thickness / 2)
    assert lift > 1e-4
    # diagnostics: same samples (times) and same values
    d_ref, d_fast = ref.diagnostics(), fast.diagnostics()
    assert list(d_ref.columns) == list(d_fast.columns)
    assert len(d_ref) == len(d_fast) == n_steps // params.simulation.record_every() + 1
    np.testing.assert_allclose(d_fast.to_numpy(), d_ref.to_numpy(), rtol=0.0, atol=TOL)


def test_unsupported_operator_is_refused() -> None:
    # An operator the fused loop does not implement must not be silently skipped.
    params = _params()
    robot = build_robot(params, ANGLES, record=False, finalize=False)
    robot.simulator.add_forcing_to(robot.rods[0]).using(
        UniformTorques, torque=1e-3, direction=np.array([0.0, 0.0, 1.0])
    )
    robot.finalize()
    with pytest.raises(FastPathUnsupported, match="UniformTorques"):
        FastRobot(robot)


def test_endpoint_force_matches_reference_trajectory() -> None:
    # a ramped tip force on one rod (a row of the compiled load table): same trajectory
    params = _params(ramp_time=0.01, record_fps=500.0, twist_filter_time=0.0)
    robots = []
    for _ in range(2):
        robot = build_robot(params, ANGLES, record=False, finalize=False)
        robot.simulator.add_forcing_to(robot.rods[1]).using(
            EndpointForces, start_force=np.zeros(3), end_force=np.array([0.3, -0.2, 1.0]),
            ramp_up_time=0.01,
        )
        robot.finalize()
        robots.append(robot)
    ref, fast = robots[0], FastRobot(robots[1])
    ref.run(700 * DT)
    fast.run(700 * DT)
    _compare(ref, fast)


def test_not_fresh_robot_is_refused() -> None:
    # The fused loop captures the operators' state at their first application.
    robot = build_robot(_params(), ANGLES, record=False)
    robot.run(3 * DT)
    with pytest.raises(FastPathUnsupported):
        FastRobot(robot)


def test_engine_of_the_compiled_model_alone_is_the_handle_s_trajectory() -> None:
    """The engine is a class of ``(model, dt)``: ``FusedEngine(compile_simulator(sim), dt)``
    with no robot handle around it gives bitwise the trajectory of ``FastRobot.run`` (the
    handle only adds chunking, recorders and divergence checks; same kernel calls)."""
    from hsa_elastica.engines.compile import compile_simulator
    from hsa_elastica.engines.fused import FusedEngine

    p = _params(n_elements=6)
    u = [0.6, -0.2, 0.6, -0.2]
    handle = FastRobot(build_robot(p, u, record=False), chunk=40)
    handle.run(100 * DT)
    model = compile_simulator(build_robot(p, u, record=False).simulator)
    engine = FusedEngine(model, DT)
    t = 0.0
    for n in (40, 40, 20):  # the handle's chunks
        t = engine.run_steps(n, t)
    assert t == handle.time
    for name, arr in handle.model.state_arrays().items():
        assert np.array_equal(model.state_arrays()[name], arr), name


def test_divergence_is_reported_with_the_recorded_samples_kept() -> None:
    # dt = 2e-4 s is 5x the Position-Verlet limit of the tip node (2 / sqrt((EA/l + k_F) / m)
    # ~ 4e-5 s): the state must blow up and be reported, as by simulation.run.
    params = _params(dt=2e-4, ramp_time=0.002, record_fps=1000.0)
    fast = build_fast_robot(params, ANGLES, record=True, check_dt=False)
    with pytest.raises(SimulationDiverged) as info:
        fast.run(0.5)
    assert 0.0 < info.value.time < 0.5
    assert len(fast.diagnostics()) >= 1
    assert math.isfinite(info.value.last_good_time)


# --------------------------------------------------------------------------------------------
# allocation-free kernels of the fused loop vs PyElastica 1.0's own kernels, on random data
# --------------------------------------------------------------------------------------------
# The rewrites perform the same floating-point operations in the same order, so the results
# should agree to the last bit; the tolerance (1e-13 relative to each array's scale, a few
# hundred ulp) leaves room only for a compiler's different evaluation of an elementary function
# (pow/acos), not for any wrong index, sign or term.
KTOL = 1e-13


def _random_rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(n, 3, 3)))
    q = q * np.sign(np.diagonal(r, axis1=1, axis2=2))[:, None, :]
    q[np.linalg.det(q) < 0] *= -1.0
    return np.ascontiguousarray(np.transpose(q, (1, 2, 0)))  # (3, 3, n)


def _random_block(seed: int):  # type: ignore[no-untyped-def]
    """A rod block of 3 rods x 6 elements with 2 ghost elements (indices 6, 13), the
    PyElastica layout: n_elems = 20, n_nodes = 21, n_voronoi = 19 (ghost Voronoi 5, 6, 12, 13)."""
    from hsa_elastica.physics.tables import RodBlockArrays

    rng = np.random.default_rng(seed)
    ne, nn, nv = 20, 21, 19
    d = rng.uniform(0.5, 1.5, size=(3, ne))
    pos = np.concatenate([np.zeros((3, 1)), np.cumsum(0.01 * d, axis=1)], axis=1)
    director = _random_rotations(rng, ne)
    # consecutive directors close to each other (a rod), one pair near a half turn
    for k in range(1, ne):
        if k != 9:
            small = _random_rotations(rng, 1)[..., 0]
            w = 0.05 * (small - small.T)
            director[..., k] = (np.eye(3) + w + 0.5 * w @ w) @ director[..., k - 1]
            u, _, vt = np.linalg.svd(director[..., k])
            director[..., k] = u @ vt
    sym = lambda m: np.einsum("ijk,ljk->ilk", m, m)  # noqa: E731  (SPD, 3x3 per column)
    arrays = dict(
        position=pos,
        velocity=rng.normal(size=(3, nn)),
        omega=rng.normal(size=(3, ne)) * 10.0,
        director=director,
        v_w=np.zeros((2, 3, nn)),
        dvdt_dwdt=np.zeros((2, 3, nn)),
        acceleration=np.zeros((3, nn)),
        alpha=np.zeros((3, ne)),
        external_forces=rng.normal(size=(3, nn)),
        external_torques=rng.normal(size=(3, ne)),
        mass=rng.uniform(0.5, 1.5, nn),
        volume=rng.uniform(1e-6, 2e-6, ne),
        lengths=np.zeros(ne),
        tangents=np.zeros((3, ne)),
        radius=np.zeros(ne),
        rest_lengths=0.01 * rng.uniform(0.8, 1.2, ne),
        rest_voronoi_lengths=0.01 * rng.uniform(0.8, 1.2, nv),
        dilatation=np.zeros(ne),
        voronoi_dilatation=np.zeros(nv),
        sigma=np.zeros((3, ne)),
        rest_sigma=rng.normal(size=(3, ne)) * 0.01,
        shear_matrix=sym(rng.normal(size=(3, 3, ne))),
        internal_stress=np.zeros((3, ne)),
        internal_forces=np.zeros((3, nn)),
        ghost_elems_idx=np.array([6, 13], dtype=np.int64),
        bend_matrix=sym(rng.normal(size=(3, 3, nv))),
        rest_kappa=rng.normal(size=(3, nv)),
        kappa=np.zeros((3, nv)),
        mass_second_moment_of_inertia=sym(rng.normal(size=(3, 3, ne))),
        inv_mass_second_moment_of_inertia=sym(rng.normal(size=(3, 3, ne))),
        internal_couple=np.zeros((3, nv)),
        dilatation_rate=np.zeros(ne),
        internal_torques=np.zeros((3, ne)),
        ghost_voronoi_idx=np.array([5, 6, 12, 13], dtype=np.int64),
    )
    a = RodBlockArrays(**{k: np.array(v) for k, v in arrays.items()})
    b = RodBlockArrays(**{k: np.array(v) for k, v in arrays.items()})
    return a, b


def _close(name: str, new: np.ndarray, ref: np.ndarray) -> None:
    scale = max(float(np.max(np.abs(ref))), 1e-300)
    err = float(np.max(np.abs(new - ref))) / scale
    assert err <= KTOL, f"{name}: relative difference {err:.3g}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_internal_force_and_torque_kernels_match_pyelastica(seed: int) -> None:
    from elastica.rod.cosserat_rod import _compute_internal_forces, _compute_internal_torques

    from hsa_elastica.physics.rod_kernels import internal_forces_inplace, internal_torques_inplace, rod_work

    new, ref = _random_block(seed)
    r = ref
    _compute_internal_forces(
        r.position, r.volume, r.lengths, r.tangents, r.radius, r.rest_lengths,
        r.rest_voronoi_lengths, r.dilatation, r.voronoi_dilatation, r.director, r.sigma,
        r.rest_sigma, r.shear_matrix, r.internal_stress, r.internal_forces, r.ghost_elems_idx,
    )
    _compute_internal_torques(
        r.position, r.velocity, r.tangents, r.lengths, r.rest_lengths, r.director,
        r.rest_voronoi_lengths, r.bend_matrix, r.rest_kappa, r.kappa, r.voronoi_dilatation,
        r.mass_second_moment_of_inertia, r.omega, r.internal_stress, r.internal_couple,
        r.dilatation, r.dilatation_rate, r.internal_torques, r.ghost_voronoi_idx,
    )
    work = rod_work(new.lengths.shape[0], 1)
    work.elem3[:] = np.nan  # scratch content must not leak into the results
    work.vor3b[:] = np.nan
    internal_forces_inplace(new, work)
    internal_torques_inplace(new, work)
    for name in ("lengths", "tangents", "radius", "dilatation", "voronoi_dilatation", "sigma",
                 "internal_stress", "internal_forces", "kappa", "internal_couple",
                 "dilatation_rate", "internal_torques"):
        _close(name, getattr(new, name), getattr(ref, name))
    # the test data exercise every term: ghosts zeroed, non-trivial forces and torques
    assert np.all(np.abs(ref.internal_forces[:, [6, 7, 13, 14]]) > 0.0)
    assert np.max(np.abs(ref.internal_torques)) > 0.0


@pytest.mark.parametrize("prefac", [0.0, 1e-5, 0.37])
def test_kinematic_update_and_rotation_log_match_pyelastica(prefac: float) -> None:
    from elastica._rotations import _inv_rotate
    from elastica.rod.data_structures import overload_operator_kinematic_numba

    from hsa_elastica.physics.rod_kernels import kinematic_update_inplace, rod_work, rotation_log_inplace

    new, ref = _random_block(3)
    ref.omega[:, 4] = 0.0  # zero angular velocity: the 1e-14 guard of Rodrigues' formula
    new.omega[:, 4] = 0.0
    overload_operator_kinematic_numba(prefac, ref.position, ref.director, ref.velocity, ref.omega)
    kinematic_update_inplace(
        prefac, new.position, new.director, new.velocity, new.omega, rod_work(20, 1).rotation
    )
    _close("position", new.position, ref.position)
    _close("director", new.director, ref.director)
    # rotation vector between consecutive directors, incl. the near-half-turn pair (9)
    out = np.full((3, 19), np.nan)
    rotation_log_inplace(new.director, out)
    _close("log map", out, _inv_rotate(ref.director))
    # closed form: log of a rotation by 0.3 rad about a unit axis a is -0.3 a (PyElastica's
    # sign convention: _inv_rotate returns the axis of Q_k Q_{k+1}^T)
    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    from scipy.spatial.transform import Rotation

    q0 = np.eye(3)
    q1 = Rotation.from_rotvec(0.3 * axis).as_matrix().T
    pair = np.ascontiguousarray(np.stack([q0, q1], axis=2))
    one = np.zeros((3, 1))
    rotation_log_inplace(pair, one)
    np.testing.assert_allclose(np.abs(one[:, 0]), 0.3 * axis, atol=1e-12)
    np.testing.assert_allclose(one[:, 0], _inv_rotate(pair)[:, 0], rtol=0, atol=1e-15)


def test_rigid_body_accelerations_match_pyelastica() -> None:
    from elastica import Cylinder

    from hsa_elastica.physics.tables import BodyBlockArrays
    from hsa_elastica.physics.rod_kernels import rigid_body_accelerations as _rigid_body_accelerations

    rng = np.random.default_rng(7)
    body = Cylinder(np.zeros(3), np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]),
                    0.003, 0.0475, 700.0)
    body.omega_collection[:] = rng.normal(size=(3, 1)) * 5.0
    body.external_forces[:] = rng.normal(size=(3, 1))
    body.external_torques[:] = rng.normal(size=(3, 1)) * 1e-3
    arrays = BodyBlockArrays(
        **{f: np.atleast_1d(np.array(getattr(body, {"position": "position_collection",
                                       "velocity": "velocity_collection",
                                       "omega": "omega_collection",
                                       "director": "director_collection",
                                       "acceleration": "acceleration_collection",
                                       "alpha": "alpha_collection"}.get(f, f), np.zeros(1)), dtype=np.float64))
           for f in BodyBlockArrays._fields}
    )
    body.update_accelerations(np.float64(0.0), np.float64(1e-5))
    _rigid_body_accelerations(arrays)
    _close("acceleration", arrays.acceleration, body.acceleration_collection)
    _close("alpha", arrays.alpha, body.alpha_collection)
    assert np.max(np.abs(body.alpha_collection)) > 0.0


def test_finite_blow_up_is_reported_like_simulation_run() -> None:
    # Same bounds as simulation.run: a deliberately tiny max_speed (1e-3 m/s; the ramped motors
    # move the rods at ~1e-2 m/s within 5 ms) stops the run at a check, naming a rod and the time
    # while the state is finite; an over-tight max_stretch (0.5: every intact rod is longer than
    # half its rest length) names the first rod at the first check.
    params = _params(ramp_time=0.01)
    fast = build_fast_robot(params, ANGLES, record=False)
    with pytest.raises(SimulationDiverged, match=r"max_speed = 0\.001 m/s") as info:
        fast.run(0.01, check_every=50, max_speed=1e-3)
    assert info.value.name.startswith("rod")
    assert f"t = {info.value.time:.6g} s" in str(info.value)
    assert round(info.value.time / DT) % 50 == 0
    assert all(np.isfinite(r.position_collection).all() for r in fast.rods)
    fast = build_fast_robot(params, ANGLES, record=False)
    with pytest.raises(SimulationDiverged, match=r"rod0 is .* mm long.*max_stretch = 0\.5"):
        fast.run(10 * DT, max_stretch=0.5)
