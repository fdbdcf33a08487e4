"""Crafted model files: tampered trees, zip bombs and files of other fairot versions.

Real fitted models are saved, then the arrays of their trees are changed inside the zip (an
out-of-bounds child, a cycle, a feature index past the data's width): ``fairot.load_model``
refuses each with one ``UntrustedModelError`` before anything predicts. The oracle of "nothing
crashes" is a child process that loads and predicts (a segfault there cannot take the test run
down).
"""

import io
import json
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from fairot import __version__, load_model
from fairot.exceptions import UntrustedModelError
from fairot.utils import _persistence, model_to_bytes, save_model
from fairot.utils._model_checks import check_trees

TREE_REFUSED = "tree structure that scikit-learn's fit never builds"
RNG = np.random.default_rng(0)
X = RNG.normal(size=(200, 4))
Y = (X[:, 0] + X[:, 1] > 0).astype(int)


def _members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _rewrite(data, changes=(), drop=()):
    members = _members(data)
    members.update(dict(changes))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            if name not in drop:
                archive.writestr(name, content)
    return buffer.getvalue()


def _node_arrays(data, field):
    """The .npy members holding a structured node array with ``field`` (every tree's)."""
    found = {}
    for name, content in _members(data).items():
        if name.endswith(".npy"):
            array = np.load(io.BytesIO(content), allow_pickle=False)
            if array.dtype.names and field in array.dtype.names:
                found[name] = array
    return found


def _tamper(data, field, edit):
    """Apply ``edit(nodes)`` to the first tree's node array whose ``field`` it changes."""
    for name, nodes in sorted(_node_arrays(data, field).items()):
        nodes = nodes.copy()
        if edit(nodes):
            buffer = io.BytesIO()
            np.save(buffer, nodes, allow_pickle=False)
            return _rewrite(data, {name: buffer.getvalue()})
    raise AssertionError("no tree to tamper with")


def _first_split(nodes, leaf):
    splits = np.flatnonzero(~leaf)
    return int(splits[0]) if len(splits) else None


def _tree_edit(kind):
    def edit(nodes):
        i = _first_split(nodes, nodes["left_child"] == -1)
        if i is None:
            return False
        if kind == "out-of-bounds child":
            nodes["left_child"][i] = 10**6
        elif kind == "cycle":
            nodes["right_child"][i] = i  # back to itself: a walk never ends
        elif kind == "negative child":
            nodes["left_child"][i] = -7
        elif kind == "feature index":
            nodes["feature"][i] = 40
        elif kind == "nan threshold":
            nodes["threshold"][i] = np.nan
        return True

    return edit


def _hgb_edit(kind):
    def edit(nodes):
        i = _first_split(nodes, nodes["is_leaf"].astype(bool))
        if i is None:
            return False
        if kind == "out-of-bounds child":
            nodes["left"][i] = 10**6
        elif kind == "cycle":
            nodes["right"][i] = 0
        elif kind == "feature index":
            nodes["feature_idx"][i] = 40
        elif kind == "categorical":
            nodes["is_categorical"][i] = 1
            nodes["bitset_idx"][i] = 10**6
        return True

    return edit


TREE_MODELS = {
    "tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    "forest": lambda: RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
    "boosting": lambda: GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0),
    "pipeline": lambda: make_pipeline(StandardScaler(), DecisionTreeClassifier(random_state=0)),
}


@pytest.mark.parametrize("name", [*TREE_MODELS, "hgb"])
def test_real_tree_models_load_and_predict_as_saved(name):
    make = TREE_MODELS.get(name, lambda: HistGradientBoostingClassifier(max_iter=3))
    model = make().fit(X, Y)
    loaded = load_model(model_to_bytes(model))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("name", list(TREE_MODELS))
@pytest.mark.parametrize(
    "kind", ["out-of-bounds child", "cycle", "negative child", "feature index", "nan threshold"]
)
def test_a_tampered_tree_is_refused(name, kind):
    data = _tamper(model_to_bytes(TREE_MODELS[name]().fit(X, Y)), "left_child", _tree_edit(kind))
    with pytest.raises(UntrustedModelError, match=TREE_REFUSED):
        load_model(data)


@pytest.mark.parametrize("kind", ["out-of-bounds child", "cycle", "feature index", "categorical"])
def test_a_tampered_histogram_boosting_tree_is_refused(kind):
    data = model_to_bytes(HistGradientBoostingClassifier(max_iter=3).fit(X, Y))
    with pytest.raises(UntrustedModelError, match=TREE_REFUSED):
        load_model(_tamper(data, "feature_idx", _hgb_edit(kind)))


