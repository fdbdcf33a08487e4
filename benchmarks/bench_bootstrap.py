"""Time the audit's stratified bootstrap against the replicate-by-replicate loop it replaces.

Run: ``python benchmarks/bench_bootstrap.py``. 200 replicates of 20,000 scores in 4 groups, with
labels. Baseline measured in the same run on the same resampled rows: for each replicate,
``fairness_report`` (the papers' metrics) plus fairlearn's ``demographic_parity_difference`` and
``equalized_odds_difference`` — what a user would write without ``bootstrap_intervals``.

``python benchmarks/bench_bootstrap.py --metricframe [--n 200000] [--groups 8]
[--replicates 100]``: the user case of :mod:`fairot.metrics.resampling` against the bootstrap a
fairlearn user has, ``MetricFrame(..., n_boot=B)`` (fairlearn >= 0.10), on the same labels,
scores and groups: fairot's ``bootstrap_intervals`` computes every summary metric and every
per-group rate of every replicate; the MetricFrame holds the selection rate alone.
"""

from __future__ import annotations

import argparse
import platform
import time

import fairlearn
import numpy as np
from _timing import best_time
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equalized_odds_difference,
    selection_rate,
)

import fairot
from fairot.metrics import bootstrap_intervals, fairness_report
from fairot.metrics.resampling import stratified_indices
from fairot.utils.sensitive import check_sensitive_features

N = 20_000
B = 200


def main() -> None:
    rng = np.random.default_rng(0)
    groups = rng.choice(["a", "b", "c", "d"], N, p=[0.1, 0.2, 0.3, 0.4])
    y = rng.integers(0, 2, N)
    scores = np.clip(rng.beta(2, 4, N) + 0.1 * (groups == "a") + 0.2 * y, 0, 1)

    def ours():
        return bootstrap_intervals(
            y, scores, sensitive_features=groups, n_bootstrap=B, random_state=0
        )

    rows = stratified_indices(
        check_sensitive_features(groups, N).codes, B, np.random.default_rng(0)
    )

    def loop():
        for idx in rows:
            yi, si, gi = y[idx], scores[idx], groups[idx]
            fairness_report(yi, si, sensitive_features=gi)
            decisions = (si > 0.5).astype(int)
            demographic_parity_difference(yi, decisions, sensitive_features=gi)
            equalized_odds_difference(yi, decisions, sensitive_features=gi)

    ours()  # warm-up (numba kernels of the transport core)
    t_ours = best_time(ours, repeats=3)
    t_loop = best_time(loop, repeats=1)
    print(
        f"fairot {fairot.__version__}, numpy {np.__version__}, Python {platform.python_version()}"
    )
    print(f"n = {N:,} scores, 4 groups, {B} replicates")
    print(f"bootstrap_intervals (vectorised)        {t_ours:8.2f} s")
    print(f"loop: fairness_report + fairlearn DP/EO  {t_loop:8.2f} s   ({t_loop / t_ours:.1f}x)")


def metricframe(n: int, n_groups: int, replicates: int) -> None:
    """``bootstrap_intervals`` (every metric) against fairlearn's MetricFrame (selection rate)."""
    rng = np.random.default_rng(0)
    names = [f"g{k}" for k in range(n_groups)]
    groups = rng.choice(names, n)
    y = rng.integers(0, 2, n)
    scores = np.clip(rng.beta(2, 4, n) + 0.05 * (groups == names[0]) + 0.2 * y, 0, 1)
    decisions = (scores > 0.5).astype(int)

    def ours():
        return bootstrap_intervals(
            y, scores, sensitive_features=groups, n_bootstrap=replicates, random_state=0
        )

    def theirs():
        return MetricFrame(
            metrics={"selection_rate": selection_rate},
            y_true=y,
            y_pred=decisions,
            sensitive_features=groups,
            n_boot=replicates,
            ci_quantiles=[0.025, 0.975],
            random_state=0,
        )

    ours()  # warm-up (numba kernels)
    t_ours = best_time(ours, repeats=3)
    start = time.perf_counter()
    theirs()
    t_theirs = time.perf_counter() - start
    print(
        f"fairot {fairot.__version__}, fairlearn {fairlearn.__version__}, "
        f"numpy {np.__version__}, Python {platform.python_version()}"
    )
    print(f"n = {n:,} rows, {n_groups} groups, {replicates} replicates, labels")
    print(f"bootstrap_intervals, every metric and rate  {t_ours:8.2f} s")
    print(
        f"MetricFrame(n_boot={replicates}), selection rate   {t_theirs:8.2f} s"
        f"   ({t_theirs / t_ours:.0f}x)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metricframe", action="store_true")
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--groups", type=int, default=8)
    parser.add_argument("--replicates", type=int, default=100)
    args = parser.parse_args()
    if args.metricframe:
        metricframe(args.n, args.groups, args.replicates)
    else:
        main()
