"""The frontier study's methods, each traced over its knob into points (test metrics).

Internal surface (for :mod:`fairot.experiments.frontier`): :func:`point_metrics`,
:func:`fairot_points` and :func:`fairlearn_points`. A point is a dict of
the method, its knob value, whether it reads the attribute at prediction, and the test metrics.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss, roc_auc_score

from fairot.classification import COTClassifier, DOTClassifier, QuantileParityPostProcessor
from fairot.metrics import demographic_parity_difference, strong_demographic_disparity, wass1

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


def point_metrics(split, scores: np.ndarray, positive: np.ndarray | None = None) -> dict:
    r"""Test metrics of one model: accuracy, AUC, log-loss, DP difference, Wass1, SDD.

    ``scores`` are the model's probabilities of the positive class; ``positive`` the probability
    that it *decides* positive (``scores > 0.5`` when not given, i.e. a deterministic
    classifier). For fairlearn's randomised classifiers, ``positive`` is the probability of the
    randomised decision, and accuracy and the DP difference are its expected values (each row
    counted once as positive with weight :math:`p` and once as negative with weight
    :math:`1 - p`, so that fairot's own group rates do the averaging).
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
    correct = twice == np.concatenate([y, y])
    return {
        "accuracy": float(np.sum(weight * correct) / y.shape[0]),
        "auc": float(roc_auc_score(y, scores)),
        "log_loss": float(log_loss(y, np.clip(scores, 1e-6, 1 - 1e-6), labels=[0, 1])),
        "dp_difference": demographic_parity_difference(
            None, twice, sensitive_features=both, sample_weight=weight, group_mode=mode
        ),
        "wass1": wass1(None, scores, sensitive_features=sf, group_mode=mode),
        "sdd": strong_demographic_disparity(None, scores, sensitive_features=sf, group_mode=mode),
    }


def _point(method: str, knob: str, value, attribute: bool, split, scores, positive=None):
    return {
        "method": method,
        "knob": knob,
        "value": value,
        "attribute_at_prediction": attribute,
        **point_metrics(split, scores, positive),
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


def fairot_points(split, lr, *, seed: int, checkpoints, configs, dpp_taus=(0.0,)) -> list[dict]:
    """LR, DPP over its ``tau``, and COT/DOT over their number of updates and one knob each.

    ``configs`` maps a method name ("COT (paper)", "COT (tau)", "COT", ...) to ``(kind, knob,
    values)``: the class ("COT" or "DOT"), the parameter swept ("tau", "loss_weight", or
    ``None`` for the defaults) and its values; each run records every checkpoint.
    """
    classes = {"COT": COTClassifier, "DOT": DOTClassifier}
    frozen = FrozenEstimator(lr)
    points = [_point("LR (unaware)", "-", None, False, split, lr.predict_proba(split.X_test)[:, 1])]
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


def fairlearn_points(
    split, lr, *, seed: int, bounds, max_iter: int, grid_size: int, tolerances, n_draws: int = 20
) -> list[dict]:
    """Points of fairlearn: its reductions (no attribute at prediction), ThresholdOptimizer."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient, GridSearch

    base = LogisticRegression(max_iter=1000)
    fit_args = (split.X_train, split.y_train)
    sf_train, sf_test = split.sensitive_train, split.sensitive_test
    points: list[dict[str, Any]] = []
    with _quiet():
        for bound in bounds:
            eg = ExponentiatedGradient(
                base, DemographicParity(difference_bound=bound), max_iter=max_iter
            )
            eg.fit(*fit_args, sensitive_features=sf_train)
            p = _mixture_probability(eg, split.X_test)
            points.append(
                _point("ExponentiatedGradient", "difference_bound", bound, False, split, p, p)
            )
        grid = GridSearch(base, DemographicParity(), grid_size=grid_size)
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
