"""The regressor's tolerance path (``fairot.regression._path``).

The oracle: one regressor fitted per tolerance, separately.
"""

import numpy as np

from fairot.regression import WassersteinFairRegressor, fairness_accuracy_path
from tests.helpers import linear_groups as _data


def test_path_matches_separate_fits():
    X, y, s = _data(n=800, k=3)
    taus = [0.0, 0.25, 0.5, 1.0]
    template = WassersteinFairRegressor(p=2, random_state=0, n_grid=200)
    path = fairness_accuracy_path(
        template,
        X[:500],
        y[:500],
        sensitive_features=s[:500],
        taus=taus,
        X_test=X[500:],
        y_test=y[500:],
        sensitive_features_test=s[500:],
    )
    assert list(path.table["tau"]) == taus
    for tau, est, mse in zip(taus, path.estimators, path.table["mse"], strict=True):
        single = WassersteinFairRegressor(p=2, random_state=0, n_grid=200, tau=tau)
        single.fit(X[:500], y[:500], sensitive_features=s[:500])
        pred = single.predict(X[500:], sensitive_features=s[500:])
        np.testing.assert_allclose(est.predict(X[500:], sensitive_features=s[500:]), pred)
        np.testing.assert_allclose(mse, np.mean((y[500:] - pred) ** 2))
    assert (path.table["grid_violation"] <= 1e-10).all()
