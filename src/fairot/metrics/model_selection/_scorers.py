"""Fairness-aware scorers for scikit-learn's model selection, with metadata routing.

scikit-learn's scorers call ``estimator.predict(X)`` without groups and pass routed metadata only
to the metric. A fairness scorer needs the groups twice: the metric compares them, and a
post-processor (:class:`~fairot.classification.QuantileParityPostProcessor`,
:class:`~fairot.regression.WassersteinFairRegressor`) needs them to predict at all. The
scorers here request ``sensitive_features`` from the router, give them to the estimator's
method whenever that method accepts them, and to the metric. Scorers of lower-is-better
metrics are called ``neg_*`` as scikit-learn's are; :func:`get_fairness_scorer` returns a private
copy of one by name.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sklearn
from sklearn.metrics import accuracy_score, mean_squared_error
from sklearn.utils.metadata_routing import MetadataRequest, get_routing_for_object

from fairot.metrics._classification import (
    strong_demographic_disparity,
    strong_pairwise_demographic_disparity,
    wass1,
)
from fairot.metrics._collapse import chance_ranking
from fairot.metrics._distances import PairwiseGap, max_pairwise_wasserstein

RESPONSE_METHODS = ("predict", "predict_proba", "decision_function")

MSG_RESPONSE_METHOD = (
    "response_method must be one of {allowed} or a sequence of them; got {value!r}."
)
MSG_GREATER = "greater_is_better must be True or False; got {value!r}."
MSG_NO_METHOD = "{estimator} has none of the methods {methods} that the scorer {scorer} calls."
MSG_NO_GROUPS = (
    "{scorer} received no sensitive_features. Enable metadata routing with "
    "sklearn.set_config(enable_metadata_routing=True) and pass sensitive_features= to "
    "GridSearchCV.fit(...) or cross_validate(..., params={{'sensitive_features': ...}})."
)
MSG_PROBA_SHAPE = (
    "{scorer} scores predict_proba's positive-class column, which needs two classes; "
    "got {n} columns."
)
MSG_UNKNOWN_SCORER = "{name!r} is not a fairot scorer; the names are {names}."


def _accepts_sensitive_features(estimator: Any, method_name: str) -> bool:
    """Whether ``estimator.<method_name>`` takes a ``sensitive_features`` argument."""
    method = getattr(estimator, method_name)
    parameters = inspect.signature(method).parameters
    if "sensitive_features" in parameters:
        return True
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return False
    # A meta-estimator (Pipeline) routes **params: pass the groups only where a step asked
    # for them, or scikit-learn refuses the unrouted argument.
    if not sklearn.get_config()["enable_metadata_routing"]:
        return False
    routing = get_routing_for_object(estimator)
    return bool(routing.consumes(method=method_name, params={"sensitive_features"}))


def _metric_accepts(metric: Callable, name: str) -> bool:
    try:
        parameters = inspect.signature(metric).parameters
    except (TypeError, ValueError):
        return True
    return name in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


class FairnessScorer:
    """A scikit-learn scorer that routes ``sensitive_features`` to the estimator and the metric.

    Build one with :func:`make_fairness_scorer`. It follows scikit-learn's scorer protocol,
    ``scorer(estimator, X, y_true, **metadata)``, and requests ``sensitive_features`` (set
    ``set_score_request(sample_weight=True)`` to also route weights).

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_pred, *, sensitive_features=..., sample_weight=..., **kwargs)``.
    sign : {1, -1}
        Multiplies the metric so that greater is better.
    response_method : str or tuple of str
        Estimator methods to try, in order.
    kwargs : dict
        Extra keyword arguments of the metric.

    Examples
    --------
    The scorer of :math:`W_1` between groups returns minus the metric on the model's scores:

    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairot.metrics import make_fairness_scorer, wass1
    >>> X = [[0.0], [1.0], [2.0], [3.0]]
    >>> y = [0, 0, 1, 1]
    >>> groups = ["a", "b", "a", "b"]
    >>> model = LogisticRegression().fit(X, y)
    >>> scorer = make_fairness_scorer(
    ...     wass1, greater_is_better=False, response_method="predict_proba"
    ... )
    >>> scores = model.predict_proba(X)[:, 1]
    >>> scorer(model, X, y, sensitive_features=groups) == -wass1(
    ...     y, scores, sensitive_features=groups
    ... )
    True
    """

    def __init__(
        self,
        metric: Callable,
        sign: int,
        response_method: str | tuple[str, ...],
        kwargs: dict[str, Any],
    ) -> None:
        self._metric = metric
        self._sign = sign
        self._response_method = response_method
        self._kwargs = kwargs
        self._metric_takes_groups = _metric_accepts(metric, "sensitive_features")
        self._metadata_request = MetadataRequest(owner=type(self).__name__)
        self._metadata_request.score.add_request(param="sensitive_features", alias=True)

    def __repr__(self) -> str:
        name = getattr(self._metric, "__name__", repr(self._metric))
        extra = "".join(f", {k}={v!r}" for k, v in self._kwargs.items())
        return (
            f"make_fairness_scorer({name}, greater_is_better={self._sign > 0}, "
            f"response_method={self._response_method!r}{extra})"
        )

    def set_score_request(self, **requests: bool | str | None) -> FairnessScorer:
        """Request metadata for scoring (e.g. ``sample_weight=True``); returns ``self``.

        Parameters
        ----------
        **requests : bool, str or None
            As in scikit-learn: ``True`` requests the argument, ``False`` refuses it, a string
            aliases it.

        Returns
        -------
        FairnessScorer
            This scorer.
        """
        for param, alias in requests.items():
            self._metadata_request.score.add_request(param=param, alias=alias)
        return self

    def get_metadata_routing(self) -> MetadataRequest:
        """Return the metadata this scorer requests (scikit-learn's routing protocol).

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
            ``score`` requests ``sensitive_features`` and whatever was set.
        """
        return self._metadata_request

    def __call__(
        self,
        estimator: Any,
        X: Any,
        y_true: Any = None,
        sample_weight: Any = None,
        **metadata: Any,
    ) -> float:
        """Score ``estimator`` on ``X``.

        Parameters
        ----------
        estimator : fitted estimator
            The model to evaluate.
        X : array-like
            Inputs, passed unchanged to the estimator.
        y_true : array-like, optional
            Labels or responses (unused by label-free fairness metrics).
        sample_weight : array-like, optional
            Sample weights, passed to the metric.
        **metadata
            Routed metadata: ``sensitive_features`` goes to the estimator's method (when it
            accepts it) and to the metric.

        Returns
        -------
        float
            The metric times the sign (greater is better).
        """
        groups = metadata.pop("sensitive_features", None)
        if groups is None and self._metric_takes_groups:
            raise ValueError(MSG_NO_GROUPS.format(scorer=repr(self)))
        y_pred = self._response(estimator, X, groups)
        kwargs = dict(self._kwargs, **metadata)
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        if self._metric_takes_groups:
            kwargs["sensitive_features"] = groups
        value = self._metric(y_true, y_pred, **kwargs)
        if isinstance(value, PairwiseGap):
            value = value.distance
        return self._sign * float(value)

    def _response(self, estimator: Any, X: Any, groups: Any) -> np.ndarray:
        methods = (
            (self._response_method,)
            if isinstance(self._response_method, str)
            else self._response_method
        )
        name = next((m for m in methods if hasattr(estimator, m)), None)
        if name is None:
            raise ValueError(
                MSG_NO_METHOD.format(
                    estimator=type(estimator).__name__, methods=list(methods), scorer=repr(self)
                )
            )
        kwargs = {}
        if groups is not None and _accepts_sensitive_features(estimator, name):
            kwargs["sensitive_features"] = groups
        out = np.asarray(getattr(estimator, name)(X, **kwargs))
        if name == "predict_proba":
            if out.ndim != 2 or out.shape[1] != 2:
                raise ValueError(
                    MSG_PROBA_SHAPE.format(scorer=repr(self), n=out.shape[-1] if out.ndim else 0)
                )
            # The paper's scores are P(Y = 1 | A, X): the column of the second class.
            out = out[:, 1]
        return out


def make_fairness_scorer(
    metric: Callable,
    *,
    greater_is_better: bool,
    response_method: str | Sequence[str] = "predict",
    **kwargs: Any,
) -> FairnessScorer:
    """Make a scorer for ``GridSearchCV`` / ``cross_validate`` from a (fairness) metric.

    Like :func:`sklearn.metrics.make_scorer`, with two differences that fairness needs: the
    scorer requests ``sensitive_features`` from scikit-learn's metadata routing (already done,
    no ``set_score_request`` call needed), and gives them to the estimator's
    ``predict``/``predict_proba``/``decision_function`` whenever that method accepts them
    (fairot's post-processors need them to predict) as well as to the metric.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_pred, **kwargs)``; it receives ``sensitive_features=`` when its
        signature names it, and ``sample_weight=`` when weights are routed. fairot's metrics
        take both (fairlearn's convention); a :class:`~fairot.metrics.PairwiseGap` result is
        scored by its ``distance``.
    greater_is_better : bool
        Required: fairness metrics are disparities (lower is better, the scorer returns their
        negative), accuracy-like metrics are not, and a silent default would invert one of them.
    response_method : str or sequence of str, default="predict"
        The estimator's method giving ``y_pred``: ``"predict"``, ``"predict_proba"`` (the
        positive-class column) or ``"decision_function"``; with a sequence, the first the
        estimator has.
    **kwargs
        Extra keyword arguments of the metric (e.g. ``group_mode="marginal"``).

    Returns
    -------
    FairnessScorer
        Callable as ``scorer(estimator, X, y, **metadata)``.

    Name a lower-is-better scorer's key in ``scoring`` with scikit-learn's ``neg_`` prefix
    (``"neg_wass1"``): its values are minus the metric.

    See Also
    --------
    within_fairness_budget : choose the best candidate of a search within a fairness budget.
    get_fairness_scorer : a private copy of one of fairot's ready scorers, by name.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn.linear_model import LogisticRegression
    >>> from fairot.metrics import make_fairness_scorer, neg_sdd_scorer, wass1
    >>> neg_wass1 = make_fairness_scorer(
    ...     wass1, greater_is_better=False, response_method="predict_proba"
    ... )
    >>> X = [[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0]]
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1]
    >>> groups = ["a", "b"] * 4
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     cv = cross_validate(
    ...         LogisticRegression(),
    ...         X,
    ...         y,
    ...         cv=2,
    ...         scoring={"neg_wass1": neg_wass1, "neg_sdd": neg_sdd_scorer},
    ...         params={"sensitive_features": groups},
    ...     )
    >>> bool((cv["test_neg_wass1"] <= 0).all())
    True
    """
    if not isinstance(greater_is_better, (bool, np.bool_)):
        raise ValueError(MSG_GREATER.format(value=greater_is_better))
    if isinstance(response_method, str):
        methods: str | tuple[str, ...] = response_method
        names: tuple[str, ...] = (response_method,)
    else:
        methods = names = tuple(response_method)
    if not names or any(m not in RESPONSE_METHODS for m in names):
        raise ValueError(
            MSG_RESPONSE_METHOD.format(allowed=list(RESPONSE_METHODS), value=response_method)
        )
    return FairnessScorer(metric, 1 if greater_is_better else -1, methods, kwargs)


# Lower-is-better metrics get scikit-learn's ``neg_`` prefix: the scorer returns minus the metric,
# and its name says so, so a key "neg_wass1" in cv_results_ is never read as Wass1 itself.

#: −Wass1 of ``predict_proba`` scores (greater is better), groups routed.
neg_wass1_scorer = make_fairness_scorer(
    wass1, greater_is_better=False, response_method="predict_proba"
)
#: −SDD of ``predict_proba`` scores.
neg_sdd_scorer = make_fairness_scorer(
    strong_demographic_disparity, greater_is_better=False, response_method="predict_proba"
)
#: −SPDD of ``predict_proba`` scores.
neg_spdd_scorer = make_fairness_scorer(
    strong_pairwise_demographic_disparity,
    greater_is_better=False,
    response_method="predict_proba",
)
#: Accuracy of ``predict``, the groups given to ``predict`` when it takes them (post-processors).
fair_accuracy_scorer = make_fairness_scorer(
    accuracy_score, greater_is_better=True, response_method="predict"
)
#: −MSE of ``predict``, the groups given to ``predict`` when it takes them (the fair regressor).
neg_fair_mse_scorer = make_fairness_scorer(
    mean_squared_error, greater_is_better=False, response_method="predict"
)
#: −(largest pairwise W2 between groups' predictions): the regression paper's gap.
neg_wasserstein_gap_scorer = make_fairness_scorer(
    max_pairwise_wasserstein, greater_is_better=False, response_method="predict"
)

#: The degeneracy flag: 1 on a fold where ``predict_proba`` ranks the labels at or below chance
#: (:func:`chance_ranking`, AUC <= :data:`CHANCE_AUC`), else 0. Add it to ``scoring`` as
#: ``"degenerate"``: ``mean_test_degenerate`` is then the share of folds flagged, and
#: :func:`within_fairness_budget` never chooses a flagged candidate.
degenerate_scorer = make_fairness_scorer(
    chance_ranking, greater_is_better=True, response_method="predict_proba"
)

_SCORERS: dict[str, FairnessScorer] = {
    "neg_wass1": neg_wass1_scorer,
    "neg_sdd": neg_sdd_scorer,
    "neg_spdd": neg_spdd_scorer,
    "fair_accuracy": fair_accuracy_scorer,
    "neg_fair_mse": neg_fair_mse_scorer,
    "neg_wasserstein_gap": neg_wasserstein_gap_scorer,
    "degenerate": degenerate_scorer,
}


def get_fairness_scorer_names() -> list[str]:
    """The names :func:`get_fairness_scorer` knows, like :func:`sklearn.metrics.get_scorer_names`.

    Returns
    -------
    list of str
        Sorted names; those of lower-is-better metrics start with ``neg_``.

    Examples
    --------
    >>> from fairot.metrics import get_fairness_scorer_names
    >>> get_fairness_scorer_names()
    ['degenerate', 'fair_accuracy', 'neg_fair_mse', 'neg_sdd', 'neg_spdd', 'neg_wass1',
     'neg_wasserstein_gap']
    """
    return sorted(_SCORERS)


def get_fairness_scorer(name: str) -> FairnessScorer:
    """A fresh copy of the fairot scorer called ``name``, like :func:`sklearn.metrics.get_scorer`.

    The module's scorers (:data:`neg_wass1_scorer`, ...) are shared by everyone who imports
    them, so ``set_score_request`` on one changes it for all; the copy returned here is yours.

    Parameters
    ----------
    name : str
        One of :func:`get_fairness_scorer_names`: ``"neg_wass1"``, ``"neg_sdd"``,
        ``"neg_spdd"``, ``"fair_accuracy"``, ``"neg_fair_mse"``, ``"neg_wasserstein_gap"``,
        ``"degenerate"`` (the degeneracy flag, :data:`degenerate_scorer`).

    Returns
    -------
    FairnessScorer
        A deep copy of the scorer ``<name>_scorer``.

    Raises
    ------
    ValueError
        If ``name`` is not a fairot scorer (the message lists the names).

    Examples
    --------
    >>> from fairot.metrics import get_fairness_scorer, neg_sdd_scorer
    >>> scorer = get_fairness_scorer("neg_sdd").set_score_request(sample_weight=True)
    >>> scorer is neg_sdd_scorer
    False
    """
    if not isinstance(name, str) or name not in _SCORERS:
        raise ValueError(MSG_UNKNOWN_SCORER.format(name=name, names=get_fairness_scorer_names()))
    return copy.deepcopy(_SCORERS[name])
