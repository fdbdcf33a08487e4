"""COT and DOT with a tolerance tau: each group's own target on the geodesic to the barycenter."""

import re

import numpy as np
import ot
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from fairot.classification import COTClassifier, DOTClassifier
from fairot.classification._kernels import STATUS_OK, cot_kernel, dot_kernel
from fairot.classification._reference import CotParams, cot_updates_numpy, dot_updates_numpy
from fairot.classification._rows import padded_rows
from fairot.transport import TAU_MEANING, draw_fourier_features, tabulate_features
from tests.helpers import make_biased


def _w1(a, b):
    return float(ot.wasserstein_1d(np.asarray(a), np.asarray(b), p=1))


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(1)
    n, d, n_groups, batch, n_updates = 240, 6, 3, 16, 80
    X = rng.normal(size=(n, d))
    codes = rng.integers(0, n_groups, n)
    rows = [np.flatnonzero(codes == a) for a in range(n_groups)]
    counts = np.array([r.shape[0] for r in rows])
    # one sorted target per group, as geodesic_targets gives (different per group)
    targets = np.sort(rng.beta([[2], [3], [5]], 3, size=(n_groups, 150)), axis=1)
    return {
        "X": X,
        "rows": rows,
        "members": np.concatenate(rows),
        "offsets": np.concatenate([[0], np.cumsum(counts)]),
        "targets": targets,
        "bp": rng.integers(0, counts[None, :, None], size=(n_updates, n_groups, batch)),
        "tp": rng.integers(0, 150, size=(n_updates, batch)),
        "theta": rng.normal(size=d + 1) * 0.3,
        "n_groups": n_groups,
    }


@pytest.mark.parametrize("all_pairs", [False, True])
def test_cot_kernel_with_group_targets_matches_numpy_transcription(problem, all_pairs):
    p = problem
    table = tabulate_features(draw_fourier_features(30, 0.1, np.random.RandomState(0)))
    params = CotParams(0, 0.1, 0.05, 1e-3, False, all_pairs)
    th_ref, th_fast = p["theta"].copy(), p["theta"].copy()
    shape = (p["n_groups"], 30)
    du_ref, tu_ref, du_fast, tu_fast = (np.zeros(shape) for _ in range(4))
    obj_ref = cot_updates_numpy(
        th_ref, du_ref, tu_ref, p["X"], p["rows"], p["targets"], p["bp"], p["tp"], table, params
    )
    obj_fast = np.empty(len(p["bp"]))
    done, status = cot_kernel(
        th_fast, du_fast, tu_fast, *padded_rows(p["X"]), p["members"], p["offsets"],
        p["targets"], p["bp"], p["tp"], table.values, table.derivatives,
        0, 0.1, 0.05, 1e-3, False, all_pairs, obj_fast, np.zeros(1),
    )  # fmt: skip
    assert (done, status) == (len(p["bp"]), STATUS_OK)
    np.testing.assert_allclose(th_fast, th_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(du_fast, du_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(obj_fast, obj_ref, rtol=0, atol=1e-10)
    # the group targets matter: one shared target gives other iterates
    th_shared = p["theta"].copy()
    cot_kernel(
        th_shared, np.zeros(shape), np.zeros(shape), *padded_rows(p["X"]), p["members"],
        p["offsets"], p["targets"][0], p["bp"], p["tp"], table.values, table.derivatives,
        0, 0.1, 0.05, 1e-3, False, all_pairs, np.empty(len(p["bp"])), np.zeros(1),
    )  # fmt: skip
    assert np.abs(th_shared - th_fast).max() > 1e-6


def test_dot_kernel_with_group_targets_matches_numpy_transcription(problem):
    p = problem
    th_ref, th_fast = p["theta"].copy(), p["theta"].copy()
    obj_ref = dot_updates_numpy(th_ref, p["X"], p["rows"], p["targets"], p["bp"], p["tp"], 0.01)
    obj_fast = np.empty(len(p["bp"]))
    done, status = dot_kernel(
        th_fast, *padded_rows(p["X"]), p["members"], p["offsets"], p["targets"], p["bp"],
        p["tp"], 0.01, obj_fast, np.zeros(1),
    )  # fmt: skip
    assert (done, status) == (len(p["bp"]), STATUS_OK)
    np.testing.assert_allclose(th_fast, th_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(obj_fast, obj_ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier], ids=["COT", "DOT"])
@pytest.mark.parametrize("tau", [0.25, 1.0])
def test_group_targets_keep_tau_of_the_start_distance(cls, tau):
    X, y, a = make_biased(n=600, seed=5)
    model = cls(n_updates=5, tau=tau, random_state=0).fit(X, y, sensitive_features=a)
    start = 1.0 / (1.0 + np.exp(-(X @ model.initial_coef_.ravel() + model.initial_intercept_)))
    assert model.group_targets_.shape == (2, model.target_samples_.shape[0])
    for g, target in enumerate(model.group_targets_):
        raw = _w1(start[a == g], model.target_samples_)
        # the group's target is on the geodesic up to the midpoint grid's resolution
        assert _w1(target, model.target_samples_) == pytest.approx(tau * raw, abs=2e-3)
        assert np.all(np.diff(target) >= 0)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier], ids=["COT", "DOT"])
def test_tau_zero_is_the_shared_target(cls):
    X, y, a = make_biased(n=400, seed=2)
    default = cls(n_updates=50, random_state=0).fit(X, y, sensitive_features=a)
    zero = cls(n_updates=50, tau=0.0, random_state=0).fit(X, y, sensitive_features=a)
    assert default.group_targets_ is None and default.tau_ == 0.0
    np.testing.assert_array_equal(default.coef_, zero.coef_)


@pytest.mark.parametrize("cls", [COTClassifier, DOTClassifier], ids=["COT", "DOT"])
def test_a_larger_tau_keeps_more_disparity(cls):
    X, y, a = make_biased(n=1500, seed=9)
    gaps = []
    for tau in (0.0, 1.0):
        m = cls(n_updates=4000, tau=tau, random_state=0).fit(X, y, sensitive_features=a)
        s = m.predict_proba(X)[:, 1]
        gaps.append(_w1(s[a == 0], s[a == 1]))
    assert gaps[0] < gaps[1]


def test_bad_tau_says_what_tau_means():
    X, y, a = make_biased(n=100, seed=0)
    with pytest.raises(InvalidParameterError, match=re.escape(TAU_MEANING)):
        DOTClassifier(n_updates=1, tau=2.0).fit(X, y, sensitive_features=a)
