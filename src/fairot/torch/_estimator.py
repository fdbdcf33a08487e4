"""A scikit-learn classifier: an MLP trained with the Wasserstein parity penalty."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Literal

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics import accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import nn

from fairot.torch._device import check_device
from fairot.torch.penalty import WassersteinParityPenalty
from fairot.torch.trainers import FairTrainer
from fairot.utils.arrays import check_consistent_length, check_sample_weight
from fairot.utils.groups import warn_small_groups
from fairot.utils.sensitive import check_sensitive_features, resolve_sensitive_features
from fairot.utils.targets import check_binary_target

MSG_HIDDEN = "hidden_layer_sizes must be a tuple of positive integers; got {value!r}."
MSG_LOGITS = (
    "X gives {count} non-finite logit(s): its values, standardised with the training mean_ and "
    "scale_, reach {peak:.3g}, beyond what the float32 network can carry."
)


def standardisation(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations (1 for constant columns), without overflow.

    ``X.std()`` squares the deviations, which overflows past about 1e154; computing on
    ``X / max|X|`` and scaling back keeps any finite ``X`` finite.
    """
    peak = np.max(np.abs(X), axis=0)
    peak = np.where(peak > 0, peak, 1.0)
    unit = X / peak
    mean = unit.mean(axis=0) * peak
    scale = unit.std(axis=0) * peak
    return mean, np.where(scale > 0, scale, 1.0)


