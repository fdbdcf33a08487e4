"""The accuracy/fairness frontier without the attribute: fairot's methods against fairlearn's.

Run: ``python benchmarks/bench_frontier.py [--quick] [--seeds N] [--jobs J] [--out DIR]``. Runs
the study behind ``fairot reproduce frontier`` (:func:`fairot.experiments.frontier.run_frontier`)
and prints, per data set, the best test accuracy of each method within each DP-difference budget
(``acc@DP≤b``), its gap to fairlearn's ``ExponentiatedGradient`` measured in the same run, and
the wall time. ``--out`` also writes the tables and one figure per data set.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from fairot.experiments.frontier import BUDGETS, run_frontier
from fairot.utils import markdown_table


def gaps_to_exponentiated_gradient(frontier):
    """Each method's frontier minus ExponentiatedGradient's, per data set and budget."""
    columns = [f"acc@DP≤{b:g}" for b in BUDGETS]
    rows = []
    for _, frame in frontier.groupby("dataset", sort=False):
        reference = frame.loc[frame["method"] == "ExponentiatedGradient", columns]
        if reference.empty:
            continue
        gaps = frame[columns] - reference.to_numpy()
        rows.append(frame[["dataset", "method"]].join(gaps.round(4)))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tiny smoke-test run")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (default: 3)")
    parser.add_argument("--out", default=None, help="folder for tables and figures")
    parser.add_argument("--jobs", type=int, default=1, help="processes, one (data set, seed) each")
    args = parser.parse_args()
    start = time.perf_counter()
    result = run_frontier(quick=args.quick, n_seeds=args.seeds, progress=True, n_jobs=args.jobs)
    elapsed = time.perf_counter() - start
    print(markdown_table(result.tables["frontier"].round(4)))
    print()
    print("Gap to ExponentiatedGradient (positive: more accurate at the same budget):")
    print(markdown_table(gaps_to_exponentiated_gradient(result.tables["frontier"])))
    print(f"\nwall time: {elapsed:.0f} s")
    if args.out:
        print(f"written to {result.write(args.out)}")


if __name__ == "__main__":
    main()
