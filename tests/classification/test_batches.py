"""The mini-batch draws of the stochastic updates (``fairot.classification._batches``).

The oracle is the row weights themselves: each row's drawing frequency over many draws.
"""

import numpy as np

from fairot.classification._batches import cumulative_weights, weighted_batches


def test_weighted_batches_draw_in_proportion_to_weight():
    w = np.array([0.0, 1.0, 3.0, 0.0, 4.0])
    rng = np.random.default_rng(0)
    batches = weighted_batches(
        rng, [cumulative_weights(w), cumulative_weights(np.ones(2))], (4000, 2, 50)
    )
    freq = np.bincount(batches[:, 0, :].ravel(), minlength=5) / batches[:, 0, :].size
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.005)  # 200k draws: sd < 0.0012
    assert freq[0] == 0 and freq[3] == 0
    assert set(np.unique(batches[:, 1, :])) == {0, 1}
