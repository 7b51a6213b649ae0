"""The command-line synopsis of docs/cli.md agrees with the argument parser, flag for flag.

The synopsis is hand-written for readers; this test is what keeps it true: every ``--flag``
the parser accepts for a subcommand appears in that subcommand's synopsis lines and every flag
the page shows exists.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from hsa_elastica.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"


def _synopsis() -> dict[str, set[str]]:
    text = PAGE.read_text(encoding="utf-8")
    block = text.split("## Synopsis", 1)[1].split("```", 2)[1]
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


def test_every_subcommand_is_in_the_synopsis() -> None:
    assert set(_synopsis()) == set(_parser_flags())


@pytest.mark.parametrize("command", sorted(_parser_flags()))
def test_synopsis_flags_match_the_parser(command: str) -> None:
    page, parser = _synopsis()[command], _parser_flags()[command]
    assert parser - page == set(), f"flags of '{command}' missing from the synopsis in docs/cli.md"
    assert page - parser == set(), f"docs/cli.md shows flags '{command}' does not accept"


def test_version_flag_exists() -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--version"])
    assert exc.value.code == 0


def test_one_version_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    """setup.cfg's version is the one ``pip`` installs, ``hsa-elastica --version`` prints,
    ``hsa_elastica.__version__`` holds, the docs site and CITATION.cff state."""
    import configparser
    import runpy
    from importlib.metadata import version

    import hsa_elastica

    root = ROOT
    cfg = configparser.ConfigParser()
    cfg.read(root / "setup.cfg", encoding="utf-8")
    source = cfg["metadata"]["version"]
    assert version("hsa-elastica") == hsa_elastica.__version__ == source
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--version"])
    assert capsys.readouterr().out.split() == ["hsa-elastica", source]
    assert runpy.run_path(str(root / "docs" / "conf.py"))["release"] == source
    citation = (root / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^version: (\S+)$", citation, flags=re.M)[1] == source  # type: ignore[index]
