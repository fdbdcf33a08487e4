"""The fast kernels against the NumPy transcription (same batches -> same iterates) and POT."""

import itertools

import numpy as np
import ot
import pytest

from fairot.classification._kernels import (
    STATUS_DUAL_OVERFLOW,
    STATUS_OK,
    bucket_argsort,
    cot_kernel,
    dot_kernel,
    matched_signs,
    padded_rows,
    score_rows,
)
from fairot.classification._reference import (
    CotParams,
    cot_updates_numpy,
    dot_updates_numpy,
    scores,
)
from fairot.transport import draw_fourier_features, tabulate_features


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    n, d, n_groups, batch = 300, 12, 3, 20
    X = rng.normal(size=(n, d))
    X[X < 0.3] = 0.0  # sparse rows, as one-hot data
    codes = rng.integers(0, n_groups, n)
    rows = [np.flatnonzero(codes == a) for a in range(n_groups)]
    counts = np.array([r.shape[0] for r in rows])
    n_updates = 150
    return {
        "X": X,
        "rows": rows,
        "members": np.concatenate(rows),
        "offsets": np.concatenate([[0], np.cumsum(counts)]),
        "target": np.sort(rng.uniform(size=200)),
        "bp": rng.integers(0, counts[None, :, None], size=(n_updates, n_groups, batch)),
        "tp": rng.integers(0, 200, size=(n_updates, batch)),
        "theta": rng.normal(size=d + 1) * 0.3,
        "n_groups": n_groups,
    }


def test_padded_rows_reproduce_dense_products(problem):
    X = problem["X"]
    indices, values = padded_rows(X)
    assert indices.shape[1] == (X != 0).sum(axis=1).max()
    theta = problem["theta"]
    np.testing.assert_allclose(score_rows(theta, indices, values), scores(theta, X), rtol=1e-12)


