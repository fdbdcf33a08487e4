"""Groups are parsed once, at the public boundary: every public call encodes its groups once.

The rule of ``docs/architecture.md`` ("the public boundary turns ``sensitive_features`` into a
``GroupEncoding`` once; internal consumers take the encoding"), checked where it matters, at run
time: the encoder's work is ``check_sensitive_features`` factorising the columns of the groups,
and the test wraps that step and counts how many times a call factorises the whole group column.
A helper that parsed the raw column again would count twice. The metric-form functions
(``f(y_true, y_pred, *, sensitive_features=...)``) are found in the API reference's modules
(``fairot.dask`` aside: it reads groups per partition), so a new one is checked without being
listed here; the estimators' ``fit`` are listed.
``tests/reporting/test_audit_data.py`` does the same for ``audit()`` under all its options.
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

import fairot.utils.sensitive as sensitive
from tests.api_reference import extra_missing, is_internal, public_modules, public_names

# Enough impostor pairs for the verification functions' default target FMR (1e-3).
N_PER_GROUP = 700
GROUPS = np.repeat(["a", "b", "c"], N_PER_GROUP)


def _labels_and_scores(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, GROUPS.size)
    scores = np.clip(rng.normal(0.4 + 0.1 * (GROUPS == "b") + 0.2 * y, 0.15), 0.01, 0.99)
    return y, scores


def _metric_form_functions():
    """Every API function called as ``f(y_true, y_pred, *, sensitive_features=...)``."""
    found, seen = [], set()
    for module_name in public_modules():
        # fairot.dask encodes the distinct values of the partitions, never a whole column
        # (tests/dask checks it reads each partition's groups once).
        if is_internal(module_name) or extra_missing(module_name) or module_name == "fairot.dask":
            continue
        module = importlib.import_module(module_name)
        for name in public_names(module):
            obj = getattr(module, name)
            if not inspect.isfunction(obj) or obj in seen:
                continue
            parameters = list(inspect.signature(obj).parameters)
            if parameters[:2] == ["y_true", "y_pred"] and "sensitive_features" in parameters:
                seen.add(obj)
                found.append(pytest.param(obj, id=f"{module_name}.{name}"))
    return found


METRIC_FORM = _metric_form_functions()


def test_the_walk_finds_the_metric_form_functions():
    names = {p.id for p in METRIC_FORM}
    assert {"fairot.metrics.group_rates", "fairot.metrics.wass1", "fairot.reporting.audit"} <= names
    assert len(names) >= 15


@pytest.mark.filterwarnings("ignore::UserWarning")  # small groups, undefined rates: not the point
@pytest.mark.parametrize("function", METRIC_FORM)
def test_a_metric_form_call_encodes_its_groups_once(encoded, function):
    y, scores = _labels_and_scores()
    function(y, scores, sensitive_features=GROUPS)
    assert encoded.count(GROUPS.tolist()) == 1


def _features(y):
    rng = np.random.default_rng(1)
    return np.column_stack([rng.normal(y + 0.5 * (GROUPS == "b"), 1.0), rng.normal(size=y.size)])


def _rate_constrained():
    from fairot.classification import RateConstrainedClassifier

    return RateConstrainedClassifier(max_difference=0.1, random_state=0)


def _quantile_parity():
    from fairot.classification import QuantileParityPostProcessor

    return QuantileParityPostProcessor()


def _cot():
    from fairot.classification import COTClassifier

    return COTClassifier(n_updates=50, random_state=0)


def _dot():
    from fairot.classification import DOTClassifier

    return DOTClassifier(n_updates=50, random_state=0)


def _regressor():
    from fairot.regression import WassersteinFairRegressor

    return WassersteinFairRegressor(estimator=LinearRegression(), n_grid=50)


@pytest.mark.filterwarnings("ignore::UserWarning")  # a 50-update fit may warn of its collapse
@pytest.mark.parametrize(
    "make", [_rate_constrained, _quantile_parity, _cot, _dot, _regressor], ids=lambda f: f.__name__
)
def test_a_fit_encodes_its_groups_once(encoded, make):
    y, _ = _labels_and_scores()
    X = _features(y)
    target = X[:, 0] + X[:, 1] if make is _regressor else y
    make().fit(X, target, sensitive_features=GROUPS)
    assert encoded.count(GROUPS.tolist()) == 1


def test_the_count_sees_every_encoding(encoded):
    """The oracle of the tests above: each parse of the raw column is seen."""
    for _ in range(3):
        sensitive.check_sensitive_features(GROUPS)
    assert encoded.count(GROUPS.tolist()) == 3
