"""One vocabulary across fairot's estimators and trainers, read from their signatures.

Every estimator fits with ``fit(X, y, *, sensitive_features, sample_weight=None)``; every one
that wraps a model takes it as ``estimator=``; every one that draws random numbers takes
``random_state=None`` and reads it through :func:`sklearn.utils.check_random_state`; every
method that takes the groups requests them for metadata routing by default. ``groups`` means
one thing only, scikit-learn's CV groups: the mode string is ``group_mode`` and per-sample codes
are ``group_codes``. The trainers share their names for step sizes, seeds and progress.
"""

import importlib.util
import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.metadata_routing import get_routing_for_object

from fairot.classification import (
    COTClassifier,
    DOTClassifier,
    QuantileParityPostProcessor,
    RateConstrainedClassifier,
)
from fairot.regression import WassersteinFairRegressor, WassersteinFairRegressorCV
from tests.helpers import make_biased

torch = pytest.importorskip("torch")

from fairot.face import MetaBalancedTrainer  # noqa: E402
from fairot.torch import FairMLPClassifier, FairTrainer, WassersteinParityPenalty  # noqa: E402

CLASSIFIERS = [COTClassifier, DOTClassifier, QuantileParityPostProcessor, FairMLPClassifier]
#: (class, whether it wraps a model, whether it draws random numbers)
ESTIMATORS = {
    COTClassifier: (True, True),
    DOTClassifier: (True, True),
    QuantileParityPostProcessor: (True, False),
    FairMLPClassifier: (False, True),
    WassersteinFairRegressor: (True, True),
    WassersteinFairRegressorCV: (True, False),
}
TRAINERS = [FairTrainer, MetaBalancedTrainer]
ROUTED_METHODS = ("fit", "partial_fit", "decision_function", "predict_proba", "predict", "score")


def _parameters(function) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(function).parameters)


