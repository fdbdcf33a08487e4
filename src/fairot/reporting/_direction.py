r"""Which decision is favourable: the direction every rule, ratio and verdict of an audit reads.

A score's positive decision (``score > threshold``) is favourable for a hiring or an approval
score, and adverse for a risk score: a recidivism tool's "high risk", a lender's probability of
default. The adverse-impact rules compare *favourable* selection rates, so reading a risk score
the wrong way round names as disadvantaged the groups the tool labels high-risk least often.
``favorable_outcome`` (scikit-learn's ``pos_label``, AIF360's ``favorable_label``, for the
decision) fixes the reading; nothing is guessed from column names, and the default, the positive
decision, is stated beside every verdict.

With ``favorable_outcome=0`` a group's favourable rate is one minus its positive-decision rate,

.. math:: r^{\mathrm{fav}}_a = P(S \le t \mid A = a) = 1 - P(S > t \mid A = a),

and every impact ratio (four-fifths, the credit rule's AIR, LL144), the reference group (the
most favourably treated) and the demographic-parity ratio are computed on it; the credit rule's
SMD reads the favourable score :math:`1 - s` and LL144's scoring rate the share *below* the
median. Differences (|max - min|) and the distributional metrics do not depend on the
direction.

Internal surface: :data:`FAVORABLE_OUTCOMES`, :data:`MSG_FAVORABLE_OUTCOME`,
:func:`check_favorable_outcome`, :func:`direction_line`, :func:`decision_text`,
:func:`favorable_rates`, :func:`favorable_ratio`, :func:`favorable_intervals`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: 1: the positive decision (score > threshold) is favourable; 0: the negative decision is.
FAVORABLE_OUTCOMES = (1, 0)
MSG_FAVORABLE_OUTCOME = (
    "favorable_outcome must be 1 (the positive decision, score > threshold, is favourable: an "
    "approval score) or 0 (the negative decision is favourable: a risk score, P(default)); "
    "got {value!r}."
)


MSG_FAVORABLE_TASK = (
    "favorable_outcome=0 reads decisions at a threshold and needs task='classification'."
)


def check_favorable_outcome(value: Any, task: str = "classification") -> int:
    """``value`` as 1 or 0, or a ``ValueError`` naming the argument (0 needs decisions)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(MSG_FAVORABLE_OUTCOME.format(value=value))
    if int(value) not in FAVORABLE_OUTCOMES:
        raise ValueError(MSG_FAVORABLE_OUTCOME.format(value=value))
    if int(value) == 0 and task != "classification":
        raise ValueError(MSG_FAVORABLE_TASK)
    return int(value)


def decision_text(favorable_outcome: int, threshold: float) -> str:
    """The favourable decision as a condition on the score: ``score > 0.5`` / ``score <= 0.5``."""
    return f"score > {threshold:g}" if favorable_outcome == 1 else f"score <= {threshold:g}"


def direction_line(favorable_outcome: int, threshold: float) -> str:
    """The line stated beside every verdict: which decision is read as favourable.

    Parameters
    ----------
    favorable_outcome : {1, 0}
        1: the positive decision (``score > threshold``); 0: the negative one.
    threshold : float
        The decision threshold.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairot.reporting import direction_line
    >>> direction_line(1, 0.5)
    'favourable outcome: the positive decision (score > 0.5)'
    >>> direction_line(0, 0.5)
    'favourable outcome: the negative decision (score <= 0.5)'
    """
    which = "positive" if favorable_outcome == 1 else "negative"
    return (
        f"favourable outcome: the {which} decision ({decision_text(favorable_outcome, threshold)})"
    )


def favorable_rates(table: pd.DataFrame, favorable_outcome: int, *, exact: bool) -> pd.DataFrame:
    """``table`` with ``selection_rate`` and ``selected`` read as the favourable ones.

    With ``favorable_outcome=1`` the table itself. With 0: the rate is one minus the positive
    rate, and the count the group's rows minus its positive decisions (``n``); a weighted count
    (``exact=False``) has no such complement among the columns and is left undefined.
    """
    if favorable_outcome == 1:
        return table
    out = table.copy()
    out["selection_rate"] = 1.0 - out["selection_rate"]
    if "selected" in out.columns:
        out["selected"] = out["n"] - out["selected"] if exact else np.nan
    return out


def favorable_ratio(selection_rate: pd.Series) -> float:
    """The demographic-parity ratio of the favourable rates ``1 - selection_rate``.

    Lowest over highest; NaN when no group gets the favourable decision.
    """
    favorable = 1.0 - selection_rate
    top = favorable.max()
    return float(favorable.min() / top) if top > 0 else float("nan")


def favorable_intervals(intervals: Any, favorable_outcome: int) -> Any:
    """The audit's :class:`~fairot.metrics.BootstrapIntervals` for the reading taken.

    The bootstrap resamples the positive decisions' DP ratio; with ``favorable_outcome=0`` the
    estimate is the favourable one, so its interval is reported as not estimated, with the
    reason (every other summary metric is the same in both readings).
    """
    if favorable_outcome == 1:
        return intervals
    summary = intervals.summary.copy()
    if "demographic_parity_ratio" in summary.index:
        summary.loc["demographic_parity_ratio", ["low", "high"]] = float("nan")
    notes = dict(intervals.notes)
    notes["demographic_parity_ratio"] = (
        "not resampled for favorable_outcome=0 (the bootstrap reads the positive decisions' "
        "ratio; the estimate above is the favourable one)"
    )
    return intervals._replace(summary=summary, notes=notes)
