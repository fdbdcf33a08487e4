r"""Fairness drift monitoring over a stream of scores, with closed-loop re-adjustment.

The COT paper's Section "Changing Level of Unfairness": the data a deployed model sees may carry a
different level of unfairness than the data it was made fair on, and COT/DOT re-adjust by
continuing their updates (``partial_fit``) on the new data. :class:`FairnessMonitor` closes that
loop: it cuts the stream into windows (rows, or calendar periods; the unfinished last one is
reported as *partial*), measures the metric of each with a stratified bootstrap band, alerts when
the band is above the threshold *and* the value is significant against a null of no disparity (a
permutation test, ``_null.py``), and on an alert calls ``partial_fit`` on the alerting window.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from fairot.metrics import bootstrap_intervals, demographic_parity_difference, wass1
from fairot.metrics.checks import UNIT_INTERVAL
from fairot.metrics.resampling import batched_wasserstein, stratified_indices
from fairot.reporting._direction import check_favorable_outcome, direction_line
from fairot.reporting._null import p_value, permutation_null, positive_rate_gap, reference_null
from fairot.reporting._windows import (
    StreamBuffer,
    WindowResult,
    as_times,
    calendar_labels,
    rows_of,
)
from fairot.utils.arrays import check_array_1d
from fairot.utils.calendar import calendar_offset, period_label
from fairot.utils.sensitive import check_sensitive_features

Metric = Literal["sdd", "wass1", "demographic_parity_difference", "reference_w1"]
#: The metrics a monitor can watch (``fairot monitor --metric`` offers these).
MONITOR_METRICS = ("sdd", "wass1", "demographic_parity_difference", "reference_w1")
MSG_METRIC = "metric must be one of {choices}; got {value!r}."
MSG_WINDOW = "window must be an integer >= 20 (samples per window); got {value!r}."
MSG_THRESHOLD = "threshold must be a finite number > 0; got {value!r}."
MSG_N_BOOTSTRAP = "n_bootstrap must be an integer >= 10; got {value!r}."
MSG_CONFIDENCE = "confidence must be in (0, 1); got {value!r}."
MSG_ALPHA = "alpha must be in (0, 0.5] (false-alarm rate of the null test); got {value!r}."
MSG_N_PERMUTATIONS = (
    "n_permutations must be an integer >= {minimum} (so that a p-value <= alpha={alpha:g} is "
    "reachable); got {value!r}."
)
MSG_NO_PARTIAL_FIT = "estimator must have a partial_fit method (COT/DOT); got {name}."
MSG_NEEDS_XY = (
    "update() needs X and y when the monitor has an estimator: the re-adjustment runs "
    "partial_fit on the alerting window."
)
MSG_LENGTH = "{name} has {got} rows but scores has {n}."
MSG_N_UPDATES = "n_updates must be a positive integer; got {value!r}."
MSG_WINDOW_AND_EVERY = (
    "give window= (rows per window) or every= (a calendar period), not both; got window={window!r} "
    "and every={every!r}."
)
MSG_NEEDS_TIMES = "update() needs times= (dates) when the windows are calendar periods (every=)."
MSG_FLUSHED = "the stream was ended by flush(); start a new FairnessMonitor to monitor more data."
MSG_WINDOW_GROUPS = (
    "window {index} holds a single group ({group}); a fairness metric needs two. Use a larger "
    "window or check the stream's order."
)


def _positive_int(value: Any, minimum: int, message: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(message.format(value=value))
    return int(value)


class FairnessMonitor:
    r"""Windowed fairness metric of a score stream, with bootstrap bands, alerts and re-adjustment.

    The stream is cut into consecutive windows of ``window`` samples, or into the calendar
    periods ``every`` (``"7D"``, ``"1W"``, ``"1M"``: the bins of ``pandas.Series.resample``; the
    samples then need ``times``). :meth:`flush` ends the stream and evaluates its last,
    unfinished window, flagged ``partial``. On each window the monitor
    computes ``metric`` and a percentile-bootstrap band (rows resampled within each group); an
    *alert* is a band entirely above ``threshold`` **and** a value significant at level ``alpha``
    against a null without disparity. The null is needed because the metrics are biased upwards
    on small windows (two samples of one law are at a positive ``W_1``): without it, on a fair
    stream most 20-row windows would alert. For ``"sdd"``, ``"wass1"`` and
    ``"demographic_parity_difference"`` the null permutes the group labels within the window
    (``n_permutations`` times, group sizes kept); for ``"reference_w1"`` it exchanges each
    group's window rows with its reference rows (pooled, split at random, sizes kept). The
    p-value counts the window as one null draw, so on a fair stream the false-alarm rate is at
    most ``alpha`` at every window size, so also on partial and calendar windows of any size. With
    an
    ``estimator`` (a fitted :class:`~fairot.classification.COTClassifier` or
    :class:`~fairot.classification.DOTClassifier`), an alert runs ``estimator.partial_fit`` on the
    window's ``X, y, groups`` for ``n_updates`` updates: the COT paper's continual re-adjustment to
    a changed level of unfairness, whose target stays the one fixed at the first fit. Score the
    next data with the re-adjusted estimator to close the loop.

    Metrics (Section "Metrics" of the COT paper): ``"sdd"``, :math:`\sum_a W_1(p_{S_a}, p_S)`;
    ``"wass1"``, the sum of :math:`W_1` to the groups' :math:`W_1` barycenter;
    ``"demographic_parity_difference"`` at ``decision_threshold``; ``"reference_w1"``,
    :math:`\sum_a W_1(p_{S_a}, p^{\mathrm{ref}}_{S_a})`, how far each group's scores drifted from
    the reference.

    Parameters
    ----------
    reference_scores : array-like of shape (n_reference,)
        Scores in [0, 1] on reference data (e.g. the data the model was made fair on).
    reference_sensitive_features : array-like or DataFrame
        Their groups; the stream's groups must be among them.
    metric : {"sdd", "wass1", "demographic_parity_difference", "reference_w1"}, default="sdd"
    window : int >= 20, optional
        Samples per window; 1000 when neither ``window`` nor ``every`` is given.
    every : str or pandas.DateOffset, optional
        Calendar windows instead: a pandas offset alias of a positive period (``"7D"``, ``"1W"``,
        ``"1M"`` or ``"ME"`` for months, ``"12h"``). Exactly one of ``window`` and ``every``.
        The outputs name it as written (attribute ``every_label``: ``"1M"``, not pandas' ``"ME"``).
    threshold : float > 0, default=0.05
        Alert level of the metric.
    estimator : COT/DOT estimator, optional
        Fitted estimator to re-adjust on an alert.
    n_updates : int, default=1000
        Updates of each re-adjustment.
    on_alert : callable, optional
        ``on_alert(monitor, result)`` called on every alert (after any re-adjustment).
    n_bootstrap : int, default=200
    confidence : float, default=0.95
    alpha : float in (0, 0.5], default=0.05
        False-alarm rate of the null test: a window alerts only if its p-value is ``<= alpha``.
    n_permutations : int, default=200
        Null draws per window; at least ``1 / alpha - 1`` (else no p-value reaches ``alpha``).
    decision_threshold : float, default=0.5
        Threshold of ``"demographic_parity_difference"``.
    favorable_outcome : {1, 0}, default=1
        Which decision is favourable, as in :func:`~fairot.reporting.audit`: 1, the positive
        one (``score > decision_threshold``: an approval score); 0, the negative one (a risk
        score, P(default)). Stated in every output (:attr:`direction`: the report files, the
        plot's title, the notebook view). No metric the monitor watches depends on it: with
        favourable rates :math:`1 - r_a` the demographic-parity difference is
        :math:`\max_a (1 - r_a) - \min_a (1 - r_a) = \max_a r_a - \min_a r_a`, and the
        :math:`W_1` metrics compare whole score distributions, not decisions.
    random_state : int or None, default=0
        Seed of the bootstrap and of the null draws.
    reference_times : array-like of shape (n_reference,), optional
        Times of the reference rows; only reported (``reference_span_``).

    Attributes
    ----------
    reference_value_ : float
        The metric on the reference data (0 for ``"reference_w1"``).
    history_ : pandas.DataFrame
        One row per completed window (the fields of :class:`WindowResult`).
    n_seen_ : int
        Samples received.
    n_reference_ : int
        Reference rows.
    reference_span_ : tuple or None
        First and last of ``reference_times``.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.reporting import FairnessMonitor
    >>> rng = np.random.default_rng(0)
    >>> g = np.tile(["a", "b"], 200)
    >>> fair = rng.uniform(size=400)
    >>> monitor = FairnessMonitor(fair, g, window=200, threshold=0.1, n_bootstrap=50)
    >>> [r.alert for r in monitor.update(fair, g)]
    [False, False]
    >>> unfair = np.clip(fair + 0.3 * (g == "a"), 0, 1)
    >>> [r.alert for r in monitor.update(unfair, g)]
    [True, True]
    """

    def __init__(
        self,
        reference_scores: ArrayLike,
        reference_sensitive_features: Any,
        *,
        metric: Metric = "sdd",
        window: int | None = None,
        every: str | pd.offsets.BaseOffset | None = None,
        threshold: float = 0.05,
        estimator: Any = None,
        n_updates: int = 1000,
        on_alert: Callable[[FairnessMonitor, WindowResult], Any] | None = None,
        n_bootstrap: int = 200,
        confidence: float = 0.95,
        alpha: float = 0.05,
        n_permutations: int = 200,
        decision_threshold: float = 0.5,
        favorable_outcome: int = 1,
        random_state: int | None = 0,
        reference_times: ArrayLike | None = None,
    ):
        if metric not in MONITOR_METRICS:
            raise ValueError(MSG_METRIC.format(choices=MONITOR_METRICS, value=metric))
        self.metric = metric
        if window is not None and every is not None:
            raise ValueError(MSG_WINDOW_AND_EVERY.format(window=window, every=every))
        self.every = None if every is None else calendar_offset(every)
        self.every_label = None if every is None else period_label(every)
        size = 1000 if window is None else window
        self.window = None if every is not None else _positive_int(size, 20, MSG_WINDOW)
        real = isinstance(threshold, numbers.Real) and not isinstance(threshold, bool)
        if not (real and math.isfinite(threshold) and threshold > 0):
            raise ValueError(MSG_THRESHOLD.format(value=threshold))
        self.threshold = float(threshold)
        self.n_bootstrap = _positive_int(n_bootstrap, 10, MSG_N_BOOTSTRAP)
        if not (isinstance(confidence, numbers.Real) and 0 < confidence < 1):
            raise ValueError(MSG_CONFIDENCE.format(value=confidence))
        self.confidence = float(confidence)
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (0 < alpha <= 0.5):
            raise ValueError(MSG_ALPHA.format(value=alpha))
        self.alpha = float(alpha)
        least = math.ceil(1 / self.alpha - 1 - 1e-9)
        message = MSG_N_PERMUTATIONS.replace("{minimum}", str(least))
        message = message.replace("{alpha:g}", f"{self.alpha:g}")
        self.n_permutations = _positive_int(n_permutations, least, message)
        if estimator is not None and not hasattr(estimator, "partial_fit"):
            raise TypeError(MSG_NO_PARTIAL_FIT.format(name=type(estimator).__name__))
        self.estimator = estimator
        self.n_updates = _positive_int(n_updates, 1, MSG_N_UPDATES)
        self.on_alert = on_alert
        self.decision_threshold = decision_threshold
        self.favorable_outcome = check_favorable_outcome(favorable_outcome)
        self.random_state = random_state
        self._rng = np.random.default_rng(random_state)

        scores = check_array_1d(reference_scores, "reference_scores", bounds=UNIT_INTERVAL)
        self._encoding = check_sensitive_features(
            reference_sensitive_features, scores.shape[0], name="reference_sensitive_features"
        )
        codes = self._encoding.codes
        self._reference_sorted = [np.sort(scores[codes == g]) for g in range(self.n_groups)]
        self._null_rng = np.random.default_rng(None if random_state is None else [random_state, 1])
        self.reference_value_ = (
            0.0 if metric == "reference_w1" else float(self._point(scores, codes))
        )
        self.n_reference_ = int(scores.shape[0])
        self.reference_span_ = None
        if reference_times is not None:
            ref_times = as_times(
                reference_times, scores.shape[0], dates=self.every is not None, ordered=False
            )
            self.reference_span_ = (ref_times.min(), ref_times.max())
        self._buffer = StreamBuffer()
        self._last_time = self._open_period = None
        # Calendar bins are resample's over reference + stream: they start at the reference.
        self._first_time = None if reference_times is None else self.reference_span_[0]
        self._flushed = False
        self.n_seen_ = 0
        self._results: list[WindowResult] = []

    @property
    def direction(self) -> str:
        """The reading stated in every output: which decision is favourable, at which threshold.

        :func:`~fairot.reporting.direction_line` of ``favorable_outcome`` and
        ``decision_threshold``, e.g. ``"favourable outcome: the negative decision (score <=
        0.5)"``.
        """
        return direction_line(self.favorable_outcome, self.decision_threshold)

    @property
    def n_groups(self) -> int:
        """Number of reference groups."""
        return self._encoding.n_groups

    @property
    def group_names(self) -> list[str]:
        """Readable names of the reference groups."""
        return list(self._encoding.names)

    @property
    def history_(self) -> pd.DataFrame:
        """Completed windows, one row each."""
        return pd.DataFrame(self._results, columns=WindowResult._fields)

    # ------------------------------------------------------------------ the metric
    def _point(self, scores: np.ndarray, codes: np.ndarray) -> float:
        if self.metric in ("sdd", "reference_w1"):
            return float(self._values(scores[None, :], codes)[0])
        names = np.asarray(self.group_names, dtype=object)[codes]
        if self.metric == "wass1":
            return float(wass1(None, scores, sensitive_features=names))
        return demographic_parity_difference(
            None, scores, sensitive_features=names, threshold=self.decision_threshold
        )

    def _values(self, scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The metric for every row of ``scores`` (replicates, samples) under fixed ``codes``."""
        present = [g for g in range(self.n_groups) if np.any(codes == g)]
        rows = [np.flatnonzero(codes == g) for g in present]
        if self.metric == "reference_w1":
            return sum(
                batched_wasserstein(
                    np.sort(scores[:, r], axis=1), self._reference_sorted[g][None, :], (1.0,)
                )[0]
                for g, r in zip(present, rows, strict=True)
            )
        if self.metric == "sdd":
            pooled = np.sort(scores, axis=1)
            return sum(
                batched_wasserstein(np.sort(scores[:, r], axis=1), pooled, (1.0,))[0] for r in rows
            )
        raise AssertionError(self.metric)  # pragma: no cover - _point handles the others

    def _window_band(self, scores: np.ndarray, codes: np.ndarray) -> tuple[float, float, float]:
        if self.metric in ("wass1", "demographic_parity_difference"):
            names = np.asarray(self.group_names, dtype=object)[codes]
            ci = bootstrap_intervals(
                None,
                scores,
                sensitive_features=names,
                threshold=self.decision_threshold,
                n_bootstrap=self.n_bootstrap,
                confidence=self.confidence,
                random_state=self._rng,
            )
            low, high = ci.summary.loc[self.metric]
            return self._point(scores, codes), float(low), float(high)
        replicate_rows = stratified_indices(codes, self.n_bootstrap, self._rng)
        replicates = self._values(scores[replicate_rows], codes)
        alpha = (1.0 - self.confidence) / 2
        low, high = np.quantile(replicates, [alpha, 1 - alpha])
        return self._point(scores, codes), float(low), float(high)

    def _batch(self, batch: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """The metric of every row of ``batch``: vectorised where the metric allows."""
        if self.metric == "demographic_parity_difference":
            return positive_rate_gap(batch, codes, self.decision_threshold)
        if self.metric == "wass1":
            names = np.asarray(self.group_names, dtype=object)[codes]
            return np.array([wass1(None, row, sensitive_features=names) for row in batch])
        return self._values(batch, codes)

    def _p_value(self, value: float, scores: np.ndarray, codes: np.ndarray) -> float:
        if self.metric == "reference_w1":
            null = reference_null(
                scores, codes, self._reference_sorted, self.n_permutations, self._null_rng
            )
        else:
            null = permutation_null(self._batch, scores, codes, self.n_permutations, self._null_rng)
        return p_value(value, null)

    # ------------------------------------------------------------------ the stream
    def update(
        self,
        scores: ArrayLike,
        sensitive_features: Any,
        *,
        times: Any = None,
        X: Any = None,
        y: Any = None,
    ) -> list:
        """Add samples to the stream; evaluate every window they complete.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)
            Scores in [0, 1] of the deployed model.
        sensitive_features : array-like or DataFrame
            Groups of the samples, in the form of ``reference_sensitive_features``.
        times : array-like of shape (n_samples,), optional
            Times of the samples, in order (never before the last time received). Required with
            ``every`` (dates); otherwise only reported (``time_from``, ``time_to``).
        X : array-like of shape (n_samples, n_features), optional
            Inputs, needed (with ``y``) when the monitor re-adjusts an estimator.
        y : array-like of shape (n_samples,), optional
            Labels for ``partial_fit``.

        Returns
        -------
        list of WindowResult
            The windows completed by these samples (possibly none).
        """
        if self._flushed:
            raise ValueError(MSG_FLUSHED)
        values = check_array_1d(scores, "scores", bounds=UNIT_INTERVAL)
        n = values.shape[0]
        codes = self._encoding.encode(sensitive_features, name="sensitive_features")
        if codes.shape[0] != n:
            raise ValueError(MSG_LENGTH.format(name="sensitive_features", got=codes.shape[0], n=n))
        if self.estimator is not None:
            if X is None or y is None:
                raise ValueError(MSG_NEEDS_XY)
            X = np.asarray(X)
            y = np.asarray(y)
            for name, array in (("X", X), ("y", y)):
                if array.shape[0] != n:
                    raise ValueError(MSG_LENGTH.format(name=name, got=array.shape[0], n=n))
        if times is None and self.every is not None:
            raise ValueError(MSG_NEEDS_TIMES)
        stamps = None
        if times is not None:
            stamps = as_times(times, n, dates=self.every is not None, last=self._last_time)
            if n:
                self._first_time = stamps[0] if self._first_time is None else self._first_time
                self._last_time = stamps[-1]
        if self.every is None:
            self._buffer.append(values, codes, X, y, stamps)
            self.n_seen_ += n
            return [
                self._close_window(self.window) for _ in range(self._buffer.size // self.window)
            ]
        completed = []
        if n == 0:
            return completed
        labels = calendar_labels(stamps, self._first_time, self.every)
        # Rows of one period are contiguous (times in order): one run per period.
        cuts = np.flatnonzero(labels[1:] != labels[:-1]) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n], strict=True):
            if self._open_period is not None and labels[lo] != self._open_period:
                completed.append(self._close_window(self._buffer.size))
            self._open_period = labels[lo]
            self._buffer.append(
                values[lo:hi], codes[lo:hi], rows_of(X, lo, hi), rows_of(y, lo, hi), stamps[lo:hi]
            )
            self.n_seen_ += hi - lo
        return completed

    def flush(self) -> list:
        """End the stream: evaluate its last, unfinished window, flagged ``partial``.

        Its alert keeps the same null test as every window (exact at any window size). Later
        calls to :meth:`update` raise.

        Returns
        -------
        list of WindowResult
            The partial window, or nothing when no sample waits (the stream ended on a window's
            last row).
        """
        if self._flushed:
            return []
        self._flushed = True
        if self._buffer.size == 0:
            return []
        return [self._close_window(self._buffer.size, partial=True)]

    def _close_window(self, size: int, *, partial: bool = False) -> WindowResult:
        start = self.n_seen_ - self._buffer.size
        values, codes, X, y, times = self._buffer.take(size)
        index = len(self._results)
        extra = {
            "partial": partial,
            "period": self._open_period if self.every is not None else None,
            "time_from": None if times is None else times[0],
            "time_to": None if times is None else times[-1],
        }
        present = np.unique(codes)
        if present.shape[0] < 2:
            group = self.group_names[int(present[0])]
            if self.every is None and not partial:
                raise ValueError(MSG_WINDOW_GROUPS.format(index=index, group=group))
            nan = float("nan")
            note = f"one group ({group}): not evaluated"
            result = WindowResult(
                index, start, start + size, nan, nan, nan, False, False, nan, note=note, **extra
            )
            self._results.append(result)
            return result
        value, low, high = self._window_band(values, codes)
        p = self._p_value(value, values, codes)
        alert = low > self.threshold and p <= self.alpha
        readjusted = False
        if alert and self.estimator is not None:
            labels = np.asarray(self._encoding.labels, dtype=object)[codes]
            self.estimator.partial_fit(X, y, sensitive_features=labels, n_updates=self.n_updates)
            readjusted = True
        result = WindowResult(
            index, start, start + size, value, low, high, bool(alert), readjusted, p, **extra
        )
        self._results.append(result)
        if alert and self.on_alert is not None:
            self.on_alert(self, result)
        return result

    def _repr_html_(self) -> str:
        """Notebook rendering: the settings, the reference, the window table and the plot."""
        from fairot.reporting._monitor_report import monitor_html

        return monitor_html(self, page=False)

    def table(self) -> pd.DataFrame:
        """The windows as a reader's table (a DataFrame), one row each.

        Columns: ``index``, ``period`` (calendar windows), ``time_from``, ``time_to`` (when times
        were given), ``rows``, ``value``, ``low``, ``high``, ``p_value``, ``alert``, ``partial``,
        ``readjusted``, ``note``.
        """
        from fairot.reporting._monitor_report import window_table

        return window_table(self)

    def write(
        self, out_dir: Any, *, title: str | None = None, reference_source: str | None = None
    ) -> Any:
        """Write ``monitor.csv``, ``monitor.json``, ``monitor.md``, ``monitor.html`` and the plot.

        Each file is written atomically to the folder ``out_dir`` (created when missing), which
        is returned; the reference window (rows, time span, ``reference_source`` such as
        ``"first 500 rows of stream.csv"``) is in every one of them.
        """
        from fairot.reporting._monitor_report import write_monitor

        return write_monitor(self, out_dir, title=title, reference_source=reference_source)

    def plot(self, ax: Any = None, *, title: str | None = None):
        """The metric per window with its band and the threshold, on ``ax`` or a new Figure.

        The x-axis is a matplotlib date axis (each window at its first time) when the windows
        have dates, the first time when times are numbers, the window index otherwise. Partial
        windows are drawn hollow. Returns the ``matplotlib.figure.Figure``.
        """
        from fairot.reporting._monitor_report import plot_monitor

        return plot_monitor(self, ax, title=title)
