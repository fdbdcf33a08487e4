import numpy as np
import pytest
from scipy import integrate, stats

from fairot.regression import (
    AbsoluteGaussianCost,
    LogisticCost,
    ObservedLossCost,
    PinballGaussianCost,
    SquaredCost,
    adjust_quantiles,
)
from fairot.regression._costs import MSG_ALPHA, MSG_NOISE, resolve_cost

COSTS = [SquaredCost(), AbsoluteGaussianCost(0.8), PinballGaussianCost(0.25, 1.5), LogisticCost()]
IDS = ["squared", "absolute", "pinball", "logistic"]


def _expected_by_quadrature(cost, z, q):
    if isinstance(cost, SquaredCost):
        return (q - z) ** 2
    if isinstance(cost, LogisticCost):
        pr = 1 / (1 + np.exp(-z))
        return -pr * np.log(1 / (1 + np.exp(-q))) - (1 - pr) * np.log(1 - 1 / (1 + np.exp(-q)))
    sigma = cost.noise_scale
    if isinstance(cost, AbsoluteGaussianCost):
        loss = lambda y: abs(y - q)  # noqa: E731
    else:
        loss = lambda y: (y - q) * (cost.alpha - (y - q < 0))  # noqa: E731
    density = lambda y: loss(y) * stats.norm.pdf(y, z, sigma)  # noqa: E731
    lo, hi = z - 12 * sigma, z + 12 * sigma
    val, _ = integrate.quad(density, min(lo, q), max(hi, q), points=[q], limit=200, epsabs=1e-12)
    return val


@pytest.mark.parametrize("cost", COSTS, ids=IDS)
def test_cost_values_match_quadrature_and_gradients_finite_differences(cost):
    rng = np.random.default_rng(0)
    z = rng.normal(size=6)
    q = rng.normal(size=6) * 2
    values = cost.value(z[None, :], q[None, :])[0]
    for zi, qi, vi in zip(z, q, values, strict=True):
        assert vi == pytest.approx(_expected_by_quadrature(cost, zi, qi), abs=1e-7)
    h = 1e-6
    fd = (cost.value(z[None], q[None] + h) - cost.value(z[None], q[None] - h)) / (2 * h)
    np.testing.assert_allclose(cost.gradient(z[None], q[None]), fd, atol=1e-6)
    # the minimiser zeroes the gradient
    m = cost.minimizer(z[None])
    np.testing.assert_allclose(cost.gradient(z[None], m), 0.0, atol=1e-12)


def test_cost_parameter_errors_and_names():
    with pytest.raises(ValueError, match=MSG_ALPHA.split("{")[0]):
        PinballGaussianCost(alpha=1.0)
    with pytest.raises(ValueError, match=MSG_NOISE.split("{")[0]):
        AbsoluteGaussianCost(noise_scale=0.0)
    assert isinstance(resolve_cost("logistic"), LogisticCost)
    with pytest.raises(ValueError, match="cost must be one of"):
        resolve_cost("hinge")


def _fine_cell_average(responses_sorted, n_grid, loss, q):
    """Oracle: average the step function y(u) = Y_(ceil(n u)) over each cell on a fine grid."""
    n = responses_sorted.size
    n_fine = n * n_grid * 8  # every step and cell boundary falls between fine midpoints
    u = (np.arange(n_fine) + 0.5) / n_fine
    y = responses_sorted[np.minimum(np.ceil(u * n).astype(int) - 1, n - 1)]
    cell = np.minimum((u * n_grid).astype(int), n_grid - 1)
    return np.bincount(cell, weights=loss(y, q[cell])) / np.bincount(cell)


@pytest.mark.parametrize("n", [7, 40, 53])
@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_observed_loss_aggregates_concomitants_per_cell(n, loss):
    rng = np.random.default_rng(n)
    scores = rng.normal(size=n)
    responses = scores + rng.normal(size=n)
    codes = np.zeros(n, dtype=int)
    n_grid = 20
    cost = ObservedLossCost.from_samples(scores, responses, codes, 1, n_grid, loss=loss)
    y_sorted = responses[np.argsort(scores, kind="stable")]
    q = np.sort(rng.normal(size=n_grid))
    fn = (lambda y, q: (y - q) ** 2) if loss == "squared" else (lambda y, q: np.abs(y - q))
    expected = _fine_cell_average(y_sorted, n_grid, fn, q)
    np.testing.assert_allclose(cost.value(None, q[None])[0], expected, atol=1e-10)
    h = 1e-6
    if loss == "squared":
        fd = (cost.value(None, q[None] + h) - cost.value(None, q[None] - h)) / (2 * h)
        np.testing.assert_allclose(cost.gradient(None, q[None]), fd, atol=1e-5)
        means = _fine_cell_average(y_sorted, n_grid, lambda y, q: y, q)
        np.testing.assert_allclose(cost.cell_means()[0], means, atol=1e-10)
    else:
        # a weighted median of each cell minimises the cell's absolute loss
        med = cost.minimizer(None)[0]
        for k in range(n_grid):
            grid = np.linspace(med[k] - 3, med[k] + 3, 601)
            vals = [cost.value(None, np.full((1, n_grid), g))[0, k] for g in grid]
            assert cost.value(None, med[None])[0, k] <= min(vals) + 1e-12


def test_observed_squared_is_the_projection_of_cell_means():
    rng = np.random.default_rng(3)
    n = 300
    codes = rng.integers(0, 3, n)
    scores = rng.normal(size=n) + codes
    responses = scores + rng.normal(size=n)
    cost = ObservedLossCost.from_samples(scores, responses, codes, 3, 30)
    latent = np.stack(
        [
            np.quantile(scores[codes == g], (np.arange(30) + 0.5) / 30, method="inverted_cdf")
            for g in range(3)
        ]
    )
    w = np.bincount(codes) / n
    a = adjust_quantiles(latent, w, p=2, epsilon=0.5, cost=cost)
    b = adjust_quantiles(latent, w, p=2, epsilon=0.5, cost=cost, method="projected_gradient")
    assert a.method == "projection"
    np.testing.assert_allclose(a.curves, b.curves, atol=1e-6)
    assert a.violation <= 1e-10
