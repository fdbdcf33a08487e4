"""What COT and DOT share (``fairot.classification._base``): the checks of the inputs and of
the update loop (collapse, saturation, divergence), each with the message that says what to do.
"""

import numpy as np
import pytest

from fairot.classification import COTClassifier, DivergenceError, DOTClassifier
from fairot.classification._base import MSG_SMALL_GROUP
from tests.helpers import FAST_IN_PROCESSING as FAST


def test_collapse_is_detected(biased):
    X, y, a = biased
    # step_size=1 now stops earlier, at saturation (test_saturation_is_detected); .1 collapses.
    model = COTClassifier(step_size=0.1, n_updates=3000, random_state=0)
    with pytest.raises(DivergenceError, match="collapsed.*Lower step_size"):
        model.fit(X, y, sensitive_features=a)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_saturation_is_detected(cls, biased):
    # A huge step size drives the logits past +-20: a 0/1 "classifier" whose spread survives
    # the collapse check. It must raise with advice, not be returned.
    X, y, a = biased
    model = cls(step_size=1e12, n_updates=500, random_state=0)
    with pytest.raises(
        DivergenceError, match=r"hard classifier.*Lower step_size \(epsilon_theta, now 1e\+12\)"
    ):
        model.fit(X, y, sensitive_features=a)
    assert not hasattr(model, "coef_")


def test_small_group_warns(biased):
    X, y, a = biased
    a = a.copy()
    a[:5] = 2
    # a 5-row group is also under the small-group threshold shared by every method
    with (
        pytest.warns(UserWarning, match="fewer than batch_size"),
        pytest.warns(UserWarning, match=r"row\(s\) at fit, fewer than"),
    ):
        FAST["DOT"](n_updates=10).fit(X, y, sensitive_features=a)
    assert "{group" in MSG_SMALL_GROUP


def test_non_linear_estimator_rejected(biased):
    from sklearn.tree import DecisionTreeClassifier

    X, y, a = biased
    with pytest.raises(TypeError, match="coef_"):
        FAST["COT"](estimator=DecisionTreeClassifier()).fit(X, y, sensitive_features=a)


def test_diverged_partial_fit_keeps_the_previous_model(biased):
    X, y, a = biased
    model = COTClassifier(n_updates=200, random_state=0).fit(X, y, sensitive_features=a)
    coef, duals, done = model.coef_.copy(), model.duals_.copy(), model.n_updates_
    model.set_params(dual_step_size=1.0, reg_strength=0.01)
    with pytest.raises(DivergenceError):
        model.partial_fit(X, y, sensitive_features=a, n_updates=5000)
    np.testing.assert_array_equal(model.coef_, coef)
    np.testing.assert_array_equal(model.duals_, duals)
    assert model.n_updates_ == done
    model.set_params(dual_step_size=0.01, reg_strength=0.1)
    model.partial_fit(X, y, sensitive_features=a, n_updates=100)
    assert model.n_updates_ == done + 100 and np.isfinite(model.coef_).all()


def test_eval_set_must_be_a_triple(biased):
    X, y, a = biased
    with pytest.raises(ValueError, match="eval_set must be"):
        FAST["DOT"](n_updates=10).fit(X, y, sensitive_features=a, eval_set=(X, y))


def test_partial_fit_checks_classes(biased):
    X, y, a = biased
    model = FAST["DOT"](n_updates=10).fit(X, y, sensitive_features=a)
    model.partial_fit(X, y, sensitive_features=a, n_updates=10, classes=[0, 1])
    with pytest.raises(ValueError, match="classes"):
        model.partial_fit(X, y, sensitive_features=a, n_updates=10, classes=[1, 2])
