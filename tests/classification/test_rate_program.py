"""solve_rate_program against the row-level linear program written here with linprog.

The oracle is a different formulation of the same program: one free level ``m`` per family
with ``m <= r_j <= m + delta`` for the difference (the issue's), ``r_j >= rho * r_k`` for every
ordered pair for the ratio (no level), dense, on every row at once.
"""

import re

import numpy as np
import pytest
from scipy.optimize import linprog

from fairot.classification import RateProgram, solve_rate_program
from fairot.classification._rate_program import (
    MSG_BUDGET,
    MSG_EMPTY_UNIT,
    MSG_MAX_DIFFERENCE,
    MSG_MIN_RATIO,
    MSG_NOT_FINITE,
)


def _problem(n, seed, n_units=2, families=None, weighted=False):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, n_units))
    q = np.exp(logits)
    q /= q.sum(axis=1, keepdims=True)  # the groups' probabilities (a partition)
    eta = 1.0 / (1.0 + np.exp(-(rng.normal(size=n) + 2.0 * (q[:, 0] - q[:, -1]))))
    w = rng.uniform(0.2, 2.0, n) if weighted else np.ones(n)
    families = np.zeros(n_units, dtype=int) if families is None else np.asarray(families)
    return 2 * eta - 1, q, families, w


def _oracle(a, q, families, w, *, max_difference=None, min_ratio=None):
    """Optimum and rates of the row-level program (independent formulation)."""
    n, n_units = q.shape
    w = w / w.sum()
    rate_rows = (w[:, None] * q / (w @ q)).T  # r = rate_rows @ t
    fams = np.unique(families)
    A, b = [], []
    if max_difference is not None:
        n_levels = fams.shape[0]
        for j in range(n_units):
            level = np.zeros(n_levels)
            level[np.searchsorted(fams, families[j])] = 1.0
            A.append(np.r_[-rate_rows[j], level])  # m - r_j <= 0
            b.append(0.0)
            A.append(np.r_[rate_rows[j], -level])  # r_j - m <= delta
            b.append(max_difference)
        bounds = [(0, 1)] * n + [(None, None)] * n_levels
    else:
        n_levels = 0
        for j in range(n_units):
            for k in range(n_units):
                if j != k and families[j] == families[k]:
                    A.append(min_ratio * rate_rows[k] - rate_rows[j])  # rho r_k - r_j <= 0
                    b.append(0.0)
        bounds = [(0, 1)] * n
    c = np.r_[-w * a, np.zeros(n_levels)]
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(b), bounds=bounds, method="highs")
    assert res.status == 0
    t = res.x[:n]
    return -res.fun, rate_rows @ t


def _spread(rates, families):
    out_d, out_r = 0.0, 1.0
    for f in np.unique(families):
        r = rates[families == f]
        out_d, out_r = max(out_d, r.max() - r.min()), min(out_r, r.min() / r.max())
    return out_d, out_r


BUDGETS = [
    {"max_difference": 0.0},
    {"max_difference": 0.03},
    {"max_difference": 0.2},
    {"min_ratio": 0.8},
    {"min_ratio": 1.0},
]
SHAPES = [(2, None), (3, None), (4, [0, 0, 1, 1])]


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize(("n_units", "families"), SHAPES)
def test_optimum_and_budget_match_the_row_level_program(budget, n_units, families):
    a, q, fam, w = _problem(300, seed=n_units, n_units=n_units, families=families, weighted=True)
    program = solve_rate_program(a, q, fam, sample_weight=w, **budget)
    assert isinstance(program, RateProgram)
    best, _ = _oracle(a, q, fam, w, **budget)
    np.testing.assert_allclose(program.objective, best, rtol=0, atol=1e-9)
    difference, ratio = _spread(program.rates, fam)
    if "max_difference" in budget:
        assert difference <= budget["max_difference"] + 1e-9
    else:
        assert ratio >= budget["min_ratio"] - 1e-9
    # The rates are those of the returned decisions (weights normalised).
    wn = w / w.sum()
    np.testing.assert_allclose(program.rates, (wn * program.decisions) @ (q / (wn @ q)))
    np.testing.assert_allclose(program.unit_shares, wn @ q)


