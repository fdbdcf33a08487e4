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


def public_objects():
    for package in PUBLIC_PACKAGES:
        # fairot.face and fairot.torch need torch; a fresh clone without the torch extra skips it.
        if package.startswith(("fairot.face", "fairot.torch")) and importlib.util.find_spec("torch") is None:
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
    assert "\nExamples\n" in (obj.__doc__ or "").replace("    ", ""), name
