"""Suite-wide settings: hypothesis budgets for `make test` and `make fuzz`."""

import os

from hypothesis import HealthCheck, settings

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
