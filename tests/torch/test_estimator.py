"""FairMLPClassifier: inputs, reproducibility, and fairness measured by fairot.metrics."""

import re

import numpy as np
import pandas as pd
import pytest
import torch

from fairot.metrics import error_rate, wass1
from fairot.torch import FairMLPClassifier
from fairot.torch._estimator import MSG_HIDDEN, MSG_LOGITS


def _data(seed, n=800):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    b = rng.integers(0, 2, n)
    X = np.column_stack([rng.normal(a + 0.5 * b, 1.0), rng.normal(size=n), a, b])
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 1, n) > 0.8).astype(int)
    return X, y, pd.DataFrame({"a": a, "b": b})


def _clf(**kwargs):
    params = {
        "hidden_layer_sizes": (16,),
        "n_epochs": 10,
        "warmup_epochs": 2,
        "batch_size": 64,
        "random_state": 0,
    }
    return FairMLPClassifier(**{**params, **kwargs})


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fair_model_has_lower_wass1_on_held_out_data(dtype):
    X, y, s = _data(0)
    Xt, yt, st = _data(1)
    fair = _clf(lam=5.0).fit(X.astype(dtype), y, sensitive_features=s)
    plain = _clf(lam=0.0).fit(X.astype(dtype), y, sensitive_features=s)
    assert len(fair.groups_) == 4  # intersections of two columns
    p_fair, p_plain = fair.predict_proba(Xt)[:, 1], plain.predict_proba(Xt)[:, 1]
    assert wass1(None, p_fair, sensitive_features=st) < 0.5 * wass1(
        None, p_plain, sensitive_features=st
    )
    assert error_rate(yt, p_plain) < 0.3
    np.testing.assert_allclose(fair.predict_proba(Xt).sum(axis=1), 1.0)
    assert set(fair.predict(Xt)) <= {0, 1}


def test_reproducible_and_sensitive_features_forms():
    X, y, s = _data(2, n=300)
    a = s["a"].to_numpy()
    first = _clf(n_epochs=3).fit(X, y, sensitive_features=a).predict_proba(X)
    for form in (a.tolist(), pd.Series(a), a):
        again = _clf(n_epochs=3).fit(X, y, sensitive_features=form).predict_proba(X)
        np.testing.assert_array_equal(again, first)


def test_string_labels_and_history():
    X, y, s = _data(3, n=300)
    labels = np.where(y == 1, "yes", "no")
    clf = _clf(n_epochs=4, method="cot").fit(X, labels, sensitive_features=s["a"])
    assert list(clf.classes_) == ["no", "yes"]
    assert {"val_wass1", "val_error", "lam"} <= set(clf.history_.columns)


def test_bad_hidden_layer_sizes():
    X, y, s = _data(4, n=100)
    with pytest.raises(ValueError, match=re.escape(MSG_HIDDEN.format(value=(8, 0)))):
        _clf(hidden_layer_sizes=(8, 0)).fit(X, y, sensitive_features=s["a"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("method", ["cot", "dot"])
def test_fit_on_cuda_predicts_like_cpu(method):
    X, y, groups = _data(4)
    cpu = _clf(method=method).fit(X, y, sensitive_features=groups)
    gpu = _clf(method=method, device="cuda").fit(X, y, sensitive_features=groups)
    # float32 on two devices: the same seeded run up to the order of floating-point sums.
    np.testing.assert_allclose(gpu.predict_proba(X), cpu.predict_proba(X), atol=1e-3)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_standardisation_of_extreme_columns_matches_unit_data(scale):
    # Standardising makes the model invariant to a column's unit; X.std() overflowed past
    # 1e154 (a RuntimeWarning, then NaN). The same data in unit scale is the oracle.
    X, y, s = _data(5, n=300)
    unit = _clf(n_epochs=3).fit(X, y, sensitive_features=s["a"])
    extreme = _clf(n_epochs=3).fit(X * scale, y, sensitive_features=s["a"])
    np.testing.assert_allclose(extreme.mean_, unit.mean_ * scale, rtol=1e-12)
    np.testing.assert_allclose(extreme.scale_, unit.scale_ * scale, rtol=1e-12)
    np.testing.assert_allclose(
        extreme.predict_proba(X * scale), unit.predict_proba(X), rtol=0, atol=1e-5
    )


def test_inputs_beyond_float32_after_standardising_are_refused():
    X, y, s = _data(6, n=300)
    clf = _clf(n_epochs=2).fit(X, y, sensitive_features=s["a"])
    far = X[:3].copy()
    far[0, 1] = 1e300
    peak = abs((1e300 - clf.mean_[1]) / clf.scale_[1])
    with pytest.raises(ValueError, match=re.escape(MSG_LOGITS.format(count=1, peak=peak))):
        clf.predict_proba(far)
    # In range, the same rows are scored (no error from the check itself).
    assert np.isfinite(clf.predict_proba(X[:3])).all()
