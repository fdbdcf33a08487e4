"""Calendar periods given as pandas offset aliases (``"7D"``, ``"1W"``, ``"1M"``), validated once.

Used by :class:`fairot.reporting.FairnessMonitor` (``every=``) and ``fairot monitor --every``, so
that both accept the same spellings and refuse the same mistakes with one message naming the
argument; :func:`period_label` names the period as the user wrote it.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

MSG_EVERY = (
    "{name} must be a pandas offset alias of a positive calendar period, such as 7D (days), 1W "
    "(weeks), 1M or ME (months), 12h (hours); got {value!r}"
)
#: Month, quarter and year aliases that pandas 3 dropped and readers still write.
_OLD_ALIASES = {"M": "ME", "Q": "QE", "Y": "YE", "A": "YE"}
_OLD_ALIAS = re.compile(r"^\s*([+]?\d*)\s*(M|Q|Y|A)(-[A-Za-z]{3})?\s*$")


def calendar_offset(every: Any, *, name: str = "every") -> pd.offsets.BaseOffset:
    """``every`` as a positive :class:`pandas.DateOffset`.

    Parameters
    ----------
    every : str or pandas.DateOffset
        A pandas offset alias; ``"M"``, ``"Q"``, ``"Y"`` (with a multiple, e.g. ``"3M"``) are read
        as the period-end aliases ``"ME"``, ``"QE"``, ``"YE"``.
    name : str, default="every"
        The argument's name in the error message.

    Returns
    -------
    pandas.DateOffset

    Raises
    ------
    ValueError
        Not an alias pandas knows, or a period that is not positive.

    Examples
    --------
    >>> from fairot.utils.calendar import calendar_offset
    >>> calendar_offset("1M"), calendar_offset("7D"), calendar_offset("2W")
    (<MonthEnd>, <7 * Days>, <2 * Weeks: weekday=6>)
    """
    from pandas.tseries.frequencies import to_offset

    message = MSG_EVERY.format(name=name, value=every)
    if isinstance(every, str):
        old = _OLD_ALIAS.match(every)
        text = f"{old[1]}{_OLD_ALIASES[old[2]]}{old[3] or ''}" if old else every
    elif isinstance(every, pd.offsets.BaseOffset):
        text = every
    else:
        raise ValueError(message)
    try:
        offset = to_offset(text)
    except (ValueError, TypeError):
        raise ValueError(message) from None
    if offset is None or offset.n <= 0:
        raise ValueError(message)
    return offset


def period_label(every: Any) -> str:
    """The period as the user wrote it (``"1M"``, not pandas' ``"ME"``), for titles and tables.

    Parameters
    ----------
    every : str or pandas.DateOffset
        A period accepted by :func:`calendar_offset`; an offset object is named by its pandas
        alias.

    Returns
    -------
    str

    Examples
    --------
    >>> from fairot.utils.calendar import calendar_offset, period_label
    >>> period_label(" 1M "), period_label(calendar_offset("1M"))
    ('1M', 'ME')
    """
    if isinstance(every, str):
        return every.strip()
    return calendar_offset(every).freqstr
