"""RateConstrainedClassifier on Dask collections against the in-memory fit on the same rows.

The oracle is the in-memory estimator (whose multipliers ``tests/classification`` check
against ``scipy.optimize.linprog``) given the same trained model, wrapped in FrozenEstimator,
and the same rows; the fitted rates of the Dask fit are also recomputed here in NumPy from its
own decisions.
"""

import copy
import dataclasses
import re

import dask
import numpy as np
import pandas as pd
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold
from sklearn.utils import check_random_state

from fairot.classification import RateConstrainedClassifier, solve_rate_program
from fairot.classification._common import MSG_ZERO_WEIGHT_GROUP
from fairot.classification._rate_cells import MSG_CONTROL_NEEDED, MSG_CONTROL_UNUSED
from fairot.classification._rate_constrained import (
    MSG_CELL_WEIGHTS,
    MSG_ONE_CLASS,
    MSG_SEAM_UNSUPPORTED,
)
from fairot.dask._collections import MSG_BLOCK_LENGTH, MSG_PARTITIONS
from fairot.dask._options import MSG_TRAIN_ROWS
from fairot.dask._rate_constrained import MSG_DASK_CV, MSG_SAMPLE, row_draws
from fairot.utils.arrays import MSG_WEIGHTS
from fairot.utils.groups import MSG_SF_MISSING
from fairot.utils.sensitive import check_sensitive_features
from fairot.utils.targets import MSG_NOT_BINARY, MSG_Y_NAN

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")

N_TRAIN, N_FIT = 2_000, 4_000
CHUNK = 1_000  # 4 partitions of the fitting rows
#: HiGHS's tolerances are 1e-7; both fits solve the same program on the same numbers, up to
#: the order of the sums over partitions.
ATOL = 1e-9


@pytest.fixture(scope="module")
def problem():
    """Three groups, two strata, features that carry the group; a model of the cells."""
    rng = np.random.default_rng(7)
    n = N_TRAIN + N_FIT
    group = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    index = np.searchsorted(["a", "b", "c"], group)
    stratum = rng.choice(["s", "t"], n)
    X = np.column_stack(
        [rng.normal(index, 1.0), rng.normal(size=n), rng.normal(stratum == "t", 1.0)]
    )
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 1, n) > 0.8).astype(int)
    return X, y, group, index, stratum


def _frozen(problem, strata=False):
    """A logistic model of the cell codes, trained on rows apart from the fitting ones."""
    X, y, _, index, stratum = problem
    codes = index * 2 + y
    if strata:
        codes = ((stratum == "t") * 3 + index) * 2 + y
    train = slice(0, N_TRAIN)
    return FrozenEstimator(LogisticRegression(max_iter=1000).fit(X[train], codes[train]))


def _fitting(problem):
    X, y, group, _, stratum = problem
    rows = slice(N_TRAIN, None)
    return X[rows], y[rows], group[rows], stratum[rows]


def _dask(*arrays):
    return [da.from_array(a, chunks=(CHUNK, a.shape[1]) if a.ndim == 2 else CHUNK) for a in arrays]


def _check_rates(model, proba, codes, weights):
    """``rates_`` of ``model`` recomputed in NumPy from its own (computed) decisions."""
    decisions = model.cv_decisions_.compute()
    units = np.zeros((proba.shape[1], len(model.unit_names_)))
    for cell in range(proba.shape[1]):
        if _unit_of(model, cell) is not None:
            units[cell, _unit_of(model, cell)] = 1.0
    w = np.ones(codes.shape[0]) if weights is None else weights
    w = w / w.sum()
    q = proba @ units
    np.testing.assert_allclose(q.T @ w, model.unit_shares_, rtol=0, atol=1e-12)
    expected = (w * decisions) @ q / (w @ q)
    membership = units[codes]
    empirical = ((w * decisions) @ membership) / (w @ membership)
    np.testing.assert_allclose(model.rates_["expected"], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.rates_["empirical"], empirical, rtol=0, atol=1e-12)


