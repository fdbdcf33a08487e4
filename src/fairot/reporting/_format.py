"""Labels and number formatting shared by every rendering of an audit (text, markdown, HTML).

Kept apart from ``_audit.py`` and ``_html.py`` so that the HTML renderer and the audit both read
them without importing each other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Summary metric -> the label a reader sees, in reading order (the audit sorts by it).
SUMMARY_LABELS = {
    "n_samples": "samples",
    "n_groups": "groups",
    "err": "Err-.5 (error at threshold)",
    "auc": "AUC (ranking of the labels; 0.5 is chance)",
    "min_group_auc": "lowest within-group AUC",
    "min_group_auc_group": "group with the lowest AUC",
    "mse": "MSE",
    "rmse": "RMSE",
    "r2": "R²",
    "wass1": "Wass1 (sum of W1 to the W1 barycenter)",
    "sdd": "SDD (strong demographic disparity)",
    "spdd": "SPDD (strong pairwise demographic disparity)",
    "demographic_parity_difference": "DP difference (selection-rate gap at threshold)",
    "demographic_parity_ratio": "DP ratio (lowest / highest selection rate)",
    "equalized_odds_difference": "EO difference (largest TPR or FPR gap)",
    "groups_compared": "groups compared (rate: defined / all)",
    "seod": "strong EO disparity (TPR and FPR gaps over every threshold)",
    "speod": "strong pairwise EO disparity",
    "seopd": "strong equal opportunity disparity (TPR gaps over every threshold)",
    "speopd": "strong pairwise equal opportunity disparity",
    "max_pairwise_w1": "largest pairwise W1",
    "max_pairwise_w2": "largest pairwise W2",
    "max_pairwise_w2_pair": "pair attaining it",
    "max_pairwise_winf": "largest pairwise W∞",
    "accuracy_std": "STD of group accuracies",
    "skewed_error_ratio": "SER (max error / min error)",
}
# With control_features: each number recombined over the strata with their shares of the rows.
SUMMARY_LABELS.update(
    {
        f"{key}_given_control": f"{SUMMARY_LABELS[key].split(' (')[0]} given the strata"
        for key in ("err", "mse", "wass1", "sdd", "spdd", "seod", "speod", "seopd", "speopd")
    }
)


def format_value(value: Any) -> str:
    """Four significant decimals; undefined values as an em dash, never a bare NaN.

    Examples
    --------
    >>> from fairot.reporting._format import format_value
    >>> format_value(0.123456), format_value(float("nan")), format_value(float("inf"))
    ('0.1235', '—', '∞')
    """
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        return f"{value:.4f}" if abs(value) < 1e4 else f"{value:.4g}"
    return str(value)
