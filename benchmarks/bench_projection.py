"""The projection's three solvers: the case for each (issue 38).

Run: ``python benchmarks/bench_projection.py [--cap UNITS]``. ``adjust_quantiles`` with a squared
cost solves one group-weighted projection (problem (6) of the regression seed paper) through
``fairot.regression._fastest.fastest_projection``, which picks among three exact solvers:
Dykstra's cycles (the default, any ``p``), projected Newton on the W2 dual and a primal-dual
interior point for W1 with few groups. Each extra engine must show a problem a user meets where
the portfolio returns much sooner than Dykstra alone. For every problem below it times, in the
same run and on the same inputs (scaled and normalised exactly as ``adjust_quantiles`` does):

* ``portfolio``: ``fastest_projection`` under ``adjust_quantiles``' default work budget;
* ``engine``: the extra engine alone (``project_small_w1`` or ``project_pairs_w2``), no quick try;
* ``Dykstra``: ``dykstra_projection`` alone, from scratch, under the same budget (``--cap``,
  default 3e9 units, ``adjust_quantiles``' ``max_work``): ``capped`` when it ran out;

and prints Dykstra / portfolio, the cycles Dykstra needed, and the squared objective of each
answer relative to the best of the three (the answers are all exactly feasible; the tests certify
optimality against ``scipy.optimize.linprog`` and SLSQP). Times are the best of three where a
call takes under a second, else one call.

The problems (``tau``: epsilon as a fraction of the largest latent pairwise distance, the
``tau`` of ``WassersteinFairRegressor``):

* ``ordinary``: K = 5 groups, M = 50, ``benchmarks/bench_groups.py``'s curves (quantile curves of
  normal samples, shares U(0.2, 1)), tau = 0.5 and 0.01, W1 and W2: the quick Dykstra answers.
* ``W1 tight`` / ``W2 tight``: the same curves, tau = 1e-4, 1e-5, 1e-6 (near-exact parity):
  Dykstra's cycles grow about as 1 / tau.
* ``W1 tied`` / ``W2 tied``: issue 19's reproducer (``benchmarks/bench_tied.py``: K = 4 or 5,
  M = 10 to 25, rounded normal curves, shares from {1e-6, 1e-3, 0.1, 1}), the seeds that Dykstra
  alone needs the most cycles for.
* ``W2 many``: K = 100, 300, 1000 groups on M = 50 (``bench_groups.py``), tau = 0.5.
* ``W1 beyond``: tau = 1e-5 past the interior point's size (K = 5, M = 100; K = 20, M = 50):
  the portfolio is Dykstra there, and the engine is not run (``nan``).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
from _timing import best_time
from bench_groups import latent_groups
from bench_tied import issue_problem

import fairot
from fairot.regression._dual_newton import project_pairs_w2
from fairot.regression._dykstra import WorkBudget, dykstra_projection
from fairot.regression._fastest import INTERIOR_POINT_MAX_GROUPS, fastest_projection
from fairot.regression._feasibility import magnitude_scale
from fairot.regression._interior_point import SMALL_PROBLEM, project_small_w1
from fairot.regression._projections import pairwise_grid_distances

DEFAULT_MAX_WORK = 3e9  # adjust_quantiles' default max_work
TOL = 1e-10  # adjust_quantiles' projection tolerance
UNBOUNDED = (-np.inf, np.inf)

# issue 19's reproducer: the W1 seeds that Dykstra alone needs the most cycles for (0.9 to
# 4.9 million, docs/benchmarks.md) and the W2 seeds of the same draw (seeds 0..99) that it
# needs the most for (2.9 to 4.6 million cycles, the default cap)
W1_TIED_SEEDS = (20, 0, 52)
W2_TIED_SEEDS = (16, 33, 40)
TIGHT = (1e-4, 1e-5, 1e-6)
MANY_GROUPS = (100, 300, 1000)
BEYOND_INTERIOR_POINT = ((5, 100), (20, 50))  # K * M over SMALL_PROBLEM, or K over 10


def problems():
    """(case, label, target, shares, p, epsilon) as ``adjust_quantiles`` hands them over."""
    latent, weights = latent_groups(5, m=50)
    for p in (1, 2):
        for tau in (0.5, 0.01):
            yield "ordinary", f"tau {tau:g}", latent, weights, p, tau
    for p, seeds in ((1, W1_TIED_SEEDS), (2, W2_TIED_SEEDS)):
        for tau in TIGHT:
            yield f"W{p} tight", f"tau {tau:g}", latent, weights, p, tau
        for seed in seeds:
            tied, tied_weights, tied_p, tau = issue_problem(seed)
            assert tied_p == p
            yield f"W{p} tied", f"seed {seed}", tied, tied_weights, p, tau
    for k in MANY_GROUPS:
        many, many_weights = latent_groups(k)
        yield "W2 many", f"K = {k}", many, many_weights, 2, 0.5
    for k, m in BEYOND_INTERIOR_POINT:
        beyond, beyond_weights = latent_groups(k, m=m)
        yield "W1 beyond", "tau 1e-05", beyond, beyond_weights, 1, 1e-5


def prepared(latent, weights, p, tau):
    """The projection's inputs exactly as ``adjust_quantiles`` builds them (scaled, shares)."""
    scale = magnitude_scale(latent)
    epsilon = tau * pairwise_grid_distances(latent, p).max()
    return latent / scale, weights / weights.sum(), epsilon / scale


