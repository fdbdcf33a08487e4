"""Labels, number formatting and table layout shared by every rendering (text, markdown, HTML).

Kept apart from ``_audit.py`` and ``_html.py`` so that the HTML renderer and the audit both read
them without importing each other.

Internal surface: :data:`SUMMARY_LABELS`, :data:`TEXT_WIDTH`, :func:`format_value`,
:func:`counts_as_integers`, :func:`per_group_tables`, :func:`column_chunks`,
:func:`text_table`, :func:`wrap_text`.
"""

from __future__ import annotations

import math
import re
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

#: The widest line of a text rendering: a terminal of 100 columns.
TEXT_WIDTH = 100
#: Per-group columns about the whole distribution of each group (the first per-group table).
DISTRIBUTION_COLUMNS = ("size", "share", "accuracy", "mse", "r2", "mean_score", "w1_to_pooled")
#: Confusion counts, and the rates that come with their exact intervals.
COUNT_COLUMNS = ("selected", "positives", "negatives", "tp", "fp", "tn", "fn", "base_rate", "fnr")
#: Columns that count rows (weighted: sum weights); whole values print as integers.
COUNT_NAMES = frozenset(
    {"size", "n", "rows", "selected", "positives", "negatives", "tp", "fp", "tn", "fn"}
    | {"above_median", "n_samples", "n_groups"}
)
# "selection_rate_low" and "selection_rate_high", "tpr (raw)" and "tpr (fair)": one quantity each.
_UNIT = re.compile(r"(_low|_high)$|\s\(.*\)$")

#: Summary metric -> the label a reader sees, in reading order (the audit sorts by it).
SUMMARY_LABELS = {
    "n_samples": "samples",
    "n_groups": "groups",
    "err": "Err-.5 (error at threshold)",
    "auc": "AUC (ranking of the labels; 0.5 is chance)",
    "min_group_auc": "lowest within-group AUC",
    "min_group_auc_group": "group with the lowest AUC",
    "mse": "MSE",
    "rmse": "RMSE",
    "r2": "R²",
    "wass1": "Wass1 (sum of W1 to the W1 barycenter)",
    "sdd": "SDD (strong demographic disparity)",
    "spdd": "SPDD (strong pairwise demographic disparity)",
    "demographic_parity_difference": "DP difference (selection-rate gap at threshold)",
    "demographic_parity_ratio": "DP ratio (lowest / highest selection rate)",
    "equalized_odds_difference": "EO difference (largest TPR or FPR gap)",
    "groups_compared": "groups compared (rate: defined / all)",
    "seod": "strong EO disparity (TPR and FPR gaps over every threshold)",
    "speod": "strong pairwise EO disparity",
    "seopd": "strong equal opportunity disparity (TPR gaps over every threshold)",
    "speopd": "strong pairwise equal opportunity disparity",
    "max_pairwise_w1": "largest pairwise W1",
    "max_pairwise_w2": "largest pairwise W2",
    "max_pairwise_w2_pair": "pair attaining it",
    "max_pairwise_winf": "largest pairwise W∞",
    "accuracy_std": "STD of group accuracies",
    "skewed_error_ratio": "SER (max error / min error)",
}
# With control_features: each number recombined over the strata with their shares of the rows.
SUMMARY_LABELS.update(
    {
        f"{key}_given_control": f"{SUMMARY_LABELS[key].split(' (')[0]} given the strata"
        for key in ("err", "mse", "wass1", "sdd", "spdd", "seod", "speod", "seopd", "speopd")
    }
)


def format_value(value: Any) -> str:
    """Four significant decimals; undefined values as an em dash, never a bare NaN.

    Examples
    --------
    >>> from fairot.reporting._format import format_value
    >>> format_value(0.123456), format_value(float("nan")), format_value(float("inf"))
    ('0.1235', '—', '∞')
    """
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        return f"{value:.4f}" if abs(value) < 1e4 else f"{value:.4g}"
    return str(value)


