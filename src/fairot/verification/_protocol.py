r"""The LFW/RFW 10-fold verification protocol on pair scores, and MBN's summary per group.

Face verification decides "same identity" when the similarity of a pair exceeds a threshold. The
LFW protocol [2]_ (used for RFW/IDS in MBN [1]_) splits the pairs into 10 contiguous folds, picks
on 9 folds the threshold that maximises accuracy and measures the 10th. Per group, the accuracies
feed MBN's fairness metrics: the mean, the standard deviation STD and the skewed error ratio
:math:`\mathrm{SER} = \max_g \mathrm{err}_g / \min_g \mathrm{err}_g` (Section V of [1]_).

The protocol reads only pair scores, so it lives here, below :mod:`fairot.face` (which turns
embeddings into scores and calls it) and :mod:`fairot.reporting` (the verification audit), and
needs no torch.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
.. [2] Huang, G. B. et al. "Labeled Faces in the Wild", UMass Amherst TR 07-49 (2007).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics import group_accuracy_std, skewed_error_ratio
from fairot.metrics.checks import group_metric
from fairot.utils.sensitive import check_sensitive_features
from fairot.verification.checks import MSG_FOLDS, check_both_classes, check_pairs


def best_accuracy_threshold(y_true, y_pred) -> tuple[float, float]:
    """Threshold maximising the accuracy of ``y_pred > t``, exactly, over every cut point.

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
        Whether each pair is the same person.
    y_pred : array-like of shape (n_pairs,)
        Pair scores (higher = more alike).

    Returns
    -------
    threshold : float
        The midpoint between the two sorted scores around the best cut (pairs strictly above it
        are declared genuine).
    accuracy : float
        The accuracy of that cut on the given pairs.

    Examples
    --------
    >>> from fairot.verification import best_accuracy_threshold
    >>> best_accuracy_threshold([False, False, True, True], [0.1, 0.3, 0.5, 0.9])
    (0.4, 1.0)
    """
    is_same, similarity = check_pairs(y_true, y_pred)
    order = np.argsort(similarity, kind="stable")
    s, y = similarity[order], is_same[order]
    n = len(s)
    # cut after k sorted pairs (k = 0..n): pairs [0, k) predicted different, [k, n) same.
    diff_below = np.concatenate(([0], np.cumsum(~y)))
    same_above = np.concatenate(([0], np.cumsum(y[::-1])))[::-1]
    correct = diff_below + same_above
    # a cut between equal similarities cannot be realised by a threshold
    valid = np.ones(n + 1, dtype=bool)
    valid[1:n] = s[1:] > s[:-1]
    correct = np.where(valid, correct, -1)
    k = int(np.argmax(correct))
    if k == 0:
        threshold = s[0] - 1.0
    elif k == n:
        threshold = s[-1]
    else:
        threshold = 0.5 * (s[k - 1] + s[k])
    return float(threshold), float(correct[k] / n)


@dataclass(frozen=True)
class VerificationResult:
    """Result of :func:`kfold_verification_accuracy`.

    Attributes
    ----------
    accuracy : float
        Mean of the fold accuracies.
    std : float
        Standard deviation of the fold accuracies (ddof=0, as insightface's LFW evaluation).
    fold_accuracies : ndarray of shape (n_folds,)
    thresholds : ndarray of shape (n_folds,)
        Threshold chosen on the other folds for each test fold.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.verification import VerificationResult
    >>> VerificationResult(0.9, 0.1, np.array([0.8, 1.0]), np.array([0.3, 0.4])).accuracy
    0.9
    """

    accuracy: float
    std: float
    fold_accuracies: np.ndarray
    thresholds: np.ndarray


def _kfold(similarity: np.ndarray, is_same: np.ndarray, n_folds: Any) -> VerificationResult:
    n = len(similarity)
    if isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer)):
        raise ValueError(MSG_FOLDS.format(n=n, value=n_folds))
    if not 2 <= n_folds <= n:
        raise ValueError(MSG_FOLDS.format(n=n, value=n_folds))
    folds = np.array_split(np.arange(n), n_folds)  # contiguous, unshuffled: the LFW protocol
    accs, thresholds = [], []
    for test in folds:
        train = np.ones(n, dtype=bool)
        train[test] = False
        t, _ = best_accuracy_threshold(is_same[train], similarity[train])
        accs.append(np.mean((similarity[test] > t) == is_same[test]))
        thresholds.append(t)
    accs = np.asarray(accs)
    return VerificationResult(float(accs.mean()), float(accs.std()), accs, np.asarray(thresholds))


def kfold_verification_accuracy(y_true, y_pred, *, n_folds: int = 10) -> VerificationResult:
    """Verification accuracy of pair scores under the LFW/RFW 10-fold protocol.

    For each fold the threshold that maximises accuracy on the other folds is chosen (exactly,
    by :func:`best_accuracy_threshold`) and applied to the fold; a pair is declared genuine when
    its score is strictly above the threshold.

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
        Whether each pair is the same person.
    y_pred : array-like of shape (n_pairs,)
        Pair scores, e.g. cosine similarities (higher = more alike).
    n_folds : int, default=10
        Folds are contiguous blocks in the given pair order, as in the LFW/RFW pair lists.

    Returns
    -------
    VerificationResult

    Examples
    --------
    >>> from fairot.verification import kfold_verification_accuracy
    >>> result = kfold_verification_accuracy(
    ...     [True, False, True, False], [0.9, 0.1, 0.8, 0.2], n_folds=2
    ... )
    >>> result.accuracy
    1.0
    """
    is_same, similarity = check_pairs(y_true, y_pred)
    return _kfold(similarity, is_same, n_folds)


@dataclass(frozen=True)
class GroupVerification:
    """Per-group verification accuracy and MBN's fairness summary.

    Attributes
    ----------
    by_group : pandas.DataFrame
        Index: the groups; columns ``accuracy``, ``fold_std``, ``threshold`` (mean over folds),
        ``n_pairs``.
    mean_accuracy : float
        Average of the group accuracies (the paper's "Avg").
    std : float
        STD of the group accuracies, ddof=0 (:func:`fairot.metrics.group_accuracy_std`).
    ser : float
        Skewed error ratio (:func:`fairot.metrics.skewed_error_ratio`); ``inf`` when some group
        makes no error. With a single group, STD is 0 and SER is 1.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairot.verification import GroupVerification
    >>> by_group = pd.DataFrame({"accuracy": [0.9, 0.8]}, index=["a", "b"])
    >>> GroupVerification(by_group, 0.85, 0.05, 2.0).summary().round(2).to_dict()
    {'a': 0.9, 'b': 0.8, 'mean': 0.85, 'std': 0.05, 'ser': 2.0}
    """

    by_group: pd.DataFrame
    mean_accuracy: float
    std: float
    ser: float

    def summary(self) -> pd.Series:
        """Group accuracies followed by ``mean``, ``std`` and ``ser``, as one Series."""
        values = self.by_group["accuracy"].copy()
        values.index = [str(g) for g in values.index]
        extra = pd.Series({"mean": self.mean_accuracy, "std": self.std, "ser": self.ser})
        return pd.concat([values, extra])


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def verification_accuracy_by_group(
    y_true, y_pred, *, sensitive_features, n_folds: int = 10
) -> GroupVerification:
    r"""The 10-fold protocol within each group, and MBN's Avg, STD and SER across groups.

    .. math::

        \mathrm{STD} = \Big(\frac{1}{G}\sum_g (acc_g - \overline{acc})^2\Big)^{1/2}, \qquad
        \mathrm{SER} = \frac{\max_g (1 - acc_g)}{\min_g (1 - acc_g)}

    with :math:`acc_g` the 10-fold accuracy of group :math:`g`'s pairs (Section V of [1]_).

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
        Whether each pair is the same person.
    y_pred : array-like of shape (n_pairs,)
        Pair scores (higher = more alike).
    sensitive_features : array-like of shape (n_pairs,) or (n_pairs, n_columns)
        Group of each pair (RFW: the race of the pair list it comes from); several columns form
        intersectional groups. One group is accepted (STD 0, SER 1).
    n_folds : int, default=10
        Folds per group, contiguous in the given order.

    Returns
    -------
    GroupVerification

    References
    ----------
    .. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
       IEEE TPAMI (2021).

    Examples
    --------
    >>> from fairot.verification import verification_accuracy_by_group
    >>> y = [True, False] * 4
    >>> s = [0.9, 0.1, 0.8, 0.2, 0.7, 0.6, 0.55, 0.65]
    >>> result = verification_accuracy_by_group(y, s, sensitive_features=["a"] * 4 + ["b"] * 4,
    ...                                         n_folds=2)
    >>> result.by_group["accuracy"].to_dict()
    {'a': 1.0, 'b': 0.25}
    """
    is_same, similarity = check_pairs(y_true, y_pred)
    encoding = check_sensitive_features(sensitive_features, is_same.size, min_groups=1)
    rows = {}
    keys = encoding.labels if len(encoding.columns) == 1 else encoding.names
    for label, idx in zip(keys, encoding.indices(), strict=True):
        check_both_classes(is_same[idx], f"group {label!r}")
        result = _kfold(similarity[idx], is_same[idx], n_folds)
        rows[label] = {
            "accuracy": result.accuracy,
            "fold_std": result.std,
            "threshold": float(result.thresholds.mean()),
            "n_pairs": int(idx.size),
        }
    by_group = pd.DataFrame.from_dict(rows, orient="index")
    by_group.index.name = "group"
    acc = by_group["accuracy"]
    if len(acc) == 1:  # one group: no disparity to measure
        return GroupVerification(by_group, float(acc.iloc[0]), 0.0, 1.0)
    ser = float("inf") if (acc >= 1.0).any() else skewed_error_ratio(acc)
    return GroupVerification(by_group, float(acc.mean()), group_accuracy_std(acc), ser)
