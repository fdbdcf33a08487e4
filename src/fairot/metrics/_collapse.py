r"""Telling a fair model from a degenerate one: score spread and AUC against the start.

A fairness penalty or constraint can be met by a model that no longer separates anyone: every
score equal (Wass1 = 0, "perfectly fair") or scores that rank the labels at chance. Each
mitigation of fairot compares its fitted scores with those of the model it started from (the
raw model :math:`\theta^*`, the warm-up model, the first batch) with :func:`diagnose_collapse`
and raises or warns with :func:`degenerate_model_message` (the warning class is
:class:`fairot.exceptions.DegenerateModelWarning`). Two signals:

- **spread**: the (weighted) standard deviation of the fitted scores fell below
  ``spread_ratio`` (0.1) times the start's;
- **ranking**: the ROC AUC of the fitted scores against the labels is near chance, within
  :math:`\max(b,\ 0.2\,|\mathrm{AUC}_0 - 1/2|)` of 1/2 (less than a fifth of the start's
  ranking skill left), while the start's was outside twice the chance band :math:`b`. The band
  is :math:`b = \max(0.02,\ 2\,\sigma_0)` with
  :math:`\sigma_0 = \sqrt{(n_1 + n_0 + 1) / (12 n_1 n_0)}`, the standard deviation of the
  Mann-Whitney AUC of uninformative scores (:math:`n_1` positives, :math:`n_0` negatives), so
  that small samples do not cry wolf.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from fairot.metrics._rates import _group_auc
from fairot.metrics.checks import check_binary_labels
from fairot.utils.arrays import check_array_1d, check_consistent_length, check_sample_weight

__all__ = [
    "CHANCE_AUC",
    "CHANCE_AUC_MARGIN",
    "COLLAPSE_SPREAD_RATIO",
    "SKILL_RATIO",
    "CollapseDiagnosis",
    "chance_ranking",
    "degenerate_model_message",
    "diagnose_collapse",
    "diagnose_fit",
]

#: A fitted spread below this fraction of the start's is a collapse to a constant.
COLLAPSE_SPREAD_RATIO = 0.1
#: The smallest half-width of the chance band of the AUC around 1/2.
CHANCE_AUC_MARGIN = 0.02
#: A held-out AUC at or below this is read as chance: the audit's verdict block flags it, the
#: scorers' degeneracy flag fires, and ``fairot mitigate`` refuses to write such a model while
#: the raw model's AUC was above it (override: ``--allow-degenerate``).
CHANCE_AUC = 0.55
#: A fitted AUC with less than this share of the start's distance from 1/2 is near chance.
SKILL_RATIO = 0.2

MSG_DEGENERATE = (
    "{name}: degenerate model, {what}{cause}. It meets the fairness target by no longer "
    "telling anyone apart. Try {advice}, and check that the sensitive attribute is not the "
    "only signal in X (then no model fair in distribution can rank better than chance)."
)
MSG_SPREAD = "the standard deviation of its scores is {spread:.3g} against {start:.3g} at the start"
MSG_AUC = (
    "its AUC is {auc:.3f}, near chance (0.5; sampling band +- {band:.3f}), against {start:.3f} "
    "at the start"
)
MSG_START_LENGTH = (
    "start_scores must score the rows of y_pred (length {n}) when y_true or sample_weight is "
    "given; got length {m}."
)


class CollapseDiagnosis(NamedTuple):
    """What :func:`diagnose_collapse` measured, and its verdict.

    Attributes
    ----------
    spread, start_spread : float
        Weighted standard deviation of the fitted and the start scores.
    auc, start_auc : float
        ROC AUC of the fitted and the start scores against the labels (NaN without labels or
        with one class).
    chance_band : float
        Half-width of the band around 1/2 read as chance (NaN without labels).
    spread_collapsed : bool
        The spread fell below ``spread_ratio`` times the start's.
    auc_collapsed : bool
        The AUC is near chance (within the band, or with less than a fifth of the start's
        distance from 1/2) while the start's was outside twice the band.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics import diagnose_collapse
    >>> y = np.tile([0, 1], 100)
    >>> start = np.where(y == 1, 0.8, 0.2) + np.linspace(0, 0.1, 200)
    >>> d = diagnose_collapse(y, np.full(200, 0.5) + 1e-6 * start, start_scores=start)
    >>> d.spread_collapsed, d.collapsed
    (True, True)
    """

    spread: float
    start_spread: float
    auc: float
    start_auc: float
    chance_band: float
    spread_collapsed: bool
    auc_collapsed: bool

    @property
    def collapsed(self) -> bool:
        """Either signal fired."""
        return self.spread_collapsed or self.auc_collapsed

    def describe(self) -> str:
        """The signals that fired, in words (empty when none did)."""
        parts = []
        if self.spread_collapsed:
            parts.append(MSG_SPREAD.format(spread=self.spread, start=self.start_spread))
        if self.auc_collapsed:
            parts.append(MSG_AUC.format(auc=self.auc, band=self.chance_band, start=self.start_auc))
        return "; ".join(parts)


def _spread(scores: np.ndarray, weight: np.ndarray | None) -> float:
    if weight is None:
        return float(np.std(scores))
    mean = np.average(scores, weights=weight)
    return float(np.sqrt(np.average((scores - mean) ** 2, weights=weight)))


def diagnose_collapse(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    start_scores: ArrayLike,
    sample_weight: ArrayLike | None = None,
    spread_ratio: float = COLLAPSE_SPREAD_RATIO,
) -> CollapseDiagnosis:
    r"""Tell whether a mitigation collapsed the model it started from.

    Compares the fitted scores ``y_pred`` with the scores ``start_scores`` of the starting
    (raw) model on the same rows: a collapse is a standard deviation below ``spread_ratio``
    times the start's, or (with labels) an AUC near chance while the start's was not,

    .. math::

        |\mathrm{AUC} - \tfrac12| \le \max\big(b,\ 0.2\,|\mathrm{AUC}_0 - \tfrac12|\big)
        \quad\text{and}\quad 2b < |\mathrm{AUC}_0 - \tfrac12|, \qquad
        b = \max\Big(0.02,\ 2\sqrt{\tfrac{n_1 + n_0 + 1}{12\, n_1 n_0}}\Big).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Binary labels; ``None`` checks the spread only.
    y_pred : array-like of shape (n_samples,)
        The fitted model's scores.
    start_scores : array-like of shape (n_samples,) or (n_start,)
        The starting model's scores on the same rows; without labels and weights, any sample
        whose spread is the reference (e.g. a fixed target distribution).
    sample_weight : array-like of shape (n_samples,), optional
        Row weights of the spread and the AUC.
    spread_ratio : float, default=0.1
        The fraction of the start's spread below which the scores have collapsed.

    Returns
    -------
    CollapseDiagnosis

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 0, 0, 1, 1, 1] * 20)
    >>> start = np.where(y == 1, 0.8, 0.2) + np.linspace(0, 0.01, y.size)
    >>> diagnose_collapse(y, np.full(y.size, 0.47), start_scores=start).collapsed
    True
    >>> diagnose_collapse(y, 0.5 * start + 0.25, start_scores=start).collapsed
    False
    """
    scores = check_array_1d(y_pred, "y_pred")
    start = check_array_1d(start_scores, "start_scores")
    weight = check_sample_weight(sample_weight, scores.shape[0])
    if start.shape[0] != scores.shape[0] and (y_true is not None or weight is not None):
        raise ValueError(MSG_START_LENGTH.format(n=scores.shape[0], m=start.shape[0]))
    spread = _spread(scores, weight)
    start_spread = _spread(start, None if start.shape[0] != scores.shape[0] else weight)
    spread_collapsed = bool(start_spread > 0 and spread < spread_ratio * start_spread)
    auc = start_auc = band = float("nan")
    auc_collapsed = False
    if y_true is not None:
        y = check_binary_labels(y_true)
        check_consistent_length(y_true=y, y_pred=scores)
        n1 = int(np.count_nonzero(y))
        n0 = y.shape[0] - n1
        if n1 and n0:
            auc, start_auc = _group_auc(y, scores, weight), _group_auc(y, start, weight)
            band = max(CHANCE_AUC_MARGIN, 2.0 * math.sqrt((n1 + n0 + 1) / (12.0 * n1 * n0)))
            skill, start_skill = abs(auc - 0.5), abs(start_auc - 0.5)
            near_chance = skill <= max(band, SKILL_RATIO * start_skill)
            auc_collapsed = bool(near_chance and 2.0 * band < start_skill)
    return CollapseDiagnosis(
        spread, start_spread, auc, start_auc, band, spread_collapsed, auc_collapsed
    )


def diagnose_fit(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    start_scores: ArrayLike,
    sample_weight: ArrayLike | None = None,
    held_out: Callable[[], tuple] | None = None,
) -> CollapseDiagnosis:
    """The collapse check every fairot classifier runs at the end of ``fit``.

    :func:`diagnose_collapse` on the training rows; when they show no collapse and held-out
    rows exist, on those too. A model can keep its ranking on the rows it fitted and lose it on
    rows it never saw (a fair MLP at chance on held-out data while its training AUC stays
    high), so the held-out rows have the last word.

    Parameters
    ----------
    y_true, y_pred, start_scores, sample_weight
        The training rows, as in :func:`diagnose_collapse`.
    held_out : callable, optional
        Returns ``(y_true, y_pred, start_scores)`` of the held-out rows (an ``eval_set``, an
        early-stopping split); called only when the training rows show no collapse.

    Returns
    -------
    CollapseDiagnosis
        The held-out rows' diagnosis when they were read, else the training rows'.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics import diagnose_fit
    >>> y = np.tile([0, 1], 100)
    >>> start = np.where(y == 1, 0.8, 0.2) + np.linspace(0, 0.1, 200)
    >>> rng = np.random.default_rng(0)
    >>> diagnose_fit(y, start, start_scores=start,
    ...              held_out=lambda: (y, rng.uniform(size=200), start)).collapsed
    True
    """
    diagnosis = diagnose_collapse(
        y_true, y_pred, start_scores=start_scores, sample_weight=sample_weight
    )
    if diagnosis.collapsed or held_out is None:
        return diagnosis
    held_y, held_scores, held_start = held_out()
    return diagnose_collapse(held_y, held_scores, start_scores=held_start)


def chance_ranking(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sample_weight: ArrayLike | None = None,
    chance: float = CHANCE_AUC,
) -> float:
    r"""1.0 when the scores rank the labels at or below chance (AUC <= ``chance``), else 0.0.

    The degeneracy flag of model selection: scored on each held-out fold by
    :data:`~fairot.metrics.degenerate_scorer`, its mean in ``cv_results_`` is the share of folds
    where the candidate ranked at chance, and :func:`~fairot.metrics.within_fairness_budget`
    never chooses a candidate flagged in any fold. A constant model (AUC 1/2) is flagged; so
    is one ranking the labels backwards.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_pred : array-like of shape (n_samples,)
        Scores (any monotone transform of them gives the same answer).
    sample_weight : array-like of shape (n_samples,), optional
        Row weights of the AUC.
    chance : float, default=CHANCE_AUC (0.55)
        The AUC at or below which the ranking is read as chance.

    Returns
    -------
    float
        1.0 (degenerate) or 0.0; NaN when the labels hold one class (no AUC).

    Examples
    --------
    >>> from fairot.metrics import chance_ranking
    >>> chance_ranking([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.5]), chance_ranking([0, 1], [0.2, 0.9])
    (1.0, 0.0)
    """
    y = check_binary_labels(y_true)
    scores = check_array_1d(y_pred, "y_pred")
    check_consistent_length(y_true=y, y_pred=scores)
    weight = check_sample_weight(sample_weight, scores.shape[0])
    auc = _group_auc(y, scores, weight)
    if math.isnan(auc):
        return float("nan")
    return 1.0 if auc <= chance else 0.0


def degenerate_model_message(
    name: str, diagnosis: CollapseDiagnosis, advice: str, cause: str = ""
) -> str:
    """The message of a :class:`~fairot.exceptions.DegenerateModelWarning` (or error).

    Parameters
    ----------
    name : str
        The method (``"COTClassifier"``, ``"FairTrainer"``...).
    diagnosis : CollapseDiagnosis
        What :func:`diagnose_collapse` found.
    advice : str
        The method's settings to change, e.g. ``"a smaller step_size (now 0.1)"``.
    cause : str, default=""
        What the method knows of the cause, appended to the diagnosis (e.g. ``" (its target
        is itself near-constant)"``).

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics import degenerate_model_message, diagnose_collapse
    >>> start = np.linspace(0, 1, 50)
    >>> d = diagnose_collapse(None, 0.5 + 1e-6 * start, start_scores=start)
    >>> degenerate_model_message("COTClassifier", d, "a smaller step_size")
    'COTClassifier: degenerate model, the standard deviation of its scores is ...'
    """
    return MSG_DEGENERATE.format(name=name, what=diagnosis.describe(), cause=cause, advice=advice)
