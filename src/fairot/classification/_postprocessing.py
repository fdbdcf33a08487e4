"""DPP: quantile post-processing of any probabilistic classifier to a common target distribution."""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from fairot._validation import check_sensitive_features
from fairot.classification._base import check_binary_target
from fairot.classification._targets import build_target
from fairot.dask._collections import is_dask_collection
from fairot.transport import ecdf_rank, quantile_function

MSG_MARGINAL_CELLS = (
    "overlapping (marginal) groups cannot be post-processed one person at a time: "
    "QuantileParityPostProcessor maps each of the {n_cells} intersectional cells of the "
    "sensitive columns to the target of the {n_groups} marginal groups."
)
# A score recomputed on fit-time data can differ from the stored one by rounding (BLAS blocking
# depends on the batch); the ECDF jumps exactly there, so ranks are taken just right of the score.
RANK_TOLERANCE = 1e-12
MSG_NO_PROBA = "estimator must implement predict_proba; got {name}."


class QuantileParityPostProcessor(ClassifierMixin, BaseEstimator):
    r"""Quantile post-processing to strong demographic parity (DPP of [1]_).

    Each score :math:`s` of a person in group :math:`a` is replaced by the target quantile at its
    within-group rank,

    .. math:: \tilde s = Q_{\bar S}\big(F_a(s)\big),

    with :math:`F_a` the right-continuous ECDF of group :math:`a`'s scores at fit time and
    :math:`Q_{\bar S}` the (left-continuous) quantile function of the target. On the fit data
    every group's post-processed scores then follow the target exactly, up to ties.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A probabilistic binary classifier; cloned and fitted (``None``: ``LogisticRegression()``).
        Wrap a trained model in :class:`sklearn.frozen.FrozenEstimator` to use it as is.
    target : "barycenter", group label or name, or array-like, default="barycenter"
        :math:`p_{\bar S}`, as in :class:`COTClassifier`.
    groups : {"intersection", "marginal"}, default="intersection"
        With ``"marginal"`` the target is built from the (overlapping) marginal groups and each
        intersectional cell is mapped to it, with a warning that says so.

    Attributes
    ----------
    estimator_ : estimator
        The fitted base classifier.
    classes_ : ndarray of shape (2,)
    groups_, group_names_ : list
        Labels and names of the post-processed groups (the cells for marginal groups).
    group_scores_ : list of ndarray
        Sorted fit-time scores of each group, defining :math:`F_a`.
    target_samples_ : ndarray
        Sorted target samples.
    n_features_in_ : int

    See Also
    --------
    COTClassifier, DOTClassifier : in-processing alternatives.

    References
    ----------
    .. [1] R. Jiang, A. Pacchiano, T. Stepleton, H. Jiang and S. Chiappa, "Wasserstein Fair
       Classification", UAI 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.classification import QuantileParityPostProcessor
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a])
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(int)
    >>> dpp = QuantileParityPostProcessor().fit(X, y, sensitive_features=a)
    >>> dpp.predict_proba(X, sensitive_features=a).shape
    (400, 2)
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict_proba"]), None],
        "target": [str, "array-like", int, tuple],
        "groups": [StrOptions({"intersection", "marginal"})],
    }

    def __init__(
        self,
        *,
        estimator=None,
        target="barycenter",
        groups: Literal["intersection", "marginal"] = "intersection",
    ):
        self.estimator = estimator
        self.target = target
        self.groups = groups

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, *, sensitive_features):
        """Fit the base classifier and record each group's score distribution and the target.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)

        Returns
        -------
        self : QuantileParityPostProcessor
        """
        if is_dask_collection(X):
            from fairot.dask._postprocessing import fit_quantile_parity

            return fit_quantile_parity(self, X, y, sensitive_features)
        X_raw = X
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        self.classes_ = check_binary_target(y)
        base = LogisticRegression() if self.estimator is None else self.estimator
        if not hasattr(base, "predict_proba"):
            raise TypeError(MSG_NO_PROBA.format(name=type(base).__name__))
        # The base model sees X as the user gave it (feature names kept for a DataFrame).
        self.estimator_ = clone(base).fit(X_raw, y)
        scores = self._base_scores(X_raw)
        encoding = check_sensitive_features(sensitive_features, X.shape[0], groups=self.groups)
        self.target_samples_ = build_target(self.target, scores, encoding)
        if self.groups == "marginal":
            cells = check_sensitive_features(
                sensitive_features, X.shape[0], groups="intersection", min_groups=1
            )
            warnings.warn(
                MSG_MARGINAL_CELLS.format(n_cells=cells.n_groups, n_groups=encoding.n_groups),
                UserWarning,
                stacklevel=2,
            )
            encoding = cells
        self._encoding = encoding
        self.groups_ = list(encoding.labels)
        self.group_names_ = list(encoding.names)
        self.group_scores_ = [np.sort(scores[rows]) for rows in encoding.indices()]
        return self

    def _base_scores(self, X: np.ndarray) -> np.ndarray:
        proba = self.estimator_.predict_proba(X)
        column = int(np.flatnonzero(np.asarray(self.estimator_.classes_) == self.classes_[1])[0])
        return np.asarray(proba[:, column], dtype=np.float64)

    def predict_proba(self, X, *, sensitive_features) -> np.ndarray:
        r"""Post-processed scores :math:`Q_{\bar S}(F_a(s))` as class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : array-like
            Groups of the rows of ``X``, as at fit time (unseen group: ``ValueError``).

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            from fairot.dask._postprocessing import predict_proba_quantile_parity

            return predict_proba_quantile_parity(self, X, sensitive_features)
        X_raw = X
        X = validate_data(self, X, dtype=np.float64, reset=False)
        codes = self._encoding.encode(sensitive_features)
        if codes.shape[0] != X.shape[0]:
            raise ValueError(
                f"sensitive_features has {codes.shape[0]} rows but X has {X.shape[0]}."
            )
        s = self._base_scores(X_raw)
        out = np.empty_like(s)
        for g, reference in enumerate(self.group_scores_):
            rows = np.flatnonzero(codes == g)
            if rows.size:
                rank = ecdf_rank(reference, s[rows] + RANK_TOLERANCE, assume_sorted=True)
                out[rows] = quantile_function(self.target_samples_, rank, assume_sorted=True)
        return np.column_stack([1.0 - out, out])

    def predict(self, X, *, sensitive_features) -> np.ndarray:
        """Predicted class: ``classes_[1]`` when the post-processed score exceeds 0.5.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : array-like

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if is_dask_collection(X):
            from fairot.dask._postprocessing import predict_quantile_parity

            return predict_quantile_parity(self, X, sensitive_features)
        s = self.predict_proba(X, sensitive_features=sensitive_features)[:, 1]
        return self.classes_[(s > 0.5).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
