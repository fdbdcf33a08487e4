"""fairlearn's calling form for every public metric, checked against fairlearn, scikit-learn, scipy.

Every group metric of :mod:`fairot.metrics` is ``metric(y_true, y_pred, *, sensitive_features,
sample_weight=None, ...)``; a positional third argument and a call without ``sensitive_features``
(MetricFrame's per-group call) raise a ``TypeError`` naming that form; inside a ``MetricFrame`` the
groups travel as a sample parameter. Where fairlearn or scikit-learn has the metric, fairot's equals
it to 1e-12, weighted and unweighted.
"""

import inspect
import re

import fairlearn.metrics as flm
import numpy as np
import pandas as pd
import pytest
import scipy.stats
from sklearn.metrics import (
    accuracy_score,
    mean_absolute_error,
    mean_squared_error,
    precision_score,
    roc_auc_score,
)

import fairot.metrics as fm

# The group metrics (fairlearn's form) and the other public functions, by kind: a new public
# function of fairot.metrics must be sorted here, so that none escapes the form checks below.
GROUP_METRICS = {
    "bootstrap_intervals",
    "demographic_parity_difference",
    "equalized_odds_difference",
    "fairness_report",
    "fairness_summary",
    "group_rates",
    "max_pairwise_wasserstein",
    "strong_demographic_disparity",
    "strong_equal_opportunity_disparity",
    "strong_equalized_odds_disparity",
    "strong_pairwise_demographic_disparity",
    "strong_pairwise_equal_opportunity_disparity",
    "strong_pairwise_equalized_odds_disparity",
    "wass1",
}
# Takes no groups: a per-group metric of a MetricFrame as it is.
PER_GROUP_METRICS = {"error_rate"}
# Reduce per-group values (e.g. MetricFrame(...).by_group) or compare two samples.
REDUCTIONS = {"group_accuracy_std", "skewed_error_ratio", "wasserstein_distance"}
# Model selection, not metrics: covered by tests/metrics/model_selection/test_scorers.py.
SELECTION = {
    "get_fairness_scorer",
    "get_fairness_scorer_names",
    "make_fairness_scorer",
    "within_fairness_budget",
}
# Diagnostics of a fitted model against its start or against chance, not group metrics (no
# sensitive features): covered by tests/metrics/test_collapse.py and (chance_ranking, the
# degeneracy flag of model selection) tests/metrics/model_selection/test_scorers.py.
DIAGNOSTICS = {"chance_ranking", "degenerate_model_message", "diagnose_collapse", "diagnose_fit"}
# Labels cannot be None for these.
NEEDS_LABELS = {
    "equalized_odds_difference",
    "strong_equal_opportunity_disparity",
    "strong_equalized_odds_disparity",
    "strong_pairwise_equal_opportunity_disparity",
    "strong_pairwise_equalized_odds_disparity",
}
# Scalar group metrics: what a MetricFrame can hold.
SCALAR = {
    "demographic_parity_difference": fm.demographic_parity_difference,
    "equalized_odds_difference": fm.equalized_odds_difference,
    "max_pairwise_wasserstein": lambda *a, **k: fm.max_pairwise_wasserstein(*a, **k).distance,
    "strong_demographic_disparity": fm.strong_demographic_disparity,
    "strong_pairwise_demographic_disparity": fm.strong_pairwise_demographic_disparity,
    "strong_equalized_odds_disparity": fm.strong_equalized_odds_disparity,
    "strong_equal_opportunity_disparity": fm.strong_equal_opportunity_disparity,
    "strong_pairwise_equalized_odds_disparity": fm.strong_pairwise_equalized_odds_disparity,
    "strong_pairwise_equal_opportunity_disparity": (fm.strong_pairwise_equal_opportunity_disparity),
    "wass1": fm.wass1,
}
FORM_PARAMETERS = [
    ("y_true", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ("y_pred", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ("sensitive_features", inspect.Parameter.KEYWORD_ONLY),
]
FORM = "takes fairlearn's form {name}(y_true, y_pred, *, sensitive_features"


def _public_functions():
    return {
        name: getattr(fm, name)
        for name in fm.__all__
        if callable(getattr(fm, name))
        and not inspect.isclass(getattr(fm, name))
        and not isinstance(getattr(fm, name), fm.FairnessScorer)
    }


def _data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    sf = pd.DataFrame({"race": rng.choice(["A", "B", "C"], n), "sex": rng.choice(["F", "M"], n)})
    s = np.clip(rng.beta(2, 4, n) + 0.2 * (sf.sex == "M") + 0.1 * (sf.race == "C"), 0, 1)
    y = (rng.random(n) < s).astype(int)
    w = rng.random(n) * 3 + 0.05
    return y, s, sf, w


def _call(name, *args, **kwargs):
    if name == "bootstrap_intervals":
        kwargs.setdefault("n_bootstrap", 10)
        kwargs.setdefault("random_state", 0)
    return getattr(fm, name)(*args, **kwargs)


def test_every_public_function_is_sorted_by_kind():
    names = set(_public_functions())
    metrics = GROUP_METRICS | PER_GROUP_METRICS | REDUCTIONS
    assert metrics <= names
    unsorted = names - SELECTION - DIAGNOSTICS
    assert unsorted == metrics, "a new public function: sort it into a kind above"


@pytest.mark.parametrize("name", sorted(GROUP_METRICS))
def test_signature_is_fairlearns_form(name):
    parameters = inspect.signature(getattr(fm, name)).parameters
    assert [(p.name, p.kind) for p in parameters.values()][:3] == FORM_PARAMETERS
    assert parameters["sensitive_features"].default is inspect.Parameter.empty
    # Every option after the groups is a keyword, so nothing is read from a call's shape.
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(parameters.values())[2:])
    if name != "bootstrap_intervals":  # a resampling of rows; weights have no meaning there yet
        assert parameters["sample_weight"].default is None
        assert parameters["sample_weight"].kind is inspect.Parameter.KEYWORD_ONLY


def test_per_group_metric_signature():
    parameters = inspect.signature(fm.error_rate).parameters
    assert list(parameters)[:2] == ["y_true", "y_pred"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in list(parameters.values())[2:])
    assert parameters["sample_weight"].default is None


@pytest.mark.parametrize("name", sorted(GROUP_METRICS))
def test_fairlearn_form_works_and_misuse_is_a_type_error(name):
    y, s, sf, _ = _data(1, n=200)
    form = re.escape(FORM.format(name=name))
    result = _call(name, y, s, sensitive_features=sf)
    assert result is not None
    if name not in NEEDS_LABELS:
        _call(name, None, s, sensitive_features=sf)  # y_true=None: the scores alone
    with pytest.raises(TypeError, match=form):
        _call(name, y, s, sf)  # a positional third argument
    with pytest.raises(TypeError, match=form):
        _call(name, y, s)  # MetricFrame's per-group call: no groups, never guessed
    with pytest.raises(TypeError, match=form):
        _call(name, y, s, sensitive_features=None)
    with pytest.raises(TypeError, match=form):
        getattr(fm, name)(s, sensitive_features=sf)  # the old score-only form


@pytest.mark.parametrize("name", sorted(SCALAR))
def test_metricframe_without_groups_is_refused(name):
    # fairlearn calls metric(y_true, y_pred) per group: a TypeError naming the form, not a number
    # computed with the predictions as groups (issue 21).
    y, s, sf, _ = _data(2, n=200)
    with pytest.raises(TypeError, match=re.escape(FORM.format(name=name.split(".")[-1]))):
        flm.MetricFrame(metrics=getattr(fm, name), y_true=y, y_pred=s, sensitive_features=sf.sex)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", sorted(SCALAR))
def test_metricframe_with_groups_as_sample_param(name, weighted):
    # The groups compared travel as a sample parameter; the frame's own sensitive feature then
    # stratifies: by_group is the disparity between races within each sex.
    y, s, sf, w = _data(3)
    metric = SCALAR[name]
    params = {"sensitive_features": sf.race.to_numpy()}
    if weighted:
        params["sample_weight"] = w
    frame = flm.MetricFrame(
        metrics=metric, y_true=y, y_pred=s, sensitive_features=sf.sex, sample_params=params
    )
    kwargs = {"sample_weight": w} if weighted else {}
    assert frame.overall == metric(y, s, sensitive_features=sf.race, **kwargs)
    for sex in ("F", "M"):
        m = (sf.sex == sex).to_numpy()
        sub = {"sample_weight": w[m]} if weighted else {}
        expected = metric(y[m], s[m], sensitive_features=sf.race[m], **sub)
        assert frame.by_group[sex] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("threshold", [0.5, 0.3, 0.72])
def test_disparities_equal_fairlearn(weighted, threshold):
    y, s, sf, w = _data(4)
    kw = {"sample_weight": w} if weighted else {}
    decisions = (s > threshold).astype(int)
    for groups in (sf, sf.race, sf.sex):
        ours = fm.demographic_parity_difference(
            y, s, sensitive_features=groups, threshold=threshold, **kw
        )
        theirs = flm.demographic_parity_difference(y, decisions, sensitive_features=groups, **kw)
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
        ours = fm.equalized_odds_difference(
            y, s, sensitive_features=groups, threshold=threshold, **kw
        )
        theirs = flm.equalized_odds_difference(y, decisions, sensitive_features=groups, **kw)
        assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-12)
        rates = fm.group_rates(y, s, sensitive_features=groups, threshold=threshold, **kw)
        ratio = flm.demographic_parity_ratio(y, decisions, sensitive_features=groups, **kw)
        assert rates["disparate_impact"].min() == pytest.approx(ratio, rel=1e-12)


