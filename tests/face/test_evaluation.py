import re

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_curve
from sklearn.model_selection import KFold

from fairot.face import evaluation
from fairot.face._evaluation import IS_SAME_ERROR
from fairot.verification import best_accuracy_threshold
from fairot.verification.checks import MSG_FOLDS as FOLDS_ERROR


def _pairs(n=300, dim=5, seed=0, separation=1.0):
    rng = np.random.default_rng(seed)
    is_same = rng.random(n) < 0.5
    a = rng.normal(size=(n, dim))
    noise = rng.normal(size=(n, dim))
    b = np.where(is_same[:, None], separation * a + noise, rng.normal(size=(n, dim)))
    return a, b, is_same


def _brute_best_accuracy(sim, same):
    candidates = np.concatenate(([sim.min() - 1], np.unique(sim)))
    return max(np.mean((sim > t) == same) for t in candidates)


@pytest.mark.parametrize("seed", range(5))
def test_best_threshold_is_exact(seed):
    rng = np.random.default_rng(seed)
    sim = np.round(rng.normal(size=60), 1)  # with ties
    same = rng.random(60) < 0.4
    t, acc = best_accuracy_threshold(same, sim)
    assert acc == pytest.approx(_brute_best_accuracy(sim, same))
    assert np.mean((sim > t) == same) == pytest.approx(acc)


def test_verification_accuracy_matches_a_naive_lfw_protocol():
    a, b, same = _pairs()
    result = evaluation.verification_accuracy(a, b, same, n_folds=10)
    sim = np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    accs = []
    for train, test in KFold(n_splits=10, shuffle=False).split(sim):
        u = np.unique(sim[train])
        grid = np.concatenate(([u[0] - 1], (u[:-1] + u[1:]) / 2, [u[-1]]))
        train_acc = [np.mean((sim[train] > t) == same[train]) for t in grid]
        best = grid[int(np.argmax(train_acc))]
        accs.append(np.mean((sim[test] > best) == same[test]))
    np.testing.assert_allclose(result.fold_accuracies, accs)
    assert result.accuracy == pytest.approx(np.mean(accs))
    assert result.fold_accuracies.shape == (10,)
    assert result.std == pytest.approx(np.std(result.fold_accuracies))
    # torch tensors are accepted
    again = evaluation.verification_accuracy(torch.as_tensor(a), torch.as_tensor(b), same)
    assert again.accuracy == result.accuracy


def test_threshold_at_far_matches_sklearn_roc_curve():
    a, b, same = _pairs(n=4000, seed=1, separation=0.7)
    sim = evaluation.cosine_similarity(a, b)
    false_pos_rate, tpr, _ = roc_curve(same, sim)
    for far in (1e-3, 1e-2, 0.1):
        threshold, tar = evaluation.threshold_at_far(sim, same, far)
        assert tar == pytest.approx(tpr[false_pos_rate <= far].max())
        assert np.mean(sim[~same] > threshold) <= far


def test_group_verification_feeds_std_and_ser():
    a, b, same = _pairs(n=600, seed=2, separation=0.8)
    groups = np.repeat(["A", "B", "C"], 200)
    b = b.copy()
    b[groups == "C"] += np.random.default_rng(0).normal(scale=1.0, size=(200, b.shape[1]))
    report = evaluation.group_verification(a, b, same, groups)
    acc = np.array(
        [
            evaluation.verification_accuracy(
                a[groups == g], b[groups == g], same[groups == g]
            ).accuracy
            for g in "ABC"
        ]
    )
    np.testing.assert_allclose(report.by_group["accuracy"].to_numpy(), acc)
    assert report.mean_accuracy == pytest.approx(acc.mean())
    assert report.std == pytest.approx(np.std(acc))
    assert report.ser == pytest.approx((1 - acc).max() / (1 - acc).min())
    summary = report.summary()
    assert list(summary.index) == ["A", "B", "C", "mean", "std", "ser"]


def test_roc_by_group_shows_group_specific_thresholds():
    a, b, same = _pairs(n=2000, seed=3)
    sim = evaluation.cosine_similarity(a, b)
    groups = np.repeat([0, 1], 1000)
    sim = np.where(groups == 1, sim + 0.2, sim)  # group 1's scores are shifted up
    table = evaluation.roc_by_group(sim, same, groups, far_targets=(0.01,))
    assert table.loc[1, "threshold@far=0.01"] > table.loc[0, "threshold@far=0.01"]
    for g in (0, 1):
        t, tar = evaluation.threshold_at_far(sim[groups == g], same[groups == g], 0.01)
        assert table.loc[g, "tar@far=0.01"] == tar and table.loc[g, "threshold@far=0.01"] == t


def test_select_difficult_pairs():
    sim = np.array([0.9, 0.1, 0.5, 0.8, 0.2, 0.3])
    same = np.array([True, True, True, False, False, False])
    idx = evaluation.select_difficult_pairs(sim, same, 4)
    assert idx.tolist() == [1, 2, 3, 5]


def test_sample_pairs_are_within_group_and_correct():
    labels = np.repeat(np.arange(20), 3)
    groups = labels % 2
    pairs = evaluation.sample_pairs(labels, groups, 30, 40, random_state=0)
    assert len(pairs) == 140
    assert (groups[pairs["i"]] == pairs["group"]).all() and (
        groups[pairs["j"]] == pairs["group"]
    ).all()
    assert ((labels[pairs["i"]] == labels[pairs["j"]]) == pairs["is_same"]).all()
    assert (pairs["i"] != pairs["j"]).all()
    assert pairs.groupby("group")["is_same"].sum().tolist() == [30, 30]


def test_feature_scatter_matches_naive_loops():
    rng = np.random.default_rng(4)
    emb = rng.normal(size=(30, 4))
    labels = np.repeat(np.arange(10), 3)
    groups = labels % 2
    table = evaluation.feature_scatter(emb, labels, groups)
    z = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    for g in (0, 1):
        ids = np.unique(labels[groups == g])
        centres = {}
        for k in ids:
            c = z[labels == k].sum(0)
            centres[k] = c / np.linalg.norm(c)
        intra = np.mean([z[i] @ centres[labels[i]] for i in np.flatnonzero(groups == g)])
        inter = np.mean([centres[p] @ centres[q] for p in ids for q in ids if p != q])
        assert table.loc[g, "intra"] == pytest.approx(intra)
        assert table.loc[g, "inter"] == pytest.approx(inter)
        assert table.loc[g, "scatter"] == pytest.approx(intra / inter)


def test_bad_inputs():
    a, b, same = _pairs(n=20)
    with pytest.raises(ValueError, match=re.escape(IS_SAME_ERROR.split("{")[0])):
        evaluation.verification_accuracy(a, b, same[:5])
    with pytest.raises(ValueError, match=re.escape(FOLDS_ERROR.split("{")[0])):
        evaluation.verification_accuracy(a, b, same, n_folds=1)
    with pytest.raises(ValueError, match="NaN"):
        evaluation.verification_accuracy(np.full_like(a, np.nan), b, same)
    with pytest.raises(ValueError, match="needs both"):
        evaluation.threshold_at_far(np.arange(4.0), np.ones(4, bool), 0.1)
    with pytest.raises(ValueError, match="far must be"):
        evaluation.threshold_at_far(np.arange(4.0), np.array([1, 0, 1, 0], bool), 1.5)
    with pytest.raises(ValueError, match="needs both"):
        evaluation.group_verification(a, b, np.ones(20, bool), np.zeros(20))
    assert isinstance(evaluation.feature_scatter(a, np.arange(20) % 4, np.zeros(20)), pd.DataFrame)
