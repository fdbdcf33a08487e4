"""Figures 3 and 4 of the COT paper: continual re-adjustment to a changing level of unfairness."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression

from fairot.classification import (
    COTClassifier,
    DOTClassifier,
)
from fairot.experiments._result import StudyResult
from fairot.experiments.cot._common import (
    adult_gender_split,
)

DRIFT_FEMALE_POSITIVE_RATES = (
    0.2, 0.3, 0.3, 0.4, 0.1, 0.4, 0.3, 0.2, 0.2, 0.3,
    0.3, 0.4, 0.1, 0.4, 0.3, 0.2, 0.2, 0.3, 0.3, 0.4,
)  # fmt: skip


def resample_positive_rate(
    y: np.ndarray, is_female: np.ndarray, rate: float, rng: np.random.Generator
) -> np.ndarray:
    """Row indices of a data set whose women have P(y = 1) = ``rate``; men kept as they are.

    As many women as in the original data, drawn with replacement from the positive and negative
    women in the proportions ``rate`` and ``1 - rate`` (Section "Changing Level of Unfairness").
    """
    women = np.flatnonzero(is_female)
    pos, neg = women[y[women] == 1], women[y[women] == 0]
    n_pos = int(round(rate * women.shape[0]))
    chosen = np.concatenate([rng.choice(pos, n_pos), rng.choice(neg, women.shape[0] - n_pos)])
    return np.sort(np.concatenate([np.flatnonzero(~is_female), chosen]))


def run_cot_drift(
    *, quick: bool = False, n_seeds: int | None = None, random_state: int = 0, progress: bool = True
) -> StudyResult:
    r"""Figures 3 and 4: continual re-adjustment of COT and DOT to a changing level of unfairness.

    Adult (training split), sex as sensitive attribute, male outputs at :math:`\theta^*` as the
    target. The data start as Adult itself (women's P(y=1) about .11) and move every 5,000
    updates to the next data set of the paper's sequence .2, .3, .3, .4, .1, .4, ... built by
    resampling women (men unchanged), for 100,000 updates (quick: 20 segments of 100). Wass1 on
    the current data set is recorded every 50 updates (quick: 10).
    """
    segment = 100 if quick else 5_000
    every = 10 if quick else 50
    n_segments = 20
    rates = ("Adult",) + DRIFT_FEMALE_POSITIVE_RATES[: n_segments - 1]
    split = adult_gender_split()
    X = split.X_train.to_numpy(dtype=float)
    y = split.y_train.to_numpy()
    sex = split.sensitive_train["sex"].to_numpy()
    is_female = sex == "Female"
    rng = np.random.default_rng(random_state)
    data_rows = [
        np.arange(len(y)) if r == "Adult" else resample_positive_rate(y, is_female, float(r), rng)
        for r in rates
    ]
    lr = FrozenEstimator(LogisticRegression().fit(X, y))
    models = {
        "COT": COTClassifier(
            estimator=lr,
            target="Male",
            history_every=every,
            random_state=random_state,
            verbose=False,
        ),
        "DOT": DOTClassifier(
            estimator=lr,
            target="Male",
            history_every=every,
            random_state=random_state,
            verbose=False,
        ),
    }
    change = 6 if n_segments > 6 else n_segments - 1  # update 30,000: from .1 to .4
    snapshots: dict[str, Any] = {}
    curves = []
    for method, model in models.items():
        for t, rows in enumerate(data_rows):
            if t == change and method == "COT":
                before = model.dual_potentials_("Female")
                snapshots["hist_before"] = (
                    model.predict_proba(X[data_rows[t - 1]])[:, 1],
                    sex[data_rows[t - 1]],
                )
                snapshots["hist_after"] = (model.predict_proba(X[rows])[:, 1], sex[rows])
            kwargs = {"sensitive_features": sex[rows]}
            if t == 0:
                model.set_params(n_updates=segment)
                model.fit(X[rows], y[rows], **kwargs)
            elif t == change and method == "COT":
                model.partial_fit(X[rows], y[rows], n_updates=segment // 5, **kwargs)
                snapshots["duals"] = (before, model.dual_potentials_("Female"))
                model.partial_fit(X[rows], y[rows], n_updates=segment - segment // 5, **kwargs)
            else:
                model.partial_fit(X[rows], y[rows], n_updates=segment, **kwargs)
        h = model.history_[["update", "train_wass1"]].rename(columns={"train_wass1": "Wass1"})
        h.insert(0, "method", method)
        curves.append(h)
    curve = pd.concat(curves, ignore_index=True)
    curve["female P(y=1)"] = [
        rates[min((u - 1) // segment, n_segments - 1)] for u in curve["update"]
    ]
    summary = (
        curve.assign(segment=(curve["update"] - 1) // segment)
        .groupby(["method", "segment"])["Wass1"]
        .agg(["first", "min", "last"])
        .reset_index()
    )
    summary["female P(y=1)"] = [rates[s] for s in summary["segment"]]
    target = models["COT"].target_samples_
    return StudyResult(
        name="cot-drift",
        tables={"segments": summary},
        curves={"wass1": curve},
        figures={
            "figure3": _figure3(target, snapshots),
            "figure4": _figure4(curve, snapshots, segment, rates),
        },
        notes=(
            "Wass1 (female + male, to the male outputs at theta*) on the current data set. "
            "'first'/'min'/'last' are the Wass1 at the first record, minimum and end of each "
            "segment: a jump at a change followed by a decrease is the re-adjustment."
        ),
        config={
            "segment_updates": segment,
            "record_every": every,
            "sequence": rates,
            "random_state": random_state,
        },
    )


def _figure3(target: np.ndarray, snapshots: dict):
    fig = Figure(figsize=(7, 6))
    axes = fig.subplots(2, 1, sharex=True)
    bins = np.linspace(0, 1, 31)
    for ax, key, title in (
        (axes[0], "hist_before", "before the change (women P(y=1) = .1)"),
        (axes[1], "hist_after", "same model, women P(y=1) = .4"),
    ):
        s, sex = snapshots[key]
        ax.hist(target, bins=bins, density=True, alpha=0.4, color="tab:blue", label="target")
        for g, color in (("Female", "tab:red"), ("Male", "tab:orange")):
            ax.hist(
                s[sex == g], bins=bins, density=True, histtype="step", lw=2, color=color, label=g
            )
        ax.set_title(title)
        ax.legend()
    axes[1].set_xlabel("score")
    fig.tight_layout()
    return fig


def _figure4(curve: pd.DataFrame, snapshots: dict, segment: int, rates):
    fig = Figure(figsize=(13, 4))
    axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": [2, 1]})
    for method, h in curve.groupby("method"):
        axes[0].plot(h["update"], h["Wass1"], lw=0.8, label=method)
    for t in range(1, len(rates)):
        axes[0].axvline(t * segment, color="grey", lw=0.3)
    axes[0].set_xlabel("update")
    axes[0].set_ylabel("Wass1")
    axes[0].legend()
    grid = np.linspace(0, 1, 201)
    before, after = snapshots["duals"]
    for pot, ls, when in ((before, "-", "before"), (after, "--", "after")):
        axes[1].plot(grid, pot.group(grid), ls=ls, color="tab:red", label=f"female, {when}")
        axes[1].plot(grid, pot.target(grid), ls=ls, color="tab:blue", label=f"target, {when}")
    axes[1].set_xlabel("s")
    axes[1].set_title("female dual potentials around the change")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig
