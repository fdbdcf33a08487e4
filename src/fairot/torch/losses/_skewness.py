r"""MBN's meta skewness loss: the gap in feature scatter between each group and the anchors.

On an L2-normalised, group-balanced meta batch, each sample :math:`i` gets

.. math::

    l_i = \lVert f(x_i) - f(x_{i,p}) \rVert_2^2 - \gamma \lVert f(x_i) - f(x_{i,n}) \rVert_2^2

(Eq. (7) of [1]_), with :math:`x_{i,p}` / :math:`x_{i,n}` its hardest positive / negative within its
group, kept only when :math:`d_n - d_p \le 0.2` (online selection). The skewness of group :math:`g`
against the anchors :math:`A` (Tone I) is

.. math::

    B^g = \frac{1}{|g|} \sum_{i \in g} l_i - \frac{1}{|A|} \sum_{k \in A} l_k
    \qquad \text{(Eq. (6) of [1]_)},

and the meta loss is :math:`L^M = \sum_{g \notin A} B^g` (Eq. (5)).

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from fairot.torch.checks import (
    ANCHORS_ERROR,
    GAMMA_ERROR,
    META_EMBEDDINGS_ERROR,
    N_GROUPS_ERROR,
    REDUCTION_ERROR,
    check_count,
    check_embeddings,
    check_groups,
    check_labels,
    check_number,
)
from fairot.torch.distances import squared_distances
from fairot.torch.miners import HardestTripletMiner, TripletIndices

__all__ = ["MetaBatchWarning", "MetaSkewnessLoss", "SkewnessResult"]

NO_POSITIVE_WARNING = (
    "meta batch: group {group} has no positive pair (two samples of one identity) or no negative; "
    "it is skipped for this step. Sample meta batches with BalancedGroupSampler "
    "(samples_per_identity >= 2). This warning is shown once per group."
)
NO_ANCHOR_WARNING = (
    "meta batch: the anchor groups {anchors} have no selected triplet, so no skewness can be "
    "measured and the meta step is skipped. This warning is shown once."
)


class MetaBatchWarning(UserWarning):
    """A meta batch from which part of the meta skewness loss could not be computed.

    Examples
    --------
    Group 1 below has four identities of one sample each, hence no positive pair:

    >>> import warnings
    >>> import torch
    >>> from fairot.torch.losses import MetaBatchWarning, MetaSkewnessLoss
    >>> emb = torch.eye(8)
    >>> labels = torch.tensor([0, 0, 1, 1, 2, 3, 4, 5])
    >>> groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = MetaSkewnessLoss(selection_margin=None)(emb, labels, groups)
    >>> [w.category is MetaBatchWarning for w in caught]
    [True]
    """


@dataclass(frozen=True)
class SkewnessResult:
    """Everything :meth:`MetaSkewnessLoss.compute` measured on one meta batch.

    Attributes
    ----------
    loss : Tensor
        The scalar meta loss :math:`L^M` (zero, still attached to the graph, when undefined).
    group_bias : Tensor of shape (n_groups,)
        :math:`B^g` of each group; NaN for the anchors and for groups skipped in this batch.
    group_loss : Tensor of shape (n_groups,)
        Mean :math:`l_i` of each group over its selected triplets; NaN where none was selected.
    n_triplets : Tensor of shape (n_groups,)
        Number of selected triplets of each group.

    Examples
    --------
    :meth:`MetaSkewnessLoss.compute` returns one; the anchors' bias is NaN by definition, and a
    group laid out as the anchors has a bias of 0:

    >>> import torch
    >>> from fairot.torch.losses import MetaSkewnessLoss
    >>> emb = torch.eye(2).repeat_interleave(2, dim=0).repeat(2, 1)
    >>> labels, groups = torch.arange(8) // 2, torch.arange(8) // 4
    >>> result = MetaSkewnessLoss(selection_margin=None).compute(emb, labels, groups)
    >>> result.group_bias.tolist(), result.group_loss.tolist(), result.n_triplets.tolist()
    ([nan, 0.0], [-1.0, -1.0], [4, 4])
    """

    loss: torch.Tensor
    group_bias: torch.Tensor
    group_loss: torch.Tensor
    n_triplets: torch.Tensor


class MetaSkewnessLoss(nn.Module):
    r"""Meta skewness loss :math:`L^M` of MBN (Eqs. (5)-(7)).

    Parameters
    ----------
    gamma : float, default=0.5
        Trade-off :math:`\gamma` between the positive and the negative distance (0.5 in MBN).
    selection_margin : float or None, default=0.2
        Online selection: keep the triplets with :math:`d_n - d_p \le` ``selection_margin``.
    anchor_groups : sequence of int, default=(0,)
        The anchor groups :math:`A` (Tone I; Tones I and II with 8 bins).
    reduction : {"sum", "abs", "squared"}, default="sum"
        :math:`\sum_g B^g` as in the paper, or :math:`\sum_g |B^g|`, or :math:`\sum_g (B^g)^2`.
    n_groups : int, optional
        Number of groups, to size :class:`SkewnessResult`; inferred from the batch when omitted.
        When given, group codes outside ``[0, n_groups)`` are an error.
    validate : bool, default=True
        Check every call's values (finite embeddings, group codes in range); one reduction and
        one device synchronisation each. ``False`` skips them in a hot loop whose inputs are known
        to be good; types, shapes and empty batches are always checked.

    Notes
    -----
    A group present in the batch without any positive pair is skipped for that step, with a
    :class:`MetaBatchWarning` shown once per group. A group whose triplets are all easier than the
    selection margin is skipped silently (nothing to balance). When the anchors have no triplet the
    loss is a zero attached to the graph, so that the meta step is a no-op.

    Examples
    --------
    Unit embeddings, ``gamma=0.5``. The anchor group 0 holds two identities on orthogonal axes:
    :math:`d_p = 0`, :math:`d_n = 2`, so :math:`l = -1`. Group 1 holds two opposite identities:
    :math:`d_n = 4`, :math:`l = -2`. Hence :math:`B^1 = -2 - (-1) = -1` (group 1 is better
    separated than the anchors).

    >>> import torch
    >>> from fairot.torch.losses import MetaSkewnessLoss
    >>> e1, e2 = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])
    >>> emb = torch.stack([e1, e1, e2, e2, e1, e1, -e1, -e1])
    >>> labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    >>> groups = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    >>> loss = MetaSkewnessLoss(gamma=0.5, selection_margin=None)
    >>> loss(emb, labels, groups).item()
    -1.0
    """

    def __init__(
        self,
        gamma: float = 0.5,
        selection_margin: float | None = 0.2,
        anchor_groups: Sequence[int] = (0,),
        reduction: Literal["sum", "abs", "squared"] = "sum",
        *,
        n_groups: int | None = None,
        validate: bool = True,
    ) -> None:
        super().__init__()
        gamma = check_number(gamma, GAMMA_ERROR, low=0.0)
        if reduction not in ("sum", "abs", "squared"):
            raise ValueError(REDUCTION_ERROR.format(value=reduction))
        anchors = tuple(int(g) for g in anchor_groups)
        if not anchors or len(set(anchors)) != len(anchors) or min(anchors) < 0:
            raise ValueError(ANCHORS_ERROR.format(value=anchor_groups))
        self.gamma = gamma
        self.selection_margin = selection_margin
        self.anchor_groups = anchors
        self.reduction = reduction
        if n_groups is not None:
            check_count(n_groups, "n_groups", N_GROUPS_ERROR)
        self.n_groups = n_groups
        self.validate = bool(validate)
        self.miner = HardestTripletMiner(within_groups=True, selection_margin=selection_margin)
        self._warned: set[object] = set()

    def compute(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        group_codes: torch.Tensor,
        indices_tuple: TripletIndices | None = None,
    ) -> SkewnessResult:
        r"""Meta loss with its per-group terms.

        Parameters
        ----------
        embeddings : Tensor of shape (n_samples, dim)
            Meta-batch embeddings :math:`f(x^v; \hat w)`; normalised here.
        labels : integer Tensor of shape (n_samples,)
        group_codes : integer Tensor of shape (n_samples,)
        indices_tuple : TripletIndices, optional
            Precomputed (anchor, positive, negative) triplets; mined with
            :class:`~fairot.torch.miners.HardestTripletMiner` when omitted.

        Returns
        -------
        SkewnessResult
        """
        name = type(self).__name__
        check_embeddings(embeddings, name, validate=self.validate)
        if embeddings.ndim != 2:
            raise ValueError(META_EMBEDDINGS_ERROR.format(shape=tuple(embeddings.shape)))
        n = embeddings.shape[0]
        labels = torch.as_tensor(labels, device=embeddings.device)
        check_labels(labels, n)
        group_codes = check_groups(group_codes, n, self.n_groups, name, validate=self.validate)
        group_codes = group_codes.to(embeddings.device)
        if indices_tuple is None:
            indices_tuple = self.miner(embeddings, labels, group_codes)
        anchors_idx, pos_idx, neg_idx = indices_tuple
        n_groups = self.n_groups
        if n_groups is None:
            present = int(group_codes.max()) + 1 if group_codes.numel() else 0
            n_groups = max(present, max(self.anchor_groups) + 1)
        dtype = embeddings.dtype
        d_pos = squared_distances(embeddings, anchors_idx, pos_idx)
        d_neg = squared_distances(embeddings, anchors_idx, neg_idx)
        l_i = d_pos - self.gamma * d_neg
        triplet_group = group_codes[anchors_idx]
        counts = torch.bincount(triplet_group, minlength=n_groups)[:n_groups]
        sums = torch.zeros(n_groups, dtype=dtype, device=embeddings.device).index_add(
            0, triplet_group, l_i
        )
        nan = torch.tensor(float("nan"), dtype=dtype, device=embeddings.device)
        group_loss = torch.where(counts > 0, sums / counts.clamp_min(1), nan)

        self._warn_missing_pairs(labels, group_codes)
        is_anchor = torch.zeros(n_groups, dtype=torch.bool, device=embeddings.device)
        is_anchor[list(a for a in self.anchor_groups if a < n_groups)] = True
        anchor_count = counts[is_anchor].sum()
        # one entry, not the sum: a float16 sum overflows to inf, and inf * 0 is NaN
        zero = embeddings[:1, :1].sum() * 0.0
        if int(anchor_count) == 0:
            if "anchors" not in self._warned:
                self._warned.add("anchors")
                warnings.warn(
                    NO_ANCHOR_WARNING.format(anchors=self.anchor_groups),
                    MetaBatchWarning,
                    stacklevel=3,
                )
            bias = torch.full((n_groups,), float("nan"), dtype=dtype, device=embeddings.device)
            return SkewnessResult(zero, bias, group_loss.detach(), counts)
        anchor_mean = sums[is_anchor].sum() / anchor_count
        active = (counts > 0) & ~is_anchor
        bias = torch.where(active, group_loss - anchor_mean, nan)
        terms = bias[active]
        if self.reduction == "abs":
            terms = terms.abs()
        elif self.reduction == "squared":
            terms = terms.pow(2)
        loss = terms.sum() + zero
        return SkewnessResult(loss, bias.detach(), group_loss.detach(), counts)

    def _warn_missing_pairs(self, labels: torch.Tensor, groups: torch.Tensor) -> None:
        same_group = groups[:, None] == groups[None, :]
        same_label = labels[:, None] == labels[None, :]
        same_label.fill_diagonal_(False)
        # a group is usable when some sample has a positive and a negative within the group
        usable = ((same_group & same_label).any(1) & (same_group & ~same_label).any(1)).long()
        n = int(groups.max()) + 1 if groups.numel() else 0
        present = torch.bincount(groups, minlength=n) > 0
        usable = torch.bincount(groups, weights=usable.double(), minlength=n) > 0
        for g in torch.nonzero(present & ~usable).flatten().tolist():
            if g not in self._warned:
                self._warned.add(g)
                warnings.warn(NO_POSITIVE_WARNING.format(group=g), MetaBatchWarning, stacklevel=4)

    def forward(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        group_codes: torch.Tensor,
        indices_tuple: TripletIndices | None = None,
    ) -> torch.Tensor:
        """Scalar meta loss :math:`L^M`; see :meth:`compute` for the parameters."""
        return self.compute(embeddings, labels, group_codes, indices_tuple).loss
