"""Time fairot's W1 and fairness report on 10^6 scores against SciPy and one np.sort.

Run: ``python benchmarks/bench_metrics.py``. Prints best-of-N wall times and the ratios against
the baselines measured in the same run: ``scipy.stats.wasserstein_distance`` (the peer) and one
``np.sort`` of the same data (the unavoidable work: exact W_p needs the order statistics).
"""

from __future__ import annotations

import platform

import numpy as np
import scipy
import scipy.stats
from _timing import best_time

import fairot
from fairot.metrics import fairness_report, wasserstein_distance

N = 1_000_000
REPEATS = 5


def main() -> None:
    rng = np.random.default_rng(0)
    u = rng.beta(2, 5, N)
    v = rng.beta(2, 4, N)
    v_small = rng.beta(2, 4, N // 3)
    groups = rng.integers(0, 4, N)
    labels = (rng.random(N) < u).astype(int)

    t_sort = best_time(lambda: np.sort(u))
    rows = []
    for name, ours, theirs in [
        (
            "W1, equal sizes",
            lambda: wasserstein_distance(u, v),
            lambda: scipy.stats.wasserstein_distance(u, v),
        ),
        (
            "W1, sizes 1e6 vs 3.3e5",
            lambda: wasserstein_distance(u, v_small),
            lambda: scipy.stats.wasserstein_distance(u, v_small),
        ),
    ]:
        assert np.isclose(ours(), theirs(), rtol=1e-9)
        t_ours, t_theirs = best_time(ours), best_time(theirs)
        rows.append((name, t_ours, t_theirs))
    t_w2 = best_time(lambda: wasserstein_distance(u, v, p=2))
    # Overflow-safe W_p (issue 14): gaps beyond [1e-100, 1e100] are divided by the largest gap
    # before powering, and p > 2 is summed in log space. Both must cost little next to the sort.
    huge_u, huge_v = u * 1e200, v * 1e200
    w2_huge = wasserstein_distance(huge_u, huge_v, p=2)
    assert np.isclose(w2_huge, 1e200 * wasserstein_distance(u, v, p=2), rtol=1e-12)
    t_w2_huge = best_time(lambda: wasserstein_distance(huge_u, huge_v, p=2))
    t_w1000 = best_time(lambda: wasserstein_distance(u, v, p=1000))
    t_report = best_time(lambda: fairness_report(labels, u, sensitive_features=groups), 3)

    print(
        f"fairot {fairot.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}"
    )
    print(f"n = {N:,} scores; best of {REPEATS}; one np.sort of the scores = {t_sort * 1e3:.1f} ms")
    print()
    print(
        f"{'task':<28}{'fairot (ms)':>12}{'scipy (ms)':>12}{'scipy/fairot':>14}{'fairot/sort':>13}"
    )
    for name, t_ours, t_theirs in rows:
        print(
            f"{name:<28}{t_ours * 1e3:>12.1f}{t_theirs * 1e3:>12.1f}"
            f"{t_theirs / t_ours:>14.2f}{t_ours / t_sort:>13.2f}"
        )
    for name, t in [
        ("W2, equal sizes", t_w2),
        ("W2, values ~1e200", t_w2_huge),
        ("W1000, equal sizes", t_w1000),
    ]:
        print(f"{name:<28}{t * 1e3:>12.1f}{'-':>12}{'-':>14}{t / t_sort:>13.2f}")
    print(
        f"{'fairness_report, 4 groups':<28}{t_report * 1e3:>12.1f}{'-':>12}{'-':>14}"
        f"{t_report / t_sort:>13.2f}"
    )


if __name__ == "__main__":
    main()
