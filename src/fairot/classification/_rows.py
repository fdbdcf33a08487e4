"""Rows of a dense or sparse ``X`` as padded lists of their non-zeros, and batch-free logits.

The layout the fused kernels of :mod:`fairot.classification._kernels` read, kept in a module of
its own (the kernels re-export every name).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit


def padded_rows(X) -> tuple[np.ndarray, np.ndarray]:
    """Store the rows of a dense or sparse matrix as padded lists of their non-zeros.

    Returns ``(indices, values)`` of shape (n_samples, m) with ``m`` the largest number of
    non-zeros in a row; padding entries have value 0 (and index 0), so they add nothing. A
    sparse matrix (CSR, CSC, ...) gives the same layout as its dense form (non-zeros in column
    order) without ever being densified.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.sum_duplicates()  # also sorts each row's columns
        X.eliminate_zeros()
        n = X.shape[0]
        nnz = np.diff(X.indptr)
        width = max(int(nnz.max(initial=0)), 1)
        indices = np.zeros((n, width), dtype=np.int64)
        vals = np.zeros((n, width), dtype=np.float64)
        row_of = np.repeat(np.arange(n), nnz)
        position = np.arange(X.nnz) - X.indptr[row_of]
        indices[row_of, position] = X.indices
        vals[row_of, position] = X.data
        return indices, vals
    nonzero = X != 0
    width = max(int(nonzero.sum(axis=1).max(initial=0)), 1)
    # Stable sort of "is zero" puts each row's non-zero columns first, in column order.
    order = np.argsort(~nonzero, axis=1, kind="stable")[:, :width]
    indices = np.ascontiguousarray(order, dtype=np.int64)
    vals = np.take_along_axis(X, order, axis=1)
    vals = np.where(np.take_along_axis(nonzero, order, axis=1), vals, 0.0)
    indices[vals == 0.0] = 0
    return indices, np.ascontiguousarray(vals, dtype=np.float64)


def logits(theta: np.ndarray, X) -> np.ndarray:
    r"""Logits :math:`\theta^\top (x, 1)` of the rows of a dense or sparse ``X``, batch-free.

    Each row is summed over its columns in order, starting from the intercept, as the kernels
    score it: the result for a row does not depend on the other rows of ``X``.
    """
    if sp.issparse(X):
        return logit_rows(theta, *padded_rows(X))
    return _dense_logits(theta, np.ascontiguousarray(X, dtype=np.float64))


@njit(cache=True)
def _dense_logits(theta, X):
    # Zero entries add exact zeros, so this equals logit_rows on the padded non-zeros.
    d = theta.shape[0] - 1
    out = np.empty(X.shape[0])
    for row in range(X.shape[0]):
        z = theta[d]
        for j in range(d):
            z += theta[j] * X[row, j]
        out[row] = z
    return out


@njit(cache=True)
def logit_rows(theta, indices, values):
    """Logits of every stored row, each summed in its own fixed order.

    A row's logit then depends on that row alone, never on which rows share the call (BLAS
    blocks a matrix product by batch size, which moves the last bits).
    """
    d = theta.shape[0] - 1
    out = np.empty(indices.shape[0])
    for row in range(indices.shape[0]):
        z = theta[d]
        for t in range(indices.shape[1]):
            z += theta[indices[row, t]] * values[row, t]
        out[row] = z
    return out
