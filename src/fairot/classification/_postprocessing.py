"""DPP: quantile post-processing of any probabilistic classifier to a common target distribution."""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Literal

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    StrOptions,
)
from sklearn.utils.validation import (
    _num_samples,
    check_is_fitted,
    column_or_1d,
)

from fairot.classification._common import (
    TauUnitsMixin,
    atomic,
    check_group_weights,
    fit_base_estimator,
    user_stacklevel,
)
from fairot.classification._dpp_groups import MSG_UNSEEN, GroupMaps, group_statistics
from fairot.classification._dpp_inputs import WrappedInputsMixin
from fairot.classification._dpp_strata import MSG_DASK_CONTROL, fit_strata, map_rows
from fairot.transport import check_tau
from fairot.utils.arrays import check_consistent_length, check_sample_weight, check_scores
from fairot.utils.backends import dispatch, is_dask_collection
from fairot.utils.groups import (
    GroupEncoding,
    group_attributes,
    warn_small_groups,
)
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features
from fairot.utils.strata import SMALL_STRATA, encode_strata
from fairot.utils.targets import check_binary_target

MSG_MARGINAL_CELLS = (
    "overlapping (marginal) groups cannot be post-processed one person at a time: "
    "QuantileParityPostProcessor maps each of the {n_cells} intersectional cells of the "
    "sensitive columns to the target of the {n_groups} marginal groups."
)
MSG_NO_PROBA = "estimator must implement predict_proba; got {name}."
__all__ = ["MSG_UNSEEN", "QuantileParityPostProcessor"]


