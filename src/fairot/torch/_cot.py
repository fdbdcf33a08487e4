r"""One COT call on a mini-batch as a pure function: value, score gradient and dual ascent.

:class:`~fairot.torch.WassersteinParityPenalty` calls :func:`cot_batch_terms` at every step
in ``"cot"`` mode. Every term of the mini-batch dual (7) of the COT paper is an average over
pairs :math:`(i, j)` of a score :math:`s_i` of group :math:`a` and a target sample :math:`t_j`:
all pairs of the group's scores with the :math:`M` target samples, or the :math:`i = j` pairs
(``diagonal``). Averages over :math:`j` are row means; over a group's rows, products with the
rows of ``group_means`` :math:`(G, n)`. At batch sizes of a few hundred the number of tensor
operations, not their size, sets the cost of a call (each costs a few microseconds of dispatch
on a CPU): the function is written with few of them (about 40, whatever the number of groups),
and what depends only on the batch's groups (:func:`group_terms`) or on a fixed target is
computed once and reused.
"""

from __future__ import annotations

import torch

from fairot.torch._features import interpolate_table


def feature_matrix(s_column: torch.Tensor, constants: dict) -> torch.Tensor:
    r"""``(2, n, D)``: :math:`\psi(s)`, then :math:`\psi'(s)`, up to factors of the duals.

    ``s_column`` holds the scores as a column ``(n, 1)``. Exact features: ``cos(omega s + b)``
    and ``cos(omega s + b - pi/2) = sin(omega s + b)`` in one cosine call (their factors
    :math:`\sqrt{2/D}` and :math:`-\sqrt{2/D}\,\omega` are ``constants["scales"]``);
    tabulated features: both tables read in one pass.
    """
    if "table" in constants:
        return interpolate_table(s_column.view(-1), constants["table"]).transpose(0, 1)
    return torch.cos(torch.addcmul(constants["phases"], s_column, constants["frequencies"]))


def group_terms(groups: torch.Tensor, counts: torch.Tensor, n_groups: int, dtype) -> dict:
    """What :func:`cot_batch_terms` needs of the batch's groups; reusable while they repeat.

    ``one_hot`` ``(n, G)``, ``group_means`` ``(G, n)`` (row ``a`` averages over group ``a``'s
    rows), ``inv_count`` ``(n,)`` (:math:`1/n_a` of each row's group), ``present`` ``(G,)`` (1 for a
    group with rows in the batch) and ``index`` ``(2, 1, n)``, each row's group, to read its
    potential and slope among every group's.
    """
    one_hot = (groups[:, None] == torch.arange(n_groups, device=groups.device)).to(dtype)
    counts = counts.to(dtype)
    group_means = one_hot / counts.clamp(min=1.0)
    return {
        "one_hot": one_hot,
        "group_means": group_means.T.contiguous(),
        "inv_count": group_means.sum(dim=1),
        "present": counts.clamp(max=1.0),
        "index": groups.view(1, 1, -1).expand(2, 1, -1),
    }


