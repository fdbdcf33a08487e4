"""Choosing RateConstrainedClassifier's multipliers on 10^6 rows against fitting its model.

Run: ``python benchmarks/bench_rate_constrained.py [n_rows]`` (default 10^6). On synthetic rows
(10 Gaussian features, three groups that the features predict in part, a label that depends on
features and group), in the same run, it times

* fitting the probability model: ``LogisticRegression(max_iter=1000)`` on the (group, label)
  cells, the default ``estimator`` (one fit; ``RateConstrainedClassifier`` makes ``cv + 1``);
* choosing the multipliers: ``solve_rate_program`` on that model's cell probabilities, for
  demographic parity and equalized odds, each with a difference and a ratio budget (best of 3);

and prints the ratios solve / fit of wall and of process CPU time (the latter less disturbed
by other load). ``RateConstrainedClassifier.fit`` fits the model ``cv + 1`` times (6 by
default) and solves once. Everything runs on one BLAS/OpenMP thread (``threadpoolctl``): on a
shared machine whose cores are oversubscribed, threaded BLAS made the logistic fit 40 times
slower in wall time than its CPU time, which would flatter the ratio. At 10^5 rows it also
times the program on every row at once (one HiGHS solve with n columns, what the working set
replaces) and checks that both reach the same optimum. With dask installed, it last times
``RateConstrainedClassifier.fit`` with that model frozen (``FrozenEstimator``) on the rows in
memory and on the same rows as Dask arrays in 8 partitions (threaded scheduler): the Dask fit
reads the partitions in a few passes, never gathering more than the solver's working set.
"""

from __future__ import annotations

import platform
import sys
import time

import numpy as np
import scipy
import sklearn
from _timing import best_time
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

import fairot
from fairot.classification import RateConstrainedClassifier, solve_rate_program

N_GROUPS = 3


def synthetic(n: int, seed: int = 0):
    """Features, labels and groups: x predicts the group in part and the label."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, N_GROUPS, n)
    X = rng.normal(size=(n, 10))
    X[:, 0] += 0.8 * a
    X[:, 1] -= 0.5 * (a == 1)
    logit = X[:, :4] @ np.array([1.0, 0.6, -0.4, 0.3]) + 0.4 * a - 0.5
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(int)
    return X, y, a


def cpu_time(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def problems(P: np.ndarray):
    """(name, margins, unit probabilities, families) of DP and equalized odds, from the cells."""
    eta = P[:, 1::2].sum(axis=1)
    groups = np.column_stack([P[:, 2 * g] + P[:, 2 * g + 1] for g in range(N_GROUPS)])
    odds = np.column_stack([P[:, 1::2], P[:, 0::2]])  # TPR family, then FPR family
    return [
        ("demographic parity", 2 * eta - 1, groups, np.zeros(N_GROUPS, dtype=int)),
        ("equalized odds", 2 * eta - 1, odds, np.repeat([0, 1], N_GROUPS)),
    ]


BUDGETS = [{"max_difference": 0.02}, {"min_ratio": 0.8}]


def main(n: int) -> None:
    print(
        f"fairot {fairot.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"scikit-learn {sklearn.__version__}, {platform.python_version()}"
    )
    X, y, a = synthetic(n)
    cells = 2 * a + y
    model = LogisticRegression(max_iter=1000)
    start_cpu = time.process_time()
    start = time.perf_counter()
    model.fit(X, cells)
    fit_wall, fit_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    P = model.predict_proba(X)
    print(f"{n} rows, {N_GROUPS} groups, 10 features")
    print(f"fit LogisticRegression on the cells: {fit_wall:8.3f} s wall {fit_cpu:8.3f} s CPU")
    print(f"{'program':>20} {'budget':>20} {'solve (s)':>10} {'CPU (s)':>9} "
          f"{'wall ratio':>10} {'CPU ratio':>9} {'passes':>7} {'set':>7}")  # fmt: skip
    for name, margins, units, families in problems(P):
        for budget in BUDGETS:

            def solve(margins=margins, units=units, families=families, budget=budget):
                return solve_rate_program(margins, units, families, **budget)

            wall = best_time(solve, repeats=3)
            cpu = min(cpu_time(solve) for _ in range(3))
            result = solve()
            label = ", ".join(f"{k}={v}" for k, v in budget.items())
            print(
                f"{name:>20} {label:>20} {wall:10.3f} {cpu:9.3f} {wall / fit_wall:10.3f} "
                f"{cpu / fit_cpu:9.3f} {result.n_passes:7d} {result.working_set_size:7d}"
            )
    small = 100_000
    if n >= small:
        name, margins, units, families = problems(P[:small])[0]
        start = time.perf_counter()
        whole = solve_rate_program(
            margins, units, families, max_difference=0.02, working_set_size=small
        )
        whole_wall = time.perf_counter() - start
        start = time.perf_counter()
        screened = solve_rate_program(margins, units, families, max_difference=0.02)
        screened_wall = time.perf_counter() - start
        print(
            f"{small} rows, {name}, max_difference=0.02: every row at once {whole_wall:.3f} s, "
            f"working set {screened_wall:.3f} s (x{whole_wall / screened_wall:.1f}); "
            f"objective difference {abs(whole.objective - screened.objective):.1e}"
        )

    dask_fit(X, y, a, model)


def dask_fit(X, y, a, model, n_partitions: int = 8) -> None:
    """``RateConstrainedClassifier.fit`` of a frozen model: rows in memory against Dask rows."""
    try:
        import dask
        import dask.array as da
    except ImportError:
        print("dask is not installed: no Dask line")
        return
    params = {"estimator": FrozenEstimator(model), "max_difference": 0.02}
    fits = {}

    def in_memory():
        fits["memory"] = RateConstrainedClassifier(**params).fit(X, y, sensitive_features=a)

    chunk = -(-X.shape[0] // n_partitions)
    dX = da.from_array(X, chunks=(chunk, X.shape[1]))
    dy, da_ = da.from_array(y, chunks=chunk), da.from_array(a, chunks=chunk)

    def on_dask():
        with dask.config.set(scheduler="threads"):
            fits["dask"] = RateConstrainedClassifier(**params).fit(dX, dy, sensitive_features=da_)

    memory_wall = best_time(in_memory, repeats=1)
    dask_wall = best_time(on_dask, repeats=1)
    gap = np.abs(fits["dask"].multipliers_ - fits["memory"].multipliers_).max()
    print(
        f"RateConstrainedClassifier.fit, frozen model, demographic parity, max_difference=0.02: "
        f"in memory {memory_wall:.3f} s, Dask ({n_partitions} partitions, threads) "
        f"{dask_wall:.3f} s (x{dask_wall / memory_wall:.1f}); multipliers differ by {gap:.1e}"
    )


if __name__ == "__main__":
    with threadpool_limits(1):
        main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 1_000_000)