def counts_as_integers(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its count columns of whole values as integers (``63``, never ``63.0000``).

    A count is a float after a join with missing rows (NaN) or with integer sample weights; the
    values stay numbers (integers, NaN where undefined), only their type changes for display.
    """
    out = frame
    for column in frame.columns:
        if _UNIT.sub("", str(column)) not in COUNT_NAMES:
            continue
        values = pd.to_numeric(frame[column], errors="coerce")
        if not pd.api.types.is_float_dtype(values):
            continue  # integers already, or text
        finite = values.dropna().to_numpy()
        if finite.size == 0 or not np.all(np.isfinite(finite)):
            continue
        if not np.all(finite == np.round(finite)) or np.abs(finite).max() >= 2**53:
            continue
        if out is frame:
            out = frame.copy()
        out[column] = pd.Series(
            [np.nan if math.isnan(v) else int(v) for v in values], index=frame.index, dtype=object
        )
    return out


def per_group_tables(report: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The per-group table as the tables a reader takes in turn, each narrow enough to read.

    The groups' distributions first, then the rates and errors at the threshold, the confusion
    counts, and the exact intervals of the rates: ``[(caption, frame), ...]``, the first caption
    empty (it sits under the section's own heading).
    """
    interval = [c for c in report.columns if str(c).endswith(("_low", "_high"))]
    first = [c for c in report.columns if c in DISTRIBUTION_COLUMNS or c == "note"]
    counted = [c for c in report.columns if c in COUNT_COLUMNS]
    rest = [c for c in report.columns if c not in {*first, *counted, *interval}]
    tables = [("", report[first])]
    if rest:
        tables.append(("Rates and errors", report[rest]))
    if counted:
        tables.append(("Confusion counts", report[counted]))
    if interval:
        tables.append(("Rate intervals (*_low, *_high)", report[interval]))
    return [(caption, frame) for caption, frame in tables if frame.shape[1]]


def column_chunks(frame: pd.DataFrame, fits: Callable[[pd.DataFrame], bool]) -> list[pd.DataFrame]:
    """``frame`` cut into consecutive column blocks that each ``fits`` (the index repeated).

    Columns of one quantity (``x_low`` and ``x_high``; ``x (raw)`` and ``x (fair)``) stay in one
    block; a block of one quantity that is still too wide stands alone.
    """
    units: list[list[Any]] = []
    for column in frame.columns:
        key = _UNIT.sub("", str(column))
        if units and _UNIT.sub("", str(units[-1][0])) == key:
            units[-1].append(column)
        else:
            units.append([column])
    chunks: list[list[Any]] = []
    for unit in units:
        if chunks and fits(frame[chunks[-1] + unit]):
            chunks[-1] += unit
        else:
            chunks.append(list(unit))
    return [frame[columns] for columns in chunks] or [frame]


def _cell_text(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return format_value(value)
    if value is None:
        return "—"
    return str(value)


def _text_lines(frame: pd.DataFrame) -> list[str]:
    # Text columns (definitions, sources, verdict lines) read left-aligned; pandas would
    # right-align them to the longest entry.
    formatters = {
        column: (lambda width: lambda v: f"{_cell_text(v):<{width}}")(
            frame[column].map(_cell_text).str.len().max()
        )
        for column in frame.columns
        if not pd.api.types.is_numeric_dtype(frame[column]) and len(frame)
    }
    # A numeric table keeps pandas' right-aligned headers, over the numbers.
    justify = "left" if formatters else None
    text = frame.to_string(
        float_format=format_value, na_rep="—", formatters=formatters, justify=justify
    )
    return text.splitlines()


def _records(frame: pd.DataFrame, width: int) -> list[str]:
    """One block per row, ``column: value`` wrapped: a table whose cells are sentences."""
    lines: list[str] = []
    for index, row in zip(frame.index, frame.itertuples(index=False), strict=True):
        if frame.shape[1] == 1:
            lines += wrap_text(f"{index}: {_cell_text(row[0])}", width, indent=4)
            continue
        lines += wrap_text(str(index), width, indent=2)
        for column, value in zip(frame.columns, row, strict=True):
            lines += wrap_text(f"  {column}: {_cell_text(value)}", width, indent=6)
    return lines


def text_table(frame: pd.DataFrame, width: int = TEXT_WIDTH) -> list[str]:
    """``frame`` as plain-text lines of at most ``width`` characters.

    A table too wide for the terminal is cut into blocks of columns, one under the other (each
    repeating the groups); a table of sentences (definitions, rationales) becomes one
    ``column: value`` block per row, wrapped.
    """
    frame = counts_as_integers(frame)
    lines = _text_lines(frame)
    if max(map(len, lines), default=0) <= width:
        return lines
    chunks = column_chunks(frame, lambda part: max(map(len, _text_lines(part))) <= width)
    if any(max(map(len, _text_lines(chunk))) > width for chunk in chunks):
        return _records(frame, width)
    out: list[str] = []
    for chunk in chunks:
        out += [""] * bool(out) + _text_lines(chunk)
    return out


def wrap_text(text: str, width: int = TEXT_WIDTH, *, indent: int = 2) -> list[str]:
    """``text`` wrapped to ``width`` columns, continuation lines indented by ``indent``.

    Examples
    --------
    >>> from fairot.reporting._format import wrap_text
    >>> wrap_text("warning: " + "word " * 30, 40)[:2]
    ['warning: word word word word word word', '  word word word word word word word']
    """
    if len(text) <= width:
        return [text]
    return textwrap.wrap(
        text,
        width,
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
        drop_whitespace=True,
    ) or [text[:width]]
