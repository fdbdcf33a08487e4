"""Unit rows and squared distances between them: the geometry the losses and miners share."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["squared_distances", "unit_rows"]


def unit_rows(x: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit L2 norm, in ``x``'s dtype; a zero row stays zero.

    Half-precision rows are normalised in float32: their norm overflows float16 from 256 per
    coordinate, and ``F.normalize``'s ``eps=1e-12`` is 0 in float16 (a zero row gave 0/0 = NaN).

    Parameters
    ----------
    x : Tensor of shape (n_rows, dim)

    Returns
    -------
    Tensor of shape (n_rows, dim)

    Examples
    --------
    >>> import torch
    >>> from fairot.torch.distances import unit_rows
    >>> unit_rows(torch.tensor([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    >>> unit_rows(torch.full((1, 2), 300.0, dtype=torch.float16)).dtype
    torch.float16
    """
    wide = torch.promote_types(x.dtype, torch.float32)
    return F.normalize(x.to(wide), dim=1).to(x.dtype)


def squared_distances(embeddings: torch.Tensor, anchors, others) -> torch.Tensor:
    """Squared Euclidean distance between L2-normalised rows ``anchors`` and ``others``.

    Parameters
    ----------
    embeddings : Tensor of shape (n_samples, dim)
        Normalised here.
    anchors, others : integer Tensor of shape (n_pairs,)
        Row indices of the two ends of each pair.

    Returns
    -------
    Tensor of shape (n_pairs,)

    Examples
    --------
    Orthogonal unit vectors are at squared distance 2, opposite ones at 4:

    >>> import torch
    >>> from fairot.torch.distances import squared_distances
    >>> embeddings = torch.tensor([[3.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    >>> squared_distances(embeddings, torch.tensor([0, 0]), torch.tensor([1, 2]))
    tensor([2., 4.])
    """
    normed = unit_rows(embeddings)
    return (normed[anchors] - normed[others]).pow(2).sum(dim=1)
