"""What DPP reads of ``X`` (``fairot.classification._dpp_inputs``): ``X`` goes to the wrapped
estimator untouched (raw strings in a pipeline, NaN), DPP records only its width and names.

The oracle: the wrapped estimator's own scores, SciPy's W1 between them.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from fairot.classification import QuantileParityPostProcessor
from fairot.datasets import load_adult


@pytest.fixture(scope="module")
def adult_raw():
    bunch = load_adult(preprocess=False)
    rows = np.random.default_rng(0).choice(bunch.data.shape[0], 3000, replace=False)
    X = bunch.data.iloc[rows].reset_index(drop=True)
    y = np.asarray(bunch.target)[rows]
    return X, y


def test_dpp_wraps_a_raw_string_pipeline_on_adult(adult_raw):
    X, y = adult_raw
    categorical = [c for c in X.columns if X[c].dtype != np.int64]
    numeric = [c for c in X.columns if X[c].dtype == np.int64]
    pipe = Pipeline(
        [
            (
                "prep",
                ColumnTransformer(
                    [
                        ("cat", OneHotEncoder(handle_unknown="ignore"), categorical),
                        ("num", StandardScaler(), numeric),
                    ]
                ),
            ),
            ("lr", LogisticRegression(max_iter=500)),
        ]
    )
    X_before = X.copy()
    dpp = QuantileParityPostProcessor(estimator=pipe).fit(X, y, sensitive_features=["race", "sex"])
    pd.testing.assert_frame_equal(X, X_before)  # the user's frame is untouched
    assert list(dpp.feature_names_in_) == list(X.columns)
    assert dpp.group_names_[0] == "race=Black, sex=Female"
    s = dpp.predict_proba(X)[:, 1]  # groups read from the named columns again
    np.testing.assert_array_equal(
        s, dpp.predict_proba(X, sensitive_features=X[["race", "sex"]])[:, 1]
    )
    groups = X["race"] + X["sex"]
    base = dpp.estimator_.predict_proba(X)[:, 1]
    gap = lambda v: max(  # noqa: E731
        wasserstein_distance(v[groups == g], v) for g in groups.unique()
    )
    assert gap(s) < 0.25 * gap(base)


def test_dpp_passes_nan_to_hist_gradient_boosting(biased_frame):
    X, y, sf = biased_frame
    X = X.copy()
    X.iloc[::7, 1] = np.nan
    # One OpenMP thread: on a busy machine HGB's spinning threads cost seconds per fit.
    with threadpool_limits(limits=1):
        dpp = QuantileParityPostProcessor(
            estimator=HistGradientBoostingClassifier(max_iter=20, random_state=0)
        ).fit(X, y, sensitive_features=sf)
        proba = dpp.predict_proba(X, sensitive_features=sf)
    assert np.all(np.isfinite(proba))
    assert dpp.__sklearn_tags__().input_tags.allow_nan
