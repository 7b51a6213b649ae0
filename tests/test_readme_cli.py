"""The README's command-line synopsis agrees with the argument parser, flag for flag.

The synopsis is hand-written for readers; this test is what keeps it true: every ``--flag``
the parser accepts for a subcommand appears in that subcommand's synopsis lines and every flag
the README shows exists.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from hsa_elastica.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"


def _synopsis() -> dict[str, set[str]]:
    text = README.read_text(encoding="utf-8")
    block = text.split("## Command line", 1)[1].split("```", 2)[1]
    flags: dict[str, set[str]] = {}
    current = None
    for line in block.splitlines():
        m = re.match(r"hsa-elastica (\w[\w-]*)", line)
        if m and not m.group(1).startswith("-"):
            current = m.group(1)
            flags.setdefault(current, set())
        elif line.startswith("hsa-elastica"):
            current = None  # e.g. "hsa-elastica --version"
        if current is not None:
            flags[current] |= set(re.findall(r"(--[a-z][a-z0-9-]*)", line.split("#")[0]))
    return flags


def _parser_flags() -> dict[str, set[str]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        name: {o for a in p._actions for o in a.option_strings if o.startswith("--") and o != "--help"}
        for name, p in sub.choices.items()
    }


def test_every_subcommand_is_in_the_readme() -> None:
    assert set(_synopsis()) == set(_parser_flags())


@pytest.mark.parametrize("command", sorted(_parser_flags()))
def test_readme_flags_match_the_parser(command: str) -> None:
    readme, parser = _synopsis()[command], _parser_flags()[command]
    assert parser - readme == set(), f"flags of '{command}' missing from the README synopsis"
    assert readme - parser == set(), f"README shows flags '{command}' does not accept"


def test_version_flag_exists() -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--version"])
    assert exc.value.code == 0
