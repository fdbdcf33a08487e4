r"""The multipliers of the attribute-blind optimal rule: a linear program in few constraints.

:class:`~fairot.classification.RateConstrainedClassifier` decides on soft decisions
:math:`t_i \in [0, 1]` of the fitting rows, each row :math:`i` with weight :math:`w_i`
(:math:`\sum_i w_i = 1`), *margin* :math:`a_i = 2\eta(x_i) - 1` and, for every constrained
*unit* :math:`j` (a group, a (group, label) cell or a (stratum, group) cell), a normalised
probability :math:`v_{ij} = q_j(x_i) / Q_j`, :math:`Q_j = \sum_i w_i q_j(x_i)`, so that the
model-expected rate of unit :math:`j` is :math:`r_j(t) = \sum_i w_i t_i v_{ij}`. Units are
compared within *families* :math:`f` (the groups; TPR and FPR separately for equalized odds;
one family per stratum for conditional parity). The program is

.. math::

    \max_{t \in [0, 1]^n,\ L, U}\ \sum_i w_i t_i a_i
    \quad \text{s.t.} \quad L_f \le r_j(t) \le U_f \ \ (j \in f), \qquad
    \begin{cases} U_f - L_f \le \delta & \text{(difference)} \\
                  \rho\, U_f - L_f \le 0 & \text{(ratio)} \end{cases}

(the free levels make the budget fairlearn's max minus min, or min over max, of each family).
Its Lagrangian is maximised row by row: with :math:`\alpha_j, \beta_j \ge 0` the multipliers of
the upper and lower rows and :math:`\mu_j = \alpha_j - \beta_j`,

.. math:: t_i = 1 \iff s_i = a_i - \sum_j \mu_j v_{ij} > 0,

the rule of Menon and Williamson [1]_ and Zeng et al. [2]_. Only the :math:`2J + F` rows are
constraints, so at most that many :math:`t_i` are fractional at a vertex; all the others are
fixed by the sign of :math:`s_i`.

That is what makes it fast. The program is solved on a *working set* of rows near the
boundary, every other row fixed at its decision and entering the constraints as a constant;
its dual gives :math:`\mu`, and if every fixed row's decision agrees with the sign of its
:math:`s_i` the pair satisfies the optimality conditions of the whole program (primal
feasible, dual feasible, complementary slack), so it is optimal for all :math:`n` rows; else
the disagreeing rows join the working set and it is solved again. The boundary the set is
drawn around is that of the exact optimum of a pseudo-random eighth of the rows (a hash of
the row index; found the same way, one level down), so it is off only by that subsample's
sampling error. Each pass costs :math:`O(nJ)` plus a HiGHS solve of a small set, where the
program on every row (:math:`n` columns) would cost minutes at :math:`10^6` rows.

Everything the loop asks of the rows outside the working set is a sum or a selection over
rows (the methods of :class:`fairot.classification.rate_rows.ArrayRows`, the internal surface
of this module). Given Dask arrays, ``solve_rate_program`` asks the Dask backend
(``dispatch("solve_rate_program.rows", ...)``) for rows that answer the same methods partition
by partition; the loop, the HiGHS solves and the result are this code, and only the working
set is ever gathered into one process.

A constant rule (:math:`t \equiv 0`) has every rate 0, so the program is feasible for every
budget: a budget is never infeasible, only costly.

Public names (re-exported by :mod:`fairot.classification`): :class:`RateProgram`,
:func:`solve_rate_program`; the ``MSG_*`` for tests. Internal surface: the public seam module
:mod:`fairot.classification.rate_rows` (``ArrayRows``, ``smallest_rows``, ``subsample_mask``,
``weighted_totals``, ``check_totals`` and the messages they raise).

References
----------
.. [1] A. K. Menon and R. C. Williamson, "The cost of fairness in binary classification",
   FAT* 2018, PMLR 81:107-118.
.. [2] Zeng, Jiang, Cheng and Dobriban, "Bayes-optimal fair classification with linear
   disparity constraints via pre-, in-, and post-processing", arXiv:2402.02817, 2024.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from fairot.classification.rate_rows import (
    MSG_EMPTY_UNIT,
    MSG_NOT_FINITE,
    MSG_SHAPES,
    SIGN_TOLERANCE,
    SUBSAMPLE,
    ArrayRows,
    check_totals,
    weighted_totals,
)
from fairot.exceptions import DivergenceError
from fairot.utils.backends import any_dask, dispatch

__all__ = ["RateProgram", "solve_rate_program"]
# Defined in the seam module and kept importable here, where the solver's tests look.
_SHARED = (MSG_EMPTY_UNIT, MSG_NOT_FINITE, SIGN_TOLERANCE, SUBSAMPLE)

#: Rows the program is solved on directly, every row a column; above it, the working set.
DIRECT_ROWS = 20_000
#: Passes of the working-set loop before the program on every row is solved.
MAX_PASSES = 20

MSG_BUDGET = (
    "give exactly one of max_difference (a number in [0, 1]) and min_ratio (a number in "
    "(0, 1]); got max_difference={max_difference!r}, min_ratio={min_ratio!r}."
)
MSG_MAX_DIFFERENCE = (
    "max_difference must be a number in [0, 1] (the largest allowed max - min of the "
    "groups' rates); got {value!r}."
)
MSG_MIN_RATIO = (
    "min_ratio must be a number in (0, 1] (the smallest allowed min / max of the groups' "
    "rates, 0.8 for the four-fifths rule); got {value!r}."
)
MSG_FAILED = "HiGHS did not solve the rate program: {message}"
MSG_PASSES = (
    "the working set did not settle in {passes} passes on {n} rows, too many to solve at once "
    "in one process; raise working_set_size."
)


@dataclass(frozen=True)
class RateProgram:
    r"""A solved rate program.

    Attributes
    ----------
    multipliers : ndarray of shape (n_units,)
        :math:`\mu_j = \alpha_j - \beta_j`, from HiGHS's dual values.
    unit_shares : ndarray of shape (n_units,)
        :math:`Q_j`, the weighted means of the units' probabilities; the rule divides by them.
    decisions : ndarray of shape (n_samples,)
        The optimal soft decisions :math:`t_i` (all 0 or 1 but at most ``2J + F`` rows).
    rates : ndarray of shape (n_units,)
        :math:`r_j(t)` of those decisions: within the budget to solver precision.
    levels : ndarray of shape (n_families, 2)
        :math:`(L_f, U_f)`.
    objective : float
        :math:`\sum_i w_i t_i a_i`; the model-expected accuracy of the decisions is
        :math:`\sum_i w_i (1 - \eta_i) + \text{objective}`.
    n_passes : int
        HiGHS solves (1 when the program was solved on every row directly).
    working_set_size : int
        Rows of the last solve.

    Examples
    --------
    :func:`solve_rate_program` returns one; the multipliers are the dual of the budget rows:

    >>> from fairot.classification import solve_rate_program
    >>> program = solve_rate_program(
    ...     [0.8, -0.2], [[1.0, 0.0], [0.0, 1.0]], [0, 0], max_difference=0.0
    ... )
    >>> program.n_passes, program.multipliers.shape
    (1, (2,))
    """

    multipliers: np.ndarray
    unit_shares: np.ndarray
    decisions: np.ndarray
    rates: np.ndarray
    levels: np.ndarray
    objective: float
    n_passes: int
    working_set_size: int


def check_budget(max_difference, min_ratio) -> tuple[str, float]:
    """``("difference", δ)`` or ``("ratio", ρ)``; a ValueError naming the argument otherwise."""
    if (max_difference is None) == (min_ratio is None):
        raise ValueError(MSG_BUDGET.format(max_difference=max_difference, min_ratio=min_ratio))
    if max_difference is not None:
        if isinstance(max_difference, bool) or not isinstance(
            max_difference, (int, float, np.integer, np.floating)
        ):
            raise ValueError(MSG_MAX_DIFFERENCE.format(value=max_difference))
        if not 0.0 <= float(max_difference) <= 1.0:  # NaN fails both comparisons
            raise ValueError(MSG_MAX_DIFFERENCE.format(value=max_difference))
        return "difference", float(max_difference)
    if isinstance(min_ratio, bool) or not isinstance(
        min_ratio, (int, float, np.integer, np.floating)
    ):
        raise ValueError(MSG_MIN_RATIO.format(value=min_ratio))
    if not 0.0 < float(min_ratio) <= 1.0:
        raise ValueError(MSG_MIN_RATIO.format(value=min_ratio))
    return "ratio", float(min_ratio)


def _level_rows(families: np.ndarray, n_families: int, form: str, budget: float):
    """Coefficients of the levels (L_f, U_f) in the 2J unit rows and the F coupling rows."""
    n_units = families.shape[0]
    levels = np.zeros((2 * n_units + n_families, 2 * n_families))
    units = np.arange(n_units)
    levels[units, 2 * families + 1] = -1.0  # r_j - U_f <= ...
    levels[n_units + units, 2 * families] = 1.0  # L_f - r_j <= ...
    rows = 2 * n_units + np.arange(n_families)
    levels[rows, 2 * np.arange(n_families)] = -1.0
    levels[rows, 2 * np.arange(n_families) + 1] = 1.0 if form == "difference" else budget
    bound = np.zeros(2 * n_units + n_families)
    if form == "difference":
        bound[2 * n_units :] = budget
    return levels, bound


def _solve_restricted(a, V, w, fixed_rates, level_coef, level_bound):
    """HiGHS on the working set: columns t (its rows), then the levels (L_f, U_f)."""
    n_units = V.shape[1]
    rates = (w[:, None] * V).T  # J x m
    n_families2 = level_coef.shape[1]
    block = np.vstack([rates, -rates, np.zeros((level_coef.shape[0] - 2 * n_units, V.shape[0]))])
    A = sp.hstack([sp.csr_matrix(block), sp.csr_matrix(level_coef)]).tocsc()
    b = level_bound.copy()
    b[:n_units] -= fixed_rates
    b[n_units : 2 * n_units] += fixed_rates
    c = np.concatenate([-w * a, np.zeros(n_families2)])
    lower = np.zeros(V.shape[0] + n_families2)
    upper = np.ones(V.shape[0] + n_families2)
    # Presolve finds nothing to remove in a program of a few dense rows; off, each solve
    # takes about half the time (measured at 20 000 columns).
    res = linprog(
        c,
        A_ub=A,
        b_ub=b,
        bounds=np.column_stack([lower, upper]),
        method="highs",
        options={"presolve": False},
    )
    if res.status != 0:
        return None
    marginals = res.ineqlin.marginals
    # linprog minimises: its marginals are minus the nonnegative multipliers.
    multipliers = marginals[n_units : 2 * n_units] - marginals[:n_units]
    levels = res.x[V.shape[0] :].reshape(-1, 2)
    return res.x[: V.shape[0]], multipliers, levels


def solve_rate_program(
    margins,
    unit_probabilities,
    families,
    *,
    sample_weight=None,
    max_difference: float | None = None,
    min_ratio: float | None = None,
    working_set_size: int = DIRECT_ROWS,
) -> RateProgram:
    r"""The most accurate soft decisions within a rate budget, and their multipliers.

    Solves the linear program of this module exactly (to HiGHS's tolerances) on every row,
    through a working set of rows near the decision boundary when there are more than
    ``working_set_size`` rows.

    Parameters
    ----------
    margins : array-like of shape (n_samples,)
        :math:`a_i = 2\eta(x_i) - 1`, the gain in accuracy of deciding 1 rather than 0.
    unit_probabilities : array-like of shape (n_samples, n_units)
        :math:`q_j(x_i)`: each row's probability of belonging to each unit (its group for
        demographic parity; its (group, label) cell for equal opportunity). Normalised here by
        :math:`Q_j`.
    families : array-like of int of shape (n_units,)
        The family of each unit (0, 1, ...): rates are compared within a family.
    sample_weight : array-like of shape (n_samples,), optional
        Nonnegative row weights (normalised to sum 1).
    max_difference, min_ratio : float, optional
        Exactly one: the budget :math:`\delta \in [0, 1]` on max minus min, or
        :math:`\rho \in (0, 1]` on min over max, of each family's rates.
    working_set_size : int, default=20000
        Rows of each HiGHS solve; up to it, the program is solved on every row at once.

    Returns
    -------
    RateProgram
        On Dask arrays (any of ``margins``, ``unit_probabilities``, ``sample_weight``), the
        same program computed partition by partition: ``decisions`` is a lazy Dask array in
        the partitions of ``margins``, every other field in memory; a working set that does
        not settle in ``MAX_PASSES`` passes raises :class:`~fairot.exceptions.DivergenceError`
        rather than gathering every row.

    Raises
    ------
    ValueError
        On a bad budget, non-finite inputs, mismatched shapes or a unit of zero share.
    DivergenceError
        If HiGHS fails on the program of every row (it is always feasible), or, on Dask
        arrays, if the working set does not settle.

    Examples
    --------
    Two groups of one row each: the budget 0 forces equal rates, and deciding 1 for both
    gains more on the first row (0.8) than it loses on the second (0.2).

    >>> import numpy as np
    >>> from fairot.classification import solve_rate_program
    >>> program = solve_rate_program(
    ...     [0.8, -0.2], [[1.0, 0.0], [0.0, 1.0]], [0, 0], max_difference=0.0
    ... )
    >>> program.decisions.round(6).tolist(), program.rates.round(6).tolist()
    ([1.0, 1.0], [1.0, 1.0])
    """
    form, budget = check_budget(max_difference, min_ratio)
    families = np.asarray(families, dtype=np.intp)
    if any_dask(margins, unit_probabilities, sample_weight):
        # The Dask backend returns rows with the same methods as ArrayRows, each a sum or a
        # selection over partitions: the loop below is the same for both.
        rows = dispatch(
            "solve_rate_program.rows", margins, unit_probabilities, families, sample_weight
        )
        shares = rows.shares
    else:
        rows, shares = _array_rows(margins, unit_probabilities, families, sample_weight)
    n_families = int(families.max()) + 1
    level_coef, level_bound = _level_rows(families, n_families, form, budget)
    solution = _solve_rows(rows, level_coef, level_bound, working_set_size)
    return _result(rows, solution, shares)


def _array_rows(margins, unit_probabilities, families, sample_weight):
    """The rows in memory, validated, and the shares Q_j."""
    a = np.asarray(margins, dtype=float)
    Q = np.asarray(unit_probabilities, dtype=float)
    n = a.shape[0]
    w = np.full(n, 1.0 / max(n, 1)) if sample_weight is None else np.asarray(sample_weight, float)
    if Q.ndim != 2 or Q.shape[0] != n or families.shape != (Q.shape[1],) or w.shape != (n,):
        raise ValueError(
            MSG_SHAPES.format(n=n, rows=Q.shape[0], units=Q.shape[-1], families=families.shape[0])
        )
    finite, total, weighted = weighted_totals(a, Q, w)
    check_totals(finite, weighted)
    w = w / total
    shares = weighted / total
    return ArrayRows(a, Q / shares, w), shares


@dataclass
class _Solution:
    """The loop's answer: the centre the fixed rows are decided by, and the working set's."""

    centre: np.ndarray | None
    work: np.ndarray
    t_work: np.ndarray
    multipliers: np.ndarray
    levels: np.ndarray
    n_passes: int
    fixed: tuple[np.ndarray, float]
    taken: tuple[np.ndarray, np.ndarray, np.ndarray]


def _solve_all(rows, level_coef, level_bound, n_passes) -> _Solution:
    everything = np.arange(rows.n)
    taken = rows.take(everything)
    n_units = taken[1].shape[1]
    solved = _solve_restricted(*taken, np.zeros(n_units), level_coef, level_bound)
    if solved is None:
        raise DivergenceError(MSG_FAILED.format(message="the program on every row failed"))
    t, mu, levels = solved
    return _Solution(None, everything, t, mu, levels, n_passes, (np.zeros(n_units), 0.0), taken)


def _solve_rows(rows, level_coef, level_bound, working_set_size) -> _Solution:
    """The program of every row: directly, or on a working set around a subsample's optimum.

    The guess of mu is the exact optimum of the hashed eighth of the rows (the same scheme,
    one level down), so it is off by that subsample's sampling error only; the rows nearest
    the boundary it draws are the working set. Rows whose fixed decision disagrees with the
    solved mu join the set, which only grows, until none does. ``rows`` is an
    :class:`~fairot.classification.rate_rows.ArrayRows` or a backend's rows with its methods.
    """
    n = rows.n
    if n <= working_set_size:
        return _solve_all(rows, level_coef, level_bound, 1)
    sub = rows.subsample()
    n_units = (level_coef.shape[0] - level_coef.shape[1] // 2) // 2  # rows 2J + F, columns 2F
    centre = (
        _solve_rows(sub, level_coef, level_bound, working_set_size).multipliers
        if sub.n > 0
        else np.zeros(n_units)
    )
    size = min(working_set_size, n)
    work = rows.nearest(centre, size)[0]
    for n_pass in range(1, MAX_PASSES + 1):
        fixed = rows.fixed_sums(centre, work)
        taken = rows.take(work)
        solved = _solve_restricted(*taken, fixed[0], level_coef, level_bound)
        if solved is None:  # the fixed rows alone break the budget: widen the band
            size = min(2 * size, n)
            work = np.union1d(work, rows.nearest(centre, size)[0])
            continue
        t_work, mu, levels = solved
        disagree = rows.disagreeing(centre, mu, work)
        if disagree.shape[0] == 0:
            return _Solution(centre, work, t_work, mu, levels, n_pass, fixed, taken)
        work = np.union1d(work, disagree)
    if n > rows.gather_limit:
        raise DivergenceError(MSG_PASSES.format(passes=MAX_PASSES, n=n))
    return _solve_all(rows, level_coef, level_bound, MAX_PASSES + 1)


def _result(rows, solution: _Solution, shares) -> RateProgram:
    """Rates and objective: the fixed rows' sums plus the working set's."""
    a, V, w = solution.taken
    wt = w * solution.t_work
    fixed_rates, fixed_objective = solution.fixed
    return RateProgram(
        multipliers=solution.multipliers,
        unit_shares=shares,
        decisions=rows.decisions(solution.centre, solution.work, solution.t_work),
        rates=fixed_rates + wt @ V,
        levels=solution.levels,
        objective=float(fixed_objective + wt @ a),
        n_passes=solution.n_passes,
        working_set_size=int(solution.work.shape[0]),
    )
