"""Errors that fairot raises for its own failure kinds (the bottom floor: imports nothing).

- :class:`DivergenceError` — an optimisation diverged (non-finite iterates or a collapsed
  model); the message names the setting to change.
- :class:`UntrustedModelError` — a saved model holds types that :func:`fairot.load_model` will
  not construct (anything outside fairot's own classes and the scikit-learn/NumPy types that
  fairot models contain).
- :class:`DegenerateModelWarning` — a mitigation returned a model that meets its fairness target
  by no longer telling anyone apart (scores collapsed to a constant, or ranking the labels at
  chance while the model it started from did not); the message says what to change.
- :class:`LookAlikeGroupsWarning` — two groups are distinct labels that print alike (a trailing
  space, a zero-width space, a Cyrillic letter for a Latin one, a different case).
- :class:`UndefinedRateWarning` — a rate does not exist for some groups (a TPR without positive
  labels, an FPR without negative labels), so a difference or ratio compares fewer groups than
  there are; the message names the groups left out.
"""

__all__ = [
    "DegenerateModelWarning",
    "DivergenceError",
    "LookAlikeGroupsWarning",
    "UndefinedRateWarning",
    "UntrustedModelError",
]


class DegenerateModelWarning(UserWarning):
    """A fitted model is degenerate: its scores collapsed, or its AUC fell to chance.

    Issued (at the user's line) by ``COTClassifier``, ``DOTClassifier``,
    ``WassersteinParityPenalty``, ``FairTrainer`` and ``FairMLPClassifier`` when
    :func:`fairot.metrics.diagnose_collapse` finds that the fitted scores no longer spread or
    rank the labels while the starting model's did. Wass1 of a constant is 0: "perfectly fair"
    and useless. The usual causes are too large a step size or penalty weight, too few updates
    at a smaller step, a tolerance of 0 where a little unfairness would keep the ranking, or a
    sensitive attribute that is the only signal in the data. Turn it into an error with
    ``warnings.simplefilter("error", DegenerateModelWarning)``.

    Examples
    --------
    >>> import warnings
    >>> from fairot.exceptions import DegenerateModelWarning
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", DegenerateModelWarning)  # a pipeline that must stop
    ...     try:
    ...         warnings.warn("scores collapsed", DegenerateModelWarning)
    ...     except DegenerateModelWarning as caught:
    ...         print(f"refused: {caught}")
    refused: scores collapsed
    """


class LookAlikeGroupsWarning(UserWarning):
    """Distinct groups whose labels look alike: a report would show two groups as one.

    Group labels are compared after Unicode NFC normalisation, so ``"é"`` written as one code
    point or as ``"e"`` plus a combining accent is one group. Labels that still differ but
    print alike are kept apart, with this warning naming each pair and the characters that
    differ: labels equal once whitespace is trimmed and collapsed, invisible (format)
    characters such as the zero-width space are dropped, compatibility forms are folded
    (NFKC) and case is ignored, and Cyrillic or Greek letters that look like Latin ones are
    read as those. Rename the labels, or turn it into an error with
    ``warnings.simplefilter("error", LookAlikeGroupsWarning)``.

    Examples
    --------
    >>> import warnings
    >>> from fairot.exceptions import LookAlikeGroupsWarning
    >>> from fairot.metrics import demographic_parity_difference
    >>> groups = ["women", "women ", "men", "men"]  # a trailing space makes a third group
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     gap = demographic_parity_difference(
    ...         [1, 0, 1, 0], [1, 0, 1, 1], sensitive_features=groups
    ...     )
    >>> any(issubclass(w.category, LookAlikeGroupsWarning) for w in caught)
    True
    """


class UndefinedRateWarning(UserWarning):
    """A rate is undefined for some groups, which a difference or ratio therefore leaves out.

    A group without positive labels has no true positive rate, one without negative labels no
    false positive rate: fairot reports such a rate as undefined (NaN, with the reason) and
    compares the groups where it exists, never reading it as 0. fairlearn's ``MetricFrame``
    rates take scikit-learn's ``confusion_matrix(..., normalize="true")``, which turns the empty
    row into 0, so its differences can disagree with fairot's there; the message names the
    groups left out and how many groups the difference compares. Issued by
    :func:`fairot.metrics.equalized_odds_difference`.

    Examples
    --------
    >>> import warnings
    >>> from fairot.exceptions import UndefinedRateWarning
    >>> from fairot.metrics import equalized_odds_difference
    >>> y_true, y_pred = [1, 0, 1, 0, 0, 0], [1, 0, 0, 0, 1, 0]
    >>> groups = ["a", "a", "a", "a", "b", "b"]  # b has no positive label: no TPR
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     gap = equalized_odds_difference(y_true, y_pred, sensitive_features=groups)
    >>> [w.category.__name__ for w in caught]
    ['UndefinedRateWarning']
    >>> round(gap, 3)  # the FPR gap; a TPR gap over one group is undefined
    0.5
    """


class UntrustedModelError(ValueError):
    """A model file lists types that are not allowed to be loaded.

    Attributes
    ----------
    types : list of str
        The offending type names, as the file lists them.

    Examples
    --------
    >>> from fairot.exceptions import UntrustedModelError
    >>> error = UntrustedModelError("refused to load model.skops", ["builtins.eval"])
    >>> isinstance(error, ValueError), error.types
    (True, ['builtins.eval'])
    """

    def __init__(self, message: str, types: list[str]) -> None:
        super().__init__(message)
        self.types = list(types)


class DivergenceError(RuntimeError, FloatingPointError):
    """The optimisation diverged or collapsed; the message says which step size to lower.

    Raised by every fairot optimiser (COT, DOT, the torch penalty and trainers, the face trainer,
    Dykstra's projections). It is both a :class:`RuntimeError` and a :class:`FloatingPointError`,
    the two classes fairot raised for this failure before it had one of its own.

    Examples
    --------
    A dual step far too large for a weak entropic regularisation makes COT's potentials blow up;
    the error says which setting to change:

    >>> import numpy as np
    >>> from fairot.classification import COTClassifier, DivergenceError
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a])
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(int)
    >>> model = COTClassifier(reg_strength=0.01, dual_step_size=1.0, random_state=0)
    >>> try:
    ...     model.fit(X, y, sensitive_features=a)
    ... except DivergenceError as error:
    ...     print(str(error).split(". ")[-1])
    Lower dual_step_size (epsilon_lambda, now 1) or raise reg_strength (lambda, now 0.01).
    """
