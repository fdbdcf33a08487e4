r"""Strong demographic parity as a differentiable penalty: COT, DOT or Sinkhorn on scores."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Literal

import numpy as np
import torch
from torch import nn

from fairot.torch._collapse import CollapseWatch
from fairot.torch.penalty._cache import (
    BatchGroups,
    FixedTarget,
    clear_caches_after_load,
)
from fairot.torch.penalty._cells import (
    cell_forward,
    check_cell_options,
    check_cell_targets,
    constraint_labels,
    resize_cell_targets,
)
from fairot.torch.penalty._checks import (
    METHODS,
    check_dual_exponent,
    check_group_codes,
    check_inputs,
    check_option,
    check_pair_count,
    check_positive,
    check_score_range,
    check_target,
    check_target_batch,
    host_values,
)
from fairot.torch.penalty._cot import (
    GroupTerms,
    TargetTerms,
    cot_batch_terms,
    group_terms,
    target_terms,
    value_with_gradient,
)
from fairot.torch.penalty._features import FeatureMap, feature_map
from fairot.torch.penalty._transport import (
    batch_barycenter,
    exact_w1_to_target,
    group_layout,
    sinkhorn_to_target,
    sorted_quantiles,
)
from fairot.transport import draw_fourier_features, tabulate_features

DEFAULT_REG_STRENGTH = {"cot": 0.1, "dot": 0.0, "sinkhorn": 0.01}


class WassersteinParityPenalty(nn.Module):
    r"""Strong demographic parity penalty :math:`\sum_a W_1(p_{S_a}, p_{\bar S})` for any model.

    ``penalty(scores, group_codes)`` returns a differentiable estimate, on one mini-batch, of
    the sum over groups of the Wasserstein-1 distance between each group's score distribution and a
    target distribution :math:`p_{\bar S}` (problem (6) of [1]_). Its gradient in the scores is
    the paper's update direction for :math:`\theta`; autograd chains it through any model, so
    ``loss = bce(logits, y) + lam * penalty(torch.sigmoid(logits), group_codes)`` trains a fair
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
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}
        Default ``"demographic_parity"``.
        ``"equalized_odds"``: the (group, label) cells take the place of the groups, each pulled
        to its label's target :math:`\bar p_y` (``"equal_opportunity"``: the positives only);
        calls then take ``labels``. Needs :meth:`set_cell_targets` (:class:`FairTrainer` calls it);
        COT then keeps one pair of potentials per cell (``duals`` has one row per cell).
    tau : float in [0, 1], default=0.0
        With ``tau > 0`` each group has its own target, its point at ``tau`` on the
        :math:`W_1` geodesic to its warm-start scores (``fairot.transport.geodesic_targets``):
        ``tau=1`` keeps the warm model's distributions. Demographic parity only; needs
        :meth:`set_cell_targets`. Neither option with COT's ``pairing="diagonal"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the Fourier features (drawn as by ``COTClassifier``: the same seed gives the same
        features) and the diagonal pairing's target levels.

    Attributes
    ----------
    duals : Tensor of shape (n_groups, D), or (n_cells, D) with ``tau`` or a label constraint
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

    Between calls the penalty keeps what it derives from its buffers: a fixed target's
    quantiles (and their features) and the feature map in the scores' dtype and device. They
    are recomputed after :meth:`set_target`, ``load_state_dict`` (of the penalty or of a module
    holding it) and any ``.to()``, ``.cuda()``, ``.double()``...; a buffer other than the duals
    written in place otherwise (``penalty.frequencies.mul_(2)``) is not seen until
    :meth:`clear_caches` (or write it through ``load_state_dict``). The duals are read afresh at
    every call. In training mode, every 50th call also reads the batch's scores and warns once
    (:class:`~fairot.exceptions.DegenerateModelWarning`) if their spread fell under a tenth of
    the fixed target's (or of the widest batch seen): a collapse to a constant (docs/torch.md).

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
        constraint: str = "demographic_parity",
        tau: float = 0.0,
        random_state: int | np.random.RandomState | None = None,
    ):
        super().__init__()
        check_positive("n_groups", n_groups, Integral, "integer")
        check_option("method", method, METHODS)
        check_option("reg", reg, ("entropic", "l2"))
        check_option("pairing", pairing, ("all", "diagonal"))
        self.constraint, self.tau = check_cell_options(method, constraint, tau, pairing)
        self.n_cells = int(n_groups) * len(constraint_labels(self.constraint))
        if reg_strength is None:
            reg_strength = DEFAULT_REG_STRENGTH[method]
        elif method != "dot":
            check_positive("reg_strength", reg_strength, Real, "number")
        check_positive("n_fourier_features", n_fourier_features, Integral, "integer")
        check_positive("kernel_variance", kernel_variance, Real, "number")
        check_positive("dual_step_size", dual_step_size, Real, "number")
        check_positive("sinkhorn_max_iter", sinkhorn_max_iter, Integral, "integer")
        check_positive("sinkhorn_tol", sinkhorn_tol, Real, "number")
        if feature_grid_size is not None:
            check_positive("feature_grid_size", feature_grid_size, Integral, "integer")
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
        # Reused from step to step: the last batch's group codes and what depends on them
        # (checked against each call's codes), a fixed target's quantiles for the last batch's
        # largest group, and the feature map for the last call's dtype and device (cleared
        # whenever the buffers they are made of change: clear_caches).
        self._groups_cache: BatchGroups | None = None
        self._target_cache: FixedTarget | None = None
        self._features_cache: tuple[tuple, FeatureMap] | None = None
        self.register_load_state_dict_post_hook(clear_caches_after_load)
        # Warns once if the scores' spread collapses (DegenerateModelWarning, docs/torch.md).
        self._collapse_watch = CollapseWatch()

        rng = (
            np.random.RandomState(random_state)
            if not isinstance(random_state, np.random.RandomState)
            else random_state
        )
        # The state is kept in float64 whatever the scores' dtype (each call computes in the
        # scores' dtype): the potentials accumulate many small steps.
        dtype = torch.float64
        # The same draw as COTClassifier's solver: the features come first from the seed.
        features = draw_fourier_features(n_fourier_features, kernel_variance, rng)
        self._generator = torch.Generator().manual_seed(int(rng.randint(np.iinfo(np.int32).max)))
        self.register_buffer("frequencies", torch.tensor(features.frequencies, dtype=dtype))
        self.register_buffer("phases", torch.tensor(features.phases, dtype=dtype))
        shape = (self.n_cells, n_fourier_features)  # one potential per group (or cell)
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
        self.register_buffer("target_samples", check_target(target, dtype))
        self.target = "barycenter" if self.target_samples.numel() == 0 else "fixed"
        if self.uses_cells:  # only then: the default penalty's state_dict is unchanged
            self.register_buffer("cell_targets", torch.empty((0, 0), dtype=dtype))
            self._register_load_state_dict_pre_hook(resize_cell_targets, with_module=True)

    @property
    def uses_cells(self) -> bool:
        """Whether calls read one target per cell (``tau > 0`` or a label constraint)."""
        return self.tau > 0 or self.constraint != "demographic_parity"

    def set_cell_targets(self, targets) -> None:
        """Fix one sorted target per cell: shape ``(n_groups * n_moved_labels, m)``, label-major."""
        self.cell_targets = check_cell_targets(targets, self.n_cells, self.duals.dtype).to(
            self.duals.device
        )

    def set_target(self, target) -> None:
        """Fix the target distribution (1-D scores in [0, 1]) or return to ``"barycenter"``."""
        t = check_target(target, self.duals.dtype).to(self.duals.device)
        self.target_samples = t
        self._target_cache = None
        self.target = "barycenter" if t.numel() == 0 else "fixed"

    def feature_map_for(self, call: tuple) -> FeatureMap:
        """The feature map in the dtype and on the device of ``call``, made once and kept.

        ``call`` is ``(dtype, device, inference mode)`` of a forward call; the map is kept until
        :meth:`clear_caches`.
        """
        cached = self._features_cache
        if cached is not None and cached[0] == call:
            return cached[1]
        dtype, device, _ = call
        features = feature_map(
            self.frequencies,
            self.phases,
            self.feature_values,
            self.feature_derivatives,
            dtype,
            device,
        )
        self._features_cache = (call, features)
        return features

    @property
    def watches_collapse(self) -> bool:
        """Whether calls in training mode watch the scores' spread for a collapse.

        A :class:`~fairot.torch.FairTrainer` turns it off while it trains (it checks the
        returned model against the penalty's start itself) and restores it afterwards.
        """
        return self._collapse_watch.enabled

    @watches_collapse.setter
    def watches_collapse(self, enabled: bool) -> None:
        self._collapse_watch.enabled = bool(enabled)

    def clear_caches(self) -> None:
        """Forget what the penalty derived from its buffers (and the last batch's groups).

        Called after ``load_state_dict`` and by every ``.to()`` (:meth:`set_target` forgets the
        target's only); call it after writing a buffer other than the duals in place.
        """
        self._groups_cache = None
        self._target_cache = None
        self._features_cache = None

    def _apply(self, fn, *args, **kwargs):
        # nn.Module's one path for .to(), .cuda(), .double(), .half()... of this module and of
        # any module holding it: the buffers are replaced, so what was derived from them is
        # stale. (Overriding it is the only hook torch offers for a device or dtype move.)
        self.clear_caches()
        return super()._apply(fn, *args, **kwargs)

    def _batch_groups(self, groups: torch.Tensor, dtype: torch.dtype) -> BatchGroups:
        """The batch's group counts (and COT's group terms), after checking the codes.

        Balanced batches drawn group by group repeat the same codes at every step: while they
        do, the last batch's are reused (one comparison instead of about a dozen operations).
        """
        last = self._groups_cache
        if (
            last is not None
            and last.codes.shape == groups.shape
            and last.codes.device == groups.device
            and last.dtype == dtype
            and torch.equal(last.codes, groups)
        ):
            return last
        check_group_codes(groups, self.n_groups)
        counts = torch.bincount(groups, minlength=self.n_groups)
        terms = None
        if self.method == "cot":
            terms = group_terms(groups, counts, self.n_groups, dtype)
        self._groups_cache = BatchGroups(groups.clone(), dtype, counts, int(counts.max()), terms)
        return self._groups_cache

    # ----------------------------------------------------------------- forward
    def forward(
        self,
        scores: torch.Tensor,
        group_codes: torch.Tensor,
        target_samples: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ) -> torch.Tensor:
        r"""The penalty on one batch.

        Parameters
        ----------
        scores : Tensor of shape (n,)
            Scores in [0, 1] (probabilities of the positive class), float32 or float64, on the
            penalty's device; float16 and bfloat16 scores are computed in float32.
        group_codes : Tensor of int of shape (n,)
            Group codes in ``0 .. n_groups - 1``.
        target_samples : Tensor of shape (M,), optional
            Samples of :math:`p_{\bar S}` for this call, overriding ``target`` (shape ``(n,)``,
            paired element-wise, under COT's ``pairing="diagonal"``).
        labels : Tensor of shape (n,), optional
            The batch's 0/1 labels: required by a label ``constraint``, unused otherwise.

        Returns
        -------
        Tensor of shape ()
            Sum over the groups present in the batch of their estimate, in the scores' dtype
            (float32 for half-precision scores).
        """
        score_range = check_inputs(scores, group_codes, self.duals.device)
        if self.method != "cot":
            check_score_range(*host_values(score_range))
        if scores.element_size() < 4:
            # Half precision (e.g. under autocast): COT's exp() would overflow past z = 11 and
            # |s - t| keeps 3 digits. Computed in float32, as autocast does for losses; the
            # gradient flows back to the half-precision scores through the cast.
            scores = scores.float()
        if group_codes.dtype != torch.long:
            group_codes = group_codes.long()
        if self.uses_cells:
            return cell_forward(self, scores, group_codes, labels)
        batch_groups = self._batch_groups(group_codes, scores.dtype)
        call = (scores.dtype, scores.device, torch.is_inference_mode_enabled())
        diagonal = self.method == "cot" and self.pairing == "diagonal"
        # COT needs no layout unless the target is the batch's own barycenter: the layout's two
        # sorts are skipped at every step of a run with a fixed target.
        layout = None
        if self.method != "cot" or (target_samples is None and self.target == "barycenter"):
            layout = group_layout(scores, group_codes, batch_groups.counts)
        if target_samples is not None:
            n = scores.shape[0]
            t = check_target_batch(target_samples, n, scores.dtype, scores.device, diagonal)
        else:
            t = self._target_batch(scores, batch_groups.max_count, layout, diagonal, call)
        self.last_target = t
        if self.training and torch.is_grad_enabled():
            self._collapse_watch.observe(scores, self.target_samples)
        rows = scores.shape[0]
        if self.method == "sinkhorn":
            rows = self.n_groups * batch_groups.max_count
        check_pair_count(self.method, rows, t.shape[0], diagonal)
        if self.method == "dot":
            # The module's own target quantiles are sorted already.
            sorted_t = torch.sort(t).values if target_samples is not None else t
            return exact_w1_to_target(scores, layout, sorted_t)
        if self.method == "sinkhorn":
            return sinkhorn_to_target(
                scores, layout, t, self.reg_strength, self.sinkhorn_max_iter, self.sinkhorn_tol
            )
        return self._cot(scores, batch_groups.terms, t, diagonal, call, score_range)

    def _target_batch(self, scores, m: int, layout, diagonal: bool, call: tuple) -> torch.Tensor:
        if diagonal:
            # One target draw per score: the quantile at a uniform random level.
            levels = torch.rand(scores.shape[0], generator=self._generator, dtype=torch.float64)
            levels = levels.to(device=scores.device, dtype=scores.dtype)
        else:
            key = (m, *call)
            cache = self._target_cache
            if self.target != "barycenter" and cache is not None and cache.key == key:
                return cache.samples
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
            self._target_cache = FixedTarget(key, t)
        return t

    def _target_terms(self, t: torch.Tensor, features: FeatureMap, diagonal: bool) -> TargetTerms:
        """The target's COT terms, kept with a fixed target's cached quantiles."""
        cache = self._target_cache
        cached = not diagonal and cache is not None and t is cache.samples
        if cached and cache.terms is not None:
            return cache.terms
        terms = target_terms(t, features, diagonal)
        if cached:
            cache.terms = terms
        return terms

    def _cot(
        self, scores, groups: GroupTerms, t, diagonal: bool, call: tuple, score_range: tuple
    ) -> torch.Tensor:
        r"""The dual objective (7) on the batch, with its score gradient in closed form.

        :func:`~fairot.torch.penalty._cot.cot_batch_terms` computes the value, the gradient in the
        scores and the dual ascent in one pass without autograd (sparing it a graph of the
        N × M terms); the returned tensor carries that gradient.
        """
        features = self.feature_map_for(call)
        duals, target_duals = self.duals, self.target_duals
        terms = cot_batch_terms(
            scores, groups, self._target_terms(t, features, diagonal), duals, target_duals,
            features, reg_strength=self.reg_strength, entropic=self.reg == "entropic",
            constrained=self.constrain_duals, diagonal=diagonal, training=self.training,
        )  # fmt: skip
        # The scores' range and the largest exponent in one read; nothing is written before.
        z_max = terms.z_max
        checks = host_values(score_range if z_max is None else (*score_range, z_max))
        check_score_range(checks[0], checks[1])
        if z_max is not None:
            check_dual_exponent(checks[2], self.dual_step_size, self.reg_strength)
        if terms.ascent is not None:
            # Ascent step (5), taken after reading the potentials (in the buffers' dtype). The
            # ascents are in units of the raw features, psi / psi_scale.
            step = self.dual_step_size * features.psi_scale
            duals.add_(terms.ascent, alpha=step)
            if self.constrain_duals:
                torch.neg(duals, out=target_duals)  # the buffer, in place
            else:
                target_duals.add_(terms.target_ascent, alpha=step)
        return value_with_gradient(scores, terms.gradient, terms.offset)

    def extra_repr(self) -> str:
        """Shown by ``print(penalty)``."""
        return (
            f"n_groups={self.n_groups}, method={self.method!r}, target={self.target!r}, "
            f"reg={self.reg!r}, reg_strength={self.reg_strength:g}, pairing={self.pairing!r}"
            + (f", constraint={self.constraint!r}, tau={self.tau:g}" if self.uses_cells else "")
        )