def test_a_forest_member_reading_more_features_than_the_forest_is_refused():
    # A member whose tree is consistent with itself, fitted on 40 columns, inside a forest of 4:
    # the forest hands its members X of 4 columns unchecked.
    forest = RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, Y)
    wide = np.hstack([X] * 10)
    forest.estimators_[0] = DecisionTreeClassifier(max_depth=2, random_state=0).fit(wide, Y)
    with pytest.raises(UntrustedModelError, match="a sub-estimator reads 40 features, not 4"):
        check_trees(forest, "model.skops")
    with pytest.raises(UntrustedModelError, match=TREE_REFUSED):
        load_model(model_to_bytes(forest))


def test_the_refused_file_would_crash_or_lie_unchecked(tmp_path):
    """Why the check exists: skops with the tree trusted, then predict, in a child process."""
    data = _tamper(
        model_to_bytes(DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, Y)),
        "left_child",
        _tree_edit("feature index"),
    )
    path = tmp_path / "model.skops"
    path.write_bytes(data)
    code = (
        "import numpy as np, skops.io, sys\n"
        f"path = {str(path)!r}\n"
        "m = skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))\n"
        "X = np.random.default_rng(0).normal(size=(200, 4))\n"
        "p = m.predict_proba(X)\n"
        "print('finite' if np.isfinite(p).all() else 'nan')\n"
    )
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    # Reading past the row: either a crash (negative status) or answers from other memory.
    assert child.returncode != 0 or child.stdout.strip() in (b"finite", b"nan")
    with pytest.raises(UntrustedModelError):
        load_model(path)


# ------------------------------------------------------------------------------ zip bombs


def test_a_schema_over_the_limit_is_refused_naming_it(monkeypatch):
    data = model_to_bytes(LogisticRegression().fit(X, Y))
    size = len(_members(data)["schema.json"])
    monkeypatch.setattr(_persistence, "MAX_SCHEMA_BYTES", size - 1)
    with pytest.raises(ValueError, match=r"schema.json would inflate to .* \(MAX_SCHEMA_BYTES\)"):
        load_model(data)
    monkeypatch.setattr(_persistence, "MAX_SCHEMA_BYTES", size)
    assert load_model(data).coef_.shape == (1, 4)


def test_a_small_zip_inflating_past_the_total_limit_is_refused(monkeypatch):
    limit = 1 << 20
    monkeypatch.setattr(_persistence, "MAX_UNCOMPRESSED_BYTES", limit)
    data = model_to_bytes(LogisticRegression().fit(X, Y))
    bomb = _rewrite(data, {"padding.npy": b"\0" * (limit + 1)})
    assert len(bomb) < limit // 100  # a small file...
    with pytest.raises(
        ValueError, match=r"its members would inflate to .* \(MAX_UNCOMPRESSED_BYTES\)"
    ):
        load_model(bomb)  # ...refused from its declared sizes, nothing inflated


def _declare_size(data, member, size):
    """The zip with ``member``'s uncompressed size declared as ``size`` in both its headers."""
    data = bytearray(data)
    name = member.encode()
    at = 0
    while (at := data.find(b"PK\x03\x04", at)) >= 0:  # local headers: size at 22, name at 30
        if data[at + 30 : at + 30 + len(name)] == name:
            data[at + 22 : at + 26] = struct.pack("<I", size)
        at += 4
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:  # central directory: 24 and 46
        if data[at + 46 : at + 46 + len(name)] == name:
            data[at + 24 : at + 28] = struct.pack("<I", size)
        at += 4
    return bytes(data)


def test_a_schema_lying_about_its_size_is_read_no_further_than_declared(monkeypatch):
    monkeypatch.setattr(_persistence, "MAX_SCHEMA_BYTES", 1000)
    bomb = _rewrite(model_to_bytes(LogisticRegression()), {"schema.json": b" " * 50_000 + b"{}"})
    bomb = _declare_size(bomb, "schema.json", 100)  # says 100 bytes, inflates to 50,002
    with zipfile.ZipFile(io.BytesIO(bomb)) as archive:
        assert archive.getinfo("schema.json").file_size == 100
    with pytest.raises(ValueError, match="Cannot read the model") as caught:
        load_model(bomb)  # read up to the declared size, then the CRC does not match
    assert "CRC" in str(caught.value) or "Bad" in str(caught.value)


# ------------------------------------------------------------------------------- versions


