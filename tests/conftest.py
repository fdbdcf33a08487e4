"""Suite-wide settings (hypothesis budgets for `make test` and `make fuzz`) and shared fixtures."""

import os

import pytest
from hypothesis import HealthCheck, settings

import fairot.utils.sensitive as sensitive

# `make test` runs every property and fuzz test with a small, reproducible budget (CI must not
# flake on a newly found example); `make fuzz` (HYPOTHESIS_PROFILE=fuzz) searches far wider, with
# fresh randomness each run. Tests that need a different budget set it in their own @settings.
settings.register_profile(
    "default",
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def encoded(monkeypatch):
    """The first column of every frame the group encoder factorises while the test runs.

    The encoder's work is ``check_sensitive_features`` factorising the columns of the groups;
    counting the columns it factorises counts the encodings of a group column (the tests that
    groups are parsed once, at the public boundary).
    """
    columns = []
    factorize = sensitive._factorize_columns

    def counting(frame, name="sensitive_features"):
        columns.append(frame.iloc[:, 0].tolist())
        return factorize(frame, name)

    monkeypatch.setattr(sensitive, "_factorize_columns", counting)
    return columns