def _by_group(metric, y, pred, g, w, **kwargs):
    sample_params = {"sample_weight": w} if w is not None else None
    frame = flm.MetricFrame(
        metrics=metric,
        y_true=y,
        y_pred=pred,
        sensitive_features=g,
        sample_params=sample_params,
        **kwargs,
    )
    return frame.by_group


@pytest.mark.parametrize("weighted", [False, True])
def test_classification_rates_equal_fairlearn_and_sklearn(weighted):
    y, s, sf, w = _data(5)
    w = w if weighted else None
    g = sf.race.to_numpy()
    decisions = (s > 0.5).astype(int)
    rates = fm.group_rates(y, s, sensitive_features=g, sample_weight=w)
    oracles = {
        "selection_rate": flm.selection_rate,
        "tpr": flm.true_positive_rate,
        "fpr": flm.false_positive_rate,
        "precision": precision_score,
    }
    for column, metric in oracles.items():
        expected = _by_group(metric, y, decisions, g, w)
        np.testing.assert_allclose(rates[column], expected.loc[rates.index], rtol=1e-12)
    for group in rates.index:
        m = g == group
        wm = None if w is None else w[m]
        assert rates.loc[group, "auc"] == pytest.approx(
            roc_auc_score(y[m], s[m], sample_weight=wm), rel=1e-12
        )
        assert rates.loc[group, "calibration_gap"] == pytest.approx(
            np.average(s[m] - y[m], weights=wm), rel=1e-12
        )
        assert 1 - accuracy_score(y[m], decisions[m], sample_weight=wm) == pytest.approx(
            fm.error_rate(y[m], s[m], sample_weight=wm), rel=1e-12
        )


