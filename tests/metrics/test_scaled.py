"""Regression rates at the ends of the float range (issue 19).

Oracles are hand values: the RMSE of equal-magnitude residuals is that magnitude.
"""

import numpy as np
import pytest

from fairot.metrics import group_rates
from fairot.metrics._scaled import MSG_RESIDUAL_OVERFLOW

GROUPS = np.array(["a", "a", "b", "b"])


@pytest.mark.parametrize("magnitude", [1e300, 1e-300, 1.7e308, 5e-324])
def test_rmse_and_mae_are_exact_at_extreme_magnitudes(magnitude):
    y = np.array([magnitude, -magnitude, magnitude, magnitude])
    rates = group_rates(y, np.zeros(4), sensitive_features=GROUPS, task="regression")
    np.testing.assert_allclose(rates["rmse"], [magnitude, magnitude], rtol=1e-15)
    np.testing.assert_allclose(rates["mae"], [magnitude, magnitude], rtol=1e-15)
    np.testing.assert_allclose(rates["mean_residual"], [0.0, magnitude], rtol=1e-15)


def test_average_above_float_max_is_a_clear_error():
    # y - pred overflows before the fix; an average above the float max must be an error.
    y = np.array([1.7e308, 1.7e308, 1.7e308, -1.7e308])
    pred = np.array([0.0, 0.0, -1.7e308, 1.7e308])  # group b: |residual| = 3.4e308
    with pytest.raises(ValueError, match=MSG_RESIDUAL_OVERFLOW[:40]):
        group_rates(y, pred, sensitive_features=GROUPS, task="regression")
    y[2:] = [1.7e308, -1.7e308]
    pred[2:] = [0.0, 0.0]
    rates = group_rates(y, pred, sensitive_features=GROUPS, task="regression")
    np.testing.assert_allclose(rates["rmse"], [1.7e308, 1.7e308], rtol=1e-15)


def test_half_range_differences_are_exact():
    # math.fsum-style oracle on hand values: |1.7e308/2 - (-1.7e308/2)| = 1.7e308.
    y = np.array([0.85e308, 0.85e308, 1.0, 1.0])
    pred = np.array([-0.85e308, -0.85e308, 0.0, 0.0])
    rates = group_rates(y, pred, sensitive_features=GROUPS, task="regression")
    np.testing.assert_allclose(rates["rmse"], [1.7e308, 1.0], rtol=1e-15)
