"""Nothing lost, nothing silent: persistence, atomic fits, batch-free predictions, clear errors."""

import copy
import pickle

import joblib
import numpy as np
import pytest
import skops.io as sio
from sklearn.exceptions import NotFittedError

from fairot.classification import (
    COTClassifier,
    DivergenceError,
    DOTClassifier,
    QuantileParityPostProcessor,
)
from fairot.classification._kernels import STATUS_NOT_FINITE
from fairot.utils.targets import MSG_Y_NAN
from tests.helpers import make_biased


def _fitted(name, X, y, a):
    if name == "DPP":
        return QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    cls = COTClassifier if name == "COT" else DOTClassifier
    return cls(n_updates=200, batch_size=20, random_state=0).fit(X, y, sensitive_features=a)


def _assert_same_state(left, right):
    """Every attribute equal: arrays exactly, containers element-wise."""
    assert left.keys() == right.keys()
    for key in left:
        a, b = left[key], right[key]
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=key)
        elif isinstance(a, np.random.Generator):
            assert a.bit_generator.state == b.bit_generator.state, key
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
            for x, z in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, z, err_msg=key)
        elif hasattr(a, "get_params") or key in ("_encoding", "_table", "fourier_features_"):
            assert pickle.dumps(a) == pickle.dumps(b), key
        else:
            assert a == b, key


@pytest.mark.parametrize("name", ["COT", "DOT", "DPP"])
@pytest.mark.parametrize("way", ["skops", "pickle", "joblib"])
def test_persistence_round_trip(name, way, biased, tmp_path):
    X, y, a = biased
    model = _fitted(name, X, y, a)
    path = tmp_path / "model"
    if way == "skops":
        sio.dump(model, path)
        untrusted = sio.get_untrusted_types(file=path)
        # Only fairot's own types need trusting: no pandas, no arbitrary callables.
        assert all(t.startswith("fairot.") for t in untrusted), untrusted
        loaded = sio.load(path, trusted=untrusted)
    elif way == "pickle":
        loaded = pickle.loads(pickle.dumps(model))
    else:
        joblib.dump(model, path)
        loaded = joblib.load(path)
    for method in ("predict", "predict_proba"):
        np.testing.assert_array_equal(
            getattr(loaded, method)(X, sensitive_features=a),
            getattr(model, method)(X, sensitive_features=a),
        )
    if name != "DPP":
        assert loaded.history_.equals(model.history_)
        # A loaded model continues the run exactly as the original would.
        loaded.partial_fit(X, y, sensitive_features=a, n_updates=50)
        model.partial_fit(X, y, sensitive_features=a, n_updates=50)
        np.testing.assert_array_equal(loaded.coef_, model.coef_)


def _diverging(cls, monkeypatch):
    """Settings under which a fit diverges after it has changed the state."""
    if cls is COTClassifier:
        # The setting: lambda = .01 with a dual step of .1 (a real divergence).
        return {"reg_strength": 0.01, "dual_step_size": 0.1, "n_updates": 5000}
    # DOT's sign steps keep theta finite at any step size; a kernel that wrecks theta and
    # reports it stands in for a real divergence.
    original = DOTClassifier._run_chunk

    def wreck(self, *args):
        completed, _ = original(self, *args)
        self._theta[:] = np.nan
        return completed, STATUS_NOT_FINITE

    monkeypatch.setattr(DOTClassifier, "_run_chunk", wreck)
    return {"n_updates": 300}


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_failed_first_fit_leaves_the_estimator_unfitted(cls, biased, monkeypatch):
    X, y, a = biased
    model = cls(random_state=0, **_diverging(cls, monkeypatch))
    before = copy.deepcopy(model.__dict__)
    with pytest.raises(DivergenceError):
        model.fit(X, y, sensitive_features=a)
    assert model.__dict__.keys() == before.keys()
    with pytest.raises(NotFittedError):
        model.predict(X)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_failed_refit_with_new_groups_keeps_the_previous_model(cls, biased, monkeypatch):
    X, y, a = biased
    model = cls(n_updates=200, batch_size=20, random_state=0).fit(X, y, sensitive_features=a)
    before = copy.deepcopy(model.__dict__)
    proba = model.predict_proba(X)
    three = np.where(X[:, 1] > 0.5, 2, a)  # a new group
    params = model.get_params()
    model.set_params(**_diverging(cls, monkeypatch))
    with pytest.raises(DivergenceError):
        model.fit(X, y, sensitive_features=three)
    monkeypatch.undo()
    model.set_params(**params)
    _assert_same_state(model.__dict__, before)
    np.testing.assert_array_equal(model.predict_proba(X), proba)
    assert model.groups_ == [0, 1]
    # Other rejected calls leave it as well (unseen group in partial_fit).
    with pytest.raises(ValueError, match="not seen at fit time"):
        model.partial_fit(X, y, sensitive_features=three, n_updates=10)
    _assert_same_state(model.__dict__, before)


@pytest.mark.parametrize("bad", ["nan", "three"])
def test_eval_set_labels_are_checked(bad, biased):
    X, y, a = biased
    ey = y[400:].astype(float)
    if bad == "nan":
        ey[3] = np.nan
        match = MSG_Y_NAN.format(name="eval_set y", row=3).split(";")[0]
    else:
        ey[3] = 2
        match = "eval_set y: Only binary classification"
    model = DOTClassifier(n_updates=20, batch_size=20, random_state=0)
    with pytest.raises(ValueError, match=match.replace("(", r"\(").replace(")", r"\)")):
        model.fit(X[:400], y[:400], sensitive_features=a[:400], eval_set=(X[400:], ey, a[400:]))
    assert not hasattr(model, "coef_")


@pytest.mark.parametrize("name", ["COT", "DOT", "DPP"])
def test_predictions_do_not_depend_on_the_batch(name, biased):
    X, y, a = biased
    model = _fitted(name, X, y, a)
    X_new, _, a_new = make_biased(n=120, seed=9)
    # Rows the model was fitted on (scores that tie with the stored ones) and new rows.
    for data, groups in ((X[:120], a[:120]), (X_new, a_new)):
        whole = model.predict_proba(data, sensitive_features=groups)
        rows = np.vstack(
            [
                model.predict_proba(data[i : i + 1], sensitive_features=groups[i : i + 1])
                for i in range(data.shape[0])
            ]
        )
        np.testing.assert_array_equal(rows, whole)
        # Any other cut of the batch, and reversed order, too.
        order = np.random.default_rng(0).permutation(data.shape[0])
        shuffled = model.predict_proba(data[order], sensitive_features=groups[order])
        np.testing.assert_array_equal(shuffled, whole[order])
