r"""Per-group rates at a decision threshold and their disparities.

The threshold-based group metrics practitioners know from fairlearn and AIF360 (selection rate,
TPR, FPR, precision, AUC, calibration gap, disparate-impact ratio; MAE/RMSE/mean residual for
regression) and the demographic-parity and equalized-odds differences, next to the distributional
metrics of the seed papers. A decision is ``score > threshold``, the convention of
:func:`fairot.metrics.error_rate` (Err-.5 of the COT paper).

Every public function takes fairlearn's form ``metric(y_true, y_pred, *, sensitive_features,
sample_weight=None, ...)`` (see :mod:`fairot.metrics._calling`).

Undefined is never zero: a group without positive labels has no TPR, one without negative
labels no FPR, one without positive decisions no precision. Such a rate is NaN in the group
table with the reason in its ``undefined`` column; a difference compares the groups where the
rate exists and is itself undefined (NaN) when fewer than two do. fairlearn's ``MetricFrame``
rates read the empty confusion row as 0 (scikit-learn's ``confusion_matrix(...,
normalize="true")``); where that convention changes the answer,
:func:`equalized_odds_difference` says so with an
:class:`~fairot.exceptions.UndefinedRateWarning` naming the groups left out.

Internal surface (for :mod:`fairot.metrics.resampling`, which bootstraps these rates, and
:mod:`fairot.reporting`): ``check_rate_inputs``, ``rate_matrix``, :func:`rate_summary`,
:func:`undefined_groups`, :func:`groups_compared`, ``UNDEFINED_REASONS``; the public functions
are re-exported by :mod:`fairot.metrics`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.exceptions import UndefinedRateWarning
from fairot.metrics._calling import MSG_EMPTY_WEIGHT, group_metric
from fairot.metrics._scaled import residual_averages
from fairot.metrics.checks import UNIT_INTERVAL, check_binary_labels, check_threshold
from fairot.utils.arrays import check_array_1d, check_consistent_length, check_sample_weight
from fairot.utils.groups import GroupsMode
from fairot.utils.sensitive import check_sensitive_features
from fairot.utils.stacklevel import user_stacklevel

MSG_TASK = "task must be 'classification' or 'regression'; got {value!r}."
MSG_LABELS_NEEDED = "{metric} needs labels: y_true is None."

CLASSIFICATION_RATES = (
    "selection_rate",
    "tpr",
    "fpr",
    "precision",
    "auc",
    "calibration_gap",
    "disparate_impact",
)
REGRESSION_RATES = ("mae", "rmse", "mean_residual")
#: Rate -> why it does not exist for a group (its denominator is empty).
UNDEFINED_REASONS = {
    "tpr": "no positive labels",
    "fpr": "no negative labels",
    "precision": "no positive decisions",
    "auc": "one class only",
}
MSG_UNDEFINED = (
    "{metric}: {rate} is undefined for {groups} ({reason}); the {rate} gap compares {compared} "
    "of {total} groups{outcome}. fairlearn's MetricFrame reads an undefined rate as 0 and can "
    "differ here; merge small groups or report the gap with its group count."
)


def check_rate_inputs(y_true, y_pred, sensitive_features, task, group_mode, threshold):
    if task not in ("classification", "regression"):
        raise ValueError(MSG_TASK.format(value=task))
    pred = check_array_1d(
        y_pred, "y_pred", bounds=UNIT_INTERVAL if task == "classification" else None
    )
    enc = check_sensitive_features(sensitive_features, pred.shape[0], group_mode=group_mode)
    y = None
    if y_true is not None:
        y = (
            check_binary_labels(y_true)
            if task == "classification"
            else check_array_1d(y_true, "y_true")
        )
        check_consistent_length(y_true=y, y_pred=pred)
    if task == "classification":
        threshold = check_threshold(threshold)
    return y, pred, enc, threshold


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    # An empty denominator (a group without positives, negatives or selections) is undefined:
    # NaN here, named in the report's warnings rather than replaced by a made-up 0.
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def rate_matrix(
    y: np.ndarray | None,
    pred: np.ndarray,
    member: np.ndarray,
    task: str,
    threshold: float,
    weight: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Rates of every group for a batch of replicates.

    ``y`` and ``pred`` have shape (n_replicates, n_samples); ``member`` (n_samples, n_groups),
    dense or a ``scipy.sparse`` array, is the membership of each *position* (a stratified
    resample keeps every row's group);
    ``weight``, of the shape of ``pred``, weighs every count (``None``: each row counts 1).
    Returns arrays of shape (n_replicates, n_groups).
    """
    # Every rate is a ratio of (weighted) counts: weighing the indicator before the membership
    # product gives fairlearn's weighted rates, and integer weights those of replicated rows.
    ones = np.ones_like(pred) if weight is None else weight
    size = ones @ member
    out: dict[str, np.ndarray] = {}
    if task == "classification":
        decision = (pred > threshold).astype(float)
        selected = (decision * ones) @ member
        out["selection_rate"] = selected / size
        top = out["selection_rate"].max(axis=1, keepdims=True)
        out["disparate_impact"] = _ratio(
            out["selection_rate"], np.broadcast_to(top, selected.shape)
        )
        if y is not None:
            positive = y.astype(float)
            n_pos = (positive * ones) @ member
            true_pos = (positive * decision * ones) @ member
            false_pos = selected - true_pos
            correct = ((decision == positive) * ones) @ member
            out["tpr"] = _ratio(true_pos, n_pos)
            out["fpr"] = _ratio(false_pos, size - n_pos)
            out["precision"] = _ratio(true_pos, selected)
            out["calibration_gap"] = ((pred - positive) * ones) @ member / size
            out["accuracy"] = correct / size
    elif y is not None:
        out["mae"], out["rmse"], out["mean_residual"] = residual_averages(y, pred, member, weight)
    return out


