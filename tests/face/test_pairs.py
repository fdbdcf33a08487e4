"""Embeddings in, pair scores out: cosine similarity of L2-normalised rows for given pairs."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics.pairwise import cosine_similarity as sklearn_cosine

from fairot.face._pairs import PAIR_INDEX_ERROR
from fairot.face.evaluation import pair_scores, sample_pairs
from fairot.verification import verification_rates


def test_scores_equal_sklearn_cosine_and_keep_the_pair_columns():
    rng = np.random.default_rng(0)
    embeddings = rng.normal(size=(40, 8)) * rng.uniform(0.1, 10, size=(40, 1))
    labels = np.repeat(np.arange(20), 2)
    groups = np.where(labels < 10, "a", "b")
    pairs = sample_pairs(labels, groups, n_genuine=30, n_impostor=30, random_state=0)
    table = pair_scores(embeddings, pairs)
    gram = sklearn_cosine(embeddings)
    np.testing.assert_allclose(table["score"], gram[pairs["i"], pairs["j"]], atol=1e-12)
    assert list(table.columns) == ["i", "j", "is_same", "group", "score"]
    assert "score" not in pairs.columns  # the caller's frame is not modified
    # The table is what the verification metrics read.
    rates = verification_rates(
        table["is_same"], table["score"], sensitive_features=table["group"], target_fmr=0.05
    )
    assert rates.by_group["n_impostor"].tolist() == [30, 30]


def test_index_arrays_and_tensors():
    torch = pytest.importorskip("torch")
    embeddings = torch.tensor([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [-1.0, 0.0]])
    table = pair_scores(embeddings, np.array([[0, 1], [0, 2], [0, 3]]))
    assert table.to_dict("list") == {"i": [0, 0, 0], "j": [1, 2, 3], "score": [1.0, 0.0, -1.0]}


@pytest.mark.parametrize(
    "pairs",
    [
        [[0, 5]],
        [[-1, 0]],
        [[0.0, 1.0]],
        [0, 1],
        pd.DataFrame({"a": [0], "b": [1]}),
    ],
)
def test_bad_pairs_are_named(pairs):
    with pytest.raises(ValueError, match=re.escape(PAIR_INDEX_ERROR.split("{")[0])):
        pair_scores(np.eye(3), pairs)
