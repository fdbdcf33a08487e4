"""``fairot mitigate`` refuses to write a model whose held-out ranking fell to chance.

A fairness target can be met by a model that no longer tells anyone apart (Wass1 of a constant
is 0). The mitigated model is *degenerate* on the held-out rows when, with
:data:`fairot.metrics.CHANCE_AUC` (0.55) as the line of chance,

- its overall AUC is at or below chance while the raw model's was above, and it ranks no group
  better than chance either (its lowest within-group AUC is at chance too); or
- its lowest within-group AUC is at or below chance while the raw model's was above.

(An overall AUC at chance with every group still ranked is what demographic parity demands
across very different base rates, not a collapse: that case is not refused.) ``mitigate`` then
still writes the before/after reports, whose verdict block opens with the reason, but neither
``model.skops`` nor the ``--apply`` scores, and exits with status 1. ``--allow-degenerate``
writes them anyway (the reports still say why they are suspect). Without labels there is no
AUC and nothing to check.

Internal surface: :func:`degenerate_alert`, :data:`EXIT_REFUSED`, :data:`MSG_REFUSED`,
:data:`MSG_ALLOWED`.
"""

from __future__ import annotations

import math
from typing import Any

#: The exit status of a run that refused to write its model (2 is a usage error).
EXIT_REFUSED = 1
MSG_REFUSED = (
    "degenerate model not written: its held-out AUC is {after:.3f} where the raw model's was "
    "{before:.3f}{low}, at or below chance (CHANCE_AUC = {chance}). The reports are "
    "written; model.skops and the --apply scores are not. Lower the penalty or the step size, "
    "or pass --allow-degenerate to write it anyway."
)
MSG_ALLOWED = (
    "degenerate model written because of --allow-degenerate: its held-out AUC is {after:.3f} "
    "where the raw model's was {before:.3f}{low}, at or below chance (CHANCE_AUC = {chance})."
)
MSG_LOW_GROUP = "; its lowest within-group AUC is {value:.3f} ({group})"


def degenerate_alert(before: Any, after: Any, allow: bool) -> tuple[str | None, bool]:
    """The alert line for the reports (``None``: nothing wrong) and whether to refuse writing.

    ``before`` and ``after`` are the held-out audits of the raw and the mitigated model.
    """
    from fairot.metrics import CHANCE_AUC  # here: the command line starts without the metrics

    def read(audit: Any, key: str) -> float:
        value = audit.summary.get(key)
        return float(value) if isinstance(value, float) else math.nan

    def fell(key: str) -> bool:  # NaN (undefined) compares False: never a collapse
        return read(after, key) <= CHANCE_AUC < read(before, key)

    group_at_chance = not read(after, "min_group_auc") > CHANCE_AUC
    if not ((fell("auc") and group_at_chance) or fell("min_group_auc")):
        return None, False
    low = ""
    if math.isfinite(read(after, "min_group_auc")):
        low = MSG_LOW_GROUP.format(
            value=read(after, "min_group_auc"), group=after.summary["min_group_auc_group"]
        )
    raw, fair = read(before, "auc"), read(after, "auc")
    words = {"after": fair, "before": raw, "chance": CHANCE_AUC, "low": low}
    if allow:
        return MSG_ALLOWED.format(**words), False
    return MSG_REFUSED.format(**words), True
