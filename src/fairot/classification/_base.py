"""What COT and DOT share: validation, the logistic start, the update loop and its checks."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from fairot.classification import _constraints as constraints
from fairot.classification._batches import cumulative_weights, drawing_weights, weighted_batches
from fairot.classification._common import (
    TauUnitsMixin,
    check_group_weights,
    fit_base_estimator,
    user_stacklevel,
)
from fairot.classification._degenerate import (
    SATURATED_SHARE,
    SATURATION_MARGIN,
    saturated_share,
    start_theta,
    warn_if_degenerate,
)
from fairot.classification._kernels import STATUS_OK, logits, score_rows
from fairot.classification._objective import sigmoid
from fairot.classification._rows import padded_rows
from fairot.exceptions import DivergenceError
from fairot.metrics import diagnose_collapse
from fairot.metrics.reductions import sum_of_distances
from fairot.transport import SortedCoupling, check_tau, geodesic_targets
from fairot.utils.arrays import check_consistent_length, check_sample_weight
from fairot.utils.groups import group_attributes, warn_small_groups
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features
from fairot.utils.targets import check_binary_target

MSG_NOT_LINEAR = (
    "estimator must be a fitted-or-fittable linear binary classifier exposing coef_ of shape "
    "(1, n_features) and intercept_ (e.g. LogisticRegression, possibly in FrozenEstimator); "
    "got {name}."
)
MSG_CLASSES = "{what} has classes {got}, but the model's classes (from y) are {expected}."
MSG_SMALL_GROUP = (
    "group {group!r} has {count} rows, fewer than batch_size={batch}; its batches are drawn with "
    "replacement (they always are), so rows repeat within a batch."
)
MSG_EMPTY_GROUP = "group {group!r} has no rows in the data passed to {method}."
MSG_COLLAPSE = (
    "{name} collapsed to a near-constant predictor after {update} updates (score standard "
    "deviation {spread:.3g} against {target:.3g} for the target): the steps are too large. "
    "Lower step_size (epsilon_theta, now {step:g}){extra}."
)
MSG_SATURATED = (
    "{name} diverged to a hard classifier after {update} updates: {share:.0%} of the training "
    "scores are within {margin:g} of 0 or 1 (the target's: {target:.0%}): the steps are too "
    "large. Lower step_size (epsilon_theta, now {step:g}){extra}."
)
MSG_NOT_FINITE = (
    "{name} diverged at update {update}: the coefficients became non-finite. "
    "Lower step_size (epsilon_theta, now {step:g}){extra}."
)
MSG_EVAL_SET = "eval_set must be a tuple (X, y, sensitive_features); got {value!r}."


class OTInProcessingClassifier(TauUnitsMixin, ClassifierMixin, BaseEstimator):
    """Base of COT and DOT: a logistic model adjusted by stochastic OT updates.

    Subclasses implement ``_init_solver`` (draws their random state) and ``_run_chunk`` (the
    kernel call) and the parameters of their updates.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "target": [StrOptions({"barycenter"}), str, Integral, tuple, "array-like"],
        "group_mode": [StrOptions({"intersection", "marginal"})],
        "constraint": [StrOptions(set(constraints.CONSTRAINTS))],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "n_updates": [Interval(Integral, 0, None, closed="left")],
        "loss_weight": [Interval(Real, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "history_every": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "tau": [Interval(Real, 0, 1, closed="both")],
    }

    _display_name = "OT"

    # One default across fairot's classifiers and regressors: every method that takes the
    # groups requests them, so meta-estimators route them once metadata routing is enabled
    # (no set_*_request call needed); sample_weight keeps scikit-learn's default (unrequested).
    __metadata_request__fit = {"sensitive_features": True}
    __metadata_request__partial_fit = {"sensitive_features": True}
    __metadata_request__decision_function = {"sensitive_features": True}
    __metadata_request__predict_proba = {"sensitive_features": True}
    __metadata_request__predict = {"sensitive_features": True}
    __metadata_request__score = {"sensitive_features": True}

    # ---------------------------------------------------------------- fitting
    def _validate_inputs(self, X, y, sensitive_features, sample_weight, *, reset: bool):
        """Checked ``(X, y, sensitive features, weights)``; X as float64, dense or CSR/CSC."""
        sf, _ = resolve_sensitive_features(X, sensitive_features)
        X, y = _validate_numeric(self, X, y, ensure_min_samples=2, reset=reset)
        check_consistent_length(X=X, y=y, sensitive_features=sf, sample_weight=sample_weight)
        return X, y, sf, check_sample_weight(sample_weight, X.shape[0])

    def _fit(self, X, y, sensitive_features, eval_set, n_updates: int, sample_weight) -> None:
        X, y, sf, sample_weight = self._validate_inputs(
            X, y, sensitive_features, sample_weight, reset=True
        )
        self.classes_ = check_binary_target(y)
        encoding = check_sensitive_features(sf, X.shape[0], group_mode=self.group_mode)
        self._encoding = encoding
        self.groups_, self.group_names_ = group_attributes(encoding)
        warn_small_groups(encoding.counts, self.group_names_, stacklevel=user_stacklevel())

        self.estimator_, theta = self._initial_model(X, y, sample_weight)
        self.initial_coef_ = theta[None, :-1].copy()
        self.initial_intercept_ = theta[-1:].copy()
        sample_weight = drawing_weights(sample_weight)
        if sample_weight is not None:
            check_group_weights(sample_weight, encoding.indices(), encoding.names)
        initial_scores = sigmoid(logits(theta, X))
        y01 = (y == self.classes_[1]).astype(int)
        self._targets = constraints.cell_targets(
            self.target, initial_scores, encoding, y01, self.constraint, sample_weight,
            self.classes_, self.tau,
        )  # fmt: skip
        self.target_samples_, self._cell_target_rows = constraints.target_attributes(
            self._targets, self.classes_, self.constraint, encoding.n_groups
        )
        self.tau_ = check_tau(self.tau)
        self.group_targets_ = None
        if self.tau_ > 0:
            rows = encoding.indices()
            self.group_targets_ = np.stack(
                geodesic_targets(
                    self.target_samples_,
                    [initial_scores[r] for r in rows],
                    self.tau_,
                    group_weights=[
                        None if sample_weight is None else sample_weight[r] for r in rows
                    ],
                )
            )

        rng = check_random_state(self.random_state)
        self._init_solver(rng, encoding.n_groups * len(self._targets))
        # Three streams (group batches, target batches, loss batches), kept so that partial_fit
        # continues them; separate streams make the iterates independent of how the run is cut
        # into blocks, and the first two the same whether or not a loss term is drawn.
        seed = np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
        self._batch_sampler, self._target_sampler, self._loss_sampler = seed.spawn(3)
        self._theta = theta
        self.n_updates_ = 0
        self._history: list[dict[str, float]] = []
        self._run_updates(X, y, encoding.indices(), eval_set, n_updates, sample_weight)

    def kernel_targets(self) -> np.ndarray:
        """The target the kernels read: shared (1-D), or one row per group when ``tau > 0``.

        Under equalized odds / equal opportunity: one row per (group, label) cell, its label's
        target (every label's target on one common grid of levels).
        """
        if self._cell_target_rows is not None:
            return self._cell_target_rows
        return self.target_samples_ if self.group_targets_ is None else self.group_targets_

    def _initial_model(self, X, y: np.ndarray, sample_weight) -> tuple[Any, np.ndarray]:
        r"""Fit (a clone of) ``estimator`` unless frozen, and read :math:`\theta^*` from it."""
        base = LogisticRegression() if self.estimator is None else self.estimator
        fitted = fit_base_estimator(base, X, y, sample_weight)
        coef = getattr(fitted, "coef_", None)
        intercept = getattr(fitted, "intercept_", None)
        if coef is None or intercept is None or np.shape(coef) != (1, X.shape[1]):
            raise TypeError(MSG_NOT_LINEAR.format(name=type(base).__name__))
        fitted_classes = np.asarray(fitted.classes_)
        if not np.array_equal(fitted_classes, self.classes_):
            raise ValueError(
                MSG_CLASSES.format(
                    what="estimator", got=fitted_classes.tolist(), expected=self.classes_.tolist()
                )
            )
        theta = np.concatenate([np.ravel(coef), np.ravel(intercept)[:1]]).astype(np.float64)
        return fitted, theta

    def _run_updates(self, X, y, rows: list[np.ndarray], eval_set, n_updates: int, sample_weight):
        """Run ``n_updates`` updates on the groups' ``rows`` of ``X``, recording the history."""
        y01 = (y == self.classes_[1]).astype(int)
        rows, names, self._cell_targets = constraints.cell_rows(
            rows, self.group_names_, y01, self.constraint, self.classes_, "fit"
        )
        counts = np.array([r.shape[0] for r in rows], dtype=np.int64)
        cumulative = None
        drawable = counts
        if sample_weight is not None:
            group_weights = check_group_weights(sample_weight, rows, names)
            cumulative = [cumulative_weights(w) for w in group_weights]
            drawable = np.array([np.count_nonzero(w) for w in group_weights])
        for name, count in zip(names, drawable, strict=True):
            if count < self.batch_size:
                warnings.warn(
                    MSG_SMALL_GROUP.format(group=name, count=count, batch=self.batch_size),
                    UserWarning,
                    stacklevel=user_stacklevel(),
                )
        loss_cumulative = None if sample_weight is None else cumulative_weights(sample_weight)
        members = np.concatenate(rows).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        indices, values = padded_rows(X)
        labels = y01.astype(np.float64)
        evaluation = self._check_eval_set(eval_set)
        # The records' Wass1 couple each group (cell) with its fixed target, sizes unchanged over
        # the run: the coupling's cells are cut once here, not at each of the ~100 records.
        couplings = self._target_couplings(rows)
        if evaluation is not None:
            ex, ey, erows = evaluation
            erows = constraints.cell_rows(
                erows, self.group_names_, ey, self.constraint, self.classes_, "eval_set"
            )[0]
            eval_couplings = self._target_couplings(erows)
        every = self.history_every or max(1, n_updates // 100)
        target = np.concatenate(self._targets)
        start_scores = score_rows(start_theta(self), indices, values)
        # A target that is itself near-constant (the raw model's signal was the attribute's)
        # is reached by a constant model: no divergence, the final check says what happened.
        flat_target = diagnose_collapse(None, target, start_scores=start_scores)
        target_saturated = saturated_share(target)
        # The per-record evaluations are small vector operations: BLAS threads only contend
        # with the kernel (and with other processes on a shared machine).
        with (
            threadpool_limits(limits=1, user_api="blas"),
            tqdm(total=n_updates, disable=not self.verbose, desc=self._display_name) as bar,
        ):
            done = 0
            while done < n_updates:
                m = min(every, n_updates - done)
                shape = (m, counts.shape[0], self.batch_size)
                if cumulative is None:
                    batches = self._batch_sampler.integers(0, counts[None, :, None], size=shape)
                else:
                    batches = weighted_batches(self._batch_sampler, cumulative, shape)
                target_batches = self._target_sampler.integers(
                    0, self.kernel_targets().shape[-1], size=(m, self.batch_size)
                )
                loss_batches = self._draw_loss_batches(X.shape[0], m, loss_cumulative)
                objectives = np.empty(m)
                diagnostics = np.zeros(1)
                completed, status = self._run_chunk(
                    indices,
                    values,
                    members,
                    offsets,
                    batches,
                    target_batches,
                    labels,
                    loss_batches,
                    objectives,
                    diagnostics,
                )
                self.n_updates_ += int(completed)
                if status != STATUS_OK:
                    self._raise_divergence(status, float(diagnostics[0]))
                done += m
                bar.update(m)
                s = score_rows(self._theta, indices, values)
                # A fair model keeps roughly the spread of its target; one whose scores spread
                # ten times less has collapsed to a constant (Err-.5 = share of the minority
                # class, Wass1 ~ 0: "fair" and useless). The steps' fault: an error.
                spread = diagnose_collapse(None, s, start_scores=target)
                if spread.spread_collapsed and not flat_target.spread_collapsed:
                    raise DivergenceError(
                        MSG_COLLAPSE.format(
                            name=self._display_name,
                            update=self.n_updates_,
                            spread=spread.spread,
                            target=spread.start_spread,
                            step=self.step_size,
                            extra=self._extra_advice(),
                        )
                    )
                share = saturated_share(s)
                if share > max(SATURATED_SHARE, 2 * target_saturated):
                    raise DivergenceError(
                        MSG_SATURATED.format(
                            name=self._display_name,
                            update=self.n_updates_,
                            share=share,
                            margin=SATURATION_MARGIN,
                            target=target_saturated,
                            step=self.step_size,
                            extra=self._extra_advice(),
                        )
                    )
                record = {
                    "update": self.n_updates_,
                    "objective": float(objectives.mean()),
                    "train_wass1": self._wass1(s, rows, couplings),
                    "train_error": float(np.mean((s > 0.5) != y01)),
                }
                if evaluation is not None:
                    es = sigmoid(logits(self._theta, ex))
                    record["eval_wass1"] = self._wass1(es, erows, eval_couplings)
                    record["eval_error"] = float(np.mean((es > 0.5) != ey))
                self._history.append(record)
        self.coef_ = self._theta[None, :-1].copy()
        self.intercept_ = self._theta[-1:].copy()
        if n_updates > 0:
            warn_if_degenerate(self, s, start_scores, y01, sample_weight, evaluation, flat_target)

    def _draw_loss_batches(self, n_rows: int, n_updates: int, cumulative) -> np.ndarray | None:
        """Rows of the log-loss term: uniform (or by weight) over all rows; none at weight 0.

        At ``loss_weight=0`` nothing is drawn, so the other streams, and the paper's iterates,
        are exactly those of the method without the term.
        """
        if self.loss_weight == 0:
            return None
        shape = (n_updates, self.batch_size)
        if cumulative is None:
            return self._loss_sampler.integers(0, n_rows, size=shape)
        return np.searchsorted(cumulative, self._loss_sampler.random(size=shape), side="right")

    @property
    def history_(self) -> pd.DataFrame:
        """One row per record of the updates (a new frame on each access)."""
        if "_history" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__} has no history_ before it is fitted.")
        # Records are kept as plain floats (skops loads them without trusting pandas); the
        # frame is built when asked for.
        return pd.DataFrame(self._history)

    def _target_couplings(self, rows: list[np.ndarray]) -> list[SortedCoupling]:
        """The coupling of each group's (cell's) rows with its target, for :meth:`_wass1`."""
        return [
            SortedCoupling.unweighted(r.shape[0], self._targets[t].shape[0])
            for r, t in zip(rows, self._cell_targets, strict=True)
        ]

    def _wass1(
        self, s: np.ndarray, rows: list[np.ndarray], couplings: list[SortedCoupling]
    ) -> float:
        r""":math:`\sum_a W_1(p_{S_a}, p_{\bar S})` to the fitted (fixed) target (per cell)."""
        return sum_of_distances(
            coupling.distances(np.sort(s[r]), self._targets[t], (1.0,))[0]
            for r, t, coupling in zip(rows, self._cell_targets, couplings, strict=True)
        )

    def _check_eval_set(self, eval_set):
        if eval_set is None:
            return None
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 3:
            raise ValueError(MSG_EVAL_SET.format(value=type(eval_set).__name__))
        ex, ey, esf = eval_set
        esf, _ = resolve_sensitive_features(ex, esf, name="eval_set sensitive_features")
        ex = _validate_numeric(self, ex, reset=False)
        ey = column_or_1d(ey, warn=False)
        check_consistent_length(eval_X=ex, eval_y=ey, eval_sensitive_features=esf)
        check_binary_target(ey, self.classes_, name="eval_set y")
        erows = self._group_rows(esf, ex.shape[0], "eval_set")
        return ex, (ey == self.classes_[1]).astype(int), erows

    def _group_rows(self, sensitive_features, n_samples: int, method: str) -> list[np.ndarray]:
        """Rows of each fitted group in new data (unseen group: error naming it)."""
        encoded = self._encoding.encode(sensitive_features)
        check_consistent_length(X=np.empty(n_samples), sensitive_features=encoded)
        if encoded.ndim == 2:
            rows = [np.flatnonzero(encoded[:, g]) for g in range(encoded.shape[1])]
        else:
            rows = [np.flatnonzero(encoded == g) for g in range(self._encoding.n_groups)]
        for name, r in zip(self._encoding.names, rows, strict=True):
            if r.shape[0] == 0:
                raise ValueError(MSG_EMPTY_GROUP.format(group=name, method=method))
        return rows

    def _extra_advice(self) -> str:
        return ""

    def _raise_divergence(self, status: int, value: float) -> None:
        raise DivergenceError(
            MSG_NOT_FINITE.format(
                name=self._display_name,
                update=self.n_updates_,
                step=self.step_size,
                extra=self._extra_advice(),
            )
        )

    def _partial_fit(self, X, y, sensitive_features, n_updates, eval_set, classes, sample_weight):
        if classes is not None:
            classes = check_binary_target(np.asarray(classes), name="classes")
            if hasattr(self, "classes_") and not np.array_equal(classes, self.classes_):
                raise ValueError(
                    MSG_CLASSES.format(
                        what="classes", got=classes.tolist(), expected=self.classes_.tolist()
                    )
                )
        n_updates = self.n_updates if n_updates is None else n_updates
        if not hasattr(self, "coef_"):
            self._validate_params()
            self._fit(X, y, sensitive_features, eval_set, n_updates, sample_weight)
            return self
        X, y, sf, sample_weight = self._validate_inputs(
            X, y, sensitive_features, sample_weight, reset=False
        )
        check_binary_target(y, self.classes_)
        rows = self._group_rows(sf, X.shape[0], "partial_fit")
        self._run_updates(X, y, rows, eval_set, n_updates, drawing_weights(sample_weight))
        return self

    # ------------------------------------------------------------- predicting
    def decision_function(self, X, *, sensitive_features=None) -> np.ndarray:
        r"""The logit :math:`\theta^\top (x, 1)` of the adjusted model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        sensitive_features : ignored
            Accepted so that every fairot classifier predicts with the same call; the adjusted
            model does not use groups at prediction time.

        Returns
        -------
        ndarray of shape (n_samples,)
            Each row's logit depends on that row only (not on the other rows of ``X``).
        """
        check_is_fitted(self)
        X = _validate_numeric(self, X, reset=False)
        return logits(np.concatenate([self.coef_[0], self.intercept_]), X)

    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        r"""Scores :math:`s = \sigma(\theta^\top (x, 1))` as class probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        sensitive_features : ignored
            As in :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        s = sigmoid(self.decision_function(X))
        return np.column_stack([1.0 - s, s])

    def predict(self, X, *, sensitive_features=None) -> np.ndarray:
        """Predicted class: ``classes_[1]`` when the score exceeds 0.5 (the paper's Err-.5).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        sensitive_features : ignored
            As in :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        s = sigmoid(self.decision_function(X))
        return self.classes_[(s > 0.5).astype(int)]

    def score(self, X, y, sample_weight=None, *, sensitive_features=None) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``, weighted by ``sample_weight``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        sensitive_features : ignored
            Accepted (and routable with ``set_score_request``) for a uniform API.

        Returns
        -------
        float
        """
        y_pred = self.predict(X)
        return float(
            accuracy_score(y, y_pred, sample_weight=check_sample_weight(sample_weight, len(y_pred)))
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True
        return tags


def _validate_numeric(estimator, X, y="no_validation", **kwargs):
    """scikit-learn's validation of a numeric X (dense or CSR/CSC), without its arithmetic noise.

    Its finiteness test sums X, which warns (overflow, inf - inf) just before it raises the
    clear error about NaN or infinity; the user needs only the error.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return validate_data(
            estimator, X, y, accept_sparse=["csr", "csc"], dtype=np.float64, **kwargs
        )
