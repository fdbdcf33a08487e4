"""Figure 2 of the COT paper: COT against DOT on Adult as the batch size shrinks."""

from __future__ import annotations

import warnings

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
    load_split,
    score_metrics,
)


def run_cot_batch_size(
    *, quick: bool = False, n_seeds: int | None = None, random_state: int = 0, progress: bool = True
) -> StudyResult:
    """Figure 2: Wass1 and Err-.5 of COT and DOT on Adult against the batch size.

    Batch sizes 10, 20, 50, 100, 200, 500 (quick: 10 and 50), K = 100,000 updates (quick: 1,000),
    with the test curves over updates; then sex as the only sensitive attribute and the male
    outputs as target. COT's step is ``5e-3 / N`` (its gradient is a sum over the batch) and DOT's
    ``1e-3`` (a mean), so that the effective step does not change with N.
    """
    n_seeds = 1 if n_seeds is None else n_seeds
    batch_sizes = (10, 50) if quick else (10, 20, 50, 100, 200, 500)
    n_updates = 1_000 if quick else 100_000
    every = max(n_updates // 100, 1)
    split = load_split("adult", 0, {})
    gender = adult_gender_split()
    lr = FrozenEstimator(LogisticRegression().fit(split.X_train, split.y_train))
    lr_scores = lr.predict_proba(split.X_test)[:, 1]
    records, curves = [], []
    for variant, data, target in (
        ("4 groups, barycenter", split, "barycenter"),
        ("sex only, male target", gender, "Male"),
    ):
        records.append(
            {
                "variant": variant,
                "method": "LR",
                "batch_size": 0,
                "seed": -1,
                **score_metrics(split.y_test, lr_scores, data.sensitive_test, "intersection"),
            }
        )
        for n in batch_sizes:
            for k in range(n_seeds):
                seed = random_state + k
                for method in ("COT", "DOT"):
                    if method == "COT":
                        model = COTClassifier(step_size=5e-3 / n, batch_size=n)
                    else:
                        model = DOTClassifier(step_size=1e-3, batch_size=n)
                    model.set_params(
                        estimator=lr,
                        target=target,
                        n_updates=n_updates,
                        history_every=every,
                        random_state=seed,
                        verbose=progress,
                    )
                    with warnings.catch_warnings():
                        warnings.filterwarnings("ignore", message=".*fewer than batch_size.*")
                        model.fit(
                            data.X_train,
                            data.y_train,
                            sensitive_features=data.sensitive_train,
                            eval_set=(data.X_test, data.y_test, data.sensitive_test),
                        )
                    s = model.predict_proba(data.X_test)[:, 1]
                    metrics = score_metrics(data.y_test, s, data.sensitive_test, "intersection")
                    # Wass1 to the method's own target (the male outputs in the variant).
                    metrics["Wass1 to target"] = float(model.history_["eval_wass1"].iloc[-1])
                    records.append(
                        {
                            "variant": variant,
                            "method": method,
                            "batch_size": n,
                            "seed": seed,
                            **metrics,
                        }
                    )
                    if n in (10, 20) or quick:
                        h = model.history_[["update", "eval_wass1", "eval_error"]].copy()
                        h.insert(0, "batch_size", n)
                        h.insert(0, "method", method)
                        h.insert(0, "variant", variant)
                        curves.append(h)
    table = pd.DataFrame(records)
    curve = pd.concat(curves, ignore_index=True)
    return StudyResult(
        name="cot-batch-size",
        tables={"batch_size": table},
        curves={"over_updates": curve},
        figures={"figure2": _figure2(table, curve)},
        notes=(
            "Figure 2 of the paper: does COT beat DOT at small batch sizes? Compare the "
            "'Wass1' and 'Err-.5' columns per batch size (test split). Wass1 is to the "
            "barycenter of the test groups (4 groups) or to the male training outputs at "
            "theta* ('Wass1 to target', sex-only variant)."
        ),
        config={
            "batch_sizes": batch_sizes,
            "n_updates": n_updates,
            "n_seeds": n_seeds,
            "random_state": random_state,
            "cot_step_size": "5e-3 / N",
            "dot_step_size": 1e-3,
        },
    )


def _figure2(table: pd.DataFrame, curve: pd.DataFrame):
    fig = Figure(figsize=(10, 7))
    axes = fig.subplots(2, 2)
    # Solid: Wass1 to the fixed target the methods optimise; dashed: to the barycenter of the
    # test groups (the Table 1 metric). They differ when the groups agree with each other but
    # drift away from the target together (DOT at small batches).
    for ax, variant in (
        (axes[0, 0], "4 groups, barycenter"),
        (axes[0, 1], "sex only, male target"),
    ):
        sub = table[table["variant"] == variant]
        for method, marker, color in (("COT", "o", "tab:blue"), ("DOT", "s", "tab:orange")):
            rows = sub[sub["method"] == method].groupby("batch_size")
            to_target, to_bary = rows["Wass1 to target"].mean(), rows["Wass1"].mean()
            ax.plot(
                to_target.index,
                to_target.values,
                marker=marker,
                color=color,
                label=f"{method}, to target",
            )
            ax.plot(
                to_bary.index,
                to_bary.values,
                marker=marker,
                color=color,
                ls="--",
                label=f"{method}, to test barycenter",
            )
        lr = sub[sub["method"] == "LR"]["Wass1"]
        ax.axhline(float(lr.iloc[0]), color="m", ls=":", label="LR")
        ax.set_xscale("log")
        ax.set_xlabel("batch size N")
        ax.set_ylabel("test Wass1")
        ax.set_title(variant)
        ax.legend(fontsize=7)
    main = curve[curve["variant"] == "4 groups, barycenter"]
    for ax, column, label in (
        (axes[1, 0], "eval_wass1", "test Wass1 to target"),
        (axes[1, 1], "eval_error", "test Err-.5"),
    ):
        for (method, n), h in main.groupby(["method", "batch_size"]):
            ax.plot(h["update"], h[column], label=f"{method} N={n}")
        ax.set_xlabel("update")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
