"""Hypothesis fuzz of the metrics' public boundary: clear errors or finite, invariant values.

Every metric is called as a hostile user would (odd scales, orders, weights, group labels, NaN,
wrong lengths, bad thresholds): it must either raise ValueError/TypeError with a message, or
return a finite number that does not depend on the order of the samples.
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fairot.metrics import (
    error_rate,
    fairness_report,
    max_pairwise_wasserstein,
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
    wasserstein_distance,
)
from fairot.transport import quantile_function

pytestmark = pytest.mark.fuzz

GROUP_METRICS = (wass1, strong_demographic_disparity, strong_pairwise_demographic_disparity)


@st.composite
def scored_groups(draw, min_size=2, max_size=60):
    n = draw(st.integers(min_size, max_size))
    scores = draw(arrays(np.float64, n, elements=st.floats(0, 1)))
    labels = draw(st.sampled_from([["a", "b"], [0, 1, 2], [True, False], ["x", 1, "y", 2.0]]))
    groups = np.array(draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n)), dtype=object)
    assume(len({str(v) for v in groups}) >= 2)
    weights = draw(
        st.one_of(
            st.none(),
            arrays(np.float64, n, elements=st.floats(0.01, 100)),
        )
    )
    return scores, groups, weights


@given(scored_groups(), st.randoms(use_true_random=False))
def test_group_metrics_finite_and_order_invariant(data, random):
    scores, groups, weights = data
    order = np.arange(scores.shape[0])
    random.shuffle(order)
    for metric in GROUP_METRICS:
        value = metric(None, scores, sensitive_features=groups, sample_weight=weights)
        assert math.isfinite(value) and value >= 0
        shuffled = metric(
            None,
            scores[order],
            sensitive_features=groups[order],
            sample_weight=None if weights is None else weights[order],
        )
        assert shuffled == pytest.approx(value, rel=1e-9, abs=1e-12)
        assert (
            metric(scores > 0.5, scores, sensitive_features=groups, sample_weight=weights) == value
        )


@given(scored_groups())
def test_sdd_equals_spdd_and_wass1_for_two_groups(data):
    scores, groups, weights = data
    two = np.array([str(v) == str(groups[0]) for v in groups])
    assume(two.any() and not two.all())
    sdd = strong_demographic_disparity(None, scores, sensitive_features=two, sample_weight=weights)
    assert strong_pairwise_demographic_disparity(
        None, scores, sensitive_features=two, sample_weight=weights
    ) == pytest.approx(sdd, rel=1e-9, abs=1e-12)


@given(
    arrays(np.float64, st.integers(1, 30), elements=st.floats(-1, 1)),
    arrays(np.float64, st.integers(1, 30), elements=st.floats(-1, 1)),
    st.integers(-300, 300),
    st.one_of(st.floats(1, 3000), st.just(math.inf)),
)
def test_wasserstein_homogeneous_at_any_scale_and_order(u, v, exponent, p):
    scale = 10.0**exponent
    unit = wasserstein_distance(u, v, p=p)
    scaled = wasserstein_distance(u * scale, v * scale, p=p)
    assert math.isfinite(scaled)
    assert scaled == pytest.approx(unit * scale, rel=1e-9, abs=1e-300)
    assert scaled <= wasserstein_distance(u * scale, v * scale, p=math.inf) * (1 + 1e-12)


@given(st.integers(1, 3000))
def test_cumsum_levels(n):
    x = np.arange(n, dtype=float)
    np.testing.assert_array_equal(quantile_function(x, np.cumsum(np.full(n, 1 / n))), x)


@given(scored_groups(), st.integers(-300, 300))
def test_regression_report_never_nan(data, exponent):
    scores, groups, weights = data
    scale = 10.0**exponent
    y = (scores + np.linspace(0, 1, scores.shape[0])) * scale
    assume(np.ptp(y) > 0)
    report = fairness_report(
        y, scores * scale, sensitive_features=groups, task="regression", sample_weight=weights
    )
    overall = report.loc["overall"]
    assert math.isfinite(overall["r2"]) and math.isfinite(overall["rmse"])
    summary = report.attrs["summary"]
    for key in ("wass1", "max_pairwise_w1", "max_pairwise_w2", "max_pairwise_winf"):
        assert math.isfinite(summary[key])


HOSTILE = st.sampled_from(
    [
        "nan_score",
        "score_above_one",
        "short_groups",
        "one_group",
        "negative_weight",
        "nan_weight",
        "threshold",
        "three_positional",
        "scores_as_groups",
    ]
)


@given(scored_groups(min_size=4), HOSTILE, st.sampled_from([float("nan"), 5.0, -1.0, "a"]))
def test_hostile_inputs_raise_clear_errors(data, case, bad_threshold):
    scores, groups, weights = data
    y = (scores > 0.5).astype(int)
    kwargs = {}
    args = (scores, groups)
    if case == "nan_score":
        scores = scores.copy()
        scores[0] = np.nan
        args = (scores, groups)
    elif case == "score_above_one":
        args = (scores + 1.5, groups)
    elif case == "short_groups":
        args = (scores, groups[:-1])
    elif case == "one_group":
        args = (scores, np.zeros(scores.shape[0]))
    elif case == "negative_weight":
        kwargs["sample_weight"] = -np.ones_like(scores)
    elif case == "nan_weight":
        kwargs["sample_weight"] = np.full_like(scores, np.nan)
    elif case == "three_positional":
        args = (y, scores, groups)
    elif case == "scores_as_groups":
        # MetricFrame's per-group call, metric(y_true, y_pred): refused, never read as groups.
        assume(np.any(scores != np.round(scores)))
        args = (y, scores)
    if case == "threshold":
        with pytest.raises(ValueError, match="threshold"):
            fairness_report(y, scores, sensitive_features=groups, threshold=bad_threshold)
        with pytest.raises(ValueError, match="threshold"):
            error_rate(y, scores, threshold=bad_threshold)
        return
    # Predictions of max_pairwise_wasserstein are not bounded to [0, 1].
    bounded = case == "score_above_one"
    for metric in GROUP_METRICS if bounded else (*GROUP_METRICS, max_pairwise_wasserstein):
        # Only the two misuses of the calling form are TypeErrors; bad values are ValueErrors.
        form_misuse = case in ("three_positional", "scores_as_groups")
        with pytest.raises(TypeError if form_misuse else ValueError) as info:
            if form_misuse:
                metric(*args, **kwargs)
            else:
                metric(None, args[0], sensitive_features=args[1], **kwargs)
        assert len(str(info.value)) > 20
    if len(args) == 2 and case != "scores_as_groups":
        with pytest.raises(ValueError):
            fairness_report(None, args[0], sensitive_features=args[1], **kwargs)


@given(scored_groups())
def test_report_sensitive_features_as_frame_and_multiindex(data):
    scores, groups, weights = data
    frame = pd.DataFrame({"g": [str(v) for v in groups], "h": ["k"] * scores.shape[0]})
    report = fairness_report(
        None, scores, sensitive_features=frame, sample_weight=weights, group_index="multi"
    )
    assert report.index.names == ["g", "h"]
    assert report.iloc[:-1]["share"].sum() == pytest.approx(1.0)


# Issue 19: scale equivariance from 1e-300 to 1e300 with a power-of-two factor (exact scaling).
@given(
    values=arrays(np.float64, 8, elements=st.floats(-1.0, 1.0, allow_nan=False)),
    exponent=st.integers(-996, 996),
)
def test_rmse_and_w1_are_scale_equivariant_at_extreme_magnitudes(values, exponent):
    from fairot.metrics import fairness_report, group_rates

    factor = math.ldexp(1.0, exponent)
    groups = np.array(["a"] * 4 + ["b"] * 4)
    y = np.zeros(8)
    unit = group_rates(y, values, sensitive_features=groups, task="regression")["rmse"].to_numpy()
    big = group_rates(y, values * factor, sensitive_features=groups, task="regression")[
        "rmse"
    ].to_numpy()
    np.testing.assert_allclose(big, unit * factor, rtol=1e-12)
    w1 = fairness_report(None, values, sensitive_features=groups, task="regression").attrs[
        "summary"
    ]
    w1_big = fairness_report(
        None, values * factor, sensitive_features=groups, task="regression"
    ).attrs["summary"]
    np.testing.assert_allclose(
        w1_big["max_pairwise_w1"], w1["max_pairwise_w1"] * factor, rtol=1e-12
    )