def _unit_of(model, cell):
    """The unit of a cell code, from the constraint's documented units (or None)."""
    k = len(model.groups_)
    label, group, stratum = cell % 2, (cell // 2) % k, cell // (2 * k)
    constraint = model.constraint
    if constraint == "demographic_parity":
        return group
    if constraint == "equal_opportunity":
        return group if label == 1 else None
    if constraint == "equalized_odds":
        return group if label == 1 else k + group
    return stratum * k + group  # conditional demographic parity (every pair present here)


CASES = [
    ("demographic_parity", {"max_difference": 0.03}),
    ("demographic_parity", {"min_ratio": 0.9}),
    ("equal_opportunity", {"max_difference": 0.02}),
    ("equalized_odds", {"max_difference": 0.04}),
    ("conditional_demographic_parity", {"min_ratio": 0.85}),
]


@pytest.mark.parametrize(("constraint", "budget"), CASES)
def test_frozen_fit_equals_in_memory(client, problem, constraint, budget):
    X, y, group, stratum = _fitting(problem)
    strata = constraint == "conditional_demographic_parity"
    control = {"control_features": stratum} if strata else {}
    params = {"estimator": _frozen(problem, strata), "constraint": constraint, **budget}
    expected = RateConstrainedClassifier(**params).fit(X, y, sensitive_features=group, **control)
    dX, dy, dgroup, dstratum = _dask(X, y, group, stratum)
    model = RateConstrainedClassifier(**params).fit(
        dX, dy, sensitive_features=dgroup, **({"control_features": dstratum} if strata else {})
    )
    for name in ("classes_", "groups_", "group_names_", "strata_", "unit_names_"):
        assert np.array_equal(getattr(model, name), getattr(expected, name)), name
    assert (model.budget_form_, model.budget_, model.n_features_in_) == (
        expected.budget_form_,
        expected.budget_,
        expected.n_features_in_,
    )
    np.testing.assert_allclose(model.multipliers_, expected.multipliers_, rtol=0, atol=ATOL)
    np.testing.assert_allclose(model.unit_shares_, expected.unit_shares_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.program_.rates, expected.program_.rates, rtol=0, atol=ATOL)
    np.testing.assert_allclose(model.program_.objective, expected.program_.objective, atol=ATOL)
    # The per-row attributes stay lazy, in the partitions of X.
    assert isinstance(model.cv_proba_, da.Array) and isinstance(model.cv_decisions_, da.Array)
    assert model.cv_proba_.chunks[0] == dX.chunks[0]
    proba = model.cv_proba_.compute()
    np.testing.assert_allclose(proba, expected.cv_proba_, rtol=0, atol=1e-12)
    # The rule decides the same on every row but the program's tie set (s = 0 to rounding,
    # at most one row per constraint of the program: 2J + F).
    decisions = model.cv_decisions_.compute()
    scores = expected.decision_function(X)
    clear = np.abs(scores) > 1e-9
    np.testing.assert_array_equal(decisions[clear], expected.cv_decisions_[clear])
    n_units, n_families = len(model.unit_names_), len(set(model.rates_["family"]))
    assert (~clear).sum() <= 2 * n_units + n_families
    codes = _codes(model, y, group, stratum)
    _check_rates(model, proba, codes, None)
    # A tie row decided otherwise moves its unit's empirical rate by 1 / (the unit's rows).
    unit_of_row = np.array([_unit_of(model, c) for c in codes], dtype=float)  # NaN: no unit
    smallest = min((unit_of_row == j).sum() for j in range(n_units))
    bound = 2 * (~clear).sum() / smallest
    assert abs(model.cv_difference_ - expected.cv_difference_) <= bound


def _codes(model, y, group, stratum):
    """The cell codes of the rows, from the documented formula (NumPy)."""
    index = np.searchsorted(model.groups_, group)
    s = 0 if model.strata_ is None else np.searchsorted(model.strata_, stratum)
    return ((s * len(model.groups_) + index) * 2 + (y == model.classes_[1])).astype(int)


@pytest.fixture(scope="module")
def fitted(problem):
    X, y, group, _ = _fitting(problem)
    dX, dy, dgroup = _dask(X, y, group)
    params = {"estimator": _frozen(problem), "max_difference": 0.03}
    return RateConstrainedClassifier(**params).fit(dX, dy, sensitive_features=dgroup), X


@pytest.mark.parametrize("form", ["array", "frame"])
@pytest.mark.parametrize(
    ("method", "width"),
    [("predict", None), ("predict_proba", 2), ("decision_function", None), ("cell_proba", 6)],
)
def test_predictions_are_lazy_and_equal_in_memory_row_by_row(client, fitted, form, method, width):
    model, X = fitted
    if form == "array":
        dX = da.from_array(X, chunks=(CHUNK, 3))
    else:
        dX = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    got = getattr(model, method)(dX)
    assert isinstance(got, da.Array)
    assert got.ndim == (1 if width is None else 2)
    if form == "array":
        assert got.chunks[0] == dX.chunks[0]
    np.testing.assert_array_equal(got.compute(), getattr(model, method)(X))


def test_predictions_do_not_carry_the_training_rows(fitted, monkeypatch):
    # The lazy cv_proba_ and cv_decisions_ reach back to the training rows; prediction reads
    # neither, so the model shared with the workers must not carry them.
    import fairot.dask._collections as collections

    model, X = fitted
    shared = []
    real_share = collections.share
    monkeypatch.setattr(collections, "share", lambda obj: shared.append(obj) or real_share(obj))
    for method in ("predict", "predict_proba", "decision_function", "cell_proba"):
        got = getattr(model, method)(da.from_array(X, chunks=(CHUNK, 3)))
        np.testing.assert_array_equal(got.compute(), getattr(model, method)(X))
    assert len(shared) == 4
    for sent in shared:
        assert not any(dask.is_dask_collection(v) for v in vars(sent).values())
        assert sent.program_.decisions is None
        assert sent.multipliers_ is model.multipliers_
    assert isinstance(model.cv_proba_, da.Array)  # the fitted model itself keeps them


def test_save_model_names_the_lazy_attributes_then_saves_once_computed(fitted, tmp_path):
    from fairot import load_model, save_model
    from fairot.utils._persistence import MSG_LAZY

    model, X = fitted
    with pytest.raises(ValueError, match=re.escape(MSG_LAZY.split("{")[0])) as caught:
        save_model(model, tmp_path / "model.skops")
    assert "cv_proba_" in str(caught.value) and "cv_decisions_" in str(caught.value)
    assert not (tmp_path / "model.skops").exists()
    assert "program_.decisions" in str(caught.value)
    computed = copy.copy(model)
    for name, value in vars(model).items():
        if dask.is_dask_collection(value):
            setattr(computed, name, value.compute())
    computed.program_ = dataclasses.replace(
        model.program_, decisions=model.program_.decisions.compute()
    )
    save_model(computed, tmp_path / "model.skops")
    np.testing.assert_array_equal(load_model(tmp_path / "model.skops").predict(X), model.predict(X))


def test_base_scores_and_with_budget_on_a_dask_fit(client, problem, fitted):
    model, X = fitted
    Xf, y, group, _ = _fitting(problem)
    expected = RateConstrainedClassifier(estimator=_frozen(problem), max_difference=0.03)
    expected.fit(Xf, y, sensitive_features=group)
    scores = model.base_scores(da.from_array(X, chunks=(CHUNK, 3)))
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), model.base_scores(X), rtol=0, atol=1e-15)
    tighter, tighter_memory = (m.with_budget(min_ratio=0.95) for m in (model, expected))
    assert isinstance(tighter.cv_decisions_, da.Array)
    np.testing.assert_allclose(tighter.multipliers_, tighter_memory.multipliers_, atol=ATOL)
    np.testing.assert_allclose(tighter.program_.rates, tighter_memory.program_.rates, atol=ATOL)
    assert tighter.expected_ratio_ == pytest.approx(tighter_memory.expected_ratio_, abs=0.01)
    # The copy's budget, the original's untouched.
    assert model.budget_form_ == "difference" and tighter.budget_form_ == "ratio"


