"""Stage 4 of the regressor (``fairot.regression._readout``): a new score's rank among its
group's calibration scores read through the prediction tables, tails included, the same for a
row alone or in a batch.

The oracles: EquiPy's exact barycenter map written out (``tests/regression/_oracle.py``) and the
adjusted curves at the grid nodes.
"""

import numpy as np
import pytest
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression

from fairot.regression import WassersteinFairRegressor

from ._oracle import equipy_exact_map as _equipy_exact_map
from ._oracle import frozen_column as _frozen_column


@pytest.mark.parametrize("p", [1, np.inf])
def test_ranks_on_grid_nodes_read_the_adjusted_curves(p):
    # n_s = 2 M j calibration scores per group: rank (2i - 1) / (2M) = u_i is reached by the
    # calibration score of that rank
    rng = np.random.default_rng(5)
    m, per_group = 10, 60
    s = np.repeat([0, 1, 2], per_group)
    scores = rng.normal(size=s.size) + s
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.3, p=p, n_grid=m)
    model.fit(scores[:, None], np.zeros(s.size), sensitive_features=s)
    for g in range(3):
        reference = np.sort(scores[s == g])
        at_nodes = reference[(np.arange(m) * 2 + 1) * per_group // (2 * m) - 1]
        pred = model.predict(at_nodes[:, None], sensitive_features=np.full(m, g))
        np.testing.assert_allclose(pred, model.adjusted_curves_[g], rtol=0, atol=1e-12)


def _million_row_design(n):
    """The design of benchmarks/bench_regression.py (seed 0): N(0, 1) and N(2, 1.25), P(S=1)=.4."""
    rng = np.random.default_rng(0)
    cal_s = (rng.random(n) < 0.4).astype(np.int64)
    test_s = (rng.random(n) < 0.4).astype(np.int64)
    cal = rng.normal(size=n) + 2.0 * cal_s + 0.5 * rng.normal(size=n) * cal_s
    test = rng.normal(size=n) + 2.0 * test_s + 0.5 * rng.normal(size=n) * test_s
    return cal, cal_s, test, test_s


def _tails_against_the_exact_map(n):
    # At tau = 0 every row, tails included, must be the exact empirical barycenter map; a grid
    # read held constant beyond its end nodes collapsed the outer 1/(2M) of ranks instead.
    cal, cal_s, test, test_s = _million_row_design(n)
    model = WassersteinFairRegressor(estimator=_frozen_column(), tau=0.0, n_grid=2000)
    model.fit(cal[:, None], cal, sensitive_features=cal_s)
    pred = model.predict(test[:, None], sensitive_features=test_s)
    expected = _equipy_exact_map(cal, cal_s, test, test_s)
    np.testing.assert_allclose(pred, expected, rtol=0, atol=1e-9)


def test_tails_are_the_exact_map_on_the_synthetic_design():
    _tails_against_the_exact_map(100_000)


@pytest.mark.slow
def test_tails_are_the_exact_map_on_the_million_row_design():
    _tails_against_the_exact_map(1_000_000)


def test_a_row_gets_the_same_prediction_alone_or_in_a_batch():
    rng = np.random.default_rng(7)
    n, d = 2000, 20
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10, d)
    s = rng.integers(0, 3, n)
    y = X @ rng.normal(size=d) + 3.0 * s + rng.normal(size=n)
    frozen = FrozenEstimator(LinearRegression().fit(X, y))
    # before the fix, 281 of 2,000 such rows changed (up to 0.35); 200 rows per p here
    for p in (1, 2, np.inf):
        model = WassersteinFairRegressor(estimator=frozen, tau=0.3, p=p, n_grid=200)
        model.fit(X, y, sensitive_features=s)
        batch = model.predict(X, sensitive_features=s)
        rows = rng.choice(n, 200, replace=False)
        alone = [model.predict(X[i : i + 1], sensitive_features=s[i : i + 1])[0] for i in rows]
        np.testing.assert_array_equal(batch[rows], alone)
