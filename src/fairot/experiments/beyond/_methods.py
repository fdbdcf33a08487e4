"""The ``beyond-dp`` study's methods: each one's test scores, or its randomised decisions.

Internal surface (for :mod:`fairot.experiments.beyond`): ``COT``, ``DOT``, ``MLP``,
``EXPECTED_WARNINGS``, :func:`quiet`, :func:`fit_ot` and :func:`method_outputs`. An output is
a pair ``(scores, positive)``: ``positive`` is ``None`` for a model with scores (it decides
``scores > 0.5``), or the probability that a randomised classifier decides positive.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from fairot.classification import COTClassifier, DOTClassifier

#: COT and DOT with ``constraint="equalized_odds"``: one setting per method, the same on every
#: data set (``n_updates`` is the data set's, :data:`fairot.experiments.beyond._study.DATASETS`).
#: COT's ``reg_strength=0.03`` (the class default is 0.1): with an entropic blur of 0.1 on
#: scores in [0, 1] the equalized-odds cells stopped at 67.5 % of Adult's strong EO disparity
#: removed, against 69-70 % at 0.03 (docs/results.md, "what changed").
COT: dict[str, Any] = {"step_size": 3e-3, "reg_strength": 0.03}
DOT: dict[str, Any] = {"step_size": 0.1, "batch_size": 500}
#: The PyTorch penalty's cheap setting, the same on every data set: one hidden layer of 16 units,
#: batches of 64, 20 epochs of cross-entropy then 40 with the DOT penalty at the default
#: ``lam=3``, Adam at 3e-3 with the cosine decay, no validation split. The class defaults (40
#: epochs of batches of 256, early stopping on 10 % of the rows) trained German Credit (700
#: rows: 3 batches an epoch) for a few dozen steps and stopped on the noise of 70 held-out rows
#: (test error .30 to .44, the share of its minority class or worse).
MLP: dict[str, Any] = {
    "hidden_layer_sizes": (16,),
    "batch_size": 64,
    "n_epochs": 60,
    "warmup_epochs": 20,
    "learning_rate": 3e-3,
    "validation_fraction": 0.0,
}
QUICK_MLP: dict[str, Any] = {"hidden_layer_sizes": (8,), "n_epochs": 4, "warmup_epochs": 2}

#: Warnings the study expects: small cells are drawn with replacement (said by COT/DOT);
#: fairlearn's own use of pandas; its logistic models' iteration limits.
EXPECTED_WARNINGS = (".*fewer than batch_size.*", ".*intersectional cells.*")


@contextmanager
def quiet():
    """Silence the warnings the study expects (and only those)."""
    with warnings.catch_warnings():
        for message in EXPECTED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        warnings.filterwarnings("ignore", category=ConvergenceWarning)
        warnings.filterwarnings("ignore", category=pd.errors.Pandas4Warning)
        yield


def logistic() -> LogisticRegression:
    """The logistic start of every method (scikit-learn defaults, iterations to converge)."""
    return LogisticRegression(max_iter=1000)


def fit_ot(kind: str, X, y, sf, *, n_updates: int, seed: int, progress: bool = False):
    """COT (``kind="cot"``) or DOT with equalized odds, from the study's logistic start."""
    cls, params = (COTClassifier, COT) if kind == "cot" else (DOTClassifier, DOT)
    model = cls(
        estimator=logistic(),
        constraint="equalized_odds",
        n_updates=n_updates,
        random_state=seed,
        verbose=progress,
        **params,
    )
    with quiet():
        return model.fit(X, y, sensitive_features=sf)


def _mlp_scores(X, y, sf, Xt, *, seed: int, quick: bool, progress: bool) -> np.ndarray:
    """Test scores of ``FairMLPClassifier(constraint="equalized_odds")``, one torch thread."""
    import torch

    from fairot.torch import FairMLPClassifier

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small network: more threads only contend with other processes
    try:
        clf = FairMLPClassifier(
            constraint="equalized_odds",
            random_state=seed,
            verbose=progress,
            **(QUICK_MLP if quick else MLP),
        )
        with quiet():
            clf.fit(X, y, sensitive_features=sf)
        return clf.predict_proba(Xt)[:, 1]
    finally:
        torch.set_num_threads(threads)


def method_outputs(
    X, y, sf, Xt, sft, *, n_updates: dict[str, int], seed: int, quick: bool, progress: bool
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Every method's ``(scores, positive)`` on the test rows ``Xt``.

    fairlearn's classifiers decide at random; ``positive`` is the probability of deciding
    positive: for ``ExponentiatedGradient`` the weighted vote of its predictors (public
    ``weights_`` and ``predictors_``), for ``ThresholdOptimizer`` its ``_pmf_predict`` (fairlearn
    0.15; the exact mixing probabilities of its two thresholds per group, which ``predict``
    samples from). The rows "p(x) as score" read that probability as a score.
    """
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import EqualizedOdds, ExponentiatedGradient

    lr = logistic().fit(X, y)
    out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {
        "LR": (lr.predict_proba(Xt)[:, 1], None)
    }
    for method, kind in (("COT (EO)", "cot"), ("DOT (EO)", "dot")):
        model = fit_ot(kind, X, y, sf, n_updates=n_updates[kind], seed=seed, progress=progress)
        out[method] = (model.predict_proba(Xt)[:, 1], None)
    out["MLP + penalty (EO)"] = (
        _mlp_scores(X, y, sf, Xt, seed=seed, quick=quick, progress=progress),
        None,
    )
    eg = ExponentiatedGradient(logistic(), EqualizedOdds())
    to = ThresholdOptimizer(
        estimator=logistic(), constraints="equalized_odds", predict_method="predict_proba"
    )
    with quiet():
        eg.fit(X, y, sensitive_features=sf)
        p_eg = sum(
            w * np.asarray(h.predict(Xt), dtype=float)
            for w, h in zip(eg.weights_, eg.predictors_, strict=True)
        )
        to.fit(X, y, sensitive_features=sf)
        p_to = np.asarray(to._pmf_predict(Xt, sensitive_features=sft))[:, 1]
    # a mixture's probability can leave [0, 1] by a rounding error
    p_eg, p_to = np.clip(p_eg, 0.0, 1.0), np.clip(p_to, 0.0, 1.0)
    out["ExponentiatedGradient (EO)"] = (p_eg, p_eg)
    out["ThresholdOptimizer (EO)"] = (p_to, p_to)
    out["ExponentiatedGradient (EO), p(x) as score"] = (p_eg, None)
    out["ThresholdOptimizer (EO), p(x) as score"] = (p_to, None)
    return out