def test_dataframe_with_group_column_string_labels_and_weights(client, problem):
    X, y, group, _ = _fitting(problem)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"]).assign(group=group)
    labels = np.where(y == 1, "yes", "no")
    weights = np.random.default_rng(2).uniform(0.5, 2.0, y.shape[0])
    Xt, yt, gt, it, _ = (v[:N_TRAIN] for v in problem)
    train = pd.DataFrame(Xt, columns=["x0", "x1", "x2"]).assign(group=it)
    # The model reads the group column (as the in-memory fit would, given its name).
    frozen = FrozenEstimator(LogisticRegression(max_iter=1000).fit(train, it * 2 + yt))
    params = {"estimator": frozen, "min_ratio": 0.9}
    numeric = frame.assign(group=np.searchsorted(["a", "b", "c"], group))
    expected = RateConstrainedClassifier(**params).fit(
        numeric, labels, sensitive_features="group", sample_weight=weights
    )
    ddf = dd.from_pandas(numeric, npartitions=4)
    dlabels = dd.from_pandas(pd.Series(labels), npartitions=4)
    dweights = dd.from_pandas(pd.Series(weights), npartitions=4)
    model = RateConstrainedClassifier(**params).fit(
        ddf, dlabels, sensitive_features="group", sample_weight=dweights
    )
    assert list(model.classes_) == ["no", "yes"]
    assert list(model.feature_names_in_) == ["x0", "x1", "x2", "group"]
    np.testing.assert_allclose(model.multipliers_, expected.multipliers_, rtol=0, atol=ATOL)
    np.testing.assert_allclose(model.unit_shares_, expected.unit_shares_, rtol=0, atol=1e-12)
    proba = model.cv_proba_.compute()
    codes = _codes(model, labels, numeric["group"].to_numpy(), None)
    _check_rates(model, proba, codes, weights)
    predicted = model.predict(ddf)
    np.testing.assert_array_equal(predicted.compute(), model.predict(numeric))


