"""What a :class:`~fairot.reporting.FairnessMonitor` shows: window table, plot, report files.

Internal surface (called by the monitor's methods): :func:`window_table`, :func:`monitor_record`,
:func:`monitor_markdown`, :func:`monitor_html`, :func:`plot_monitor` and :func:`write_monitor`.
Every format lists the reference window (its rows and time span) and flags the partial window.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from fairot.reporting._format import format_value
from fairot.reporting._html import STYLE, _table, figure_svg
from fairot.reporting.artifacts import jsonable, write_artifacts
from fairot.utils import (
    FIGURE_LABEL_LENGTH,
    PLAIN_TEXT,
    escape_html,
    escape_markdown,
    figure_label,
    markdown_table,
)

MSG_NOTHING = "no window evaluated yet: nothing to plot."


def window_table(monitor: Any) -> pd.DataFrame:
    """One row per window, in reading order (see :meth:`FairnessMonitor.table`)."""
    history = monitor.history_
    table = history.assign(rows=history["stop"] - history["start"])
    columns = ["index", "period", "time_from", "time_to", "rows", "value", "low", "high"]
    columns += ["p_value", "alert", "partial", "readjusted", "note"]
    if monitor.every is None:
        columns.remove("period")
    if table["time_from"].isna().all():
        columns = [c for c in columns if c not in ("time_from", "time_to")]
    return table[columns]


def _windows_text(monitor: Any) -> str:
    if monitor.every is not None:
        return f"calendar windows of {monitor.every_label}"
    return f"windows of {monitor.window} rows"


def monitor_record(
    monitor: Any, *, title: str | None = None, reference_source: str | None = None
) -> dict:
    """The monitor's settings, reference window and windows as plain JSON values."""
    span = monitor.reference_span_ or (None, None)
    table = window_table(monitor)
    return jsonable(
        {
            "title": title or f"{monitor.metric} per window",
            "settings": {
                "metric": monitor.metric,
                "window": monitor.window,
                "every": None if monitor.every is None else monitor.every_label,
                "threshold": monitor.threshold,
                "decision_threshold": monitor.decision_threshold,
                "favorable_outcome": monitor.favorable_outcome,
                "direction": monitor.direction,
                "alpha": monitor.alpha,
                "confidence": monitor.confidence,
                "n_bootstrap": monitor.n_bootstrap,
                "n_permutations": monitor.n_permutations,
            },
            "reference": {
                "source": reference_source,
                "rows": monitor.n_reference_,
                "time_from": span[0],
                "time_to": span[1],
                "value": monitor.reference_value_,
            },
            "windows": table.to_dict(orient="records"),
            "n_alerts": int(table["alert"].sum()),
            "n_partial": int(table["partial"].sum()),
        }
    )


def _reference_frame(record: dict) -> pd.DataFrame:
    ref = record["reference"]
    frame = {"rows": [ref["rows"]], "time_from": [ref["time_from"]], "time_to": [ref["time_to"]]}
    frame[record["settings"]["metric"]] = [format_value(ref["value"])]
    frame["source"] = [ref["source"] or "reference data"]
    return pd.DataFrame(frame).fillna("—")


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    shown = table.copy()
    for column in ("value", "low", "high", "p_value"):
        shown[column] = [format_value(float(v)) for v in shown[column]]
    shown["alert"] = np.where(shown["alert"], "ALERT", "")
    shown["partial"] = np.where(shown["partial"], "partial", "")
    return shown.drop(columns="readjusted").fillna("—")


def _rule(monitor: Any) -> str:
    return (
        f"{monitor.metric} on {_windows_text(monitor)}; ALERT when the {monitor.confidence:.0%} "
        f"bootstrap band is above {monitor.threshold:g} and the permutation p-value is <= "
        f"{monitor.alpha:g}. A partial window is the stream's last, unfinished one: it is "
        f"evaluated with the same test. Direction — {_direction_text(monitor)}"
    )


def _direction_text(monitor: Any) -> str:
    """The reading taken, and why the watched metric does not depend on it."""
    if monitor.metric == "demographic_parity_difference":
        why = "max - min of the groups' rates, the same for the favourable rates 1 - rate"
    else:
        why = "a distance between score distributions, not between decisions"
    return f"{monitor.direction}; {monitor.metric} reads the same either way ({why})."


def monitor_markdown(
    monitor: Any, *, title: str | None = None, reference_source: str | None = None
) -> str:
    """``monitor.md``: the rule, the reference window, the windows, the plot."""
    record = monitor_record(monitor, title=title, reference_source=reference_source)
    return "\n".join(
        [
            f"# {escape_markdown(record['title'])}",
            "",
            escape_markdown(_rule(monitor)),
            "",
            "## Reference window",
            "",
            markdown_table(_reference_frame(record)),
            "",
            "## Windows",
            "",
            markdown_table(_shown(window_table(monitor))),
            "",
            f"{record['n_alerts']} alert(s) in {len(record['windows'])} window(s), "
            f"{record['n_partial']} partial.",
            "",
        ]
        + ([] if not record["windows"] else ["![the metric per window](monitor.png)", ""])
    )


