r"""The tolerance path of a classifier: accuracy and fairness along :math:`\tau`.

For :class:`~fairot.classification.QuantileParityPostProcessor` the base model and the group
ECDFs are fitted once and every :math:`\tau` reuses them (the map
:math:`\tau s + (1 - \tau) Q_{\bar S}(F_a(s))` changes only in :math:`\tau`); any other
estimator with a ``tau`` parameter is refitted per tolerance. For
:class:`~fairot.classification.RateConstrainedClassifier` the path runs along its budget
(``budgets``): the probability model is fitted once and only the multipliers are solved per
budget (:meth:`~fairot.classification.RateConstrainedClassifier.with_budget`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

from fairot.classification._postprocessing import QuantileParityPostProcessor
from fairot.classification._rate_constrained import RateConstrainedClassifier
from fairot.classification._rate_program import check_budget
from fairot.metrics import demographic_parity_difference, wass1
from fairot.metrics.plotting import plot_path_table
from fairot.transport import check_tau
from fairot.utils.arrays import check_array_1d

__all__ = ["ClassificationPath", "fairness_accuracy_path", "plot_path"]

MSG_NO_TAU = (
    "{name} has no tau parameter; the tolerance path needs an estimator whose tau is the "
    "fraction of the raw disparity kept (QuantileParityPostProcessor, COTClassifier, "
    "DOTClassifier)."
)
MSG_TAUS_OR_BUDGETS = "{name} takes {wanted}= (and not {other}=): {why}."
MSG_TEST_GROUPS = "X_test was given without y_test and sensitive_features_test; give all three."
PATH_COLUMNS = ("accuracy", "roc_auc", "log_loss", "dp_difference", "wass1")


@dataclass
class ClassificationPath:
    """A tolerance path fitted by :func:`fairness_accuracy_path`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per tolerance: ``tau`` (or the budget, ``max_difference`` or ``min_ratio``,
        for :class:`RateConstrainedClassifier`), ``accuracy`` (at 0.5), ``roc_auc``, ``log_loss``,
        ``dp_difference`` (largest gap in positive rates at 0.5) and ``wass1`` (sum over groups
        of the :math:`W_1` to the groups' barycenter), on the test data when given, else on the
        fit data (then in-sample, optimistic); ``data`` says which.
    estimators : list
        A fitted estimator per tolerance (for DPP they share the fitted base model).
    unadjusted : dict
        The same measures of the raw model's scores.

    Examples
    --------
    See :func:`fairness_accuracy_path`.
    """

    table: pd.DataFrame
    estimators: list
    unadjusted: dict


def _measures(
    y,
    scores: np.ndarray,
    classes: np.ndarray,
    sensitive_features,
    ranking: np.ndarray | None = None,
    probabilities: np.ndarray | None = None,
) -> dict:
    """Accuracy and disparity of ``scores > 0.5``; AUC of ``ranking``; log-loss.

    The log-loss is that of ``probabilities``; ``ranking`` and ``probabilities`` are ``scores``
    unless given.
    """
    positive = np.asarray(y) == classes[1]
    predicted = scores > 0.5
    ranking = scores if ranking is None else ranking
    probabilities = scores if probabilities is None else probabilities
    clipped = np.clip(probabilities, 1e-15, 1 - 1e-15)
    return {
        "accuracy": float(accuracy_score(positive, predicted)),
        "roc_auc": float(roc_auc_score(positive, ranking)),
        "log_loss": float(log_loss(positive, clipped, labels=[0, 1])),
        "dp_difference": float(
            demographic_parity_difference(None, scores, sensitive_features=sensitive_features)
        ),
        "wass1": float(wass1(None, scores, sensitive_features=sensitive_features)),
    }


def fairness_accuracy_path(
    estimator,
    X,
    y,
    *,
    sensitive_features,
    taus=None,
    budgets=None,
    sample_weight=None,
    X_test=None,
    y_test=None,
    sensitive_features_test=None,
) -> ClassificationPath:
    r"""Fit a classifier at each tolerance :math:`\tau` and measure accuracy against fairness.

    The classification counterpart of :func:`fairot.regression.fairness_accuracy_path`: the
    same :math:`\tau` (the fraction of the raw disparity kept; ``1`` the raw model, ``0`` full
    parity), measured by accuracy, AUC and log-loss against the demographic-parity
    difference and Wass1.

    Parameters
    ----------
    estimator : estimator
        A :class:`QuantileParityPostProcessor`, :class:`COTClassifier`, :class:`DOTClassifier` or
        :class:`RateConstrainedClassifier`: the template (cloned). Its ``tau`` is replaced along the
        path (COT and DOT are refitted per tolerance; ``unadjusted`` is then empty). For
        :class:`RateConstrainedClassifier`, its budget (``max_difference``, or ``min_ratio`` where
        the template sets it) is replaced by each of ``budgets``, with one fit of the probability
        model; its AUC is that of ``decision_function``, its log-loss that of the probability
        model's :math:`\eta` (``base_scores``), the same at every budget.
    X, y : array-like
        Fit data, as for the estimator's ``fit``.
    sensitive_features : array-like, DataFrame, dict, str or list of str
        Groups of the fit rows.
    taus : array-like of float in [0, 1]
        Tolerances, in the order of the table's rows (every estimator but
        :class:`RateConstrainedClassifier`).
    budgets : array-like of float
        The budgets of a :class:`RateConstrainedClassifier` (in [0, 1] for
        ``max_difference``, (0, 1] for ``min_ratio``), in the order of the table's rows.
    sample_weight : array-like of shape (n_samples,), optional
        Passed to ``fit``.
    X_test, y_test, sensitive_features_test : optional
        Held-out data to measure on (recommended: on the fit data DPP is exactly fair at
        ``tau=0`` by construction).

    Returns
    -------
    ClassificationPath

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.classification import QuantileParityPostProcessor, fairness_accuracy_path
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 600)
    >>> X = np.column_stack([rng.normal(a, 1.0), rng.normal(size=600)])
    >>> y = (X[:, 0] + rng.normal(0, 1, 600) > 0.5).astype(int)
    >>> path = fairness_accuracy_path(
    ...     QuantileParityPostProcessor(), X[:400], y[:400], sensitive_features=a[:400],
    ...     taus=[0.0, 0.5, 1.0], X_test=X[400:], y_test=y[400:],
    ...     sensitive_features_test=a[400:],
    ... )
    >>> path.table["tau"].tolist(), len(path.estimators)
    ([0.0, 0.5, 1.0], 3)
    >>> bool(path.table["wass1"].is_monotonic_increasing)
    True
    """
    rate = isinstance(estimator, RateConstrainedClassifier)
    if rate and (budgets is None or taus is not None):
        raise TypeError(
            MSG_TAUS_OR_BUDGETS.format(
                name="RateConstrainedClassifier",
                wanted="budgets",
                other="taus",
                why="its tolerance is its budget, max_difference or min_ratio",
            )
        )
    if not rate and (budgets is not None or taus is None):
        raise TypeError(
            MSG_TAUS_OR_BUDGETS.format(
                name=type(estimator).__name__,
                wanted="taus",
                other="budgets",
                why="budgets are the max_difference or min_ratio of RateConstrainedClassifier",
            )
        )
    if rate:
        knob = "min_ratio" if estimator.min_ratio is not None else "max_difference"
        values = [float(b) for b in check_array_1d(budgets, "budgets")]
        for value in values:
            check_budget(*((value, None) if knob == "max_difference" else (None, value)))
    else:
        knob = "tau"
        values = [check_tau(float(t)) for t in check_array_1d(taus, "taus")]
        if "tau" not in estimator.get_params():
            raise TypeError(MSG_NO_TAU.format(name=type(estimator).__name__))
    held_out = X_test is not None
    if held_out and (y_test is None or sensitive_features_test is None):
        raise ValueError(MSG_TEST_GROUPS)
    X_eval, y_eval, sf_eval = (
        (X_test, y_test, sensitive_features_test) if held_out else (X, y, sensitive_features)
    )
    estimators = []
    fit = {"sensitive_features": sensitive_features, "sample_weight": sample_weight}
    if rate and values:
        # One probability model; only the multipliers are solved per budget.
        budget = {"max_difference": None, "min_ratio": None, knob: values[0]}
        base = clone(estimator).set_params(**budget)
        base.fit(X, y, **fit)
        estimators = [base.with_budget(**{knob: value}) for value in values]
    elif isinstance(estimator, QuantileParityPostProcessor):
        base = clone(estimator).set_params(tau=0.0)
        base.fit(X, y, **fit)
        for tau in values:
            # Only tau changes between the points: the fitted statistics are shared.
            model = copy.copy(base)
            model.tau = model.tau_ = tau
            estimators.append(model)
    else:
        for tau in values:
            model = clone(estimator).set_params(tau=tau)
            model.fit(X, y, **fit)
            estimators.append(model)
    rows = []
    for value, model in zip(values, estimators, strict=True):
        if rate:
            scores = model.predict_proba(X_eval)[:, 1]
            extra = {
                "ranking": model.decision_function(X_eval),
                "probabilities": model.base_scores(X_eval),
            }
        else:
            scores = model.predict_proba(X_eval, sensitive_features=sf_eval)[:, 1]
            extra = {}
        measures = _measures(y_eval, scores, model.classes_, sf_eval, **extra)
        rows.append({knob: value, **measures})
    table = pd.DataFrame(rows, columns=[knob, *PATH_COLUMNS])
    table["data"] = "test" if held_out else "fit"
    unadjusted = {}
    first = estimators[0] if estimators else None
    if first is not None and not rate and hasattr(first, "base_scores"):
        raw = first.base_scores(X_eval)
        unadjusted = _measures(y_eval, raw, first.classes_, sf_eval)
    return ClassificationPath(table=table, estimators=estimators, unadjusted=unadjusted)


def plot_path(
    path,
    *,
    x: str = "dp_difference",
    y: str = "accuracy",
    label: str | None = None,
    annotate: bool = True,
    unadjusted: dict | None = None,
    ax=None,
):
    """Plot a classifier's fairness-accuracy path: accuracy against disparity along tau.

    Parameters
    ----------
    path : ClassificationPath or pandas.DataFrame
        A path from :func:`fairness_accuracy_path`, or its ``table``.
    x, y : str, default="dp_difference", "accuracy"
        Columns for the horizontal and vertical axes (any of ``accuracy``, ``roc_auc``,
        ``log_loss``, ``dp_difference``, ``wass1``).
    label : str, optional
        Legend label of the line.
    annotate : bool, default=True
        Write tau beside the first, middle and last points.
    unadjusted : dict, optional
        The raw model's values, drawn as a star; taken from the path by default.
    ax : matplotlib Axes, optional
        Where to draw; a new figure otherwise.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from fairot.classification import plot_path
    >>> table = pd.DataFrame(
    ...     {"tau": [0.0, 0.5, 1.0], "dp_difference": [0.02, 0.1, 0.2],
    ...      "accuracy": [0.70, 0.74, 0.75]}
    ... )
    >>> fig = plot_path(table, label="DPP")
    >>> fig.axes[0].get_xlabel(), fig.axes[0].lines[0].get_ydata().tolist()
    ('dp difference', [0.7, 0.74, 0.75])
    """
    return plot_path_table(
        path, x=x, y=y, label=label, annotate=annotate, unadjusted=unadjusted, ax=ax
    )
