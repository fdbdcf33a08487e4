"""The margin that RateConstrainedClassifier chooses for a stated confidence.

The oracles: the normal one-sided bound written out with scipy for a gap far from 0; the
population selection rates of each fitted rule integrated from the mixture's closed-form
densities (``_TrueCells``), over many independent training samples.
"""

import re

import numpy as np
import pytest
from scipy.stats import binom, norm
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from fairot.classification import RateConstrainedClassifier
from fairot.classification._rate_confidence import disparity_bound
from fairot.classification._rate_constrained import MSG_CONFIDENCE
from tests.helpers import TrueCells as _TrueCells
from tests.helpers import population_selection_rates as _population_selection_rates


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Many small logistic fits: one BLAS thread runs them three times faster than threads
    that fight over a loaded machine's cores (the results are the same)."""
    with threadpool_limits(1):
        yield


def test_the_bound_of_a_gap_far_from_zero_is_the_normal_one_sided_bound():
    rng = np.random.default_rng(0)
    n0, n1 = 3000, 800
    d = np.concatenate([rng.random(n0) < 0.55, rng.random(n1) < 0.30]).astype(float)
    membership = np.zeros((n0 + n1, 2))
    membership[:n0, 0] = membership[n0:, 1] = 1
    families = np.zeros(2, dtype=int)
    weights = np.full(n0 + n1, 1.0 / (n0 + n1))
    r0, r1 = d[:n0].mean(), d[n0:].mean()
    # The shrunk rates' variances (one success and one failure added).
    t0, t1 = (n0 * r0 + 1) / (n0 + 2), (n1 * r1 + 1) / (n1 + 2)
    se = np.sqrt(t0 * (1 - t0) / n0 + t1 * (1 - t1) / n1)
    for confidence in (0.8, 0.95):
        upper = disparity_bound(
            d, membership, families, weights, form="difference", confidence=confidence
        )
        # The Monte Carlo sd of a quantile c from 10,000 draws, sqrt(c(1 - c) / 1e4) /
        # pdf(z_c), is at most .022 se here: 0.1 se is about five of them.
        mc = np.sqrt(confidence * (1 - confidence) / 1e4) / norm.pdf(norm.ppf(confidence))
        assert mc < 0.022
        assert upper == pytest.approx(r0 - r1 + norm.ppf(confidence) * se, abs=0.1 * se)
        lower = disparity_bound(
            d, membership, families, weights, form="ratio", confidence=confidence
        )
        assert lower < r1 / r0
    # Row weights that are all equal change nothing; the bound is a function of the data.
    again = disparity_bound(
        d, membership, families, 3 * weights, form="difference", confidence=0.95
    )
    assert again == pytest.approx(
        disparity_bound(d, membership, families, weights, form="difference", confidence=0.95)
    )


def test_weights_constant_within_each_unit_leave_the_bound_as_it_is():
    """Kish's effective size of a unit whose rows weigh alike is its row count."""
    rng = np.random.default_rng(1)
    n = 2000
    unit = rng.integers(0, 3, n)
    d = (rng.random(n) < np.array([0.2, 0.35, 0.5])[unit]).astype(float)
    membership = np.eye(3)[unit]
    families = np.zeros(3, dtype=int)
    plain = np.full(n, 1.0 / n)
    per_unit = np.array([0.5, 2.0, 7.0])[unit]
    for form in ("difference", "ratio"):
        expected = disparity_bound(d, membership, families, plain, form=form, confidence=0.9)
        got = disparity_bound(d, membership, families, per_unit, form=form, confidence=0.9)
        assert got == pytest.approx(expected, rel=1e-12)
    # Unequal weights within a unit shrink its effective size: a wider bound.
    uneven = rng.choice([0.2, 5.0], n)
    wider = disparity_bound(d, membership, families, uneven, form="difference", confidence=0.9)
    assert wider > disparity_bound(
        d, membership, families, plain, form="difference", confidence=0.9
    )


