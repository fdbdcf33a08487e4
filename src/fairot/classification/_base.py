"""What COT and DOT share: validation, the logistic start, batches, history, divergence checks."""

from __future__ import annotations

import copy
import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from fairot._validation import GroupEncoding, check_sensitive_features
from fairot.classification._kernels import STATUS_OK, padded_rows, score_rows
from fairot.classification._reference import sigmoid
from fairot.classification._targets import build_target
from fairot.metrics._classification import sum_w1_to_reference

MSG_NOT_BINARY = (
    "Only binary classification is supported: y must have exactly two classes. The type of the "
    "target is {y_type}, with {n} class(es): {classes}."
)
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
MSG_NOT_FINITE = (
    "{name} diverged at update {update}: the coefficients became non-finite. "
    "Lower step_size (epsilon_theta, now {step:g}){extra}."
)
MSG_EVAL_SET = "eval_set must be a tuple (X, y, sensitive_features); got {value!r}."

# A fair model keeps roughly the spread of its target; one whose scores spread this much less
# has collapsed to a constant (Err-.5 = share of the minority class, Wass1 ~ 0: "fair" and useless).
COLLAPSE_SPREAD_RATIO = 0.1


def check_binary_target(y: np.ndarray, classes=None) -> np.ndarray:
    """The two classes of ``y`` (and of ``classes`` when given), or a ValueError."""
    check_classification_targets(y)
    found = np.unique(y if classes is None else np.concatenate([np.unique(y), classes]))
    if found.shape[0] != 2:
        raise ValueError(
            MSG_NOT_BINARY.format(
                y_type=type_of_target(y), n=found.shape[0], classes=found[:10].tolist()
            )
        )
    return found


class DivergenceError(RuntimeError):
    """The optimisation diverged or collapsed; the message says which step size to lower."""


