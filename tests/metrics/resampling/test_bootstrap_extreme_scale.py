"""The audit's bootstrap interval of the pairwise W_p at 1e300 and beyond (issue 19).

Oracle: the interval of ``c * x`` is ``c`` times the interval of ``x`` (a power of two ``c``
makes the scaling exact), and the point estimate lies in its interval.
"""

import warnings

import numpy as np
import pytest

from fairot.reporting import audit

GROUPS = np.array(["a"] * 30 + ["b"] * 30)
BASE = np.random.default_rng(0).uniform(-1.0, 1.0, 60)


@pytest.mark.parametrize("factor", [2.0**996, 2.0**-996, 2.0**1020])
def test_audit_w2_interval_scales_without_overflow(factor):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = audit(None, BASE * factor, GROUPS, task="regression", plots=False, n_bootstrap=20)
    unit = audit(None, BASE, GROUPS, task="regression", plots=False, n_bootstrap=20)
    big_row = big.summary_table().loc["max_pairwise_w2"]
    unit_row = unit.summary_table().loc["max_pairwise_w2"]
    for key in ("value", "ci_low", "ci_high"):
        assert np.isfinite(big_row[key])
        np.testing.assert_allclose(big_row[key], unit_row[key] * factor, rtol=1e-12)
