"""Stage 4 of the estimator: read the adjusted quantile curves at the ranks of new scores."""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _read_curves(ranks, codes, curves, out):  # pragma: no cover - compiled
    n_grid = curves.shape[1]
    for i in range(ranks.shape[0]):
        curve = curves[codes[i]]
        if n_grid == 1:
            out[i] = curve[0]
            continue
        position = ranks[i] * n_grid - 0.5
        cell = min(max(math.floor(position), 0.0), n_grid - 2.0)
        weight = min(max(position - cell, 0.0), 1.0)
        k = int(cell)
        out[i] = curve[k] + weight * (curve[k + 1] - curve[k])


def read_curves(ranks: np.ndarray, codes: np.ndarray, curves: np.ndarray) -> np.ndarray:
    r"""Each group's curve at each rank: linear between grid nodes, constant beyond the ends.

    The nodes are the midpoints :math:`u_k = (k - 1/2)/M`, so the cell of a rank is
    :math:`\lfloor uM - 1/2 \rfloor` by arithmetic (no search); one compiled pass, no temporary
    arrays.

    Parameters
    ----------
    ranks : numpy.ndarray of shape (n_samples,)
        Ranks in [0, 1].
    codes : numpy.ndarray of int of shape (n_samples,)
        Group of each sample (row of ``curves``).
    curves : numpy.ndarray of shape (n_groups, n_grid)
        Quantile curves on the midpoint grid.

    Returns
    -------
    numpy.ndarray of shape (n_samples,)
    """
    out = np.empty(ranks.shape[0])
    _read_curves(
        np.ascontiguousarray(ranks, dtype=np.float64),
        np.ascontiguousarray(codes, dtype=np.intp),
        np.ascontiguousarray(curves, dtype=np.float64),
        out,
    )
    return out
