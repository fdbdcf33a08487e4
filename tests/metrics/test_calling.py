"""fairlearn's calling form, sample weights against replicated rows, and MetricFrame's by_group."""

import re

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame
from sklearn.metrics import mean_squared_error, r2_score

from fairot.metrics import (
    error_rate,
    fairness_report,
    max_pairwise_wasserstein,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
)
from fairot.metrics._calling import MSG_EMPTY_WEIGHT
from fairot.metrics._report import MSG_GROUP_INDEX
from fairot.utils.arrays import MSG_WEIGHTS

GROUP_METRICS = [
    wass1,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    lambda *a, **k: max_pairwise_wasserstein(*a, **k).distance,
]


def _literal(message):
    return re.escape(max(re.split(r"\{[^}]*\}", message), key=len))


def _data(seed=0, n=120):
    rng = np.random.default_rng(seed)
    sf = pd.DataFrame({"race": rng.choice(["A", "B"], n), "sex": rng.choice(["F", "M"], n)})
    s = np.clip(rng.beta(2, 4, n) + 0.15 * (sf.sex == "M"), 0, 1)
    y = (rng.random(n) < s).astype(int)
    w = rng.integers(0, 4, n).astype(float)
    w[:8] = 1.0  # every group keeps some weight
    return y, s, sf, w


@pytest.mark.parametrize("metric", GROUP_METRICS)
def test_labels_or_none_agree(metric):
    y, s, sf, _ = _data()
    base = metric(None, s, sensitive_features=sf)
    assert metric(y, s, sensitive_features=sf) == base
    assert metric(y_true=None, y_pred=s, sensitive_features=sf) == base


def test_form_errors():
    y, s, sf, _ = _data(1)
    form = re.escape("wass1 takes fairlearn's form wass1(y_true, y_pred, *, sensitive_features")
    with pytest.raises(TypeError, match=form):
        wass1(s)
    with pytest.raises(TypeError, match=form):
        wass1(y, s, sf)
    # MetricFrame calls metric(y_true, y_pred) without groups: refused, not read as groups.
    with pytest.raises(TypeError, match=form):
        wass1(y, s)
    with pytest.raises(TypeError, match=form):
        wass1(y, s, sensitive_features=None)
    with pytest.raises(ValueError, match="Found inconsistent numbers of samples"):
        wass1(y[:-1], s, sensitive_features=sf)
    # Integer-valued float group codes are groups.
    assert wass1(None, s, sensitive_features=(sf.sex == "M").astype(float).to_numpy()) == wass1(
        None, s, sensitive_features=sf.sex
    )


@pytest.mark.parametrize("group_mode", ["intersection", "marginal"])
@pytest.mark.parametrize("metric", GROUP_METRICS)
def test_integer_weights_equal_replicated_rows(metric, group_mode):
    y, s, sf, w = _data(2)
    reps = w.astype(int)
    replicated = metric(
        None,
        np.repeat(s, reps),
        sensitive_features=sf.loc[sf.index.repeat(reps)],
        group_mode=group_mode,
    )
    assert metric(
        None, s, sensitive_features=sf, sample_weight=w, group_mode=group_mode
    ) == pytest.approx(replicated, rel=1e-9, abs=1e-12)


def test_weighted_wass1_variants_equal_replicated_rows():
    y, s, sf, w = _data(3)
    reps = w.astype(int)
    rs, rsf = np.repeat(s, reps), sf.loc[sf.index.repeat(reps)]
    for kwargs in ({"group_weights": "proportional"}, {"reference": s[::3]}):
        assert wass1(None, s, sensitive_features=sf, sample_weight=w, **kwargs) == pytest.approx(
            wass1(None, rs, sensitive_features=rsf, **kwargs), rel=1e-9, abs=1e-12
        )
    assert error_rate(y, s, sample_weight=w) == pytest.approx(
        error_rate(np.repeat(y, reps), rs), rel=1e-12
    )


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_weighted_report_equals_replicated_rows(task):
    y, s, sf, w = _data(4)
    if task == "regression":
        y = s * 3 + np.random.default_rng(0).normal(size=s.shape[0])
        s = s * 3
    reps = w.astype(int)
    weighted = fairness_report(y, s, sensitive_features=sf, task=task, sample_weight=w)
    replicated = fairness_report(
        np.repeat(y, reps),
        np.repeat(s, reps),
        sensitive_features=sf.loc[sf.index.repeat(reps)],
        task=task,
    )
    pd.testing.assert_frame_equal(
        weighted.drop(columns="size"), replicated.drop(columns="size"), rtol=1e-9, atol=1e-12
    )
    for key, value in replicated.attrs["summary"].items():
        if key == "n_samples":
            continue
        if isinstance(value, str):
            assert weighted.attrs["summary"][key] == value
        else:
            assert weighted.attrs["summary"][key] == pytest.approx(value, rel=1e-9, abs=1e-12)


