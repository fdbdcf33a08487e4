"""Every metric and rate of a batch of count replicates equals the report of its resampled rows.

Oracles: the public metrics (``fairness_report``, ``group_rates``) on the explicitly resampled
copies (``np.repeat`` of the rows by their counts); and the same replicates whatever the number
of threads or the chunks they are drawn in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairot.metrics.resampling._replicate_metrics as replicate_metrics
from fairot.metrics import fairness_report, group_rates
from fairot.metrics._rates import check_rate_inputs
from fairot.metrics.resampling._count_draws import draw_counts, replicate_seeds
from fairot.metrics.resampling._replicate_metrics import count_summary, draw_replicates, prepare
from tests.metrics.resampling.samples import scored_sample, strata


@pytest.mark.parametrize("task", ["classification", "regression"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("group_mode", ["intersection", "marginal"])
@pytest.mark.parametrize("labels", [True, False])
def test_counts_equal_copies(task, weighted, group_mode, labels):
    y_raw, p_raw, g, w_raw = scored_sample(task)
    sf = pd.DataFrame(g, columns=["sex", "site"])
    y, pred, enc, threshold = check_rate_inputs(
        y_raw if labels else None, p_raw, sf, task, group_mode, 0.5
    )
    weight = w_raw if weighted else None
    n = pred.shape[0]
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, strata(g, n), task,
        threshold, weight,
    )  # fmt: skip
    counts = draw_counts(data.layout, replicate_seeds(np.random.default_rng(3), 4))
    rates, summary = count_summary(data, counts)
    row_counts = np.empty_like(counts)
    row_counts[:, data.layout.order] = counts
    for b in range(counts.shape[0]):
        copy = np.repeat(np.arange(n), row_counts[b])  # the replicate as resampled rows
        options = dict(
            sensitive_features=sf.iloc[copy],
            task=task,
            group_mode=group_mode,
            sample_weight=None if weight is None else weight[copy],
        )
        y_copy = None if y is None else y[copy]
        oracle = fairness_report(y_copy, pred[copy], **options).attrs["summary"]
        expected_keys = {"wass1", "max_pairwise_w2"}
        expected_keys |= {"sdd", "spdd"} if task == "classification" else {"max_pairwise_w1"}
        if task == "regression":
            expected_keys.add("max_pairwise_winf")
        if labels:
            expected_keys |= (
                {"err", "accuracy_std", "skewed_error_ratio"}
                if task == "classification"
                else {"mse", "r2"}
            )
        assert expected_keys <= set(summary)
        for key in expected_keys:
            assert summary[key][b] == pytest.approx(oracle[key], rel=1e-12, abs=1e-12), key
        if task == "regression" and not labels:
            continue  # no rates without labels in regression
        table = group_rates(y_copy, pred[copy], **options)
        for key in set(rates) & set(table.columns):
            expected = table[key].reindex(enc.names).to_numpy()
            np.testing.assert_allclose(rates[key][b], expected, rtol=1e-12, atol=1e-12)


def test_replicates_do_not_depend_on_threads_or_chunks(monkeypatch):
    y, pred, g, _ = scored_sample("classification", n=200)
    y, pred, enc, threshold = check_rate_inputs(y, pred, g, "classification", "marginal", 0.5)
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, strata(g, 200),
        "classification", threshold, None,
    )  # fmt: skip
    seeds = replicate_seeds(np.random.default_rng(9), 7)
    outputs = []
    for workers in (1, 2, 3):
        monkeypatch.setattr(replicate_metrics, "threads", lambda workers=workers: workers)
        with replicate_metrics.replicate_pool() as pool:
            outputs.append(draw_replicates(data, seeds, pool))
    split = [draw_replicates(data, seeds[:3]), draw_replicates(data, seeds[3:])]
    for rates, summary in outputs[1:] + [
        ({k: np.concatenate([s[0][k] for s in split]) for k in split[0][0]},
         {k: np.concatenate([s[1][k] for s in split]) for k in split[0][1]})
    ]:  # fmt: skip
        for key, value in outputs[0][1].items():
            np.testing.assert_array_equal(summary[key], value, err_msg=key)
        for key, value in outputs[0][0].items():
            np.testing.assert_array_equal(rates[key], value, err_msg=key)


@pytest.mark.parametrize("threshold", [0.0, 0.3, 1.0])
def test_atom_rates_at_the_ends_of_the_threshold_range(threshold):
    # Scores of exactly 0, the threshold and 1: a decision is score > threshold, as
    # group_rates decides on the resampled copy.
    rng = np.random.default_rng(6)
    n = 120
    g = rng.choice(["a", "b", "c"], n)
    y = rng.integers(0, 2, n)
    pred = rng.choice([0.0, 0.3, 0.7, 1.0], n)
    y, pred, enc, threshold = check_rate_inputs(
        y, pred, g, "classification", "intersection", threshold
    )
    data = prepare(
        y, pred, enc.membership.astype(float), enc.indices(), enc.names, enc.codes,
        "classification", threshold, None,
    )  # fmt: skip
    counts = draw_counts(data.layout, replicate_seeds(np.random.default_rng(1), 3))
    rates, summary = count_summary(data, counts)
    row_counts = np.empty_like(counts)
    row_counts[:, data.layout.order] = counts
    for b in range(3):
        copy = np.repeat(np.arange(n), row_counts[b])
        table = group_rates(y[copy], pred[copy], sensitive_features=g[copy], threshold=threshold)
        for key in ("selection_rate", "tpr", "fpr", "calibration_gap"):
            np.testing.assert_allclose(
                rates[key][b], table[key].to_numpy(), rtol=1e-12, atol=1e-12, err_msg=key
            )
        oracle = fairness_report(
            y[copy], pred[copy], sensitive_features=g[copy], threshold=threshold
        )
        assert summary["err"][b] == pytest.approx(oracle.attrs["summary"]["err"], abs=1e-12)
