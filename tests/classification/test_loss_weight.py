"""The log-loss term of COT and DOT (``loss_weight``): kernels against NumPy, gradient, fits."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

from fairot.classification import COTClassifier, DOTClassifier
from fairot.classification._kernels import STATUS_OK, cot_kernel, dot_kernel
from fairot.classification._reference import (
    CotParams,
    cot_updates_numpy,
    dot_updates_numpy,
    log_loss_gradient,
)
from fairot.classification._rows import padded_rows
from fairot.transport import draw_fourier_features, tabulate_features


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(1)
    n, d, n_groups, batch, n_updates = 240, 8, 2, 16, 120
    X = rng.normal(size=(n, d))
    X[X < 0.2] = 0.0
    codes = rng.integers(0, n_groups, n)
    rows = [np.flatnonzero(codes == a) for a in range(n_groups)]
    counts = np.array([r.shape[0] for r in rows])
    return {
        "X": X,
        "y": (rng.uniform(size=n) < 0.4).astype(float),
        "rows": rows,
        "members": np.concatenate(rows),
        "offsets": np.concatenate([[0], np.cumsum(counts)]),
        "target": np.sort(rng.uniform(size=150)),
        "bp": rng.integers(0, counts[None, :, None], size=(n_updates, n_groups, batch)),
        "tp": rng.integers(0, 150, size=(n_updates, batch)),
        "lp": rng.integers(0, n, size=(n_updates, batch)),
        "theta": rng.normal(size=d + 1) * 0.3,
    }


def test_log_loss_gradient_matches_finite_differences_of_sklearn_log_loss(problem):
    X, y, theta = problem["X"], problem["y"], problem["theta"]

    def loss(t):
        return log_loss(y, 1.0 / (1.0 + np.exp(-(X @ t[:-1] + t[-1]))), labels=[0, 1])

    np.testing.assert_allclose(
        log_loss_gradient(theta, X, y), approx_fprime(theta, loss, 1e-7), atol=1e-6
    )


def test_cot_kernel_loss_term_matches_numpy_transcription(problem):
    p = problem
    table = tabulate_features(draw_fourier_features(30, 0.1, np.random.RandomState(0)))
    params = CotParams(0, 0.1, 0.05, 1e-3, True, False)
    th_ref, th_fast, th_plain = (p["theta"].copy() for _ in range(3))
    du_ref, du_fast, du_plain = (np.zeros((2, 30)) for _ in range(3))
    args = (p["X"], p["rows"], p["target"], p["bp"], p["tp"], table, params)
    cot_updates_numpy(th_ref, du_ref, du_ref.copy(), *args, p["y"], p["lp"], 0.7)
    cot_updates_numpy(th_plain, du_plain, du_plain.copy(), *args)
    done, status = cot_kernel(
        th_fast,
        du_fast,
        du_fast.copy(),
        *padded_rows(p["X"]),
        p["members"],
        p["offsets"],
        p["target"],
        p["bp"],
        p["tp"],
        table.values,
        table.derivatives,
        0,
        0.1,
        0.05,
        1e-3,
        True,
        False,
        np.empty(len(p["bp"])),
        np.zeros(1),
        p["y"],
        p["lp"],
        0.7,
    )
    assert (done, status) == (len(p["bp"]), STATUS_OK)
    assert np.abs(th_ref - th_plain).max() > 1e-3  # the loss term moved theta
    np.testing.assert_allclose(th_fast, th_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(du_fast, du_ref, rtol=0, atol=1e-10)


def test_dot_kernel_loss_term_matches_numpy_transcription(problem):
    p = problem
    th_ref, th_fast, th_plain = (p["theta"].copy() for _ in range(3))
    args = (p["X"], p["rows"], p["target"], p["bp"], p["tp"], 0.01)
    dot_updates_numpy(th_ref, *args, p["y"], p["lp"], 2.0)
    dot_updates_numpy(th_plain, *args)
    done, status = dot_kernel(
        th_fast,
        *padded_rows(p["X"]),
        p["members"],
        p["offsets"],
        p["target"],
        p["bp"],
        p["tp"],
        0.01,
        np.empty(len(p["bp"])),
        np.zeros(1),
        p["y"],
        p["lp"],
        2.0,
    )
    assert status == STATUS_OK
    assert np.abs(th_ref - th_plain).max() > 1e-3
    np.testing.assert_allclose(th_fast, th_ref, rtol=0, atol=1e-12)


def _data(seed=0, n=600):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    # the group is not an input: x0 is a noisy proxy of it, x1 is predictive and group-free
    X = np.column_stack([rng.normal(1.5 * a, 1.0), rng.normal(size=n)])
    y = (X[:, 1] + 0.8 * a + rng.normal(0, 0.7, n) > 0.5).astype(int)
    return X, y, a


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_loss_weight_zero_draws_no_loss_batch_and_keeps_the_iterates(cls):
    X, y, a = _data()
    plain = cls(n_updates=300, random_state=0).fit(X, y, sensitive_features=a)
    zero = cls(n_updates=300, loss_weight=0.0, random_state=0).fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(plain.coef_, zero.coef_)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_loss_weight_run_is_independent_of_its_cutting(cls):
    X, y, a = _data()
    one = cls(n_updates=400, loss_weight=1.0, random_state=0).fit(X, y, sensitive_features=a)
    cut = cls(n_updates=150, loss_weight=1.0, random_state=0, history_every=7)
    cut.fit(X, y, sensitive_features=a).partial_fit(X, y, sensitive_features=a, n_updates=250)
    np.testing.assert_allclose(cut.coef_, one.coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier])
def test_a_large_loss_weight_stays_near_the_logistic_optimum(cls):
    # kappa -> infinity: the steps are SGD on the log-loss, started at its optimum
    X, y, a = _data()
    lr = LogisticRegression(C=1e6).fit(X, y)
    heavy = cls(estimator=LogisticRegression(C=1e6), n_updates=2000, loss_weight=1e3)
    light = cls(estimator=LogisticRegression(C=1e6), n_updates=2000, loss_weight=0.0)
    heavy.set_params(step_size=heavy.step_size / 1e3, random_state=0)
    light.set_params(random_state=0)
    heavy.fit(X, y, sensitive_features=a)
    light.fit(X, y, sensitive_features=a)
    drift_heavy = np.abs(heavy.coef_ - lr.coef_).max()
    drift_light = np.abs(light.coef_ - lr.coef_).max()
    assert drift_heavy < 0.1 < drift_light


def test_loss_batches_are_drawn_by_sample_weight():
    from fairot.classification._batches import cumulative_weights

    X, y, a = _data()
    w = np.tile([0.0, 1.0, 3.0], 200)
    model = DOTClassifier(n_updates=50, loss_weight=1.0, random_state=0)
    model.fit(X, y, sensitive_features=a, sample_weight=w)
    rows = model._draw_loss_batches(len(w), 400, cumulative_weights(w)).ravel()
    counts = np.bincount(w[rows].astype(int), minlength=4)
    assert counts[0] == 0  # a zero-weight row is never drawn
    # weight 3 against weight 1: three times as often (40,000 draws; 4 sd is about .1)
    assert counts[3] / counts[1] == pytest.approx(3.0, abs=0.15)
