"""Fuzz of :func:`fairot.load_model` with hostile skops files (issue 19).

Each file starts as a real ``skops.io.dumps`` of a fitted fairot or scikit-learn model, then its
``schema.json`` is mutated: nodes renamed to dangerous callables (``os.system``,
``builtins.eval``, ``subprocess.Popen``...), loaders swapped (``__reduce__``-style constructor
calls, functions, methods, partials), payloads planted deep inside dicts, lists and object
states, numbers made huge; or the zip itself is truncated or replaced by other bytes. Every
file must either load an object of an allowed type or raise
:class:`~fairot.exceptions.UntrustedModelError` or the loader's own ``ValueError``; and a
planted payload, which would create a marker file, must never run.
"""

import copy
import functools
import io
import json
import zipfile

import numpy as np
import pytest
import skops.io
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairot.classification import QuantileParityPostProcessor
from fairot.exceptions import UntrustedModelError
from fairot.regression import WassersteinFairRegressor
from fairot.utils import is_allowed_type, load_model
from fairot.utils._persistence import MSG_UNREADABLE

pytestmark = pytest.mark.fuzz

HOSTILE = [
    "os.system",
    "posix.system",
    "builtins.eval",
    "builtins.exec",
    "builtins.__import__",
    "builtins.getattr",
    "builtins.open",
    "subprocess.Popen",
    "subprocess.check_output",
    "importlib.import_module",
    "pickle.loads",
    "runpy.run_path",
    "shutil.rmtree",
    "functools.partial",
    "operator.attrgetter",
    "numpy.load",
    "fairot.cli._io.Path",  # a re-export, not a fairot class
    "sklearn.utils.Bunch",  # a scikit-learn class, not an estimator
]
LOADERS = [
    "ObjectNode",
    "ConstructorFromReduceNode",
    "FunctionNode",
    "MethodNode",
    "PartialNode",
    "OperatorFuncNode",
    "TypeNode",
    "TupleNode",
    "ListNode",
    "DictNode",
    "JsonNode",
    "NdArrayNode",
    "ReduceNode",  # no such loader
]
HUGE = ["1e400", "-1e999", "NaN", "Infinity", "9" * 5000, "-" + "9" * 400, "1" + "0" * 308]
# Plain values skops rebuilds itself (containers, scalars, arrays) besides allowed classes.
PLAIN_MODULES = {"builtins", "numpy"}


@functools.cache
def saved_models() -> tuple[bytes, ...]:
    """``skops.io.dumps`` of a fitted fairot classifier and regressor and a sklearn pipeline."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 2))
    groups = np.tile([0, 1], 30)
    labels = (x[:, 0] + 0.3 * groups > 0).astype(int)
    classifier = QuantileParityPostProcessor(estimator=LogisticRegression()).fit(
        x, labels, sensitive_features=groups
    )
    regressor = WassersteinFairRegressor(estimator=Ridge(), epsilon=0.1).fit(
        x, x[:, 0] + groups, sensitive_features=groups
    )
    pipeline = make_pipeline(StandardScaler(), Ridge()).fit(x, x[:, 1])
    return tuple(skops.io.dumps(model) for model in (classifier, regressor, pipeline))


def _nodes(schema) -> list[dict]:
    """Every dict of the schema tree that is a skops node (has a ``__class__``)."""
    found, stack = [], [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "__class__" in node:
                found.append(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _payload(name: str, loader: str, marker: str, node_id: int) -> dict:
    """A node that, if constructed, would create ``marker`` through ``name``."""
    module, _, attribute = name.rpartition(".")
    if name in ("builtins.eval", "builtins.exec"):
        argument = f"open({marker!r}, 'w').close()"
    elif name.startswith("subprocess."):
        argument = ["touch", marker]
    else:
        argument = f"touch {marker}"
    if isinstance(argument, list):
        arg_node = {
            "__class__": "list",
            "__module__": "builtins",
            "__loader__": "ListNode",
            "content": [_json_node(a, node_id + 10 + i) for i, a in enumerate(argument)],
            "__id__": node_id + 1,
        }
    else:
        arg_node = _json_node(argument, node_id + 1)
    return {
        "__class__": attribute,
        "__module__": module,
        "__loader__": loader,
        "content": {
            "__class__": "tuple",
            "__module__": "builtins",
            "__loader__": "TupleNode",
            "content": [arg_node],
            "__id__": node_id + 2,
        },
        "__id__": node_id,
    }


def _json_node(value, node_id: int) -> dict:
    return {
        "__class__": type(value).__name__,
        "__module__": "builtins",
        "__loader__": "JsonNode",
        "content": json.dumps(value),
        "is_json": True,
        "__id__": node_id,
    }


def _wrap(node: dict, how: str, node_id: int) -> dict:
    """``node`` nested inside a list, a dict or an allowed object's state."""
    if how == "list":
        return {
            "__class__": "list",
            "__module__": "builtins",
            "__loader__": "ListNode",
            "content": [node],
            "__id__": node_id,
        }
    if how == "dict":
        return {
            "__class__": "dict",
            "__module__": "builtins",
            "__loader__": "DictNode",
            "content": {"key": node},
            "key_types": _json_node("str", node_id + 1),
            "__id__": node_id,
        }
    if how == "object":
        return {
            "__class__": "Ridge",
            "__module__": "sklearn.linear_model._ridge",
            "__loader__": "ObjectNode",
            "content": {
                "__class__": "dict",
                "__module__": "builtins",
                "__loader__": "DictNode",
                "content": {"alpha": node},
                "key_types": _json_node("str", node_id + 2),
                "__id__": node_id + 1,
            },
            "__id__": node_id,
        }
    return node


