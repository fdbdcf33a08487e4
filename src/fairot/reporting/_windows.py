"""How the monitor cuts a stream into windows: by row count or by calendar period.

Internal surface (used by ``_monitor.py``):
:class:`WindowResult` (re-exported by :mod:`fairot.reporting`),
:func:`calendar_labels`, :func:`as_times`, :func:`rows_of` and :class:`StreamBuffer`.

Calendar windows are exactly the bins of ``pandas.Series.resample(every)`` over the whole stream
(empty bins skipped). Those bins depend only on the stream's first time (the origin of ``"7D"``
bins is its midnight; anchored periods such as ``"ME"`` or ``"W"`` follow the calendar), so a
stream that arrives in pieces is labelled piece by piece with that first time prepended, and gets
the bins the whole stream would.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

MSG_TIMES_LENGTH = "times has {got} rows but scores has {n}."
MSG_TIMES_DATES = (
    "times must hold dates (datetime64 or Timestamps) for calendar windows (every=); got "
    "{dtype} values."
)
MSG_TIMES_MISSING = "times holds missing values; every sample needs a time."
MSG_TIMES_INFINITE = (
    "times holds {count} infinite value(s) (first {value} at row {row}); every time must be a "
    "finite number or a date."
)
MSG_TIME_ORDER = (
    "times must not go back in time (the stream is read in time order); got {got} after {last}."
)


def as_times(
    times: Any, n: int, *, dates: bool, last: Any = None, ordered: bool = True
) -> pd.Index:
    """``times`` as an index of ``n`` values; dates when ``dates``.

    When ``ordered``, the times must be nondecreasing and not before ``last``.
    """
    index = pd.Index(times)
    if index.shape[0] != n:
        raise ValueError(MSG_TIMES_LENGTH.format(got=index.shape[0], n=n))
    if dates and not isinstance(index, pd.DatetimeIndex):
        if pd.api.types.is_numeric_dtype(index):
            raise TypeError(MSG_TIMES_DATES.format(dtype=index.dtype))
        index = pd.DatetimeIndex(index)
    if index.hasnans:
        raise ValueError(MSG_TIMES_MISSING)
    if pd.api.types.is_numeric_dtype(index) and not pd.api.types.is_bool_dtype(index):
        infinite = ~np.isfinite(index.to_numpy(dtype=float))
        if infinite.any():
            # an infinite time sorts last and would never close a window, nor start one
            first = int(np.flatnonzero(infinite)[0])
            raise ValueError(
                MSG_TIMES_INFINITE.format(count=int(infinite.sum()), value=index[first], row=first)
            )
    if not ordered:
        return index
    if n and not index.is_monotonic_increasing:
        back = int(np.argmax(index[1:] < index[:-1]))
        raise ValueError(MSG_TIME_ORDER.format(got=index[back + 1], last=index[back]))
    if n and last is not None and index[0] < last:
        raise ValueError(MSG_TIME_ORDER.format(got=index[0], last=last))
    return index


def calendar_labels(times: pd.DatetimeIndex, first: pd.Timestamp, offset: Any) -> np.ndarray:
    """The ``resample(offset)`` bin label of each time, for a stream whose first time is ``first``.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairot.reporting._windows import calendar_labels
    >>> t = pd.DatetimeIndex(["2026-01-30", "2026-02-02", "2026-02-27"])
    >>> [str(x.date()) for x in calendar_labels(t, t[0], pd.offsets.MonthEnd())]
    ['2026-01-31', '2026-02-28', '2026-02-28']
    """
    index = times.insert(0, first)
    labels = np.empty(index.shape[0], dtype=object)
    positions = pd.Series(np.arange(index.shape[0]), index=index)
    for label, rows in positions.resample(offset).indices.items():
        labels[rows] = label
    return labels[1:]


class WindowResult(NamedTuple):
    """One window of the stream.

    Attributes
    ----------
    index : int
        Window number (0, 1, ...).
    start, stop : int
        Positions of the window's first and one-past-last samples in the stream.
    value : float
        The metric on the window.
    low, high : float
        The bootstrap band.
    alert : bool
        Whether the band lies entirely above the threshold and ``p_value <= alpha``.
    readjusted : bool
        Whether the estimator's ``partial_fit`` ran on this window.
    p_value : float
        Share of null windows (groups exchangeable; for ``"reference_w1"``, window and reference
        rows exchangeable) whose metric reaches ``value``, counting the window itself.
    partial : bool
        Whether the window is the stream's last, unfinished one (closed by
        :meth:`FairnessMonitor.flush`: fewer than ``window`` rows, or a calendar period that no
        later row showed to be over).
    period : pandas.Timestamp or None
        The calendar window's label, as ``pandas.Series.resample(every)`` names its bin.
    time_from, time_to : object or None
        Times of the window's first and last rows, when ``update`` received ``times``.
    note : str
        Why a window was not evaluated (a calendar or partial window holding one group): its
        ``value``, band and ``p_value`` are then NaN and it never alerts.

    Examples
    --------
    :meth:`FairnessMonitor.update` returns one per full window:

    >>> import numpy as np
    >>> from fairot.reporting import FairnessMonitor
    >>> g = np.tile(["a", "b"], 100)
    >>> scores = np.linspace(0, 1, 200)
    >>> monitor = FairnessMonitor(scores, g, window=100, threshold=0.1, n_bootstrap=20)
    >>> [(r.index, r.start, r.stop, r.readjusted) for r in monitor.update(scores, g)]
    [(0, 0, 100, False), (1, 100, 200, False)]
    """

    index: int
    start: int
    stop: int
    value: float
    low: float
    high: float
    alert: bool
    readjusted: bool
    p_value: float
    partial: bool = False
    period: Any = None
    time_from: Any = None
    time_to: Any = None
    note: str = ""


def rows_of(array: Any, lo: int, hi: int) -> Any:
    """Rows ``lo:hi`` of ``array``, or ``None``."""
    return None if array is None else array[lo:hi]


class StreamBuffer:
    """Rows received but not yet in a closed window: scores, codes, and optional X, y, times."""

    def __init__(self) -> None:
        self.parts: list[tuple[Any, ...]] = []
        self.size = 0

    def append(self, *columns: Any) -> None:
        """Add one piece of the stream (each column ``None`` or sliceable, same length)."""
        self.parts.append(columns)
        self.size += columns[0].shape[0]

    def take(self, n: int) -> tuple[Any, ...]:
        """Remove the oldest ``n`` rows and return them, one column each (``None`` stays)."""
        taken, need = [], n
        while need:
            part = self.parts[0]
            if part[0].shape[0] <= need:
                taken.append(self.parts.pop(0))
                need -= part[0].shape[0]
            else:
                taken.append(tuple(None if c is None else c[:need] for c in part))
                self.parts[0] = tuple(None if c is None else c[need:] for c in part)
                need = 0
        self.size -= n
        columns = []
        for k in range(len(taken[0])):
            pieces = [p[k] for p in taken]
            if any(p is None for p in pieces):
                columns.append(None)
            elif isinstance(pieces[0], pd.Index):
                columns.append(pieces[0].append(pieces[1:]) if len(pieces) > 1 else pieces[0])
            else:
                columns.append(np.concatenate(pieces))
        return tuple(columns)