def cot_batch_terms(
    s: torch.Tensor,
    groups: dict,
    target: dict,
    duals: torch.Tensor,
    target_duals: torch.Tensor,
    constants: dict,
    *,
    reg_strength: float,
    entropic: bool,
    constrained: bool,
    diagonal: bool,
    training: bool,
):
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
        Detached scores.
    groups : dict
        Their groups, as :func:`group_terms` gives them.
    target : dict
        ``samples`` ``(M,)`` (``(n,)``, paired with the scores, when ``diagonal``), their
        features ``psi`` ``(M, D)`` (:math:`\psi(t)` divided by ``psi_scale``), the features'
        mean ``psi_mean`` ``(D,)`` and ``row_mean``, :math:`M` times :math:`1/M` (one 1 when
        ``diagonal``).
    duals, target_duals : Tensor of shape (G, D)
        The potentials' coefficients (any floating dtype; computed in the scores' dtype).
    constants : dict
        The feature map (``frequencies`` and ``phases`` of shape ``(2, 1, D)``, or ``table``),
        ``scales`` ``(2, 1, D)`` (the factors of :math:`\psi` and :math:`\psi'`), ``psi_scale``
        (the first, a number) and ``scaled_duals``, a ``(2, G, D)`` tensor in the scores' dtype
        that this call overwrites.

    Returns
    -------
    offset : Tensor of shape ()
        The value less :math:`\langle s, \mathrm{gradient}\rangle`: ``linear(scores,
        gradient, offset)`` is the value (to rounding), and its gradient in the scores is
        ``gradient`` — one autograd node fewer than ``value + <scores - s, gradient>``.
    gradient : Tensor of shape (n,)
    ascent : Tensor of shape (G, D) or None
        The ascent direction of ``duals`` divided by ``psi_scale`` (``None`` unless
        ``training``).
    target_ascent : Tensor of shape (G, D) or None
        Of ``target_duals``, likewise (``None`` under the constraint or unless ``training``).
    z_max : Tensor of shape () or None
        The largest exponent :math:`z` (entropic regulariser only), for the overflow check.
    """
    t, psi_t, psi_t_mean = target["samples"], target["psi"], target["psi_mean"]
    # Row means as products with a vector of 1/M: cheaper than reductions at these sizes.
    row_mean = target["row_mean"]
    lam = reg_strength
    # The duals times the factors of psi and psi', converted to the scores' dtype in the same
    # pass: row a of scaled[0] (scaled[1]) gives lambda_{S_a} (its slope) from raw features.
    scaled = torch.mul(duals, constants["scales"], out=constants["scaled_duals"])
    # lambda_{S-bar, a}(t) = sign * psi_t . target_scaled[a]
    sign = -1.0 if constrained else 1.0
    if constrained:
        target_scaled = scaled[0]
    else:
        target_scaled = torch.mul(target_duals, constants["psi_scale"]).to(s.dtype)
    one_hot, group_means = groups["one_hot"], groups["group_means"]
    inv_count, present = groups["inv_count"], groups["present"]

    # lambda_{S_a}(s_i) and lambda'_{S_a}(s_i) for every group a at once (2, G, n), then each
    # row's: the (G, n) layout makes the product and the read cheaper than (n, G).
    s_column = s.unsqueeze(1)
    features = feature_matrix(s_column, constants)
    potentials = torch.bmm(scaled, features.transpose(1, 2))
    lam_s, slope_s = torch.unbind(potentials.gather(1, groups["index"]).view(2, -1))
    if diagonal:
        lam_t = (psi_t @ target_scaled.T).gather(1, groups["index"][0].T)  # (n, 1)
        z = torch.add(lam_s[:, None], lam_t, alpha=sign).div_(lam)
        diff = (s - t)[:, None]
    else:
        target_potentials = torch.nn.functional.linear(target_scaled, psi_t)  # (G, M), up to sign
        # Row i of one_hot @ target_potentials is group a_i's: products with 1 and 0, exact.
        z = torch.addmm(  # (n, M), divided by lambda
            lam_s[:, None], one_hot, target_potentials, beta=1.0 / lam, alpha=sign / lam
        )
        diff = s_column - t
    signs = torch.sign(diff)
    # |s_i - t_j| as (s_i - t_j) sign(s_i - t_j), exact, in the subtraction's own pass.
    z.addcmul_(diff, signs, value=-1.0 / lam)
    if entropic:
        z_max = z.max()
        alpha = z.exp_()
        alpha_mean = phi_mean = alpha @ row_mean
    else:
        z_max = None
        alpha = z.clamp_(min=0.0).mul_(0.5)
        alpha_mean = alpha @ row_mean
        phi_mean = alpha.square() @ row_mean
    # torch.rsub, not 1.0 - x: Python's reflected operator costs a wrapper call per step.
    one_minus_alpha_mean = torch.rsub(alpha_mean, 1.0)
    signed_mean = signs.mul_(alpha) @ row_mean
    # Each row's gradient before its factor 1/n_a.
    row_gradient = torch.addcmul(signed_mean, one_minus_alpha_mean, slope_s)
    # Each row's share of the value, less s_i times its gradient: the caller returns
    # <scores, gradient> + offset, which is the value, with the gradient in the scores.
    if diagonal:
        row_terms = torch.add(lam_s, lam_t[:, 0], alpha=sign).sub_(phi_mean, alpha=lam)
    else:
        row_terms = torch.add(lam_s, phi_mean, alpha=-lam)
    offset = inv_count @ row_terms.addcmul_(s, row_gradient, value=-1.0)
    if not diagonal:
        # The target part: each present group's mean of lambda_{S-bar, a} over the samples.
        offset = torch.add(offset, present @ (target_scaled @ psi_t_mean), alpha=sign)
    gradient = row_gradient.mul_(inv_count)
    if not training:
        return offset, gradient, None, None, z_max

    # Both ascents are in units of psi / psi_scale, the raw features: the caller's step folds
    # the factor in.
    weights_s = group_means * one_minus_alpha_mean
    if diagonal:
        grad_t = (group_means * torch.rsub(alpha[:, 0], 1.0)) @ psi_t
    else:
        # A present group's mean of 1 - alpha_ij over its rows is 1 - its mean of alpha.
        grad_t = torch.addmm(
            torch.outer(present, psi_t_mean),
            group_means @ alpha,
            psi_t,
            alpha=-1.0 / t.shape[0],
        )
    if constrained:
        ascent = torch.addmm(grad_t, weights_s, features[0], beta=-1.0)
        return offset, gradient, ascent, None, z_max
    return offset, gradient, weights_s @ features[0], grad_t, z_max
