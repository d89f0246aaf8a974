"""Sphinx configuration of the linclass API reference.

Build, from this folder: ``python -m sphinx -W --keep-going -b html . _build/html``
(needs the ``docs`` extra -- Sphinx and matplotlib for the gallery -- and an
importable linclass: installed, or the checkout built in place).
"""
import os
import sys

try:                # the installed package (CI builds the docs against it)
    import linclass
except ImportError:  # else the checkout above, built in place
    sys.path.insert(0, os.path.abspath(".."))
    import linclass

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
exclude_patterns = ["_build", "generated/*.rst~", "_gallery"]
html_theme = "alabaster"
nitpicky = False
# citations are defined in module docstrings the reference does not render
suppress_warnings = ["autosummary.import_cycle", "ref.citation", "ref.ref"]


def _draw_gallery(app):
    """The gallery's figures, drawn from linclass at build time (not committed)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _gallery
    _gallery.build(os.path.join(app.srcdir, "_gallery"))


def setup(app):
    app.connect("builder-inited", _draw_gallery)