def standardise(X: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``(X - mean) / scale`` as float32; dividing first keeps ``X - mean`` from overflowing."""
    return (X / scale - mean / scale).astype(np.float32)


def build_mlp(n_features: int, hidden_layer_sizes: tuple[int, ...]) -> nn.Sequential:
    """Linear-ReLU layers ending in one logit."""
    layers: list[nn.Module] = []
    width = n_features
    for h in hidden_layer_sizes:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, 1))
    return nn.Sequential(*layers)


class FairMLPClassifier(ClassifierMixin, BaseEstimator):
    r"""Binary MLP classifier whose scores satisfy strong demographic parity.

    The inputs are standardised, an MLP (``hidden_layer_sizes``, ReLU) is trained by
    :class:`FairTrainer`: ``warmup_epochs`` of cross-entropy, then cross-entropy plus
    ``lam`` times :class:`WassersteinParityPenalty` (:math:`\sum_a W_1(p_{S_a}, p_{\bar S})` to the
    barycenter of the warm model's training scores, problem (6) of [1]_) on group-balanced
    batches, with early stopping on the validation Wass1 of a held-out ``validation_fraction``.

    Parameters
    ----------
    hidden_layer_sizes : tuple of int, default=(64, 64)
        Widths of the hidden layers.
    method : {"dot", "cot", "sinkhorn"}, default="dot"
        The penalty's estimator (see :class:`WassersteinParityPenalty`).
    lam : float, default=3.0
        Penalty weight after the warm-up: larger is fairer and less accurate.
    group_mode : {"intersection", "marginal"}, default="intersection"
        How several sensitive columns define groups (``"marginal"``: overlapping groups).
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}
        Default ``"demographic_parity"``.
        ``"equalized_odds"``: each group's scores given each label are pulled to the barycenter
        of the groups' warm-start scores given that label (``"equal_opportunity"``: the
        positives only); nothing more is read at prediction time.
    tau : float in [0, 1], default=0.0
        Fraction of the raw disparity kept: each group's target is its point at ``tau`` on the
        :math:`W_1` geodesic from the barycenter to its warm-start scores (``tau=1`` keeps the
        warm model's distributions). Demographic parity only.
    penalty_params : dict or None, default=None
        Further arguments of :class:`WassersteinParityPenalty` (``reg_strength``,
        ``n_fourier_features``, ...).
    warmup_epochs : int, default=5
        Epochs of cross-entropy alone.
    n_epochs : int, default=40
        Epochs in all.
    batch_size : int, default=256
        Rows per step, split equally between groups.
    learning_rate : float, default=1e-3
        Adam's step size. One so large that training diverges (non-finite parameters, every
        logit beyond ±110, or the cross-entropy ten times the start's) raises
        :class:`~fairot.classification.DivergenceError`.
    lr_schedule : {"constant", "cosine"}, default="cosine"
        ``"cosine"``: after the warm-up the step decays to 0 by the last epoch, which averages
        the penalty's mini-batch noise (see :class:`FairTrainer`).
    weight_decay : float, default=0.0
        Adam's weight decay.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping (0: none).
    patience : int or None, default=10
        Epochs without improvement of the validation Wass1 before stopping.
    device : str or torch.device, default="cpu"
        Torch device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` (N below
        ``torch.cuda.device_count()``), ``"mps"``, or a ``torch.device`` of these. One this
        machine does not have is a ``ValueError`` at ``fit`` saying what it has.
    random_state : int, RandomState instance or None, default=None
        Seeds the weights, the validation split, the batches and the penalty.
    verbose : bool, default=False
        A progress bar over epochs.

    Attributes
    ----------
    model_ : torch.nn.Sequential
        The trained network (input: standardised features; output: the logit).
    penalty_ : WassersteinParityPenalty
    history_ : pandas.DataFrame
        :attr:`FairTrainer.history_`.
    target_samples_ : ndarray
        The fixed target (sorted training scores of the barycenter).
    classes_ : ndarray of shape (2,)
    groups_, group_names_ : list
        Group labels and names, in the penalty's code order.
    mean_, scale_ : ndarray of shape (n_features,)
        Standardisation of the inputs.
    n_features_in_ : int
    feature_names_in_ : ndarray

    See Also
    --------
    fairot.classification.COTClassifier : the paper's logistic model.
    fairot.classification.QuantileParityPostProcessor : DPP, for models without gradients.

    References
    ----------
    .. [1] S. Chiappa and A. Pacchiano, "Fairness with Continuous Optimal Transport", 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.torch import FairMLPClassifier
    >>> rng = np.random.default_rng(0)
    >>> a = rng.integers(0, 2, 400)
    >>> X = np.column_stack([rng.normal(a, 1.0), a])
    >>> y = (X[:, 0] + rng.normal(0, 1, 400) > 0.5).astype(int)
    >>> clf = FairMLPClassifier(hidden_layer_sizes=(8,), n_epochs=10, random_state=0)
    >>> clf.fit(X, y, sensitive_features=a).predict_proba(X).shape
    (400, 2)
    """

    _parameter_constraints: dict = {
        "hidden_layer_sizes": [tuple, list],
        "method": [StrOptions({"dot", "cot", "sinkhorn"})],
        "lam": [Interval(Real, 0, None, closed="left")],
        "group_mode": [StrOptions({"intersection", "marginal"})],
        "penalty_params": [dict, None],
        "warmup_epochs": [Interval(Integral, 0, None, closed="left")],
        "n_epochs": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "lr_schedule": [StrOptions({"constant", "cosine"})],
        "weight_decay": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "patience": [Interval(Integral, 1, None, closed="left"), None],
        "device": [str, torch.device],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    # One default across fairot's classifiers and regressors: every method that takes the
    # groups requests them, so meta-estimators route them once metadata routing is enabled
    # (no set_*_request call needed); sample_weight keeps scikit-learn's default (unrequested).
    __metadata_request__fit = {"sensitive_features": True}
    __metadata_request__decision_function = {"sensitive_features": True}
    __metadata_request__predict_proba = {"sensitive_features": True}
    __metadata_request__predict = {"sensitive_features": True}
    __metadata_request__score = {"sensitive_features": True}

    def __init__(
        self,
        hidden_layer_sizes: tuple[int, ...] = (64, 64),
        *,
        method: Literal["dot", "cot", "sinkhorn"] = "dot",
        lam: float = 3.0,
        group_mode: Literal["intersection", "marginal"] = "intersection",
        constraint: str = "demographic_parity",
        tau: float = 0.0,
        penalty_params: dict | None = None,
        warmup_epochs: int = 5,
        n_epochs: int = 40,
        batch_size: int = 256,
        learning_rate: float = 1e-3,
        lr_schedule: Literal["constant", "cosine"] = "cosine",
        weight_decay: float = 0.0,
        validation_fraction: float = 0.1,
        patience: int | None = 10,
        device: str | torch.device = "cpu",
        random_state=None,
        verbose: bool = False,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.method = method
        self.lam = lam
        self.group_mode = group_mode
        self.constraint = constraint
        self.tau = tau
        self.penalty_params = penalty_params
        self.warmup_epochs = warmup_epochs
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.lr_schedule = lr_schedule
        self.weight_decay = weight_decay
        self.validation_fraction = validation_fraction
        self.patience = patience
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, *, sensitive_features, sample_weight=None) -> FairMLPClassifier:
        """Standardise ``X`` and train the MLP with the penalty.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels.
        sensitive_features : array-like, DataFrame, dict of arrays, str or list of str
            Group membership of shape (n_samples,) or (n_samples, n_columns), or column
            name(s) of a DataFrame ``X`` (read from ``X``; they stay inputs of the model, as
            on :class:`~fairot.classification.COTClassifier`).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights: each group's batch rows are drawn in proportion to their
            weight, and the fixed target is the barycenter of the weighted group scores
            (integer weights act as repeated rows, in distribution; equal weights give the
            unweighted model). Not supported with ``group_mode="marginal"``.

        Returns
        -------
        self : FairMLPClassifier

        Raises
        ------
        ValueError
            If ``device`` is not a device of this machine.
        fairot.classification.DivergenceError
            If training diverged (advice: lower ``learning_rate``).
        """
        device = check_device(self.device)
        sizes = tuple(self.hidden_layer_sizes)
        if not all(isinstance(h, Integral) and not isinstance(h, bool) and h > 0 for h in sizes):
            raise ValueError(MSG_HIDDEN.format(value=self.hidden_layer_sizes))
        sf, _ = resolve_sensitive_features(X, sensitive_features)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_consistent_length(X=X, y=y, sensitive_features=sf, sample_weight=sample_weight)
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        self.classes_ = check_binary_target(y)
        encoding = check_sensitive_features(sf, X.shape[0], group_mode=self.group_mode)
        self._encoding = encoding
        self.groups_ = list(encoding.labels)
        self.group_names_ = list(encoding.names)
        warn_small_groups(encoding.counts, self.group_names_, stacklevel=3)
        y01 = (y == self.classes_[1]).astype(np.float32)
        self.mean_, self.scale_ = standardisation(X)
        Z = standardise(X, self.mean_, self.scale_)
        membership = encoding.membership

        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        holdout = self._holdout(membership, rng)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model_ = build_mlp(X.shape[1], sizes).to(device)
        options = {"constraint": self.constraint, "tau": self.tau, **(self.penalty_params or {})}
        self.penalty_ = WassersteinParityPenalty(
            encoding.n_groups, method=self.method, random_state=seed, **options
        )
        trainer = FairTrainer(
            self.model_,
            self.penalty_,
            lam=float(self.lam),
            warmup_epochs=self.warmup_epochs,
            n_epochs=self.n_epochs,
            batch_size=max(self.batch_size, encoding.n_groups),
            learning_rate=self.learning_rate,
            lr_schedule=self.lr_schedule,
            weight_decay=self.weight_decay,
            patience=self.patience,
            device=device,
            random_state=rng,
            verbose=self.verbose,
        )
        keep = ~holdout
        eval_set = None
        if holdout.any():
            eval_set = (Z[holdout], y01[holdout], membership[holdout])
        weights = None if sample_weight is None else sample_weight[keep]
        trainer.fit(Z[keep], y01[keep], membership[keep], sample_weight=weights, eval_set=eval_set)
        self.history_ = trainer.history_
        self.target_samples_ = trainer.target_samples_
        self.model_.eval()
        return self

    def _holdout(self, membership: np.ndarray, rng: np.random.RandomState) -> np.ndarray:
        """Held-out rows for early stopping, leaving every group rows on both sides when it can."""
        holdout = rng.rand(membership.shape[0]) < self.validation_fraction
        if not holdout.any():
            return holdout
        for a in range(membership.shape[1]):
            if not (membership[:, a] & ~holdout).any() or not (membership[:, a] & holdout).any():
                return np.zeros_like(holdout)  # too few rows of a group to hold any out
        return holdout

    def decision_function(self, X, *, sensitive_features=None) -> np.ndarray:
        """The MLP's logit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : ignored
            Accepted so that every fairot classifier predicts with the same call; the network
            does not use groups at prediction time (column names given to ``fit`` stay in
            ``X``).

        Returns
        -------
        ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            If ``X`` is so far outside the training data's range that a logit is not finite.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        # The fitted network's device, not self.device: set_params after fit must not strand it.
        device = next(self.model_.parameters()).device
        with np.errstate(over="ignore"):  # past float32's range: refused below, by name
            Z = standardise(X, self.mean_, self.scale_)
        with torch.no_grad():
            logits = self.model_(torch.as_tensor(Z, device=device)).reshape(-1)
        logits = logits.double().cpu().numpy()
        bad = ~np.isfinite(logits)
        if bad.any():
            with np.errstate(over="ignore"):
                peak = float(np.max(np.abs(X / self.scale_ - self.mean_ / self.scale_)))
            raise ValueError(MSG_LOGITS.format(count=int(bad.sum()), peak=peak))
        return logits

    def predict_proba(self, X, *, sensitive_features=None) -> np.ndarray:
        """Scores as class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : ignored
            As in :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in the order of ``classes_``.
        """
        s = 1.0 / (1.0 + np.exp(-np.clip(self.decision_function(X), -700, 700)))
        return np.column_stack([1.0 - s, s])

    def predict(self, X, *, sensitive_features=None) -> np.ndarray:
        """``classes_[1]`` where the score exceeds 0.5 (Err-.5's threshold).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        sensitive_features : ignored
            As in :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]

    def score(self, X, y, sample_weight=None, *, sensitive_features=None) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``, weighted by ``sample_weight``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
        sensitive_features : ignored
            As in :meth:`decision_function`.

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
        tags.non_deterministic = False
        return tags
