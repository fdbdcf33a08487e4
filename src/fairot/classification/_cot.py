"""COT: strong demographic parity by continuous optimal transport (Algorithm 1 of the paper)."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, Literal, NamedTuple

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from fairot.classification._base import OTInProcessingClassifier
from fairot.classification._common import atomic
from fairot.classification._kernels import STATUS_DUAL_OVERFLOW, cot_kernel
from fairot.classification._objective import REG_ENTROPIC, REG_L2
from fairot.exceptions import DivergenceError
from fairot.transport import (
    FourierFeatures,
    draw_fourier_features,
    fourier_features,
    tabulate_features,
)

MSG_DUAL_OVERFLOW = (
    "COT diverged at update {update}: the dual exponent "
    "(lambda_S(s) + lambda_target(t) - |s - t|) / lambda reached {z:.3g}: the dual potentials "
    "diverged (the entropic exp() would overflow) and theta would collapse. Lower "
    "dual_step_size (epsilon_lambda, now {dual:g}) or raise reg_strength (lambda, now {lam:g})."
)

MSG_LABEL = (
    "dual_potentials_ with constraint={constraint!r} takes label= among {moved} (one cell per "
    "group and moved label; none under demographic parity); got label={got!r}."
)


class DualPotentials(NamedTuple):
    r"""The fitted dual potentials of one group, as functions on [0, 1].

    Attributes
    ----------
    group : callable
        :math:`\lambda_{S_a}(s) = \lambda_a^\top \psi(s)`.
    target : callable
        :math:`\lambda_{\bar S, a}(s)` (equal to :math:`-\lambda_{S_a}(s)` under the constraint).

    Examples
    --------
    :meth:`COTClassifier.dual_potentials_` returns one; with the default ``constrain_duals=True``
    the target potential is minus the group's:

    >>> import numpy as np
    >>> from fairot.classification import COTClassifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a])
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(int)
    >>> cot = COTClassifier(n_updates=200, random_state=0).fit(X, y, sensitive_features=a)
    >>> potentials = cot.dual_potentials_(1)
    >>> s = np.linspace(0, 1, 5)
    >>> bool(np.allclose(potentials.target(s), -potentials.group(s)))
    True
    """

    group: Callable[[Any], np.ndarray]
    target: Callable[[Any], np.ndarray]


class _Potential:
    r""":math:`s \mapsto v^\top \psi(s)` with exact features (picklable, unlike a lambda)."""

    def __init__(self, coefficients: np.ndarray, features: FourierFeatures):
        self.coefficients = coefficients
        self.features = features

    def __call__(self, s) -> np.ndarray:
        s = np.asarray(s, dtype=float)
        return fourier_features(s.ravel(), self.features).dot(self.coefficients).reshape(s.shape)


class COTClassifier(OTInProcessingClassifier):
    r"""Fair binary classifier by continuous optimal transport (COT).

    A logistic model :math:`s = \sigma(\theta^\top (x, 1))` is first fitted by ``estimator``
    (:math:`\theta^*`), then adjusted so that the score distribution of every group moves to a
    fixed target :math:`p_{\bar S}`: Algorithm 1 of [1]_ alternates a stochastic-gradient ascent
    step on the dual potentials of the entropy- or L2-regularised :math:`W_1` distances and a
    descent step on :math:`\theta`, for the min-max problem (7):

    .. math::

        \min_\theta \sum_a \max_{\lambda_{S_a}, \lambda_{\bar S,a}}
        \big\langle \lambda_{S_a}(s)\big\rangle_{p_{S_a}}
        + \big\langle \lambda_{\bar S,a}(\bar s)\big\rangle_{p_{\bar S}}
        - \Big\langle \lambda\,\phi^*\Big(\frac{\lambda_{S_a}(s) + \lambda_{\bar S,a}(\bar s)
          - |s - \bar s|}{\lambda}\Big)\Big\rangle_{p_{S_a} p_{\bar S}},

    with dual potentials in D random Fourier features, :math:`\phi^*(x) = e^x` (entropic) or
    :math:`\max(x, 0)^2/4` (L2).

    Parameters
    ----------
    estimator : estimator or None, default=None
        Linear binary classifier giving :math:`\theta^*` (``coef_``, ``intercept_``); cloned and
        fitted. ``None``: ``LogisticRegression()`` with scikit-learn defaults, as in the paper.
        Wrap an already trained model in :class:`sklearn.frozen.FrozenEstimator` to use it as is.
    target : "barycenter", group label or name, or array-like, default="barycenter"
        :math:`p_{\bar S}`: the equal-weight :math:`W_1` barycenter of the groups' scores at
        :math:`\theta^*` on the training data; one group's scores at :math:`\theta^*`; or target
        scores in [0, 1]. Kept fixed while :math:`\theta` moves.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns define groups (see
        :func:`fairot.utils.sensitive.check_sensitive_features`); marginal groups may overlap.
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}
        Default ``"demographic_parity"``.
        The criterion. ``"demographic_parity"``: every group's scores move to one target
        (the paper). ``"equalized_odds"``: for each label :math:`y`, the scores of group
        :math:`a` among its rows with :math:`Y = y` move to :math:`\bar p_y`, the target built
        as ``target`` says from the start scores of the rows with :math:`Y = y` (by default
        the groups' barycenter given :math:`Y = y`); batches are drawn per (group, label).
        ``"equal_opportunity"``: the same for :math:`y = 1` only. The labels are read in
        ``fit`` and ``partial_fit`` only: predictions need neither the groups nor the labels.
    reg : {"entropic", "l2"}, default="entropic"
        Regulariser :math:`\phi` of the transport plan.
    reg_strength : float, default=0.1
        :math:`\lambda`.
    n_fourier_features : int, default=100
        :math:`D`.
    kernel_variance : float, default=0.1
        :math:`\sigma^2`: frequencies :math:`\omega \sim \mathcal N(0, 2/\sigma^2)`, i.e. the
        Gaussian kernel :math:`\exp(-(s - t)^2/\sigma^2)` of variance :math:`\sigma^2/2`.
    dual_step_size : float, default=0.01
        :math:`\epsilon_\lambda`.
    step_size : float, default=1e-4
        :math:`\epsilon_\theta`; the :math:`\theta` gradient is summed over groups and batch, as
        written in the paper, so the effective step grows with ``batch_size``.
    n_updates : int, default=100_000
        :math:`K`.
    loss_weight : float, default=0.0
        :math:`\kappa \ge 0`: each :math:`\theta` step also descends :math:`\kappa` times the
        log-loss of a batch of ``batch_size`` training rows drawn uniformly (by weight with
        ``sample_weight``), summed over the batch like the fairness term, i.e. the penalised
        problem :math:`\min_\theta \kappa\,\mathcal L(\theta) + \sum_a W_1(p_{S_a},
        p_{\bar S})`. ``0`` is the paper's Algorithm 1, which keeps accuracy only through the
        start :math:`\theta^*` and the number of updates.
    batch_size : int, default=50
        :math:`N_S = N_{\bar S}`.
    constrain_duals : bool, default=True
        Impose :math:`\lambda_{S_a}(x) + \lambda_{\bar S,a}(x) = 0` (one dual vector per group;
        the extra term under update (5)). It stabilises training (it halved Adult's Wass1 in our
        trials).
    pairing : {"diagonal", "all"}, default="diagonal"
        ``"diagonal"``: the paper's :math:`i = j` pairs of group and target samples;
        ``"all"``: all :math:`N_S N_{\bar S}` pairs (the :math:`\theta` step then averages over
        :math:`j`, so that ``step_size`` keeps its meaning).
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
        Seeds the Fourier features and the mini-batches.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features)
        Adjusted coefficients :math:`\theta`.
    intercept_ : ndarray of shape (1,)
        Adjusted intercept.
    initial_coef_, initial_intercept_ : ndarray
        :math:`\theta^*`.
    estimator_ : estimator
        The fitted initial model.
    classes_ : ndarray of shape (2,)
        Class labels.
    groups_, group_names_ : list
        Group labels and readable names, in the order of ``duals_``.
    target_samples_ : ndarray
        Sorted samples of :math:`p_{\bar S}`.
    group_targets_ : ndarray of shape (n_groups, n_target) or None
        Each group's own target when ``tau > 0`` (sorted samples); ``None`` at ``tau=0``.
    duals_ : ndarray of shape (n_groups, D)
        :math:`\lambda_{S_a}` coefficients.
    target_duals_ : ndarray of shape (n_groups, D)
        :math:`\lambda_{\bar S, a}` coefficients (``-duals_`` under the constraint).
    fourier_features_ : FourierFeatures
        :math:`\omega, b`.
    history_ : pandas.DataFrame
        One row per record, accumulated over ``fit`` (which resets it) and every
        ``partial_fit``: ``update``, ``objective`` (mean mini-batch value of (7), summed over
        groups), ``train_wass1`` (:math:`\sum_a W_1(p_{S_a}, p_{\bar S})` on the training data),
        ``train_error`` (Err-.5), and ``eval_wass1``/``eval_error`` when ``eval_set`` is given.
    n_updates_ : int
        Updates done so far (``fit`` plus every ``partial_fit``).
    n_features_in_ : int
    feature_names_in_ : ndarray

    See Also
    --------
    DOTClassifier : the discrete-OT counterpart.
    QuantileParityPostProcessor : quantile post-processing (DPP).

    Notes
    -----
    Both steps of an update use gradients at the same point :math:`(\theta, \lambda)` of the
    mini-batch objective (:math:`\alpha_{ij}` is computed once per update, as in Algorithm 1);
    the duals move first. :math:`\psi` and :math:`\psi'` are tabulated on 4,097 points of [0, 1]
    and interpolated (error in :math:`\lambda(s)` about 1e-6). An entropic exponent beyond 40, a
    non-finite :math:`\theta`, or scores collapsing to a constant stop the fit with a
    :class:`DivergenceError` naming the step size to lower.

    References
    ----------
    .. [1] S. Chiappa and A. Pacchiano, "Fairness with Continuous Optimal Transport", 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.classification import COTClassifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a])
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(int)
    >>> cot = COTClassifier(n_updates=2000, random_state=0).fit(X, y, sensitive_features=a)
    >>> cot.predict_proba(X).shape
    (400, 2)
    """

    _parameter_constraints: dict = {
        **OTInProcessingClassifier._parameter_constraints,
        "reg": [StrOptions({"entropic", "l2"})],
        "reg_strength": [Interval(Real, 0, None, closed="neither")],
        "n_fourier_features": [Interval(Integral, 1, None, closed="left")],
        "kernel_variance": [Interval(Real, 0, None, closed="neither")],
        "dual_step_size": [Interval(Real, 0, None, closed="neither")],
        "constrain_duals": ["boolean"],
        "pairing": [StrOptions({"diagonal", "all"})],
    }

    _display_name = "COT"

    def __init__(
        self,
        *,
        estimator=None,
        target="barycenter",
        group_mode: Literal["intersection", "marginal"] = "intersection",
        constraint: Literal[
            "demographic_parity", "equalized_odds", "equal_opportunity"
        ] = "demographic_parity",
        reg: Literal["entropic", "l2"] = "entropic",
        reg_strength: float = 0.1,
        n_fourier_features: int = 100,
        kernel_variance: float = 0.1,
        dual_step_size: float = 0.01,
        step_size: float = 1e-4,
        n_updates: int = 100_000,
        loss_weight: float = 0.0,
        batch_size: int = 50,
        constrain_duals: bool = True,
        pairing: Literal["diagonal", "all"] = "diagonal",
        history_every: int | None = None,
        verbose: bool = False,
        random_state=None,
        tau: float = 0.0,
    ):
        self.estimator = estimator
        self.target = target
        self.group_mode = group_mode
        self.constraint = constraint
        self.reg = reg
        self.reg_strength = reg_strength
        self.n_fourier_features = n_fourier_features
        self.kernel_variance = kernel_variance
        self.dual_step_size = dual_step_size
        self.step_size = step_size
        self.n_updates = n_updates
        self.loss_weight = loss_weight
        self.batch_size = batch_size
        self.constrain_duals = constrain_duals
        self.pairing = pairing
        self.history_every = history_every
        self.verbose = verbose
        self.random_state = random_state
        self.tau = tau

    @_fit_context(prefer_skip_nested_validation=False)
    @atomic
    def fit(self, X, y, *, sensitive_features, eval_set=None, sample_weight=None):
        r"""Fit :math:`\theta^*`, then run ``n_updates`` COT updates.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Inputs of the logistic model (the paper's include the sensitive attributes); CSR
            or CSC matrices stay sparse.
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like, DataFrame, dict of arrays, str or list of str
            Group membership of shape (n_samples,) or (n_samples, n_columns); several columns
            give intersectional (or, with ``group_mode="marginal"``, overlapping) groups. Column
            name(s) of a DataFrame ``X`` are read from ``X``, and stay inputs of the model.
        eval_set : tuple (X, y, sensitive_features), optional
            Held-out data whose Wass1 and Err-.5 are recorded in :attr:`history_`.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights: passed to ``estimator``'s ``fit``, used for the weighted
            quantiles of the target, and each group's mini-batch rows are drawn with
            probability proportional to their weight (so integer weights act as repeated rows,
            in distribution; equal weights give the model fitted without weights).

        Returns
        -------
        self : COTClassifier
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
        r"""Continue the updates from the current :math:`\theta` and duals on new data.

        The paper's continual re-adjustment to a changed level of unfairness: the target stays
        the one fixed at the first fit. On an unfitted estimator this is :meth:`fit`.

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
        self : COTClassifier
        """
        return self._partial_fit(
            X, y, sensitive_features, n_updates, eval_set, classes, sample_weight
        )

    def _init_solver(self, rng: np.random.RandomState, n_groups: int) -> None:
        self.fourier_features_ = draw_fourier_features(
            self.n_fourier_features, self.kernel_variance, rng
        )
        self._table = tabulate_features(self.fourier_features_)
        self.duals_ = np.zeros((n_groups, self.n_fourier_features))
        self.target_duals_ = np.zeros((n_groups, self.n_fourier_features))

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
        completed, status = cot_kernel(
            self._theta,
            self.duals_,
            self.target_duals_,
            indices,
            values,
            members,
            offsets,
            self.kernel_targets(),
            batches,
            target_batches,
            self._table.values,
            self._table.derivatives,
            REG_ENTROPIC if self.reg == "entropic" else REG_L2,
            float(self.reg_strength),
            float(self.dual_step_size),
            float(self.step_size),
            bool(self.constrain_duals),
            self.pairing == "all",
            objectives,
            diagnostics,
            labels,
            loss_batches,
            float(self.loss_weight),
        )
        if self.constrain_duals:
            np.negative(self.duals_, out=self.target_duals_)
        return completed, status

    def _extra_advice(self) -> str:
        return f", or dual_step_size (epsilon_lambda, now {self.dual_step_size:g})"

    def _raise_divergence(self, status: int, value: float) -> None:
        if status == STATUS_DUAL_OVERFLOW:
            raise DivergenceError(
                MSG_DUAL_OVERFLOW.format(
                    update=self.n_updates_ + 1,
                    z=value,
                    dual=self.dual_step_size,
                    lam=self.reg_strength,
                )
            )
        super()._raise_divergence(status, value)

    def dual_potentials_(self, group, *, label=None) -> DualPotentials:
        r"""The fitted dual potentials of one group, as functions on [0, 1] (Figures 1 and 4b).

        Parameters
        ----------
        group : label or name
            A group label (as in ``groups_``) or readable name (as in ``group_names_``).
        label : class label, optional
            With ``constraint="equalized_odds"`` or ``"equal_opportunity"``: the label of the
            (group, label) cell (required there, refused under demographic parity).

        Returns
        -------
        DualPotentials
            ``group(s)`` gives :math:`\lambda_{S_a}(s)`, ``target(s)`` gives
            :math:`\lambda_{\bar S, a}(s)`, with exact (not tabulated) features.
        """
        check_is_fitted(self)
        g = self._encoding.index_of(group)
        moved = list(self.target_samples_) if isinstance(self.target_samples_, dict) else []
        if (label is None) != (not moved) or (moved and label not in moved):
            raise ValueError(MSG_LABEL.format(constraint=self.constraint, moved=moved, got=label))
        if moved:
            g += moved.index(label) * self._encoding.n_groups
        return DualPotentials(
            _Potential(self.duals_[g].copy(), self.fourier_features_),
            _Potential(self.target_duals_[g].copy(), self.fourier_features_),
        )
