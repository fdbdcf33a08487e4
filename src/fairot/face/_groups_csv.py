"""Checks of an identity -> group CSV (``train_groups_csv``, ``meta_groups_csv``) before training.

:class:`~fairot.face.FaceFolderDataset` maps each identity to the group of its last row; an
identity listed in two groups, or a row whose group cell is empty, would train silently on a
wrong or a ``nan`` group. ``fairot face train`` refuses such a file up front.

Internal surface (used by ``_config``): :func:`check_groups_csv` and its messages.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

GROUPS_CSV_READ_ERROR = "config key {key!r}: {path!s} cannot be read as a CSV ({reason})."
GROUPS_CSV_COLUMNS_ERROR = (
    "config key {key!r}: {path!s} must have the columns 'identity' and 'group'; got {columns}."
)
GROUPS_CSV_EMPTY_CELL_ERROR = (
    "config key {key!r}: {path!s}, line {line}: the {column} cell is empty or missing "
    "(identity {identity!r}); every row needs an identity and its group."
)
GROUPS_CSV_CONFLICT_ERROR = (
    "config key {key!r}: {path!s}: identity {identity!r} is in two groups, {first!r} (line "
    "{line1}) and {second!r} (line {line2}); each identity belongs to one group."
)


def _blank(value) -> bool:
    return pd.isna(value) or (isinstance(value, str) and not value.strip())


def check_groups_csv(path: str | Path, key: str) -> None:
    """Raise one ``ValueError`` naming ``path``, the line and the identity of the first bad row.

    The file is read as :class:`~fairot.face.FaceFolderDataset` reads it, so that a cell pandas
    takes for missing (``""``, ``NA``, ``nan``...) is refused here rather than becoming a group.
    Line numbers count the header as line 1.
    """
    try:
        table = pd.read_csv(path, dtype={"identity": str})
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(GROUPS_CSV_READ_ERROR.format(key=key, path=path, reason=reason)) from None
    if not {"identity", "group"} <= set(table.columns):
        raise ValueError(
            GROUPS_CSV_COLUMNS_ERROR.format(key=key, path=path, columns=list(table.columns))
        )
    seen: dict[str, tuple[object, int]] = {}
    for row, (identity, group) in enumerate(zip(table["identity"], table["group"], strict=True)):
        line = row + 2
        for column, value in (("identity", identity), ("group", group)):
            if _blank(value):
                raise ValueError(
                    GROUPS_CSV_EMPTY_CELL_ERROR.format(
                        key=key,
                        path=path,
                        line=line,
                        column=column,
                        identity=None if _blank(identity) else identity,
                    )
                )
        if identity in seen and seen[identity][0] != group:
            first, first_line = seen[identity]
            raise ValueError(
                GROUPS_CSV_CONFLICT_ERROR.format(
                    key=key,
                    path=path,
                    identity=identity,
                    first=first,
                    line1=first_line,
                    second=group,
                    line2=line,
                )
            )
        seen.setdefault(identity, (group, line))