def _group_auc(y: np.ndarray, scores: np.ndarray, weight: np.ndarray | None) -> float:
    """ROC AUC by the (weighted) Mann-Whitney statistic, ties counting half; NaN with one class.

    Each positive scores the weight of the negatives below it plus half of those tied with it,
    which for unit weights is the mid-rank statistic and otherwise scikit-learn's weighted AUC.
    """
    w = np.ones(y.shape[0]) if weight is None else weight
    positive = np.where(y == 1, w, 0.0)
    negative = w - positive
    if not (positive.max(initial=0.0) > 0 and negative.max(initial=0.0) > 0):
        return float("nan")
    # Each class's weights divided by their largest first: the statistic is invariant to
    # the scale of either class's weights, and the product of the two totals no longer
    # underflows to 0 (weights of 1e-300 gave 0/0) or overflows.
    positive = positive / positive.max()
    negative = negative / negative.max()
    levels, block = np.unique(scores, return_inverse=True)
    pos_at = np.bincount(block, weights=positive, minlength=levels.shape[0]) / positive.sum()
    neg_at = np.bincount(block, weights=negative, minlength=levels.shape[0]) / negative.sum()
    neg_below = np.cumsum(neg_at) - neg_at
    return float(np.sum(pos_at * (neg_below + 0.5 * neg_at)))


