"""fairot on Dask: audit and DPP fit+predict at 10^6, 10^7 and 10^8 rows on a 2-worker cluster.

Run: ``python benchmarks/bench_scale.py [SIZES...]`` (default ``1e6 1e7 1e8``). A LocalCluster of
2 worker processes, 1 thread and a 2 GiB memory limit each (the issue's setting) computes on data
generated lazily by ``dask.array.random`` in partitions of at most 10^6 rows (three groups of
shares 0.5 / 0.3 / 0.2, scores Beta(2, 3) shifted by group). Each row prints the wall time,
rows/s, the peak resident memory of the busiest worker (sampled every 0.1 s) and, at sizes up to
10^7, the in-memory fairot time on the same data (``ratio`` = Dask time / in-memory time) and
the largest difference between the two results (exact path: expected at rounding level).
``FAIROT_BENCH_TASKS`` (default ``audit-exact,audit-sketch,dpp-exact,dpp-sketch``) selects rows.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

import numpy as np

PARTITION = 1_000_000
IN_MEMORY_MAX = 10_000_000


def worker_rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


class PeakMemory:
    """Largest RSS of any worker while the block runs, polled from the client."""

    def __init__(self, client):
        self.client, self.peak, self._stop = client, 0, threading.Event()

    def _poll(self):
        while not self._stop.is_set():
            # a worker restarting mid-poll: skip the sample
            with contextlib.suppress(Exception):
                self.peak = max(self.peak, *self.client.run(worker_rss).values())
            self._stop.wait(0.1)

    def __enter__(self):
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def make_data(n: int, seed: int = 0):
    import dask.array as da

    chunk = min(PARTITION, max(n // 4, 1))
    rng = da.random.default_rng(seed)
    group = rng.choice(3, size=n, p=[0.5, 0.3, 0.2], chunks=chunk)
    scores = 0.8 * rng.beta(2.0, 3.0, size=n, chunks=chunk) + 0.1 * group
    labels = (rng.random(size=n, chunks=chunk) < scores).astype(np.int64)
    X = da.stack([scores * 4.0 - 2.0, rng.standard_normal(size=n, chunks=chunk)], axis=1)
    X = X.rechunk((chunk, 2))
    return X, labels, scores, group


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def row(task, n, quantiles, seconds, peak, mem_s=None, diff=""):
    """One Markdown table row."""
    mem = "" if mem_s is None else f"{mem_s:.2f}"
    ratio = "" if mem_s is None else f"{seconds / mem_s:.1f}"
    print(
        f"| {task} | {n:.0e} | {quantiles} | {seconds:.1f} | {n / seconds:,.0f} | "
        f"{peak / 2**20:,.0f} | {mem} | {ratio} | {diff} |",
        flush=True,
    )


def audit(client, n, data, local, quantiles):
    """Time ``fairot.dask.fairness_report`` (and the in-memory one on the same rows)."""
    import fairot.dask as fd
    from fairot.metrics import fairness_report

    _, y, s, g = data
    with PeakMemory(client) as peak:
        report, seconds = timed(
            lambda: fd.fairness_report(y, s, sensitive_features=g, quantiles=quantiles)
        )
    if local is None:
        return row("audit", n, quantiles, seconds, peak.peak)
    expected, mem_s = timed(
        lambda: fairness_report(local[1], local[2], sensitive_features=local[3])
    )
    keys = ["wass1", "sdd", "spdd", "max_pairwise_w2"]
    diff = max(abs(report.attrs["summary"][k] - expected.attrs["summary"][k]) for k in keys)
    return row("audit", n, quantiles, seconds, peak.peak, mem_s, f"{diff:.1e}")


def dpp(client, n, data, local, quantiles, base):
    """Time DPP fit + predict_proba on Dask (and in memory on the same rows)."""
    import dask

    from fairot.classification import QuantileParityPostProcessor

    X, y, _, g = data

    def on_dask():
        with dask.config.set({"fairot.quantiles": quantiles}):
            model = QuantileParityPostProcessor(estimator=base).fit(X, y, sensitive_features=g)
            return model.predict_proba(X, sensitive_features=g)[:, 1].sum().compute()

    def in_memory():
        model = QuantileParityPostProcessor(estimator=base)
        model.fit(local[0], local[1], sensitive_features=local[3])
        return model.predict_proba(local[0], sensitive_features=local[3])[:, 1].sum()

    with PeakMemory(client) as peak:
        total, seconds = timed(on_dask)
    if local is None:
        return row("DPP fit+predict", n, quantiles, seconds, peak.peak)
    expected, mem_s = timed(in_memory)
    diff = f"{abs(total - expected) / n:.1e} (mean score)"
    return row("DPP fit+predict", n, quantiles, seconds, peak.peak, mem_s, diff)


def main(sizes: list[int]) -> None:
    import dask
    from distributed import Client, LocalCluster
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, memory_limit="2GiB", dashboard_address=":0"
    )
    client = Client(cluster)
    X0, y0, _, _ = make_data(100_000, seed=1)
    base = FrozenEstimator(LogisticRegression().fit(*dask.compute(X0, y0)))
    print(
        "| task | rows | quantiles | time (s) | rows/s | peak worker RSS (MiB) | "
        "in-memory (s) | ratio | max difference |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    tasks = os.environ.get("FAIROT_BENCH_TASKS", "audit-exact,audit-sketch,dpp-exact,dpp-sketch")
    for n in sizes:
        data = make_data(n)
        local = dask.compute(*data) if n <= IN_MEMORY_MAX else None
        for quantiles in ("exact", "sketch"):
            if f"audit-{quantiles}" in tasks:
                audit(client, n, data, local, quantiles)
            if f"dpp-{quantiles}" not in tasks:
                continue
            if quantiles == "exact" and n > IN_MEMORY_MAX:
                # The exact fit brings every group's sorted scores to the client and ships them
                # to each worker for predict (8 bytes per row): beyond memory at 10^8.
                print(
                    f"| DPP fit+predict | {n:.0e} | exact | skipped: the fitted ECDFs hold "
                    f"{8 * n / 2**20:,.0f} MiB | | | | | |",
                    flush=True,
                )
                continue
            dpp(client, n, data, local, quantiles, base)
    client.close()
    cluster.close()


if __name__ == "__main__":
    main([int(float(a)) for a in sys.argv[1:]] or [10**6, 10**7, 10**8])
