"""W-infinity, and one grid point, solved by rank (``fairot.regression._pointwise``).

The oracles: SciPy's SLSQP on the same problem (``tests/regression/_oracle.py``) and the
Dykstra projection.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from fairot.regression import SquaredCost, adjust_quantiles
from fairot.regression._projections import pairwise_grid_distances

from ._oracle import latent_curves as _latent
from ._oracle import solve_generic
from ._oracle import squared_objective as _squared_objective

BOUNDS = (-20.0, 20.0)


@pytest.mark.parametrize("seed", range(3))
def test_pointwise_sup_matches_projection_and_oracle_k3(seed):
    latent = _latent(seed, k=3)
    w = np.array([0.2, 0.29, 0.51])
    eps = 0.3 * pairwise_grid_distances(latent, np.inf).max()
    pointwise = adjust_quantiles(latent, w, p=np.inf, epsilon=eps, bounds=BOUNDS)
    dykstra = adjust_quantiles(latent, w, p=np.inf, epsilon=eps, bounds=BOUNDS, method="projection")
    assert pointwise.method == "pointwise"
    np.testing.assert_allclose(pointwise.curves, dykstra.curves, atol=1e-8)
    cost = SquaredCost()
    _, oracle_value = solve_generic(latent, w, np.inf, eps, BOUNDS, cost.value, cost.gradient)
    assert _squared_objective(pointwise.curves, latent, w) <= oracle_value + 1e-9
    assert pointwise.violation <= 1e-12


def test_logistic_tiny_weight_single_rank_is_exact():
    # issue 14: K = 3, M = 1, logistic cost, weights (1e-6, 1, 1) ran 615 s with 19,868 warnings
    # (one per inner projection), then stopped at max_iter on the flat tails; issue 37: one
    # grid point is solved by rank, exactly, with no warning.
    latent = np.array([[-28.60798260353541], [37.35568392452904], [4.331892408527941]])
    eps = 0.3 * pairwise_grid_distances(latent, 2).max()
    weights = np.array([1e-6, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = adjust_quantiles(latent, weights, p=2, epsilon=eps, cost="logistic", max_iter=2000)
    assert not out.stopped_early and out.method == "pointwise"
    assert pairwise_grid_distances(out.curves, 2).max() <= eps + 1e-12
    oracle, _ = solve_generic(
        latent, weights, 2, eps, (None, None), _logistic_value, _logistic_gradient
    )
    share = weights / weights.sum()
    assert share @ _logistic_value(latent, out.curves)[:, 0] <= (
        share @ _logistic_value(latent, oracle)[:, 0] + 1e-10
    )


def _logistic_value(latent, q):
    # From the formula, not from fairot: -s(z) log s(q) - (1 - s(z)) log(1 - s(q)).
    p_true = 1.0 / (1.0 + np.exp(-latent))
    return p_true * np.logaddexp(0.0, -q) + (1.0 - p_true) * np.logaddexp(0.0, q)


def _logistic_gradient(latent, q):
    return 1.0 / (1.0 + np.exp(-q)) - 1.0 / (1.0 + np.exp(-latent))


def _absolute_value(latent, q):
    # E|z + xi - q| for a standard normal xi: the folded normal mean (scipy's normal cdf/pdf).
    from scipy.stats import norm

    d = latent - q
    return 2.0 * norm.pdf(d) + d * (2.0 * norm.cdf(d) - 1.0)


def _absolute_gradient(latent, q):
    from scipy.stats import norm

    return 1.0 - 2.0 * norm.cdf(latent - q)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize(
    "cost, value, gradient",
    [
        ("logistic", _logistic_value, _logistic_gradient),
        ("absolute", _absolute_value, _absolute_gradient),
    ],
)
@pytest.mark.parametrize("latent", [[[1.0], [0.0], [0.0]], [[0.0], [1.0], [3.0]]])
def test_one_point_with_a_tiny_share_is_exact_and_quick(cost, value, gradient, p, latent):
    # Issue 37: three groups, one grid point, shares (1e-6, 1, 1) ran projected gradient for
    # 68 s into its work bound (the two constraints on the tiny group are nearly parallel in
    # the share-weighted metric). On one point every W_p is |Q_i - Q_j|: the by-rank solve.
    latent = np.array(latent)
    weights = np.array([1e-6, 1.0, 1.0])
    eps = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = adjust_quantiles(latent, weights, p=p, epsilon=eps, cost=cost, max_work=1e7)
    assert not result.stopped_early and result.method == "pointwise"
    assert pairwise_grid_distances(result.curves, p).max() <= eps * (1 + 1e-12)
    oracle, _ = solve_generic(latent, weights, p, eps, (None, None), value, gradient)
    share = weights / weights.sum()
    ours = float(share @ value(latent, result.curves).mean(axis=1))
    best = float(share @ value(latent, oracle).mean(axis=1))
    assert ours <= best + 1e-10
    np.testing.assert_allclose(result.curves[1:], oracle[1:], atol=1e-5)
