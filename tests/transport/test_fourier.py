import numpy as np
import pytest

from fairot.classification import draw_fourier_features, fourier_features, tabulate_features
from fairot.transport import fourier_features_derivative, interpolate_features


@pytest.mark.parametrize("kernel_variance", [0.01, 0.1, 1.0])
def test_tabulated_potential_matches_exact_features(kernel_variance):
    rng = np.random.RandomState(0)
    features = draw_fourier_features(100, kernel_variance, rng)
    table = tabulate_features(features)
    coefficients = rng.normal(size=100) / 10
    s = np.random.default_rng(1).uniform(size=2000)
    psi, dpsi = interpolate_features(s, table)
    exact = fourier_features(s, features) @ coefficients
    exact_grad = fourier_features_derivative(s, features) @ coefficients
    scale = np.abs(exact).max()
    assert np.abs(psi @ coefficients - exact).max() <= 1e-4 * scale
    # The derivative's interpolation error is larger by the frequency (|omega| <= ~50).
    assert np.abs(dpsi @ coefficients - exact_grad).max() <= 1e-3 * np.abs(exact_grad).max()


def test_derivative_matches_finite_differences():
    features = draw_fourier_features(30, 0.1, np.random.RandomState(2))
    s = np.linspace(0.05, 0.95, 17)
    h = 1e-6
    fd = (fourier_features(s + h, features) - fourier_features(s - h, features)) / (2 * h)
    np.testing.assert_allclose(fourier_features_derivative(s, features), fd, atol=1e-6)


@pytest.mark.parametrize("kernel_variance", [0.1, 1.0])
def test_features_approximate_gaussian_kernel_of_variance_half_sigma2(kernel_variance):
    # E[psi(s) . psi(t)] = exp(-(s - t)^2 / sigma^2): a Gaussian of variance sigma^2 / 2.
    features = draw_fourier_features(200_000, kernel_variance, np.random.RandomState(3))
    s, t = np.array([0.2, 0.5]), np.array([0.3, 0.9])
    gram = (fourier_features(s, features) * fourier_features(t, features)).sum(axis=1)
    np.testing.assert_allclose(gram, np.exp(-((s - t) ** 2) / kernel_variance), atol=0.01)
