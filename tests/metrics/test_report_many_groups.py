"""fairness_report beyond MAX_PAIRWISE_GROUPS (issue 37): SPDD and W-inf by formula, W1/W2 maxima
left out with a note; the same numbers as coupling every pair."""

import itertools

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

import fairot.metrics._report as report_module
from fairot.metrics import fairness_report, max_pairwise_wasserstein


@pytest.fixture
def few_pairs(monkeypatch):
    # Twelve groups are "many" here, so the formulas meet every pair's coupling.
    monkeypatch.setattr(report_module, "MAX_PAIRWISE_GROUPS", 5)


def _data(weighted, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 25, 12)  # unequal sizes: the joint cells differ from each group's
    groups = np.repeat([f"g{i}" for i in range(12)], sizes)
    scores = rng.beta(2, 3, groups.size)
    weights = rng.uniform(0.2, 3.0, groups.size) if weighted else None
    return scores, groups, weights


@pytest.mark.parametrize("weighted", [False, True])
def test_spdd_and_sdd_match_every_pair_by_scipy(few_pairs, weighted):
    scores, groups, weights = _data(weighted)
    report = fairness_report(None, scores, sensitive_features=groups, sample_weight=weights)
    summary = report.attrs["summary"]
    names = sorted(set(groups))

    def part(name):
        m = groups == name
        return scores[m], None if weights is None else weights[m]

    def w1(a, b):
        (u, u_weights), (v, v_weights) = part(a), part(b)
        return wasserstein_distance(u, v, u_weights, v_weights)

    spdd = sum(w1(a, b) for a, b in itertools.combinations(names, 2))
    sdd = sum(wasserstein_distance(part(a)[0], scores, part(a)[1], weights) for a in names)
    assert summary["spdd"] == pytest.approx(spdd, rel=1e-10)
    assert summary["sdd"] == pytest.approx(sdd, rel=1e-10)
    assert "max_pairwise_w2" not in summary
    assert (
        "max_pairwise_w2 (and its pair) not computed: 12 groups make 66 pairs"
        in (report.attrs["notes"][0])
    )


@pytest.mark.parametrize("weighted", [False, True])
def test_regression_winf_matches_the_pairwise_maximum(few_pairs, weighted):
    scores, groups, weights = _data(weighted, seed=1)
    values = 1e3 * scores - 400
    report = fairness_report(
        None, values, sensitive_features=groups, task="regression", sample_weight=weights
    )
    summary = report.attrs["summary"]
    want = max_pairwise_wasserstein(
        None, values, sensitive_features=groups, p="inf", sample_weight=weights
    ).distance
    assert summary["max_pairwise_winf"] == pytest.approx(want, rel=1e-12)
    assert "max_pairwise_w1" not in summary and "spdd" not in summary


def test_below_the_limit_nothing_changes():
    scores, groups, _ = _data(False)
    summary = fairness_report(None, scores, sensitive_features=groups).attrs["summary"]
    assert (
        "max_pairwise_w2" in summary
        and "notes" not in fairness_report(None, scores, sensitive_features=groups).attrs
    )
