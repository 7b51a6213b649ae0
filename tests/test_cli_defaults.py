"""Every ``--help`` of the command line and of the scenario scripts states each option's
default (and a unit for a number), in complete phrases; ``render RUN_DIR`` with no output
flag writes next to the run.

The help checks read the argparse objects, not the formatted text: every subcommand parser of
``hsa-elastica``, and the parser each scenario script builds (caught when its ``main`` calls
``parse_args``; ``motion_primitive.py`` and ``steady_state.py`` are the subcommands' parsers).
"""

from __future__ import annotations

import argparse
import math
import re
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import imageio.v2 as imageio
import pytest

from hsa_elastica.cli import build_parser, main
from hsa_elastica.params import RobotParams, save_params

ROOT = Path(__file__).resolve().parents[1]
#: scenario scripts that build their own parser (the other two call ``hsa_elastica.cli.main``)
OWN_PARSER_SCENARIOS = ("blocked_force.py", "control_example.py", "push_object.py", "single_rod_twist.py",
                        "stack_primitive.py")
#: words a cut-off phrase ends with ("... with columns angle_0 ..", "... run on the fused")
DANGLING = {"a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from", "and",
            "or", "as", "than", "per", "into", "fused", "columns"}
#: a unit (or "dimensionless" wording) in the help of an option that takes a number
UNIT = re.compile(r"\[[^\]]+\]|\b(rad|RADIANS|s|seconds|m|mm|kg|N m|Hz|1/s|pixels)\b|"
                  r"frames per second|fraction|relative to")
FLAGS = (argparse._HelpAction, argparse._VersionAction, argparse._StoreTrueAction,
         argparse._StoreFalseAction, argparse._CountAction)


