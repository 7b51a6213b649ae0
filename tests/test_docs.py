"""The docs site builds without a warning, and its API reference covers the public API.

Skipped only when Sphinx (the ``docs`` extra: ``pip install -e ".[test,docs]"``) is missing.
"""

from __future__ import annotations


import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hsa_elastica

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = (DOCS / "api.rst").read_text(encoding="utf-8")


def package_modules() -> list[str]:
    mods = []
    for path in sorted((ROOT / "hsa_elastica").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__main__":  # script entry point
            continue
        if parts[-1] == "__init__":
            parts.pop()
        mods.append(".".join(parts))
    return mods


def test_api_reference_lists_every_public_name_and_module() -> None:
    listed = set(re.findall(r"^\s+~?(hsa_elastica[\w.]*)\s*$", API, flags=re.MULTILINE))
    names = {entry.rsplit(".", 1)[-1] for entry in listed}
    missing = [n for n in hsa_elastica.__all__ if n != "__version__" and n not in names]
    assert not missing, f"public names missing from docs/api.rst: {missing}"
    public = set(re.findall(r"^\s+~(hsa_elastica[\w.]*)\s*$", API, flags=re.MULTILINE))
    for entry in public:  # each public-API entry (``~``) points at the object's defining module
        module, _, name = entry.rpartition(".")
        if name in hsa_elastica.__all__:
            top = getattr(hsa_elastica, name)
            assert getattr(__import__(module, fromlist=[name]), name) is top, entry
    missing_mods = [m for m in package_modules() if m not in listed]
    assert not missing_mods, f"modules missing from docs/api.rst: {missing_mods}"


def test_architecture_names_no_missing_design_document() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    assert "DESIGN.md" not in text or (ROOT / "DESIGN.md").exists()


def test_sphinx_build_has_no_warnings(tmp_path: Path) -> None:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    # build a copy, so the generated API stubs do not land in the source tree
    src = tmp_path / "docs"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "api"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html", str(src), str(tmp_path / "html")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert (tmp_path / "html" / "api" / "hsa_elastica.physics.auxetic_law.html").is_file()
    assert (tmp_path / "html" / "model.html").is_file()


def test_tutorial_extra_brings_a_front_end_the_docs_name() -> None:
    """The docs say how to open the tutorial notebook; the extra they name declares a Jupyter
    front end providing the command they give (``jupyter notebook``) and a kernel."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    extras = cfg["options.extras_require"]
    tutorial = [line.split(">")[0].split("=")[0].strip() for line in extras["tutorial"].splitlines()
                if line.strip() and not line.strip().startswith("#")]
    assert "notebook" in tutorial and "ipykernel" in tutorial
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert 'pip install -e ".[tutorial]"' in index
    assert "`jupyter notebook examples/tutorial.ipynb`" in index
    assert (ROOT / "examples" / "tutorial.ipynb").is_file()
