"""DOT: strong demographic parity by discrete optimal transport (Jiang et al., 2019)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.base import _fit_context

from fairot.classification._base import OTInProcessingClassifier
from fairot.classification._common import atomic
from fairot.classification._kernels import dot_kernel


class DOTClassifier(OTInProcessingClassifier):
    r"""Fair binary classifier by discrete optimal transport (DOT), the baseline of [1]_.

    Starting from a logistic model :math:`\theta^*`, each update draws a batch of :math:`N`
    scores per group and :math:`N` target samples, couples them by the exact optimal plan
    :math:`T^*_a` of Eq. (8) (sorted matching, marginals :math:`1/N`) and steps

    .. math::

        \theta \leftarrow \theta - \epsilon_\theta \sum_a \sum_{i,j} T^*_a(i, j)\,
        \mathrm{sign}(s^i_a - \bar s^j)\,\nabla_\theta s^i_a,

    a stochastic subgradient of :math:`\sum_a W_1(p_{S_a}, p_{\bar S})`.

    Parameters
    ----------
    estimator : estimator or None, default=None
        As in :class:`COTClassifier`.
    target : "barycenter", group label or name, or array-like, default="barycenter"
        As in :class:`COTClassifier`.
    group_mode : {"intersection", "marginal"}, default="intersection"
        As in :class:`COTClassifier`.
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}
        Default ``"demographic_parity"``.
        As in :class:`COTClassifier`: with ``"equalized_odds"`` each (group, label) cell is
        coupled with its label's target :math:`\bar p_y`.
    step_size : float, default=1e-3
        :math:`\epsilon_\theta` (the coupling carries mass :math:`1/N`, so the step is a mean
        over the batch; 1e-3 to 1e-2 worked on Adult with ``batch_size=100``).
    n_updates : int, default=100_000
        :math:`K`.
    loss_weight : float, default=0.0
        :math:`\kappa \ge 0`: each step also descends :math:`\kappa` times the mean log-loss of
        a batch of ``batch_size`` training rows drawn uniformly (see
        :class:`COTClassifier`). ``0`` is the method of [1]_.
    batch_size : int, default=100
        :math:`N_S = N_{\bar S}`.
    history_every : int or None, default=None
        Record :attr:`history_` every this many updates (default: 100 records per run).
    verbose : bool, default=False
        Show a progress bar over updates.
    tau : float in [0, 1], default=0.0
        Fraction of the raw disparity kept, as DPP's and the regressor's ``tau``: each
        group's target is its own point on the :math:`W_1` geodesic between its scores at
        :math:`\theta^*` and :math:`p_{\bar S}`, with quantiles
        :math:`\tau Q_a(u) + (1 - \tau) Q_{\bar S}(u)`
        (:func:`fairot.transport.geodesic_targets`), so the fit aims at
        :math:`W_1(\text{group}, p_{\bar S}) = \tau \times` its value at the start. ``0``:
        :math:`p_{\bar S}` for every group (strong demographic parity).
    random_state : int, RandomState instance or None, default=None
        Seeds the mini-batches.

    Attributes
    ----------
    coef_, intercept_, initial_coef_, initial_intercept_, estimator_, classes_, groups_,
    group_names_, target_samples_, group_targets_, history_, n_updates_, n_features_in_
        As in :class:`COTClassifier` (``objective`` in ``history_`` is the mini-batch
        :math:`\sum_a \langle T^*_a, C\rangle`).

    See Also
    --------
    COTClassifier : the continuous-OT method.
    fairot.transport.optimal_coupling_1d : the coupling, in NumPy.

    References
    ----------
    .. [1] R. Jiang, A. Pacchiano, T. Stepleton, H. Jiang and S. Chiappa, "Wasserstein Fair
       Classification", UAI 2019; used as the DOT baseline of S. Chiappa and A. Pacchiano,
       "Fairness with Continuous Optimal Transport", 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.classification import DOTClassifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a])
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(int)
    >>> dot = DOTClassifier(n_updates=2000, random_state=0).fit(X, y, sensitive_features=a)
    >>> dot.predict(X).shape
    (400,)
    """

    _display_name = "DOT"

    def __init__(
        self,
        *,
        estimator=None,
        target="barycenter",
        group_mode: Literal["intersection", "marginal"] = "intersection",
        constraint: Literal[
            "demographic_parity", "equalized_odds", "equal_opportunity"
        ] = "demographic_parity",
        step_size: float = 1e-3,
        n_updates: int = 100_000,
        loss_weight: float = 0.0,
        batch_size: int = 100,
        history_every: int | None = None,
        verbose: bool = False,
        random_state=None,
        tau: float = 0.0,
    ):
        self.estimator = estimator
        self.target = target
        self.group_mode = group_mode
        self.constraint = constraint
        self.step_size = step_size
        self.n_updates = n_updates
        self.loss_weight = loss_weight
        self.batch_size = batch_size
        self.history_every = history_every
        self.verbose = verbose
        self.random_state = random_state
        self.tau = tau

    @_fit_context(prefer_skip_nested_validation=False)
    @atomic
    def fit(self, X, y, *, sensitive_features, eval_set=None, sample_weight=None):
        r"""Fit :math:`\theta^*`, then run ``n_updates`` DOT updates.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like, DataFrame, dict of arrays, str or list of str
            As in :meth:`COTClassifier.fit`.
        eval_set : tuple (X, y, sensitive_features), optional
            Held-out data recorded in :attr:`history_`.
        sample_weight : array-like of shape (n_samples,), optional
            As in :meth:`COTClassifier.fit` (batches drawn with probability proportional to
            weight).

        Returns
        -------
        self : DOTClassifier
        """
        self._fit(X, y, sensitive_features, eval_set, self.n_updates, sample_weight)
        return self

    @atomic
    def partial_fit(
        self,
        X,
        y,
        *,
        sensitive_features,
        n_updates=None,
        eval_set=None,
        classes=None,
        sample_weight=None,
    ):
        r"""Continue the updates from the current :math:`\theta` on new data.

        Parameters
        ----------
        X, y, sensitive_features, eval_set, sample_weight
            As in :meth:`fit`; the groups must be those seen at fit time.
        n_updates : int, optional
            Number of updates to run (default: ``self.n_updates``).
        classes : array-like of shape (2,), optional
            Accepted for scikit-learn's ``partial_fit`` convention; must be the two classes.

        Returns
        -------
        self : DOTClassifier
        """
        return self._partial_fit(
            X, y, sensitive_features, n_updates, eval_set, classes, sample_weight
        )

    def _init_solver(self, rng: np.random.RandomState, n_groups: int) -> None:
        pass

    def _run_chunk(
        self,
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
    ):
        return dot_kernel(
            self._theta,
            indices,
            values,
            members,
            offsets,
            self.kernel_targets(),
            batches,
            target_batches,
            float(self.step_size),
            objectives,
            diagnostics,
            labels,
            loss_batches,
            float(self.loss_weight),
        )