@st.composite
def hostile_files(draw, marker: str) -> bytes:
    """A real saved model whose schema, or whole file, was tampered with."""
    original = draw(st.sampled_from(saved_models()))
    with zipfile.ZipFile(io.BytesIO(original)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    schema = json.loads(members["schema.json"])
    nodes = _nodes(schema)
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(nodes))
        action = draw(st.sampled_from(["rename", "loader", "plant", "huge", "drop"]))
        if action == "rename":
            module, _, name = draw(st.sampled_from(HOSTILE)).rpartition(".")
            target["__module__"], target["__class__"] = module, name
            if draw(st.booleans()):
                target["__loader__"] = draw(st.sampled_from(LOADERS))
        elif action == "loader":
            target["__loader__"] = draw(st.sampled_from(LOADERS))
        elif action == "plant":
            payload = _payload(
                draw(st.sampled_from(HOSTILE[:12])),
                draw(st.sampled_from(LOADERS)),
                marker,
                node_id=10_000 + draw(st.integers(0, 10_000)) * 100,
            )
            planted = _wrap(payload, draw(st.sampled_from(["none", "list", "dict", "object"])), 3)
            fields = sorted(k for k in target if not k.startswith("__")) or ["x"]
            key = draw(st.sampled_from(fields))
            if isinstance(target.get(key), list) and target[key]:
                target[key][draw(st.integers(0, len(target[key]) - 1))] = planted
            else:
                target[key] = planted
        elif action == "huge":
            target["content"] = draw(st.sampled_from(HUGE))
            target["__loader__"] = draw(st.sampled_from(["JsonNode", target.get("__loader__", "")]))
        else:
            target.pop(draw(st.sampled_from(sorted(target))))
    members["schema.json"] = json.dumps(copy.deepcopy(schema)).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    data = buffer.getvalue()
    shape = draw(st.sampled_from(["zip"] * 6 + ["truncated", "noise", "empty-zip"]))
    if shape == "truncated":
        return data[: draw(st.integers(0, len(data) - 1))]
    if shape == "noise":
        return draw(st.binary(max_size=2000))
    if shape == "empty-zip":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w"):
            pass
        return buffer.getvalue()
    return data


def _is_allowed_object(obj) -> bool:
    cls = type(obj)
    return cls.__module__.split(".")[0] in PLAIN_MODULES or is_allowed_type(
        f"{cls.__module__}.{cls.__qualname__}"
    )


@pytest.fixture(scope="module")
def marker(tmp_path_factory):
    return tmp_path_factory.mktemp("payload") / "pwned"


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_skops_files_load_safely_or_raise_and_never_run_a_payload(data, marker):
    content = data.draw(hostile_files(str(marker)))
    try:
        loaded = load_model(content)
    except UntrustedModelError:
        event("refused: UntrustedModelError")
    except ValueError as error:
        event(f"unreadable: {type(error.__cause__).__name__}")
        assert error.args[0].startswith(MSG_UNREADABLE.split("{", 1)[0])
    else:
        event(f"loaded: {type(loaded).__name__}")
        assert _is_allowed_object(loaded)
    assert not marker.exists(), "a planted payload ran"


def test_every_saved_model_loads_unchanged():
    # the mutations start from files that load: a refusal comes from the mutation
    for content in saved_models():
        assert _is_allowed_object(load_model(content))