@group_metric("y_true", "y_pred", backend=False)
def group_rates(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    task: str = "classification",
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> pd.DataFrame:
    r"""Per-group rates at a decision threshold (classification) or residual errors (regression).

    Classification, with decisions :math:`\hat y = \mathbb 1\{s > t\}`: ``selection_rate``
    :math:`P(\hat y = 1 \mid a)`, ``disparate_impact`` (selection rate over the highest group's),
    and with labels ``tpr``, ``fpr``, ``precision``, ``auc`` (threshold-free ROC AUC of the scores)
    and ``calibration_gap`` :math:`E[s - y \mid a]` (calibration in the large: positive when the
    group's scores overstate its positive rate). Regression, with responses: ``mae``, ``rmse`` and
    ``mean_residual`` :math:`E[y - \hat y \mid a]`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Binary labels or responses; ``None`` leaves out every column that needs them.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (classification) or predictions (regression).
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership, one or several columns (a required keyword, as in fairlearn).
        An encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights, a positive total in every group: every rate is a ratio of
        weighted counts (fairlearn's weighted rates; integer weights give the rates of the
        replicated rows).
    task : {"classification", "regression"}, default="classification"
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns form groups.
    threshold : float in [0, 1], default=0.5
        Decision threshold.

    Returns
    -------
    pandas.DataFrame
        One row per group (index ``group``). A rate with an empty denominator (the TPR of a
        group without positive labels, its FPR without negative labels, its precision without
        positive decisions, its AUC with one class) is undefined: NaN, never 0, and the column
        ``undefined`` (classification with labels) says which rates and why, e.g.
        ``"tpr (no positive labels); auc (one class only)"``.

    Examples
    --------
    >>> from fairot.metrics import group_rates
    >>> y, s, g = [0, 1, 1, 0], [0.2, 0.9, 0.6, 0.7], ["a", "a", "b", "b"]
    >>> rates = group_rates(y, s, sensitive_features=g)
    >>> rates.loc["a", ["selection_rate", "tpr", "fpr"]].tolist()
    [0.5, 1.0, 0.0]
    >>> rates.loc["b", ["selection_rate", "tpr", "fpr"]].tolist()
    [1.0, 1.0, 1.0]
    """
    y, pred, enc, threshold = check_rate_inputs(
        y_true, y_pred, sensitive_features, task, group_mode, threshold
    )
    w = check_sample_weight(sample_weight, pred.shape[0])
    indices = enc.indices()
    if w is not None:
        for idx, name in zip(indices, enc.names, strict=True):
            if not w[idx].sum() > 0:
                raise ValueError(MSG_EMPTY_WEIGHT.format(group=name))
    member = enc.sparse_membership  # linear in the rows, whatever the number of groups
    rates = rate_matrix(
        None if y is None else y[None, :],
        pred[None, :],
        member,
        task,
        threshold,
        None if w is None else w[None, :],
    )
    columns = CLASSIFICATION_RATES if task == "classification" else REGRESSION_RATES
    table = pd.DataFrame(index=pd.Index(enc.names, name="group"))
    for column in columns:
        if column == "auc" and y is not None:
            table[column] = [
                _group_auc(y[idx], pred[idx], None if w is None else w[idx]) for idx in indices
            ]
        elif column in rates:
            table[column] = rates[column][0]
    if task == "classification" and y is not None:
        table["undefined"] = _undefined_column(table)
    return table


@group_metric("y_true", "y_pred", backend=False)
def demographic_parity_difference(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> float:
    r"""Largest difference of selection rates between groups at a threshold.

    .. math:: \max_a P(\hat y = 1 \mid a) - \min_a P(\hat y = 1 \mid a),
       \quad \hat y = \mathbb 1\{s > t\}

    fairlearn's ``demographic_parity_difference`` of the decisions, in fairlearn's calling form.
    It looks at one threshold; the COT paper's SDD (:func:`strong_demographic_disparity`)
    integrates over all of them.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels; unused (checked for length when given).
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (or 0/1 decisions).
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership (a required keyword).
        An encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (weighted selection rates).
    group_mode : {"intersection", "marginal"}, default="intersection"
    threshold : float in [0, 1], default=0.5

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.metrics import demographic_parity_difference
    >>> s, g = [0.2, 0.9, 0.6, 0.7], ["a", "a", "b", "b"]
    >>> demographic_parity_difference(None, s, sensitive_features=g)
    0.5
    """
    rates = group_rates(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        sample_weight=sample_weight,
        group_mode=group_mode,
        threshold=threshold,
    )["selection_rate"]
    return float(rates.max() - rates.min())


@group_metric("y_true", "y_pred", labels_optional=False, backend=False)
def equalized_odds_difference(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    sample_weight: ArrayLike | None = None,
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
) -> float:
    r"""The larger of the between-group TPR and FPR differences at a threshold.

    .. math:: \max\big(\max_a \mathrm{TPR}_a - \min_a \mathrm{TPR}_a,\;
       \max_a \mathrm{FPR}_a - \min_a \mathrm{FPR}_a\big)

    fairlearn's ``equalized_odds_difference`` (``agg="worst_case"``) of the decisions
    :math:`\mathbb 1\{s > t\}`, in fairlearn's calling form. A group whose TPR (FPR) is
    undefined, having no positive (negative) label, is left out of that gap, and a gap with
    fewer than two groups defined is undefined; the result is the larger of the defined gaps
    (NaN only when neither is defined). Where a group is left out, an
    :class:`~fairot.exceptions.UndefinedRateWarning` names it and says how many groups each gap
    compares: fairlearn reads the missing rate as 0 there (scikit-learn's
    ``confusion_matrix(..., normalize="true")``) and so can answer differently. When every
    group has both labels the two agree exactly.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_pred : array-like of shape (n_samples,)
        Scores in [0, 1] (or 0/1 decisions).
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership (a required keyword).
        An encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative sample weights (weighted TPR and FPR).
    group_mode : {"intersection", "marginal"}, default="intersection"
    threshold : float in [0, 1], default=0.5

    Returns
    -------
    float

    Warns
    -----
    UndefinedRateWarning
        When a group has no positive (or no negative) labels.

    Examples
    --------
    >>> from fairot.metrics import equalized_odds_difference
    >>> y, s, g = [0, 1, 1, 0], [0.2, 0.9, 0.6, 0.7], ["a", "a", "b", "b"]
    >>> equalized_odds_difference(y, s, sensitive_features=g)
    1.0

    Every row positive: the FPR gap does not exist, the TPR gap does (fairlearn gives the same):

    >>> import warnings
    >>> from fairot.exceptions import UndefinedRateWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", UndefinedRateWarning)
    ...     equalized_odds_difference([1, 1, 1, 1], s, sensitive_features=g)
    0.5
    """
    if y_true is None:
        raise ValueError(MSG_LABELS_NEEDED.format(metric="equalized_odds_difference"))
    rates = group_rates(
        y_true,
        y_pred,
        sensitive_features=sensitive_features,
        sample_weight=sample_weight,
        group_mode=group_mode,
        threshold=threshold,
    )
    gaps = _spread(rates[["tpr", "fpr"]].to_numpy().T)
    _warn_undefined("equalized_odds_difference", rates)
    # The larger of the *defined* gaps: one undefined gap does not make the other one unknown.
    return float(np.fmax(gaps[0], gaps[1]))


def _warn_undefined(metric: str, rates: pd.DataFrame) -> None:
    """One :class:`UndefinedRateWarning` per rate undefined for some group."""
    total = rates.shape[0]
    for rate, groups in undefined_groups(rates[["tpr", "fpr"]]).items():
        compared = total - len(groups)
        outcome = "" if compared >= 2 else ", so that gap is undefined"
        warnings.warn(
            MSG_UNDEFINED.format(
                metric=metric,
                rate=rate.upper(),
                groups=", ".join(groups),
                reason=UNDEFINED_REASONS[rate],
                compared=compared,
                total=total,
                outcome=outcome,
            ),
            UndefinedRateWarning,
            stacklevel=user_stacklevel(),
        )


def _spread(values: np.ndarray) -> np.ndarray:
    """Max minus min over the last axis among the defined values; NaN with fewer than two.

    One group with a defined rate has nothing to be compared with: its gap is undefined, not a
    perfect 0.
    """
    finite = np.isfinite(values)
    high = np.where(finite, values, -np.inf).max(axis=-1)
    low = np.where(finite, values, np.inf).min(axis=-1)
    return np.where(finite.sum(axis=-1) >= 2, high - low, np.nan)


def undefined_groups(rates: pd.DataFrame) -> dict[str, list[str]]:
    """Rate -> the groups (index of ``rates``) where it is undefined, for the rates present.

    Parameters
    ----------
    rates : pandas.DataFrame
        :func:`~fairot.metrics.group_rates`' table (one row per group).

    Returns
    -------
    dict of str to list of str
        Only the rates undefined for at least one group.

    Examples
    --------
    >>> import warnings
    >>> from fairot.metrics import group_rates
    >>> from fairot.metrics.resampling import undefined_groups
    >>> y_true, y_pred = [1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 1, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b"]  # group b has no positive label
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")  # UndefinedRateWarning: b's TPR and AUC
    ...     rates = group_rates(y_true, y_pred, sensitive_features=groups)
    >>> undefined_groups(rates)
    {'tpr': ['b'], 'auc': ['b']}
    """
    return {
        column: [str(g) for g in rates.index[rates[column].isna()]]
        for column in UNDEFINED_REASONS
        if column in rates.columns and rates[column].isna().any()
    }


def groups_compared(rates: pd.DataFrame) -> dict[str, int]:
    """Rate -> how many groups a difference of it compares (those where it is defined).

    Parameters
    ----------
    rates : pandas.DataFrame
        :func:`~fairot.metrics.group_rates`' table (one row per group).

    Returns
    -------
    dict of str to int

    Examples
    --------
    >>> import warnings
    >>> from fairot.metrics import group_rates
    >>> from fairot.metrics.resampling import groups_compared
    >>> y_true, y_pred = [1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 1, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b"]  # group b has no positive label
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     rates = group_rates(y_true, y_pred, sensitive_features=groups)
    >>> groups_compared(rates)["tpr"]  # a TPR gap would compare one group: undefined
    1
    """
    return {
        column: int(rates[column].notna().sum())
        for column in ("selection_rate", *UNDEFINED_REASONS)
        if column in rates.columns
    }


def _undefined_column(rates: pd.DataFrame) -> list[str]:
    """Per group: the undefined rates and why (``""`` when every rate exists)."""
    out = []
    for group in rates.index:
        missing = [
            f"{column} ({reason})"
            for column, reason in UNDEFINED_REASONS.items()
            if column in rates.columns and np.isnan(rates.loc[group, column])
        ]
        out.append("; ".join(missing))
    return out


def rate_summary(rates: dict[str, np.ndarray], task: str) -> dict[str, np.ndarray]:
    r"""Summary disparities of a batch of per-group rates (arrays of shape (..., n_groups)).

    The demographic-parity difference :math:`\max_a r_a - \min_a r_a` and ratio
    :math:`\min_a r_a / \max_a r_a` of the selection rates, and the equalized-odds difference
    (the larger of the TPR and FPR differences) where ``"tpr"`` is given, each over the last
    axis (the groups); NaN where it is undefined (a difference over fewer than two groups with
    the rate, a ratio whose largest selection rate is 0).

    Parameters
    ----------
    rates : dict of str to ndarray of shape (..., n_groups)
        ``"selection_rate"``, and optionally ``"tpr"`` and ``"fpr"``.
    task : {"classification", "regression"}
        Regression has no rate summary (an empty dict).

    Returns
    -------
    dict of str to ndarray of shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics.resampling import rate_summary
    >>> replicates = {"selection_rate": np.array([[0.2, 0.5], [0.3, 0.3]])}
    >>> summary = rate_summary(replicates, "classification")
    >>> summary["demographic_parity_difference"], summary["demographic_parity_ratio"]
    (array([0.3, 0. ]), array([0.4, 1. ]))
    """
    summary: dict[str, np.ndarray] = {}
    if task == "classification":
        selection = rates["selection_rate"]
        summary["demographic_parity_difference"] = _spread(selection)
        top = selection.max(axis=-1)
        summary["demographic_parity_ratio"] = _ratio(selection.min(axis=-1), top)
        if "tpr" in rates:
            summary["equalized_odds_difference"] = np.fmax(
                _spread(rates["tpr"]), _spread(rates["fpr"])
            )
    return summary
