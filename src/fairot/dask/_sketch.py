r"""Mergeable KLL quantile sketches of Dask data (``datasketches.kll_doubles_sketch``).

Each partition sketches each label's values; the sketches are merged in a tree on the cluster and
only the merged sketches (a few thousand numbers each) come back. A KLL sketch with parameter
``k`` answers a rank query within a normalised rank error :math:`\varepsilon(k)` with 99%
confidence (``kll_doubles_sketch.get_normalized_rank_error(k, False)``; about 0.0033 for the
default ``k = 1000``).

The quantile function is then read on the midpoint grid of :math:`M` ranks, so each returned
quantile :math:`\tilde Q(u)` lies between :math:`Q(u - \delta)` and :math:`Q(u + \delta)` with
:math:`\delta = \varepsilon + 1 / (2M)`, and for a sample of range :math:`R`

.. math:: \int_0^1 |\tilde Q(u) - Q(u)|\,du \le \int_0^1 Q(u + \delta) - Q(u - \delta)\,du
          \le 2 \delta R.

By the triangle inequality every :math:`W_1` the sketch path returns is within
:math:`2\delta (R_a + R_b)` of the exact one (:func:`w1_error_bound`).
"""

from __future__ import annotations

import math

import numpy as np

from fairot.dask._collections import compute, delayed
from fairot.transport import midpoint_grid

DEFAULT_K = 1000
# Grid levels per unit of rank error: the grid's own 1/(2M) then adds a tenth of epsilon.
LEVELS_PER_ERROR = 5
MSG_K = "sketch_k must be an integer in [8, 65535]; got {value!r}."


def check_sketch_k(k: int) -> int:
    """Validate the KLL parameter ``k``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 8 <= k <= 65535:
        raise ValueError(MSG_K.format(value=k))
    return int(k)


def rank_error(k: int) -> float:
    """Normalised rank error of one KLL quantile query at 99% confidence.

    Parameters
    ----------
    k : int
        The KLL parameter (larger: more accurate, bigger sketches).

    Returns
    -------
    float

    Examples
    --------
    >>> from fairot.dask import rank_error
    >>> round(rank_error(1000), 4)
    0.0028
    """
    from datasketches import kll_doubles_sketch

    return float(kll_doubles_sketch.get_normalized_rank_error(k, False))


def n_levels(k: int) -> int:
    """Grid size :math:`M` used to read a sketch's quantile function."""
    return int(LEVELS_PER_ERROR * math.ceil(1.0 / rank_error(k)))


def w1_error_bound(k: int, range_a: float, range_b: float) -> float:
    r"""Bound :math:`2\delta(R_a + R_b)` on the error of a sketched :math:`W_1`.

    Parameters
    ----------
    k : int
        The KLL parameter.
    range_a, range_b : float
        ``max - min`` of the two samples (for scores in [0, 1], at most 1).

    Returns
    -------
    float
        The bound, holding when every sketched quantile is within the sketch's 99% rank error
        (see :mod:`fairot.dask._sketch`).

    Examples
    --------
    >>> from fairot.dask import w1_error_bound
    >>> round(w1_error_bound(1000, 1.0, 1.0), 4)
    0.0122
    """
    delta = rank_error(k) + 1.0 / (2 * n_levels(k))
    return 2.0 * delta * (range_a + range_b)


def _sketch_block(labels: list[np.ndarray], k: int) -> list[bytes]:
    from datasketches import kll_doubles_sketch

    out = []
    for values in labels:
        sketch = kll_doubles_sketch(k)
        if values.shape[0]:
            sketch.update(np.ascontiguousarray(values, dtype=np.float64))
        out.append(sketch.serialize())
    return out


def _merge(blocks: list[list[bytes]]) -> list[bytes]:
    from datasketches import kll_doubles_sketch

    merged = [kll_doubles_sketch.deserialize(b) for b in blocks[0]]
    for block in blocks[1:]:
        for sketch, other in zip(merged, block, strict=True):
            sketch.merge(kll_doubles_sketch.deserialize(other))
    return [s.serialize() for s in merged]


def sketch_curves(
    label_blocks: list, k: int, split_every: int = 8
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each label's quantile curve on the midpoint grid, from merged KLL sketches.

    Returns
    -------
    curves : numpy.ndarray of shape (L, M)
        Sorted quantiles of each label at ranks :func:`fairot.transport.midpoint_grid` (M).
    ranges : numpy.ndarray of shape (L,)
        Exact ``max - min`` of each label (kept by the sketch).
    counts : numpy.ndarray of shape (L,)
        Number of values of each label.
    """
    from datasketches import kll_doubles_sketch

    level = [delayed(_sketch_block)(b, k) for b in label_blocks]
    while len(level) > 1:
        level = [
            delayed(_merge)(level[i : i + split_every]) for i in range(0, len(level), split_every)
        ]
    (merged,) = compute(level[0])
    sketches = [kll_doubles_sketch.deserialize(b) for b in merged]
    grid = midpoint_grid(n_levels(k))
    curves = np.stack([np.sort(np.asarray(s.get_quantiles(grid))) for s in sketches])
    ranges = np.array([s.get_max_value() - s.get_min_value() for s in sketches])
    counts = np.array([s.n for s in sketches])
    return curves, ranges, counts
