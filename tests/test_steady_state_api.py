"""The one steady-state entry point, ``hsa_elastica.steady_state``: the same answers as the
solvers it replaces (it dispatches to them, so exact equality), one result type with the
per-segment data as a list, bad input refused naming the field, the old top-level names
deprecated."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import hsa_elastica
from hsa_elastica.params import ParameterError, paper_robot_params


def _params():  # type: ignore[no-untyped-def]
    p = paper_robot_params()
    return dataclasses.replace(p, rod=dataclasses.replace(p.rod, n_elements=8))


def test_robot_static_and_batch_match_the_static_solver() -> None:
    from hsa_elastica.robots.statics_api import solve_static

    p = _params()
    angles = np.array([1.0, -1.0, 1.0, -1.0])
    res = hsa_elastica.steady_state(p, angles)
    ref = solve_static(p, angles)
    assert isinstance(res, hsa_elastica.SteadyState) and len(res.segments) == 1
    assert res.method == ref.method == "static" and res.converged
    assert np.array_equal(res.top.platform_position_m, ref.platform_position_m)
    batch = hsa_elastica.steady_state(p, np.stack([angles, 0.5 * angles]))
    assert len(batch) == 2 and all(r.converged for r in batch)
    assert np.allclose(batch[0].top.platform_position_m, ref.platform_position_m, atol=1e-9)


def test_single_rod_matches_the_rod_solver() -> None:
    from hsa_elastica.robots.rod_statics import solve_static_rod

    rod = _params().rod
    res = hsa_elastica.steady_state(rod, 1.2)
    ref = solve_static_rod(rod, angle=1.2)
    assert res.top.length_m == ref.length_m and res.relative_poses == []
    # dynamic relaxation on the implicit integrator (rod_relaxation.relax_rod): the static
    # length within the settling stop's accuracy (node speeds below 1e-4 L/s; 1e-5 relative,
    # as tests/test_rod_statics.py for the explicit relaxation)
    from hsa_elastica.robots.rod_relaxation import settling_sim_params

    sp = settling_sim_params(rod, angle=1.2, integrator="implicit")
    dyn = hsa_elastica.steady_state(rod, 1.2, method="dynamic", sim_params=sp)
    assert dyn.method == "dynamic" and dyn.converged and dyn.stable is None
    assert dyn.top.length_m == pytest.approx(ref.length_m, rel=1e-5)
    assert dyn.top.holding_torque_Nm == pytest.approx(ref.holding_torque_Nm, rel=1e-4)


#: the top-level names removed after their one release of deprecation -> the module keeping them
REMOVED = {
    "solve_steady_state": "hsa_elastica.robots.steady_state",
    "solve_static": "hsa_elastica.robots.statics_api",
    "solve_static_batch": "hsa_elastica.robots.statics_api",
    "solve_stack_steady_state": "hsa_elastica.robots.stack_steady_state",
    "solve_stack_static": "hsa_elastica.robots.stack",
    "solve_static_rod": "hsa_elastica.robots.rod_statics",
}


def test_bad_input_is_named_and_removed_names_point_at_steady_state() -> None:
    import importlib

    with pytest.raises(ParameterError, match="method"):
        hsa_elastica.steady_state(_params(), [0.0] * 4, method="quasi")
    with pytest.raises(ParameterError, match="system_or_params"):
        hsa_elastica.steady_state("robot", [0.0] * 4)
    for name, module in REMOVED.items():
        with pytest.raises(AttributeError, match=rf"hsa_elastica\.{name} was removed.*"
                           rf"hsa_elastica\.steady_state\(.*{module}"):
            getattr(hsa_elastica, name)
        assert not hasattr(hsa_elastica, name)
        assert name not in hsa_elastica.__all__ and name not in dir(hsa_elastica)
        with pytest.raises(ImportError, match=name):
            exec(f"from hsa_elastica import {name}", {})
        assert callable(getattr(importlib.import_module(module), name))  # the solver stays
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hsa_elastica.steady_state  # noqa: B018  (the new name does not warn)


def test_settling_state_old_name_warns() -> None:
    """``robots.steady_state.robot_state`` (the settling run's watch) was renamed
    ``settling_state`` so that ``robot_state`` names the step API's state alone; the old name
    still reads, with a DeprecationWarning, for one release."""
    from hsa_elastica.engines.control import robot_state
    from hsa_elastica.robots import steady_state as ss

    with pytest.warns(DeprecationWarning, match="settling_state"):
        old = ss.robot_state
    assert old is ss.settling_state and old is not robot_state
    with pytest.raises(AttributeError):
        ss.no_such_name  # noqa: B018


def test_dynamic_method_runs_the_integrator_the_params_select(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``method="dynamic"`` steps the compiled engine that ``simulation.integrator`` selects:
    with ``"implicit"`` the generalized-alpha integrator (its step is spied on) relaxes the
    robot, and the settled platform is the static solver's within 1 um (the implicit
    integrator's end-pose target; both are the same equilibrium, the relaxation stops once the force balance holds)."""
    from hsa_elastica.engines.implicit import ImplicitEngine

    steps: list[int] = []
    motor_rows = ImplicitEngine.motor_rows  # the motor table of every batch of steps

    def spy(self, times):  # type: ignore[no-untyped-def]
        steps.append(times.shape[0] - 1)
        return motor_rows(self, times)

    monkeypatch.setattr(ImplicitEngine, "motor_rows", spy)
    p = _params()
    q = p.replace(simulation=p.simulation.replace(dt=2e-3, integrator="implicit", ramp_time=0.3))
    u = np.array([1.0, 0.4, 1.0, 0.4])
    res = hsa_elastica.steady_state(q, u, method="dynamic")
    ref = hsa_elastica.steady_state(p, u)
    assert res.method == "dynamic" and res.converged and sum(steps) > 0
    d = np.asarray(res.top.platform_position_m) - np.asarray(ref.top.platform_position_m)
    assert np.abs(d).max() < 1e-6, d


def test_the_suite_turns_the_package_deprecations_into_errors() -> None:
    """setup.cfg's ``filterwarnings`` makes the package's own deprecations errors in its tests
    (so a test that reads an old name fails instead of adding a warning to the run), and every
    deprecation the package raises is of that class (ast scan of its ``warnings.warn`` calls)."""
    import ast
    from pathlib import Path

    from hsa_elastica.params import HSADeprecationWarning

    from hsa_elastica.robots import steady_state as steady_state_module

    with pytest.raises(HSADeprecationWarning, match="robot_state is now settling_state"):
        steady_state_module.robot_state  # noqa: B018
    bare = []
    for path in Path(hsa_elastica.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("warnings.warn"):
                args = [ast.unparse(a) for a in node.args[1:2]]
                args += [ast.unparse(k.value) for k in node.keywords if k.arg == "category"]
                if any(a.endswith("DeprecationWarning") and a != "HSADeprecationWarning" for a in args):
                    bare.append(f"{path.name}:{node.lineno}")
    assert bare == []
