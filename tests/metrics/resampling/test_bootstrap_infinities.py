"""Bootstrap intervals of metrics that can be infinite, and of huge responses: no RuntimeWarning.

``filterwarnings = error`` turns any numpy RuntimeWarning into a failure here; the values are
checked against numpy's quantile (finite data) and hand-worked ranks (infinite data).
"""

import numpy as np
import pandas as pd
import pytest

from fairot.metrics import bootstrap_intervals
from fairot.metrics.resampling._intervals import _linear_quantile


def test_linear_quantile_equals_numpy_on_finite_data_and_skips_nan():
    rng = np.random.default_rng(0)
    values = pd.DataFrame(rng.normal(size=(37, 3)), columns=list("abc"))
    values.iloc[::5, 1] = np.nan
    for q in (0.0, 0.025, 0.5, 0.975, 1.0):
        expected = [np.quantile(values[c].dropna(), q) for c in values.columns]
        np.testing.assert_allclose(_linear_quantile(values, q).to_numpy(), expected, rtol=1e-15)


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (0.0, 1.0),
        (1 / 3, 2.0),  # rank 1 exactly: the finite value, not 2 + 0 * inf
        (0.5, np.inf),  # between 2 and inf
        (2 / 3, np.inf),  # rank 2: inf, between two infinities
        (1.0, np.inf),
    ],
)
def test_linear_quantile_ranks_infinities(q, expected):
    values = pd.DataFrame({"ratio": [np.inf, 1.0, np.inf, 2.0]})
    assert _linear_quantile(values, q)["ratio"] == expected


def test_an_error_free_group_gives_an_unbounded_skewed_error_ratio():
    rng = np.random.default_rng(1)
    g = np.repeat(["a", "b"], 60)
    y = rng.integers(0, 2, 120)
    s = np.where(y == 1, 0.8, 0.2)
    s[g == "b"] = rng.uniform(size=60)  # group a is never wrong
    for weights in (None, rng.uniform(0.5, 2.0, 120)):
        ci = bootstrap_intervals(
            y, s, sensitive_features=g, sample_weight=weights, n_bootstrap=20, random_state=0
        )
        assert ci.summary.loc["skewed_error_ratio"].tolist() == [np.inf, np.inf]
        assert np.isfinite(ci.summary.loc["accuracy_std"]).all()


def test_huge_responses_give_finite_errors():
    # Responses near 1e160 have a variance near 1e320, beyond the float range; in a
    # power-of-two unit it is not. The residuals (1e150) square to about 1e300.
    rng = np.random.default_rng(2)
    g = np.repeat(["a", "b"], 50)
    y = rng.normal(size=100) * 1e160
    pred = y + rng.normal(size=100) * 1e150
    ci = bootstrap_intervals(
        y, pred, sensitive_features=g, task="regression", n_bootstrap=10, random_state=0
    )
    low, high = ci.summary.loc["mse"]
    # mse is about (1e150)**2 = 1e300: finite, and R² is about 1 - 1e-20.
    assert 1e299 < low <= high < 1e301
    assert ci.summary.loc["r2"].tolist() == pytest.approx([1.0, 1.0], abs=1e-12)
