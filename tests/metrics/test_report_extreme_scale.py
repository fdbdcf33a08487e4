"""fairness_report at the ends of the float range (issue 19).

Oracle: scipy's W1 on the halved scores, doubled (halving is exact here).
"""

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from fairot.metrics import fairness_report
from fairot.metrics._report import MSG_DISTANCE_OVERFLOW

GROUPS = np.array(list("aaabbb"))


@pytest.mark.parametrize("scale", [1e-300, 1e300, 1.7e308])
def test_w1_is_finite_and_exact_near_float_max(scale):
    pred = np.array([1.0, 1.0, 1.0, 0.3, 0.3, 0.3]) * scale
    summary = fairness_report(None, pred, sensitive_features=GROUPS, task="regression").attrs[
        "summary"
    ]
    oracle = 2 * wasserstein_distance(pred[:3] / 2, pred[3:] / 2)
    np.testing.assert_allclose(summary["max_pairwise_w1"], oracle, rtol=1e-12)
    np.testing.assert_allclose(summary["max_pairwise_winf"], oracle, rtol=1e-12)


def test_distance_above_float_max_is_a_clear_error():
    pred = np.array([1.7e308] * 3 + [-1.7e308] * 3)  # W1 = 3.4e308
    with pytest.raises(ValueError, match=MSG_DISTANCE_OVERFLOW[:40]):
        fairness_report(None, pred, sensitive_features=GROUPS, task="regression")
