"""Every public function and class documents itself with a runnable example."""

import importlib
import importlib.util
import inspect

import pytest

PUBLIC_PACKAGES = [
    "fairot.metrics",
    "fairot.transport",
    "fairot.classification",
    "fairot.regression",
    "fairot.datasets",
    "fairot.reporting",
    "fairot.experiments",
    "fairot.utils",
    "fairot.monitoring",
    "fairot.face",
    "fairot.face.losses",
    "fairot.face.miners",
    "fairot.face.evaluation",
    "fairot.torch",
]

# fairot.face and fairot.torch need torch; a clone installed without the torch extra skips them.
TORCH_PACKAGES = ("fairot.face", "fairot.torch")
HAS_TORCH = importlib.util.find_spec("torch") is not None


def public_objects():
    for package in PUBLIC_PACKAGES:
        if package.startswith(TORCH_PACKAGES) and not HAS_TORCH:
            continue
        module = importlib.import_module(package)
        for name in module.__all__:
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