class QuantileParityPostProcessor(
    TauUnitsMixin, WrappedInputsMixin, ClassifierMixin, BaseEstimator
):
    r"""Quantile post-processing to strong demographic parity (DPP of [1]_).

    Each score :math:`s` of a person in group :math:`a` is replaced by the target quantile at its
    within-group rank,

    .. math:: \tilde s = Q_{\bar S}\big(F_a(s)\big),

    with :math:`F_a` the right-continuous ECDF of group :math:`a`'s scores at fit time and
    :math:`Q_{\bar S}` the (left-continuous) quantile function of the target. On the fit data
    every group's post-processed scores then follow the target exactly, up to ties.

    With a tolerance :math:`\tau \in [0, 1]` each score moves only :math:`1 - \tau` of the way,
    along the :math:`W_1` (= :math:`W_2` in one dimension, McCann's interpolation) geodesic,

    .. math:: \tilde s_\tau = \tau\, s + (1 - \tau)\, Q_{\bar S}\big(F_a(s)\big),

    i.e. group :math:`a`'s adjusted quantile function is
    :math:`\tau Q_a(u) + (1 - \tau) \bar Q(u)`: the map is nondecreasing, so on any data
    :math:`W_p(\tilde s_\tau, \tilde s_0) = \tau\, W_p(s, \tilde s_0)` exactly within each group,
    a fraction :math:`\tau` of the raw distance to the target kept (the regression paper's
    relative tolerance). ``tau=1`` returns the model's own scores exactly, ``tau=0`` full
    parity.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A probabilistic binary classifier; cloned and fitted (``None``: ``LogisticRegression()``).
        Wrap a trained model in :class:`sklearn.frozen.FrozenEstimator` to use it as is.
    target : "barycenter", group label or name, or array-like, default="barycenter"
        :math:`p_{\bar S}`, as in :class:`COTClassifier`.
    group_mode : {"intersection", "marginal"}, default="intersection"
        With ``"marginal"`` the target is built from the (overlapping) marginal groups and each
        intersectional cell is mapped to it, with a warning that says so.
    tau : float in [0, 1], default=0.0
        Fraction of the raw disparity kept: each group's scores move :math:`1 - \tau` of the
        way to the target along the geodesic (see above). ``0``: strong demographic parity;
        ``1``: the base model's scores unchanged.
    unseen_groups : {"error", "pooled"}, default="error"
        A row whose group was not seen at fit time: ``"error"`` raises, listing the seen
        groups; ``"pooled"`` maps it through the pooled score distribution of all fit-time
        rows, :math:`\tau s + (1 - \tau) Q_{\bar S}(F(s))` with :math:`F` the pooled ECDF.
    small_strata : {"pooled", "error"}, default="pooled"
        With ``control_features``, a stratum where a group is missing or has fewer than
        ``fairot.utils.groups.SMALL_GROUP_SIZE`` rows: ``"pooled"`` maps it with the map fitted
        on all strata together (one warning names the strata), ``"error"`` raises, naming them
        and their cells' sizes. Strata unseen at fit: the same at prediction.

    Groups with fewer than ``fairot.utils.groups.SMALL_GROUP_SIZE`` rows at fit time get a
    warning: their ECDF rests on too few rows.

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
    tau_ : float
        The tolerance in use (``tau``, checked at fit).
    strata_, pooled_strata_ : list
        With ``control_features``: the strata seen at fit, and the names of those mapped with
        the map of all strata together (``small_strata``). The attributes above are that map.
    stratum_maps_ : list of (GroupMaps or None)
        Each stratum's own map, fitted on its rows alone (``group_scores``,
        ``target_samples``, ``groups_``); ``None`` for ``pooled_strata_``.
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
        "group_mode": [StrOptions({"intersection", "marginal"})],
        "tau": [Interval(Real, 0, 1, closed="both")],
        "unseen_groups": [StrOptions({"error", "pooled"})],
        "small_strata": [StrOptions(set(SMALL_STRATA))],
    }

    # One default across fairot's classifiers and regressors: every method that takes the
    # groups requests them, so meta-estimators route them once metadata routing is enabled
    # (no set_*_request call needed); sample_weight keeps scikit-learn's default (unrequested).
    __metadata_request__fit = {"sensitive_features": True, "control_features": True}
    __metadata_request__predict_proba = {"sensitive_features": True, "control_features": True}
    __metadata_request__predict = {"sensitive_features": True, "control_features": True}
    __metadata_request__score = {"sensitive_features": True, "control_features": True}

    def __init__(
        self,
        *,
        estimator=None,
        target="barycenter",
        group_mode: Literal["intersection", "marginal"] = "intersection",
        tau: float = 0.0,
        unseen_groups: Literal["error", "pooled"] = "error",
        small_strata: Literal["pooled", "error"] = "pooled",
    ):
        self.estimator = estimator
        self.target = target
        self.group_mode = group_mode
        self.tau = tau
        self.unseen_groups = unseen_groups
        self.small_strata = small_strata

    @_fit_context(prefer_skip_nested_validation=False)
    @atomic
    def fit(self, X, y, *, sensitive_features, control_features=None, sample_weight=None):
        """Fit the base classifier and record each group's score distribution and the target.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Passed to ``estimator`` exactly as given (strings, NaN, feature names: whatever
            the estimator accepts); fairot reads only its number of rows.
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like, DataFrame, dict of arrays, str or list of str
            Groups of shape (n_samples,) or (n_samples, n_columns), or column name(s) of a
            DataFrame ``X`` (read from ``X``; ``X`` still reaches the estimator whole, so a
            pipeline that should not use them drops them itself). Groups named by columns are
            read from ``X`` again at prediction when ``sensitive_features`` is not given.
        control_features : array-like, DataFrame, dict, str or list of str, optional
            Strata (legitimate factors) within which parity is asked for (conditional
            demographic parity), in the forms of ``sensitive_features``: one map per stratum,
            exactly the map fitted on the stratum's rows alone, ``tau`` applying within each;
            the base classifier is fitted once on all rows. Strata too small to fit follow
            ``small_strata``. Not on Dask collections.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights: passed to ``estimator``'s ``fit``, and used for weighted
            group ECDFs and target quantiles. Integer weights give the model fitted on rows
            repeated that many times (exactly, when each group's lightest row has weight 1).

        Returns
        -------
        self : QuantileParityPostProcessor
        """
        if is_dask_collection(X):
            if control_features is not None:
                raise NotImplementedError(MSG_DASK_CONTROL)
            return dispatch(
                "QuantileParityPostProcessor.fit", self, X, y, sensitive_features, sample_weight
            )
        sf, columns = resolve_sensitive_features(X, sensitive_features)
        y = column_or_1d(y, warn=True)
        n_samples = _num_samples(X)
        check_consistent_length(X=X, y=y, sensitive_features=sf, sample_weight=sample_weight)
        classes = check_binary_target(y)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        encoding = check_sensitive_features(sf, n_samples, group_mode=self.group_mode)
        strata = None
        if control_features is not None:
            control, control_columns = resolve_sensitive_features(
                X, control_features, name="control_features"
            )
            strata = encode_strata(control, n_samples)
        if sample_weight is not None:
            check_group_weights(sample_weight, encoding.indices(), encoding.names)
        self.fit_estimator(X, y, classes=classes, sample_weight=sample_weight)
        scores = self.base_scores(X)
        # The target of marginal groups comes from the overlapping groups; each person is then
        # mapped from the cell (intersection) they belong to.
        cells, group_scores, group_weights, target_samples = group_statistics(
            self, scores, sf, encoding, sample_weight
        )
        if self.group_mode == "marginal":
            warnings.warn(
                MSG_MARGINAL_CELLS.format(n_cells=cells.n_groups, n_groups=encoding.n_groups),
                UserWarning,
                stacklevel=user_stacklevel(),
            )
        self.fit_group_scores(
            group_scores,
            cells,
            group_weights=group_weights,
            target_samples=target_samples,
            sensitive_columns=columns,
        )
        if strata is not None:
            # One map per stratum, each fitted on the stratum's rows alone; the map above (all
            # strata together) is the one of the strata too small to fit (small_strata).
            self._strata, self.stratum_maps_ = fit_strata(
                self, scores, sf, cells.codes, sample_weight, strata, control_columns
            )
            self.strata_ = self._strata.labels
            self.pooled_strata_ = self._strata.pooled_names
        return self

    def fit_estimator(self, X, y, *, classes=None, sample_weight=None):
        """Stage 1 of :meth:`fit`: fit the base classifier and record the classes and features.

        Every backend calls it: the in-memory :meth:`fit` with the training data, the Dask
        backend with the computed data (or, for a model in
        :class:`sklearn.frozen.FrozenEstimator`, which reads no data, with the collections).

        Parameters
        ----------
        X : array-like, DataFrame, sparse matrix or Dask collection
            Passed to ``estimator``'s ``fit`` as given; its number and names of columns are
            recorded (``n_features_in_``, ``feature_names_in_``).
        y : array-like of shape (n_samples,)
            Binary labels.
        classes : ndarray of shape (2,), optional
            The checked distinct labels of ``y``, when the caller has them (a Dask ``y`` is not
            read here); by default read from ``y``.
        sample_weight : ndarray of shape (n_samples,), optional
            Passed to ``estimator``'s ``fit``.

        Returns
        -------
        self : QuantileParityPostProcessor
        """
        base = LogisticRegression() if self.estimator is None else self.estimator
        if not hasattr(base, "predict_proba"):
            raise TypeError(MSG_NO_PROBA.format(name=type(base).__name__))
        self.classes_ = check_binary_target(y) if classes is None else classes
        self._check_features(X, reset=True)
        self.estimator_ = fit_base_estimator(base, X, y, sample_weight)
        return self

    def fit_group_scores(
        self,
        group_scores,
        encoding: GroupEncoding,
        *,
        group_weights=None,
        target_samples=None,
        sensitive_columns=None,
    ):
        r"""Stage 2 of :meth:`fit`: the post-processing from each group's sorted scores.

        The seam of every backend: the in-memory :meth:`fit` sorts each group's scores
        itself, the Dask backend gathers them from the cluster (or their sketched quantile
        curves); both then call this, so that the fitted model depends only on these
        statistics. :meth:`fit_estimator` must have run first.

        Parameters
        ----------
        group_scores : list of ndarray
            Each group's base scores (:meth:`base_scores` at fit time) in nondecreasing order,
            in the order of ``encoding``'s groups; they define :math:`F_a`.
        encoding : GroupEncoding
            The groups (intersection cells) that predictions are mapped from.
        group_weights : list of (ndarray or None), optional
            Each group's row weights in the order of ``group_scores`` (``None``: unweighted).
        target_samples : ndarray, optional
            The target's samples; by default built from the group scores and weights as the
            ``target`` parameter says (a target built from other groups, as for
            ``group_mode="marginal"``, is passed here).
        sensitive_columns : str or list of str, optional
            Columns of ``X`` to read the groups from at prediction time.

        Returns
        -------
        self : QuantileParityPostProcessor
        """
        group_scores = [np.asarray(g, dtype=np.float64) for g in group_scores]
        if group_weights is None:
            group_weights = [None] * len(group_scores)
        warn_small_groups(
            [
                g.shape[0] if w is None else np.count_nonzero(w)
                for g, w in zip(group_scores, group_weights, strict=True)
            ],
            group_attributes(encoding)[1],
            stacklevel=user_stacklevel(),
        )
        self.tau_ = check_tau(self.tau)
        maps = GroupMaps.from_groups(
            self.target, group_scores, group_weights, encoding, target_samples=target_samples
        )
        self.target_samples_ = maps.target_samples
        self._encoding = encoding
        self._sensitive_columns = sensitive_columns
        self.groups_, self.group_names_ = group_attributes(encoding)
        self.group_scores_ = maps.group_scores
        self._group_weights = maps.group_weights
        self._pooled = maps.pooled
        # a fit without control_features (here, or from a backend) leaves no strata behind
        self._strata = None
        for name in ("stratum_maps_", "strata_", "pooled_strata_"):
            self.__dict__.pop(name, None)
        return self

    def _refuse_dask_strata(self, control_features) -> None:
        if control_features is not None or getattr(self, "_strata", None) is not None:
            raise NotImplementedError(MSG_DASK_CONTROL)

    def _all_strata_map(self) -> GroupMaps:
        """The map fitted on all rows together (without strata, or for small strata)."""
        return GroupMaps(
            self._encoding,
            self.group_scores_,
            self._group_weights,
            self.target_samples_,
            self._pooled,
        )

    def base_scores(self, X) -> np.ndarray:
        """The fitted base classifier's score of ``classes_[1]`` (before post-processing).

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        proba = self.estimator_.predict_proba(X)
        column = int(np.flatnonzero(np.asarray(self.estimator_.classes_) == self.classes_[1])[0])
        return check_scores(
            np.asarray(proba)[:, column], f"{type(self.estimator_).__name__}.predict_proba"
        )

    def predict_proba(self, X, *, sensitive_features=None, control_features=None) -> np.ndarray:
        r"""Post-processed scores :math:`Q_{\bar S}(F_a(s))` as class probabilities.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
            Passed to the fitted estimator as given.
        sensitive_features : array-like, DataFrame, dict, str or list of str, optional
            Groups of the rows of ``X``, as at fit time (a group unseen at fit time: as
            ``unseen_groups`` says). Required unless the groups were named as columns of ``X``
            at fit time (they are then read from ``X`` again).
        control_features : array-like, DataFrame, dict, str or list of str, optional
            The strata of the rows, required when (and only when) ``fit`` was given them
            (``None``: the columns of ``X`` named in ``fit``). A stratum unseen at fit
            follows ``small_strata``.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            A row's scores depend on that row only, not on the other rows of ``X``.
        """
        check_is_fitted(self)
        if is_dask_collection(X):
            self._refuse_dask_strata(control_features)
            return dispatch(
                "QuantileParityPostProcessor.predict_proba", self, X, sensitive_features
            )
        if sensitive_features is None and self._sensitive_columns is not None:
            sensitive_features = self._sensitive_columns
        sf, _ = resolve_sensitive_features(X, sensitive_features)
        self._check_features(X, reset=False)
        out = map_rows(
            self, X, _num_samples(X), self.base_scores, sf, control_features, self._all_strata_map()
        )
        return np.column_stack([1.0 - out, out])

    def predict(self, X, *, sensitive_features=None, control_features=None) -> np.ndarray:
        """Predicted class: ``classes_[1]`` when the post-processed score exceeds 0.5.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        sensitive_features, control_features : optional
            As in :meth:`predict_proba`.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        if is_dask_collection(X):
            self._refuse_dask_strata(control_features)
            return dispatch("QuantileParityPostProcessor.predict", self, X, sensitive_features)
        # passed on only when given: a subclass's predict_proba without strata still works
        strata = {} if control_features is None else {"control_features": control_features}
        s = self.predict_proba(X, sensitive_features=sensitive_features, **strata)[:, 1]
        return self.classes_[(s > 0.5).astype(int)]

    def score(
        self, X, y, sample_weight=None, *, sensitive_features=None, control_features=None
    ) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``, weighted by ``sample_weight``.

        Parameters
        ----------
        X : array-like, DataFrame or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        sensitive_features : array-like, DataFrame, dict, str or list of str, optional
            As in :meth:`predict_proba`. In ``cross_val_score``, ``GridSearchCV`` or a
            ``Pipeline`` route it with ``set_score_request(sensitive_features=True)`` (and
            ``sklearn.set_config(enable_metadata_routing=True)``); without it (and without
            column names) this raises instead of returning NaN.
        control_features : optional
            As in :meth:`predict_proba`.

        Returns
        -------
        float
        """
        strata = {} if control_features is None else {"control_features": control_features}
        y_pred = self.predict(X, sensitive_features=sensitive_features, **strata)
        return float(
            accuracy_score(y, y_pred, sample_weight=check_sample_weight(sample_weight, len(y_pred)))
        )