def test_weighted_auc_with_ties_equals_sklearn():
    rng = np.random.default_rng(6)
    s = rng.integers(0, 5, 400) / 4  # many ties
    y = (rng.random(400) < s).astype(int)
    g = rng.choice(["a", "b"], 400)
    w = rng.random(400)
    rates = fm.group_rates(y, s, sensitive_features=g, sample_weight=w)
    for group in ("a", "b"):
        m = g == group
        assert rates.loc[group, "auc"] == pytest.approx(
            roc_auc_score(y[m], s[m], sample_weight=w[m]), rel=1e-12
        )


@pytest.mark.parametrize("weighted", [False, True])
def test_regression_rates_equal_sklearn(weighted):
    rng = np.random.default_rng(7)
    g = rng.choice(["a", "b", "c"], 500)
    y = rng.normal(size=500) * 3 + (g == "b")
    pred = y + rng.normal(0, 0.7, 500)
    w = rng.random(500) + 0.1 if weighted else None
    rates = fm.group_rates(y, pred, sensitive_features=g, sample_weight=w, task="regression")
    for group in rates.index:
        m = g == group
        wm = None if w is None else w[m]
        assert rates.loc[group, "mae"] == pytest.approx(
            mean_absolute_error(y[m], pred[m], sample_weight=wm), rel=1e-12
        )
        assert rates.loc[group, "rmse"] == pytest.approx(
            np.sqrt(mean_squared_error(y[m], pred[m], sample_weight=wm)), rel=1e-12
        )
        assert rates.loc[group, "mean_residual"] == pytest.approx(
            np.average(y[m] - pred[m], weights=wm), rel=1e-12
        )


