"""fairot.load_model: a tampered skops file cannot run code; fairot's own models load."""

import io
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import skops.io
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeRegressor

import fairot
from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.exceptions import UntrustedModelError
from fairot.regression import WassersteinFairRegressor
from fairot.utils import ScoreColumn, is_allowed_type, load_model


def _payload_file(marker) -> bytes:
    """A skops file whose tree calls ``os.system`` when it is constructed (a real payload)."""
    node = {
        "__class__": "system",
        "__module__": "os",
        "__loader__": "ConstructorFromReduceNode",
        "content": {
            "__class__": "tuple",
            "__module__": "builtins",
            "__loader__": "TupleNode",
            "content": [
                {
                    "__class__": "str",
                    "__module__": "builtins",
                    "__loader__": "JsonNode",
                    "content": json.dumps(f"touch {marker}"),
                    "is_json": True,
                    "__id__": 2,
                }
            ],
            "__id__": 3,
        },
        "__id__": 4,
    }
    schema = {
        "__class__": "list",
        "__module__": "builtins",
        "__loader__": "ListNode",
        "content": [node],
        "__id__": 1,
        "protocol": 2,
        "_skops_version": skops.__version__,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("schema.json", json.dumps(schema))
    return buffer.getvalue()


def test_the_old_recipe_runs_the_payload(tmp_path):
    # The attack is real: trusting what the file lists runs os.system at load.
    marker = tmp_path / "pwned-old"
    path = tmp_path / "model.skops"
    path.write_bytes(_payload_file(marker))
    skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    assert marker.exists()


@pytest.mark.parametrize("as_bytes", [False, True])
def test_load_model_refuses_the_payload_and_names_it(tmp_path, as_bytes):
    marker = tmp_path / "pwned"
    path = tmp_path / "model.skops"
    path.write_bytes(_payload_file(marker))
    with pytest.raises(UntrustedModelError, match=r"os\.system") as raised:
        load_model(path.read_bytes() if as_bytes else path)
    assert raised.value.types == ["os.system"]
    assert not marker.exists()


@pytest.mark.parametrize(
    "name",
    [
        "os.system",
        "posix.system",
        "builtins.exec",
        "builtins.eval",
        "subprocess.Popen",
        "fairot.cli._io.Path",  # a re-export, not a fairot class
        "fairot_evil.Model",
        "fairot.utils._atomic.write_atomic",  # a function, not a class
        "sklearn.utils._testing.assert_allclose",
        "functools.partial",
        "",
        "system",
    ],
)
def test_is_allowed_type_refuses(name):
    assert not is_allowed_type(name)


@pytest.mark.parametrize(
    "name",
    [
        "fairot.classification._cot.COTClassifier",
        "fairot.utils._score_column.ScoreColumn",
        "sklearn.linear_model._logistic.LogisticRegression",
        "sklearn.tree._tree.Tree",
    ],
)
def test_is_allowed_type_accepts(name):
    assert is_allowed_type(name)


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    g = rng.integers(0, 2, 300)
    y = (X[:, 0] + g > 0.5).astype(int)
    return X, y, X[:, 0] + g + rng.normal(scale=0.1, size=300), g


def _models():
    X, y, y_reg, g = _data()
    unit = np.abs(np.tanh(X))
    logistic = LogisticRegression().fit(X, y)
    return [
        (COTClassifier(n_updates=20, random_state=0).fit(X, y, sensitive_features=g), X),
        (DOTClassifier(n_updates=20, random_state=0).fit(X, y, sensitive_features=g), X),
        (
            COTClassifier(estimator=FrozenEstimator(logistic), n_updates=20, random_state=0).fit(
                X, y, sensitive_features=g
            ),
            X,
        ),
        (
            QuantileParityPostProcessor(
                estimator=HistGradientBoostingClassifier(max_iter=5, random_state=0)
            ).fit(X, y, sensitive_features=g),
            X,
        ),
        (
            QuantileParityPostProcessor(
                estimator=FrozenEstimator(
                    make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
                )
            ).fit(X, y, sensitive_features=g),
            X,
        ),
        (
            QuantileParityPostProcessor(estimator=ScoreColumn(column=0)).fit(
                unit, y, sensitive_features=g
            ),
            unit,
        ),
        (
            WassersteinFairRegressor(estimator=Ridge(), random_state=0).fit(
                X, y_reg, sensitive_features=g
            ),
            X,
        ),
        (
            WassersteinFairRegressor(
                estimator=DecisionTreeRegressor(max_depth=3, random_state=0), random_state=0
            ).fit(X, y_reg, sensitive_features=g),
            X,
        ),
        (
            WassersteinFairRegressor(estimator=ScoreColumn(column=0), random_state=0).fit(
                X, y_reg, sensitive_features=g
            ),
            X,
        ),
    ]


@pytest.mark.parametrize("index", range(9))
def test_fairot_models_round_trip(tmp_path, index):
    model, X = _models()[index]
    _, _, _, g = _data()
    path = tmp_path / "model.skops"
    skops.io.dump(model, path)
    loaded = fairot.load_model(path)
    assert type(loaded) is type(model)
    np.testing.assert_array_equal(
        loaded.predict(X, sensitive_features=g), model.predict(X, sensitive_features=g)
    )


def test_load_model_rejects_other_inputs():
    with pytest.raises(TypeError, match="path to a .skops file"):
        load_model(12)


@pytest.mark.integration
def test_import_fairot_stays_light():
    code = (
        "import sys, fairot; "
        "print(any(m.split('.')[0] in ('sklearn', 'skops') for m in sys.modules)); "
        "print(callable(fairot.load_model))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_allowed_class_by_constructor_call_is_refused(tmp_path):
    # A fairot class is allowed from its saved state, but never called with the file's arguments.
    marker = tmp_path / "never"
    data = bytearray(_payload_file(marker))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        schema = json.loads(archive.read("schema.json"))
    schema["content"][0]["__module__"] = "fairot.utils._score_column"
    schema["content"][0]["__class__"] = "ScoreColumn"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("schema.json", json.dumps(schema))
    with pytest.raises(UntrustedModelError, match="constructor call") as raised:
        load_model(buffer.getvalue())
    assert raised.value.types == ["fairot.utils._score_column.ScoreColumn"]


def _zip(members) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


_LIST_NODE = {
    "__class__": "list",
    "__module__": "builtins",
    "__loader__": "ListNode",
    "protocol": 2,
}


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        # found by tests/utils/test_persistence_fuzz.py: each raised skops' or zipfile's own
        # error (BadZipFile, KeyError, AttributeError, an unrelated ValueError) before
        (b"", "BadZipFile"),  # fairot checks the zip first (sizes), before skops
        (b"not a zip file", "BadZipFile"),
        (_zip({"other.json": "{}"}), "KeyError"),
        (_zip({"schema.json": "{"}), "JSONDecodeError"),
        (_zip({"schema.json": json.dumps({**_LIST_NODE, "__id__": 1})}), "KeyError"),
        (_zip({"schema.json": json.dumps({**_LIST_NODE, "content": ["x"], "__id__": 1})}), ""),
    ],
)
def test_unreadable_files_raise_one_clear_value_error(content, cause):
    with pytest.raises(ValueError, match="^Cannot read the model: the model bytes") as raised:
        load_model(content)
    assert not isinstance(raised.value, UntrustedModelError)
    assert cause in str(raised.value)


def test_truncated_model_file_raises_a_clear_value_error(tmp_path):
    data = skops.io.dumps(make_pipeline(StandardScaler(), Ridge()).fit([[0.0], [1.0]], [0, 1]))
    path = tmp_path / "model.skops"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=f"^Cannot read the model: {path}"):
        load_model(path)