def monitor_html(
    monitor: Any,
    *,
    title: str | None = None,
    reference_source: str | None = None,
    page: bool = True,
) -> str:
    """``monitor.html`` (``page=True``) or the notebook fragment; every user string escaped."""
    record = monitor_record(monitor, title=title, reference_source=reference_source)
    table = _shown(window_table(monitor)).set_index("index")
    parts = [
        f"<style>{STYLE}</style>",
        '<div class="fairot-audit">',
        f"<h1>{escape_html(record['title'])}</h1>",
        f'<p class="meta">{escape_html(_rule(monitor))} {monitor.n_seen_} samples seen.</p>',
        "<h2>Reference window</h2>",
        _table(_reference_frame(record).rename(index={0: "reference"})),
        "<h2>Windows</h2>",
    ]
    if table.empty:
        parts.append("<p>No window evaluated yet.</p>")
    else:
        parts.append(_table(table))
        parts.append(f"<figure>{figure_svg(plot_monitor(monitor, title=title))}</figure>")
    parts.append("</div>")
    fragment = "\n".join(parts)
    if not page:
        return fragment
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape_html(record['title'])}</title>\n</head>\n<body>\n"
        f"{fragment}\n</body>\n</html>\n"
    )


def _x_values(history: pd.DataFrame) -> tuple[np.ndarray, str]:
    times = history["time_from"]
    if len(times) and times.notna().all():
        stamps = pd.Index(times.tolist())
        if isinstance(stamps, pd.DatetimeIndex):
            zone = "" if stamps.tz is None else " (UTC)"
            naive = stamps if stamps.tz is None else stamps.tz_convert("UTC").tz_localize(None)
            return naive.to_numpy(dtype="datetime64[ns]"), f"window start{zone}"
        if pd.api.types.is_numeric_dtype(stamps):
            return stamps.to_numpy(dtype=float), "window start"
    return history["index"].to_numpy(), "window"


def plot_monitor(monitor: Any, ax: Any = None, *, title: str | None = None) -> Any:
    """The metric per window, its band, the threshold, alerts; dates on x when known."""
    import warnings

    from matplotlib import dates as mdates

    if ax is None:
        from matplotlib.figure import Figure

        ax = Figure(figsize=(8, 3.5), layout="constrained").subplots()
    history = monitor.history_
    if history.empty:
        warnings.warn(MSG_NOTHING, UserWarning, stacklevel=3)
    x, label = _x_values(history)
    ax.fill_between(x, history["low"], history["high"], alpha=0.25, label="bootstrap band")
    ax.plot(x, history["value"], "o-", label=monitor.metric, markersize=3)
    ax.axhline(monitor.threshold, color="C3", linestyle="--", label="threshold")
    alerts = history["alert"].to_numpy(dtype=bool)
    ax.plot(x[alerts], history["value"][alerts], "v", color="C3", label="alert")
    partial = history["partial"].to_numpy(dtype=bool)
    if partial.any():
        ax.plot(
            x[partial],
            history["value"][partial],
            "o",
            mfc="white",
            color="C0",
            label="partial window",
        )
    if np.issubdtype(x.dtype, np.datetime64):
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    elif label == "window":
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    size = monitor.every_label if monitor.every is not None else f"{monitor.window} samples"
    # The time column, score column and file names are user strings: visible, short, no maths.
    ax.set_xlabel(f"{figure_label(label)} (windows of {size})", **PLAIN_TEXT)
    ax.set_ylabel(monitor.metric)
    title = title or f"{monitor.metric} per window"
    # The reading taken on its own line: a long user title is cut, the direction never is.
    label = figure_label(title, max_length=2 * FIGURE_LABEL_LENGTH)
    ax.set_title(f"{label}\n{monitor.direction}", **PLAIN_TEXT)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    ax.grid(alpha=0.25)
    return ax.figure


def write_monitor(
    monitor: Any, out_dir: Any, *, title: str | None = None, reference_source: str | None = None
) -> Any:
    """Render every file first, then write each atomically (see :meth:`FairnessMonitor.write`)."""
    names = {"title": title, "reference_source": reference_source}
    buffer = io.StringIO()
    window_table(monitor).to_csv(buffer, index=False)
    files = {
        "monitor.csv": buffer.getvalue(),
        "monitor.json": json.dumps(monitor_record(monitor, **names), indent=2) + "\n",
        "monitor.md": monitor_markdown(monitor, **names),
        "monitor.html": monitor_html(monitor, **names),
    }
    # No window, no picture (the plot would only warn): the other files say "no window yet".
    figures = {} if monitor.history_.empty else {"monitor": plot_monitor(monitor, title=title)}
    return write_artifacts(out_dir, files, figures)
