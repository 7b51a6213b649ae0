"""Sphinx configuration of the hsa-elastica docs site.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (``pip install -e ".[docs]"``).
Pages are Markdown (MyST); the API reference is generated from the numpy-style docstrings.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

project = "hsa-elastica"
author = "hsa-elastica developers"
copyright = "2026, hsa-elastica developers"
# one version: the installed distribution's, from setup.cfg (``hsa-elastica --version``)
release = version = importlib.metadata.version("hsa-elastica")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "examples", "img", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# API reference: one page per module, members defined in that module (re-exports are
# documented where they are defined), in source order.
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {
    "members": True,
    "undoc-members": False,
    "show-inheritance": True,
    "member-order": "bysource",
}
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_use_ivar = True

# Markdown pages link to files of the repository outside docs/ (README, validation/,
# benchmarks/): those are left as plain links.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

# the Gymnasium environments are an optional extra (rl): document them without it
autodoc_mock_imports = ["gymnasium"]

html_theme = "alabaster"
html_title = "hsa-elastica"
nitpicky = False
