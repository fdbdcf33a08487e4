"""Mini-batch positions of the stochastic updates, drawn with or without row weights."""

from __future__ import annotations

import numpy as np


def drawing_weights(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """Weights for drawing batches and building the target; equal weights are no weights.

    Drawing with equal weights gives the same draws (hence the same model) as without them.
    """
    if sample_weight is None or np.all(sample_weight == sample_weight[0]):
        return None
    return sample_weight


def cumulative_weights(weights: np.ndarray) -> np.ndarray:
    """Normalised cumulative weights, ending exactly at 1 (inverse-CDF sampling)."""
    cum = np.cumsum(weights)
    cum /= cum[-1]
    cum[-1] = 1.0
    return cum


def weighted_batches(rng: np.random.Generator, cumulative: list[np.ndarray], shape) -> np.ndarray:
    """Positions within each group drawn with probability proportional to the row's weight.

    Inverse-CDF sampling: a uniform ``u`` picks the first row whose cumulative weight exceeds
    it, so a zero-weight row is never drawn and a row of weight ``w`` is drawn with probability
    ``w / sum(w)`` (a row repeated ``k`` times would be drawn ``k`` times as often).
    """
    u = rng.random(size=shape)
    batches = np.empty(shape, dtype=np.int64)
    for g, cum in enumerate(cumulative):
        batches[:, g, :] = np.searchsorted(cum, u[:, g, :], side="right")
    return batches
