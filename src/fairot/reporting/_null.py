"""The null distribution behind the monitor's alerts: what the metric looks like on a fair window.

A window's disparity is biased upwards in finite samples (``W_1`` between two samples of the same
law is positive), so a band above the threshold is not enough evidence on small windows: on a
fair stream most 20-row windows would alert. The monitor therefore also asks that the observed
value be extreme under a null. For the group-disparity metrics the null is *exchangeable groups*:
group labels permuted within the window, group sizes kept. For ``"reference_w1"`` the null is
*no drift*: within each group, the window's rows and the reference rows exchanged (pooled and
split at random, sizes kept). Both are computed in one vectorised batch.
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


def _w1_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``W_1`` between row ``i`` of ``a`` and row ``i`` of ``b`` (each row sorted), exactly.

    ``W_1 = int_0^1 |Q_a(u) - Q_b(u)| du`` with both quantile functions constant between the
    breakpoints ``k / n_a`` and ``k / n_b``; the breakpoints are integers in units of
    ``1 / (n_a n_b)`` so that the grid carries no rounding.
    """
    n_a, n_b = a.shape[1], b.shape[1]
    k = np.union1d(np.arange(1, n_a + 1) * n_b, np.arange(1, n_b + 1) * n_a)
    widths = np.diff(k, prepend=0) / (n_a * n_b)
    index_a = (k + n_b - 1) // n_b - 1
    index_b = (k + n_a - 1) // n_a - 1
    return np.abs(a[:, index_a] - b[:, index_b]) @ widths


def reference_null(
    scores: np.ndarray,
    codes: np.ndarray,
    reference: list[np.ndarray],
    n_permutations: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``sum_a W_1(window_a, reference_a)`` with window and reference rows exchanged per group.

    Under *no drift* a group's window rows and reference rows come from one law, so pooling them
    and splitting at random (sizes kept) gives the null of ``"reference_w1"``; the reference's own
    sampling noise is part of it, which redrawing from a fixed reference would miss.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        The window's scores.
    codes : ndarray of shape (n_samples,)
        The window's groups.
    reference : list of ndarray
        Reference scores of each group (index = group code).
    n_permutations : int
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_permutations,)
    """
    total = np.zeros(n_permutations)
    for g in np.unique(codes):
        window = scores[codes == g]
        pool = np.concatenate([window, reference[g]])
        order = rng.permuted(np.tile(np.arange(pool.shape[0]), (n_permutations, 1)), axis=1)
        split = pool[order]
        size = window.shape[0]
        total += _w1_rows(np.sort(split[:, :size], axis=1), np.sort(split[:, size:], axis=1))
    return total


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