def _folds(random_state, offset, n, fraction, cv=5):
    seed = int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
    return row_draws(offset, n, seed, fraction, cv)


def test_unfrozen_with_every_row_sampled_equals_in_memory_on_the_same_folds(client, problem):
    """Fewer rows than fairot.train_sample_rows: every row trains, cross-fitted per hash fold."""
    X, y, group, _ = _fitting(problem)
    _, fold = _folds(3, 0, y.shape[0], 1.0)
    splits = [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(5)]
    expected = RateConstrainedClassifier(max_difference=0.03, cv=splits)
    expected.fit(X, y, sensitive_features=group)
    model = RateConstrainedClassifier(max_difference=0.03, random_state=3)
    model.fit(*_dask(X, y), sensitive_features=_dask(group)[0])
    np.testing.assert_allclose(model.estimator_.coef_, expected.estimator_.coef_, rtol=0, atol=0)
    np.testing.assert_allclose(model.cv_proba_.compute(), expected.cv_proba_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.multipliers_, expected.multipliers_, rtol=0, atol=ATOL)
    np.testing.assert_allclose(model.program_.rates, expected.program_.rates, rtol=0, atol=ATOL)


def test_unfrozen_trains_on_a_sample_and_cross_fits_every_row(client, problem):
    """The oracle, built here: the sample's fold models, every row's probabilities, the LP."""
    X, y, group, _ = _fitting(problem)
    n, rows, cv = y.shape[0], 1_000, 4
    with dask.config.set({"fairot.train_sample_rows": rows}):
        model = RateConstrainedClassifier(min_ratio=0.9, cv=cv, random_state=5)
        model.fit(*_dask(X, y), sensitive_features=_dask(group)[0])
    sampled, fold = _folds(5, 0, n, rows / n, cv)
    assert abs(sampled.sum() - rows) < 4 * np.sqrt(rows)  # a Bernoulli sample of ~rows
    codes = np.searchsorted(["a", "b", "c"], group) * 2 + y
    final = LogisticRegression(max_iter=1000).fit(X[sampled], codes[sampled])
    np.testing.assert_allclose(model.estimator_.coef_, final.coef_, rtol=0, atol=0)
    proba = np.zeros((n, 6))
    for k in range(cv):
        train = sampled & (fold != k)
        fold_model = LogisticRegression(max_iter=1000).fit(X[train], codes[train])
        proba[np.ix_(fold == k, fold_model.classes_)] = fold_model.predict_proba(X[fold == k])
    np.testing.assert_allclose(model.cv_proba_.compute(), proba, rtol=0, atol=1e-12)
    groups = np.column_stack([proba[:, [2 * a, 2 * a + 1]].sum(axis=1) for a in range(3)])
    program = solve_rate_program(
        2 * proba[:, 1::2].sum(axis=1) - 1, groups, [0, 0, 0], min_ratio=0.9
    )
    np.testing.assert_allclose(model.multipliers_, program.multipliers, rtol=0, atol=ATOL)


