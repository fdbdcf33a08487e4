"""The cells of the rate-constrained rule (``fairot.classification._rate_cells``): the
cross-fitted cell probabilities and the empirical rates read from them.

The oracles: fairlearn's ``demographic_parity_difference`` and fairot's bootstrap intervals.
"""

import pytest
from fairlearn.metrics import demographic_parity_difference

from fairot.classification import RateConstrainedClassifier
from tests.helpers import hidden_groups as _data


def test_cross_fitted_decisions_give_the_empirical_rates_and_their_intervals():
    from fairot.metrics import bootstrap_intervals

    X, y, a = _data(n=1000, seed=12)
    model = RateConstrainedClassifier(max_difference=0.03, random_state=0)
    model.fit(X, y, sensitive_features=a)
    d = model.cv_decisions_
    assert model.cv_difference_ == pytest.approx(
        demographic_parity_difference(y, d, sensitive_features=a), abs=1e-12
    )
    intervals = bootstrap_intervals(y, d, sensitive_features=a, n_bootstrap=50, random_state=0)
    low, high = intervals.summary.loc["demographic_parity_difference", ["low", "high"]]
    assert low <= model.cv_difference_ <= high
