"""The null distribution behind the monitor's alerts: what the metric looks like on a fair window.

A window's disparity is biased upwards in finite samples (``W_1`` between two samples of the same
law is positive), so a band above the threshold is not enough evidence on small windows: on a
fair stream most 20-row windows would alert. The monitor therefore also asks that the observed
value be extreme under a null. For the group-disparity metrics the null is *exchangeable groups*:
group labels permuted within the window, group sizes kept. For ``"reference_w1"`` the null is
*no drift*: each group's scores drawn (with replacement) from that group's reference scores, at the
window's group sizes. Both are computed in one vectorised batch.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]


def permutation_null(
    statistic: Statistic,
    scores: np.ndarray,
    codes: np.ndarray,
    n_permutations: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The metric on ``n_permutations`` windows with the group labels shuffled.

    Parameters
    ----------
    statistic : callable
        ``statistic(batch, codes)`` -> the metric of every row of ``batch`` (replicates, samples)
        with the groups ``codes``.
    scores : ndarray of shape (n_samples,)
    codes : ndarray of shape (n_samples,)
    n_permutations : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_permutations,)
    """
    # Shuffling the scores against fixed codes is the same as shuffling the codes, and keeps the
    # statistic's group bookkeeping (which rows belong to which group) computed once.
    order = rng.permuted(np.tile(np.arange(scores.shape[0]), (n_permutations, 1)), axis=1)
    return np.asarray(statistic(scores[order], codes), dtype=float)


def reference_null(
    statistic: Statistic,
    reference: list[np.ndarray],
    codes: np.ndarray,
    n_draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """The metric on ``n_draws`` windows drawn from the reference, group by group.

    Parameters
    ----------
    statistic : callable
        As in :func:`permutation_null`.
    reference : list of ndarray
        Reference scores of each group (index = group code).
    codes : ndarray of shape (n_samples,)
        The window's groups: each row is redrawn from its own group's reference scores.
    n_draws : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_draws,)
    """
    batch = np.empty((n_draws, codes.shape[0]))
    for g in np.unique(codes):
        rows = np.flatnonzero(codes == g)
        batch[:, rows] = rng.choice(reference[g], size=(n_draws, rows.shape[0]), replace=True)
    return np.asarray(statistic(batch, codes), dtype=float)


def p_value(observed: float, null: np.ndarray) -> float:
    """Permutation p-value ``(1 + #{null >= observed}) / (1 + len(null))``.

    The ``+1`` counts the observed window as one of the null draws, which makes the test exact
    (false-alarm probability at most ``alpha``) rather than approximately valid. A small relative
    tolerance counts ties the floating-point way (a permutation equal to the identity must tie).
    """
    tol = 1e-12 * max(1.0, abs(observed))
    return float((1 + np.count_nonzero(null >= observed - tol)) / (1 + null.shape[0]))


def positive_rate_gap(batch: np.ndarray, codes: np.ndarray, threshold: float) -> np.ndarray:
    """Demographic-parity difference of every row of ``batch``: max - min positive rate.

    Positives are scores ``> threshold`` (the convention of
    :func:`fairot.metrics.demographic_parity_difference`).
    """
    positive = batch > threshold
    rates = np.stack([positive[:, codes == g].mean(axis=1) for g in np.unique(codes)], axis=1)
    return rates.max(axis=1) - rates.min(axis=1)
