"""The row layout of the compiled kernels: each row as a padded list of its non-zeros.

Internal surface (used by :mod:`fairot.classification._base` and the kernels' tests):
:func:`padded_rows`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


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
