r"""The attribute-blind Bayes-optimal classifier under a linear rate budget."""

from __future__ import annotations

import copy
from numbers import Integral, Real
from typing import Literal

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _num_samples, check_is_fitted, column_or_1d

from fairot.classification._common import (
    MSG_ZERO_WEIGHT_GROUP,
    atomic,
    check_group_weights,
    fit_base_estimator,
)
from fairot.classification._dpp_inputs import WrappedInputsMixin
from fairot.classification._rate_calibration import (
    CALIBRATIONS,
    CellCalibration,
    cell_log_loss,
    resolve_calibration,
)
from fairot.classification._rate_cells import (
    CONSTRAINTS,
    MSG_CONTROL_NEEDED,
    MSG_CONTROL_UNUSED,
    cell_codes,
    cell_layout,
    cell_proba,
    cross_fit_cell_proba,
    empirical_rates,
    rule_scores,
    spread,
)
from fairot.classification._rate_confidence import disparity_bound
from fairot.classification._rate_program import RateProgram, check_budget, solve_rate_program
from fairot.utils.arrays import check_consistent_length, check_sample_weight
from fairot.utils.backends import any_dask, dispatch, is_dask_collection
from fairot.utils.groups import GroupEncoding, group_attributes
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features
from fairot.utils.strata import encode_strata
from fairot.utils.targets import check_binary_target

__all__ = ["RateConstrainedClassifier"]


MSG_SEAM_UNSUPPORTED = (
    "fit_cells and fit_cell_proba (the Dask path of fit) fit no calibration map and choose no "
    "margin by confidence, which read every row in memory; got calibration resolved to "
    "{calibration!r} and confidence={confidence!r}: pass calibration=None (or a calibrated "
    "model, such as a FrozenEstimator or CalibratedClassifierCV) and confidence=None, or fit in "
    "memory."
)
MSG_CELL_WEIGHTS = (
    "cell_weights must hold one total weight per cell code, shape ({n_cells},); got {shape}."
)
MSG_NO_SHARE = (
    "the probability model gives {unit!r} probability 0 on every training row, so its rate is "
    "undefined; check that the estimator predicts the cell codes of every group (see cells in "
    "the docstring)."
)
MSG_CONFIDENCE = (
    "confidence={confidence} cannot be met: even with the whole budget as margin (solved at "
    "{name}={tightest}), the {confidence} {side} bound of the rule's population {what} is "
    "{bound:.4f}, beyond {name}={value}; the training rows estimate the groups' rates too "
    "loosely for it. Lower confidence, loosen the budget, or fit on more rows."
)
MSG_ONE_CLASS = (
    "sample_weight is 0 on every row of class {label!r}: the rule needs both classes with "
    "positive weight."
)

Calibration = Literal["auto", "sigmoid", "isotonic"]
Constraint = Literal[
    "demographic_parity",
    "equal_opportunity",
    "equalized_odds",
    "conditional_demographic_parity",
]


