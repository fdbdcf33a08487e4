"""The small scored samples that the tests of the count bootstrap share.

Two sensitive columns (sex with shares 0.4/0.6, site of three values) whose intersectional cells
are the bootstrap's strata, labels or responses, scores with ties, and positive weights.
"""

from __future__ import annotations

import numpy as np

from fairot.utils.sensitive import check_sensitive_features


def scored_sample(task, seed=0, n=300):
    """Labels (or responses), scores, two sensitive columns and weights of ``n`` rows."""
    rng = np.random.default_rng(seed)
    groups = np.column_stack(
        [rng.choice(["f", "m"], n, p=[0.4, 0.6]), rng.choice(["x", "y", "z"], n)]
    )
    if task == "classification":
        y = rng.integers(0, 2, n)
        pred = np.clip(rng.beta(2, 3, n) + 0.2 * y, 0, 1)
        pred[:10] = pred[10]  # ties
    else:
        y = rng.normal(3.0, 2.0, n)
        pred = y + rng.normal(0.5 * (groups[:, 0] == "f"), 1.0)
    weight = rng.uniform(0.2, 3.0, n)
    return y, pred, groups, weight


def strata(groups, n):
    """The intersectional cell of every row: the strata of a stratified replicate."""
    return check_sensitive_features(groups, n, group_mode="intersection", min_groups=1).codes
