r"""Strong demographic parity as a differentiable penalty: COT, DOT or Sinkhorn on scores."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Literal

import numpy as np
import torch
from torch import nn

from fairot.exceptions import DivergenceError
from fairot.torch._cot import cot_batch_terms, feature_matrix, group_terms
from fairot.torch._transport import (
    batch_barycenter,
    exact_w1_to_target,
    group_layout,
    sinkhorn_to_target,
    sorted_quantiles,
)
from fairot.transport import draw_fourier_features, tabulate_features

METHODS = ("cot", "dot", "sinkhorn")
MSG_OPTION = "{name} must be one of {options}; got {value!r}."
MSG_POSITIVE = "{name} must be a positive {kind}; got {value!r}."
MSG_TARGET = (
    "target must be 'barycenter' or a 1-D tensor or array of target scores in [0, 1]; got {value}."
)
MSG_SCORES = "scores must be a 1-D floating-point tensor; got {value}."
MSG_SCORE_RANGE = (
    "scores must be finite and in [0, 1] (pass probabilities, e.g. torch.sigmoid(logits)); "
    "got values in [{low}, {high}]."
)
MSG_GROUPS = "groups must be a 1-D integer tensor of the same length as scores ({n}); got {value}."
MSG_GROUP_RANGE = (
    "groups must hold codes in [0, n_groups={n_groups}); got values in [{low}, {high}]."
)
MSG_DEVICE = (
    "scores, groups and the penalty's buffers must be on one device; got scores on {scores}, "
    "groups on {groups}, penalty on {penalty}. Move the penalty with penalty.to(scores.device)."
)
MSG_TARGET_BATCH = (
    "target_samples must be a 1-D tensor of target scores in [0, 1]{extra}; got {value}."
)
MSG_TOO_MANY_PAIRS = (
    "method={method!r} compares every score of a group with each of the target's {m} samples: "
    "{pairs:,} pairs in this call, above the {limit:,} that one call may hold in memory (several "
    "{pairs:,}-element temporaries). Call the penalty on mini-batches, as in training{advice}; "
    "for a whole data set's fairness use fairot.metrics (wass1), which needs no pairs."
)
MSG_DUAL_OVERFLOW = (
    "the COT dual exponent (lambda_S(s) + lambda_target(t) - |s - t|) / lambda reached {z:.3g}: "
    "the dual potentials diverged (the entropic exp() would overflow). Lower dual_step_size "
    "(epsilon_lambda, now {dual:g}) or raise reg_strength (lambda, now {lam:g})."
)

# Pairs (score, target sample) one COT or Sinkhorn call may hold: each of its few temporaries of
# this many elements is then 0.5 GiB in float32. Training batches hold a few thousand pairs.
MAX_PAIRS = 2**27
# Same bound as the numba kernel (fairot.classification._kernels.MAX_ENTROPIC_EXPONENT): exp(40)
# is far past any density ratio of a coupling on [0, 1].
MAX_ENTROPIC_EXPONENT = 40.0
DEFAULT_REG_STRENGTH = {"cot": 0.1, "dot": 0.0, "sinkhorn": 0.01}


def _describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)} and dtype {value.dtype}"
    return repr(value) if not hasattr(value, "shape") else f"array of shape {value.shape}"


def _host_values(values: tuple[torch.Tensor, ...]) -> list:
    """Python numbers of 0-d tensors: one transfer from an accelerator, no stacking on the CPU."""
    if values[0].device.type == "cpu":
        return [v.item() for v in values]
    return torch.stack(values).tolist()


def _check_positive(name: str, value, kind: type, kind_name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, kind) or not value > 0:
        raise ValueError(MSG_POSITIVE.format(name=name, kind=kind_name, value=value))


class WassersteinParityPenalty(nn.Module):
    r"""Strong demographic parity penalty :math:`\sum_a W_1(p_{S_a}, p_{\bar S})` for any model.

    ``penalty(scores, groups)`` returns a differentiable estimate, on one mini-batch, of the sum
    over groups of the Wasserstein-1 distance between each group's score distribution and a
    target distribution :math:`p_{\bar S}` (problem (6) of [1]_). Its gradient in the scores is
    the paper's update direction for :math:`\theta`; autograd chains it through any model, so
    ``loss = bce(logits, y) + lam * penalty(torch.sigmoid(logits), groups)`` trains a fair
    network. Three estimators:

    - ``"cot"`` — continuous OT (Algorithm 1 of [1]_): the mini-batch value of the regularised
      dual (7),

      .. math::

          J = \sum_a \big\langle \lambda_{S_a}(s) + \lambda_{\bar S,a}(\bar s)
          - \lambda\,\phi^*\big((\lambda_{S_a}(s) + \lambda_{\bar S,a}(\bar s) - |s - \bar s|)
          /\lambda\big)\big\rangle_{\hat p_{S_a} \hat p_{\bar S}},

      with potentials :math:`\lambda(s) = \lambda^\top\psi(s)` in D random Fourier features held
      in buffers. Each call in training mode also takes one ascent step (5) on the potentials
      (:math:`\epsilon_\lambda`), after reading them: the gradient in :math:`s^i_a` is
      :math:`(1 - \alpha_{ij})\lambda'_{S_a}(s^i_a) + \alpha_{ij}\,\mathrm{sign}(s^i_a - \bar
      s^j)`, averaged over the pairs, the :math:`\theta`-update of Algorithm 1.
    - ``"dot"`` — discrete OT (the DOT baseline): the exact 1-D :math:`W_1` of each group's batch
      to the target sample, by the optimal monotone coupling :math:`T^*_a` (Eq. (8)).
    - ``"sinkhorn"`` — the entropic :math:`W_1^\varepsilon` of each group's batch to the target
      sample (log-domain Sinkhorn), smooth in the scores; exact :math:`W_1` as
      :math:`\varepsilon \to 0`.

    Parameters
    ----------
    n_groups : int
        Number of groups; ``groups`` holds codes ``0 .. n_groups - 1``.
    method : {"cot", "dot", "sinkhorn"}, default="cot"
        The estimator (above).
    target : "barycenter" or tensor or array-like, default="barycenter"
        :math:`p_{\bar S}`. ``"barycenter"``: the :math:`W_1` barycenter of the batch's groups
        (at each rank the median of the group quantiles, equal weights), recomputed at every
        call and detached — a moving target for training from scratch. A 1-D tensor or array of
        scores in [0, 1]: a fixed target (e.g. the barycenter of a pre-trained model's
        training scores, as in the paper; :class:`FairTrainer` does this), stored sorted in the
        buffer ``target_samples``. Either way a call uses the target's quantiles at the
        midpoint levels :math:`(k + 1/2)/M`, :math:`M` the largest group count of the batch
        (``pairing="diagonal"``: one target quantile at a random level per score).
    reg : {"entropic", "l2"}, default="entropic"
        COT's regulariser: :math:`\phi^*(x) = e^x` or :math:`\max(x, 0)^2/4`.
    reg_strength : float, optional
        COT's :math:`\lambda` (default 0.1) or Sinkhorn's :math:`\varepsilon` (default 0.01), in
        units of score. Unused by DOT.
    n_fourier_features : int, default=100
        COT's :math:`D`.
    kernel_variance : float, default=0.1
        COT's :math:`\sigma^2`: :math:`\omega \sim \mathcal N(0, 2/\sigma^2)`.
    dual_step_size : float, default=0.01
        COT's :math:`\epsilon_\lambda`.
    constrain_duals : bool, default=True
        COT: impose :math:`\lambda_{S_a}(x) + \lambda_{\bar S,a}(x) = 0` (one dual vector per
        group), which stabilises training, as in :class:`~fairot.classification.COTClassifier`.
    pairing : {"all", "diagonal"}, default="all"
        COT: all pairs of a group's scores with the target sample, or the paper's :math:`i = j`
        pairs (then the target sample has one entry per score).
    feature_grid_size : int or None, default=None
        COT: ``None`` computes :math:`\psi` exactly; an int reads :math:`\psi` and
        :math:`\psi'` from a table on that many intervals of [0, 1] as the numba kernel does
        (its default is 4,096).
    sinkhorn_max_iter : int, default=1000
        Sinkhorn iterations at most.
    sinkhorn_tol : float, default=1e-4
        Sinkhorn stops when the plan's marginals are within this L1 error (a warning says when
        it did not).
    random_state : int, RandomState instance or None, default=None
        Seeds the Fourier features (drawn as by ``COTClassifier``: the same seed gives the same
        features) and the diagonal pairing's target levels.

    Attributes
    ----------
    duals : Tensor of shape (n_groups, D)
        Buffer: :math:`\lambda_{S_a}` coefficients (COT).
    target_duals : Tensor of shape (n_groups, D)
        Buffer: :math:`\lambda_{\bar S,a}` coefficients (``-duals`` under the constraint).
    frequencies, phases : Tensor of shape (D,)
        Buffers: :math:`\omega, b`.
    target_samples : Tensor
        Buffer: the sorted fixed target (empty for ``"barycenter"``).
    last_target : Tensor or None
        The target sample used by the last call (for inspection).

    See Also
    --------
    fairot.classification.COTClassifier : Algorithm 1 for a logistic model (numba).
    fairot.classification.DOTClassifier : DOT for a logistic model.
    FairTrainer : the training loop around this penalty.

    Notes
    -----
    One call handles all groups without a loop over them. Cost per call: COT ``O(n (M + D))``
    with all pairs, DOT ``O((n + G M) log)``, Sinkhorn ``O(iterations * G * max_count * M)``.
    ``state_dict`` saves the potentials, so a checkpoint resumes COT exactly. In ``eval()``
    mode COT reads the potentials without updating them. Validation is one host sync per call
    (the scores' range, which COT reads with its entropic exponent check after its pass, before
    it writes anything), one more when the group codes differ from the last call's (their range
    and counts; the group matrices are then rebuilt, otherwise reused).

    References
    ----------
    .. [1] S. Chiappa and A. Pacchiano, "Fairness with Continuous Optimal Transport", 2021.

    Examples
    --------
    >>> import torch
    >>> from fairot.torch import WassersteinParityPenalty
    >>> scores = torch.tensor([0.1, 0.2, 0.3, 0.6, 0.7, 0.8], dtype=torch.float64)
    >>> groups = torch.tensor([0, 0, 0, 1, 1, 1])
    >>> dot = WassersteinParityPenalty(2, method="dot")
    >>> round(float(dot(scores, groups)), 6)  # each group is .25 from the barycenter
    0.5
    """

    def __init__(
        self,
        n_groups: int,
        *,
        method: Literal["cot", "dot", "sinkhorn"] = "cot",
        target="barycenter",
        reg: Literal["entropic", "l2"] = "entropic",
        reg_strength: float | None = None,
        n_fourier_features: int = 100,
        kernel_variance: float = 0.1,
        dual_step_size: float = 0.01,
        constrain_duals: bool = True,
        pairing: Literal["all", "diagonal"] = "all",
        feature_grid_size: int | None = None,
        sinkhorn_max_iter: int = 1000,
        sinkhorn_tol: float = 1e-4,
        random_state: int | np.random.RandomState | None = None,
    ):
        super().__init__()
        _check_positive("n_groups", n_groups, Integral, "integer")
        for name, value, options in (
            ("method", method, METHODS),
            ("reg", reg, ("entropic", "l2")),
            ("pairing", pairing, ("all", "diagonal")),
        ):
            if value not in options:
                raise ValueError(MSG_OPTION.format(name=name, options=options, value=value))
        if reg_strength is None:
            reg_strength = DEFAULT_REG_STRENGTH[method]
        elif method != "dot":
            _check_positive("reg_strength", reg_strength, Real, "number")
        _check_positive("n_fourier_features", n_fourier_features, Integral, "integer")
        _check_positive("kernel_variance", kernel_variance, Real, "number")
        _check_positive("dual_step_size", dual_step_size, Real, "number")
        _check_positive("sinkhorn_max_iter", sinkhorn_max_iter, Integral, "integer")
        _check_positive("sinkhorn_tol", sinkhorn_tol, Real, "number")
        if feature_grid_size is not None:
            _check_positive("feature_grid_size", feature_grid_size, Integral, "integer")
        self.n_groups = int(n_groups)
        self.method = method
        self.reg = reg
        self.reg_strength = float(reg_strength)
        self.dual_step_size = float(dual_step_size)
        self.constrain_duals = bool(constrain_duals)
        self.pairing = pairing
        self.sinkhorn_max_iter = int(sinkhorn_max_iter)
        self.sinkhorn_tol = float(sinkhorn_tol)
        self.last_target: torch.Tensor | None = None
        # Reused from step to step: the fixed target's quantiles (and their features) for the
        # last batch's largest group, the feature constants for the last dtype and device, and
        # the last batch's group counts and matrices while the group codes repeat.
        self._target_cache_key: tuple | None = None
        self._target_cache: dict = {}
        self._constants_key: tuple | None = None
        self._groups_cache: dict | None = None
        self._constants: dict = {}

        rng = (
            np.random.RandomState(random_state)
            if not isinstance(random_state, np.random.RandomState)
            else random_state
        )
        # The state is kept in float64 whatever the scores' dtype (each call computes in the
        # scores' dtype): the potentials accumulate many small steps.
        dtype = torch.float64
        # The same draw as COTClassifier._init_solver: the features come first from the seed.
        features = draw_fourier_features(n_fourier_features, kernel_variance, rng)
        self._generator = torch.Generator().manual_seed(int(rng.randint(np.iinfo(np.int32).max)))
        self.register_buffer("frequencies", torch.tensor(features.frequencies, dtype=dtype))
        self.register_buffer("phases", torch.tensor(features.phases, dtype=dtype))
        shape = (self.n_groups, n_fourier_features)
        self.register_buffer("duals", torch.zeros(shape, dtype=dtype))
        self.register_buffer("target_duals", torch.zeros(shape, dtype=dtype))
        if feature_grid_size is None:
            self.register_buffer("feature_values", torch.empty(0, dtype=dtype))
            self.register_buffer("feature_derivatives", torch.empty(0, dtype=dtype))
        else:
            table = tabulate_features(features, int(feature_grid_size))
            self.register_buffer("feature_values", torch.tensor(table.values, dtype=dtype))
            self.register_buffer(
                "feature_derivatives", torch.tensor(table.derivatives, dtype=dtype)
            )
        self.register_buffer("target_samples", self._check_target(target, dtype))
        self.target = "barycenter" if self.target_samples.numel() == 0 else "fixed"

    @staticmethod
    def _check_target(target, dtype: torch.dtype) -> torch.Tensor:
        if isinstance(target, str):
            if target != "barycenter":
                raise ValueError(MSG_TARGET.format(value=repr(target)))
            return torch.empty(0, dtype=dtype)
        try:
            t = torch.as_tensor(
                np.asarray(target, dtype=np.float64)
                if not isinstance(target, torch.Tensor)
                else target.detach().cpu().double()
            )
        except (TypeError, ValueError):
            raise ValueError(MSG_TARGET.format(value=_describe(target))) from None
        if t.ndim != 1 or t.numel() == 0 or not bool(((t >= 0) & (t <= 1)).all()):
            raise ValueError(MSG_TARGET.format(value=_describe(target)))
        return torch.sort(t).values.to(dtype)

    def set_target(self, target) -> None:
        """Fix the target distribution (1-D scores in [0, 1]) or return to ``"barycenter"``."""
        t = self._check_target(target, self.duals.dtype).to(self.duals.device)
        self.target_samples = t
        self._target_cache_key, self._target_cache = None, {}
        self.target = "barycenter" if t.numel() == 0 else "fixed"

    # ------------------------------------------------------------------ checks
    def _check_inputs(self, scores, groups) -> tuple[torch.Tensor, torch.Tensor]:
        """Types, shapes and devices; returns the scores' (min, max), not yet read.

        The range is read by :meth:`_check_score_range` at once, or by COT together with its
        exponent check after the pass: one transfer from an accelerator instead of two. COT's
        pass is safe on any scores (NaN, out of [0, 1]) and writes nothing before the check.
        """
        if (
            not isinstance(scores, torch.Tensor)
            or scores.ndim != 1
            or not scores.is_floating_point()
        ):
            raise TypeError(MSG_SCORES.format(value=_describe(scores)))
        if (
            not isinstance(groups, torch.Tensor)
            or groups.ndim != 1
            or groups.shape[0] != scores.shape[0]
            or groups.is_floating_point()
            or groups.dtype == torch.bool
        ):
            raise TypeError(MSG_GROUPS.format(n=scores.shape[0], value=_describe(groups)))
        if scores.shape[0] == 0:
            raise ValueError(MSG_SCORES.format(value="an empty tensor"))
        device = scores.device
        penalty_device = self._buffers["duals"].device
        if device != groups.device or device != penalty_device:
            raise ValueError(
                MSG_DEVICE.format(scores=device, groups=groups.device, penalty=penalty_device)
            )
        return torch.aminmax(scores.detach())

    @staticmethod
    def _check_score_range(low: float, high: float) -> None:
        # NaN fails both comparisons, so a non-finite score is caught too.
        if not (low >= 0.0 and high <= 1.0):
            raise ValueError(MSG_SCORE_RANGE.format(low=low, high=high))

    def _batch_groups(self, groups: torch.Tensor, dtype) -> dict:
        """The batch's group counts (and COT's group matrices), after checking the codes.

        Balanced batches drawn group by group repeat the same codes at every step: while they
        do, the last batch's are reused (one comparison instead of about a dozen operations).
        """
        last = self._groups_cache
        if (
            last is not None
            and last["codes"].shape == groups.shape
            and last["codes"].device == groups.device
            and last["dtype"] == dtype
            and torch.equal(last["codes"], groups)
        ):
            return last
        low, high = _host_values(torch.aminmax(groups))
        if not (low >= 0 and high < self.n_groups):
            raise ValueError(MSG_GROUP_RANGE.format(n_groups=self.n_groups, low=low, high=high))
        counts = torch.bincount(groups, minlength=self.n_groups)
        # A copy: the caller may write new codes into the same tensor.
        entry = {"codes": groups.clone(), "dtype": dtype, "counts": counts}
        entry["max_count"] = int(counts.max())
        if self.method == "cot":
            entry["terms"] = group_terms(groups, counts, self.n_groups, dtype)
        self._groups_cache = entry
        return entry

    def _check_target_batch(self, target_samples, n: int, dtype, device) -> torch.Tensor:
        diagonal = self.method == "cot" and self.pairing == "diagonal"
        extra = f" with one entry per score ({n}) under pairing='diagonal'" if diagonal else ""
        if (
            not isinstance(target_samples, torch.Tensor)
            or target_samples.ndim != 1
            or target_samples.numel() == 0
            or (diagonal and target_samples.shape[0] != n)
        ):
            raise ValueError(MSG_TARGET_BATCH.format(extra=extra, value=_describe(target_samples)))
        t = target_samples.detach().to(device=device, dtype=dtype)
        if not bool(((t >= 0) & (t <= 1)).all()):
            raise ValueError(MSG_TARGET_BATCH.format(extra=extra, value="values outside [0, 1]"))
        return t

    # ----------------------------------------------------------------- forward
    def forward(
        self,
        scores: torch.Tensor,
        groups: torch.Tensor,
        target_samples: torch.Tensor | None = None,
    ) -> torch.Tensor:
        r"""The penalty on one batch.

        Parameters
        ----------
        scores : Tensor of shape (n,)
            Scores in [0, 1] (probabilities of the positive class), float32 or float64, on the
            penalty's device; float16 and bfloat16 scores are computed in float32.
        groups : Tensor of int of shape (n,)
            Group codes in ``0 .. n_groups - 1``.
        target_samples : Tensor of shape (M,), optional
            Samples of :math:`p_{\bar S}` for this call, overriding ``target`` (shape ``(n,)``,
            paired element-wise, under COT's ``pairing="diagonal"``).

        Returns
        -------
        Tensor of shape ()
            Sum over the groups present in the batch of their estimate, in the scores' dtype
            (float32 for half-precision scores).
        """
        score_range = self._check_inputs(scores, groups)
        if self.method != "cot":
            self._check_score_range(*_host_values(score_range))
        if scores.element_size() < 4:
            # Half precision (e.g. under autocast): COT's exp() would overflow past z = 11 and
            # |s - t| keeps 3 digits. Computed in float32, as autocast does for losses; the
            # gradient flows back to the half-precision scores through the cast.
            scores = scores.float()
        if groups.dtype != torch.long:
            groups = groups.long()
        batch_groups = self._batch_groups(groups, scores.dtype)
        counts = batch_groups["counts"]
        state = self._state_key(scores)
        diagonal = self.method == "cot" and self.pairing == "diagonal"
        # COT needs no layout unless the target is the batch's own barycenter: the layout's two
        # sorts are skipped at every step of a run with a fixed target.
        layout = None
        if self.method != "cot" or (target_samples is None and self.target == "barycenter"):
            layout = group_layout(scores, groups, counts)
        if target_samples is not None:
            t = self._check_target_batch(
                target_samples, scores.shape[0], scores.dtype, scores.device
            )
        else:
            t = self._target_batch(scores, batch_groups["max_count"], layout, diagonal, state)
        if t is not self.last_target:
            # nn.Module.__setattr__ costs as much as a tensor operation: skipped while the
            # (fixed target's cached) sample repeats.
            self.last_target = t
        self._check_pair_count(batch_groups, t.shape[0], diagonal)
        if self.method == "dot":
            # The module's own target quantiles are sorted already.
            sorted_t = torch.sort(t).values if target_samples is not None else t
            return exact_w1_to_target(scores, layout, sorted_t)
        if self.method == "sinkhorn":
            return sinkhorn_to_target(
                scores, layout, t, self.reg_strength, self.sinkhorn_max_iter, self.sinkhorn_tol
            )
        return self._cot(scores, batch_groups["terms"], t, diagonal, state, score_range)

    def _check_pair_count(self, batch_groups: dict, m: int, diagonal: bool) -> None:
        # COT's all-pairs terms are (n, M); Sinkhorn's cost is (groups, largest group, M).
        if self.method == "dot" or diagonal:
            return
        rows = batch_groups["codes"].shape[0]
        if self.method == "sinkhorn":
            rows = self.n_groups * batch_groups["max_count"]
        if rows * m > MAX_PAIRS:
            advice = ", or use method='dot' (no pairs)"
            if self.method == "cot":
                advice = ", pairing='diagonal' (one target sample per score)" + advice
            raise ValueError(
                MSG_TOO_MANY_PAIRS.format(
                    method=self.method, m=m, pairs=rows * m, limit=MAX_PAIRS, advice=advice
                )
            )

    def _target_batch(self, scores, m: int, layout, diagonal: bool, state: tuple) -> torch.Tensor:
        if diagonal:
            # One target draw per score: the quantile at a uniform random level.
            levels = torch.rand(scores.shape[0], generator=self._generator, dtype=torch.float64)
            levels = levels.to(device=scores.device, dtype=scores.dtype)
        else:
            key = (m, state)
            if self.target != "barycenter" and key == self._target_cache_key:
                return self._target_cache["samples"]
            levels = (torch.arange(m, device=scores.device, dtype=scores.dtype) + 0.5) / m
        if self.target == "barycenter":
            if diagonal:
                # The barycenter's quantile at each level, read from a fine midpoint grid.
                grid = (torch.arange(m, device=scores.device, dtype=scores.dtype) + 0.5) / m
                bary = batch_barycenter(scores, layout, grid)
                return sorted_quantiles(torch.sort(bary).values, levels)
            return batch_barycenter(scores, layout, levels)
        t = sorted_quantiles(self.target_samples.to(scores.dtype), levels)
        if not diagonal:
            # A fixed target gives the same M quantiles (and features) at every balanced step.
            self._target_cache_key, self._target_cache = key, {"samples": t}
        return t

    def _state_key(self, scores: torch.Tensor) -> tuple:
        """What the cached target and feature constants depend on, besides the batch."""
        # Versions change on in-place writes (load_state_dict), data pointers on reassignment.
        # Tensors made under inference mode cannot be written outside it (COT overwrites its
        # scaled duals at every call): the mode is part of the key.
        buffers = self._buffers
        mode = torch.is_inference_mode_enabled()
        return (scores.dtype, scores.device, mode) + tuple(
            (buffers[name].data_ptr(), buffers[name]._version)
            for name in (
                "target_samples",
                "frequencies",
                "phases",
                "feature_values",
                "feature_derivatives",
            )
        )

    def _feature_constants(self, scores: torch.Tensor, key: tuple) -> dict:
        """The feature map's fixed constants in the scores' dtype and device, converted once.

        ``key`` is :meth:`_state_key` of the call: the constants are rebuilt when it changes.
        """
        if key == self._constants_key:
            return self._constants
        dtype, device = scores.dtype, scores.device
        d = self.frequencies.shape[0]
        if self.feature_values.numel():
            # psi and psi' interpolated in one pass from a table holding both, (G + 1, 2, D).
            table = torch.stack([self.feature_values, self.feature_derivatives], dim=1)
            constants = {"table": table}
            psi_scale, scales = 1.0, torch.ones(2, 1, d, dtype=torch.float64)
        else:
            # cos(omega s + b - pi/2) = sin(omega s + b): psi and psi' from one cosine call;
            # their factors sqrt(2/D) and -sqrt(2/D) omega scale the duals instead.
            psi_scale = math.sqrt(2.0 / d)
            constants = {
                "frequencies": torch.stack([self.frequencies, self.frequencies])[:, None],
                "phases": torch.stack([self.phases, self.phases - 0.5 * math.pi])[:, None],
            }
            scales = torch.stack(
                [torch.full_like(self.frequencies, psi_scale), -psi_scale * self.frequencies]
            )[:, None]
        constants["scales"] = scales
        constants = {k: v.to(device=device, dtype=dtype) for k, v in constants.items()}
        constants["psi_scale"] = psi_scale
        # Overwritten by every call: the duals times `scales`, in the scores' dtype.
        constants["scaled_duals"] = torch.empty((2, *self.duals.shape), dtype=dtype, device=device)
        self._constants_key, self._constants = key, constants
        return constants

    def _target_features(self, t: torch.Tensor, constants: dict, diagonal: bool) -> dict:
        r"""The target as :func:`~fairot.torch._cot.cot_batch_terms` reads it.

        Kept with a fixed target's cached quantiles: computed once for a training run.
        """
        cached = not diagonal and t is self._target_cache.get("samples")
        if cached and "psi" in self._target_cache:
            return self._target_cache
        # Raw features (psi / psi_scale): cot_batch_terms folds the factor into the duals.
        psi = feature_matrix(t.unsqueeze(1), constants)[0]
        m = 1 if diagonal else t.shape[0]
        target = {
            "samples": t,
            "psi": psi,
            "psi_mean": psi.mean(dim=0),
            "row_mean": torch.full((m,), 1.0 / m, dtype=t.dtype, device=t.device),
        }
        if cached:
            self._target_cache.update(target)
        return target

    def _cot(
        self, scores, groups: dict, t, diagonal: bool, state: tuple, score_range: tuple
    ) -> torch.Tensor:
        r"""The dual objective (7) on the batch, with its score gradient in closed form.

        :func:`~fairot.torch._cot.cot_batch_terms` computes the value, the gradient in the
        scores and the dual ascent in one pass without autograd (sparing it a graph of the
        N × M terms); the returned tensor carries that gradient.
        """
        constants = self._feature_constants(scores, state)
        # Every input of the pass is detached (the scores here, the target where it is made),
        # so autograd records nothing without a no_grad block, whose entry and exit cost as
        # much as a tensor operation. The buffers are read from their dict for the same reason.
        s = scores.detach()
        buffers = self._buffers
        duals, target_duals = buffers["duals"], buffers["target_duals"]
        target = self._target_features(t, constants, diagonal)
        offset, gradient, ascent, target_ascent, z_max = cot_batch_terms(
            s, groups, target, duals, target_duals, constants,
            reg_strength=self.reg_strength, entropic=self.reg == "entropic",
            constrained=self.constrain_duals, diagonal=diagonal, training=self.training,
        )  # fmt: skip
        # The scores' range and the largest exponent in one read; nothing is written before.
        checks = _host_values(score_range if z_max is None else (*score_range, z_max))
        self._check_score_range(checks[0], checks[1])
        if z_max is not None and not checks[2] <= MAX_ENTROPIC_EXPONENT:
            raise DivergenceError(
                MSG_DUAL_OVERFLOW.format(
                    z=checks[2], dual=self.dual_step_size, lam=self.reg_strength
                )
            )
        if ascent is not None:
            # Ascent step (5), taken after reading the potentials (in the buffers' dtype). The
            # ascents are in units of the raw features, psi / psi_scale.
            step = self.dual_step_size * constants["psi_scale"]
            duals.add_(ascent, alpha=step)
            if self.constrain_duals:
                torch.neg(duals, out=target_duals)
            else:
                target_duals.add_(target_ascent, alpha=step)
        # <scores, gradient> + offset: the value, with `gradient` as its gradient in the scores.
        return torch.nn.functional.linear(scores, gradient, offset)

    def extra_repr(self) -> str:
        """Shown by ``print(penalty)``."""
        return (
            f"n_groups={self.n_groups}, method={self.method!r}, target={self.target!r}, "
            f"reg={self.reg!r}, reg_strength={self.reg_strength:g}, pairing={self.pairing!r}"
        )
