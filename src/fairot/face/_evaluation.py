r"""Verification fairness: the LFW/RFW protocol per group, ROC operating points and feature scatter.

Face verification decides "same identity" when the cosine similarity of two embeddings exceeds a
threshold. The LFW protocol [2]_ (used for RFW/IDS in MBN [1]_) splits the pairs into 10 folds,
picks on 9 folds the threshold that maximises accuracy and measures the 10th. Per group, the
accuracies feed MBN's fairness metrics: the mean, the standard deviation STD and the skewed error
ratio :math:`\mathrm{SER} = \max_g \mathrm{err}_g / \min_g \mathrm{err}_g` (Section V of [1]_),
from :mod:`fairot.verification`.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
.. [2] Huang, G. B. et al. "Labeled Faces in the Wild", UMass Amherst TR 07-49 (2007).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from fairot.verification import (
    GroupVerification,
    VerificationResult,
    kfold_verification_accuracy,
    verification_accuracy_by_group,
)
from fairot.verification.checks import MSG_BOTH_CLASSES as BOTH_CLASSES_ERROR

__all__ = [
    "GroupVerification",
    "VerificationResult",
    "cosine_similarity",
    "group_verification",
    "roc_by_group",
    "threshold_at_far",
    "verification_accuracy",
]

PAIRS_ERROR = (
    "{name} must be a 2-D array of shape (n_pairs, dim) matching the other embeddings; got {shape}."
)
IS_SAME_ERROR = "is_same must be a 1-D boolean array of length n_pairs={n}; got shape {shape}."
FAR_ERROR = "far must be in (0, 1); got {value!r}."
GROUPS_ERROR = "groups must be a 1-D array of length {n}; got shape {shape}."
NAN_ERROR = "{name} contains NaN or infinite values."
N_PAIRS_ERROR = "{name} must be a non-negative int; got {value!r}."


def _as_2d(x, name: str) -> np.ndarray:
    arr = np.asarray(x.detach().cpu() if hasattr(x, "detach") else x, dtype=float)
    if arr.ndim != 2:
        raise ValueError(PAIRS_ERROR.format(name=name, shape=arr.shape))
    if not np.isfinite(arr).all():
        raise ValueError(NAN_ERROR.format(name=name))
    return arr


def _as_bool(is_same, n: int) -> np.ndarray:
    arr = np.asarray(is_same)
    if arr.shape != (n,) or not (arr.dtype == bool or np.isin(arr, (0, 1)).all()):
        raise ValueError(IS_SAME_ERROR.format(n=n, shape=arr.shape))
    return arr.astype(bool)


def cosine_similarity(emb1, emb2) -> np.ndarray:
    """Row-wise cosine similarity of two arrays of embeddings, shape (n_pairs,).

    Parameters
    ----------
    emb1, emb2 : array-like or Tensor of shape (n_pairs, dim)

    Returns
    -------
    ndarray of shape (n_pairs,)

    Examples
    --------
    >>> from fairot.face.evaluation import cosine_similarity
    >>> cosine_similarity([[1.0, 0.0], [1.0, 1.0]], [[2.0, 0.0], [-1.0, -1.0]])
    array([ 1., -1.])
    """
    a = _as_2d(emb1, "emb1")
    b = _as_2d(emb2, "emb2")
    if a.shape != b.shape:
        raise ValueError(PAIRS_ERROR.format(name="emb2", shape=b.shape))
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    return np.einsum("ij,ij->i", a, b)


def verification_accuracy(emb1, emb2, is_same, n_folds: int = 10) -> VerificationResult:
    """Verification accuracy under the LFW/RFW 10-fold protocol.

    For each fold the cosine threshold that maximises accuracy on the other folds is chosen
    (exactly, over every cut between sorted similarities) and applied to the fold; a pair is
    declared genuine when its similarity is strictly above the threshold.

    Parameters
    ----------
    emb1, emb2 : array-like or Tensor of shape (n_pairs, dim)
        Embeddings of the two images of each pair.
    is_same : array-like of bool, shape (n_pairs,)
    n_folds : int, default=10
        Folds are contiguous blocks in the given pair order, as in the LFW/RFW pair lists.

    Returns
    -------
    VerificationResult

    Examples
    --------
    Genuine pairs (identical embeddings) and impostor pairs (orthogonal ones) are told apart:

    >>> import numpy as np
    >>> from fairot.face.evaluation import verification_accuracy
    >>> eye = np.eye(4)
    >>> emb1 = np.vstack([eye, eye])
    >>> emb2 = np.vstack([eye, np.roll(eye, 1, axis=0)])
    >>> is_same = [True] * 4 + [False] * 4
    >>> verification_accuracy(emb1, emb2, is_same, n_folds=2).accuracy
    1.0
    """
    sim = cosine_similarity(emb1, emb2)
    same = _as_bool(is_same, len(sim))
    return kfold_verification_accuracy(same, sim, n_folds=n_folds)


def _as_groups(groups, n: int) -> np.ndarray:
    arr = np.asarray(groups)
    if arr.shape != (n,):
        raise ValueError(GROUPS_ERROR.format(n=n, shape=arr.shape))
    return arr


def group_verification(emb1, emb2, is_same, groups, n_folds: int = 10) -> GroupVerification:
    """Run :func:`verification_accuracy` within each group and summarise the disparity.

    Parameters
    ----------
    emb1, emb2 : array-like or Tensor of shape (n_pairs, dim)
    is_same : array-like of bool, shape (n_pairs,)
    groups : array-like of shape (n_pairs,)
        Group of each pair (RFW: the race of the pair list it comes from).
    n_folds : int, default=10

    Returns
    -------
    GroupVerification

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.face.evaluation import group_verification
    >>> eye = np.eye(4)
    >>> emb1 = np.vstack([eye, eye, eye, eye])
    >>> emb2 = np.vstack([eye, np.roll(eye, 1, 0), eye, -eye])
    >>> is_same = ([True] * 4 + [False] * 4) * 2
    >>> groups = ["a"] * 8 + ["b"] * 8
    >>> result = group_verification(emb1, emb2, is_same, groups, n_folds=2)
    >>> result.by_group["n_pairs"].to_dict(), result.std
    ({'a': 8, 'b': 8}, 0.0)
    """
    sim = cosine_similarity(emb1, emb2)
    same = _as_bool(is_same, len(sim))
    grp = _as_groups(groups, len(sim))
    return verification_accuracy_by_group(same, sim, sensitive_features=grp, n_folds=n_folds)


def threshold_at_far(similarity, is_same, far: float) -> tuple[float, float]:
    """Smallest threshold whose false accept rate is at most ``far``, and its true accept rate.

    Parameters
    ----------
    similarity : array-like of shape (n_pairs,)
    is_same : array-like of bool, shape (n_pairs,)
    far : float in (0, 1)
        Target false accept rate (fraction of impostor pairs above the threshold).

    Returns
    -------
    threshold : float
        Pairs with similarity strictly above it are accepted.
    tar : float
        True accept rate at that threshold.

    Examples
    --------
    >>> from fairot.face.evaluation import threshold_at_far
    >>> similarity = [0.9, 0.8, 0.7, 0.1, 0.2, 0.75]
    >>> is_same = [True, True, True, False, False, False]
    >>> threshold_at_far(similarity, is_same, far=0.4)  # one impostor of three may pass
    (0.2, 1.0)
    """
    sim = np.asarray(similarity, dtype=float)
    same = _as_bool(is_same, len(sim))
    if isinstance(far, bool) or not isinstance(far, (int, float)) or not 0 < far < 1:
        raise ValueError(FAR_ERROR.format(value=far))
    if same.all() or not same.any():
        raise ValueError(
            BOTH_CLASSES_ERROR.format(
                where="threshold_at_far", n_same=int(same.sum()), n_diff=int((~same).sum())
            )
        )
    impostor = np.sort(sim[~same])[::-1]
    k = int(np.floor(far * len(impostor) + 1e-9))  # impostors allowed above the threshold
    threshold = float(impostor[min(k, len(impostor) - 1)])
    return threshold, float(np.mean(sim[same] > threshold))


def roc_by_group(
    similarity, is_same, groups, far_targets: Sequence[float] = (1e-3, 1e-4)
) -> pd.DataFrame:
    """True accept rate and threshold of each group at fixed false accept rates.

    The paper's Section III-C shows that the threshold giving one FAR differs between skin-tone
    groups; this table makes that visible.

    Parameters
    ----------
    similarity : array-like of shape (n_pairs,)
    is_same : array-like of bool, shape (n_pairs,)
    groups : array-like of shape (n_pairs,)
    far_targets : sequence of float, default=(1e-3, 1e-4)

    Returns
    -------
    pandas.DataFrame
        Index: the groups; columns ``tar@far=<f>`` and ``threshold@far=<f>`` for each target.

    Examples
    --------
    >>> from fairot.face.evaluation import roc_by_group
    >>> similarity = [0.9, 0.5, 0.1, 0.6, 0.8, 0.3, 0.7, 0.2]
    >>> is_same = [True, True, False, False, True, True, False, False]
    >>> groups = ["a"] * 4 + ["b"] * 4
    >>> table = roc_by_group(similarity, is_same, groups, far_targets=[0.25])
    >>> table["tar@far=0.25"].to_dict(), table["threshold@far=0.25"].to_dict()
    ({'a': 0.5, 'b': 0.5}, {'a': 0.6, 'b': 0.7})
    """
    sim = np.asarray(similarity, dtype=float)
    same = _as_bool(is_same, len(sim))
    grp = _as_groups(groups, len(sim))
    rows = {}
    for g in np.unique(grp):
        in_g = grp == g
        row = {}
        for far in far_targets:
            t, tar = threshold_at_far(sim[in_g], same[in_g], far)
            row[f"tar@far={far:g}"] = tar
            row[f"threshold@far={far:g}"] = t
        rows[g] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "group"
    return frame
