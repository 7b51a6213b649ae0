"""The settling test's static residual on a reused workspace (engines/residual_check.py).

Reference: ``model_residual``, which builds a static solver on a fresh copy of the model's
state at every call.  The reused workspace must give the same numbers bit
for bit at every check of a run and leave the running model untouched.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hsa_elastica.engines.residual_check import ResidualCheck, max_norms, pose_residual
from hsa_elastica.engines import statics
from hsa_elastica.engines.statics import StaticSolver, model_residual
from hsa_elastica.params import JointParams, paper_robot_params
from hsa_elastica.robots.builders import build_robot
from hsa_elastica.robots.compiled import compiled_engine
from hsa_elastica.robots.primitives import primitive_angles


def _robot(kind: str):  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    if kind == "implicit":
        p = p.replace(simulation=p.simulation.replace(integrator="implicit", dt=2e-3))
    else:  # the explicit engine with the coupling's twist filter and damped joints
        p = dataclasses.replace(
            p, rod=dataclasses.replace(p.rod, twist_filter_time=0.01, C_eps2=1e-5),
            joint=JointParams(k_F=5e5, nu_F=0.2, k_tau=20.0, nu_tau=0.001))
    return compiled_engine(build_robot(p, primitive_angles("bend_north", 1.0, p), record=False))


@pytest.mark.parametrize("kind, interval", [("implicit", 0.04), ("explicit", 0.003)])
def test_reused_workspace_matches_a_fresh_copy_bit_for_bit(kind: str, interval: float) -> None:
    robot = _robot(kind)
    check = None
    for _ in range(5):
        robot.run(interval)
        m = robot.model
        angles = m.commands(robot.time)
        before = {k: v.copy() for k, v in m.state_arrays().items()}
        expected = model_residual(m, angles)
        if check is None:
            check = ResidualCheck(m)
        assert check.norms(angles) == expected
        compiled = pose_residual(m.rod_arrays, m.body_arrays, m.tables.joints, angles, check.record)
        assert tuple(compiled) == expected
        assert robot.static_residual() == expected
        # a pose mid-ramp is far from equilibrium: the check is not trivially zero
        assert max(expected) > 1e-4
        for k, v in m.state_arrays().items():  # the running model was only read
            np.testing.assert_array_equal(v, before[k], err_msg=k)


def test_max_norms_follows_numpy_max_with_nan() -> None:
    is_torque = np.array([False, True, False, True])
    f = np.array([-3.0, 0.5, 2.0, -0.25])
    assert max_norms(f, is_torque) == (3.0, 0.5)
    f[0] = np.nan
    fn, tn = max_norms(f, is_torque)
    assert np.isnan(fn) and tn == 0.5
    f[3] = np.nan
    assert all(np.isnan(max_norms(f, is_torque)))
    assert max_norms(np.zeros(0), np.zeros(0, dtype=bool)) == (0.0, 0.0)


def _arrays(state):  # type: ignore[no-untyped-def]
    """Every array of a State by name (rods, bodies, law memories)."""
    out = {f"rod.{k}": v for k, v in state.rod._asdict().items()}
    out.update({f"body.{k}": v for k, v in state.body._asdict().items()})
    out.update({f"{law}.{k}": v for law, m in state.memory.items() for k, v in m.items()})
    return out


def test_residual_and_settling_check_leave_the_live_state_bitwise() -> None:
    """model_residual, a fresh ResidualCheck and the handle's settling residual evaluate on
    copies of the State: every array of the running model's State (the memory blocks and the
    coupling's filter memory / joints' rest orientations) keeps its bits; the copy is complete
    (equal arrays, none shared)."""
    robot = _robot("explicit")
    robot.run(0.003)
    live = robot.model.state
    before = live.copy()
    for name, arr in _arrays(before).items():
        assert arr is not _arrays(live)[name] and np.array_equal(arr, _arrays(live)[name]), name
    angles = robot.model.commands(robot.time)
    norms = (model_residual(robot.model, angles), ResidualCheck(robot.model).norms(angles),
             robot.static_residual())
    assert norms[0] == norms[1] == norms[2] and max(norms[0]) > 1e-4
    after = _arrays(robot.model.state)
    for name, arr in _arrays(before).items():
        np.testing.assert_array_equal(after[name], arr, err_msg=name)


def test_static_solver_has_no_model_copy_or_state_save() -> None:
    """Trials restore a saved Pose of the solver's State; nothing copies a whole model."""
    assert not hasattr(statics, "copy_model")
    assert not hasattr(StaticSolver, "save_state")
