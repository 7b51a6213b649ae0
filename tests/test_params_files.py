"""One reading of a parameter file for every entry point: a file is accepted whole or refused
with one line naming the key (``load_params``, ``resolve_params``, ``--params`` of the command
line).  A complete dump with one mistake anywhere -- a misspelt key or section, a value of the
wrong type or out of its range, a field in the wrong section -- must never run with defaults.

The expected messages are written here by hand (the class and field a mistake is in), not
taken from the reader.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hsa_elastica import data
from hsa_elastica.cli import main
from hsa_elastica.params import (
    ParameterError,
    RobotParams,
    RodParams,
    load_params,
    resolve_params,
    save_params,
)
from hsa_elastica.robots import statics_api
from hsa_elastica.robots import steady_state as steady_state_module

CLI = [sys.executable, "-m", "hsa_elastica.cli"]

#: section of a full dump -> the class whose name a message about its fields carries
CLASSES = {"": "RobotParams", "rod": "RodParams", "platform": "PlatformParams",
           "joint": "JointParams", "simulation": "SimulationParams"}

#: values out of each field's documented range (docs/architecture.md, "Parameters")
OUT_OF_RANGE: dict[tuple[str, str], list[Any]] = {
    ("simulation", "dt"): [0.0, -1e-5],
    ("simulation", "damping"): [-1.0, 1e4],
    ("simulation", "rotational_damping"): [-1.0, 1e4],
    ("simulation", "ramp_time"): [0.0],
    ("simulation", "record_fps"): [0.0],
    ("simulation", "integrator"): ["rk4"],
    ("simulation", "ramp_shape"): ["cubic"],
    ("simulation", "implicit_rho_inf"): [1.5, -0.1],
    ("simulation", "max_halvings"): [-1, 21, 2.5],
    ("simulation", "implicit_tol_position"): [0.0, 2e-4],
    ("simulation", "implicit_tol_rotation"): [-1e-5, 0.1],
    ("simulation", "gravity"): [[0.0, -9.81]],
    ("joint", "k_F"): [0.5, -1.0],
    ("joint", "k_tau"): [-1.0],
    ("joint", "nu_F"): [-1.0],
    ("joint", "nu_tau"): [-1.0],
    ("platform", "diameter"): [0.0],
    ("platform", "density"): [0.0],
    ("platform", "payload_mass"): [-1.0],
    ("rod", "n_elements"): [1, 1001],
    ("rod", "length"): [0.0],
    ("rod", "youngs_modulus"): [1e13],
    ("rod", "C_eps"): [2.0],
    ("rod", "eps_min"): [0.5],
    ("rod", "density"): [0.0],
    ("rod", "handedness"): [2],
    ("", "n_rods"): [3, 0],
    ("", "circle_radius"): [1.0],
    ("", "handedness"): [[1, 1]],
}
#: values no field accepts (a string that is not "none", NaN, inf, a bool, a list, a mapping)
WRONG_TYPES: list[Any] = ["abc", float("nan"), float("inf"), True, [1.0, 2.0, 3.0, 4.0, 5.0],
                          {"x": 1.0}]


def full_dump() -> dict[str, Any]:
    """What ``hsa-elastica params --dump`` writes, as a mapping."""
    return RobotParams().to_dict()


def leaves(dump: dict[str, Any]) -> list[tuple[str, str]]:
    """(section, field) of every value of a dump (section "" = the robot's own fields)."""
    out = []
    for key, value in dump.items():
        if isinstance(value, dict):
            out += [(key, k) for k in value]
        else:
            out.append(("", key))
    return out


def _misspell(draw: Any, name: str, taken: set[str]) -> str:
    kind = draw(st.sampled_from(["drop", "double", "swap", "append"]))
    i = draw(st.integers(0, len(name) - 1))
    if kind == "drop" and len(name) > 1:
        new = name[:i] + name[i + 1:]
    elif kind == "double":
        new = name[:i] + name[i] + name[i:]
    elif kind == "swap" and i + 1 < len(name):
        new = name[:i] + name[i + 1] + name[i] + name[i + 2:]
    else:
        new = name + draw(st.sampled_from("aesz_"))
    hypothesis.assume(new not in taken and new != name)
    return new


@st.composite
def mutated_dumps(draw: Any) -> tuple[dict[str, Any], str]:
    """A full dump with one mistake, and the text its refusal must contain."""
    dump = full_dump()
    sections = [k for k, v in dump.items() if isinstance(v, dict)]
    kind = draw(st.sampled_from(["key", "section", "type", "range", "nesting", "not_a_section",
                                 "environment"]))
    if kind == "environment":
        return _environment_mistake(draw, dump)
    if kind == "section":
        name = draw(st.sampled_from(sections))
        new = _misspell(draw, name, set(dump))
        dump[new] = dump.pop(name)
        return dump, new
    if kind == "not_a_section":
        name = draw(st.sampled_from(sections))
        dump[name] = draw(st.sampled_from([1.0, "abc", [1, 2]]))
        return dump, name
    if kind == "range":
        (section, field) = draw(st.sampled_from(sorted(OUT_OF_RANGE)))
        value = draw(st.sampled_from(OUT_OF_RANGE[(section, field)]))
    else:
        section, field = draw(st.sampled_from(leaves(dump)))
        value = None
    target = dump[section] if section else dump
    if kind == "key":
        new = _misspell(draw, field, set(target))
        target[new] = target.pop(field)
        return dump, new
    if kind == "nesting":  # the field moved into another section (or to the top) where it is unknown
        others = [s for s in ["", *sections] if s != section]
        dest_name = draw(st.sampled_from(others))
        dest = dump[dest_name] if dest_name else dump
        hypothesis.assume(field not in dest)
        dest[field] = target.pop(field)
        return dump, field
    if kind == "type":
        value = draw(st.sampled_from(WRONG_TYPES))
    target[field] = value
    return dump, f"{CLASSES[section]}.{field}"


#: contact-law values out of their documented range (docs/contact.md, "Parameters")
CONTACT_OUT_OF_RANGE = {"stiffness": [0.0, 1e10], "smoothing_length": [0.0, 2.0],
                        "damping_ratio": [-0.1, 11.0], "friction_coefficient": [-0.1, 11.0],
                        "slip_velocity": [0.0, 11.0]}


def _environment_mistake(draw: Any, dump: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The dump with an ``environment`` of one plate holding one mistake, and the text its
    refusal must contain."""
    contact = {"stiffness": 1e5, "smoothing_length": 1e-4, "damping_ratio": 0.3,
               "friction_coefficient": 0.5, "slip_velocity": 1e-3}
    obstacle: dict[str, Any] = {"kind": "plane", "point": [0.0, 0.0, 0.2],
                                "normal": [0.0, 0.0, -1.0], "contact": contact}
    dump["environment"] = {"obstacles": [obstacle]}
    mistake = draw(st.sampled_from(["key", "contact_key", "kind", "range", "not_a_list",
                                    "not_a_section"]))
    if mistake == "key":
        field = draw(st.sampled_from(["point", "normal", "contact"]))
        new = _misspell(draw, field, set(obstacle))
        obstacle[new] = obstacle.pop(field)
        return dump, new
    if mistake == "contact_key":
        field = draw(st.sampled_from(sorted(contact)))
        new = _misspell(draw, field, set(contact))
        contact[new] = contact.pop(field)
        return dump, new
    if mistake == "kind":
        obstacle["kind"] = draw(st.sampled_from(["wall", "Plane", 1.0]))
        return dump, "obstacles[0].kind"
    if mistake == "range":
        field = draw(st.sampled_from(sorted(CONTACT_OUT_OF_RANGE)))
        contact[field] = draw(st.sampled_from(CONTACT_OUT_OF_RANGE[field]))
        return dump, f"ContactParams.{field}"
    if mistake == "not_a_list":
        dump["environment"]["obstacles"] = draw(st.sampled_from([1.0, "abc"]))
        return dump, "EnvironmentParams.obstacles"
    dump["environment"] = draw(st.sampled_from([1.0, "abc", [1, 2]]))
    return dump, "environment"


FAST = settings(max_examples=200, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
#: the command line's part: fewer examples (each parses arguments and reads the file, ~20 ms
#: in-process; the solver is replaced by a sentinel, so nothing is solved)
CLI_EXAMPLES = settings(FAST, max_examples=25)


def _write(tmp: Path, dump: dict[str, Any], suffix: str = ".yaml") -> Path:
    path = tmp / f"p{suffix}"
    path.write_text(yaml.safe_dump(dump, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def no_solve(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any solve fails the test: a refused file must stop the command before the work."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the solver was started with a parameter file that has a mistake")

    for module, name in ((steady_state_module, "solve_steady_state"), (statics_api, "solve_static")):
        monkeypatch.setattr(module, name, refuse)


@FAST
@given(case=mutated_dumps())
def test_a_mistake_anywhere_in_a_dump_is_refused_naming_the_key(
        tmp_path_factory: pytest.TempPathFactory, case: tuple[dict[str, Any], str]) -> None:
    dump, needle = case
    path = _write(tmp_path_factory.mktemp("dump"), dump)
    for read in (lambda: load_params(path), lambda: resolve_params(str(path)),
                 lambda: load_params(path, RodParams)):  # a section is read from a whole file
        with pytest.raises(ParameterError) as info:
            read()
        message = str(info.value)
        assert needle in message and "\n" not in message, (needle, message)


@CLI_EXAMPLES
@given(case=mutated_dumps())
def test_a_mistake_anywhere_in_a_dump_exits_2_on_the_command_line(
        tmp_path_factory: pytest.TempPathFactory, no_solve: None,
        case: tuple[dict[str, Any], str]) -> None:
    dump, needle = case
    path = _write(tmp_path_factory.mktemp("dump"), dump)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["steady-state", "--angles", "3", "0", "0", "-1", "--params", str(path), "--quiet"])
    assert code == 2, err.getvalue()
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], (needle, lines)


def test_misspelt_section_of_a_dump_exits_2_not_converged_with_defaults(tmp_path: Path) -> None:
    # the reported case, through the installed command: a dump with circle_radius and
    # joint.k_tau changed and "simulation:" misspelt ran with both back at their defaults
    dump = full_dump()
    dump["circle_radius"] = 0.03
    dump["joint"]["k_tau"] = 40.0
    dump["simulaton"] = dump.pop("simulation")
    path = _write(tmp_path, dump)
    proc = subprocess.run([*CLI, "steady-state", "--angles", "3", "0", "0", "-1", "--params", str(path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "'simulaton'" in proc.stderr, proc.stderr
    assert "converged" not in proc.stdout


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_a_complete_dump_is_read_whole(tmp_path: Path, suffix: str) -> None:
    p = RobotParams(circle_radius=0.03).replace(joint=RobotParams().joint.replace(k_tau=40.0))
    path = save_params(p, tmp_path / f"p{suffix}")
    assert load_params(path) == p and resolve_params(str(path)) == p
    assert load_params(path, RodParams) == p.rod


@pytest.mark.parametrize("suffix", [".yaml", ".toml"])
def test_a_dump_with_obstacles_is_read_whole_and_one_without_has_no_environment_section(
        tmp_path: Path, suffix: str) -> None:
    from hsa_elastica.params import ContactParams, EnvironmentParams, PlaneObstacle, SphereObstacle

    assert "environment" not in RobotParams().to_dict()  # files written before it: unchanged
    env = EnvironmentParams(obstacles=(
        PlaneObstacle(point=(0.0, 0.0, 0.2), normal=(0.0, 0.0, -1.0)),
        SphereObstacle(center=(0.1, 0.0, 0.05), radius=0.02,
                       contact=ContactParams(friction_coefficient=0.4))))
    p = RobotParams(environment=env)
    path = save_params(p, tmp_path / f"p{suffix}")
    assert load_params(path) == p and resolve_params(str(path)) == p


def test_rod_only_file_is_recognised_by_its_keys(tmp_path: Path) -> None:
    # a file of RodParams fields only is a robot with that rod (every other field default)
    path = tmp_path / "rod.yaml"
    path.write_text("length: 0.09\nC_eps: 0.008\n", encoding="utf-8")
    robot = resolve_params(str(path))
    assert robot.rod.length == 0.09 and robot.rod.C_eps == 0.008
    assert robot.replace(rod=RodParams()) == RobotParams()
    # one misspelt rod key: no longer a rod-only file, refused naming the key (not "defaults")
    path.write_text("lenght: 0.09\nC_eps: 0.008\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="'lenght'"):
        resolve_params(str(path))
    # rod fields mixed with the robot's own: refused naming the rod field
    path.write_text("n_rods: 4\nlength: 0.09\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="'length'"):
        resolve_params(str(path))


def test_characterization_entries_as_robots() -> None:
    # fitted_params.yaml#10: rod-only; the Table I rods (19 mm outer radius) do not fit four
    # to the default 24 mm circle (at least 19 / sin(45 deg) = 26.9 mm), which is named
    fitted = data.path("fitted_params.yaml")
    assert load_params(f"{fitted}#10", RodParams).length == pytest.approx(0.112)
    with pytest.raises(ParameterError, match="circle_radius.*0.02687"):
        resolve_params(f"{fitted}#10")
    # with the compression law: a robot has no axial law, so the entry is not half-read
    with pytest.raises(ParameterError, match="axial_law"):
        resolve_params(f"{data.path('fitted_params_compression.yaml')}#10")


def test_an_entry_with_an_unknown_section_is_refused_for_every_class(tmp_path: Path) -> None:
    path = tmp_path / "group.yaml"
    path.write_text("10:\n  rod:\n    length: 0.1\n  axial_lawz:\n    compression_ratio: 0.5\n",
                    encoding="utf-8")
    for cls in (RodParams, RobotParams):
        with pytest.raises(ParameterError, match="axial_lawz"):
            load_params(f"{path}#10", cls)


@pytest.mark.parametrize("command", [
    ["primitive", "bend_north", "--duration", "0.01"],
    ["dataset", "--random", "2", "--out", "{tmp}/ds"],
    ["calibrate", "--data", "elongation", "--free", "rod.C_eps", "--out", "{tmp}/fit.yaml"],
])
def test_every_command_refuses_a_dump_with_a_misspelt_section(
        tmp_path: Path, no_solve: None, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # primitive, dataset and calibrate ran with the misspelt section's fields at their
    # defaults and recorded them as if asked for
    dump = full_dump()
    dump["simulaton"] = dump.pop("simulation")
    path = _write(tmp_path, dump)
    code = main([a.replace("{tmp}", str(tmp_path)) for a in command] + ["--params", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'simulaton'" in err, err
    assert not (tmp_path / "ds").exists() and not (tmp_path / "fit.yaml").exists()