@pytest.mark.parametrize("budget", BUDGETS[:4])
def test_the_multipliers_give_the_optimal_decisions(budget):
    """s_i = a_i - sum_j mu_j v_ij: every row off the tie set decided as the optimum does."""
    a, q, fam, w = _problem(400, seed=7, n_units=3)
    program = solve_rate_program(a, q, fam, sample_weight=w, **budget)
    v = q / (w / w.sum() @ q)
    s = a - v @ program.multipliers
    fractional = (program.decisions > 1e-9) & (program.decisions < 1 - 1e-9)
    assert fractional.sum() <= 2 * 3 + 1  # at most the number of constraints (a vertex)
    decided = ~fractional
    np.testing.assert_array_equal(program.decisions[decided].round(), (s[decided] > 0))
    # Lagrangian duality: the dual value equals the optimum (strong duality of an LP).
    wn = w / w.sum()
    dual = wn @ np.maximum(s, 0.0)
    if "max_difference" in budget:
        dual += budget["max_difference"] * 0.5 * np.abs(program.multipliers).sum()
    np.testing.assert_allclose(dual, program.objective, atol=1e-8)


@pytest.mark.parametrize("budget", [{"max_difference": 0.01}, {"min_ratio": 0.9}])
def test_the_working_set_reaches_the_optimum_of_every_row(budget):
    """With a working set far smaller than n, the same optimum as the program on every row."""
    a, q, fam, w = _problem(6000, seed=3, n_units=3)
    whole = solve_rate_program(a, q, fam, sample_weight=w, **budget)
    # 100 rows: three levels (6000, 750, 93 rows), and a guess off enough that rows join the set.
    screened = solve_rate_program(a, q, fam, sample_weight=w, working_set_size=100, **budget)
    assert whole.n_passes == 1 and screened.working_set_size < 6000
    assert screened.n_passes > 1
    np.testing.assert_allclose(screened.objective, whole.objective, rtol=0, atol=1e-9)
    np.testing.assert_allclose(screened.multipliers, whole.multipliers, atol=1e-6)
    np.testing.assert_allclose(screened.rates, whole.rates, atol=1e-8)


def test_a_loose_budget_leaves_the_unconstrained_rule():
    a, q, fam, w = _problem(200, seed=1)
    program = solve_rate_program(a, q, fam, max_difference=1.0)
    np.testing.assert_allclose(program.multipliers, 0.0, atol=1e-12)
    np.testing.assert_array_equal(program.decisions, (a > 0).astype(float))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, re.escape(MSG_BUDGET.split("(")[0])),
        ({"max_difference": 0.1, "min_ratio": 0.8}, re.escape(MSG_BUDGET.split("(")[0])),
        ({"max_difference": float("nan")}, re.escape(MSG_MAX_DIFFERENCE.split("(")[0])),
        ({"max_difference": -0.1}, re.escape(MSG_MAX_DIFFERENCE.split("(")[0])),
        ({"max_difference": 1.5}, re.escape(MSG_MAX_DIFFERENCE.split("(")[0])),
        ({"max_difference": "0.1"}, re.escape(MSG_MAX_DIFFERENCE.split("(")[0])),
        ({"min_ratio": 0.0}, re.escape(MSG_MIN_RATIO.split("(")[0])),
        ({"min_ratio": 1.2}, re.escape(MSG_MIN_RATIO.split("(")[0])),
        ({"min_ratio": True}, re.escape(MSG_MIN_RATIO.split("(")[0])),
    ],
)
def test_bad_budgets_are_named(kwargs, message):
    a, q, fam, _ = _problem(20, seed=0)
    with pytest.raises(ValueError, match=message):
        solve_rate_program(a, q, fam, **kwargs)


def test_non_finite_inputs_and_empty_units_are_refused():
    a, q, fam, _ = _problem(20, seed=0)
    bad = a.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=MSG_NOT_FINITE.format(name="margins")):
        solve_rate_program(bad, q, fam, max_difference=0.1)
    q0 = q.copy()
    q0[:, 1] = 0.0
    with pytest.raises(ValueError, match=MSG_EMPTY_UNIT.format(unit=1)[:20]):
        solve_rate_program(a, q0, fam, max_difference=0.1)
