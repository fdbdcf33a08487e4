"""Time the audit's stratified bootstrap against the replicate-by-replicate loop it replaces.

Run: ``python benchmarks/bench_bootstrap.py``. 200 replicates of 20,000 scores in 4 groups, with
labels. Baseline measured in the same run on the same resampled rows: for each replicate,
``fairness_report`` (the papers' metrics) plus fairlearn's ``demographic_parity_difference`` and
``equalized_odds_difference`` — what a user would write without ``bootstrap_intervals``.
"""

from __future__ import annotations

import platform

import numpy as np
from _timing import best_time
from fairlearn.metrics import demographic_parity_difference, equalized_odds_difference

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


if __name__ == "__main__":
    main()
