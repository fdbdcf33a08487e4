r"""One COT call on a mini-batch as a pure function: value, score gradient and dual ascent.

:class:`~fairot.torch.WassersteinParityPenalty` calls :func:`cot_batch_terms` at every step
in ``"cot"`` mode. Every term of the mini-batch dual (7) of the COT paper is an average over
pairs :math:`(i, j)` of a score :math:`s_i` of group :math:`a` and a target sample :math:`t_j`:
all pairs of the group's scores with the :math:`M` target samples, or the :math:`i = j` pairs
(``diagonal``). Averages over :math:`j` are row means; over a group's rows, products with the
rows of ``group_means`` :math:`(G, n)`. At batch sizes of a few hundred the number of tensor
operations, not their size, sets the cost of a call (each costs a few microseconds of dispatch
on a CPU): the pass handles every group at once, and what depends only on the batch's groups
(:func:`group_terms`) or on a fixed target (:func:`target_terms`) is computed once and reused.

The pass builds no autograd graph (``torch.no_grad``): its value and its gradient in the scores
are computed in closed form, and :func:`value_with_gradient` hands them to autograd as one node,
instead of a graph over the ``n x M`` pair terms. The ``(n, M)`` pair matrices are updated in
place (they are the temporaries whose size :data:`~fairot.torch.penalty._checks.MAX_PAIRS`
bounds); everything of the batch's, the groups' or the features' size is a new tensor. Fused
operations (``addmm``, ``addcmul``, ``alpha=``) are used where they are the formula's own shape
(``a + b c``), which at these sizes also spares one dispatch each.

Internal surface (for :mod:`._penalty`): :class:`GroupTerms`, :func:`group_terms`,
:class:`TargetTerms`, :func:`target_terms`, :class:`CotTerms`, :func:`cot_batch_terms`,
:func:`value_with_gradient`.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from fairot.torch.penalty._features import FeatureMap


class GroupTerms(NamedTuple):
    """What :func:`cot_batch_terms` needs of the batch's groups; reusable while they repeat.

    Attributes
    ----------
    one_hot : Tensor of shape (n, G)
    group_means : Tensor of shape (G, n)
        Row ``a`` averages over group ``a``'s rows.
    inv_count : Tensor of shape (n,)
        :math:`1/n_a` of each row's group.
    present : Tensor of shape (G,)
        1 for a group with rows in the batch, else 0.
    index : Tensor of shape (2, 1, n)
        Each row's group, to read its potential and slope among every group's.
    """

    one_hot: torch.Tensor
    group_means: torch.Tensor
    inv_count: torch.Tensor
    present: torch.Tensor
    index: torch.Tensor


def group_terms(
    groups: torch.Tensor, counts: torch.Tensor, n_groups: int, dtype: torch.dtype
) -> GroupTerms:
    """The :class:`GroupTerms` of the group codes ``groups`` (their ``counts`` given)."""
    one_hot = (groups[:, None] == torch.arange(n_groups, device=groups.device)).to(dtype)
    counts = counts.to(dtype)
    group_means = one_hot / counts.clamp(min=1.0)
    return GroupTerms(
        one_hot=one_hot,
        group_means=group_means.T.contiguous(),
        inv_count=group_means.sum(dim=1),
        present=counts.clamp(max=1.0),
        index=groups.view(1, 1, -1).expand(2, 1, -1),
    )


class TargetTerms(NamedTuple):
    r"""The target sample as :func:`cot_batch_terms` reads it; reusable for a fixed target.

    Attributes
    ----------
    samples : Tensor of shape (M,)
        ``(n,)``, paired with the scores, under the diagonal pairing.
    psi : Tensor of shape (M, D)
        Their raw features :math:`\psi(t)` (divided by the map's ``psi_scale``).
    psi_mean : Tensor of shape (D,)
        The features' mean over the samples.
    row_mean : Tensor of shape (M,)
        :math:`M` times :math:`1/M` (one 1 under the diagonal pairing): a row mean over the
        samples as one matrix-vector product, cheaper than a reduction at these sizes.
    """

    samples: torch.Tensor
    psi: torch.Tensor
    psi_mean: torch.Tensor
    row_mean: torch.Tensor


def target_terms(t: torch.Tensor, features: FeatureMap, diagonal: bool) -> TargetTerms:
    """The :class:`TargetTerms` of the (detached) target sample ``t``."""
    psi = features(t.unsqueeze(1))[0]
    m = 1 if diagonal else t.shape[0]
    row_mean = torch.full((m,), 1.0 / m, dtype=t.dtype, device=t.device)
    return TargetTerms(samples=t, psi=psi, psi_mean=psi.mean(dim=0), row_mean=row_mean)


class CotTerms(NamedTuple):
    r"""What one pass of :func:`cot_batch_terms` returns.

    Attributes
    ----------
    offset : Tensor of shape ()
        The value less :math:`\langle s, \mathrm{gradient}\rangle`, for
        :func:`value_with_gradient`.
    gradient : Tensor of shape (n,)
        The value's gradient in the scores.
    ascent : Tensor of shape (G, D) or None
        The ascent direction of ``duals`` divided by ``psi_scale`` (``None`` unless
        ``training``).
    target_ascent : Tensor of shape (G, D) or None
        Of ``target_duals``, likewise (``None`` under the constraint or unless ``training``).
    z_max : Tensor of shape () or None
        The largest exponent :math:`z` (entropic regulariser only), for the overflow check.
    """

    offset: torch.Tensor
    gradient: torch.Tensor
    ascent: torch.Tensor | None
    target_ascent: torch.Tensor | None
    z_max: torch.Tensor | None


@torch.no_grad()
def cot_batch_terms(
    s: torch.Tensor,
    groups: GroupTerms,
    target: TargetTerms,
    duals: torch.Tensor,
    target_duals: torch.Tensor,
    features: FeatureMap,
    *,
    reg_strength: float,
    entropic: bool,
    constrained: bool,
    diagonal: bool,
    training: bool,
) -> CotTerms:
    r"""The regularised dual (7) on one batch, its gradient in the scores and the dual ascent.

    With :math:`z_{ij} = (\lambda_{S_a}(s_i) + \lambda_{\bar S,a}(t_j) - |s_i - t_j|)/\lambda`
    and :math:`\alpha_{ij} = \phi^{*\prime}(z_{ij})`:

    - value: :math:`\sum_a` the group's mean of :math:`\lambda_{S_a}(s_i) + \lambda_{\bar
      S,a}(t_j) - \lambda\phi^*(z_{ij})`;
    - gradient in :math:`s_i`: the mean over its pairs of :math:`(1 - \alpha_{ij})
      \lambda_{S_a}'(s_i) + \alpha_{ij}\,\mathrm{sign}(s_i - t_j)`, times :math:`1/n_a` — the
      θ-direction of Algorithm 1 before the chain rule through the model;
    - ascent (5) in the coefficients of :math:`\lambda_{S_a}`: the group's mean of
      :math:`(1 - \bar\alpha_i)\psi(s_i)`; of :math:`\lambda_{\bar S,a}`: the mean over its
      pairs of :math:`(1 - \alpha_{ij})\psi(t_j)`. Under the constraint :math:`\lambda_{\bar
      S,a} = -\lambda_{S_a}` the two combine into one.

    Parameters
    ----------
    s : Tensor of shape (n,)
        The scores (no graph is recorded through them).
    groups : GroupTerms
        Their groups.
    target : TargetTerms
        The target sample and its features.
    duals, target_duals : Tensor of shape (G, D)
        The potentials' coefficients (any floating dtype; computed in the scores' dtype).
    features : FeatureMap
        The feature map in the scores' dtype and device.

    Returns
    -------
    CotTerms
    """
    t, psi_t = target.samples, target.psi
    row_mean = target.row_mean
    lam = reg_strength
    # Row a of scaled[0] (scaled[1]) gives lambda_{S_a} (its slope) from the raw features.
    scaled = (duals * features.scales).to(s.dtype)
    # lambda_{S-bar, a}(t) = sign * psi_t . target_scaled[a]
    sign = -1.0 if constrained else 1.0
    target_scaled = scaled[0] if constrained else (target_duals * features.psi_scale).to(s.dtype)

    # lambda_{S_a}(s_i) and lambda'_{S_a}(s_i) for every group a at once (2, G, n), then each
    # row's: the (G, n) layout makes the product and the read cheaper than (n, G).
    s_column = s.unsqueeze(1)
    raw = features(s_column)
    potentials = scaled @ raw.transpose(1, 2)
    lam_s, slope_s = torch.unbind(potentials.gather(1, groups.index).view(2, -1))
    if diagonal:
        lam_t = (psi_t @ target_scaled.T).gather(1, groups.index[0].T)  # (n, 1)
        z = torch.add(lam_s[:, None], lam_t, alpha=sign) / lam
        diff = (s - t)[:, None]
    else:
        target_potentials = target_scaled @ psi_t.T  # (G, M), up to sign
        # Row i of one_hot @ target_potentials is group a_i's: products with 1 and 0, exact.
        z = torch.addmm(  # (n, M), divided by lambda
            lam_s[:, None], groups.one_hot, target_potentials, beta=1.0 / lam, alpha=sign / lam
        )
        diff = s_column - t
    z.sub_(diff.abs(), alpha=1.0 / lam)
    signs = torch.sign(diff)
    if entropic:
        z_max = z.max()
        alpha = z.exp_()
        alpha_mean = phi_mean = alpha @ row_mean
    else:
        z_max = None
        alpha = z.clamp_(min=0.0).mul_(0.5)
        alpha_mean = alpha @ row_mean
        phi_mean = alpha.square() @ row_mean
    one_minus_alpha_mean = 1.0 - alpha_mean
    signed_mean = signs.mul_(alpha) @ row_mean
    # Each row's gradient before its factor 1/n_a.
    row_gradient = torch.addcmul(signed_mean, one_minus_alpha_mean, slope_s)
    # Each row's share of the value (its potential on the target: the diagonal's own sample).
    row_terms = torch.sub(lam_s, phi_mean, alpha=lam)
    if diagonal:
        row_terms = torch.add(row_terms, lam_t[:, 0], alpha=sign)
    # Less s_i times the row's gradient: the caller adds <scores, gradient> back.
    offset = groups.inv_count @ torch.addcmul(row_terms, s, row_gradient, value=-1.0)
    if not diagonal:
        # The target part: each present group's mean of lambda_{S-bar, a} over the samples.
        offset = torch.add(offset, groups.present @ (target_scaled @ target.psi_mean), alpha=sign)
    gradient = row_gradient * groups.inv_count
    if not training:
        return CotTerms(offset, gradient, None, None, z_max)

    # Both ascents are in units of psi / psi_scale, the raw features: the caller's step folds
    # the factor in.
    weights_s = groups.group_means * one_minus_alpha_mean
    if diagonal:
        grad_t = (groups.group_means * (1.0 - alpha[:, 0])) @ psi_t
    else:
        # A present group's mean of 1 - alpha_ij over its rows is 1 - its mean of alpha.
        grad_t = torch.addmm(
            torch.outer(groups.present, target.psi_mean),
            groups.group_means @ alpha,
            psi_t,
            alpha=-1.0 / t.shape[0],
        )
    if constrained:
        # weights_s @ psi(s) - grad_t
        ascent = torch.addmm(grad_t, weights_s, raw[0], beta=-1.0)
        return CotTerms(offset, gradient, ascent, None, z_max)
    return CotTerms(offset, gradient, weights_s @ raw[0], grad_t, z_max)


def value_with_gradient(
    scores: torch.Tensor, gradient: torch.Tensor, offset: torch.Tensor
) -> torch.Tensor:
    r"""``<scores, gradient> + offset``: the pass's value, with ``gradient`` as its score gradient.

    :func:`cot_batch_terms` returns the value less :math:`\langle s, \mathrm{gradient}\rangle`
    (``offset``): adding the product back with the scores that autograd tracks gives the value
    (to rounding) whose gradient in the scores is exactly the closed-form ``gradient``. One
    ``linear`` node rather than a custom ``autograd.Function`` (whose Python ``apply`` costs
    about as much as the rest of the call) or ``value + <scores - s, gradient>`` (one node
    more).
    """
    return torch.nn.functional.linear(scores, gradient, offset)
