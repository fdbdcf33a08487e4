"""Small tied problems with shares 10^6 apart, before and after the W1 interior point (issue 19).

Run: ``python benchmarks/bench_tied.py [n_problems]``. Issue 19's reproducer draws problems of
K = 2..5 groups on M = 1..33 grid points: rounded (tied, not flat) sorted normal curves, shares
from {1e-6, 1e-3, 0.1, 1}, p in {1, 2}, epsilon = tau * the largest latent distance with tau in
{1e-12, 1e-6, 0.01, 0.3, 0.7} (``tests/regression/test_interior_point.py`` draws the same). For the
W1 problems it times, in the same run,

* ``adjust_quantiles`` as it is now (a quick Dykstra, then the interior point when needed);
* the old path: the same call's Dykstra projection alone, from scratch, under the same default
  work budget (``dykstra_projection`` on the curves divided by the same power of two), which
  is what ``adjust_quantiles`` ran for ``p = 1`` before;

and prints the total, median and largest wall times, the ratio old / new, the process CPU
time of the new path (less disturbed by other load), and the largest difference
of objective (new minus old: negative means the new answer is better). W2 problems do not take
the new path (projected Newton on the dual already bounds their cost) and are timed alone.
"""

from __future__ import annotations

import platform
import sys
import time
import warnings

import numpy as np
from _timing import best_time

import fairot
from fairot.regression import adjust_quantiles
from fairot.regression._dykstra import WorkBudget, dykstra_projection
from fairot.regression._feasibility import magnitude_scale
from fairot.regression._projections import pairwise_grid_distances

SHARES = [1e-6, 1e-3, 0.1, 1.0]
DEFAULT_MAX_WORK = 3e9  # adjust_quantiles' default


def best_cpu_time(fn, repeats: int = 3) -> float:
    """Best process CPU time of ``repeats`` calls: what the solve costs when the machine is shared
    (wall time also counts the time other processes held the cores)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def issue_problem(seed: int):
    """Issue 19's reproducer: (latent, weights, p, tau)."""
    rng = np.random.default_rng(seed)
    k, m = int(rng.integers(2, 6)), int(rng.integers(1, 34))
    latent = np.round(np.sort(rng.normal(size=(k, m)), axis=1) + rng.normal(size=(k, 1)))
    weights = rng.choice(SHARES, size=k)
    p = [1, 2][int(rng.integers(0, 2))]
    tau = [1e-12, 1e-6, 0.01, 0.3, 0.7][int(rng.integers(0, 5))]
    return latent, weights, p, tau


def objective(latent, weights, curves) -> float:
    shares = weights / weights.sum()
    return float(shares @ np.mean((curves - latent) ** 2, axis=1))


def old_path(latent, weights, p, epsilon):
    """``adjust_quantiles``' projection before the interior point: Dykstra alone."""
    scale = magnitude_scale(latent)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = dykstra_projection(
            latent / scale,
            weights / weights.sum(),
            p=p,
            epsilon=epsilon / scale,
            bounds=(-np.inf, np.inf),
            tol=1e-10,
            budget=WorkBudget(DEFAULT_MAX_WORK),
        )
    return out.curves * scale, out.n_iter


def main() -> None:
    n_problems = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    print(f"fairot {fairot.__version__}, numpy {np.__version__}, {platform.python_version()}")
    adjust_quantiles(*issue_problem(0)[:2], p=1, epsilon=0.1)  # compile the kernels first
    rows = {1: [], 2: []}
    for seed in range(n_problems):
        latent, weights, p, tau = issue_problem(seed)
        epsilon = tau * pairwise_grid_distances(latent, p).max()
        if epsilon == 0.0:
            continue

        def new(latent=latent, weights=weights, p=p, epsilon=epsilon):
            return adjust_quantiles(latent, weights, p=p, epsilon=epsilon)

        result = new()
        t_new = best_time(new, repeats=3)
        cpu_new = best_cpu_time(new, repeats=3)
        if p == 2:
            rows[2].append((t_new, np.nan, 0.0, cpu_new, seed, result.n_iter, 0))
            continue
        start = time.perf_counter()
        curves, cycles = old_path(latent, weights, p, epsilon)
        t_old = time.perf_counter() - start
        gain = objective(latent, weights, result.curves) - objective(latent, weights, curves)
        rows[1].append((t_new, t_old, gain, cpu_new, seed, result.n_iter, cycles))
    w1 = np.array([r[:4] for r in rows[1]])
    print(f"{len(rows[1])} W1 problems of issue 19's reproducer (seeds 0..{n_problems - 1}):")
    print(f"{'':>22} {'new (s)':>10} {'old (s)':>10} {'old / new':>10} {'new CPU (s)':>12}")
    for name, fn in (("total", np.sum), ("median", np.median), ("largest", np.max)):
        new_t, old_t, cpu_t = fn(w1[:, 0]), fn(w1[:, 1]), fn(w1[:, 3])
        print(f"{name:>22} {new_t:>10.4f} {old_t:>10.3f} {old_t / new_t:>10.1f} {cpu_t:>12.4f}")
    print(f"{'problems over 0.1 s':>22} {int(np.sum(w1[:, 0] > 0.1)):>10} "
          f"{int(np.sum(w1[:, 1] > 0.1)):>10}")  # fmt: skip
    print(f"largest objective difference new - old: {w1[:, 2].max():.2e}")
    worst = sorted(rows[1], key=lambda r: -r[1])[:5]
    print("slowest for the old path (seed, K x M, old cycles -> new iterations, old s -> new s):")
    for t_new, t_old, _, _, seed, n_iter, cycles in worst:
        shape = issue_problem(seed)[0].shape
        print(f"  seed {seed:>3}  {shape[0]} x {shape[1]:>2}  {cycles:>9} -> {n_iter:>6}"
              f"  {t_old:>7.3f} -> {t_new:.4f}")  # fmt: skip
    w2 = np.array([r[0] for r in rows[2]])
    print(f"{len(w2)} W2 problems (unchanged path): total {w2.sum():.3f} s, median "
          f"{np.median(w2):.4f} s, largest {w2.max():.4f} s")  # fmt: skip


if __name__ == "__main__":
    main()
