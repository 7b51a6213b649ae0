"""The integrator registry (``hsa_elastica/params/integrators.py``) is the one place that knows
the integrators by name: no other module compares a name, the parameters validate against it,
and its records drive the stability check and the compiled handle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from hsa_elastica.engines.timeloop import check_time_step
from hsa_elastica.params import (
    INTEGRATOR_NAMES,
    ParameterError,
    SimulationParams,
    integrator,
    paper_robot_params,
)

PACKAGE = Path(__file__).resolve().parents[1] / "hsa_elastica"
REGISTRY = PACKAGE / "params" / "integrators.py"
NAMES = {"explicit", "implicit"}


def _compared_names(tree: ast.AST) -> list[int]:
    """Lines of Compare nodes one of whose operands is an integrator name (a string constant,
    also inside a tuple/list/set operand)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            items = operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand]
            if any(isinstance(e, ast.Constant) and e.value in NAMES for e in items):
                lines.append(node.lineno)
                break
    return lines


def test_scan_finds_a_name_comparison() -> None:
    """The scan itself: the forms the package used before the registry are caught."""
    source = ('a = x == "implicit"\nb = "explicit" != y\nc = x in ("explicit", "implicit")\n'
              'd = x == "implicitly"\n')
    assert _compared_names(ast.parse(source)) == [1, 2, 3]


def test_no_module_but_the_registry_compares_an_integrator_name() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == REGISTRY:
            continue
        for line in _compared_names(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{path.relative_to(PACKAGE.parent)}:{line}")
    assert not offenders, (
        "integrator names compared outside params/integrators.py (ask integrator(...) for "
        f"the property instead): {offenders}")


def test_the_parameters_accept_exactly_the_registered_names() -> None:
    assert set(INTEGRATOR_NAMES) == NAMES
    assert SimulationParams().integrator == INTEGRATOR_NAMES[0] == "explicit"
    for name in INTEGRATOR_NAMES:
        assert SimulationParams(integrator=name).integrator == name
    with pytest.raises(ParameterError, match=r"SimulationParams\.integrator = 'verlet'.*'explicit', 'implicit'"):
        SimulationParams(integrator="verlet")
    with pytest.raises(ParameterError, match=r"integrator = 'verlet' is invalid"):
        integrator("verlet")


def test_records_are_looked_up_by_name_params_or_none() -> None:
    assert integrator(None) is integrator("explicit")
    assert integrator(SimulationParams(integrator="implicit")) is integrator("implicit")
    assert integrator(object()) is integrator("explicit")  # no integrator attribute


def test_the_stability_limit_applies_to_the_integrator_that_has_one() -> None:
    """4e-5 s is above the paper robot's stable step (3.6e-5 s measured, docs/stability.md):
    refused for the explicit integrator, taken by the implicit one (Newton refuses instead)."""
    params = paper_robot_params()
    assert integrator(params.simulation).checks_stability_limit
    with pytest.raises(ParameterError, match=r"simulation\.dt = 4e-05"):
        check_time_step(4e-5, params)
    implicit = params.replace(simulation=params.simulation.replace(integrator="implicit"))
    assert not integrator(implicit.simulation).checks_stability_limit
    assert check_time_step(4e-5, implicit) == 4e-5


def test_defaults_of_the_records() -> None:
    explicit, implicit = integrator("explicit"), integrator("implicit")
    assert explicit.default_dt is None and explicit.operator_path
    assert implicit.default_dt == pytest.approx(2e-3, rel=0, abs=0)  # docs/performance.md's step
    assert not implicit.operator_path


def test_each_integrator_builds_its_compiled_handle() -> None:
    """compiled_engine asks the registry: the fused stepper for "explicit", the implicit handle
    with the parameters' rho_inf and max_halvings for "implicit"."""
    from hsa_elastica.robots.builders import build_single_rod
    from hsa_elastica.robots.compiled import FastRobot, ImplicitRobot, compiled_engine

    rod = paper_robot_params().rod.replace(n_elements=6)
    sim = SimulationParams(dt=1e-5)
    fast = compiled_engine(build_single_rod(rod, sim, record=False))
    assert type(fast) is FastRobot
    implicit = SimulationParams(dt=1e-4, integrator="implicit", implicit_rho_inf=0.5, max_halvings=2)
    handle = compiled_engine(build_single_rod(rod, implicit, record=False))
    assert type(handle) is ImplicitRobot
    assert handle._engine_kwargs["rho_inf"] == 0.5
    assert handle._engine_kwargs["max_halvings"] == 2


@pytest.mark.parametrize("env", ["HSARobotEnv", "HSAStackEnv"])
def test_an_env_refuses_an_unknown_integrator_as_the_parameters_do(env: str) -> None:
    """The env's default step asks the registry only for a registered name; an unknown one is
    refused by ``SimulationParams`` (naming the field and the registered names), before any build."""
    pytest.importorskip("gymnasium")
    import hsa_elastica.envs as envs

    with pytest.raises(ParameterError, match=r"^SimulationParams\.integrator = 'verlet' is invalid: "
                       r"must be one of \('explicit', 'implicit'\)"):
        getattr(envs, env)(integrator="verlet")
