r"""Every summary metric and per-group rate of a batch of bootstrap replicates held as counts.

A replicate that draws row :math:`i` :math:`c_i` times is the data with weights :math:`c_i`
(times the sample weight), so no row is copied. :func:`prepare` sorts the rows once by score
(:class:`~fairot.metrics.resampling._count_draws.CountLayout`); :func:`draw_replicates` draws
the replicates' counts from their seeds (:mod:`fairot.metrics.resampling._count_draws`) on the
threads numba would use (each replicate has its own seed, so the split changes nothing) and
reads off the counts every summary metric of :func:`fairot.metrics.fairness_report` and the
per-group rates: the distances by the compiled statistics
(:mod:`fairot.metrics.resampling._count_statistics`), the rates as counted sums
(:func:`fairot.metrics._rates.rate_matrix`). Only the weighted distances couple each replicate
on its own rows (:mod:`fairot.metrics.resampling._weighted_metrics`).

Internal surface (for :mod:`fairot.metrics.resampling._bootstrap`): :func:`prepare`,
:func:`draw_replicates`, :func:`count_summary`, :func:`replicate_pool`, :func:`threads`.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numba
import numpy as np

from fairot.metrics._rates import rate_matrix, rate_summary
from fairot.metrics.resampling._count_draws import CountLayout, copy_indices, draw_counts
from fairot.metrics.resampling._count_statistics import count_statistics, draw_statistics
from fairot.metrics.resampling._weighted_metrics import (
    accuracy_summary,
    weighted_distribution_summary,
)


def _distance_summary(stats: dict, task: str, scale: float) -> dict[str, np.ndarray]:
    """The distributional summary metrics of :func:`fairness_report` from the count kernels."""
    out = {"wass1": stats["wass1"]}
    if task == "classification":
        # Scaled like the groups: unscaled, SDD was off whenever max|score| was not in [1, 2).
        out["sdd"], out["spdd"] = stats["sdd"], stats["w1"].sum(axis=1)
    else:
        out["max_pairwise_w1"] = stats["w1"].max(axis=1)
    out["max_pairwise_w2"] = stats["w2"].max(axis=1)
    if task == "regression":
        out["max_pairwise_winf"] = stats["winf"].max(axis=1)
    with np.errstate(over="ignore"):  # inf only where the true distance exceeds the float max
        return {k: v * scale for k, v in out.items()}


class _Rows(NamedTuple):
    """The data of one bootstrap, rows in the pooled order of ``layout``."""

    layout: CountLayout
    y: np.ndarray | None
    pred: np.ndarray
    member: np.ndarray | None
    weight: np.ndarray | None
    rows: list  # the groups' positions in the original order (weighted distances)
    names: list
    task: str
    threshold: float
    category: np.ndarray | None  # the atom of every pooled position (classification)


def prepare(y, pred, member, rows, names, cells, task, threshold, weight) -> _Rows:
    """The checked data of :func:`fairot.metrics.bootstrap_intervals`, sorted once by score."""
    layout = CountLayout(pred, rows, cells)
    order = layout.order
    category = None
    if task == "classification" and weight is None:
        # A replicate's rates depend on its rows only through the counts of every
        # (cell, decision, label) atom and the counted scores: the pooled pass sums those.
        category = (pred[order] > threshold).astype(np.int64)
        if y is not None:
            category = 2 * category + (y[order] == 1)
    return _Rows(
        layout,
        None if y is None else y[order],
        pred[order],
        # The membership by row only serves the rates that are not atom sums.
        None if category is not None else np.ascontiguousarray(member[order]),
        None if weight is None else weight[order],
        rows,
        names,
        task,
        threshold,
        category,
    )


def _atom_rates(data: _Rows, stats: dict) -> tuple[dict, tuple]:
    """Rates of every group from the atom counts: :func:`rate_matrix` on one row per atom."""
    atoms = stats["atoms"]  # (B, cells, atoms)
    n_rep, n_cells, n_atoms = atoms.shape
    kind = np.arange(n_atoms)
    # Every atom stands for rows of one decision (and one label): a score of 1 (0) decides
    # (does not) at any threshold in [0, 1) (a threshold of 1 decides no row: no mass at 1).
    decided = kind >> 1 if data.y is not None else kind
    pred = np.tile(decided.astype(float), n_cells)[None, :]
    y = None if data.y is None else np.tile(kind & 1, n_cells)[None, :]
    member = np.repeat(data.layout.cell_member.astype(float), n_atoms, axis=0)
    weight = atoms.reshape(n_rep, n_cells * n_atoms)
    rates = rate_matrix(y, pred, member, data.task, data.threshold, weight)
    if y is not None:
        # The calibration gap is the one rate that reads the scores themselves.
        # Summed cell by cell in order (not by BLAS, whose order may change with the batch):
        # a replicate's value does not depend on the replicates computed beside it.
        in_group = data.layout.cell_member.astype(float)[None, :, :]
        scores = (stats["scores"][:, :, None] * in_group).sum(axis=1) * data.layout.scale
        counted = scores - (weight * y) @ member  # counts: integer sums, exact in any order
        rates["calibration_gap"] = counted / (weight @ member)
    return rates, (y, pred, weight)


def count_summary(data: _Rows, counts: np.ndarray) -> tuple[dict, dict]:
    """Rates and summary metrics of the replicates given by ``counts`` (B, n), pooled order.

    A replicate drawing row ``i`` ``c_i`` times is the data with weights ``c_i`` (times the
    sample weight): rates and errors are counted, and unweighted distances are read from the
    presorted groups by the count kernels, so no row is copied. Weighted distances still couple
    each replicate on its resampled rows (:func:`weighted_distribution_summary`).
    """
    layout = data.layout
    if data.weight is None:
        stats = count_statistics(layout, counts, data.category, _n_atoms(data))
        return _summary(data, stats, counts)
    take = copy_indices(layout, counts)
    original = np.empty_like(data.pred)
    original[layout.order] = data.pred
    weight = np.empty_like(data.weight)
    weight[layout.order] = data.weight
    summary = weighted_distribution_summary(
        original[take], weight[take], data.rows, data.names, data.task
    )
    return _counted_rates(data, counts, summary)


def _n_atoms(data: _Rows) -> int:
    return 4 if data.y is not None else 2


def _summary(data: _Rows, stats: dict, counts: np.ndarray | None) -> tuple[dict, dict]:
    """Rates and summary metrics from the kernels' ``stats`` (``counts``: for regression rates)."""
    summary = _distance_summary(stats, data.task, data.layout.scale)
    if data.category is None:
        return _counted_rates(data, counts, summary)
    rates, (y, pred, w) = _atom_rates(data, stats)
    return rates, _with_rates(summary, rates, y, pred, w, data.task, data.threshold)


