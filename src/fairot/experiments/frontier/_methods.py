"""The frontier study's methods, each traced over its knob into points (test metrics).

Internal surface (for :mod:`fairot.experiments.frontier`): :data:`CRITERIA`,
:func:`point_metrics`, :func:`unaware_point`, :func:`fairot_points`, :func:`fairlearn_points`,
:func:`rate_points` and :func:`mlp_points`. A point is a dict of the method, the criterion it is
fitted for, its knob value, whether it reads the attribute at prediction, and the test metrics.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.metrics import group_rates, strong_demographic_disparity, wass1

#: The criteria a method is fitted for -> the test disparity the study selects its points by.
#: ``demographic_parity_ratio`` is the four-fifths form (min over max of the selection rates),
#: a pass/fail bound rather than a frontier.
CRITERIA = {
    "demographic_parity": "dp_difference",
    "equal_opportunity": "eo_difference",
    "equalized_odds": "equalized_odds_difference",
    "demographic_parity_ratio": "dp_ratio",
}

#: Warnings the study expects and silences: German Credit's small groups are drawn with
#: replacement; DPP post-processes the cells of marginal groups; fairlearn's own pandas use.
EXPECTED_WARNINGS = (
    ".*fewer than batch_size.*",
    ".*intersectional cells.*",
    # fairlearn 0.15's DemographicParity writes Series entries in ways pandas 3 deprecates
    "Setting a value on a Series via .at",
    "Setting an item of incompatible dtype",
)


@contextmanager
def _quiet():
    with warnings.catch_warnings():
        for message in EXPECTED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        yield


def point_metrics(
    split,
    scores: np.ndarray,
    positive: np.ndarray | None = None,
    *,
    ranking: np.ndarray | None = None,
    probabilities: np.ndarray | None = None,
) -> dict:
    r"""Test metrics of one model: accuracy, AUC, log-loss, the rate disparities, Wass1, SDD.

    ``scores`` are the model's probabilities of the positive class; ``positive`` the probability
    that it *decides* positive (``scores > 0.5`` when not given, i.e. a deterministic
    classifier). For fairlearn's randomised classifiers, ``positive`` is the probability of the
    randomised decision, and accuracy and the rate disparities are its expected values (each row
    counted once as positive with weight :math:`p` and once as negative with weight
    :math:`1 - p`, so that fairot's own group rates do the averaging). ``ranking`` (default
    ``scores``) is what the AUC ranks and ``probabilities`` (default ``scores``) what the
    log-loss scores: the rate-constrained classifier's ``decision_function`` and its probability
    model's :math:`\eta` (its ``predict_proba`` is a clipped shift of the decision, not a
    probability), as :func:`fairot.classification.fairness_accuracy_path` reports them.

    The disparities of the decisions :math:`\hat y`, over the groups :math:`a`:
    ``dp_difference`` :math:`\max_a P(\hat y = 1 \mid a) - \min_a P(\hat y = 1 \mid a)`,
    ``dp_ratio`` (the four-fifths rule's) :math:`\min_a P(\hat y = 1 \mid a) / \max_a
    P(\hat y = 1 \mid a)`, ``eo_difference`` (equal opportunity) the same difference of the
    true-positive rates, ``equalized_odds_difference`` the larger of the true- and
    false-positive rates' (fairlearn's ``equalized_odds_difference``); ``wass1`` and ``sdd``
    (strong demographic parity) are of the scores.
    """
    y, sf, mode = split.y_test, split.sensitive_test, split.group_mode
    scores = np.clip(np.asarray(scores, dtype=float), 0.0, 1.0)
    if positive is None:
        positive = (scores > 0.5).astype(float)
    # a mixture's probability can leave [0, 1] by a rounding error
    positive = np.clip(np.asarray(positive, dtype=float), 0.0, 1.0)
    twice = np.concatenate([np.ones_like(positive), np.zeros_like(positive)])
    weight = np.concatenate([positive, 1.0 - positive])
    both = sf.iloc[np.tile(np.arange(len(sf)), 2)].reset_index(drop=True)
    labels = np.concatenate([y, y])
    correct = twice == labels
    rates = group_rates(
        labels, twice, sensitive_features=both, sample_weight=weight, group_mode=mode
    )
    selection = rates["selection_rate"].to_numpy()
    tpr, fpr = (_spread(rates[column].to_numpy()) for column in ("tpr", "fpr"))
    return {
        "accuracy": float(np.sum(weight * correct) / y.shape[0]),
        "auc": float(roc_auc_score(y, scores if ranking is None else ranking)),
        "log_loss": float(
            log_loss(
                y,
                np.clip(scores if probabilities is None else probabilities, 1e-6, 1 - 1e-6),
                labels=[0, 1],
            )
        ),
        "dp_difference": float(selection.max() - selection.min()),
        "dp_ratio": float(selection.min() / selection.max()) if selection.max() > 0 else 1.0,
        "eo_difference": tpr,
        "equalized_odds_difference": max(tpr, fpr),
        "wass1": wass1(None, scores, sensitive_features=sf, group_mode=mode),
        "sdd": strong_demographic_disparity(None, scores, sensitive_features=sf, group_mode=mode),
    }


def _spread(rates: np.ndarray) -> float:
    """Max minus min of the groups' defined rates (a group without positives has no TPR)."""
    defined = rates[np.isfinite(rates)]
    return float(defined.max() - defined.min()) if defined.size else 0.0


def _point(
    method: str,
    knob: str,
    value,
    attribute: bool,
    split,
    scores,
    positive=None,
    criterion: str = "demographic_parity",
    **scored,
):
    return {
        "method": method,
        "criterion": criterion,
        "knob": knob,
        "value": value,
        "attribute_at_prediction": attribute,
        **point_metrics(split, scores, positive, **scored),
    }


def logistic(split) -> LogisticRegression:
    """The unaware logistic model (scikit-learn defaults, enough iterations to converge)."""
    return LogisticRegression(max_iter=1000).fit(split.X_train, split.y_train)


def _path(model, split, checkpoints, method: str, knob_prefix: str) -> list[dict]:
    """Points of a COT/DOT run at each checkpoint of its number of updates."""
    points = []
    fit_args = (split.X_train, split.y_train)
    model.set_params(n_updates=0).fit(*fit_args, sensitive_features=split.sensitive_train)
    for k in checkpoints:
        model.partial_fit(
            *fit_args, sensitive_features=split.sensitive_train, n_updates=k - model.n_updates_
        )
        scores = model.predict_proba(split.X_test)[:, 1]
        points.append(_point(method, f"{knob_prefix}n_updates", k, False, split, scores))
    return points


def unaware_point(split, lr) -> dict:
    """The unaware logistic model's point (every criterion's reference)."""
    return _point("LR (unaware)", "-", None, False, split, lr.predict_proba(split.X_test)[:, 1])


def fairot_points(split, lr, *, seed: int, checkpoints, configs, dpp_taus=(0.0,)) -> list[dict]:
    """DPP over its ``tau``, and COT/DOT over their number of updates and one knob each.

    ``configs`` maps a method name ("COT (paper)", "COT (tau)", "COT", ...) to ``(kind, knob,
    values)``: the class ("COT" or "DOT"), the parameter swept ("tau", "loss_weight", or
    ``None`` for the defaults) and its values; each run records every checkpoint.
    """
    classes = {"COT": COTClassifier, "DOT": DOTClassifier}
    frozen = FrozenEstimator(lr)
    points = []
    with _quiet():
        for tau in dpp_taus:
            dpp = QuantileParityPostProcessor(
                estimator=frozen, group_mode=split.group_mode, tau=tau
            )
            dpp.fit(split.X_train, split.y_train, sensitive_features=split.sensitive_train)
            scores = dpp.predict_proba(split.X_test, sensitive_features=split.sensitive_test)[:, 1]
            points.append(_point("DPP", "tau", tau, True, split, scores))
        for method, (kind, knob, values) in configs.items():
            for value in values:
                params = {} if knob is None else {knob: value}
                model = classes[kind](
                    estimator=frozen, group_mode=split.group_mode, random_state=seed, **params
                )
                prefix = "" if knob is None else f"{knob}={value:g}, "
                points += _path(model, split, checkpoints, method, prefix)
    return points


def _mixture_probability(eg, X) -> np.ndarray:
    """P(decide positive) of ExponentiatedGradient's randomised classifier (public attributes)."""
    return sum(
        w * np.asarray(h.predict(X), dtype=float)
        for w, h in zip(eg.weights_, eg.predictors_, strict=True)
    )


#: fairlearn's moment for each criterion the study traces ``ExponentiatedGradient`` over.
FAIRLEARN_MOMENTS = {
    "demographic_parity": "DemographicParity",
    "equal_opportunity": "TruePositiveRateParity",
    "equalized_odds": "EqualizedOdds",
}


def _exponentiated_gradient(split, base, moment, max_iter: int) -> np.ndarray:
    """P(decide positive) on the test rows of ``ExponentiatedGradient`` under ``moment``."""
    from fairlearn.reductions import ExponentiatedGradient

    eg = ExponentiatedGradient(base, moment, max_iter=max_iter)
    eg.fit(split.X_train, split.y_train, sensitive_features=split.sensitive_train)
    return _mixture_probability(eg, split.X_test)


def fairlearn_points(
    split,
    lr,
    *,
    seed: int,
    bounds,
    max_iter: int,
    grid_size: int,
    tolerances,
    n_draws: int = 20,
    criteria=("demographic_parity",),
    ratio_bounds=(),
) -> list[dict]:
    r"""Points of fairlearn: its reductions (no attribute at prediction), ThresholdOptimizer.

    ``ExponentiatedGradient`` over ``difference_bound`` in ``bounds`` for each of ``criteria``
    (:data:`FAIRLEARN_MOMENTS`: ``DemographicParity``, ``TruePositiveRateParity``,
    ``EqualizedOdds``), and with ``DemographicParity(ratio_bound=r)`` for each ``r`` in
    ``ratio_bounds``; ``GridSearch`` and ``ThresholdOptimizer`` with demographic parity.
    fairlearn's ratio bound keeps every group's selection rate within :math:`[r\mu, \mu/r]` of
    the overall rate :math:`\mu`, not the ratio of the lowest to the highest group's rate that
    the four-fifths rule bounds (``dp_ratio`` of :func:`point_metrics`), so the study measures
    the latter on the test rows for both.
    """
    from fairlearn import reductions
    from fairlearn.postprocessing import ThresholdOptimizer

    base = LogisticRegression(max_iter=1000)
    fit_args = (split.X_train, split.y_train)
    sf_train, sf_test = split.sensitive_train, split.sensitive_test
    points: list[dict[str, Any]] = []
    with _quiet():
        for criterion in criteria:
            moment = getattr(reductions, FAIRLEARN_MOMENTS[criterion])
            for bound in bounds:
                p = _exponentiated_gradient(split, base, moment(difference_bound=bound), max_iter)
                points.append(
                    _point(
                        "ExponentiatedGradient",
                        "difference_bound",
                        bound,
                        False,
                        split,
                        p,
                        p,
                        criterion,
                    )
                )
        for ratio in ratio_bounds:
            moment = reductions.DemographicParity(ratio_bound=ratio)
            p = _exponentiated_gradient(split, base, moment, max_iter)
            points.append(
                _point(
                    "ExponentiatedGradient",
                    "ratio_bound",
                    ratio,
                    False,
                    split,
                    p,
                    p,
                    "demographic_parity_ratio",
                )
            )
        grid = reductions.GridSearch(base, reductions.DemographicParity(), grid_size=grid_size)
        grid.fit(*fit_args, sensitive_features=sf_train)
        for i, h in enumerate(grid.predictors_):
            scores = h.predict_proba(split.X_test)[:, 1]
            points.append(_point("GridSearch", "grid point", i, False, split, scores))
        for tol in tolerances:
            to = ThresholdOptimizer(
                estimator=FrozenEstimator(lr),
                constraints="demographic_parity",
                predict_method="predict_proba",
                tol=tol,
            )
            to.fit(*fit_args, sensitive_features=sf_train)
            # Its decisions are randomised: the share of draws deciding positive estimates P.
            draws = [
                to.predict(split.X_test, sensitive_features=sf_test, random_state=seed + r)
                for r in range(n_draws)
            ]
            p = np.mean(draws, axis=0)
            points.append(_point("ThresholdOptimizer", "tol", tol, True, split, p, p))
    return points


#: The probability models of the rate-constrained classifier, by the study's name for them:
#: the logistic model (the study's LR), and gradient boosting, rich enough that its rule
#: estimates the best any classifier reading only ``x`` can do (the limit curve).
RATE_METHODS = {
    "logistic": "Rate-constrained (logistic)",
    "boosted": "Rate-constrained (boosted)",
}


def probability_model(kind: str, seed: int):
    """The probability model of the rate-constrained classifier (``"logistic"``, ``"boosted"``)."""
    if kind == "logistic":
        return LogisticRegression(max_iter=1000)
    # Early stopping on a tenth of the rows (scikit-learn turns it on by itself only above
    # 10,000 rows): it stops the model's overconfidence on the small data sets, whose
    # probabilities the rule reads, and ends the 20 trees per iteration of Adult's cells early.
    # RateConstrainedClassifier(calibration="auto") then maps its cross-fitted probabilities
    # with a sigmoid (matrix scaling) before the multipliers are chosen.
    return HistGradientBoostingClassifier(early_stopping=True, random_state=seed)


def rate_points(
    split,
    *,
    seed: int,
    kind: str,
    budgets,
    criteria=("demographic_parity",),
    min_ratios=(),
    cv: int = 5,
) -> list[dict]:
    r"""Points of :class:`fairot.classification.RateConstrainedClassifier` over its budget.

    The attribute-blind plug-in rule :math:`2\eta(x) - 1 - \sum_k \mu_k w_k(x) > 0`, with the
    probability model ``kind`` (:func:`probability_model`) fitted once per criterion, and its
    multipliers :math:`\mu` re-solved for each ``max_difference`` in ``budgets`` (and each
    ``min_ratio`` in ``min_ratios``, demographic parity's four-fifths form) by ``with_budget``,
    without refitting the probability model. Deterministic decisions: ``predict`` is the
    decision; the AUC ranks ``decision_function``, the log-loss scores the probability model's
    :math:`\eta` (``base_scores``, the same at every budget), Wass1 and SDD measure
    ``predict_proba`` (the decision's scores, :math:`(1 + s) / 2` clipped to [0, 1]).
    """
    from fairot.classification import RateConstrainedClassifier

    method = RATE_METHODS[kind]
    points: list[dict[str, Any]] = []

    def measure(model, knob, value, criterion):
        ranking = model.decision_function(split.X_test)
        scored = {"ranking": ranking, "probabilities": model.base_scores(split.X_test)}
        scores = np.clip(0.5 * (1.0 + ranking), 0.0, 1.0)  # predict_proba's, computed once
        decided = (ranking > 0).astype(float)  # predict's
        points.append(
            _point(method, knob, value, False, split, scores, decided, criterion, **scored)
        )

    with _quiet():
        for criterion in criteria:
            clf = RateConstrainedClassifier(
                estimator=probability_model(kind, seed),
                constraint=criterion,
                max_difference=max(budgets),
                cv=cv,
                random_state=seed,
            )
            clf.fit(split.X_train, split.y_train, sensitive_features=split.sensitive_train)
            for budget in budgets:
                measure(clf.with_budget(max_difference=budget), "max_difference", budget, criterion)
            if criterion == "demographic_parity":
                for ratio in min_ratios:
                    measure(
                        clf.with_budget(min_ratio=ratio),
                        "min_ratio",
                        ratio,
                        "demographic_parity_ratio",
                    )
    return points


def mlp_points(split, *, seed: int, lams, params: dict) -> list[dict]:
    """Points of :class:`fairot.torch.FairMLPClassifier` over its penalty weight ``lam``.

    A small network on the CPU with one torch thread (the study is a CPU study; small networks
    only contend with other processes for threads); ``params`` are its other parameters.
    Early stopping on its own validation rows (``validation_fraction``, held out from the
    training rows) is the estimator's default, kept.
    """
    import torch

    from fairot.torch import FairMLPClassifier

    points = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _quiet():
            for lam in lams:
                clf = FairMLPClassifier(
                    **params, lam=lam, group_mode=split.group_mode, random_state=seed
                )
                clf.fit(split.X_train, split.y_train, sensitive_features=split.sensitive_train)
                scores = clf.predict_proba(split.X_test)[:, 1]
                points.append(_point("FairMLPClassifier", "lam", lam, False, split, scores))
    finally:
        torch.set_num_threads(threads)
    return points
