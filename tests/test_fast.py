"""The fused fast path (hsa_elastica.fast) against the per-rod reference operators.

Reference: the same robot stepped by PyElastica's ``PositionVerlet.step`` with the per-rod
operators (``Robot.run``).  The fused loop calls the same kernels in the same order, so the
trajectories may differ only by floating-point evaluation order; issue 5 requires agreement to
1e-10 (positions in m, directors dimensionless, velocities in m/s over a few thousand steps
of a 0.1 m robot: round-off is ~1e-16, so 1e-10 leaves room only for round-off growth, not
for any modelling difference such as a one-step lag or a missed operator).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from elastica.external_forces import EndpointForces

from hsa_elastica.fast import FastPathUnsupported, FastRobot, build_fast_robot
from hsa_elastica.params import paper_robot_params
from hsa_elastica.robot import build_robot
from hsa_elastica.simulation import SimulationDiverged

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
    ],
    ids=["paper", "filter-slopes-gravity-damping", "callable-ramp"],
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
        EndpointForces, start_force=np.zeros(3), end_force=np.array([0.0, 0.0, 1.0]), ramp_up_time=0.1
    )
    robot.finalize()
    with pytest.raises(FastPathUnsupported, match="EndpointForces"):
        FastRobot(robot)


def test_not_fresh_robot_is_refused() -> None:
    # The fused loop captures the operators' state at their first application.
    robot = build_robot(_params(), ANGLES, record=False)
    robot.run(3 * DT)
    with pytest.raises(FastPathUnsupported):
        FastRobot(robot)


def test_divergence_is_reported_with_the_recorded_samples_kept() -> None:
    # dt = 2e-4 s is 5x the Position-Verlet limit of the tip node (2 / sqrt((EA/l + k_F) / m)
    # ~ 4e-5 s): the state must blow up and be reported, as by simulation.run.
    params = _params(dt=2e-4, ramp_time=0.002, record_fps=1000.0)
    fast = build_fast_robot(params, ANGLES, record=True)
    with pytest.raises(SimulationDiverged) as info:
        fast.run(0.5)
    assert 0.0 < info.value.time < 0.5
    assert len(fast.diagnostics()) >= 1
    assert math.isfinite(info.value.last_good_time)
