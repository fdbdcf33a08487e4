"""FMR and FNMR per group at one global threshold (NIST FRVT's reading), their ratios, DET curves.

The expected values are counts over pairs written out below, or brute force over every candidate
threshold; the threshold rule is checked as a property (hypothesis): the overall FMR at the chosen
threshold is at most the target, and the next lower impostor score would exceed it.
"""

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairot.utils.arrays import MSG_NAN
from fairot.utils.groups import MSG_ONE_GROUP
from fairot.verification import det_curves, fmr_threshold, verification_rates
from fairot.verification._operating_point import MSG_TARGET_FMR, MSG_TOO_FEW_IMPOSTORS
from fairot.verification.checks import MSG_BOTH_CLASSES, MSG_IS_SAME

# (score, same person, group): 10 impostor and 6 genuine pairs in two groups.
PAIRS = [
    (0.95, False, "a"),
    (0.90, True, "a"),
    (0.80, False, "b"),
    (0.70, False, "a"),
    (0.70, True, "b"),
    (0.65, True, "a"),
    (0.60, False, "b"),
    (0.50, True, "b"),
    (0.40, False, "a"),
    (0.35, True, "a"),
    (0.30, False, "b"),
    (0.20, False, "a"),
    (0.20, True, "b"),
    (0.10, False, "b"),
    (0.05, False, "a"),
    (0.00, False, "b"),
]
SCORES = np.array([p[0] for p in PAIRS])
SAME = np.array([p[1] for p in PAIRS])
GROUPS = np.array([p[2] for p in PAIRS])


def _prefix(message):
    """The longest literal part of a message template, as a pattern."""
    return re.escape(max(re.split(r"\{[^}]*\}", message), key=len))


def test_rates_are_counts_over_the_pairs():
    # 10 impostors, target 0.2: k = 2 may match; the 3rd highest impostor score is 0.70, so
    # a pair matches when its score is above 0.70 (0.95 and 0.80 are the false matches).
    rates = verification_rates(SAME, SCORES, sensitive_features=GROUPS, target_fmr=0.2)
    assert rates.allowed_false_matches == 2
    assert np.nextafter(rates.threshold, -np.inf) == 0.70
    # Written out by hand from PAIRS with "match" = score > 0.70:
    # a: impostors 0.95*, 0.70, 0.40, 0.20, 0.05 -> 1 of 5; genuine 0.90, 0.65, 0.35 -> 2 of 3 miss
    # b: impostors 0.80*, 0.60, 0.30, 0.10, 0.00 -> 1 of 5; genuine 0.70, 0.50, 0.20 -> 3 of 3 miss
    expected = pd.DataFrame(
        {
            "n_genuine": [3, 3],
            "n_impostor": [5, 5],
            "false_matches": [1, 1],
            "false_non_matches": [2, 3],
            "fmr": [0.2, 0.2],
            "fnmr": [2 / 3, 1.0],
        },
        index=pd.Index(["a", "b"], name="group"),
    )
    pd.testing.assert_frame_equal(rates.by_group, expected)
    assert rates.overall_fmr == 0.2 and rates.overall_fnmr == 5 / 6
    assert rates.fmr_ratio == 1.0
    assert rates.fnmr_ratio == pytest.approx(1.5) and rates.fnmr_groups == ("b", "a")


def _brute_force(scores, same, groups, threshold):
    out = {}
    for g in sorted(set(groups)):
        imp = [s for s, y, h in zip(scores, same, groups, strict=True) if h == g and not y]
        gen = [s for s, y, h in zip(scores, same, groups, strict=True) if h == g and y]
        out[g] = (
            sum(s >= threshold for s in imp) / len(imp),
            sum(s < threshold for s in gen) / len(gen),
        )
    return out


@pytest.mark.parametrize("seed", range(4))
def test_rates_equal_a_brute_force_count(seed):
    rng = np.random.default_rng(seed)
    n = 600
    groups = rng.choice(["x", "y", "z"], n)
    same = rng.random(n) < 0.4
    scores = np.round(np.where(same, 0.5, 0.1) + rng.normal(0, 0.2, n), 2)  # with ties
    rates = verification_rates(same, scores, sensitive_features=groups, target_fmr=0.02)
    brute = _brute_force(scores.tolist(), same.tolist(), groups.tolist(), rates.threshold)
    for g, (fmr, fnmr) in brute.items():
        assert rates.by_group.loc[g, "fmr"] == fmr
        assert rates.by_group.loc[g, "fnmr"] == fnmr
    fmr = [brute[g][0] for g in brute]
    assert rates.fmr_ratio == (max(fmr) / min(fmr) if min(fmr) > 0 else np.inf)
    assert rates.fmr_groups == (
        max(brute, key=lambda g: brute[g][0]),
        min(brute, key=lambda g: brute[g][0]),
    )


def test_ties_across_the_cut_lower_the_fmr():
    # 8 impostors, target 0.25: k = 2, but the 2nd to 4th highest are tied at 0.6, so only 0.9
    # can match: lowering the threshold to 0.6 would let 4 of 8 match.
    same = [False] * 8 + [True]
    scores = [0.9, 0.6, 0.6, 0.6, 0.3, 0.2, 0.1, 0.0, 0.7]
    t = fmr_threshold(same, scores, target_fmr=0.25)
    assert np.nextafter(t, -np.inf) == 0.6
    rates = verification_rates(
        same * 2, scores * 2, sensitive_features=["a"] * 9 + ["b"] * 9, target_fmr=0.25
    )
    assert rates.overall_fmr == 1 / 8