class OTInProcessingClassifier(ClassifierMixin, BaseEstimator):
    """Base of COT and DOT: a logistic model adjusted by stochastic OT updates.

    Subclasses implement ``_init_solver`` (draws their random state) and ``_run_chunk`` (the
    kernel call) and the parameters of their updates.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "target": [StrOptions({"barycenter"}), str, Integral, tuple, "array-like"],
        "groups": [StrOptions({"intersection", "marginal"})],
        "step_size": [Interval(Real, 0, None, closed="neither")],
        "n_updates": [Interval(Integral, 0, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "history_every": [Interval(Integral, 1, None, closed="left"), None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    _display_name = "OT"

    # ---------------------------------------------------------------- fitting
    def _fit(self, X, y, sensitive_features, eval_set, n_updates: int) -> None:
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_ = check_binary_target(y)
        encoding = check_sensitive_features(sensitive_features, X.shape[0], groups=self.groups)
        self._encoding = encoding
        self.groups_ = list(encoding.labels)
        self.group_names_ = list(encoding.names)

        self.estimator_, theta = self._initial_model(X, y)
        self.initial_coef_ = theta[None, :-1].copy()
        self.initial_intercept_ = theta[-1:].copy()
        initial_scores = sigmoid(X @ theta[:-1] + theta[-1])
        self.target_samples_ = build_target(self.target, initial_scores, encoding)

        rng = check_random_state(self.random_state)
        self._init_solver(rng, encoding.n_groups)
        # Two streams (group batches, target batches), kept so that partial_fit continues them;
        # separate streams make the iterates independent of how the run is cut into blocks.
        seed = np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
        self._batch_sampler, self._target_sampler = seed.spawn(2)
        self._theta = theta
        self.n_updates_ = 0
        self._history: list[dict[str, float]] = []
        self._run(X, y, encoding, eval_set, n_updates)

    def _initial_model(self, X: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray]:
        r"""Fit (a clone of) ``estimator`` unless frozen, and read :math:`\theta^*` from it."""
        base = LogisticRegression() if self.estimator is None else self.estimator
        fitted = clone(base).fit(X, y)
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

    _state_attributes: tuple[str, ...] = (
        "_theta",
        "n_updates_",
        "_history",
        "_batch_sampler",
        "_target_sampler",
    )

    def _run(self, X, y, encoding: GroupEncoding, eval_set, n_updates: int) -> None:
        # A diverged run must not leave its state behind: a later partial_fit would continue
        # from it. The fitted model stays as it was before the call.
        snapshot = {name: copy.deepcopy(getattr(self, name)) for name in self._state_attributes}
        try:
            self._run_updates(X, y, encoding, eval_set, n_updates)
        except DivergenceError:
            for name, value in snapshot.items():
                setattr(self, name, value)
            raise

    def _run_updates(self, X, y, encoding: GroupEncoding, eval_set, n_updates: int) -> None:
        rows = encoding.indices()
        counts = np.array([r.shape[0] for r in rows], dtype=np.int64)
        for name, count in zip(encoding.names, counts, strict=True):
            if count < self.batch_size:
                warnings.warn(
                    MSG_SMALL_GROUP.format(group=name, count=count, batch=self.batch_size),
                    UserWarning,
                    stacklevel=3,
                )
        members = np.concatenate(rows).astype(np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        indices, values = padded_rows(X)
        y01 = (y == self.classes_[1]).astype(int)
        evaluation = self._check_eval_set(eval_set)
        every = self.history_every or max(1, n_updates // 100)
        target = self.target_samples_
        target_spread = float(np.std(target))
        # The per-record evaluations are small vector operations: BLAS threads only contend
        # with the kernel (and with other processes on a shared machine).
        with (
            threadpool_limits(limits=1, user_api="blas"),
            tqdm(total=n_updates, disable=not self.verbose, desc=self._display_name) as bar,
        ):
            done = 0
            while done < n_updates:
                m = min(every, n_updates - done)
                batches = self._batch_sampler.integers(
                    0, counts[None, :, None], size=(m, counts.shape[0], self.batch_size)
                )
                target_batches = self._target_sampler.integers(
                    0, target.shape[0], size=(m, self.batch_size)
                )
                objectives = np.empty(m)
                diagnostics = np.zeros(1)
                completed, status = self._run_chunk(
                    indices,
                    values,
                    members,
                    offsets,
                    batches,
                    target_batches,
                    objectives,
                    diagnostics,
                )
                self.n_updates_ += int(completed)
                if status != STATUS_OK:
                    self._raise_divergence(status, float(diagnostics[0]))
                done += m
                bar.update(m)
                s = score_rows(self._theta, indices, values)
                if target_spread > 0 and np.std(s) < COLLAPSE_SPREAD_RATIO * target_spread:
                    raise DivergenceError(
                        MSG_COLLAPSE.format(
                            name=self._display_name,
                            update=self.n_updates_,
                            spread=np.std(s),
                            target=target_spread,
                            step=self.step_size,
                            extra=self._extra_advice(),
                        )
                    )
                record = {
                    "update": self.n_updates_,
                    "objective": float(objectives.mean()),
                    "train_wass1": self._wass1(s, rows),
                    "train_error": float(np.mean((s > 0.5) != y01)),
                }
                if evaluation is not None:
                    ex, ey, erows = evaluation
                    es = sigmoid(ex @ self._theta[:-1] + self._theta[-1])
                    record["eval_wass1"] = self._wass1(es, erows)
                    record["eval_error"] = float(np.mean((es > 0.5) != ey))
                self._history.append(record)
        self.coef_ = self._theta[None, :-1].copy()
        self.intercept_ = self._theta[-1:].copy()
        self.history_ = pd.DataFrame(self._history)

    def _wass1(self, s: np.ndarray, rows: list[np.ndarray]) -> float:
        r""":math:`\sum_a W_1(p_{S_a}, p_{\bar S})` to the fitted (fixed) target."""
        return float(sum_w1_to_reference([np.sort(s[r]) for r in rows], self.target_samples_))

    def _check_eval_set(self, eval_set):
        if eval_set is None:
            return None
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 3:
            raise ValueError(MSG_EVAL_SET.format(value=type(eval_set).__name__))
        ex, ey, esf = eval_set
        ex = validate_data(self, ex, dtype=np.float64, reset=False)
        ey = np.asarray(ey)
        erows = self._group_rows(esf, ex.shape[0], "eval_set")
        return ex, (ey == self.classes_[1]).astype(int), erows

    def _group_rows(self, sensitive_features, n_samples: int, method: str) -> list[np.ndarray]:
        """Rows of each fitted group in new data (unseen group: error naming it)."""
        encoded = self._encoding.encode(sensitive_features)
        if encoded.shape[0] != n_samples:
            raise ValueError(
                f"sensitive_features has {encoded.shape[0]} rows but X has {n_samples}."
            )
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

    def _partial_fit(self, X, y, sensitive_features, n_updates, eval_set, classes):
        if classes is not None:
            classes = check_binary_target(np.asarray(classes))
            if hasattr(self, "classes_") and not np.array_equal(classes, self.classes_):
                raise ValueError(
                    MSG_CLASSES.format(
                        what="classes", got=classes.tolist(), expected=self.classes_.tolist()
                    )
                )
        if not hasattr(self, "coef_"):
            self._validate_params()
            self._fit(
                X,
                y,
                sensitive_features,
                eval_set,
                self.n_updates if n_updates is None else n_updates,
            )
            return self
        X, y = validate_data(self, X, y, dtype=np.float64, reset=False)
        check_binary_target(y, self.classes_)
        rows = self._group_rows(sensitive_features, X.shape[0], "partial_fit")
        encoding = _RowsOnly(rows, self._encoding.names)
        self._run(X, y, encoding, eval_set, self.n_updates if n_updates is None else n_updates)
        return self

    # ------------------------------------------------------------- predicting
    def decision_function(self, X) -> np.ndarray:
        r"""The logit :math:`\theta^\top (x, 1)` of the adjusted model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X) -> np.ndarray:
        r"""Scores :math:`s = \sigma(\theta^\top (x, 1))` as class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        s = sigmoid(self.decision_function(X))
        return np.column_stack([1.0 - s, s])

    def predict(self, X) -> np.ndarray:
        """Predicted class: ``classes_[1]`` when the score exceeds 0.5 (the paper's Err-.5).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        s = sigmoid(self.decision_function(X))
        return self.classes_[(s > 0.5).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = False
        return tags


class _RowsOnly:
    """The slice of :class:`GroupEncoding` that ``_run`` reads, for data of a later partial_fit."""

    def __init__(self, rows: list[np.ndarray], names: list[str]):
        self._rows = rows
        self.names = names

    def indices(self) -> list[np.ndarray]:
        return self._rows
