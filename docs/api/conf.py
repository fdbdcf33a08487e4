"""Sphinx configuration of fairot's API reference (``make docs``)."""

import fairot

project = "fairot"
author = "The fairot developers"
copyright = "The fairot developers"  # noqa: A001 (Sphinx's name)
release = fairot.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
# numpydoc lists a class's public methods itself; autosummary stubs would duplicate them.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
templates_path = ["_templates"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list[str] = []
# The API reference is built offline: no intersphinx inventories are fetched.
nitpicky = False


def _skip_metadata_request_methods(app, what, name, obj, skip, options):
    """Leave out scikit-learn's generated ``set_*_request`` methods (documented by scikit-learn)."""
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    """Register the hook above."""
    app.connect("autodoc-skip-member", _skip_metadata_request_methods)