class RateConstrainedClassifier(WrappedInputsMixin, ClassifierMixin, BaseEstimator):
    r"""The most accurate classifier of :math:`x` alone within a budget on the groups' rates.

    Where the protected attribute :math:`A` is not an input (credit, hiring, justice), the most
    accurate rule :math:`\hat Y = t(X)` whose groups' rates obey a linear budget thresholds a
    *linear* combination of the posterior :math:`\eta(x) = P(Y = 1 \mid x)` and the
    probabilities of the constrained units (Menon and Williamson [1]_; Zeng et al. [2]_):

    .. math::

        \hat Y(x) = 1 \iff s(x) = 2\eta(x) - 1 - \sum_j \mu_j\, \frac{q_j(x)}{Q_j} > 0,

    because each unit's rate is an average over everyone, weighted by how likely each person
    is to belong to it: :math:`P(\hat Y = 1 \mid A = a) = E[t(X)\, g_a(X)] / \pi_a` with
    :math:`g_a(x) = P(A = a \mid x)` (demographic parity), the true-positive rate
    :math:`E[t(X)\, p(a, 1 \mid X)] / P(A = a, Y = 1)` (equal opportunity; with the false-positive
    rate too for equalized odds), and the rates of the (stratum, group) pairs for conditional
    demographic parity. Here :math:`q_j(x)` is unit :math:`j`'s probability and
    :math:`Q_j = E[q_j(X)]` its share.

    **The probability model.** One classifier (``estimator``) is fitted on the *cells*
    (stratum ×) group × label as a multiclass target, so its probabilities give
    :math:`\eta`, :math:`g_a` and the cell probabilities at once (see
    :func:`~fairot.classification.solve_rate_program` for the program and
    ``_rate_cells`` for the codes). The multipliers :math:`\mu` are chosen on *cross-fitted*
    probabilities (``cv`` folds stratified on the cell, shuffled by ``random_state``), each
    row's from a model that did not see it, so that they are not fitted to the model's
    overconfidence on its own rows; the model used for prediction is then refitted on every
    row.

    **Calibration.** The rates are expectations of the cell probabilities, so the budget on
    new rows is as accurate as they are calibrated. ``calibration`` fits a map on the
    cross-fitted probabilities against the true cells (out of fold, as
    ``CalibratedClassifierCV(ensemble=False)`` does) and applies it to ``cv_proba_`` before
    the multipliers are chosen and to the final model's probabilities in every prediction
    (:meth:`cell_proba`, :meth:`decision_function`, :meth:`predict`), which stay
    deterministic. ``"sigmoid"`` is a multinomial logistic regression on the log-probabilities
    (matrix scaling [3]_; with two cells, Platt's sigmoid), ``"isotonic"`` one-vs-rest isotonic
    maps renormalised (many rows per cell needed). ``"auto"`` calibrates nothing for a model
    calibrated by construction (the default logistic model, a ``LogisticRegression``, a
    ``CalibratedClassifierCV``, a ``Pipeline`` ending in one) nor for a
    :class:`~sklearn.frozen.FrozenEstimator` (whether the fitting rows are new to it only the
    user knows: name a method to calibrate it on them), and ``"sigmoid"`` for every other model
    (boosting, forests, networks: overconfident out of fold).

    **The multipliers** are the dual values of the linear program over soft decisions
    :math:`t_i \in [0, 1]` of the fitting rows (:func:`~fairot.classification.solve_rate_program`):
    maximise :math:`\sum_i w_i t_i (2\eta_i - 1)` subject to every family's rates within the
    budget (fairlearn's max minus min for ``max_difference``, min over max for ``min_ratio``).
    It has one constraint per unit, so it is solved exactly on a working set of rows, at a cost
    linear in the rows (the benchmark ``bench_rate_constrained.py``).

    **What the budget holds on.** On the fitting rows, the program's soft decisions meet the
    budget *on the model-expected rates* to solver precision (``program_.rates``). The
    deterministic rule decides 0 where :math:`s = 0`, where the program may split a tie set:
    for continuous scores that set holds at most as many rows as there are constraints, so
    the rule's model-expected rates (``rates_["expected"]``) are within a few rows' weight of
    the budget. The *empirical* rates, measured with the true groups on the training rows with
    the cross-fitted scores (``rates_["empirical"]``, ``cv_difference_``), estimate the
    held-out ones; they differ from the budget by the model's calibration error and sampling
    noise. ``margin`` tightens the budget the program is solved at (:math:`\delta - m`, or
    :math:`\rho + m`), so that a held-out budget holds with more confidence.

    **A margin with stated confidence.** With ``confidence`` :math:`c`, ``fit`` chooses the
    margin itself: the smallest it finds (from ``margin`` up, re-solving only the program) at
    which the one-sided :math:`c` bound of the rule's *population* disparity, estimated from
    ``cv_decisions_`` with the true groups, is within the budget: the upper bound
    ``cv_difference_upper_`` :math:`\le \delta`, or the lower bound ``cv_ratio_lower_``
    :math:`\ge \rho`. The bound is the delta method on each unit's rate (normal, with Kish's
    effective size and the rate shrunk by one success and one failure), the units of a family
    independent, the max − min (min / max) taken over normal draws
    (``_rate_confidence``). It covers the sampling noise of the training rows as an estimate of
    the rule's rates under the training distribution: over repeated training samples, the
    population disparity is within budget in about a fraction :math:`c` of the fits (or more).
    It does not cover a shift of the distribution, and a finite held-out sample measures the
    population rates with its own noise on top (a test set of :math:`n_a` rows in the smallest
    group moves its rate by about :math:`\sqrt{r(1 - r)/n_a}`).

    Predictions read ``X`` only and are deterministic: the same ``x`` always gets the same
    decision (unlike fairlearn's ``ExponentiatedGradient``, a randomised mixture). Unlike
    :class:`COTClassifier`, :class:`DOTClassifier` and :class:`QuantileParityPostProcessor`,
    which make the whole score distributions of the groups equal (strong demographic parity,
    every threshold at once), it constrains the decisions at one threshold: the right tool
    when the decision is what is regulated, and the attribute is unavailable at decision time.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A probabilistic classifier of the cells (``predict_proba``), cloned and fitted per fold
        and on every row (``None``: ``LogisticRegression(max_iter=1000)``). A model trained
        already, wrapped in :class:`~sklearn.frozen.FrozenEstimator`, is used as is, its
        in-sample probabilities in place of the cross-fitted ones; it must predict the cell
        codes :math:`(\text{stratum} \cdot K + a) \cdot 2 + y`.
    constraint : str, default="demographic_parity"
        ``"demographic_parity"``, ``"equal_opportunity"``, ``"equalized_odds"`` or
        ``"conditional_demographic_parity"``: which rates are compared, in that order:
        selection rates; true-positive rates; true- and false-positive rates (each family
        separately, as fairlearn's ``equalized_odds_difference``); selection rates within
        each stratum of ``control_features``.
    max_difference : float in [0, 1], optional
        The budget on the largest max minus min of a family's rates (fairlearn's
        ``*_difference``).
    min_ratio : float in (0, 1], optional
        The budget on the smallest min over max of a family's rates (fairlearn's ``*_ratio``;
        0.8 is the four-fifths rule). Exactly one of ``max_difference`` and ``min_ratio``.
    cv : int, cross-validation generator or iterable, default=5
        Folds of the cross-fitted probabilities: an integer (at least 2) gives that many folds
        stratified on the cell and shuffled by ``random_state`` (cells with fewer rows than
        folds are pooled); a splitter or an iterable of (train, test) indices is used as is.
    margin : float in [0, 1), default=0.0
        Subtracted from ``max_difference`` (added to ``min_ratio``) before the program is
        solved; ``budget_`` is the result. With ``confidence``, the smallest margin tried (a
        floor), ``margin_`` the one used.
    confidence : float in (0, 1), optional
        Choose the margin so that the one-sided ``confidence`` bound of the rule's population
        disparity (from the cross-fitted decisions) is within the budget (see above). A budget
        that cannot be met even solved at 0 (or ratio 1) raises a ``ValueError``. ``None``:
        the margin is ``margin``.
    calibration : {"auto", "sigmoid", "isotonic"} or None, default="auto"
        The map fitted on the cross-fitted cell probabilities and applied to every probability
        the rule reads (see above); ``None``: the model's probabilities as they are.
    random_state : int, RandomState instance or None, default=None
        Shuffles the folds.

    Attributes
    ----------
    estimator_ : estimator
        The probability model fitted on every row (used for prediction).
    classes_ : ndarray of shape (2,)
    groups_, group_names_ : list
        The groups' labels (sorted) and readable names.
    strata_ : list of str or None
        The strata of ``control_features`` (conditional demographic parity), else ``None``.
    unit_names_ : list of str
        The constrained units, in the order of ``multipliers_``.
    multipliers_ : ndarray of shape (n_units,)
        :math:`\mu_j`.
    unit_shares_ : ndarray of shape (n_units,)
        :math:`Q_j`, the units' shares under the cross-fitted model (weighted).
    budget_form_ : {"difference", "ratio"}
    budget_ : float
        The budget the program was solved at (after ``margin_``).
    margin_ : float
        The margin used: ``margin``, or the one ``confidence`` chose.
    cv_difference_upper_, cv_ratio_lower_ : float or None
        With ``confidence``: the one-sided ``confidence`` upper bound of the rule's population
        difference and lower bound of its ratio, from ``cv_decisions_``; else ``None``.
    calibration_ : {"sigmoid", "isotonic"} or None
        The calibration map used (``"auto"`` resolved).
    cv_log_loss_uncalibrated_, cv_log_loss_ : float
        The weighted log-loss of the cross-fitted cell probabilities against the true cells,
        before and after the calibration map (the map is fitted on these rows, so the second
        is in-sample for it).
    program_ : RateProgram
        The solved program (soft decisions, rates within ``budget_`` to solver precision).
    rates_ : pandas.DataFrame
        One row per unit: ``family``, ``program`` (the soft decisions' model-expected rate),
        ``expected`` (the deterministic rule's model-expected rate) and ``empirical`` (its
        rate among the rows truly in the unit), all on the training rows with the
        cross-fitted probabilities.
    expected_difference_, expected_ratio_ : float
        Largest max - min and smallest min / max of ``rates_["expected"]`` within a family.
    cv_difference_, cv_ratio_ : float
        The same of ``rates_["empirical"]``: the estimate of the held-out values.
    cv_decisions_ : ndarray of shape (n_samples,)
        The rule's decision on each training row from its cross-fitted probabilities (1 for
        ``classes_[1]``): what ``rates_["empirical"]`` measures. Give it to
        :func:`fairot.metrics.bootstrap_intervals` with the groups for intervals of the
        empirical differences and ratios.
    cv_proba_ : ndarray of shape (n_samples, n_cells)
        The cross-fitted cell probabilities of the training rows, calibrated
        (:meth:`with_budget` solves on them again).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    solve_rate_program : the program the multipliers come from.
    COTClassifier, DOTClassifier : strong (whole-distribution) demographic parity.

    References
    ----------
    .. [1] A. K. Menon and R. C. Williamson, "The cost of fairness in binary classification",
       FAT* 2018, PMLR 81:107-118.
    .. [2] Zeng, Jiang, Cheng and Dobriban, "Bayes-optimal fair classification with linear
       disparity constraints via pre-, in-, and post-processing", arXiv:2402.02817, 2024.
    .. [3] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural
       networks", ICML 2017, PMLR 70:1321-1330.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.classification import RateConstrainedClassifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 2000)
    >>> X = np.column_stack([rng.normal(a, 1.0), rng.normal(0.0, 1.0, 2000)])
    >>> y = (X[:, 0] + X[:, 1] + rng.normal(0, 1, 2000) > 0.5).astype(int)
    >>> model = RateConstrainedClassifier(max_difference=0.05, random_state=0)
    >>> model = model.fit(X, y, sensitive_features=a)
    >>> bool(model.expected_difference_ <= 0.05 + 1e-3)
    True
    >>> model.predict(X[:3])  # X alone: no groups at prediction
    array([1, 1, 0])
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "constraint": [StrOptions(set(CONSTRAINTS))],
        "max_difference": [Real, None],
        "min_ratio": [Real, None],
        "cv": [Interval(Integral, 2, None, closed="left"), "cv_object"],
        "margin": [Interval(Real, 0, 1, closed="left")],
        "confidence": [Interval(Real, 0, 1, closed="neither"), None],
        "calibration": [StrOptions(set(CALIBRATIONS)), None],
        "random_state": ["random_state"],
    }

    __metadata_request__fit = {"sensitive_features": True, "control_features": True}

    def __init__(
        self,
        *,
        estimator=None,
        constraint: Constraint = "demographic_parity",
        max_difference: float | None = None,
        min_ratio: float | None = None,
        cv: int = 5,
        margin: float = 0.0,
        confidence: float | None = None,
        calibration: Calibration | None = "auto",
        random_state=None,
    ):
        self.estimator = estimator
        self.constraint = constraint
        self.max_difference = max_difference
        self.min_ratio = min_ratio
        self.cv = cv
        self.margin = margin
        self.confidence = confidence
        self.calibration = calibration
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    @atomic
    def fit(self, X, y, *, sensitive_features, control_features=None, sample_weight=None):
        """Fit the probability model, cross-fit it, and solve for the multipliers.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Passed to the estimator as given (keep the sensitive columns out of it for an
            attribute-blind rule; named columns of a DataFrame stay inputs, and the rule
            then reads them).
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like, DataFrame, dict of arrays, str or list of str
            The groups (several columns: their intersections).
        control_features : array-like, DataFrame, dict, str or list of str, optional
            The strata of conditional demographic parity (required by it, refused otherwise).
        sample_weight : array-like of shape (n_samples,), optional
            Nonnegative row weights: passed to the estimator's ``fit`` and used in the rates
            and the accuracy of the program.

        Returns
        -------
        self : RateConstrainedClassifier

        Notes
        -----
        On Dask collections (``X``, ``y``, the groups, strata and weights partitioned alike, or
        the groups and strata named as columns of a Dask DataFrame ``X``) the rows are never
        gathered: a model in :class:`~sklearn.frozen.FrozenEstimator` scores them partition by
        partition; any other is trained in memory on a sample of about ``dask.config``
        ``fairot.train_sample_rows`` rows (100,000 by default) and cross-fitted on every row
        over ``cv`` folds (an integer) drawn per row by ``random_state``. The multipliers come
        from :func:`~fairot.classification.solve_rate_program` on Dask arrays; ``cv_proba_``
        and ``cv_decisions_`` are lazy Dask arrays, every other attribute is in memory, and
        the predicting methods return Dask arrays (``docs/scale.md``).
        """
        budget = check_budget(self.max_difference, self.min_ratio)
        if is_dask_collection(X):
            # The Dask backend reads the rows partition by partition and ends the fit through
            # the two seams below, fit_cells and fit_cell_proba.
            return dispatch(
                "RateConstrainedClassifier.fit",
                self,
                X,
                y,
                sensitive_features=sensitive_features,
                control_features=control_features,
                sample_weight=sample_weight,
            )
        y = column_or_1d(y, warn=True)
        n_samples = _num_samples(X)
        sf, _ = resolve_sensitive_features(X, sensitive_features)
        check_consistent_length(X=X, y=y, sensitive_features=sf, sample_weight=sample_weight)
        self.classes_ = check_binary_target(y)
        weights = check_sample_weight(sample_weight, n_samples)
        groups = check_sensitive_features(sf, n_samples)
        if weights is not None:
            check_group_weights(weights, groups.indices(), groups.names)
            for label in self.classes_:
                if not weights[y == label].sum() > 0:
                    raise ValueError(MSG_ONE_CLASS.format(label=label.item()))
        strata = self._strata(X, control_features, n_samples)
        self._check_features(X, reset=True)
        self.groups_, self.group_names_ = group_attributes(groups)
        self.strata_ = None if strata is None else list(strata.names)
        y01 = (y == self.classes_[1]).astype(np.intp)
        row_weights = np.ones(n_samples) if weights is None else weights
        self._codes = cell_codes(
            np.zeros(n_samples, np.intp) if strata is None else strata.codes,
            groups.codes,
            y01,
            groups.n_groups,
        )
        self._layout = cell_layout(
            self.constraint, self.group_names_, self.strata_, self._codes, self.classes_,
            row_weights,
        )  # fmt: skip
        self._weights = row_weights / row_weights.sum()
        base = LogisticRegression(max_iter=1000) if self.estimator is None else self.estimator
        raw = cross_fit_cell_proba(
            base,
            X,
            self._codes,
            self._layout.n_cells,
            cv=self.cv,
            random_state=self.random_state,
            weights=weights,
        )
        self._calibrate(raw, row_weights)
        self.estimator_ = fit_base_estimator(base, X, self._codes, weights)
        self._solve_with_confidence(*budget)
        return self

    def _calibrate(self, raw: np.ndarray, row_weights: np.ndarray) -> None:
        """Fit the calibration map on the cross-fitted probabilities; set ``cv_proba_``."""
        self.calibration_ = resolve_calibration(self.calibration, self.estimator)
        self.cv_log_loss_uncalibrated_ = cell_log_loss(raw, self._codes, row_weights)
        if self.calibration_ is None:
            self._calibrator = None
            self.cv_proba_ = raw
        else:
            self._calibrator = CellCalibration(self.calibration_, self._layout.n_cells)
            self._calibrator.fit(raw, self._codes, row_weights)
            self.cv_proba_ = self._calibrator.transform(raw)
        self.cv_log_loss_ = cell_log_loss(self.cv_proba_, self._codes, row_weights)

    def _solve_with_confidence(self, form: str, value: float) -> None:
        """Solve at the user's budget tightened by ``margin``, and further if ``confidence``.

        With ``confidence``, the margin grows from ``margin`` by the bound's excess over the
        budget (at least 1/64 of the room left, so that at most 65 cheap solves reach the
        tightest budget) until the bound of :func:`disparity_bound` is within the budget.
        """
        room = value if form == "difference" else 1.0 - value
        margin = min(self.margin, room)
        # Each row's true units do not change between the solves: built once.
        membership = None if self.confidence is None else self._layout.units[self._codes]
        while True:
            self._solve(form, value - margin if form == "difference" else value + margin)
            if self.confidence is None:
                self.cv_difference_upper_ = self.cv_ratio_lower_ = None
                break
            bounds = {
                side: disparity_bound(
                    self.cv_decisions_,
                    membership,
                    self._layout.families,
                    self._weights,
                    form=side,
                    confidence=self.confidence,
                )
                for side in ("difference", "ratio")
            }
            self.cv_difference_upper_, self.cv_ratio_lower_ = bounds["difference"], bounds["ratio"]
            excess = bounds[form] - value if form == "difference" else value - bounds[form]
            if excess <= 0:
                break
            if margin >= room:
                raise ValueError(
                    MSG_CONFIDENCE.format(
                        confidence=self.confidence,
                        name="max_difference" if form == "difference" else "min_ratio",
                        tightest=self.budget_,
                        side="upper" if form == "difference" else "lower",
                        what=form,
                        bound=bounds[form],
                        value=value,
                    )
                )
            margin = min(margin + max(excess, room / 64), room)
        self.margin_ = margin

    def _strata(self, X, control_features, n_samples):
        if self.constraint == "conditional_demographic_parity":
            if control_features is None:
                raise ValueError(MSG_CONTROL_NEEDED)
            return encode_strata(control_features, n_samples, X)
        if control_features is not None:
            raise ValueError(MSG_CONTROL_UNUSED.format(constraint=self.constraint))
        return None

    def fit_cells(
        self,
        X,
        *,
        classes: np.ndarray,
        encoding: GroupEncoding,
        strata: GroupEncoding | None = None,
        cell_weights,
        estimator,
    ) -> RateConstrainedClassifier:
        r"""Start a fit from the cells' total weights and a trained probability model.

        The first of the two seams of a backend that reads the rows in partitions (the Dask
        path of :meth:`fit`): it sets what :meth:`fit` sets before it reads any row's
        probabilities (classes, groups, strata, features, the units of the constraint and
        ``estimator_``), so that :meth:`cell_proba` then works on any rows;
        :meth:`fit_cell_proba` ends the fit. The in-memory :meth:`fit` sets the same
        attributes from its rows.

        Parameters
        ----------
        X : array-like, DataFrame or Dask collection of shape (n_samples, n_features)
            Only its number and names of columns are read.
        classes : ndarray of shape (2,)
            The sorted labels (``classes_``).
        encoding : GroupEncoding
            The groups, in the order of ``groups_``.
        strata : GroupEncoding or None, default=None
            The strata of ``control_features`` (conditional demographic parity only).
        cell_weights : array-like of shape (n_strata * n_groups * 2,)
            Each cell's total row weight (its number of rows without weights), by cell code
            :math:`(\text{stratum} \cdot K + a) \cdot 2 + y`.
        estimator : estimator
            The trained probability model of the cells (``estimator_``), whose ``classes_``
            are cell codes.

        Returns
        -------
        self : RateConstrainedClassifier
        """
        check_budget(self.max_difference, self.min_ratio)
        if (strata is None) == (self.constraint == "conditional_demographic_parity"):
            if strata is None:
                raise ValueError(MSG_CONTROL_NEEDED)
            raise ValueError(MSG_CONTROL_UNUSED.format(constraint=self.constraint))
        # The map and the confidence bound read every row in memory; these seams do neither.
        calibration = resolve_calibration(self.calibration, self.estimator)
        if calibration is not None or self.confidence is not None:
            raise ValueError(
                MSG_SEAM_UNSUPPORTED.format(calibration=calibration, confidence=self.confidence)
            )
        n_groups = encoding.n_groups
        n_cells = (1 if strata is None else strata.n_groups) * n_groups * 2
        cell_weights = np.asarray(cell_weights, dtype=float)
        if cell_weights.shape != (n_cells,):
            raise ValueError(MSG_CELL_WEIGHTS.format(n_cells=n_cells, shape=cell_weights.shape))
        cell = np.arange(n_cells)
        for g, name in enumerate(encoding.names):
            if not cell_weights[(cell // 2) % n_groups == g].sum() > 0:
                raise ValueError(MSG_ZERO_WEIGHT_GROUP.format(group=name))
        for y in (0, 1):
            if not cell_weights[cell % 2 == y].sum() > 0:
                raise ValueError(MSG_ONE_CLASS.format(label=classes[y].item()))
        self._check_features(X, reset=True)
        self.classes_ = np.asarray(classes)
        self.groups_, self.group_names_ = group_attributes(encoding)
        self.strata_ = None if strata is None else list(strata.names)
        # cell_layout reads which cells hold weight from rows' codes and weights: one row per
        # cell, weighted by the cell's total, says the same.
        self._layout = cell_layout(
            self.constraint, self.group_names_, self.strata_, cell, self.classes_, cell_weights
        )
        self.estimator_ = estimator
        self.calibration_, self._calibrator = None, None
        return self

    def fit_cell_proba(
        self, cell_proba, cell_codes, *, sample_weight=None
    ) -> RateConstrainedClassifier:
        r"""End a fit from the fitting rows' cell probabilities: solve for the multipliers.

        The second seam after :meth:`fit_cells`. The arrays may be NumPy or Dask arrays (in the
        same row chunks): on Dask arrays the program is solved partition by partition
        (:func:`~fairot.classification.solve_rate_program`), ``cv_proba_`` and
        ``cv_decisions_`` stay lazy Dask arrays, and every other fitted attribute is in memory.

        Parameters
        ----------
        cell_proba : array of shape (n_samples, n_cells)
            The fitting rows' cell probabilities (cross-fitted, or :meth:`cell_proba` of a
            model trained on other rows): ``cv_proba_``.
        cell_codes : array of int of shape (n_samples,)
            Each row's cell code.
        sample_weight : array of shape (n_samples,), optional
            Nonnegative row weights (validated by the caller).

        Returns
        -------
        self : RateConstrainedClassifier
        """
        check_is_fitted(self, "estimator_")
        weights = np.ones_like(cell_codes, dtype=float) if sample_weight is None else sample_weight
        # The probability of each row's own cell, as a one-hot product (Dask has no pointwise
        # fancy indexing); the total weight and the log-loss read in one pass.
        own = (cell_proba * (cell_codes[:, None] == np.arange(self._layout.n_cells))).sum(axis=1)
        total, log_loss = weights.sum(), -(weights @ np.log(np.clip(own, 1e-15, 1.0)))
        if any_dask(total, log_loss):
            total, log_loss = dispatch("compute", total, log_loss)
        self.cv_log_loss_uncalibrated_ = self.cv_log_loss_ = float(log_loss / total)
        self._codes = cell_codes
        self._weights = weights / total
        self.cv_proba_ = cell_proba
        self._solve_with_confidence(*check_budget(self.max_difference, self.min_ratio))
        return self

    def _solve(self, form: str, budget: float) -> None:
        """Solve the program on the cross-fitted probabilities; set the fitted attributes."""
        layout = self._layout
        margins = 2.0 * (self.cv_proba_ @ layout.positive) - 1.0
        shares = self._weights @ (self.cv_proba_ @ layout.units)
        if any_dask(shares):  # rows in Dask partitions (fit_cell_proba): a lazy sum
            (shares,) = dispatch("compute", shares)
        if np.any(shares <= 0):
            raise ValueError(MSG_NO_SHARE.format(unit=layout.unit_names[int(np.argmin(shares))]))
        program = solve_rate_program(
            margins,
            self.cv_proba_ @ layout.units,
            layout.families,
            sample_weight=self._weights,
            **({"max_difference": budget} if form == "difference" else {"min_ratio": budget}),
        )
        self.budget_form_, self.budget_ = form, budget
        self.program_: RateProgram = program
        self.multipliers_ = program.multipliers
        self.unit_shares_ = program.unit_shares
        self.unit_names_ = list(layout.unit_names)
        scores, units = rule_scores(
            self.cv_proba_, layout, program.unit_shares, program.multipliers
        )
        decisions = (scores > 0).astype(float)
        self.cv_decisions_ = decisions
        expected = (self._weights * decisions) @ units / program.unit_shares
        empirical = empirical_rates(decisions, self._codes, layout.units, self._weights)
        if any_dask(expected, empirical):  # both lazy sums over the partitions: one pass
            expected, empirical = dispatch("compute", expected, empirical)
        # Plain arrays (skops saves them); rates_ builds the table on demand.
        self._rate_columns = {
            "family": [layout.family_names[f] for f in layout.families],
            "program": program.rates,
            "expected": expected,
            "empirical": empirical,
        }
        self.expected_difference_, self.expected_ratio_ = spread(expected, layout.families)
        self.cv_difference_, self.cv_ratio_ = spread(empirical, layout.families)

    @property
    def rates_(self) -> pd.DataFrame:
        """One row per unit: its family and its program, expected and empirical rates."""
        return pd.DataFrame(self._rate_columns, index=pd.Index(self.unit_names_, name="unit"))

    def with_budget(
        self, *, max_difference: float | None = None, min_ratio: float | None = None
    ) -> RateConstrainedClassifier:
        """A copy at another budget, sharing this fit's probability model.

        Only the multipliers are solved again (on ``cv_proba_``), so a whole frontier costs
        one fit of the probability model. ``margin``, ``confidence`` (its margin is chosen
        again for the new budget) and the calibration map are kept.

        Parameters
        ----------
        max_difference, min_ratio : float, optional
            Exactly one: the new budget.

        Returns
        -------
        RateConstrainedClassifier
            Fitted; ``get_params()`` shows the new budget.
        """
        check_is_fitted(self)
        model = copy.copy(self)
        model.max_difference, model.min_ratio = max_difference, min_ratio
        model._solve_with_confidence(*check_budget(max_difference, min_ratio))
        return model

    def cell_proba(self, X) -> np.ndarray:
        r"""The cell probabilities :math:`p(c \mid x)` the rule reads (codes as columns).

        The final model's probabilities, through the calibration map (``calibration_``).

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_cells)
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            return dispatch("RateConstrainedClassifier.cell_proba", self, X)
        self._check_features(X, reset=False)
        proba = cell_proba(self.estimator_, X, self._layout.n_cells)
        return proba if self._calibrator is None else self._calibrator.transform(proba)

    def base_scores(self, X) -> np.ndarray:
        r"""The probability model's :math:`\eta(x) = P(Y = 1 \mid x)`, before the budget.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self.cell_proba(X) @ self._layout.positive

    def decision_function(self, X) -> np.ndarray:
        r""":math:`s(x) = 2\eta(x) - 1 - \sum_j \mu_j q_j(x) / Q_j`; positive means class 1.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            A row's score depends on that row only.
        """
        if is_dask_collection(X):
            return dispatch("RateConstrainedClassifier.decision_function", self, X)
        return rule_scores(self.cell_proba(X), self._layout, self.unit_shares_, self.multipliers_)[
            0
        ]

    def predict_proba(self, X) -> np.ndarray:
        r"""The constrained score :math:`(1 + s(x)) / 2`, clipped to [0, 1], as probabilities.

        :math:`\eta(x)` shifted by the multipliers' term: it exceeds 1/2 exactly where the
        rule decides class 1, and ranks the rows as :meth:`decision_function` does (for AUC),
        but it is not a calibrated probability; :meth:`base_scores` gives :math:`\eta`.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        if is_dask_collection(X):
            return dispatch("RateConstrainedClassifier.predict_proba", self, X)
        q = np.clip(0.5 * (1.0 + self.decision_function(X)), 0.0, 1.0)
        return np.column_stack([1.0 - q, q])

    def predict(self, X) -> np.ndarray:
        """Class 1 where :math:`s(x) > 0`, class 0 elsewhere (ties at 0 decide class 0).

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if is_dask_collection(X):
            return dispatch("RateConstrainedClassifier.predict", self, X)
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(np.intp)]
