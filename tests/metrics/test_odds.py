"""Strong equalized odds / equal opportunity disparities against independent oracles.

Two oracles we did not write: the TPR and FPR gaps of fairlearn's ``true_positive_rate`` /
``false_positive_rate`` integrated over a threshold grid of step 1e-4 (midpoint rule), and
``scipy.stats.wasserstein_distance`` per label. On scores of a 1e-2 lattice the midpoint sum is
exact (the rates only change at lattice points), so it must agree to rounding; on continuous
scores it agrees to the grid's error.
"""

import itertools

import fairlearn.metrics as flm
import numpy as np
import pandas as pd
import pytest
import scipy.stats

import fairot.metrics as fm
from fairot.metrics._odds import MSG_EMPTY_CELL, MSG_TARGET

STEP = 1e-4
GRID = (np.arange(int(round(1 / STEP))) + 0.5) * STEP


def _data(seed=0, n=240, lattice=True, k=3):
    rng = np.random.default_rng(seed)
    g = rng.choice(list("abc"[:k]), n)
    y = rng.integers(0, 2, n)
    s = np.clip(rng.beta(2, 3, n) + 0.15 * (g == "b") + 0.2 * y, 0, 1)
    if lattice:
        s = np.round(s, 2)
    w = rng.random(n) * 2 + 0.1
    return y, s, g, w


def _rates_on_grid(rate, y, s, rows, w):
    """fairlearn's rate of ``rows`` at every grid threshold.

    fairlearn is called once per distinct decision vector: the decisions ``s > t`` of a set of
    rows are fixed by how many of its scores are <= t, so grid thresholds with the same count
    share one call (a memo of identical calls, not a different sum).
    """
    ordered = np.sort(s[rows])
    counts = np.searchsorted(ordered, GRID, side="right")
    kw = {} if w is None else {"sample_weight": w[rows]}
    at = {}
    for c in np.unique(counts):
        t = GRID[np.argmax(counts == c)]
        at[c] = rate(y[rows], (s[rows] > t).astype(int), pos_label=1, **kw)
    return np.array([at[c] for c in counts])


def _oracle(y, s, g, w, labels, pairwise):
    """Sum of STEP * |rate_a(t) - rate_b(t)| over the grid (b: another group, or everyone)."""
    rates = {1: flm.true_positive_rate, 0: flm.false_positive_rate}
    groups = sorted(set(g))
    total = 0.0
    for label in labels:
        curve = {a: _rates_on_grid(rates[label], y, s, np.flatnonzero(g == a), w) for a in groups}
        if pairwise:
            pairs = [(curve[a], curve[b]) for a, b in itertools.combinations(groups, 2)]
        else:
            pooled = _rates_on_grid(rates[label], y, s, np.arange(len(s)), w)
            pairs = [(curve[a], pooled) for a in groups]
        total += sum(STEP * float(np.sum(np.abs(ra - rb))) for ra, rb in pairs)
    return total


def _scipy(y, s, g, w, labels, pairwise):
    total = 0.0
    groups = sorted(set(g))
    for label in labels:
        cell = {a: (g == a) & (y == label) for a in groups}
        pooled = y == label

        def weights(mask):
            return None if w is None else w[mask]

        if pairwise:
            for a, b in itertools.combinations(groups, 2):
                total += scipy.stats.wasserstein_distance(
                    s[cell[a]], s[cell[b]], weights(cell[a]), weights(cell[b])
                )
        else:
            for a in groups:
                total += scipy.stats.wasserstein_distance(
                    s[cell[a]], s[pooled], weights(cell[a]), weights(pooled)
                )
    return total


CASES = [
    (fm.strong_equalized_odds_disparity, (0, 1), False),
    (fm.strong_equal_opportunity_disparity, (1,), False),
    (fm.strong_pairwise_equalized_odds_disparity, (0, 1), True),
    (fm.strong_pairwise_equal_opportunity_disparity, (1,), True),
]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("metric", "labels", "pairwise"), CASES)
def test_equals_integrated_fairlearn_rate_gaps_on_a_lattice(metric, labels, pairwise, weighted):
    y, s, g, w = _data(1)
    w = w if weighted else None
    ours = metric(y, s, sensitive_features=g, sample_weight=w)
    assert ours == pytest.approx(_oracle(y, s, g, w, labels, pairwise), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("metric", "labels", "pairwise"), CASES)
