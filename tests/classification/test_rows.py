"""The row layout of the compiled kernels (``fairot.classification._rows``).

The oracle is the dense product ``X @ coef + intercept`` in NumPy.
"""

import numpy as np
import scipy.sparse as sp

from tests.helpers import make_biased


def test_sparse_and_dense_share_the_layout():
    from fairot.classification._kernels import logits
    from fairot.classification._rows import padded_rows

    X, _, _ = make_biased(n=50)
    X[::3, 1] = 0.0
    dense = padded_rows(X)
    sparse = padded_rows(sp.csc_matrix(X))
    np.testing.assert_array_equal(dense[0], sparse[0])
    np.testing.assert_array_equal(dense[1], sparse[1])
    theta = np.array([0.3, -1.2, 0.7, 0.1])
    np.testing.assert_array_equal(logits(theta, X), logits(theta, sp.csr_matrix(X)))
    np.testing.assert_allclose(logits(theta, X), X @ theta[:-1] + theta[-1], rtol=1e-14)
