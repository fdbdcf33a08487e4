"""A ``refit`` for scikit-learn's searches: the best candidate within a fairness budget.

scikit-learn accepts a callable ``refit`` to choose the candidate, but its ``search.score`` then
looks the callable up among the scorers (``search.scorer_[search.refit]``) and raises
``KeyError``. :class:`FairnessBudgetRefit` is a callable that also stands, as a dictionary key,
for the scorer it maximises: it hashes and compares equal to that scorer's name, so
``search.score`` scores the refit best estimator with the primary scorer.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

MSG_NO_CANDIDATE = (
    "no candidate has a mean {fairness} within the budget {budget} (the fairest has "
    "{best:.4g}); raise the budget or widen the parameter grid."
)
MSG_CV_KEYS = "cv_results_ has no column {key!r}; scoring must name a scorer {name!r}."
MSG_POSITIVE = (
    "mean_test_{fairness} has positive values (largest {value:.4g}), so its scorer does not return "
    "minus a disparity: make it with make_fairness_scorer(metric, greater_is_better=False) or "
    "use a neg_ scorer of fairot.metrics."
)
MSG_ALL_NAN = (
    "every candidate within the budget {budget} has a NaN mean_test_{score}; check the fits "
    "(error_score='raise' shows why they failed)."
)
MSG_ALL_DEGENERATE = (
    "every candidate within the budget {budget} ranks the labels at chance in some fold "
    "(mean_test_{degenerate} > 0: AUC <= CHANCE_AUC); none is refitted. Lower the penalty or "
    "the step size in the grid, or raise the budget."
)
MSG_BUDGET = "budget must be a number >= 0 (inf for no limit); got {value!r}."
MSG_KEY = "{name} must be a non-empty str naming a scorer of scoring; got {value!r}."


class FairnessBudgetRefit:
    """Choose the best mean ``score`` among the candidates whose mean disparity is in a budget.

    Build one with :func:`within_fairness_budget`. Called on ``cv_results_`` it returns the
    index of the chosen candidate. As a dictionary key it equals the string ``score`` (same
    hash, ``==``), which is what lets ``search.score(X, y)`` find the scorer to use after the
    refit: ``search.score`` returns the ``score`` scorer on ``search.best_estimator_``.

    Parameters
    ----------
    budget : float
        The largest acceptable mean disparity, in the metric's own unit.
    score : str
        Key of the scorer to maximise in ``scoring``.
    fairness : str
        Key of the fairness scorer in ``scoring``; it returns minus the disparity.
    degenerate : str or None, default="degenerate"
        Key of the degeneracy flag in ``scoring``
        (:data:`~fairot.metrics.degenerate_scorer`): a candidate flagged in any fold is never
        chosen. Without that key in ``cv_results_`` nothing is excluded on that ground.

    Raises
    ------
    ValueError
        If ``budget`` is negative or NaN (or not a number), or a key is not a non-empty string.

    Examples
    --------
    >>> from fairot.metrics import within_fairness_budget
    >>> refit = within_fairness_budget(0.05)
    >>> refit
    within_fairness_budget(0.05, score='accuracy', fairness='neg_wass1', degenerate='degenerate')
    >>> refit == "accuracy", hash(refit) == hash("accuracy")
    (True, True)
    """

    def __init__(
        self, budget: float, *, score: str, fairness: str, degenerate: str | None = "degenerate"
    ) -> None:
        # bool is a numbers.Real too, and True as a budget is a slip, not a disparity.
        if isinstance(budget, bool) or not isinstance(budget, numbers.Real):
            raise ValueError(MSG_BUDGET.format(value=budget))
        if np.isnan(budget) or budget < 0:
            raise ValueError(MSG_BUDGET.format(value=budget))
        for name, value in (("score", score), ("fairness", fairness)):
            if not isinstance(value, str) or not value:
                raise ValueError(MSG_KEY.format(name=name, value=value))
        if degenerate is not None and (not isinstance(degenerate, str) or not degenerate):
            raise ValueError(MSG_KEY.format(name="degenerate", value=degenerate))
        self.budget = float(budget)
        self.score = score
        self.fairness = fairness
        self.degenerate = degenerate

    @property
    def __name__(self) -> str:
        """The call that built this refit: messages and loggers print a callable's ``__name__``."""
        return repr(self)

    def __repr__(self) -> str:
        return (
            f"within_fairness_budget({self.budget!r}, score={self.score!r}, "
            f"fairness={self.fairness!r}, degenerate={self.degenerate!r})"
        )

    def __hash__(self) -> int:
        # Equal objects must hash alike: this one equals the string ``score``.
        return hash(self.score)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            # str == FairnessBudgetRefit falls back to this reflected call, so the lookup
            # ``scorer_[refit]`` inside ``search.score`` finds the ``score`` scorer.
            return other == self.score
        if isinstance(other, FairnessBudgetRefit):
            return (self.budget, self.score, self.fairness, self.degenerate) == (
                other.budget,
                other.score,
                other.fairness,
                other.degenerate,
            )
        return NotImplemented

    def __call__(self, cv_results: Mapping[str, Any]) -> int:
        """Return the index of the chosen candidate.

        Parameters
        ----------
        cv_results : mapping
            A search's ``cv_results_``; it needs ``mean_test_<score>`` and
            ``mean_test_<fairness>``, and reads ``mean_test_<degenerate>`` when present.

        Returns
        -------
        int
            The candidate with the highest mean ``score`` among those whose mean disparity,
            ``-mean_test_<fairness>``, is at most ``budget`` (the first one on ties) and which
            no fold flagged as degenerate.

        Raises
        ------
        ValueError
            If a column is missing, if the fairness column has positive values (a scorer
            that does not negate its disparity would make every candidate look fair), if no
            candidate is within the budget (naming the fairest), if every candidate within it
            is degenerate, or if every feasible candidate's score is NaN.
        """
        columns = {}
        for key, name in (
            (f"mean_test_{self.score}", self.score),
            (f"mean_test_{self.fairness}", self.fairness),
        ):
            if key not in cv_results:
                raise ValueError(MSG_CV_KEYS.format(key=key, name=name))
            columns[name] = np.asarray(cv_results[key], dtype=float)
        negated = columns[self.fairness]
        if np.any(negated > 0):
            raise ValueError(
                MSG_POSITIVE.format(fairness=self.fairness, value=float(np.nanmax(negated)))
            )
        disparity = -negated
        # NaN (a failed fit) compares False: such a candidate is never within the budget.
        feasible = disparity <= self.budget
        if not feasible.any():
            best = float(np.nanmin(disparity)) if np.isfinite(disparity).any() else np.nan
            raise ValueError(
                MSG_NO_CANDIDATE.format(fairness=self.fairness, budget=self.budget, best=best)
            )
        flag = f"mean_test_{self.degenerate}"
        if self.degenerate is not None and flag in cv_results:
            # Flagged in any fold: a model at chance in one split is not one to refit.
            feasible &= ~(np.asarray(cv_results[flag], dtype=float) > 0)
            if not feasible.any():
                raise ValueError(
                    MSG_ALL_DEGENERATE.format(budget=self.budget, degenerate=self.degenerate)
                )
        scores = columns[self.score][feasible]
        if np.isnan(scores).all():
            raise ValueError(MSG_ALL_NAN.format(budget=self.budget, score=self.score))
        return int(np.flatnonzero(feasible)[np.nanargmax(scores)])


