"""Stage 1 of the regressor (``fairot.regression.scores``): one score model for all rows, or
one per group (``groupwise``), fitted with the regressor's ``random_state``.
"""

import numpy as np
from sklearn.tree import DecisionTreeRegressor

from fairot.regression import WassersteinFairRegressor
from tests.helpers import linear_groups as _data


def test_groupwise_and_single_model_and_random_state():
    X, y, s = _data()
    tree = DecisionTreeRegressor(max_depth=3, random_state=0)
    a = WassersteinFairRegressor(estimator=tree, tau=0.5, random_state=3, groupwise=True).fit(
        X, y, sensitive_features=s
    )
    b = WassersteinFairRegressor(estimator=tree, tau=0.5, random_state=3, groupwise=True).fit(
        X, y, sensitive_features=s
    )
    assert len(a.estimators_) == 2
    np.testing.assert_array_equal(
        a.predict(X, sensitive_features=s), b.predict(X, sensitive_features=s)
    )
    c = WassersteinFairRegressor(groupwise=False, tau=0.5, random_state=3)
    c.fit(X, y, sensitive_features=s)
    assert len(c.estimators_) == 1