def timed(fn):
    """(best wall time, result): best of three when one call takes under a second."""
    start = time.perf_counter()
    result = fn()
    first = time.perf_counter() - start
    if first < 1.0:
        first = min(first, best_time(fn, repeats=2))
    return first, result


def objective(target, shares, curves) -> float:
    return float(shares @ np.mean((curves - target) ** 2, axis=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=DEFAULT_MAX_WORK, help="work units")
    cap = parser.parse_args().cap
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"fairot {fairot.__version__}, numpy {np.__version__}, {platform.python_version()}")
    print(f"{os.cpu_count()} CPUs, load average {load:.1f} at start; work cap {cap:g} units")
    # compile the kernels first: every pair (K <= 10) and the working set (K > 10)
    for k in (5, 12):
        target, shares, eps = prepared(*latent_groups(k, m=10), 2, 0.5)
        for p in (1, 2):
            fastest_projection(target, shares, p, eps, UNBOUNDED, TOL, WorkBudget(cap), True)
            dykstra_projection(target, shares, p=p, epsilon=eps, bounds=UNBOUNDED, tol=TOL)
    header = (
        f"{'case':<12} {'problem':<10} {'K x M':>9} {'portfolio (s)':>13} {'engine (s)':>10} "
        f"{'Dykstra (s)':>11} {'Dyk/port':>8} {'cycles':>9} "
        f"{'objective excess: port / eng / Dyk':>35}"
    )
    print(header)
    for case, label, latent, weights, p, tau in problems():
        target, shares, eps = prepared(latent, weights, p, tau)
        k, m = target.shape

        def portfolio(target=target, shares=shares, p=p, eps=eps):
            budget = WorkBudget(cap)
            return fastest_projection(target, shares, p, eps, UNBOUNDED, TOL, budget, True)

        def engine(target=target, shares=shares, p=p, eps=eps):
            if p == 1:
                return project_small_w1(target, shares, epsilon=eps, bounds=UNBOUNDED, tol=TOL,
                                        budget=WorkBudget(cap))  # fmt: skip
            return project_pairs_w2(target, shares, epsilon=eps, tol=TOL, budget=WorkBudget(cap))

        def dykstra(target=target, shares=shares, p=p, eps=eps):
            return dykstra_projection(target, shares, p=p, epsilon=eps, bounds=UNBOUNDED,
                                      tol=TOL, budget=WorkBudget(cap))  # fmt: skip

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_port, port = timed(portfolio)
            beyond = p == 1 and (k > INTERIOR_POINT_MAX_GROUPS or k * m > SMALL_PROBLEM)
            t_eng, eng = (np.nan, None) if beyond else timed(engine)
            t_dyk, dyk = timed(dykstra)
        values = [np.nan if r is None else objective(target, shares, r.curves)
                  for r in (port, eng, dyk)]  # fmt: skip
        best = np.nanmin(values)
        excess = " / ".join(
            "-" if np.isnan(v) else f"{(v - best) / max(best, 1e-300):.0e}" for v in values
        )
        capped = "" if dyk.converged else " capped"
        print(
            f"{case:<12} {label:<10} {f'{k} x {m}':>9} {t_port:>13.4f} {t_eng:>10.4f} "
            f"{t_dyk:>11.3f} {t_dyk / t_port:>8.0f} {dyk.n_iter:>9}{capped} {excess:>35}",
            flush=True,
        )


if __name__ == "__main__":
    main()