def test_integer_weights_are_replicated_rows_for_rates():
    y, s, sf, _ = _data(8, n=300)
    reps = np.random.default_rng(8).integers(1, 4, 300)
    weighted = fm.group_rates(y, s, sensitive_features=sf, sample_weight=reps.astype(float))
    replicated = fm.group_rates(
        np.repeat(y, reps), np.repeat(s, reps), sensitive_features=sf.loc[sf.index.repeat(reps)]
    )
    pd.testing.assert_frame_equal(weighted, replicated, rtol=1e-12)


def test_zero_weight_group_is_refused_by_rates():
    y, s, sf, w = _data(9, n=200)
    w = np.where(sf.sex == "F", 0.0, w)
    with pytest.raises(ValueError, match="sums to zero over group 'F'"):
        fm.demographic_parity_difference(y, s, sensitive_features=sf.sex, sample_weight=w)


@pytest.mark.parametrize("weighted", [False, True])
def test_distributional_metrics_equal_scipy(weighted):
    # No fairlearn metric compares whole score distributions; scipy's W1 is the oracle.
    y, s, sf, w = _data(10)
    w = w if weighted else None
    g = sf.race.to_numpy()
    names = sorted(set(g))

    def w1(a, b):
        return scipy.stats.wasserstein_distance(
            s[a], s[b], None if w is None else w[a], None if w is None else w[b]
        )

    every = np.ones(g.shape[0], dtype=bool)
    sdd = sum(w1(g == a, every) for a in names)
    pairs = {(a, b): w1(g == a, g == b) for i, a in enumerate(names) for b in names[i + 1 :]}
    kw = {"sample_weight": w}
    assert fm.strong_demographic_disparity(y, s, sensitive_features=g, **kw) == pytest.approx(
        sdd, rel=1e-12
    )
    spdd = fm.strong_pairwise_demographic_disparity(y, s, sensitive_features=g, **kw)
    assert spdd == pytest.approx(sum(pairs.values()), rel=1e-12)
    gap = fm.max_pairwise_wasserstein(y, s, sensitive_features=g, p=1, **kw)
    assert gap.distance == pytest.approx(max(pairs.values()), rel=1e-12)
    reference = np.linspace(0, 1, 50)
    to_reference = sum(
        scipy.stats.wasserstein_distance(
            s[g == a], reference, None if w is None else w[g == a], None
        )
        for a in names
    )
    assert fm.wass1(None, s, sensitive_features=g, reference=reference, **kw) == pytest.approx(
        to_reference, rel=1e-12
    )