def test_unfrozen_fit_is_deterministic_and_ignores_the_partitioning(client, problem):
    X, y, group, _ = _fitting(problem)
    fits = []
    for chunk in (CHUNK, 1_500):
        dX = da.from_array(X, chunks=(chunk, 3))
        dy, dgroup = da.from_array(y, chunks=chunk), da.from_array(group, chunks=chunk)
        with dask.config.set({"fairot.train_sample_rows": 2_000}):
            model = RateConstrainedClassifier(max_difference=0.02, random_state=1)
            fits.append(model.fit(dX, dy, sensitive_features=dgroup))
    # The same rows train the same models; the sums over partitions differ in rounding only.
    np.testing.assert_array_equal(fits[1].estimator_.coef_, fits[0].estimator_.coef_)
    np.testing.assert_allclose(fits[1].cv_proba_.compute(), fits[0].cv_proba_.compute(), atol=0)
    np.testing.assert_allclose(fits[1].multipliers_, fits[0].multipliers_, rtol=0, atol=ATOL)


@pytest.mark.parametrize(
    ("cv", "config", "message"),
    [
        (KFold(3), {}, MSG_DASK_CV.format(cv="KFold")),
        (5, {"fairot.train_sample_rows": 0}, MSG_TRAIN_ROWS.format(value=0)),
        (5, {"fairot.train_sample_rows": 3}, MSG_SAMPLE.split("{")[0]),
    ],
)
def test_unfrozen_options_are_checked(client, problem, cv, config, message):
    X, y, group, _ = _fitting(problem)
    model = RateConstrainedClassifier(max_difference=0.05, cv=cv, random_state=0)
    with dask.config.set(config), pytest.raises(ValueError, match=re.escape(message)):
        model.fit(*_dask(X, y), sensitive_features=_dask(group)[0])
    assert not hasattr(model, "multipliers_")  # atomic: nothing half-fitted


