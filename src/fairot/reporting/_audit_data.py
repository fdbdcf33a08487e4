"""The rows an audit reads: its columns, and their groups encoded once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairot.utils.groups import GroupEncoding


@dataclass(frozen=True)
class AuditData:
    """The audited rows: their columns, and their groups encoded once.

    Every step of the audit reads ``groups``, never the column. ``sensitive_features`` stays as
    given for the two readers that need the data itself: the LL144 rule (each column on its own)
    and the rows a headline keeps without its small groups (other rows, encoded anew).
    """

    y_true: Any
    y_pred: Any
    sensitive_features: Any
    groups: GroupEncoding
    sample_weight: Any
