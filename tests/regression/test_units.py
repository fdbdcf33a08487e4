"""The scaled unit of the scores (``fairot.regression._units``).

The oracle: the same problem at scale 1, whose answer the scaled one must reproduce.
"""

import numpy as np
import pytest

from fairot.regression import WassersteinFairRegressor

from ._oracle import frozen_column as _frozen_column
from ._oracle import two_designs as _two_designs


@pytest.mark.parametrize("scale", [1e-300, 1e154, 1e300])
@pytest.mark.parametrize(
    ("p", "cost"), [(1, "squared"), (2, "squared"), (np.inf, "squared"), (2, "observed_squared")]
)
def test_extreme_scales_solve_the_unit_problem(scale, p, cost):
    scores, s, test, t_s = _two_designs(11, 3, 300)
    scores, test = scores / 8, test / 8  # keeps 1e300 * scores below the largest float

    def fit_predict(factor, tau):
        model = WassersteinFairRegressor(
            estimator=_frozen_column(), tau=tau, p=p, n_grid=40, cost=cost
        )
        model.fit(scores[:, None] * factor, scores * factor, sensitive_features=s)
        return model, model.predict(test[:, None] * factor, sensitive_features=t_s)

    for tau in (0.0, 0.4):
        unit, unit_pred = fit_predict(1.0, tau)
        big, big_pred = fit_predict(scale, tau)
        np.testing.assert_allclose(big_pred / scale, unit_pred, rtol=1e-12, atol=1e-12)
        for name in ("epsilon_", "grid_gap_", "unadjusted_grid_gap_"):
            assert getattr(big, name) / scale == pytest.approx(getattr(unit, name), rel=1e-12)
        assert np.isfinite(big.grid_violation_)
        assert big.grid_gap_ <= big.epsilon_ * (1 + 1e-9) + 1e-300
        assert big.score(
            test[:, None] * scale, test * scale, sensitive_features=t_s
        ) == pytest.approx(unit.score(test[:, None], test, sensitive_features=t_s), abs=1e-12)


def test_a_cost_that_cannot_be_rescaled_raises_on_overflow():
    # a logit has an absolute meaning: the logistic cost runs unscaled, and says so
    scores, s, _, _ = _two_designs(12, 2, 200)
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.5, cost="logistic")
    with pytest.raises(ValueError, match="overflow"):
        model.fit(scores[:, None] * 1e300, scores, sensitive_features=s)
