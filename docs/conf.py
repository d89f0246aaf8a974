"""Sphinx configuration of the linclass API reference.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html``
(needs ``pip install sphinx`` and an importable linclass: ``pip install -e .``).
"""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import linclass  # noqa: E402

project = "linclass"
author = "The linclass developers"
copyright = "2026, The linclass developers"
release = version = linclass.__version__

extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon",
              "sphinx.ext.viewcode"]
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False,
                           "show-inheritance": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True
# numpydoc sections napoleon does not know are rendered as plain text
napoleon_custom_sections = [("Exit status", "params_style")]
exclude_patterns = ["_build", "generated/*.rst~"]
html_theme = "alabaster"
nitpicky = False
# citations are defined in module docstrings the reference does not render
suppress_warnings = ["autosummary.import_cycle", "ref.citation", "ref.ref"]
