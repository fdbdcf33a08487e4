"""A generic convex solver of problem (6) on small grids (scipy SLSQP), the tests' oracle.

Also the problems the regression tests share: quantile curves of a few groups and the squared
objective they are scored by (``adjust_quantiles`` and its solvers), and a frozen score model
whose scores are known exactly, with the designs it scores, and EquiPy's exact barycenter map
(the regressor).
"""

import itertools

import numpy as np
from scipy.interpolate import interp1d
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.frozen import FrozenEstimator

#: Eight grid levels, the midpoints of [0, 1] cut in eight.
GRID_LEVELS = (np.arange(1, 9) - 0.5) / 8


def solve_generic(latent, weights, p, eps, bounds, value, gradient, start=None):
    """min sum_s r_s mean_k c(latent, q) s.t. pairwise grid-norm <= eps, monotone, box."""
    k, m = latent.shape
    pairs = list(itertools.combinations(range(k), 2))
    n_q = k * m
    n_t = len(pairs) * m if p == 1 else 0
    w = np.asarray(weights, float) / np.sum(weights)

    def unpack(z):
        return z[:n_q].reshape(k, m)

    def obj(z):
        return float(w @ value(latent, unpack(z)).mean(axis=1))

    def jac(z):
        g = np.zeros_like(z)
        g[:n_q] = (w[:, None] * gradient(latent, unpack(z)) / m).ravel()
        return g

    cons = [{"type": "ineq", "fun": lambda z: np.diff(unpack(z), axis=1).ravel()}]
    for t_idx, (i, j) in enumerate(pairs):
        if p == 2:
            cons.append(
                {
                    "type": "ineq",
                    "fun": lambda z, i=i, j=j: eps**2 - np.mean((unpack(z)[i] - unpack(z)[j]) ** 2),
                }
            )
        elif p == np.inf:
            cons.append(
                {"type": "ineq", "fun": lambda z, i=i, j=j: eps - (unpack(z)[i] - unpack(z)[j])}
            )
            cons.append(
                {"type": "ineq", "fun": lambda z, i=i, j=j: eps + (unpack(z)[i] - unpack(z)[j])}
            )
        else:
            sl = slice(n_q + t_idx * m, n_q + (t_idx + 1) * m)
            cons.append(
                {
                    "type": "ineq",
                    "fun": lambda z, i=i, j=j, sl=sl: z[sl] - (unpack(z)[i] - unpack(z)[j]),
                }
            )
            cons.append(
                {
                    "type": "ineq",
                    "fun": lambda z, i=i, j=j, sl=sl: z[sl] + (unpack(z)[i] - unpack(z)[j]),
                }
            )
            cons.append({"type": "ineq", "fun": lambda z, sl=sl: eps - z[sl].mean()})
    x0 = np.concatenate([(latent if start is None else start).ravel(), np.zeros(n_t)])
    if n_t:
        x0[n_q:] = np.abs(np.concatenate([latent[i] - latent[j] for i, j in pairs]))
    bnds = [bounds] * n_q + [(0, None)] * n_t
    res = minimize(
        obj,
        x0,
        jac=jac,
        bounds=bnds,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 3000},
    )
    return unpack(res.x), res.fun


def latent_curves(seed, k=3, m=6, spread=2.0):
    """K sorted normal curves on M grid points, the groups ``spread`` apart."""
    rng = np.random.default_rng(seed)
    shift = spread * np.arange(k)[:, None]
    return np.sort(rng.normal(size=(k, m)), axis=1) + shift + rng.normal(size=(k, 1))


def squared_objective(curves, latent, w):
    """The share-weighted mean squared distance of ``curves`` to ``latent``."""
    w = np.asarray(w) / np.sum(w)
    return float(w @ ((curves - latent) ** 2).mean(axis=1))


def group_curves(k, m, seed):
    """K groups' quantile curves of normal samples of random location, scale and size."""
    rng = np.random.default_rng(seed)
    u = (np.arange(m) + 0.5) / m
    latent = np.stack(
        [
            np.quantile(rng.normal(rng.normal(), rng.uniform(0.5, 2.0), rng.integers(20, 200)), u)
            for _ in range(k)
        ]
    )
    return latent, rng.uniform(0.2, 1.0, k)


class ColumnScore(RegressorMixin, BaseEstimator):
    """Score = the first column; used frozen so that scores are known exactly."""

    def fit(self, X, y):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0].astype(float)


def frozen_column():
    """A frozen score model whose score is the first column of X."""
    return FrozenEstimator(ColumnScore().fit(np.zeros((1, 1)), [0.0]))


def two_designs(seed, k, n):
    """Calibration scores of ``k`` groups and test scores reaching beyond their extremes."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, k, n)
    scores = rng.normal(size=n) * (1 + 0.5 * s) + 2.0 * s
    # test scores reach beyond every calibration extreme: the tails are part of the test
    t_s = rng.integers(0, k, 3 * n)
    test = rng.normal(size=3 * n) * (1.3 + 0.5 * t_s) + 2.0 * t_s
    return scores, s, test, t_s


def shifted_groups(n=4000, k=2, seed=0):
    """Group-shifted features and a response that depends on the group beyond X."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, k, n)
    X = rng.normal(size=(n, 3)) + 0.8 * s[:, None]
    y = X @ np.array([1.0, 0.5, -0.3]) + 0.7 * s + rng.normal(scale=0.7, size=n)
    return X, y, s


def equipy_exact_map(cal, cal_s, test, test_s):
    """EquiPy's FairWasserstein at epsilon = 0 without its jitter (Chzhen et al., 2020).

    Written from its documented algorithm: the right-continuous ECDF of the group
    (statsmodels' ECDF: #{c <= x} / n) and, for every group, the empirical quantile function
    interpolated linearly on linspace(0, 1, n) (EquiPy's EQF, scipy's interp1d), averaged with
    the calibration shares.
    """
    out = np.zeros(test.shape[0])
    labels = np.unique(cal_s)
    for g in labels:
        reference = np.sort(cal[cal_s == g])
        rank = np.searchsorted(reference, test[test_s == g], side="right") / reference.size
        for h in labels:
            other = np.sort(cal[cal_s == h])
            eqf = interp1d(np.linspace(0, 1, other.size), other)
            out[test_s == g] += np.mean(cal_s == h) * eqf(rank)
    return out
