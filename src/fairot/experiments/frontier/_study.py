"""``fairot reproduce frontier``: accuracy against demographic parity, without the attribute.

Every fairot classifier traced over its knob beside scikit-learn's unaware logistic model and
fairlearn's ``ExponentiatedGradient``, ``GridSearch`` and ``ThresholdOptimizer``, on the built-in
data sets with the sensitive attributes removed from ``X``; the rate-constrained classifier with
a logistic and a boosted probability model (the limit curve) beside ``ExponentiatedGradient``
under demographic parity, equal opportunity, equalized odds and the four-fifths ratio.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from tqdm.auto import tqdm

from fairot.experiments._result import StudyResult
from fairot.experiments.frontier._data import FRONTIER_DATASETS, unaware_split
from fairot.experiments.frontier._methods import (
    CRITERIA,
    RATE_METHODS,
    fairlearn_points,
    fairot_points,
    logistic,
    mlp_points,
    rate_points,
    unaware_point,
)

#: DP-difference budgets at which the frontiers are compared.
BUDGETS = (0.02, 0.04, 0.06, 0.08, 0.10)

#: Methods that read the sensitive attribute at prediction time (post-processing).
WITH_ATTRIBUTE = ("DPP", "ThresholdOptimizer")

#: The families of methods a run can be limited to (``run_frontier(families=...)``): fairot's
#: COT, DOT and DPP; fairlearn's reductions and post-processing; ``FairMLPClassifier``; the
#: rate-constrained classifier. The unaware logistic model is in every run.
FAMILIES = ("fairot", "fairlearn", "fair-mlp", "rate")
MSG_FAMILIES = "families must be a non-empty subset of {allowed}; got {value!r}."
MSG_OVERRIDES = "overrides must be a dict of configuration keys among {allowed}; got {value!r}."

#: The rate-constrained classifier with the boosted probability model: the limit curve, the
#: best accuracy an attribute-blind classifier reaches within a budget on the data set.
LIMIT = RATE_METHODS["boosted"]

#: The budget columns' label of each criterion's frontier table.
_AXIS = {"demographic_parity": "DP", "equal_opportunity": "EO", "equalized_odds": "EqOdds"}


#: COT and DOT as the paper runs them (over their number of updates), with the tolerance
#: ``tau`` (the fraction of each group's raw W1 to the target kept), and with the log-loss
#: term ``loss_weight``; each over its values and the number of updates.
def method_configs(config: dict[str, Any]) -> dict[str, tuple]:
    """The COT/DOT runs of a study configuration: name -> (class, knob, values)."""
    configs = {}
    for kind in ("COT", "DOT"):
        configs[f"{kind} (paper)"] = (kind, None, [None])
        configs[f"{kind} (tau)"] = (kind, "tau", config["taus"])
        configs[kind] = (kind, "loss_weight", config["loss_weights"])
    return configs


# Adult's training rows are subsampled (10,000 of 30,940 per seed, stratified; every test row
# kept): fairlearn's reductions refit a logistic model up to 50 times per bound, which on all
# 30,940 rows took 2 minutes per bound on the shared 2-core machine (measured), 30 minutes for
# the study's 15 bounds alone.
_MLP = {"hidden_layer_sizes": (32,), "warmup_epochs": 5, "validation_fraction": 0.0}
FULL: dict[str, Any] = {
    "datasets": list(FRONTIER_DATASETS),
    "n_seeds": 3,
    "max_train": {"adult": 10_000},
    "max_test": {},
    "checkpoints": [500, 1_000, 2_000, 3_000, 5_000, 10_000, 20_000],
    "loss_weights": [0.1, 0.3, 1.0],
    "taus": [0.25],
    "dpp_taus": [0.0, 0.1, 0.25, 0.5],
    "eg_bounds": [0.01, 0.02, 0.04, 0.07, 0.1],
    "eg_max_iter": 50,
    "grid_size": 10,
    "to_tolerances": [0.0],
    # ExponentiatedGradient's criteria over eg_bounds, and its DemographicParity ratio bounds.
    "eg_criteria": ["demographic_parity", "equal_opportunity", "equalized_odds"],
    "ratio_bounds": [0.8],
    # The rate-constrained classifier: one fit per probability model and criterion, its
    # multipliers re-solved for each budget (and for min_ratio = each ratio bound), which
    # costs a linear program each, not a fit: a finer grid than ExponentiatedGradient's.
    "rate_budgets": [0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1],
    "rate_criteria": {
        "logistic": ["demographic_parity", "equal_opportunity", "equalized_odds"],
        "boosted": ["demographic_parity"],
    },
    "rate_cv": 5,
    "mlp_lams": [0.3, 1.0, 3.0, 10.0],
    "mlp_params": {
        # One hidden layer of 32, no validation split (the whole path is the knob, as for COT
        # and DOT); the small data sets get smaller batches and more epochs, so that they see
        # enough steps (at Adult's settings German Credit's MLP stayed below .63 accuracy).
        "adult": {**_MLP, "batch_size": 256, "n_epochs": 30},
        "german-credit": {**_MLP, "batch_size": 64, "n_epochs": 100},
        "communities-crime": {**_MLP, "batch_size": 128, "n_epochs": 60},
    },
}
QUICK: dict[str, Any] = {
    "datasets": ["german-credit"],
    "n_seeds": 1,
    "max_train": {"german-credit": 300},
    "max_test": {"german-credit": 200},
    "checkpoints": [200],
    "loss_weights": [1.0],
    "taus": [0.5],
    "dpp_taus": [0.0, 0.5],
    "eg_bounds": [0.05],
    "eg_max_iter": 5,
    "grid_size": 8,
    "to_tolerances": [0.0],
    "eg_criteria": ["demographic_parity", "equal_opportunity", "equalized_odds"],
    "ratio_bounds": [0.8],
    "rate_budgets": [0.02, 0.05, 0.1],
    "rate_criteria": {
        "logistic": ["demographic_parity", "equal_opportunity", "equalized_odds"],
        "boosted": ["demographic_parity"],
    },
    "rate_cv": 3,
    "mlp_lams": [3.0],
    "mlp_params": {
        "german-credit": {**_MLP, "hidden_layer_sizes": (8,), "n_epochs": 3, "warmup_epochs": 1}
    },
}


def frontier_at(
    points: pd.DataFrame, budgets=BUDGETS, criterion: str = "demographic_parity"
) -> pd.DataFrame:
    """Best test accuracy among each method's points with its disparity within each budget.

    The disparity is the criterion's (:data:`~fairot.experiments.frontier.CRITERIA`: the DP
    difference for demographic parity, the TPR difference for equal opportunity, the larger of
    the TPR and FPR differences for equalized odds), over the points fitted for ``criterion``
    (every point, when ``points`` has no ``criterion`` column). Per data set, method and seed,
    then averaged over seeds (NaN where a method has no point within a budget in some seed).
    """
    if "criterion" in points.columns:
        points = points[points["criterion"] == criterion]
    disparity = CRITERIA[criterion]
    axis = _AXIS[criterion]
    rows = []
    for (dataset, method, seed), group in points.groupby(["dataset", "method", "seed"], sort=False):
        row = {"dataset": dataset, "method": method, "seed": seed}
        for b in budgets:
            within = group.loc[group[disparity] <= b + 1e-12, "accuracy"]
            row[f"acc@{axis}≤{b:g}"] = float(within.max()) if len(within) else np.nan
        rows.append(row)
    columns = [f"acc@{axis}≤{b:g}" for b in budgets]
    per_seed = pd.DataFrame(rows, columns=["dataset", "method", "seed", *columns])
    return (
        per_seed.groupby(["dataset", "method"], sort=False)[columns].agg(_mean_of_all).reset_index()
    )


def distance_to_limit(frontier: pd.DataFrame) -> pd.DataFrame:
    """Each method's frontier minus the limit curve's (:data:`LIMIT`) on its data set.

    ``frontier`` is a table of :func:`frontier_at`; negative: below the limit. NaN where either
    has no point within the budget in every seed.
    """
    columns = [c for c in frontier.columns if c.startswith("acc@")]
    limit = frontier[frontier["method"] == LIMIT].set_index("dataset")[columns]
    others = frontier[frontier["method"] != LIMIT]
    gaps = others[columns].to_numpy() - limit.reindex(others["dataset"])[columns].to_numpy()
    table = others[["dataset", "method"]].reset_index(drop=True)
    return pd.concat([table, pd.DataFrame(gaps, columns=columns)], axis=1)


def four_fifths(points: pd.DataFrame, threshold: float = 0.8) -> pd.DataFrame:
    """The ratio-bounded points: test accuracy, ratio and whether the four-fifths rule passes.

    Per data set, method and knob value: the mean over seeds of the accuracy and of the test
    ratio of the lowest to the highest group's selection rate, its lowest value over the seeds,
    and the number of seeds where it is at least ``threshold``.
    """
    ratio = points[points["criterion"] == "demographic_parity_ratio"]
    keys = ["dataset", "method", "knob", "value"]
    table = ratio.groupby(keys, sort=False).agg(
        accuracy=("accuracy", "mean"),
        dp_ratio=("dp_ratio", "mean"),
        lowest_dp_ratio=("dp_ratio", "min"),
        seeds_passing=("dp_ratio", lambda r: int((r >= threshold - 1e-12).sum())),
        n_seeds=("dp_ratio", "size"),
    )
    return table.reset_index()


def _mean_of_all(values: pd.Series) -> float:
    """The mean over seeds, NaN unless every seed has a value (no optimistic partial means)."""
    return float(values.mean()) if values.notna().all() else np.nan


#: The metrics of the points table (means over seeds), in its column order.
METRICS = (
    "accuracy",
    "auc",
    "log_loss",
    "dp_difference",
    "dp_ratio",
    "eo_difference",
    "equalized_odds_difference",
    "wass1",
    "sdd",
)


def _mean_points(points: pd.DataFrame) -> pd.DataFrame:
    metrics = list(METRICS)
    keys = ["dataset", "method", "criterion", "knob", "value_label", "attribute_at_prediction"]
    frame = points.assign(
        value_label=points["value"].map(lambda v: "-" if pd.isna(v) else f"{v:g}")
    )
    return frame.groupby(keys, sort=False)[metrics].mean().reset_index()


def _pareto(frame: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Points not beaten on both axes (lower ``x``, higher ``y``), sorted by ``x``."""
    ordered = frame.sort_values([x, y], ascending=[True, False])
    best = -np.inf
    keep = []
    for index, value in ordered[y].items():
        if value > best:
            keep.append(index)
            best = value
    return ordered.loc[keep]