def _fairot_model_bytes():
    from fairot.classification import QuantileParityPostProcessor

    g = np.tile([0, 1], 100)
    model = QuantileParityPostProcessor(estimator=LogisticRegression())
    return model_to_bytes(model.fit(X, Y, sensitive_features=g))


def _renamed(data, version):
    schema = _members(data)["schema.json"].decode()
    moved = schema.replace("fairot.classification._postprocessing", "fairot.classification._gone")
    changes = {"schema.json": moved.encode()}
    if version is None:
        return _rewrite(data, changes, drop={"fairot.json"})
    changes["fairot.json"] = json.dumps({"fairot": version}).encode()
    return _rewrite(data, changes)


def test_save_model_records_the_version_and_round_trips(tmp_path):
    data = _fairot_model_bytes()
    assert json.loads(_members(data)["fairot.json"])["fairot"] == __version__
    path = tmp_path / "model.skops"
    save_model(load_model(data), path)
    assert json.loads(_members(path.read_bytes())["fairot.json"])["fairot"] == __version__
    import skops.io  # skops itself ignores the extra member

    assert (
        type(
            skops.io.loads(
                path.read_bytes(), trusted=skops.io.get_untrusted_types(data=path.read_bytes())
            )
        ).__name__
        == "QuantileParityPostProcessor"
    )


def test_a_model_of_another_version_gets_the_version_message():
    data = _renamed(_fairot_model_bytes(), "0.0.1")
    with pytest.raises(UntrustedModelError, match="saved by fairot 0.0.1, this is fairot") as e:
        load_model(data)
    assert "Refit the model" in str(e.value) and "pip install 'fairot==0.0.1'" in str(e.value)
    assert "tampered" not in str(e.value) and "run code" not in str(e.value)


def test_a_model_without_a_version_record_gets_the_version_message():
    data = _renamed(_fairot_model_bytes(), None)
    with pytest.raises(UntrustedModelError, match="a fairot version that recorded none"):
        load_model(data)


def test_the_same_version_naming_a_missing_class_is_the_tampering_message():
    data = _renamed(_fairot_model_bytes(), __version__)
    with pytest.raises(UntrustedModelError, match="lists types that fairot.load_model will not"):
        load_model(data)


def test_an_old_version_naming_a_dangerous_type_is_still_the_tampering_message():
    data = _fairot_model_bytes()
    schema = _members(data)["schema.json"].decode()
    evil = schema.replace(
        '"__module__": "fairot.classification._postprocessing"', '"__module__": "os"', 1
    ).replace('"__class__": "QuantileParityPostProcessor"', '"__class__": "system"', 1)
    data = _rewrite(data, {"schema.json": evil.encode(), "fairot.json": b'{"fairot": "0.0.1"}'})
    with pytest.raises(UntrustedModelError, match="lists types that fairot.load_model will not"):
        load_model(data)


def test_a_tree_whose_estimator_lost_its_width_is_refused():
    # scikit-learn checks X's width against n_features_in_ only when the attribute exists.
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, Y)
    del model.n_features_in_
    with pytest.raises(UntrustedModelError, match="no n_features_in_ on the estimator"):
        check_trees(model, "model.skops")


def test_boosting_stages_wider_than_its_predictions_are_refused():
    model = GradientBoostingClassifier(n_estimators=2, max_depth=2, random_state=0).fit(X, Y)
    model.estimators_ = np.concatenate([model.estimators_, model.estimators_], axis=1)
    with pytest.raises(UntrustedModelError, match="stages of another width"):
        check_trees(model, "model.skops")
    with pytest.raises(UntrustedModelError, match=TREE_REFUSED):
        load_model(model_to_bytes(model))


@pytest.mark.parametrize("version", ["0.0.1", None, "same"])
def test_a_file_that_fails_to_rebuild_names_the_version_only_when_another(version):
    data = _fairot_model_bytes()
    schema = json.loads(_members(data)["schema.json"])
    schema["content"]["__loader__"] = "NoSuchNode"  # skops cannot rebuild the model's state
    changes = {"schema.json": json.dumps(schema).encode()}
    if version is None:
        data = _rewrite(data, changes, drop={"fairot.json"})
    else:
        recorded = __version__ if version == "same" else version
        changes["fairot.json"] = json.dumps({"fairot": recorded}).encode()
        data = _rewrite(data, changes)
    with pytest.raises(ValueError, match="Cannot read the model") as caught:
        load_model(data)
    said = "It was saved by fairot 0.0.1, this is fairot" in str(caught.value)
    assert said == (version == "0.0.1")