def _counted_rates(data: _Rows, counts: np.ndarray, summary: dict) -> tuple[dict, dict]:
    w = counts.astype(float) if data.weight is None else counts * data.weight
    if data.task == "regression":  # the residual helpers scale per replicate row
        pred = np.broadcast_to(data.pred, counts.shape)
        y = None if data.y is None else np.broadcast_to(data.y, counts.shape)
    else:
        pred, y = data.pred[None, :], None if data.y is None else data.y[None, :]
    rates = rate_matrix(y, pred, data.member, data.task, data.threshold, w)
    return rates, _with_rates(summary, rates, y, pred, w, data.task, data.threshold)


def _drawn_summary(data: _Rows, seeds: np.ndarray) -> tuple[dict, dict]:
    if data.category is not None:  # everything from the kernels: no (B, n) counts
        stats = draw_statistics(data.layout, seeds, data.category, _n_atoms(data))
        return _summary(data, stats, None)
    return count_summary(data, draw_counts(data.layout, seeds))


def draw_replicates(
    data: _Rows, seeds: np.ndarray, pool: ThreadPoolExecutor | None = None
) -> tuple[dict, dict]:
    """:func:`count_summary` of the replicates drawn from ``seeds``, split over ``pool``.

    Each replicate has its own seed, so the split among threads changes nothing. The kernels
    release the GIL: the threads run the draws and merges side by side.
    """
    workers = 1 if pool is None else max(1, min(threads(), seeds.shape[0]))
    if workers == 1:
        results = [_drawn_summary(data, seeds)]
    else:
        parts = np.array_split(seeds, workers)
        results = list(pool.map(lambda part: _drawn_summary(data, part), parts))
    rates = {k: np.concatenate([r[0][k] for r in results]) for k in results[0][0]}
    summary = {k: np.concatenate([r[1][k] for r in results]) for k in results[0][1]}
    return rates, summary


def replicate_pool() -> ThreadPoolExecutor | contextlib.nullcontext:
    """The threads of :func:`draw_replicates` (a context manager; ``None`` for one thread)."""
    workers = threads()
    return ThreadPoolExecutor(workers) if workers > 1 else contextlib.nullcontext()


def threads() -> int:
    # As many threads as numba would use (NUMBA_NUM_THREADS), at most the usable cores.
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(numba.get_num_threads(), usable or 1))


def _with_rates(summary, rates, y, pred, weight, task, threshold):
    """Add the rate disparities and, with labels, the error metrics to ``summary``."""
    summary.update(rate_summary(rates, task))
    if y is not None:
        summary.update(accuracy_summary(y, pred, weight, task, threshold))
    if y is not None and task == "classification":
        accuracy = rates["accuracy"]
        summary["accuracy_std"] = accuracy.std(axis=1)
        summary["skewed_error_ratio"] = _skewed_error_ratio(1.0 - accuracy)
    return summary


def _skewed_error_ratio(errors: np.ndarray) -> np.ndarray:
    # A replicate with an error-free group has an unbounded ratio: inf, as the point estimate.
    low, high = errors.min(axis=1), errors.max(axis=1)
    out = np.full(low.shape, np.inf)
    np.divide(high, low, out=out, where=low > 0)
    return out
