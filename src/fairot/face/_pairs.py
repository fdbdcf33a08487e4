r"""Verification pairs and feature scatter: MBN's difficult pairs, balanced pair sampling.

The pairs that :mod:`fairot.face._evaluation`'s protocol scores: the "difficult" pairs of MBN's
IDS test sets [1]_, genuine and impostor pairs sampled per group, and the intra-/inter-class
cosine scatter of each group's features (Fig. 16(b) of the MBN paper).

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._evaluation import (
    BOTH_CLASSES_ERROR,
    N_PAIRS_ERROR,
    _as_2d,
    _as_bool,
    _as_groups,
    cosine_similarity,
)

__all__ = ["feature_scatter", "pair_scores", "sample_pairs", "select_difficult_pairs"]

PAIR_INDEX_ERROR = (
    "pairs must be a DataFrame with integer columns 'i' and 'j' or an int array of shape "
    "(n_pairs, 2), indexing rows of embeddings (0 to {last}); {problem}."
)


def select_difficult_pairs(similarity, is_same, n_pairs: int) -> np.ndarray:
    """Indices of the hardest pairs: the least similar genuine and the most similar impostor pairs.

    MBN's IDS test sets keep such "difficult" pairs (in cosine similarity) so that accuracy does
    not saturate (Section III-B of the MBN paper, Wang, Zhang and Deng). Half of ``n_pairs``
    comes from each kind (as available).

    Parameters
    ----------
    similarity : array-like of shape (n_pairs_total,)
        Similarity under a reference model.
    is_same : array-like of bool, shape (n_pairs_total,)
    n_pairs : int

    Returns
    -------
    ndarray of int
        Sorted indices into the given pairs.

    Examples
    --------
    >>> from fairot.face.evaluation import select_difficult_pairs
    >>> similarity = [0.9, 0.2, 0.1, 0.8]
    >>> is_same = [True, True, False, False]
    >>> select_difficult_pairs(similarity, is_same, n_pairs=2)  # weakest genuine, closest impostor
    array([1, 3])
    """
    sim = np.asarray(similarity, dtype=float)
    same = _as_bool(is_same, len(sim))
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, (int, np.integer)) or n_pairs < 0:
        raise ValueError(N_PAIRS_ERROR.format(name="n_pairs", value=n_pairs))
    genuine = np.flatnonzero(same)
    impostor = np.flatnonzero(~same)
    n_gen = n_pairs // 2
    hard_gen = genuine[np.argsort(sim[genuine], kind="stable")[:n_gen]]
    hard_imp = impostor[np.argsort(-sim[impostor], kind="stable")[: n_pairs - n_gen]]
    return np.sort(np.concatenate([hard_gen, hard_imp]))


def sample_pairs(
    labels, groups, n_genuine: int, n_impostor: int, random_state=None
) -> pd.DataFrame:
    """Draw genuine and impostor verification pairs within each group.

    Parameters
    ----------
    labels : array-like of shape (n_samples,)
        Identity of each sample.
    groups : array-like of shape (n_samples,)
    n_genuine, n_impostor : int
        Pairs per group of each kind (genuine: two distinct samples of one identity; impostor:
        samples of two identities of the group).
    random_state : int, numpy Generator or None

    Returns
    -------
    pandas.DataFrame
        Columns ``i``, ``j`` (sample indices), ``is_same``, ``group``; the pairs of each group are
        contiguous and shuffled, so that contiguous folds mix genuine and impostor pairs.

    Examples
    --------
    >>> from fairot.face.evaluation import sample_pairs
    >>> labels = [0, 0, 1, 1, 2, 2, 3, 3]
    >>> groups = ["a"] * 4 + ["b"] * 4
    >>> pairs = sample_pairs(labels, groups, n_genuine=2, n_impostor=2, random_state=0)
    >>> pairs.groupby("group")["is_same"].sum().to_dict(), len(pairs)
    ({'a': 2, 'b': 2}, 8)
    """
    labels = np.asarray(labels)
    grp = _as_groups(groups, len(labels))
    for name, value in (("n_genuine", n_genuine), ("n_impostor", n_impostor)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(N_PAIRS_ERROR.format(name=name, value=value))
    rng = (
        random_state
        if isinstance(random_state, np.random.Generator)
        else (np.random.default_rng(random_state))
    )
    frames = []
    for g in np.unique(grp):
        idx = np.flatnonzero(grp == g)
        lab = labels[idx]
        ids, inverse, counts = np.unique(lab, return_inverse=True, return_counts=True)
        multi = np.flatnonzero(counts >= 2)
        if (n_genuine and not len(multi)) or (n_impostor and len(ids) < 2):
            raise ValueError(
                BOTH_CLASSES_ERROR.format(
                    where=f"sample_pairs in group {g!r}", n_same=len(multi), n_diff=len(ids)
                )
            )
        members = [idx[inverse == k] for k in range(len(ids))]
        pairs = []
        for k in rng.choice(multi, n_genuine) if n_genuine else []:
            a, b = rng.choice(members[k], 2, replace=False)
            pairs.append((a, b, True))
        for _ in range(n_impostor):
            ka, kb = rng.choice(len(ids), 2, replace=False)
            pairs.append((rng.choice(members[ka]), rng.choice(members[kb]), False))
        frame = pd.DataFrame(pairs, columns=["i", "j", "is_same"])
        frame = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
        frame["group"] = g
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    return out.astype({"i": np.int64, "j": np.int64, "is_same": bool})


def pair_scores(embeddings, pairs) -> pd.DataFrame:
    r"""Pair scores from embeddings: the cosine similarity of each pair's L2-normalised rows.

    .. math:: s_{ij} = \frac{e_i}{\lVert e_i \rVert} \cdot \frac{e_j}{\lVert e_j \rVert}

    The table it returns is what :func:`fairot.verification.verification_rates` and ``fairot
    audit --task verification --scores FILE`` read (``to_csv`` it): embeddings in, pair scores
    out.

    Parameters
    ----------
    embeddings : array-like or Tensor of shape (n_samples, dim)
    pairs : pandas.DataFrame or array-like of int, shape (n_pairs, 2)
        A frame with columns ``i`` and ``j`` (as :func:`sample_pairs` returns, whose other
        columns, e.g. ``is_same`` and ``group``, are kept) or an array of index pairs.

    Returns
    -------
    pandas.DataFrame
        The pairs' columns (``i``, ``j`` for an array) and ``score``.

    Examples
    --------
    >>> from fairot.face.evaluation import pair_scores
    >>> embeddings = [[1.0, 0.0], [3.0, 0.0], [0.0, 2.0]]
    >>> pair_scores(embeddings, [[0, 1], [0, 2]])["score"].tolist()
    [1.0, 0.0]
    """
    emb = _as_2d(embeddings, "embeddings")
    if isinstance(pairs, pd.DataFrame):
        if not {"i", "j"} <= set(pairs.columns):
            problem = f"got columns {list(pairs.columns)}"
            raise ValueError(PAIR_INDEX_ERROR.format(last=len(emb) - 1, problem=problem))
        frame = pairs.copy()
        index = frame[["i", "j"]].to_numpy()
    else:
        index = np.asarray(pairs)
        if index.ndim != 2 or index.shape[1] != 2:
            problem = f"got shape {index.shape}"
            raise ValueError(PAIR_INDEX_ERROR.format(last=len(emb) - 1, problem=problem))
        frame = pd.DataFrame({"i": index[:, 0], "j": index[:, 1]})
    if index.dtype.kind not in "iu":
        problem = f"got dtype {index.dtype}"
        raise ValueError(PAIR_INDEX_ERROR.format(last=len(emb) - 1, problem=problem))
    if index.size and (index.min() < 0 or index.max() >= len(emb)):
        problem = f"got indices in [{index.min()}, {index.max()}]"
        raise ValueError(PAIR_INDEX_ERROR.format(last=len(emb) - 1, problem=problem))
    frame["score"] = cosine_similarity(emb[index[:, 0]], emb[index[:, 1]])
    return frame


def feature_scatter(embeddings, labels, groups) -> pd.DataFrame:
    """Intra-class and inter-class cosine scatter of each group (Fig. 16(b) of the MBN paper).

    Intra-class scatter is the mean cosine between each feature and its identity's centre;
    inter-class scatter is the mean cosine between the centres of distinct identities of the group.
    The paper's feature scatter is their ratio (larger is better when the inter-class cosine is
    positive; compare ``intra`` and ``inter`` directly when it is near zero).

    Parameters
    ----------
    embeddings : array-like or Tensor of shape (n_samples, dim)
    labels : array-like of shape (n_samples,)
    groups : array-like of shape (n_samples,)

    Returns
    -------
    pandas.DataFrame
        Index: the groups; columns ``intra``, ``inter``, ``scatter`` (= intra / inter),
        ``n_identities``.

    Examples
    --------
    Identities whose samples coincide have intra-class cosine 1:

    >>> import numpy as np
    >>> from fairot.face.evaluation import feature_scatter
    >>> embeddings = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> feature_scatter(embeddings, [0, 0, 1, 1], ["a"] * 4)[["intra", "inter"]].to_dict("records")
    [{'intra': 1.0, 'inter': 0.0}]
    """
    emb = _as_2d(embeddings, "embeddings")
    emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    labels = np.asarray(labels)
    grp = _as_groups(groups, len(emb))
    rows = {}
    for g in np.unique(grp):
        in_g = grp == g
        ids, inverse = np.unique(labels[in_g], return_inverse=True)
        centres = np.zeros((len(ids), emb.shape[1]))
        np.add.at(centres, inverse, emb[in_g])
        centres /= np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
        intra = float(np.mean(np.einsum("ij,ij->i", emb[in_g], centres[inverse])))
        if len(ids) > 1:
            gram = centres @ centres.T
            inter = float(gram[~np.eye(len(ids), dtype=bool)].mean())
        else:
            inter = float("nan")
        rows[g] = {
            "intra": intra,
            "inter": inter,
            "scatter": intra / inter if inter else float("inf"),
            "n_identities": len(ids),
        }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "group"
    return frame