def _error_cases(problem):
    X, y, group, stratum = _fitting(problem)
    dX, dy, dgroup, dstratum = _dask(X, y, group, stratum)
    nan_groups = group.astype(object)
    nan_groups[5] = None
    nan_label = y.astype(float)
    nan_label[CHUNK + 12] = np.nan
    three = y.copy()
    three[3] = 2
    negative = np.ones(y.shape[0])
    negative[7] = -1.0
    return {
        "partitions": (
            {"X": dX, "y": da.from_array(y, chunks=2 * CHUNK), "sensitive_features": dgroup},
            {},
            re.escape(MSG_PARTITIONS.format(name="y", got=2, reference="X", expected=4)),
        ),
        "lengths": (
            {
                "X": dX,
                "y": da.from_array(y, chunks=((500, 1500, 1000, 1000),)),
                "sensitive_features": dgroup,
            },
            {},
            # partitions 0 and 1 both differ; either may be found first
            re.escape(MSG_BLOCK_LENGTH.format(i=0, name="y", got=500, reference="X", expected=1000))
            .replace("0", "[01]", 1)
            .replace("500", "(500|1500)"),
        ),
        "nan groups": (
            {"X": dX, "y": dy, "sensitive_features": da.from_array(nan_groups, chunks=CHUNK)},
            {},
            re.escape(MSG_SF_MISSING.format(name="sensitive_features")),
        ),
        "nan label": (
            {"X": dX, "y": da.from_array(nan_label, chunks=CHUNK), "sensitive_features": dgroup},
            {},
            re.escape(MSG_Y_NAN.format(name="y", row="12 of partition 1")),
        ),
        "three labels": (
            {"X": dX, "y": da.from_array(three, chunks=CHUNK), "sensitive_features": dgroup},
            {},
            re.escape(MSG_NOT_BINARY.split("{")[0]),
        ),
        "negative weight": (
            {
                "X": dX,
                "y": dy,
                "sensitive_features": dgroup,
                "sample_weight": da.from_array(negative, chunks=CHUNK),
            },
            {},
            re.escape(MSG_WEIGHTS.format(name="sample_weight", value=-1.0, row=7)),
        ),
        "zero-weight group": (
            {
                "X": dX,
                "y": dy,
                "sensitive_features": dgroup,
                "sample_weight": da.from_array((group != "b").astype(float), chunks=CHUNK),
            },
            {},
            re.escape(MSG_ZERO_WEIGHT_GROUP.format(group="b")),
        ),
        "zero-weight class": (
            {
                "X": dX,
                "y": dy,
                "sensitive_features": dgroup,
                "sample_weight": da.from_array(y.astype(float), chunks=CHUNK),
            },
            {},
            re.escape(MSG_ONE_CLASS.format(label=0)),
        ),
        "control unused": (
            {"X": dX, "y": dy, "sensitive_features": dgroup, "control_features": dstratum},
            {},
            re.escape(MSG_CONTROL_UNUSED.format(constraint="demographic_parity")),
        ),
        "control needed": (
            {"X": dX, "y": dy, "sensitive_features": dgroup},
            {"constraint": "conditional_demographic_parity"},
            re.escape(MSG_CONTROL_NEEDED),
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "partitions",
        "lengths",
        "nan groups",
        "nan label",
        "three labels",
        "negative weight",
        "zero-weight group",
        "zero-weight class",
        "control unused",
        "control needed",
    ],
)
def test_bad_input_is_one_clear_error(client, problem, case):
    arguments, params, message = _error_cases(problem)[case]
    model = RateConstrainedClassifier(estimator=_frozen(problem), max_difference=0.05, **params)
    with pytest.raises(ValueError, match=message):
        model.fit(
            arguments.pop("X"),
            arguments.pop("y"),
            sensitive_features=arguments.pop("sensitive_features"),
            **arguments,
        )


def test_unknown_chunk_sizes_are_read(client, problem):
    """A Dask DataFrame's arrays have unknown partition lengths: the fit counts them."""
    X, y, group, _ = _fitting(problem)
    group = np.searchsorted(["a", "b", "c"], group)  # numbers: Dask converts strings to object
    frame = dd.from_pandas(pd.DataFrame(X).assign(y=y, g=group), npartitions=4)
    dX = frame[[0, 1, 2]].to_dask_array()
    assert np.isnan(dX.chunks[0][0])
    params = {"estimator": _frozen(problem), "max_difference": 0.03}
    model = RateConstrainedClassifier(**params).fit(
        dX, frame["y"].to_dask_array(), sensitive_features=frame["g"].to_dask_array()
    )
    expected = RateConstrainedClassifier(**params).fit(X, y, sensitive_features=group)
    np.testing.assert_allclose(model.multipliers_, expected.multipliers_, rtol=0, atol=ATOL)
    assert model.cv_proba_.chunks[0] == (1000, 1000, 1000, 1000)


