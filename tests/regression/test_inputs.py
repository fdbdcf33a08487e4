"""What the regressor reads of its inputs (``fairot.regression._inputs``): groups named as
columns of X are read from X again, in ``predict``, ``score``, a pipeline and a grid search.

The oracle: the same model given the group column as data; scikit-learn's ``r2_score``.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from fairot.regression import WassersteinFairRegressor, WassersteinFairRegressorCV

from ._oracle import shifted_groups as _problem


def _frame(n=1500, seed=4):
    X, y, s = _problem(n=n, seed=seed)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["group"] = np.where(s == 1, "q", "p")
    return frame, y


def _drop_group():
    return FunctionTransformer(lambda frame: frame.drop(columns="group"))


@pytest.mark.parametrize("names", ["group", ["group"]])
def test_predict_and_score_read_the_groups_from_the_columns_fit_named(names):
    frame, y = _frame()
    test, y_test = _frame(seed=5)
    base = make_pipeline(_drop_group(), LinearRegression())
    model = WassersteinFairRegressor(estimator=base, tau=0.2, n_grid=100, random_state=0)
    model.fit(frame, y, sensitive_features=names)
    expected = model.predict(test, sensitive_features=test["group"])
    np.testing.assert_array_equal(model.predict(test), expected)
    assert model.score(test, y_test) == pytest.approx(r2_score(y_test, expected), abs=1e-12)
    np.testing.assert_array_equal(
        model.score_unadjusted(test), model.score_unadjusted(test, sensitive_features="group")
    )
    # the CV reads them the same way
    search = WassersteinFairRegressorCV(estimator=clone(model), taus=[0.0, 0.5], cv=2)
    search.fit(frame, y, sensitive_features=names)
    np.testing.assert_array_equal(
        search.predict(test), search.predict(test, sensitive_features=test["group"])
    )
    assert search.score(test, y_test) == pytest.approx(
        r2_score(y_test, search.predict(test)), abs=1e-12
    )


def test_groups_from_x_in_a_pipeline():
    frame, y = _frame()
    test, y_test = _frame(seed=6)
    base = make_pipeline(_drop_group(), LinearRegression())
    model = WassersteinFairRegressor(estimator=base, tau=0.2, n_grid=100, random_state=0)
    pipe = make_pipeline(FunctionTransformer(), model)
    pipe.fit(frame, y, wassersteinfairregressor__sensitive_features="group")
    expected = clone(model).fit(frame, y, sensitive_features="group").predict(test)
    np.testing.assert_array_equal(pipe.predict(test), expected)
    assert pipe.score(test, y_test) == pytest.approx(r2_score(y_test, expected), abs=1e-12)


def test_groups_given_as_data_stay_required_in_predict():
    X, y, s = _problem(n=400)
    model = WassersteinFairRegressor(tau=0.5, random_state=0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="sensitive_features"):
        model.predict(X)
    with pytest.raises(ValueError, match="score needs sensitive_features"):
        model.score(X, y)


def test_grid_search_with_groups_named_as_columns_scores_without_them():
    import sklearn
    from sklearn.model_selection import GridSearchCV

    frame, y = _frame(n=900, seed=10)
    base = make_pipeline(_drop_group(), LinearRegression())
    model = WassersteinFairRegressor(estimator=base, n_grid=50, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(model, {"tau": [0.0, 0.5, 1.0]}, cv=3)
        search.fit(frame, y, sensitive_features="group")
        pred = search.predict(frame)
        np.testing.assert_array_equal(
            pred, search.best_estimator_.predict(frame, sensitive_features=frame["group"])
        )
        assert search.score(frame, y) == pytest.approx(r2_score(y, pred), abs=1e-12)
