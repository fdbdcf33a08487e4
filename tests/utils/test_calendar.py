"""fairot.utils.calendar: calendar periods given as pandas offset aliases."""

import pandas as pd

from fairot.utils.calendar import calendar_offset


def test_calendar_offset_reads_the_old_month_alias():
    from pandas.tseries.offsets import MonthEnd, QuarterEnd, YearEnd

    assert calendar_offset("1M") == MonthEnd(1)
    assert calendar_offset("3M") == MonthEnd(3)
    assert calendar_offset("Q") == QuarterEnd(startingMonth=12)
    assert calendar_offset("Y") == YearEnd()
    assert calendar_offset(pd.offsets.Day(7)) == pd.offsets.Day(7)