@pytest.mark.parametrize(
    ("reg", "constrain", "all_pairs"), list(itertools.product([0, 1], [True, False], [False, True]))
)
def test_cot_kernel_matches_numpy_transcription(problem, reg, constrain, all_pairs):
    p = problem
    n_dual = 40
    table = tabulate_features(draw_fourier_features(n_dual, 0.1, np.random.RandomState(0)))
    params = CotParams(reg, 0.1, 0.05, 1e-3, constrain, all_pairs)
    th_ref, th_fast = p["theta"].copy(), p["theta"].copy()
    shape = (p["n_groups"], n_dual)
    du_ref, tu_ref, du_fast, tu_fast = (np.zeros(shape) for _ in range(4))
    obj_ref = cot_updates_numpy(
        th_ref, du_ref, tu_ref, p["X"], p["rows"], p["target"], p["bp"], p["tp"], table, params
    )
    obj_fast = np.empty(len(p["bp"]))
    indices, values = padded_rows(p["X"])
    done, status = cot_kernel(
        th_fast,
        du_fast,
        tu_fast,
        indices,
        values,
        p["members"],
        p["offsets"],
        p["target"],
        p["bp"],
        p["tp"],
        table.values,
        table.derivatives,
        reg,
        0.1,
        0.05,
        1e-3,
        constrain,
        all_pairs,
        obj_fast,
        np.zeros(1),
    )
    assert (done, status) == (len(p["bp"]), STATUS_OK)
    assert np.abs(th_fast - p["theta"]).max() > 1e-2  # the run moved theta
    np.testing.assert_allclose(th_fast, th_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(du_fast, du_ref, rtol=0, atol=1e-10)
    if not constrain:
        np.testing.assert_allclose(tu_fast, tu_ref, rtol=0, atol=1e-10)
    np.testing.assert_allclose(obj_fast, obj_ref, rtol=0, atol=1e-10)


def test_cot_kernel_close_to_exact_feature_transcription(problem):
    # Tabulation changes lambda(s) by ~1e-6: the iterates stay close to the paper's exact ones.
    p = problem
    features = draw_fourier_features(40, 0.1, np.random.RandomState(0))
    table = tabulate_features(features)
    params = CotParams(0, 0.1, 0.05, 1e-3, True, False)
    th_exact, th_fast = p["theta"].copy(), p["theta"].copy()
    du_exact, du_fast = np.zeros((3, 40)), np.zeros((3, 40))
    cot_updates_numpy(
        th_exact,
        du_exact,
        du_exact.copy(),
        p["X"],
        p["rows"],
        p["target"],
        p["bp"],
        p["tp"],
        features,
        params,
    )
    indices, values = padded_rows(p["X"])
    cot_kernel(
        th_fast,
        du_fast,
        du_fast.copy(),
        indices,
        values,
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
    )
    np.testing.assert_allclose(th_fast, th_exact, atol=1e-4)
    np.testing.assert_allclose(du_fast, du_exact, atol=1e-4)


def test_cot_kernel_stops_before_exp_overflows(problem):
    p = problem
    table = tabulate_features(draw_fourier_features(40, 0.01, np.random.RandomState(0)))
    theta = p["theta"].copy()
    duals = np.full((3, 40), 5.0)  # lambda(s) far above the cost: exponent >> 40
    diagnostics = np.zeros(1)
    done, status = cot_kernel(
        theta,
        duals,
        duals.copy(),
        *padded_rows(p["X"]),
        p["members"],
        p["offsets"],
        p["target"],
        p["bp"],
        p["tp"],
        table.values,
        table.derivatives,
        0,
        0.01,
        0.1,
        1e-4,
        True,
        False,
        np.empty(len(p["bp"])),
        diagnostics,
    )
    assert status == STATUS_DUAL_OVERFLOW and done == 0
    assert diagnostics[0] > 40 and np.isfinite(theta).all()
    np.testing.assert_array_equal(theta, p["theta"])


def test_dot_kernel_matches_numpy_transcription(problem):
    p = problem
    th_ref, th_fast = p["theta"].copy(), p["theta"].copy()
    obj_ref = dot_updates_numpy(th_ref, p["X"], p["rows"], p["target"], p["bp"], p["tp"], 0.01)
    obj_fast = np.empty(len(p["bp"]))
    done, status = dot_kernel(
        th_fast,
        *padded_rows(p["X"]),
        p["members"],
        p["offsets"],
        p["target"],
        p["bp"],
        p["tp"],
        0.01,
        obj_fast,
        np.zeros(1),
    )
    assert status == STATUS_OK
    assert np.abs(th_fast - p["theta"]).max() > 1e-3
    np.testing.assert_allclose(th_fast, th_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(obj_fast, obj_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 7, 100])
def test_bucket_argsort_is_a_stable_argsort(n):
    rng = np.random.default_rng(n)
    values = np.round(rng.beta(0.3, 0.3, n), 2)  # clustered near 0 and 1, with ties
    values[: n // 3] = values[0]
    order = np.empty(n, dtype=np.int64)
    bucket_argsort(values, order, np.empty(n + 1, dtype=np.int64))
    np.testing.assert_array_equal(order, np.argsort(values, kind="stable"))


@pytest.mark.parametrize("seed", range(5))
def test_dot_coupling_matches_pot_emd_1d(seed):
    rng = np.random.default_rng(seed)
    n = 30
    s = rng.uniform(size=n)
    t = rng.uniform(size=n)
    if seed % 2:
        t[:10] = t[0]  # ties in the target
    signs = np.empty(n)
    cost = matched_signs(
        s, np.sort(t), signs, np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
    )
    plan = ot.emd_1d(s, t, metric="cityblock")
    expected_signs = n * (plan * np.sign(s[:, None] - t[None, :])).sum(axis=1)
    np.testing.assert_allclose(signs, expected_signs, atol=1e-9)
    np.testing.assert_allclose(cost, ot.emd2_1d(s, t, metric="cityblock"), rtol=1e-12)