def _coverage(confidence, seeds, n=1500, budget=0.12):
    """The fraction of independent fits whose population DP gap is within the budget."""
    truth = _TrueCells().fit(None)
    within, margins = 0, []
    for seed in seeds:
        X, y, a = truth.sample(n, seed=100 + seed)
        model = RateConstrainedClassifier(
            max_difference=budget, confidence=confidence, cv=2, random_state=seed
        ).fit(X, y, sensitive_features=a)
        rates = _population_selection_rates(model, truth)
        within += abs(rates[0] - rates[1]) <= budget
        margins.append(model.margin_)
    return within / len(seeds), np.array(margins)


def test_the_stated_confidence_covers_the_population_gap_over_many_fits():
    """30 training samples of 1,500 rows (logistic model, 2 folds), budget .12.

    With confidence .9, at least 24 of the 30 rules meet the budget in the population (a
    true coverage of .9 gives fewer with probability ``binom.cdf(23, 30, .9)`` = .026); at
    margin 0, at most half do (the rule refitted on every row overshoots the budget it was
    solved at more often than not).
    """
    seeds = range(30)
    covered, margins = _coverage(0.9, seeds)
    assert binom.cdf(23, 30, 0.9) < 0.03
    assert covered >= 24 / 30
    assert np.mean(margins > 0) > 0.5
    bare, bare_margins = _coverage(None, seeds)
    assert np.all(bare_margins == 0)
    assert bare <= 15 / 30


def test_margin_is_a_floor_grows_with_confidence_and_the_bound_is_within_budget():
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(2000, seed=7)
    base = RateConstrainedClassifier(max_difference=0.06, random_state=0)
    plain = clone(base).fit(X, y, sensitive_features=a)
    assert plain.margin_ == 0.0 and plain.cv_difference_upper_ is None
    assert plain.cv_ratio_lower_ is None
    margins = []
    for confidence in (0.5, 0.9, 0.99):
        model = clone(base).set_params(confidence=confidence).fit(X, y, sensitive_features=a)
        assert model.cv_difference_upper_ <= 0.06
        assert model.budget_ == pytest.approx(0.06 - model.margin_)
        margins.append(model.margin_)
    assert margins == sorted(margins) and margins[-1] > margins[0]
    floor = clone(base).set_params(confidence=0.5, margin=0.03).fit(X, y, sensitive_features=a)
    assert floor.margin_ >= 0.03
    # The four-fifths form: the lower bound of the ratio at or above 0.8.
    ratio = clone(base).set_params(max_difference=None, min_ratio=0.8, confidence=0.9)
    ratio.fit(X, y, sensitive_features=a)
    assert ratio.cv_ratio_lower_ >= 0.8 and ratio.budget_ == pytest.approx(0.8 + ratio.margin_)
    # Equalized odds: the bound is the larger of the TPR and FPR families'.
    odds = clone(base).set_params(constraint="equalized_odds", max_difference=0.1, confidence=0.8)
    odds.fit(X, y, sensitive_features=a)
    assert odds.cv_difference_upper_ <= 0.1 and odds.margin_ > 0
    # with_budget chooses the margin again for the new budget, as a refit does.
    moved = model.with_budget(max_difference=0.1)
    refit = clone(moved).fit(X, y, sensitive_features=a)
    assert moved.margin_ == refit.margin_ and moved.cv_difference_upper_ <= 0.1
    np.testing.assert_allclose(moved.multipliers_, refit.multipliers_, atol=1e-9)


def test_a_confidence_the_rows_cannot_support_is_one_clear_error():
    truth = _TrueCells().fit(None)
    X, y, a = truth.sample(150, seed=8)
    model = RateConstrainedClassifier(max_difference=0.01, confidence=0.99, random_state=0)
    prefix = MSG_CONFIDENCE.split(":")[0].format(confidence=0.99)
    with pytest.raises(ValueError, match=re.escape(prefix)):
        model.fit(X, y, sensitive_features=a)
    assert not hasattr(model, "multipliers_")