class _Caught(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__(parser.prog)
        self.parser = parser


def subcommand_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {f"hsa-elastica {name}": p for name, p in sub.choices.items()}


def scenario_parser(script: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    def catch(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        raise _Caught(self)

    module = runpy.run_path(str(ROOT / "scenarios" / script), run_name="scenario_under_test")
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", catch)
    with pytest.raises(_Caught) as caught:
        module["main"]()
    return caught.value.parser


def options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if action.option_strings and action.help != argparse.SUPPRESS and not isinstance(action, FLAGS):
            yield action


def shown(default: Any) -> list[str]:
    """Ways the help may write ``default``."""
    if isinstance(default, float):
        return [f"{default:g}", repr(default)] + (["pi"] if default == math.pi else [])
    if isinstance(default, tuple) and len(default) == 2:
        return [f"{default[0]}x{default[1]}"]
    return [str(default)]


def takes_a_number(action: argparse.Action) -> bool:
    if action.type is None or action.type is int:
        return False
    try:
        return isinstance(action.type("1"), float)
    except (argparse.ArgumentTypeError, TypeError, ValueError):
        return False


def phrase_problems(text: str) -> list[str]:
    t = " ".join(text.split())
    problems = []
    if not t:
        return ["no help text"]
    if t.endswith((",", ";", ":", "(", "-", "..", " .")):
        problems.append(f"ends with {t[-2:]!r}")
    if t.count("(") != t.count(")") or t.count("[") != t.count("]"):
        problems.append("unbalanced brackets")
    last = t.rstrip(".)]'\"").split()[-1:] or [""]
    if last[0].lower() in DANGLING:
        problems.append(f"ends with the word {last[0]!r}")
    return problems


def check_parser(name: str, parser: argparse.ArgumentParser) -> list[str]:
    errors = []
    description = (parser.description or "").strip()
    first = description.split("\n\n")[0].strip()
    if not first.endswith("."):
        errors.append(f"{name}: description's first paragraph is not a sentence: ...{first[-40:]!r}")
    errors += [f"{name}: description: {p}" for p in phrase_problems(first)]
    # one of a required group (--angles | --angles-csv) is given: none has a default
    chosen = {id(a) for g in parser._mutually_exclusive_groups if g.required for a in g._group_actions}
    for action in options(parser):
        flag = f"{name} {action.option_strings[-1]}"
        text = " ".join((action.help or "").split())
        errors += [f"{flag}: {p}: {text!r}" for p in phrase_problems(text)]
        if action.required or id(action) in chosen:
            continue
        if "default" not in text:
            errors.append(f"{flag}: the help does not state the default: {text!r}")
        elif action.default not in (None, []) and not any(s in text for s in shown(action.default)):
            errors.append(f"{flag}: the help does not show the default {action.default!r}: {text!r}")
        if takes_a_number(action) and not UNIT.search(text):
            errors.append(f"{flag}: a number without a unit: {text!r}")
    return errors


@pytest.mark.parametrize("name", sorted(subcommand_parsers()))
def test_subcommand_help_states_defaults_and_units(name: str) -> None:
    assert check_parser(name, subcommand_parsers()[name]) == []


@pytest.mark.parametrize("script", OWN_PARSER_SCENARIOS)
def test_scenario_help_states_defaults_and_units(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_parser(script, scenario_parser(script, monkeypatch)) == []


def test_every_scenario_is_covered() -> None:
    scripts = {p.name for p in (ROOT / "scenarios").glob("*.py")}
    delegating = {s for s in scripts if "from hsa_elastica.cli import main" in (ROOT / "scenarios" / s).read_text()}
    assert scripts == delegating | set(OWN_PARSER_SCENARIOS)


def test_the_checks_catch_what_they_should() -> None:
    """The rules fail on the defects they are for (a cut phrase, a missing default, a number
    without a unit), so the tests above can fail."""
    p = argparse.ArgumentParser(description="Cut mid-sentence: run on the fused")
    p.add_argument("--csv", help="poses from a CSV with columns angle_0..")
    p.add_argument("--gain", type=float, default=0.4, help="gain of the controller")
    p.add_argument("--mass", type=float, default=0.07, help="mass (default 0.08 kg)")
    errors = "\n".join(check_parser("demo", p))
    assert "description's first paragraph is not a sentence" in errors
    assert "demo --csv: ends with '..'" in errors
    assert "demo --gain: the help does not state the default" in errors
    assert "demo --gain: a number without a unit" in errors
    assert "demo --mass: the help does not show the default 0.07" in errors


def test_render_without_output_flags_writes_next_to_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = RobotParams()
    p = p.replace(simulation=p.simulation.replace(dt=2e-5, ramp_time=0.01))
    params = save_params(p, tmp_path / "quick.yaml")
    run_dir = tmp_path / "run"
    assert main(["primitive", "elongation", "--magnitude", "0", "--params", str(params),
                 "--duration", "0.02", "--out", str(run_dir), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["render", str(run_dir), "--fps", "50", "--speed", "1", "--hold", "0",
                 "--size", "160x120"]) == 0
    err = capsys.readouterr().err
    video, still = run_dir / "render.mp4", run_dir / "render.png"
    assert str(video) in err and str(still) in err  # says where it wrote
    reader = imageio.get_reader(str(video))
    frames = [f for f in reader]
    reader.close()
    assert len(frames) == 2  # 0.02 s at real time and 50 frames/s: t = 0 and 0.02 s
    assert imageio.imread(str(still)).shape == (120, 160, 3)
    # a missing run directory is still refused with one line, exit 2, before rendering
    assert main(["render", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_integrator_implicit_takes_the_documented_step() -> None:
    """``--integrator implicit`` on explicit params runs at the recommended implicit step of
    docs/performance.md (2e-3 s, written there as a number, not read from the code), the
    Gymnasium envs' ``IMPLICIT_DT``; a larger step the params give is kept."""
    from hsa_elastica.cli.common import apply_integrator

    doc = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    assert "The recommended implicit step is **2e-3 s**" in doc
    parser = build_parser()
    args = parser.parse_args(["steady-state", "--angles", "0", "0", "0", "0", "--integrator", "implicit"])
    params = RobotParams()
    assert params.simulation.integrator == "explicit" and params.simulation.dt < 2e-3
    implicit = apply_integrator(args, params)
    assert implicit.simulation.integrator == "implicit" and implicit.simulation.dt == 2e-3
    coarse = params.replace(simulation=params.simulation.replace(dt=5e-3))
    # 5e-3 s is above the explicit limit: the check is at run time, not in apply_integrator
    assert apply_integrator(args, coarse).simulation.dt == 5e-3
