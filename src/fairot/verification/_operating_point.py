r"""Face verification at one operating point: FMR and FNMR per group, their ratios, DET curves.

A pair of images is a *match* at threshold :math:`T` when its score :math:`s` (a similarity:
higher = more alike) satisfies :math:`s \ge T`. Over impostor (different-person) pairs
:math:`I` and genuine (same-person) pairs :math:`G`,

.. math::

    \mathrm{FMR}(T) = \frac{|\{i \in I : s_i \ge T\}|}{|I|}, \qquad
    \mathrm{FNMR}(T) = \frac{|\{i \in G : s_i < T\}|}{|G|}.

NIST's FRVT demographic reports [1]_ read every group at *one* threshold, set on all impostor
pairs for a target overall FMR, then compare the groups' FMR and FNMR there (ratios of the
highest to the lowest): a system is not re-tuned per group in deployment, so this is the
disparity its users meet. :func:`fmr_threshold` sets that threshold, :func:`verification_rates`
reads the groups, :func:`det_curves` gives each group's whole FMR-FNMR trade-off.

References
----------
.. [1] Grother, P., Ngan, M. and Hanaoka, K. "Face Recognition Vendor Test (FRVT) Part 3:
   Demographic Effects", NISTIR 8280 (2019).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics.checks import group_metric
from fairot.utils.sensitive import check_sensitive_features
from fairot.verification.checks import check_both_classes, check_pairs

MSG_TARGET_FMR = "target_fmr must be a number in (0, 1); got {value!r}."
MSG_TOO_FEW_IMPOSTORS = (
    "target_fmr={target:g} needs at least {needed} impostor (different-person) pairs, so that "
    "one false match in 1/target_fmr can be told from none; got {n}. Use target_fmr >= "
    "{lowest:.3g} (1/{n}) or add impostor pairs."
)


def _check_target(target_fmr: Any) -> float:
    if isinstance(target_fmr, bool) or not isinstance(target_fmr, (int, float, np.number)):
        raise ValueError(MSG_TARGET_FMR.format(value=target_fmr))
    if not 0.0 < target_fmr < 1.0:
        raise ValueError(MSG_TARGET_FMR.format(value=target_fmr))
    return float(target_fmr)


def _allowed_false_matches(n_impostor: int, target_fmr: float) -> int:
    """The largest ``k`` with ``k / n_impostor <= target_fmr``, as the rates are computed."""
    k = int(np.floor(target_fmr * n_impostor))
    # float rounding of the product: settle on the count whose rate, as computed, fits
    while k + 1 <= n_impostor and (k + 1) / n_impostor <= target_fmr:
        k += 1
    while k > 0 and k / n_impostor > target_fmr:
        k -= 1
    return k


def _threshold(impostor_scores: np.ndarray, target_fmr: float) -> tuple[float, int]:
    n = impostor_scores.size
    k = _allowed_false_matches(n, target_fmr)
    if k < 1:
        needed = int(np.ceil(1.0 / target_fmr))
        raise ValueError(
            MSG_TOO_FEW_IMPOSTORS.format(target=target_fmr, needed=needed, n=n, lowest=1.0 / n)
        )
    descending = np.sort(impostor_scores)[::-1]
    return float(np.nextafter(descending[k], np.inf)), k


def fmr_threshold(y_true, y_pred, *, target_fmr: float = 1e-3) -> float:
    r"""The lowest threshold whose overall false match rate is at most ``target_fmr``.

    With :math:`N` impostor scores sorted from the highest, :math:`s_{(1)} \ge \dots \ge
    s_{(N)}`, at most :math:`k = \max\{j : j / N \le \mathrm{target}\}` of them may match. The
    threshold is the smallest float above the order statistic :math:`s_{(k+1)}`, so a pair
    matches when its score is strictly above :math:`s_{(k+1)}`.

    **Ties.** Every impostor score equal to :math:`s_{(k+1)}` is a non-match, so a tie across
    the cut makes the achieved FMR *lower* than :math:`k/N`, never higher than the target;
    lowering the threshold to :math:`s_{(k+1)}` (the next impostor score below it) would make
    :math:`k + 1` or more impostors match, above the target. Among all thresholds with
    FMR :math:`\le` target this one has the lowest FNMR.

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
        Whether each pair is the same person (genuine) or not (impostor).
    y_pred : array-like of shape (n_pairs,)
        Pair scores (similarities: higher = more alike).
    target_fmr : float in (0, 1), default=1e-3
        The overall false match rate to hold.

    Returns
    -------
    float
        A pair matches when its score is ``>=`` this threshold.

    Raises
    ------
    ValueError
        When fewer than :math:`1/\mathrm{target}` impostor pairs are given: then no false
        match at all is allowed, and a measured FMR of 0 cannot show that the true one is at
        most the target.

    Examples
    --------
    Four impostor scores and ``target_fmr=0.25``: one may match, so the cut sits just above
    the second highest (0.6):

    >>> from fairot.verification import fmr_threshold
    >>> y = [False, False, False, False, True]
    >>> t = fmr_threshold(y, [0.9, 0.6, 0.3, 0.1, 0.8], target_fmr=0.25)
    >>> 0.6 < t < 0.6 + 1e-15
    True
    """
    is_same, scores = check_pairs(y_true, y_pred)
    target = _check_target(target_fmr)
    check_both_classes(is_same, "fmr_threshold")
    return _threshold(scores[~is_same], target)[0]


@dataclass(frozen=True)
class VerificationRates:
    """Per-group FMR and FNMR at one global threshold (:func:`verification_rates`).

    Attributes
    ----------
    threshold : float
        A pair matches when its score is ``>=`` it (:func:`fmr_threshold`).
    target_fmr : float
    allowed_false_matches : int
        The :math:`k` of :func:`fmr_threshold`: impostor pairs allowed to match overall.
    by_group : pandas.DataFrame
        Index: the group names; columns ``n_genuine``, ``n_impostor``, ``false_matches``,
        ``false_non_matches``, ``fmr``, ``fnmr``.
    overall_fmr, overall_fnmr : float
        The rates over all pairs at the threshold.
    fmr_ratio, fnmr_ratio : float
        Highest over lowest group rate; ``inf`` when the lowest is 0 and the highest is not,
        ``nan`` when every group's rate is 0 (no error to compare; the reports say so).
    fmr_groups, fnmr_groups : tuple of (str, str)
        The groups with the highest and the lowest rate (first in group order on ties).

    Examples
    --------
    >>> from fairot.verification import verification_rates
    >>> y = [True, False, False, True, False, False]
    >>> s = [0.9, 0.8, 0.1, 0.25, 0.2, 0.3]
    >>> rates = verification_rates(y, s, sensitive_features=list("aaabbb"), target_fmr=0.25)
    >>> rates.by_group[["fmr", "fnmr"]].to_dict("index")
    {'a': {'fmr': 0.5, 'fnmr': 0.0}, 'b': {'fmr': 0.0, 'fnmr': 1.0}}
    """

    threshold: float
    target_fmr: float
    allowed_false_matches: int
    by_group: pd.DataFrame
    overall_fmr: float
    overall_fnmr: float
    fmr_ratio: float
    fnmr_ratio: float
    fmr_groups: tuple[str, str]
    fnmr_groups: tuple[str, str]

    def summary(self) -> dict[str, Any]:
        """The headline numbers as one flat dict (for tables and JSON)."""
        return {
            "threshold": self.threshold,
            "target_fmr": self.target_fmr,
            "allowed_false_matches": self.allowed_false_matches,
            "overall_fmr": self.overall_fmr,
            "overall_fnmr": self.overall_fnmr,
            "fmr_ratio": self.fmr_ratio,
            "fmr_highest_group": self.fmr_groups[0],
            "fmr_lowest_group": self.fmr_groups[1],
            "fnmr_ratio": self.fnmr_ratio,
            "fnmr_highest_group": self.fnmr_groups[0],
            "fnmr_lowest_group": self.fnmr_groups[1],
        }


def _ratio(rates: pd.Series) -> tuple[float, tuple[str, str]]:
    high, low = rates.max(), rates.min()
    groups = (str(rates.idxmax()), str(rates.idxmin()))
    if high == 0:
        return float("nan"), groups
    return (float("inf") if low == 0 else float(high / low)), groups


def _groups(sensitive_features: Any, n: int) -> list[tuple[str, np.ndarray]]:
    encoding = check_sensitive_features(sensitive_features, n)
    return list(zip(encoding.names, encoding.indices(), strict=True))


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def verification_rates(
    y_true, y_pred, *, sensitive_features, target_fmr: float = 1e-3
) -> VerificationRates:
    r"""Each group's FMR and FNMR at one threshold set for a target overall FMR (NIST FRVT).

    The threshold is :func:`fmr_threshold` on all impostor pairs; then, for each group
    :math:`g`, :math:`\mathrm{FMR}_g` and :math:`\mathrm{FNMR}_g` count the group's impostor
    pairs at or above it and genuine pairs below it, and the disparities are

    .. math::

        \frac{\max_g \mathrm{FMR}_g}{\min_g \mathrm{FMR}_g}, \qquad
        \frac{\max_g \mathrm{FNMR}_g}{\min_g \mathrm{FNMR}_g}.

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
        Whether each pair is the same person.
    y_pred : array-like of shape (n_pairs,)
        Pair scores (higher = more alike).
    sensitive_features : array-like of shape (n_pairs,) or (n_pairs, n_columns)
        Group of each pair; several columns form intersectional groups. At least two groups,
        each with genuine and impostor pairs.
    target_fmr : float in (0, 1), default=1e-3
        Overall false match rate at which the groups are read.

    Returns
    -------
    VerificationRates

    Examples
    --------
    See :class:`VerificationRates`.
    """
    is_same, scores = check_pairs(y_true, y_pred)
    target = _check_target(target_fmr)
    groups = _groups(sensitive_features, is_same.size)
    for name, idx in groups:
        check_both_classes(is_same[idx], f"group {name!r}")
    threshold, k = _threshold(scores[~is_same], target)
    match = scores >= threshold
    rows = {}
    for name, idx in groups:
        same, hit = is_same[idx], match[idx]
        n_genuine, n_impostor = int(same.sum()), int((~same).sum())
        false_matches, false_non_matches = int((hit & ~same).sum()), int((~hit & same).sum())
        rows[name] = {
            "n_genuine": n_genuine,
            "n_impostor": n_impostor,
            "false_matches": false_matches,
            "false_non_matches": false_non_matches,
            "fmr": false_matches / n_impostor,
            "fnmr": false_non_matches / n_genuine,
        }
    by_group = pd.DataFrame.from_dict(rows, orient="index")
    by_group.index.name = "group"
    fmr_ratio, fmr_groups = _ratio(by_group["fmr"])
    fnmr_ratio, fnmr_groups = _ratio(by_group["fnmr"])
    return VerificationRates(
        threshold=threshold,
        target_fmr=target,
        allowed_false_matches=k,
        by_group=by_group,
        overall_fmr=float(np.mean(match[~is_same])),
        overall_fnmr=float(np.mean(~match[is_same])),
        fmr_ratio=fmr_ratio,
        fnmr_ratio=fnmr_ratio,
        fmr_groups=fmr_groups,
        fnmr_groups=fnmr_groups,
    )


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def det_curves(y_true, y_pred, *, sensitive_features) -> dict[str, pd.DataFrame]:
    r"""Each group's detection error trade-off: FMR and FNMR at every threshold.

    At each distinct score :math:`t` of the group's pairs (every threshold where a rate
    changes), :math:`\mathrm{FMR}(t)` and :math:`\mathrm{FNMR}(t)` as in the module's
    definitions (a pair matches when :math:`s \ge t`). FMR falls and FNMR rises with
    :math:`t`; plotted on log axes this is the DET curve.

    Parameters
    ----------
    y_true : array-like of bool, shape (n_pairs,)
    y_pred : array-like of shape (n_pairs,)
    sensitive_features : array-like of shape (n_pairs,) or (n_pairs, n_columns)

    Returns
    -------
    dict of str to pandas.DataFrame
        Group name to a frame with columns ``threshold`` (increasing), ``fmr``, ``fnmr``.

    Examples
    --------
    >>> from fairot.verification import det_curves
    >>> curves = det_curves([True, False, True, False], [0.9, 0.2, 0.6, 0.7],
    ...                     sensitive_features=["a", "a", "b", "b"])
    >>> curves["b"].to_dict("list")
    {'threshold': [0.6, 0.7], 'fmr': [1.0, 1.0], 'fnmr': [0.0, 1.0]}
    """
    is_same, scores = check_pairs(y_true, y_pred)
    curves = {}
    for name, idx in _groups(sensitive_features, is_same.size):
        same, s = is_same[idx], scores[idx]
        check_both_classes(same, f"group {name!r}")
        genuine, impostor = np.sort(s[same]), np.sort(s[~same])
        thresholds = np.unique(s)
        matched = impostor.size - np.searchsorted(impostor, thresholds, side="left")
        fmr = matched / impostor.size
        fnmr = np.searchsorted(genuine, thresholds, side="left") / genuine.size
        curves[name] = pd.DataFrame({"threshold": thresholds, "fmr": fmr, "fnmr": fnmr})
    return curves
