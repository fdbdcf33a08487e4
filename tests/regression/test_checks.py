"""The regressor's checks of its options (``fairot.regression.checks``): each tolerance error
names its unit, and both tolerances at once are refused.
"""

import re

import pytest
from sklearn.utils._param_validation import InvalidParameterError

from fairot.regression import WassersteinFairRegressor, WassersteinFairRegressorCV
from fairot.regression.checks import MSG_BOTH_TOLERANCES, TOLERANCE_UNITS

from ._oracle import shifted_groups as _problem


def test_tolerance_errors_name_their_unit():
    X, y, s = _problem(n=300)
    with pytest.raises(InvalidParameterError, match=re.escape(TOLERANCE_UNITS["tau"])):
        WassersteinFairRegressor(tau=-0.1).fit(X, y, sensitive_features=s)
    with pytest.raises(InvalidParameterError, match=re.escape(TOLERANCE_UNITS["epsilon"])):
        WassersteinFairRegressor(epsilon=-1.0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=re.escape(MSG_BOTH_TOLERANCES[:60])):
        WassersteinFairRegressor(tau=0.5, epsilon=0.1).fit(X, y, sensitive_features=s)
    with pytest.warns(UserWarning, match="fraction of the raw gap"):
        WassersteinFairRegressor(tau=1.5).fit(X, y, sensitive_features=s)
    with pytest.raises(InvalidParameterError, match=re.escape(TOLERANCE_UNITS["max_gap"])):
        WassersteinFairRegressorCV(max_gap=-1.0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="non-negative fractions of the raw gap"):
        WassersteinFairRegressorCV(taus=[-0.5, 0.5], cv=2).fit(X, y, sensitive_features=s)