@pytest.mark.parametrize(
    "estimator",
    [*CLASSIFIERS, WassersteinFairRegressor, WassersteinFairRegressorCV, RateConstrainedClassifier],
)
def test_fit_takes_keyword_only_sensitive_features_and_sample_weight(estimator):
    params = _parameters(estimator.fit)
    assert list(params)[:3] == ["self", "X", "y"]
    sf, weights = params["sensitive_features"], params.get("sample_weight")
    assert sf.kind is inspect.Parameter.KEYWORD_ONLY
    assert sf.default is inspect.Parameter.empty  # required: never guessed
    assert weights is not None and weights.kind is inspect.Parameter.KEYWORD_ONLY
    assert weights.default is None
    # Nothing positional past (X, y): a third positional argument is a TypeError.
    positional = [p for p in params.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert [p.name for p in positional] == ["self", "X", "y"]


@pytest.mark.parametrize("estimator", CLASSIFIERS)
def test_partial_fit_and_predictions_take_the_same_keywords(estimator):
    for name in ("partial_fit", "decision_function", "predict_proba", "predict", "score"):
        method = getattr(estimator, name, None)
        if method is None:
            continue
        params = _parameters(method)
        assert params["sensitive_features"].kind is inspect.Parameter.KEYWORD_ONLY, name
        if name == "partial_fit":
            assert params["sensitive_features"].default is inspect.Parameter.empty
            assert params["sample_weight"].kind is inspect.Parameter.KEYWORD_ONLY
            assert params["sample_weight"].default is None
        else:
            assert params["sensitive_features"].default is None, name


@pytest.mark.parametrize(
    "estimator",
    [*CLASSIFIERS, WassersteinFairRegressor, WassersteinFairRegressorCV],
)
def test_constructor_takes_estimator_and_random_state_none(estimator):
    wraps, random = ESTIMATORS[estimator]
    params = _parameters(estimator.__init__)
    if wraps:
        assert "estimator" in params
        assert params["estimator"].kind is inspect.Parameter.KEYWORD_ONLY
        assert params["estimator"].default is None
    for other in ("regressor", "classifier", "base_estimator", "model"):
        assert other not in params
    if random:
        assert params["random_state"].default is None
    assert all(p.kind is not inspect.Parameter.VAR_POSITIONAL for p in params.values()), (
        "no *args: every parameter by keyword"
    )


@pytest.mark.parametrize(
    "estimator", [*CLASSIFIERS, WassersteinFairRegressor, WassersteinFairRegressorCV]
)
def test_groups_is_never_a_constructor_parameter(estimator):
    # ``groups`` is scikit-learn's (CV groups passed to fit); the mode string is group_mode.
    params = _parameters(estimator.__init__)
    assert "groups" not in params
    if estimator is not WassersteinFairRegressorCV:
        assert params["group_mode"].default == "intersection"


@pytest.mark.parametrize("estimator", [*CLASSIFIERS, WassersteinFairRegressor])
def test_one_default_for_metadata_routing_requests(estimator):
    """Every method taking the groups requests them by default; sample_weight is unrequested."""
    routing = get_routing_for_object(estimator())
    for name in ROUTED_METHODS:
        method = getattr(estimator, name, None)
        if method is None:
            continue
        params = _parameters(method)
        requests = getattr(routing, name).requests
        if "sensitive_features" in params:
            assert requests["sensitive_features"] is True, name
        if "sample_weight" in params:
            assert requests["sample_weight"] is None, name


def _fast(estimator, **kwargs):
    fast = {
        COTClassifier: {"n_updates": 30, "n_fourier_features": 10, "batch_size": 10},
        DOTClassifier: {"n_updates": 30, "batch_size": 10},
        FairMLPClassifier: {
            "hidden_layer_sizes": (4,),
            "n_epochs": 2,
            "warmup_epochs": 1,
            "batch_size": 32,
        },
    }
    return estimator(**fast[estimator], **kwargs)


def test_rate_constrained_classifier_speaks_the_same_words():
    """Its predictions read X only (no sensitive_features), and it compares intersectional
    groups only (each row's cell is one class of its probability model): no group_mode. Every
    parameter by keyword, ``estimator`` included, as in the other fairot estimators.
    """
    params = _parameters(RateConstrainedClassifier.__init__)
    assert params["estimator"].default is None and params["random_state"].default is None
    assert all(
        p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in params.items() if name != "self"
    )
    assert "groups" not in params and "group_mode" not in params
    for name in ("decision_function", "predict_proba", "predict"):
        assert "sensitive_features" not in _parameters(getattr(RateConstrainedClassifier, name))
    routing = get_routing_for_object(RateConstrainedClassifier())
    assert routing.fit.requests["sensitive_features"] is True
    assert routing.fit.requests["sample_weight"] is None


@pytest.mark.parametrize("estimator", [COTClassifier, DOTClassifier, FairMLPClassifier])
def test_random_state_is_read_by_check_random_state(estimator):
    """An int and ``RandomState(int)`` are one stream (check_random_state's reading of both)."""
    X, y, a = make_biased(n=120, seed=3)
    by_int = _fast(estimator, random_state=5).fit(X, y, sensitive_features=a)
    by_instance = _fast(estimator, random_state=np.random.RandomState(5)).fit(
        X, y, sensitive_features=a
    )
    np.testing.assert_array_equal(by_int.predict_proba(X), by_instance.predict_proba(X))
    unseeded = _fast(estimator).fit(X, y, sensitive_features=a)  # None: a fresh draw, no error
    assert unseeded.predict_proba(X).shape == (120, 2)
    assert clone(by_int).get_params()["random_state"] == 5


def test_trainers_share_names_for_steps_seeds_and_progress():
    fair, meta = (_parameters(t.__init__) for t in TRAINERS)
    for name in ("learning_rate", "weight_decay", "device", "callbacks"):
        assert name in fair and name in meta, name
    for params in (fair, meta):
        assert params["random_state"].default is None
        assert params["verbose"].default is False
        assert "progress" not in params and "lr" not in params and "seed" not in params
    # Loop lengths: FairTrainer counts epochs (n_epochs), MetaBalancedTrainer steps (n_steps);
    # two meanings, two names, never the same name for both.
    assert "n_epochs" in fair and "n_steps" in _parameters(MetaBalancedTrainer.fit)
    assert "n_steps" not in fair and "n_epochs" not in _parameters(MetaBalancedTrainer.fit)


def test_per_sample_codes_are_group_codes():
    assert list(_parameters(FairTrainer.fit))[3] == "group_codes"
    assert list(_parameters(WassersteinParityPenalty.forward))[2] == "group_codes"
    assert "sample_weight" in _parameters(FairTrainer.fit)


def _public_callables(module):
    for name in getattr(module, "__all__", []):
        obj = getattr(module, name)
        if inspect.isclass(obj):
            yield f"{module.__name__}.{name}", obj.__init__
            for method_name, method in inspect.getmembers(obj, inspect.isfunction):
                if not method_name.startswith("_"):
                    yield f"{module.__name__}.{name}.{method_name}", method
        elif callable(obj):
            yield f"{module.__name__}.{name}", obj


def test_the_mode_string_is_group_mode_in_metrics_reports_and_dask():
    """No public function, class or method calls its mode (or its per-row groups) ``groups``."""
    import fairot.classification
    import fairot.datasets
    import fairot.face
    import fairot.metrics
    import fairot.regression
    import fairot.reporting
    import fairot.torch
    import fairot.transport
    import fairot.utils

    modules = [
        fairot.classification,
        fairot.datasets,
        fairot.face,
        fairot.metrics,
        fairot.regression,
        fairot.reporting,
        fairot.torch,
        fairot.transport,
        fairot.utils,
    ]
    if importlib.util.find_spec("dask") is not None:
        modules.append(__import__("fairot.dask", fromlist=["__all__"]))
    with_mode = []
    for module in modules:
        for name, function in _public_callables(module):
            try:
                params = _parameters(function)
            except (TypeError, ValueError):  # a builtin without a signature
                continue
            assert "groups" not in params, name
            # A record of a finished split (BaselineSplit) states its mode; it has no default.
            if (
                "group_mode" in params
                and params["group_mode"].default is not inspect.Parameter.empty
            ):
                with_mode.append(name)
                assert params["group_mode"].default == "intersection", name
    for name in ("wass1", "fairness_report", "bootstrap_intervals", "audit"):
        assert any(n.endswith(f".{name}") for n in with_mode), name
