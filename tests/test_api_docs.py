"""Every public function and class documents itself with a runnable example."""

import importlib
import inspect

import pytest

from tests.api_reference import extra_missing, is_internal, public_modules, public_names

# The API modules of docs/api.md (tests.api_reference): each documents its names.
PUBLIC_PACKAGES = [m for m in public_modules() if not is_internal(m)]


def public_objects():
    for package in PUBLIC_PACKAGES:
        if extra_missing(package):  # a clone installed without the extra skips it
            continue
        module = importlib.import_module(package)
        for name in public_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{package}.{name}", obj


@pytest.mark.parametrize(
    ("name", "obj"), list(public_objects()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_public_object_has_examples(name, obj):
    # The object's own docstring (not one inherited through inspect.getdoc), dedented.
    doc = inspect.cleandoc(obj.__doc__ or "")
    has_examples = "\nExamples\n--------\n" in doc
    assert has_examples, f"{name} has no numpydoc Examples section"
