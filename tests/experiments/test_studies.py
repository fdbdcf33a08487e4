"""The study registry: a missing optional dependency is named with the extra that installs it."""

import re

import pytest


def test_a_study_without_its_extra_names_the_extra(monkeypatch):
    import importlib.util

    from fairot.experiments import MSG_STUDY_EXTRA, get_study

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "fairlearn" else real(name, *args),
    )
    expected = MSG_STUDY_EXTRA.format(name="frontier", package="fairlearn", extra="studies")
    with pytest.raises(ImportError, match=re.escape(expected)):
        get_study("frontier")
