"""Time and peak memory of ``fairot.reporting.audit`` with its default intervals against without.

Run: ``python benchmarks/bench_audit_intervals.py [--n 1000000] [--repeat 3] [--plots]``. Each
audit runs in its own subprocess (so peak memory is its own): 4 groups, labels and scores, the
default 200 bias-corrected bootstrap replicates against ``n_bootstrap=0``. Prints the wall time
(``time.perf_counter`` around the call), the CPU time of the call (user + system, all threads,
``resource.getrusage``) and the peak resident memory of the process, and the two ratios the
issue asks for (at most 3x and 2x). With ``--repeat k`` the two audits alternate k times and
the medians are compared, so that a shared machine's changing load weighs on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

CHILD = "--child"


def _data(n: int):
    rng = np.random.default_rng(0)
    groups = rng.choice(["a", "b", "c", "d"], n, p=[0.1, 0.2, 0.3, 0.4])
    y = rng.integers(0, 2, n)
    scores = np.clip(rng.beta(2, 4, n) + 0.1 * (groups == "a") + 0.2 * y, 0, 1)
    return y, scores, groups


def _child(n: int, n_bootstrap: int, plots: bool) -> None:
    from fairot.reporting import audit

    y, scores, groups = _data(n)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    audit(y, scores, groups, n_bootstrap=n_bootstrap, plots=plots, random_state=0)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_kib = after.ru_maxrss  # KiB on Linux
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mib": peak_kib / 1024}))


def _run(n: int, n_bootstrap: int, plots: bool) -> dict:
    command = [sys.executable, __file__, CHILD, str(n), str(n_bootstrap), str(int(plots))]
    done = subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--plots", action="store_true", help="also draw the audit's figures")
    parser.add_argument("--repeat", type=int, default=1, help="alternate the two audits k times")
    args = parser.parse_args()
    _run(2_000, 20, args.plots)  # warm-up: numba caches, matplotlib font cache
    runs: dict[int, list[dict]] = {0: [], 200: []}
    for _ in range(args.repeat):
        for n_bootstrap in runs:
            runs[n_bootstrap].append(_run(args.n, n_bootstrap, args.plots))
    bare, with_ci = (
        {key: float(np.median([r[key] for r in runs[b]])) for key in runs[b][0]} for b in runs
    )
    import fairot

    print(
        f"fairot {fairot.__version__}, numpy {np.__version__}, Python {platform.python_version()}"
    )
    print(f"audit of n = {args.n:,} rows, 4 groups, plots={args.plots}, median of {args.repeat}")
    for label, run in (("without intervals", bare), ("200 BC replicates", with_ci)):
        print(
            f"{label:<18}{run['seconds']:8.2f} s wall {run['cpu']:8.2f} s CPU"
            f"   peak RSS {run['peak_mib']:6.0f} MiB"
        )
    if args.repeat > 1:
        for b, label in ((0, "without"), (200, "with")):
            walls = ", ".join(f"{r['seconds']:.2f}" for r in runs[b])
            print(f"  wall of each run {label}: {walls}")
    print(
        f"ratios: time {with_ci['seconds'] / bare['seconds']:.2f}x (goal <= 3x), "
        f"CPU {with_ci['cpu'] / bare['cpu']:.2f}x, "
        f"peak memory {with_ci['peak_mib'] / bare['peak_mib']:.2f}x (goal <= 2x)"
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD:
        _child(int(sys.argv[2]), int(sys.argv[3]), bool(int(sys.argv[4])))
    else:
        main()
