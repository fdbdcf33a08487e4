"""The largest pairwise gap between groups: its typed result and the reduction that finds it.

Kept apart from :mod:`fairot.metrics.reductions` (which re-exports both names) because it needs
nothing else of the metrics: :mod:`fairot.metrics._control` recombines pairwise gaps without
importing the reductions, whose checks import the calling layer that calls it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd


class PairwiseGap(NamedTuple):
    """Largest pairwise Wasserstein distance between groups.

    Attributes
    ----------
    distance : float
        The largest :math:`W_p` between two groups' distributions.
    pair : tuple of str
        Names of the two groups that attain it.
    matrix : pandas.DataFrame
        Every pairwise distance, indexed by group name on both axes.

    Examples
    --------
    :func:`max_pairwise_wasserstein` returns one; with ``p=1`` the distance from {1, 2} to {3}
    is the mean move, 1.5:

    >>> from fairot.metrics import max_pairwise_wasserstein
    >>> pred, groups = [1.0, 2.0, 4.0, 5.0, 3.0], ["a", "a", "b", "b", "c"]
    >>> gap = max_pairwise_wasserstein(None, pred, sensitive_features=groups, p=1)
    >>> gap.distance, gap.pair, float(gap.matrix.loc["a", "c"])
    (3.0, ('a', 'b'), 1.5)
    """

    distance: float
    pair: tuple[str, str]
    matrix: pd.DataFrame


def largest_pair(matrix: Any, names: list[str]) -> PairwiseGap:
    """The largest entry of a symmetric matrix of group distances, its pair and the matrix.

    Parameters
    ----------
    matrix : array-like of shape (n_groups, n_groups)
        Pairwise distances (zero diagonal).
    names : list of str
        Group names, for the pair and the frame's axes.

    Returns
    -------
    PairwiseGap
    """
    m = np.asarray(matrix, dtype=float)
    a, b = np.unravel_index(np.argmax(m), m.shape)
    a, b = min(a, b), max(a, b)
    frame = pd.DataFrame(m, index=names, columns=names)
    return PairwiseGap(float(m[a, b]), (names[a], names[b]), frame)