@settings(max_examples=150, deadline=None)
@given(
    impostors=st.lists(st.integers(0, 30).map(lambda v: v / 10), min_size=1, max_size=120),
    target=st.floats(0.001, 0.999),
)
def test_threshold_is_the_right_order_statistic(impostors, target):
    scores = np.array(impostors + [1.0])
    same = np.array([False] * len(impostors) + [True])
    n = len(impostors)
    if 1 / n > target:
        with pytest.raises(ValueError, match=_prefix(MSG_TOO_FEW_IMPOSTORS)):
            fmr_threshold(same, scores, target_fmr=target)
        return
    t = fmr_threshold(same, scores, target_fmr=target)
    imp = np.array(impostors)
    assert np.mean(imp >= t) <= target
    below = imp[imp < t]
    assert below.size  # k < n: some impostor is a non-match
    # The next lower impostor score as threshold would let too many match.
    assert np.mean(imp >= below.max()) > target
    # No threshold strictly between that score and t exists in floating point.
    assert np.nextafter(below.max(), np.inf) == t


def test_too_few_impostors_is_a_clear_error():
    same = [False] * 999 + [True]
    scores = np.linspace(0, 1, 1000)
    with pytest.raises(ValueError, match=r"needs at least 1000 impostor .* got 999"):
        fmr_threshold(same, scores, target_fmr=1e-3)
    assert fmr_threshold(same, scores, target_fmr=1 / 999) > scores[-3]


def test_ratios_infinite_and_undefined():
    # a: its impostors never reach the threshold; b: one does. No genuine pair is missed.
    same = [False, False, True, False, False, True]
    scores = [0.1, 0.2, 0.9, 0.8, 0.3, 0.95]
    rates = verification_rates(same, scores, sensitive_features=list("aaabbb"), target_fmr=0.25)
    assert rates.fmr_ratio == np.inf and rates.fmr_groups == ("b", "a")
    assert np.isnan(rates.fnmr_ratio)


def test_det_curves_equal_brute_force():
    curves = det_curves(SAME, SCORES, sensitive_features=GROUPS)
    for g, curve in curves.items():
        in_g = g == GROUPS
        expected = sorted(set(SCORES[in_g]))
        assert curve["threshold"].tolist() == expected
        for t, fmr, fnmr in curve.itertuples(index=False):
            imp, gen = SCORES[in_g & ~SAME], SCORES[in_g & SAME]
            assert fmr == np.mean(imp >= t) and fnmr == np.mean(gen < t)
        assert curve["fmr"].is_monotonic_decreasing and curve["fnmr"].is_monotonic_increasing


def test_pair_order_and_group_names_do_not_matter():
    order = np.random.default_rng(1).permutation(len(PAIRS))
    base = verification_rates(SAME, SCORES, sensitive_features=GROUPS, target_fmr=0.2)
    moved = verification_rates(
        SAME[order],
        SCORES[order],
        sensitive_features=np.where(GROUPS == "a", "c", "d")[order],
        target_fmr=0.2,
    )
    assert base.threshold == moved.threshold
    np.testing.assert_array_equal(base.by_group.to_numpy(), moved.by_group.to_numpy())


@pytest.mark.parametrize(
    ("y", "s", "g", "target", "message"),
    [
        ([0, 2] * 8, SCORES, GROUPS, 0.2, MSG_IS_SAME),
        (["same", "x"] * 8, SCORES, GROUPS, 0.2, MSG_IS_SAME),
        (SAME, np.where(SCORES == 0.5, np.nan, SCORES), GROUPS, 0.2, MSG_NAN),
        (SAME, SCORES, ["a"] * 16, 0.2, MSG_ONE_GROUP),
        (SAME, SCORES, GROUPS, 0.0, MSG_TARGET_FMR),
        (SAME, SCORES, GROUPS, 1.0, MSG_TARGET_FMR),
        (SAME, SCORES, GROUPS, "0.1", MSG_TARGET_FMR),
        (SAME, SCORES, GROUPS, 0.05, MSG_TOO_FEW_IMPOSTORS),
        (SAME, SCORES, np.where(SAME, "c", GROUPS), 0.2, MSG_BOTH_CLASSES),
    ],
)
def test_bad_input_is_named(y, s, g, target, message):
    with pytest.raises(ValueError, match=_prefix(message)):
        verification_rates(y, s, sensitive_features=g, target_fmr=target)


def test_length_mismatch_and_calling_form():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        verification_rates(SAME[:-1], SCORES, sensitive_features=GROUPS, target_fmr=0.2)
    with pytest.raises(TypeError, match="takes fairlearn's form verification_rates"):
        verification_rates(SAME, SCORES, GROUPS)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    shift=st.sampled_from([-1.0, -0.25, 0.5, 3.0]),
)
def test_rates_do_not_move_when_every_score_shifts(seed, shift):
    rng = np.random.default_rng(seed)
    n = 200
    same = rng.random(n) < 0.5
    same[:2] = [True, False]
    groups = np.where(np.arange(n) % 2 == 0, "a", "b")
    scores = rng.integers(0, 20, n) / 8  # exact in binary, so the shift keeps every tie
    base = verification_rates(same, scores, sensitive_features=groups, target_fmr=0.1)
    moved = verification_rates(same, scores + shift, sensitive_features=groups, target_fmr=0.1)
    pd.testing.assert_frame_equal(base.by_group, moved.by_group)
    assert np.nextafter(moved.threshold, -np.inf) == np.nextafter(base.threshold, -np.inf) + shift
