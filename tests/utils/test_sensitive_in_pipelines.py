"""Groups named by a column of X, for an estimator at the end of a Pipeline.

A transformer that returns arrays drops the column names: the estimator then cannot read the
groups from X and says so, naming ``sensitive_features``. With ``set_output(transform="pandas")``
the names survive and the pipeline equals the estimator fitted by hand on the transformed frame
with the groups given as an array.
"""

import re

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.regression import WassersteinFairRegressor
from fairot.utils.sensitive import MSG_SF_COLUMN
from tests.helpers import make_biased

MAKERS = {
    "cot": lambda: COTClassifier(
        estimator=LogisticRegression(), n_updates=50, batch_size=20, random_state=0
    ),
    "dot": lambda: DOTClassifier(
        estimator=LogisticRegression(), n_updates=50, batch_size=20, random_state=0
    ),
    "dpp": lambda: QuantileParityPostProcessor(estimator=LogisticRegression()),
    "regressor": lambda: WassersteinFairRegressor(estimator=LinearRegression(), random_state=0),
}
ARRAY_ERROR = re.escape(
    MSG_SF_COLUMN.format(
        name="sensitive_features", value="group", problem="X is a ndarray, not a pandas DataFrame"
    )
)


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _data(name):
    X, y, a = make_biased(n=300, seed=2)
    # The group column is numeric: the wrapped model takes it as a feature too.
    frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "group": a.astype(float)})
    if name == "regressor":
        y = X[:, 0] + 0.5 * X[:, 1] + np.random.default_rng(2).normal(0, 0.3, X.shape[0])
    return frame, y


def _scaler():
    # Scales the numeric columns and passes the group column through, under its own name.
    return ColumnTransformer(
        [("num", StandardScaler(), ["x1", "x2"])],
        remainder="passthrough",
        verbose_feature_names_out=False,
    )


def _output(name, model, X, **kwargs):
    method = model.predict if name == "regressor" else model.predict_proba
    return method(X, **kwargs)


@pytest.mark.parametrize("name", list(MAKERS))
def test_array_output_gives_an_error_naming_the_parameter(routing, name):
    X, y = _data(name)
    pipe = Pipeline([("scale", StandardScaler()), ("fair", MAKERS[name]())])
    with pytest.raises(ValueError, match=ARRAY_ERROR):
        pipe.fit(X, y, sensitive_features="group")


@pytest.mark.parametrize("name", list(MAKERS))
def test_pandas_output_reads_the_groups_from_the_transformed_frame(routing, name):
    X, y = _data(name)
    pipe = Pipeline([("scale", _scaler()), ("fair", MAKERS[name]())])
    pipe.set_output(transform="pandas")
    pipe.fit(X, y, sensitive_features="group")
    # By hand: the same transformer, the groups as an array.
    Xt = _scaler().set_output(transform="pandas").fit_transform(X)
    assert list(Xt.columns) == ["x1", "x2", "group"]
    by_hand = MAKERS[name]().fit(Xt, y, sensitive_features=X["group"].to_numpy())
    expected = _output(name, by_hand, Xt, sensitive_features=X["group"].to_numpy())
    # Fitted with a column name, the pipeline reads the groups from X again when it predicts.
    np.testing.assert_allclose(_output(name, pipe, X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        pipe.predict(X),
        by_hand.predict(Xt, sensitive_features=X["group"].to_numpy()),
        rtol=1e-12,
        atol=1e-12,
    )
