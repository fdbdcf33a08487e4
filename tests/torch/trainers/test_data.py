"""What FairTrainer reads from its data: the weighted draws of a batch.

Oracle: scipy's chi-square test of the drawn rows' counts against the weights.
"""

import numpy as np
from scipy.stats import chisquare

from fairot.torch.trainers._data import draw_rows


def test_rows_are_drawn_in_proportion_to_their_weight():
    members = [np.arange(4), np.arange(4, 7)]
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 5.0])
    drawing = [np.cumsum(weights[m]) for m in members]
    rng = np.random.RandomState(0)
    rows = np.concatenate([draw_rows(members, 50, rng, drawing) for _ in range(400)])
    counts = np.bincount(rows, minlength=7)
    assert counts[5] == 0  # a zero weight is never drawn
    for m in members:
        p = weights[m] / weights[m].sum()
        observed = counts[m][p > 0]
        expected = observed.sum() * p[p > 0]
        assert chisquare(observed, expected).pvalue > 1e-3
