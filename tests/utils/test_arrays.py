"""fairot.utils.arrays: 1-D arrays, sample weights and probability scores."""

import numpy as np
import pytest

from fairot.utils.arrays import (
    check_array_1d,
    check_sample_weight,
    check_scores,
)


def test_check_array_copies():
    x = np.array([1.0, 2.0])
    out = check_array_1d(x, "x")
    out[0] = 5
    assert x[0] == 1.0


def test_sample_weight_checks():
    w = [1, 2, 0]
    out = check_sample_weight(w, 3)
    assert out.dtype == np.float64 and w == [1, 2, 0]
    assert check_sample_weight(None, 3) is None
    with pytest.raises(ValueError, match=r"got -1.0 at row 1"):
        check_sample_weight([1, -1, 0], 3)
    with pytest.raises(ValueError, match=r"got nan at row 2"):
        check_sample_weight([1, 1, np.nan], 3)
    with pytest.raises(ValueError, match="positive sum"):
        check_sample_weight([0, 0], 2)
    with pytest.raises(ValueError, match="sample_weight=2, samples=3"):
        check_sample_weight([1, 1], 3)


def test_scores_clipped_within_tolerance_else_error_names_row():
    s = np.array([0.5, 1 + 5e-10, -5e-10])
    np.testing.assert_array_equal(check_scores(s, "scores"), [0.5, 1.0, 0.0])
    assert s[1] > 1  # caller's array untouched
    with pytest.raises(ValueError, match=r"got 1.001 at row 1"):
        check_scores([0.5, 1.001], "scores")
    with pytest.raises(ValueError, match=r"got nan at row 0"):
        check_scores([np.nan, 0.5], "scores")
    with pytest.raises(ValueError, match=r"within 1e-09"):
        check_scores([-1e-8], "scores")
