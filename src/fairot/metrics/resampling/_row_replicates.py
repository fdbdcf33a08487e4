r"""Replicates held as rows: stratified resampling indices and W_p of many sorted samples at once.

The building blocks for a caller that keeps its own replicates as row indices (the drift monitor
of :mod:`fairot.reporting` bands each window with them): :func:`stratified_indices` redraws
every row among its stratum's rows, and :func:`batched_wasserstein` reads W_p of every
replicate on one set of joint quantile cells, which depend only on the sample sizes
(:func:`fairot.transport.joint_quantile_cells`), so every replicate of the same sizes shares
them. :func:`fairot.metrics.bootstrap_intervals` keeps its replicates as counts instead
(:mod:`fairot.metrics.resampling._count_draws`).
"""

from __future__ import annotations

import math

import numpy as np

from fairot.transport import MASS_TOLERANCE, joint_quantile_cells


def stratified_indices(
    strata: np.ndarray, n_replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """Row indices of shape (n_replicates, n): each position redrawn among its stratum's rows.

    Parameters
    ----------
    strata : ndarray of shape (n,)
        Integer stratum (group cell) of every row.
    n_replicates : int
        Number of bootstrap replicates.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    ndarray of shape (n_replicates, n)
        Row ``b`` indexes replicate ``b``; position ``i`` holds a row of the same stratum as
        ``i``, so every replicate keeps the strata's sizes.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics.resampling import stratified_indices
    >>> strata = np.array([0, 0, 1, 1, 1])
    >>> rows = stratified_indices(strata, 3, np.random.default_rng(0))
    >>> rows.shape, bool((strata[rows] == strata).all())
    ((3, 5), True)
    """
    n = strata.shape[0]
    out = np.empty((n_replicates, n), dtype=np.intp)
    order = np.argsort(strata, kind="stable")
    bounds = np.flatnonzero(np.diff(strata[order])) + 1
    for rows in np.split(order, bounds):
        out[:, rows] = rows[rng.integers(0, rows.shape[0], size=(n_replicates, rows.shape[0]))]
    return out


def batched_wasserstein(a: np.ndarray, b: np.ndarray, orders: tuple[float, ...]) -> list:
    """Exact W_p between row-wise sorted samples ``a`` (B, n) and ``b`` (B, m), for each p.

    The joint quantile cells depend only on the sizes (equal weights), so one set of cells
    serves every replicate; see :func:`fairot.transport.joint_quantile_cells`.

    Parameters
    ----------
    a : ndarray of shape (B, n)
        Row-wise sorted samples, one replicate per row.
    b : ndarray of shape (B, m)
        Row-wise sorted samples, as many replicates as ``a``.
    orders : tuple of float
        The orders p (``math.inf`` for W-infinity).

    Returns
    -------
    list of ndarray of shape (B,)
        One array of distances per order, in the order of ``orders``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics.resampling import batched_wasserstein
    >>> a = np.array([[0.0, 1.0], [0.0, 2.0]])
    >>> b = np.array([[1.0, 2.0], [1.0, 3.0]])
    >>> [w.tolist() for w in batched_wasserstein(a, b, (1.0, np.inf))]
    [[1.0, 1.0], [1.0, 1.0]]
    """
    index, mass = joint_quantile_cells([a[0], b[0]], [None, None])
    gaps = np.abs(a[:, index[0]] - b[:, index[1]])
    out = []
    for p in orders:
        if math.isinf(p):
            out.append(gaps[:, mass > MASS_TOLERANCE].max(axis=1))
        elif p == 1:
            out.append(gaps @ mass)
        else:
            out.append(((gaps**p) @ mass) ** (1.0 / p))
    return out
