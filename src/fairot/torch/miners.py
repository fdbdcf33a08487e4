r"""Triplet miners: index tuples, never losses (pytorch-metric-learning's split).

Hardest-triplet mining within groups is the triplet selection of MBN's meta skewness loss.

For each anchor :math:`i` of a batch of L2-normalised embeddings, its hardest positive is the
sample of the same identity at the largest squared distance :math:`d_p`, and its hardest negative
the sample of another identity at the smallest squared distance :math:`d_n` — both searched
**within the anchor's own group**, since Eq. (7) of [1]_ compares a skin-tone bin with itself. The
online selection of [1]_ (Section V, experimental settings) then keeps the triplets with
:math:`d_n - d_p \le 0.2`.

References
----------
.. [1] Wang, M., Zhang, Y. and Deng, W. "Meta Balanced Network for Fair Face Recognition",
   IEEE TPAMI (2021).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from fairot.torch.checks import MINER_INPUT_ERROR, SELECTION_MARGIN_ERROR, check_number
from fairot.torch.distances import squared_distances, unit_rows

__all__ = ["HardestTripletMiner", "TripletIndices", "squared_distances"]


class TripletIndices(NamedTuple):
    """Index tuple returned by :class:`HardestTripletMiner` (pytorch-metric-learning's order).

    Examples
    --------
    See :class:`HardestTripletMiner`.
    """

    anchors: torch.Tensor
    positives: torch.Tensor
    negatives: torch.Tensor


class HardestTripletMiner(nn.Module):
    r"""Return (anchor, hardest positive, hardest negative) index triplets.

    Parameters
    ----------
    within_groups : bool, default=True
        Search positives and negatives only among samples of the anchor's group.
    selection_margin : float or None, default=None
        Keep only the triplets with :math:`d_n - d_p \le` ``selection_margin`` (0.2 in MBN);
        ``None`` keeps every anchor that has a positive and a negative.

    Notes
    -----
    Mining is done without gradient (it only chooses indices); the loss recomputes the distances
    of the chosen triplets with gradient.

    Examples
    --------
    Two identities of one group; each anchor's hardest positive is its identity's other sample and
    its hardest negative the closest sample of the other identity:

    >>> import torch
    >>> from fairot.torch.miners import HardestTripletMiner
    >>> embeddings = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.2, 0.8]])
    >>> labels, groups = torch.tensor([0, 0, 1, 1]), torch.zeros(4, dtype=torch.long)
    >>> triplets = HardestTripletMiner()(embeddings, labels, groups)
    >>> triplets.anchors.tolist(), triplets.positives.tolist(), triplets.negatives.tolist()
    ([0, 1, 2, 3], [1, 0, 3, 2], [3, 3, 1, 1])
    """

    def __init__(self, *, within_groups: bool = True, selection_margin: float | None = None):
        super().__init__()
        if selection_margin is not None:
            selection_margin = check_number(selection_margin, SELECTION_MARGIN_ERROR)
        self.within_groups = within_groups
        self.selection_margin = selection_margin

    @torch.no_grad()
    def forward(
        self,
        embeddings: torch.Tensor,
        labels: torch.Tensor,
        group_codes: torch.Tensor | None = None,
    ) -> TripletIndices:
        """Mine the triplets of a batch.

        Parameters
        ----------
        embeddings : Tensor of shape (n_samples, dim)
        labels : integer Tensor of shape (n_samples,)
        group_codes : integer Tensor of shape (n_samples,), optional
            Required when ``within_groups=True``; otherwise ignored.

        Returns
        -------
        TripletIndices
            Three integer tensors of equal length.
        """
        n = embeddings.shape[0] if embeddings.ndim == 2 else -1
        labels = torch.as_tensor(labels, device=embeddings.device)
        if group_codes is None and self.within_groups:
            groups_ok = False
        else:
            group_codes = (
                torch.zeros_like(labels)
                if group_codes is None or not self.within_groups
                else torch.as_tensor(group_codes, device=embeddings.device)
            )
            groups_ok = group_codes.shape == (n,) and not group_codes.is_floating_point()
        if n < 0 or labels.shape != (n,) or labels.is_floating_point() or not groups_ok:
            raise ValueError(
                MINER_INPUT_ERROR.format(
                    emb=tuple(embeddings.shape),
                    lab=tuple(labels.shape),
                    grp=None if group_codes is None else tuple(torch.as_tensor(group_codes).shape),
                )
            )
        normed = unit_rows(embeddings.detach())
        dist = (2.0 - 2.0 * normed @ normed.t()).clamp_min(0.0)
        same_group = group_codes[:, None] == group_codes[None, :]
        same_label = labels[:, None] == labels[None, :]
        eye = torch.eye(n, dtype=torch.bool, device=embeddings.device)
        pos_mask = same_group & same_label & ~eye
        neg_mask = same_group & ~same_label
        inf = torch.finfo(dist.dtype).max
        d_pos, positives = torch.where(pos_mask, dist, -inf).max(dim=1)
        d_neg, negatives = torch.where(neg_mask, dist, inf).min(dim=1)
        keep = pos_mask.any(dim=1) & neg_mask.any(dim=1)
        if self.selection_margin is not None:
            keep &= (d_neg - d_pos) <= self.selection_margin
        anchors = torch.nonzero(keep).squeeze(1)
        return TripletIndices(anchors, positives[anchors], negatives[anchors])