def test_past_the_working_set_only_the_working_set_is_gathered(client, problem, monkeypatch):
    """The program on more rows than one HiGHS solve: the Dask solver's working-set loop."""
    # The estimator calls solve_rate_program with its default working set (20,000 rows);
    # 300 here puts these 4,000 rows past it, as 10^6 rows would be.
    monkeypatch.setitem(solve_rate_program.__kwdefaults__, "working_set_size", 300)
    X, y, group, _ = _fitting(problem)
    params = {"estimator": _frozen(problem), "constraint": "equalized_odds", "min_ratio": 0.9}
    expected = RateConstrainedClassifier(**params).fit(X, y, sensitive_features=group)
    model = RateConstrainedClassifier(**params).fit(
        *_dask(X, y), sensitive_features=_dask(group)[0]
    )
    assert model.program_.working_set_size < y.shape[0] // 4
    assert isinstance(model.program_.decisions, da.Array)
    assert model.program_.working_set_size == expected.program_.working_set_size
    np.testing.assert_allclose(model.multipliers_, expected.multipliers_, rtol=0, atol=ATOL)
    np.testing.assert_allclose(model.program_.rates, expected.program_.rates, rtol=0, atol=ATOL)


@pytest.mark.parametrize("frozen", [True, False])
def test_an_empty_partition_counts_for_nothing(client, problem, frozen):
    """A filter that empties a partition: the fit is the in-memory fit on the rows left."""
    X, y, group, _ = _fitting(problem)
    index = np.searchsorted(["a", "b", "c"], group)
    row = np.arange(y.shape[0])
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"]).assign(y=y, g=index, row=row)
    ddf = dd.from_pandas(frame, npartitions=4)
    kept = ddf[(ddf["row"] < 1_000) | (ddf["row"] >= 2_000)]  # partition 1 is now empty
    assert kept.map_partitions(len).compute().tolist() == [1_000, 0, 1_000, 1_000]
    rows = frame[(row < 1_000) | (row >= 2_000)]
    features = ["x0", "x1", "x2"]
    estimator = (
        FrozenEstimator(
            LogisticRegression(max_iter=1000).fit(rows[features], rows["g"] * 2 + rows["y"])
        )
        if frozen
        else None
    )
    model = RateConstrainedClassifier(estimator=estimator, max_difference=0.03, random_state=0)
    model.fit(kept[features], kept["y"], sensitive_features=kept["g"])
    if frozen:
        expected = RateConstrainedClassifier(estimator=estimator, max_difference=0.03)
        expected.fit(rows[features], rows["y"], sensitive_features=rows["g"])
    else:  # the same hash folds over the rows' positions in the filtered collection
        _, fold = _folds(0, 0, rows.shape[0], 1.0)
        splits = [(np.flatnonzero(fold != k), np.flatnonzero(fold == k)) for k in range(5)]
        expected = RateConstrainedClassifier(max_difference=0.03, cv=splits)
        expected.fit(rows[features], rows["y"], sensitive_features=rows["g"])
    np.testing.assert_allclose(model.multipliers_, expected.multipliers_, rtol=0, atol=ATOL)
    np.testing.assert_allclose(model.cv_proba_.compute(), expected.cv_proba_, atol=1e-12)
    assert model.cv_proba_.chunks[0] == (1_000, 1_000, 1_000)  # concatenate drops the empty
    np.testing.assert_array_equal(
        model.predict(kept[features]).compute(), model.predict(rows[features])
    )


def test_the_seam_checks_the_cell_totals(problem):
    X, y, group, _ = _fitting(problem)
    model = RateConstrainedClassifier(estimator=_frozen(problem), max_difference=0.05)
    encoding = check_sensitive_features(group)
    with pytest.raises(ValueError, match=re.escape(MSG_CELL_WEIGHTS.format(n_cells=6, shape=(4,)))):
        model.fit_cells(
            X, classes=np.array([0, 1]), encoding=encoding, cell_weights=np.ones(4),
            estimator=model.estimator,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("params", "calibration", "confidence"),
    [
        ({"calibration": "sigmoid"}, "sigmoid", None),
        ({"confidence": 0.9}, None, 0.9),
    ],
)
def test_calibration_and_confidence_are_refused_on_dask(
    client, problem, params, calibration, confidence
):
    X, y, group, _ = _fitting(problem)
    model = RateConstrainedClassifier(max_difference=0.05, random_state=0, **params)
    message = MSG_SEAM_UNSUPPORTED.format(calibration=calibration, confidence=confidence)
    with pytest.raises(ValueError, match=re.escape(message)):
        model.fit(*_dask(X, y), sensitive_features=_dask(group)[0])