def test_equals_integrated_rate_gaps_on_continuous_scores(metric, labels, pairwise, weighted):
    # The midpoint rule errs by at most STEP/2 per jump of the integrand, i.e. by at most
    # STEP/2 times its total variation: below 1e-3 for these sizes.
    y, s, g, w = _data(2, n=120, lattice=False)
    w = w if weighted else None
    ours = metric(y, s, sensitive_features=g, sample_weight=w)
    assert ours == pytest.approx(_oracle(y, s, g, w, labels, pairwise), abs=1e-3)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("metric", "labels", "pairwise"), CASES)
def test_equals_scipy_wasserstein_per_label(metric, labels, pairwise, weighted):
    y, s, g, w = _data(3, n=500, lattice=False, k=3)
    w = w if weighted else None
    ours = metric(y, s, sensitive_features=g, sample_weight=w)
    assert ours == pytest.approx(_scipy(y, s, g, w, labels, pairwise), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_barycenter_target_with_two_groups_is_the_pairwise_distance(weighted):
    # Two groups: W1(a, m) + W1(b, m) = W1(a, b) for any m between them, the barycenter included.
    y, s, g, w = _data(4, n=300, lattice=False, k=2)
    w = w if weighted else None
    expected = _scipy(y, s, g, w, (0, 1), pairwise=True)
    ours = fm.strong_equalized_odds_disparity(
        y, s, sensitive_features=g, sample_weight=w, target="barycenter"
    )
    assert ours == pytest.approx(expected, rel=1e-9)


def test_zero_when_scores_depend_on_the_label_only():
    y = np.array([0, 1] * 50)
    g = np.repeat(["a", "b"], 50)
    s = np.where(y == 1, 0.8, 0.3)  # the groups differ in base rate, not given the label
    assert fm.strong_equalized_odds_disparity(y, s, sensitive_features=g) == 0.0
    assert fm.strong_pairwise_equalized_odds_disparity(y, s, sensitive_features=g) == 0.0
    # ... while demographic parity fails once the base rates differ
    y2 = np.concatenate([np.ones(40), np.zeros(10), np.ones(10), np.zeros(40)]).astype(int)
    s2 = np.where(y2 == 1, 0.8, 0.3)
    assert fm.strong_equalized_odds_disparity(y2, s2, sensitive_features=g) == 0.0
    assert fm.strong_demographic_disparity(y2, s2, sensitive_features=g) > 0.2


def test_invariant_to_sample_order_and_input_containers():
    y, s, g, w = _data(5, lattice=False)
    perm = np.random.default_rng(0).permutation(len(s))
    a = fm.strong_equalized_odds_disparity(y, s, sensitive_features=g, sample_weight=w)
    b = fm.strong_equalized_odds_disparity(
        pd.Series(y[perm]),
        list(s[perm]),
        sensitive_features=pd.DataFrame({"g": g[perm]}),
        sample_weight=w[perm],
    )
    assert a == pytest.approx(b, rel=1e-12)


def test_bad_input_is_refused_with_clear_errors():
    y, s, g, _ = _data(6)
    with pytest.raises(ValueError, match="y_true must be binary"):
        fm.strong_equalized_odds_disparity(y + 2, s, sensitive_features=g)
    with pytest.raises(TypeError, match="takes fairlearn's form"):
        fm.strong_equalized_odds_disparity(y, s)
    with pytest.raises(ValueError, match=MSG_TARGET.format(value="median")[:30]):
        fm.strong_equalized_odds_disparity(y, s, sensitive_features=g, target="median")
    only_negatives_in_c = y.copy()
    only_negatives_in_c[g == "c"] = 0
    message = MSG_EMPTY_CELL.format(group="c", label=1, criterion="equal opportunity")
    with pytest.raises(ValueError, match=message[:40]):
        fm.strong_equal_opportunity_disparity(only_negatives_in_c, s, sensitive_features=g)


@pytest.mark.parametrize("weighted", [False, True])
def test_metricframe_stratifies_with_groups_as_sample_param(weighted):
    y, s, g, w = _data(7, n=600, lattice=False)
    sex = np.random.default_rng(1).choice(["F", "M"], len(s))
    params = {"sensitive_features": g}
    if weighted:
        params["sample_weight"] = w
    frame = flm.MetricFrame(
        metrics=fm.strong_equalized_odds_disparity,
        y_true=y,
        y_pred=s,
        sensitive_features=sex,
        sample_params=params,
    )
    for value in ("F", "M"):
        m = sex == value
        expected = _scipy(y[m], s[m], g[m], w[m] if weighted else None, (0, 1), False)
        assert frame.by_group[value] == pytest.approx(expected, rel=1e-9)
