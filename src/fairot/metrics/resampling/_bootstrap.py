r"""The stratified bootstrap of every fairness metric: :func:`bootstrap_intervals`.

:func:`bootstrap_intervals` validates its inputs, draws ``n_bootstrap`` replicates that resample
rows *within each intersectional cell* of the sensitive columns (so every replicate has the
groups' sizes), recomputes every summary metric of :func:`fairot.metrics.fairness_report` and
the per-group threshold rates on each, and reads the intervals off the replicates
(:mod:`fairot.metrics.resampling._intervals`). A replicate is kept as counts of the rows,
never as a copy (:mod:`fairot.metrics.resampling._replicate_metrics`, which spreads chunks of
replicates over threads); this module only cuts the replicates into chunks that keep memory
bounded, shows progress on a terminal, and assembles :class:`BootstrapIntervals`.
"""

from __future__ import annotations

import math
import sys
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from tqdm.auto import tqdm

from fairot.metrics._calling import MSG_EMPTY_WEIGHT, group_metric
from fairot.metrics._rates import check_rate_inputs
from fairot.metrics.resampling._count_draws import replicate_seeds
from fairot.metrics.resampling._intervals import (
    MSG_CONFIDENCE,
    MSG_METHOD,
    bias_corrected_interval,
    percentile_interval,
)
from fairot.metrics.resampling._replicate_metrics import (
    count_summary,
    draw_replicates,
    prepare,
    replicate_pool,
    threads,
)
from fairot.utils.arrays import check_sample_weight
from fairot.utils.groups import GroupEncoding, GroupsMode, sensitive_frame
from fairot.utils.sensitive import check_sensitive_features

MSG_N_BOOTSTRAP = "n_bootstrap must be an integer >= 10; got {value!r}."
MSG_ENCODING_ROWS = (
    "sensitive_features is a GroupEncoding, but some sample_weight is zero: those rows are left "
    "out and the others' groups encoded anew; pass the sensitive features as data."
)
# The least value of each summary metric (0 for the distances and gaps; r2 has none).
_FLOORS = {"skewed_error_ratio": 1.0}
# Replicates are processed in chunks so that the (replicates x samples) matrices stay small.
_CHUNK_CELLS = 4_000_000


class BootstrapIntervals(NamedTuple):
    """Percentile bootstrap intervals of :func:`bootstrap_intervals`.

    Attributes
    ----------
    summary : pandas.DataFrame
        One row per summary metric, columns ``low`` and ``high``.
    groups : dict of str to pandas.DataFrame
        For each per-group rate (``selection_rate``, ``tpr``, ...), a frame indexed by group with
        columns ``low`` and ``high``.
    replicates : pandas.DataFrame
        The summary metrics of every replicate (one row each).
    confidence : float
        Coverage of the intervals.
    method : {"percentile", "bc"}
        How the summary intervals were read off the replicates.
    notes : dict of str to str
        Summary metrics whose interval needs a word: not estimable (``low``/``high`` NaN) with
        the reason (all replicates equal, too few replicates, undefined values, or, with
        ``"bc"``, an estimate in the tail of its bootstrap distribution), or one-sided (a
        non-negative statistic whose estimate is below its replicates).

    Examples
    --------
    :func:`bootstrap_intervals` returns one; every interval is a ``low``/``high`` row.

    >>> import numpy as np
    >>> from fairot.metrics import bootstrap_intervals
    >>> g = np.repeat(["a", "b"], 50)
    >>> s = np.r_[np.linspace(0.2, 0.6, 50), np.linspace(0.4, 0.8, 50)]
    >>> ci = bootstrap_intervals(None, s, sensitive_features=g, n_bootstrap=20, random_state=0)
    >>> ci.confidence, list(ci.summary.columns), len(ci.replicates)
    (0.95, ['low', 'high'], 20)
    """

    summary: pd.DataFrame
    groups: dict[str, pd.DataFrame]
    replicates: pd.DataFrame
    confidence: float
    method: str = "percentile"
    notes: dict[str, str] = {}  # noqa: RUF012 (a NamedTuple default, never mutated)