def within_fairness_budget(
    budget: float,
    *,
    score: str = "accuracy",
    fairness: str = "neg_wass1",
    degenerate: str | None = "degenerate",
) -> FairnessBudgetRefit:
    """A ``refit`` for ``GridSearchCV``: the best mean score among candidates within a budget.

    With ``scoring={score: ..., fairness: ...}`` where the fairness scorer returns the negative
    of a disparity (every fairot ``neg_`` scorer does, as scikit-learn's ``neg_`` scorers do
    for errors), the candidate chosen is the one with the highest mean test ``score`` among
    those whose mean disparity, ``-mean_test_<fairness>``, is at most ``budget``. Choosing on
    cross-validated means keeps the choice stable: a per-fold cut-off would make a candidate's
    score jump with each fold's noise.

    After the refit, ``search.score(X, y, **metadata)`` is the ``score`` scorer (accuracy by
    default) of ``search.best_estimator_`` on ``X, y``; with metadata routing it receives the
    metadata every scorer requested, so give it a scorer that accepts ``sensitive_features``
    (such as :data:`~fairot.metrics.fair_accuracy_scorer`) when you pass them. As with every
    callable ``refit``, scikit-learn sets no ``best_score_``: read
    ``search.cv_results_[f"mean_test_{score}"][search.best_index_]``.

    Parameters
    ----------
    budget : float
        The largest acceptable mean disparity (e.g. Wass1 ≤ .05), in the metric's unit;
        ``inf`` keeps every candidate (the choice is then ``refit=score``'s).
    score : str, default="accuracy"
        Key of the score to maximise in ``scoring`` (greater is better).
    fairness : str, default="neg_wass1"
        Key of the (negated) fairness scorer in ``scoring``.
    degenerate : str or None, default="degenerate"
        Key of the degeneracy flag in ``scoring`` (add
        ``"degenerate": fairot.metrics.degenerate_scorer``): a candidate that ranks the labels
        at or below chance (AUC <= :data:`~fairot.metrics.CHANCE_AUC`) in any fold is never
        chosen, however accurate or fair its means; ``cv_results_`` keeps the flag per
        candidate (``mean_test_degenerate``). Parity is easy for a model that tells no one
        apart. ``None``, or no such key in ``scoring``, excludes nothing on that ground.

    Returns
    -------
    FairnessBudgetRefit
        ``refit(cv_results) -> int``, the index of the chosen candidate; as a key it stands
        for ``score``.

    Raises
    ------
    ValueError
        If ``budget`` is negative or NaN, or a key is not a non-empty string; (when
        the search refits) if no candidate is within the budget, naming the fairest.

    See Also
    --------
    make_fairness_scorer : make a scorer that routes ``sensitive_features``.

    Examples
    --------
    >>> from fairot.metrics import within_fairness_budget
    >>> refit = within_fairness_budget(0.05)
    >>> refit({
    ...     "mean_test_accuracy": [0.9, 0.85, 0.8],
    ...     "mean_test_neg_wass1": [-0.2, -0.04, -0.01],
    ... })
    1

    With the degeneracy flag, a candidate at chance in a fold is passed over:

    >>> refit({
    ...     "mean_test_accuracy": [0.9, 0.85, 0.8],
    ...     "mean_test_neg_wass1": [-0.2, -0.04, -0.01],
    ...     "mean_test_degenerate": [0.0, 0.2, 0.0],
    ... })
    2
    """
    return FairnessBudgetRefit(budget, score=score, fairness=fairness, degenerate=degenerate)
