"""The audit beyond demographic parity: a fairness criterion, and a section per stratum.

``audit(..., constraint="equalized_odds")`` adds the strong equalized odds disparities (to the
pooled scores of each label and pairwise) to the summary, ``"equal_opportunity"`` the equal
opportunity ones; both need labels. ``audit(..., control_features=C)`` audits every stratum
``C = c`` on its own (a section per stratum, :attr:`Audit.strata`) and adds to the summary each
distributional metric recombined over the strata with their shares of the rows, as
:mod:`fairot.metrics` does for ``control_features`` (``sdd_given_control``, ...).

Internal surface (for :mod:`fairot.reporting._audit`): ``CONSTRAINTS``, ``check_constraint``,
``constraint_summary``, ``add_strata``, ``strata_text``, ``strata_markdown`` and ``MSG_*``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from fairot.metrics import (
    strong_equal_opportunity_disparity,
    strong_equalized_odds_disparity,
    strong_pairwise_equal_opportunity_disparity,
    strong_pairwise_equalized_odds_disparity,
)
from fairot.utils import escape_markdown, escape_terminal
from fairot.utils.arrays import check_sample_weight, number_of_samples
from fairot.utils.groups import sensitive_frame
from fairot.utils.sensitive import check_sensitive_features

CONSTRAINTS = ("demographic_parity", "equalized_odds", "equal_opportunity")
MSG_CONSTRAINT = (
    "constraint must be one of 'demographic_parity', 'equalized_odds', 'equal_opportunity'; "
    "got {value!r}."
)
MSG_CONSTRAINT_LABELS = (
    "constraint={constraint!r} compares the groups given the label: pass y_true (labels), "
    "with task='classification'."
)
MSG_STRATUM_AUDIT = "in the stratum control_features={stratum!r} ({n} rows): {error}"

#: Summary keys of each criterion, with the metric that computes them.
CRITERION_METRICS: dict[str, dict[str, Callable[..., float]]] = {
    "demographic_parity": {},
    "equalized_odds": {
        "seod": strong_equalized_odds_disparity,
        "speod": strong_pairwise_equalized_odds_disparity,
    },
    "equal_opportunity": {
        "seopd": strong_equal_opportunity_disparity,
        "speopd": strong_pairwise_equal_opportunity_disparity,
    },
}
#: Summary numbers recombined over the strata (the rest is per stratum only).
RECOMBINED = ("wass1", "sdd", "spdd", "seod", "speod", "seopd", "speopd", "err", "mse")


def check_constraint(constraint: Any, y_true: Any, task: str) -> str:
    """Return ``constraint`` if known (and labels are there when it needs them), else raise."""
    if constraint not in CONSTRAINTS:
        raise ValueError(MSG_CONSTRAINT.format(value=constraint))
    if constraint != "demographic_parity" and (y_true is None or task != "classification"):
        raise ValueError(MSG_CONSTRAINT_LABELS.format(constraint=constraint))
    return constraint


def constraint_summary(
    constraint: str, y_true: Any, y_pred: Any, sensitive_features: Any, sample_weight: Any, mode
) -> dict[str, float]:
    """The criterion's disparities (nothing more for demographic parity, already summarised)."""
    return {
        key: metric(
            y_true,
            y_pred,
            sensitive_features=sensitive_features,
            sample_weight=sample_weight,
            group_mode=mode,
        )
        for key, metric in CRITERION_METRICS[constraint].items()
    }


def _take(values: Any, rows: np.ndarray) -> Any:
    if values is None:
        return None
    if isinstance(values, (pd.Series, pd.DataFrame)):
        return values.iloc[rows]
    return np.asarray(values)[rows]


def add_strata(result: Any, audit: Callable[..., Any], arguments: dict[str, Any]) -> None:
    """Audit every stratum into ``result.strata``; add the recombined numbers to its summary.

    ``arguments`` is the call of ``audit`` that made ``result``: every stratum is audited with
    the same options on its rows, without plots. The summary gains
    ``{"<metric>_given_control": value}`` for the numbers listed in ``RECOMBINED`` that every
    stratum has, recombined with the strata's shares of the rows.
    """
    options = dict(arguments)
    y_true, y_pred = options.pop("y_true"), options.pop("y_pred")
    sensitive_features = options.pop("sensitive_features")
    sample_weight = options.pop("sample_weight")
    control_features = options.pop("control_features")
    options["plots"] = False
    n = number_of_samples(y_pred)
    strata = check_sensitive_features(
        control_features, n, group_mode="intersection", name="control_features", min_groups=1
    )
    if isinstance(sensitive_features, dict) or np.ndim(sensitive_features) > 1:
        sensitive_features = sensitive_frame(sensitive_features, "sensitive_features")
    weight = check_sample_weight(sample_weight, n)
    options = {**options, "title": None}
    shares = []
    for rows, name in zip(strata.indices(), strata.names, strict=True):
        options["title"] = f"{result.title}: stratum {name}"
        try:
            result.strata[name] = audit(
                _take(y_true, rows),
                _take(y_pred, rows),
                _take(sensitive_features, rows),
                sample_weight=_take(weight, rows),
                **options,
            )
        except ValueError as error:
            raise ValueError(
                MSG_STRATUM_AUDIT.format(stratum=name, n=rows.shape[0], error=error)
            ) from None
        shares.append(rows.shape[0] if weight is None else float(weight[rows].sum()))
    pi = np.asarray(shares, dtype=float) / float(np.sum(shares))
    for key in RECOMBINED:
        values = [a.summary.get(key) for a in result.strata.values()]
        if all(isinstance(v, (int, float, np.number)) for v in values):
            result.summary[f"{key}_given_control"] = float(
                sum(p * float(v) for p, v in zip(pi, values, strict=True))
            )
    for stratum, share in zip(result.strata.values(), pi, strict=True):
        stratum.settings["stratum_share"] = float(share)
    result.settings["control_features"] = list(result.strata)


def strata_text(strata: dict[str, Any]) -> list[str]:
    """The plain-text section of every stratum."""
    lines: list[str] = []
    for name, stratum in strata.items():
        lines += [
            "",
            f"Stratum {escape_terminal(name)} (share {stratum.settings['stratum_share']:.1%})",
            "",
        ]
        lines += stratum.to_text().splitlines()[3:]
    return lines


def strata_markdown(strata: dict[str, Any]) -> list[str]:
    """The markdown section of every stratum: its page one heading level down, untitled."""
    parts: list[str] = []
    for name, stratum in strata.items():
        share = stratum.settings["stratum_share"]
        parts += ["", f"## Stratum {escape_markdown(name)} (share {share:.1%})", ""]
        body = stratum.to_markdown().splitlines()[2:]
        parts += [f"#{line}" if line.startswith("## ") else line for line in body]
    return parts