@group_metric("y_true", "y_pred", backend=False, controls=False)
def bootstrap_intervals(
    y_true: ArrayLike | None,
    y_pred: ArrayLike,
    *,
    sensitive_features: Any,
    task: str = "classification",
    group_mode: GroupsMode = "intersection",
    threshold: float = 0.5,
    n_bootstrap: int = 200,
    confidence: float = 0.95,
    random_state: int | np.random.Generator | None = None,
    sample_weight: ArrayLike | None = None,
    method: str = "percentile",
) -> BootstrapIntervals:
    r"""Stratified percentile-bootstrap intervals of every summary metric and per-group rate.

    Each replicate redraws, with replacement, the rows of every group (of every intersectional
    cell of the sensitive columns, which also keeps the sizes of overlapping marginal groups), so
    group sizes are those of the data; the interval is the central ``confidence`` range of the
    replicates' values (percentile bootstrap, [1]_). Metrics are those of
    :func:`fairot.metrics.fairness_report`'s summary (``wass1``, ``sdd``, ``spdd``, pairwise W_p,
    ``err``, ``accuracy_std``, ``skewed_error_ratio``; ``mse``, ``r2``) and the threshold
    disparities (``demographic_parity_difference``, ``demographic_parity_ratio``,
    ``equalized_odds_difference``).

    With ``sample_weight``, each replicate carries the weights of the rows it draws and every
    metric is the weighted one of :func:`fairot.metrics.fairness_report` on that replicate (the
    weighted bootstrap); rows of zero weight are left out first, so integer weights resample
    like the rows they stand for. The Wasserstein metrics are then coupled replicate by
    replicate (about ``n_bootstrap`` weighted reports of work), where unweighted replicates
    share one coupling.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or None
        Labels or responses; ``None`` bootstraps the label-free metrics only.
    y_pred : array-like of shape (n_samples,)
    sensitive_features : array-like, DataFrame or GroupEncoding
        Group membership (a required keyword, as in fairlearn). An intersection-group
        encoding from :func:`fairot.utils.sensitive.check_sensitive_features` is used as it is,
        unless a weight is zero (those rows are dropped and the rest encoded anew: pass the
        data then).
    task : {"classification", "regression"}, default="classification"
    group_mode : {"intersection", "marginal"}, default="intersection"
    threshold : float in [0, 1], default=0.5
    n_bootstrap : int >= 10, default=200
        Number of replicates.
    confidence : float in (0, 1), default=0.95
    random_state : int, numpy.random.Generator or None
        Seed of the resampling.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights with a positive sum (e.g. survey weights), carried by the rows
        into every replicate; ``None``: every row counts 1.
    method : {"percentile", "bc"}, default="percentile"
        How the summary intervals are read off the replicates: their central range, or the
        bias-corrected interval of :func:`bias_corrected_interval`, which contains the estimate
        and has positive width, or is NaN with the reason in ``notes`` (all replicates equal,
        too few replicates, an estimate in the tail), or is one-sided with a note. The
        per-group rate intervals are percentile intervals.

    Returns
    -------
    BootstrapIntervals

    References
    ----------
    .. [1] B. Efron and R. Tibshirani, "An Introduction to the Bootstrap", Chapman & Hall, 1993,
       Chapter 13.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics import bootstrap_intervals
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b"], 200)
    >>> s = np.clip(rng.normal(0.4 + 0.2 * (g == "b"), 0.1), 0, 1)
    >>> ci = bootstrap_intervals(None, s, sensitive_features=g, n_bootstrap=50, random_state=0)
    >>> low, high = ci.summary.loc["sdd"]
    >>> bool(0 < low < high)
    True
    """
    y, pred, enc, threshold = check_rate_inputs(
        y_true, y_pred, sensitive_features, task, group_mode, threshold
    )
    weight = check_sample_weight(sample_weight, pred.shape[0])
    if weight is not None and not (weight > 0).all():
        # A zero-weight row counts for nothing in the weighted statistic: resample the others.
        keep = weight > 0
        for name, idx in zip(enc.names, enc.indices(), strict=True):
            if not keep[idx].any():
                raise ValueError(MSG_EMPTY_WEIGHT.format(group=name))
        if isinstance(sensitive_features, GroupEncoding):
            raise ValueError(MSG_ENCODING_ROWS)
        sensitive_features = sensitive_frame(sensitive_features, "sensitive_features")[keep]
        y, pred, weight = None if y is None else y[keep], pred[keep], weight[keep]
        enc = check_sensitive_features(sensitive_features, pred.shape[0], group_mode=group_mode)
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    if n_bootstrap < 10:
        raise ValueError(MSG_N_BOOTSTRAP.format(value=n_bootstrap))
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(MSG_CONFIDENCE.format(value=confidence))
    if method not in ("bc", "percentile"):
        raise ValueError(MSG_METHOD.format(value=method))
    # The only draws taken from ``random_state``: one seed per replicate (the replicate's own
    # stream), so chunks and threads leave every replicate as it is.
    seeds = replicate_seeds(np.random.default_rng(random_state), n_bootstrap)
    # The strata are the intersectional cells: the groups themselves in intersection mode.
    cells = enc.codes
    if group_mode != "intersection":
        cells = check_sensitive_features(
            sensitive_features, pred.shape[0], group_mode="intersection", min_groups=1
        ).codes
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, cells, task, threshold,
        weight,
    )  # fmt: skip
    # (replicates x rows) counts exist only where rates need the rows (regression, weights):
    # there a chunk holds _CHUNK_CELLS counts; elsewhere one is 4x as long (fewer hand-overs
    # to the threads and fewer work arrays), as memory does not grow with it.
    per_chunk = _CHUNK_CELLS // max(pred.shape[0], 1) * (4 if data.category is not None else 1)
    chunk = max(threads(), per_chunk)
    rate_parts: dict[str, list] = {}
    summary_parts: dict[str, list] = {}
    # Long bootstraps show progress on a terminal (never in logs, pipes or tests).
    bar = tqdm(total=n_bootstrap, desc="bootstrap", leave=False, disable=not sys.stderr.isatty())
    with replicate_pool() as pool:
        for start in range(0, n_bootstrap, chunk):
            rates, summary = draw_replicates(data, seeds[start : start + chunk], pool)
            for key, value in rates.items():
                rate_parts.setdefault(key, []).append(value)
            for key, value in summary.items():
                summary_parts.setdefault(key, []).append(value)
            bar.update(min(chunk, n_bootstrap - start))
    bar.close()
    alpha = (1.0 - confidence) / 2
    replicates = pd.DataFrame({k: np.concatenate(v) for k, v in summary_parts.items()})
    estimates = {}
    if method == "bc":
        # The estimate is the replicate that draws every row once.
        _, point = count_summary(data, np.ones((1, pred.shape[0]), dtype=np.int32))
        estimates = {k: float(v[0]) for k, v in point.items()}
    bounds, notes = {}, {}
    if method == "percentile":
        # The central range as before (the drift monitor reads these bands as they were).
        central = percentile_interval(replicates, alpha)
        bounds = {key: (float(low), float(high)) for key, (low, high) in central.iterrows()}
    for key in replicates.columns if method == "bc" else ():
        low, high, note = bias_corrected_interval(
            estimates.get(key, math.nan),
            replicates[key],
            confidence,
            method=method,
            floor=None if key == "r2" else _FLOORS.get(key, 0.0),
        )
        bounds[key] = (low, high)
        if note:
            notes[key] = note
    summary_ci = pd.DataFrame.from_dict(bounds, orient="index", columns=["low", "high"])
    group_ci = {}
    for key, parts in rate_parts.items():
        values = pd.DataFrame(np.concatenate(parts), columns=enc.names)
        group_ci[key] = percentile_interval(values, alpha).rename_axis("group")
    return BootstrapIntervals(summary_ci, group_ci, replicates, float(confidence), method, notes)
