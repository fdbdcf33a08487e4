"""The audit's per-group table: confusion counts and rates with exact intervals, the reference.

Oracles: sklearn's confusion_matrix and precision_score, fairlearn's MetricFrame and
scipy.stats.binomtest (Clopper-Pearson intervals).
"""

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from fairlearn.metrics import (
    MetricFrame,
    false_negative_rate,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from sklearn.metrics import confusion_matrix, precision_score

from fairot.reporting import audit
from fairot.reporting._group_table import MSG_REFERENCE
from tests.helpers import message_prefix as _prefix


@pytest.mark.parametrize("mode", ["intersection", "marginal"])
def test_group_table_equals_sklearn_fairlearn_and_scipy(mode):
    rng = np.random.default_rng(4)
    n = 400
    sf = pd.DataFrame({"race": rng.choice(["x", "y"], n), "sex": rng.choice(["f", "m"], n)})
    y = rng.integers(0, 2, n)
    s = np.clip(rng.beta(2, 3, n) + 0.2 * (sf["race"] == "x"), 0, 1)
    d = (s > 0.5).astype(int)
    result = audit(y, s, sf, group_mode=mode, plots=False, n_bootstrap=0, min_group_size=1)
    table = result.report
    if mode == "intersection":
        masks = {
            f"race={r}, sex={x}": ((sf["race"] == r) & (sf["sex"] == x)).to_numpy()
            for r in "xy"
            for x in "fm"
        }
    else:
        masks = {f"{c}={v}": (sf[c] == v).to_numpy() for c in sf for v in sorted(set(sf[c]))}
    for name, mask in masks.items():
        tn, fp, fn, tp = confusion_matrix(y[mask], d[mask], labels=[0, 1]).ravel()
        row = table.loc[name]
        assert (row["tp"], row["fp"], row["tn"], row["fn"]) == (tp, fp, tn, fn)
        assert row["size"] == mask.sum() and row["base_rate"] == pytest.approx(y[mask].mean())
        assert row["precision"] == pytest.approx(precision_score(y[mask], d[mask]))
        for column, k, m in [
            ("base_rate", tp + fn, mask.sum()),
            ("selection_rate", tp + fp, mask.sum()),
            ("tpr", tp, tp + fn),
            ("fpr", fp, fp + tn),
            ("fnr", fn, tp + fn),
            ("precision", tp, tp + fp),
        ]:
            ci = scipy.stats.binomtest(int(k), int(m)).proportion_ci(0.95, method="exact")
            assert row[f"{column}_low"] == pytest.approx(ci.low, rel=1e-9, abs=1e-15), column
            assert row[f"{column}_high"] == pytest.approx(ci.high, rel=1e-9, abs=1e-15), column
    if mode == "intersection":
        frame = MetricFrame(
            metrics={
                "selection_rate": selection_rate,
                "tpr": true_positive_rate,
                "fpr": false_positive_rate,
                "fnr": false_negative_rate,
            },
            y_true=y,
            y_pred=d,
            sensitive_features=sf,
        ).by_group
        for (race, sex), want in frame.iterrows():
            for column, value in want.items():
                assert table.loc[f"race={race}, sex={sex}", column] == pytest.approx(value)
        overall = table.loc["overall"]
        assert (overall["tp"], overall["fn"]) == (
            ((y == 1) & (d == 1)).sum(),
            ((y == 1) & (d == 0)).sum(),
        )


@pytest.mark.parametrize("n", [1, 2, 7, 30, 5000])
def test_clopper_pearson_equals_binomtest_at_every_count(n):
    from fairot.reporting._group_table import clopper_pearson

    k = np.arange(n + 1) if n <= 30 else np.array([0, 1, 2, n // 2, n - 2, n - 1, n])
    low, high = clopper_pearson(k, np.full(k.shape, n), 0.9)
    for j, i in enumerate(k):
        i = int(i)
        ci = scipy.stats.binomtest(i, n).proportion_ci(0.9, method="exact")
        assert low[j] == pytest.approx(ci.low, rel=1e-9, abs=1e-15)
        assert high[j] == pytest.approx(ci.high, rel=1e-9, abs=1e-15)
        assert low[j] < high[j]


def test_reference_group_is_chosen_and_stated():
    rng = np.random.default_rng(6)
    g = np.repeat(["a", "b", "c"], 60)
    s = np.clip(rng.uniform(size=180) + 0.2 * (g == "a") - 0.2 * (g == "c"), 0, 1)
    default = audit(None, s, g, plots=False, n_bootstrap=0)
    rates = {k: (s[g == k] > 0.5).mean() for k in "abc"}
    assert default.settings["reference"] == max(rates, key=rates.get)
    assert "highest selection rate" in default.settings["reference_reason"]
    chosen = audit(None, s, g, plots=False, n_bootstrap=0, reference="b", standards=("credit",))
    assert chosen.settings["reference"] == "b"
    for k in "abc":
        assert chosen.report.loc[k, "disparate_impact"] == pytest.approx(rates[k] / rates["b"])
    assert "Reference group: b (chosen by the user)" in chosen.to_markdown()
    with pytest.raises(ValueError, match=_prefix(MSG_REFERENCE)):
        audit(None, s, g, plots=False, n_bootstrap=0, reference="zz")