def test_zero_weight_group_is_refused():
    y, s, sf, w = _data(5)
    w = np.where(sf.sex == "F", 0.0, w)
    with pytest.raises(ValueError, match=_literal(MSG_EMPTY_WEIGHT)):
        wass1(None, s, sensitive_features=sf.sex, sample_weight=w)
    negative = MSG_WEIGHTS.split("{value")[0].format(name="sample_weight")
    with pytest.raises(ValueError, match=re.escape(negative)):
        wass1(None, s, sensitive_features=sf.sex, sample_weight=-np.ones_like(s))


def test_multi_index_report_matches_metricframe_by_group():
    y, s, sf, w = _data(6, n=400)
    pred = (s > 0.5).astype(int)

    def accuracy(y_true, y_pred, sample_weight):
        return np.average(y_true == y_pred, weights=sample_weight)

    def mean_score(y_true, y_pred, sample_weight):
        return np.average(y_pred, weights=sample_weight)

    frame = MetricFrame(
        metrics={"accuracy": accuracy},
        y_true=y,
        y_pred=pred,
        sensitive_features=sf,
        sample_params={"accuracy": {"sample_weight": w}},
    )
    scores = MetricFrame(
        metrics={"mean_score": mean_score},
        y_true=y,
        y_pred=s,
        sensitive_features=sf,
        sample_params={"mean_score": {"sample_weight": w}},
    )
    report = fairness_report(y, s, sensitive_features=sf, sample_weight=w, group_index="multi")
    by_group = report.iloc[:-1]
    assert by_group.index.names == frame.by_group.index.names == ["race", "sex"]
    assert list(by_group.index) == list(frame.by_group.index)
    np.testing.assert_allclose(by_group["accuracy"], frame.by_group["accuracy"], rtol=1e-12)
    np.testing.assert_allclose(by_group["mean_score"], scores.by_group["mean_score"], rtol=1e-12)
    assert report.loc[("overall", "overall"), "accuracy"] == pytest.approx(
        frame.overall["accuracy"], rel=1e-12
    )
    one_column = fairness_report(y, s, sensitive_features=sf["sex"], group_index="multi")
    assert list(one_column.index) == ["F", "M", "overall"] and one_column.index.name == "sex"
    marginal = fairness_report(
        y, s, sensitive_features=sf, group_mode="marginal", group_index="multi"
    )
    assert marginal.index.names == ["feature", "value"]
    assert ("sex", "M") in marginal.index
    with pytest.raises(ValueError, match=_literal(MSG_GROUP_INDEX)):
        fairness_report(y, s, sensitive_features=sf, group_index="tuples")


def test_regression_report_weighted_matches_sklearn():
    rng = np.random.default_rng(7)
    g = rng.integers(0, 3, 300)
    y = rng.normal(size=300) + g
    pred = y + rng.normal(0, 0.5, 300)
    w = rng.random(300) + 0.1
    report = fairness_report(y, pred, sensitive_features=g, task="regression", sample_weight=w)
    for name in ("0", "1", "2"):
        m = g == int(name)
        assert report.loc[name, "mse"] == pytest.approx(
            mean_squared_error(y[m], pred[m], sample_weight=w[m]), rel=1e-12
        )
        assert report.loc[name, "r2"] == pytest.approx(
            r2_score(y[m], pred[m], sample_weight=w[m]), rel=1e-12
        )
    assert report.loc["overall", "rmse"] ** 2 == pytest.approx(report.loc["overall", "mse"])


def test_error_rate_in_fairlearn_derived_metric():
    # fairlearn's metric factory calls error_rate(y_true, y_pred, sample_weight=...) per group.
    from fairlearn.metrics import make_derived_metric

    y, s, sf, w = _data(8, n=300)
    gap = make_derived_metric(
        metric=error_rate, transform="difference", sample_param_names=["sample_weight"]
    )
    errors = {
        a: np.average((s[sf.sex == a] > 0.5) != y[sf.sex == a], weights=w[sf.sex == a])
        for a in ("F", "M")
    }
    assert gap(y, s, sensitive_features=sf.sex, sample_weight=w) == pytest.approx(
        abs(errors["F"] - errors["M"]), rel=1e-12
    )