def frontier_figure(means: pd.DataFrame, title: str) -> Figure:
    """Accuracy against DP difference, and AUC against Wass1, one marker per method point.

    The methods fitted for demographic parity (the other criteria have their own tables). One
    colour per method (up to 20), the limit curve (:data:`LIMIT`) in black, and each panel's
    horizontal axis ends a little beyond the unaware logistic model's point: points less fair
    than the unaware model (GridSearch's far grid points) would only squeeze the frontier that
    matters into a corner.
    """
    means = means[means["criterion"] == "demographic_parity"]
    fig = Figure(figsize=(11, 4.6))
    axes = fig.subplots(1, 2)
    panels = [("dp_difference", "accuracy", "DP difference at 0.5"), ("wass1", "auc", "Wass1")]
    colours = matplotlib.colormaps["tab20"].colors
    unaware = means[means["method"] == "LR (unaware)"]
    for ax, (x, y, label) in zip(axes, panels, strict=True):
        for i, (method, frame) in enumerate(means.groupby("method", sort=False)):
            style = "--" if method in WITH_ATTRIBUTE else "-"
            colour = colours[(2 * i) % 20 + (2 * i) // 20]
            width = 1.5
            if method == LIMIT:
                colour, width, method = "black", 2.5, f"{method}: the limit"
            front = _pareto(frame, x, y)
            ax.plot(
                front[x],
                front[y],
                style,
                marker="o",
                markersize=3,
                color=colour,
                linewidth=width,
                label=method,
            )
            ax.scatter(frame[x], frame[y], s=6, color=colour, alpha=0.4)
        if len(unaware):
            right = 1.15 * max(float(unaware[x].max()), BUDGETS[-1])
            ax.set_xlim(0.0, right)
            shown = means[means[x] <= right][y]
            ax.set_ylim(float(shown.min()) - 0.01, float(shown.max()) + 0.01)
        ax.set_xlabel(f"{label} (test)")
        ax.set_ylabel(f"{y} (test)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"{title}: attribute not an input (dashed: attribute at prediction)")
    fig.tight_layout()
    return fig


def _cell_points(
    name: str, seed: int, config: dict[str, Any], families=FAMILIES
) -> tuple[list[dict], str]:
    """The points of the ``families`` of methods on one data set and seed, and the split's note."""
    split = unaware_split(
        name, seed, max_train=config["max_train"].get(name), max_test=config["max_test"].get(name)
    )
    lr = logistic(split)
    points = [unaware_point(split, lr)]
    if "fairot" in families:
        points += fairot_points(
            split,
            lr,
            seed=seed,
            checkpoints=config["checkpoints"],
            configs=method_configs(config),
            dpp_taus=config["dpp_taus"],
        )
    if "fairlearn" in families:
        points += fairlearn_points(
            split,
            lr,
            seed=seed,
            bounds=config["eg_bounds"],
            max_iter=config["eg_max_iter"],
            grid_size=config["grid_size"],
            tolerances=config["to_tolerances"],
            criteria=config["eg_criteria"],
            ratio_bounds=config["ratio_bounds"],
        )
    if "fair-mlp" in families:
        points += mlp_points(
            split, seed=seed, lams=config["mlp_lams"], params=config["mlp_params"][name]
        )
    if "rate" in families:
        for kind, criteria in config["rate_criteria"].items():
            points += rate_points(
                split,
                seed=seed,
                kind=kind,
                budgets=config["rate_budgets"],
                criteria=criteria,
                min_ratios=config["ratio_bounds"],
                cv=config["rate_cv"],
            )
    title = FRONTIER_DATASETS[name]
    note = f"{split.note}; removed from X: {', '.join(split.removed)}"
    return [{"dataset": title, "seed": seed, **p} for p in points], note


def _check_families(families) -> tuple[str, ...]:
    if families is None:
        return FAMILIES
    chosen = (families,) if isinstance(families, str) else tuple(families)
    if not chosen or any(not isinstance(f, str) or f not in FAMILIES for f in chosen):
        raise ValueError(MSG_FAMILIES.format(allowed=FAMILIES, value=families))
    return tuple(f for f in FAMILIES if f in chosen)


def run_frontier(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
    n_jobs: int = 1,
    families=None,
    overrides: dict[str, Any] | None = None,
) -> StudyResult:
    """Trace the accuracy/fairness frontier of every method on the three built-in data sets.

    The sensitive attributes (and the raw columns they are cut from) are removed from ``X``;
    the mitigations still see them at fit time, as groups. Test metrics, averaged over seeds.
    ``quick`` runs a tiny subsample with one seed and few points (a smoke test, not a result).
    ``n_jobs`` processes run the (data set, seed) cells in parallel; every cell seeds all it
    uses, so the numbers do not depend on ``n_jobs``. ``families`` (a subset of
    :data:`FAMILIES`; default all) limits the run to some families of methods, beside the
    unaware logistic model: ``("fairlearn", "rate")`` compares the rate-constrained classifier
    with fairlearn's reductions without the hour of COT/DOT/MLP paths. ``overrides`` replaces
    entries of the configuration (:data:`FULL`, or :data:`QUICK` with ``quick``), e.g.
    ``{"max_train": {"adult": 3000}}`` for a smaller run; the result's ``config`` records
    the values used.
    """
    if not isinstance(n_jobs, int) or isinstance(n_jobs, bool) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer; got {n_jobs!r}.")
    families = _check_families(families)
    config = QUICK if quick else FULL
    if overrides is not None:
        if not isinstance(overrides, dict) or not set(overrides) <= set(config):
            raise ValueError(MSG_OVERRIDES.format(allowed=sorted(config), value=overrides))
        config = {**config, **overrides}
    n_seeds = n_seeds or config["n_seeds"]
    datasets = {name: FRONTIER_DATASETS[name] for name in config["datasets"]}
    cells = [
        (name, seed) for name in datasets for seed in range(random_state, random_state + n_seeds)
    ]
    bar = tqdm(total=len(cells), disable=not progress, desc="frontier")
    try:
        if n_jobs == 1:
            outputs = []
            for cell in cells:
                outputs.append(_cell_points(*cell, config, families))
                bar.update(1)
        else:
            # "spawn": a forked torch can deadlock on its thread pools.
            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=n_jobs, mp_context=context) as pool:
                futures = [pool.submit(_cell_points, *cell, config, families) for cell in cells]
                for future in as_completed(futures):
                    future.result()
                    bar.update(1)
                outputs = [future.result() for future in futures]
    finally:
        bar.close()
    records = [row for rows, _ in outputs for row in rows]
    notes_split = {
        FRONTIER_DATASETS[name]: note for (name, _), (_, note) in zip(cells, outputs, strict=True)
    }
    points = pd.DataFrame(records)
    means = _mean_points(points)
    tables = {"frontier": frontier_at(points)}
    for criterion in ("equal_opportunity", "equalized_odds"):
        if (points["criterion"] == criterion).any():
            tables[f"frontier-{criterion.replace('_', '-')}"] = frontier_at(
                points, criterion=criterion
            )
    if (points["method"] == LIMIT).any():
        tables["distance-to-limit"] = distance_to_limit(tables["frontier"])
    if (points["criterion"] == "demographic_parity_ratio").any():
        tables["four-fifths"] = four_fifths(points)
    tables["points"] = means
    figures = {
        f"frontier-{name}": frontier_figure(means[means["dataset"] == title], title)
        for name, title in datasets.items()
    }
    notes = _notes(notes_split, quick)
    return StudyResult(
        name="frontier",
        tables=tables,
        curves={"points": points},
        figures=figures,
        notes=notes,
        config={
            **{k: v for k, v in config.items() if k != "n_seeds"},
            "n_seeds": n_seeds,
            "random_state": random_state,
            "budgets": list(BUDGETS),
            "families": list(families),
            **({"notice": QUICK_NOTICE} if quick else {}),
        },
    )


QUICK_NOTICE = (
    "Quick run: German Credit only, a tiny subsample, one seed and few points per method; its "
    "frontier says nothing about the methods. Run without --quick for the study."
)


def _notes(splits: dict[str, str], quick: bool) -> str:
    lines = [
        "Test accuracy (at 0.5), AUC and log-loss against the DP difference at 0.5, Wass1 (to "
        "the test barycenter) and SDD, with the sensitive attributes removed from X. "
        "ExponentiatedGradient and ThresholdOptimizer decide at random: their accuracy and DP "
        "difference are the expected values of the randomised decision. ThresholdOptimizer "
        "and DPP read the attribute at prediction time; no other method does. The frontier "
        "table gives, per method, the best test accuracy among its points within each DP "
        "budget (the same selection on test for every method), averaged over seeds; the "
        "equal-opportunity and equalized-odds tables do the same with the TPR difference and "
        "the larger of the TPR and FPR differences, over the methods fitted for them. "
        "distance-to-limit subtracts the rate-constrained classifier with the boosted "
        "probability model (the limit curve); four-fifths gives the ratio-bounded points' "
        "accuracy and test ratio of the lowest to the highest selection rate.",
        "",
    ]
    lines += [f"- {title}: {note}" for title, note in splits.items()]
    if quick:
        lines += ["", QUICK_NOTICE]
    return "\n".join(lines)
