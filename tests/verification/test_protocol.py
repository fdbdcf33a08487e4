"""The LFW/RFW 10-fold protocol on pair scores (moved down from fairot.face) and MBN's summary.

Oracles: a naive protocol written here (scikit-learn's unshuffled KFold, every candidate
threshold tried), numpy for STD and SER, and fairot.face's own functions on embeddings whose
cosine similarities are the scores (the same numbers from both entry points).
"""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import KFold

from fairot.verification import kfold_verification_accuracy, verification_accuracy_by_group
from fairot.verification.checks import MSG_BOTH_CLASSES, MSG_FOLDS


def _scores(n=300, seed=0, shift=1.0):
    rng = np.random.default_rng(seed)
    same = rng.random(n) < 0.5
    scores = np.tanh(np.where(same, shift, 0.0) + rng.normal(0, 0.6, n) - 0.5)
    return same, scores


def _naive_protocol(scores, same, n_folds=10):
    accs = []
    for train, test in KFold(n_splits=n_folds, shuffle=False).split(scores):
        u = np.unique(scores[train])
        grid = np.concatenate(([u[0] - 1], (u[:-1] + u[1:]) / 2, [u[-1]]))
        train_acc = [np.mean((scores[train] > t) == same[train]) for t in grid]
        best = grid[int(np.argmax(train_acc))]
        accs.append(np.mean((scores[test] > best) == same[test]))
    return np.array(accs)


@pytest.mark.parametrize("seed", range(3))
def test_kfold_accuracy_equals_a_naive_protocol(seed):
    same, scores = _scores(seed=seed)
    result = kfold_verification_accuracy(same, scores)
    accs = _naive_protocol(scores, same)
    np.testing.assert_allclose(result.fold_accuracies, accs)
    assert result.accuracy == pytest.approx(accs.mean())
    assert result.std == pytest.approx(accs.std())


def test_by_group_gives_mbn_std_and_ser():
    same, scores = _scores(n=600, seed=4)
    groups = np.repeat(["A", "B", "C"], 200)
    scores = scores + np.where(groups == "C", np.random.default_rng(1).normal(0, 0.5, 600), 0)
    result = verification_accuracy_by_group(same, scores, sensitive_features=groups)
    acc = np.array([_naive_protocol(scores[groups == g], same[groups == g]).mean() for g in "ABC"])
    np.testing.assert_allclose(result.by_group["accuracy"].to_numpy(), acc)
    assert result.std == pytest.approx(np.std(acc))
    assert result.ser == pytest.approx((1 - acc).max() / (1 - acc).min())
    assert result.by_group["n_pairs"].tolist() == [200, 200, 200]


def test_equals_fairot_face_on_embeddings():
    pytest.importorskip("torch")
    from fairot.face import evaluation

    same, scores = _scores(n=400, seed=5)
    groups = np.repeat(["x", "y"], 200)
    # Unit 2-D embeddings at angle arccos(score): their cosine is the score.
    angle = np.arccos(scores)
    emb1 = np.column_stack([np.ones(400), np.zeros(400)])
    emb2 = np.column_stack([np.cos(angle), np.sin(angle)])
    np.testing.assert_allclose(evaluation.cosine_similarity(emb1, emb2), scores, atol=1e-12)
    cosine = evaluation.cosine_similarity(emb1, emb2)
    face = evaluation.verification_accuracy(emb1, emb2, same)
    ours = kfold_verification_accuracy(same, cosine)
    np.testing.assert_array_equal(face.fold_accuracies, ours.fold_accuracies)
    face_groups = evaluation.group_verification(emb1, emb2, same, groups)
    ours_groups = verification_accuracy_by_group(same, cosine, sensitive_features=groups)
    pd.testing.assert_frame_equal(face_groups.by_group, ours_groups.by_group)
    assert (face_groups.std, face_groups.ser) == (ours_groups.std, ours_groups.ser)


def test_one_group_perfect_group_and_intersections():
    same = np.array([True, False] * 10)
    perfect = np.where(same, 0.9, 0.1)
    one = verification_accuracy_by_group(same, perfect, sensitive_features=["g"] * 20)
    assert (one.std, one.ser) == (0.0, 1.0)
    noisy = perfect.copy()
    noisy[:10] = noisy[:10][::-1]  # the first group's scores no longer follow the labels
    two = verification_accuracy_by_group(
        same,
        noisy,
        sensitive_features=pd.DataFrame({"r": ["a"] * 10 + ["b"] * 10, "s": "f"}),
        n_folds=2,
    )
    assert two.ser == np.inf
    assert list(two.by_group.index) == ["r=a, s=f", "r=b, s=f"]


def test_errors_name_the_argument():
    same, scores = _scores(n=40)
    with pytest.raises(ValueError, match=re.escape(MSG_FOLDS.split("{")[0])):
        kfold_verification_accuracy(same, scores, n_folds=1)
    with pytest.raises(ValueError, match=re.escape(MSG_FOLDS.split("{")[0])):
        kfold_verification_accuracy(same, scores, n_folds=2.0)
    groups = np.where(same, "only-genuine", "b")
    with pytest.raises(ValueError, match=r"group 'b' needs both genuine .* got 0 genuine"):
        verification_accuracy_by_group(same, scores, sensitive_features=groups)
    assert "needs both genuine" in MSG_BOTH_CLASSES
