"""The steps of an audit: validated options, and a summary against fairlearn and fairot.metrics."""

import re

import pytest
from fairlearn.metrics import demographic_parity_difference as fl_dpd
from fairlearn.metrics import equalized_odds_difference as fl_eod

from fairot.metrics import strong_demographic_disparity
from fairot.reporting import audit
from fairot.reporting._audit import MSG_N_BOOTSTRAP


def test_summary_against_oracles(data, result):
    y, s, sf = data
    decisions = (s > 0.5).astype(int)
    summary = result.summary
    assert summary["demographic_parity_difference"] == pytest.approx(
        fl_dpd(y, decisions, sensitive_features=sf), abs=1e-12
    )
    assert summary["equalized_odds_difference"] == pytest.approx(
        fl_eod(y, decisions, sensitive_features=sf), abs=1e-12
    )
    assert summary["sdd"] == pytest.approx(
        strong_demographic_disparity(None, s, sensitive_features=sf), abs=1e-12
    )
    bands = result.intervals.summary
    assert set(bands.index) >= {"sdd", "wass1", "spdd", "err", "demographic_parity_difference"}
    assert (bands["low"] <= bands["high"]).all()


@pytest.mark.parametrize("n_bootstrap", [3, -1, 1.5])
def test_bad_n_bootstrap(n_bootstrap):
    with pytest.raises(ValueError, match=re.escape(MSG_N_BOOTSTRAP.split("{")[0])):
        audit(None, [0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"], n_bootstrap=n_bootstrap)
