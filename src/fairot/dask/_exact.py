r"""Exact quantile functions of Dask data: a distributed sort, then the rank axis window by window.

The in-memory metrics integrate :math:`|Q_a(u) - Q_b(u)|^p` exactly over the cells between the
joint breakpoints of the groups' quantile functions (``fairot.transport``). Here each group (and
the pooled sample) is sorted across the cluster by sample sort: regular samples of every
partition give splitters, each partition is cut at the splitters, and each bucket is sorted on one
worker, so that bucket ``j`` of group ``a`` holds its elements of global ranks
``offset[j] .. offset[j + 1]``. The rank axis is then cut into windows at breakpoints of the
pooled (reference) sample; a window needs only the elements of each group whose rank cells meet
it, a few bucket slices, and sums the same cells as the in-memory code. Memory per task is
bounded by a few buckets, whose size is the largest partition's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fairot.dask._collections import compute, delayed
from fairot.transport import MASS_TOLERANCE, barycenter_quantiles

# Regular samples taken from each sorted partition and label to place the splitters: with s
# samples per partition a bucket exceeds its target size by at most about n_partitions / s of it.
SAMPLES_PER_PARTITION = 256


@dataclass
class SortedLabels:
    """Every label's sorted sample as a list of sorted chunks on the cluster.

    Attributes
    ----------
    chunks : list of list of Delayed
        ``chunks[l][j]``: sorted values of bucket ``j`` of label ``l`` (computed lazily).
    counts : list of numpy.ndarray
        Number of values in each bucket.
    """

    chunks: list[list]
    counts: list[np.ndarray]

    @property
    def sizes(self) -> list[int]:
        """Number of values of each label."""
        return [int(c.sum()) for c in self.counts]

    def offsets(self, label: int) -> np.ndarray:
        """Global rank of the first element of each bucket of ``label``, then its size."""
        return np.concatenate(([0], np.cumsum(self.counts[label])))

    def slice(self, label: int, lo: int, hi: int) -> list:
        """Lazy pieces holding the elements ``lo .. hi - 1`` of ``label``'s sorted sample."""
        off = self.offsets(label)
        pieces = []
        for j in range(len(self.chunks[label])):
            a, b = max(lo, off[j]), min(hi, off[j + 1])
            if a < b:
                pieces.append(_take(self.chunks[label][j], int(a - off[j]), int(b - off[j])))
        return pieces

    def gather(self, label: int) -> np.ndarray:
        """The whole sorted sample of ``label`` in local memory (size: the label's count)."""
        (parts,) = compute(self.chunks[label])
        return np.concatenate(parts) if parts else np.empty(0)


def _take(chunk, a: int, b: int):
    return delayed(_slice_array)(chunk, a, b)


def _slice_array(x: np.ndarray, a: int, b: int) -> np.ndarray:
    return x[a:b]


def _regular_sample(labels: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    counts = np.array([v.shape[0] for v in labels])
    samples = []
    for v in labels:
        if v.shape[0] == 0:
            samples.append(v)
            continue
        s = np.sort(v)
        take = min(SAMPLES_PER_PARTITION, s.shape[0])
        samples.append(s[((np.arange(take) + 0.5) * s.shape[0] / take).astype(np.int64)])
    return counts, samples


def _splitters(samples: list[np.ndarray], weights: list[float], n_buckets: int) -> np.ndarray:
    """Values cutting the weighted regular samples into ``n_buckets`` equal masses."""
    if n_buckets <= 1:
        return np.empty(0)
    values = np.concatenate(samples)
    mass = np.concatenate([np.full(s.shape[0], w) for s, w in zip(samples, weights, strict=True)])
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(mass[order])
    targets = cum[-1] * np.arange(1, n_buckets) / n_buckets
    picks = np.minimum(np.searchsorted(cum, targets), values.shape[0] - 1)
    return np.unique(values[order][picks])


def _bucket_counts(labels: list[np.ndarray], splitters: list[np.ndarray]) -> list[np.ndarray]:
    return [
        np.bincount(np.searchsorted(t, v, side="right"), minlength=t.shape[0] + 1)
        for v, t in zip(labels, splitters, strict=True)
    ]


def _split(labels: list[np.ndarray], splitters: list[np.ndarray]) -> list[list[np.ndarray]]:
    out = []
    for v, t in zip(labels, splitters, strict=True):
        s = np.sort(v)
        cuts = np.searchsorted(s, t, side="left")
        out.append(np.split(s, cuts))
    return out


def _merge_sorted(pieces: list[np.ndarray]) -> np.ndarray:
    return np.sort(np.concatenate(pieces)) if pieces else np.empty(0)


def sort_labels(label_blocks: list, chunk_rows: int) -> SortedLabels:
    """Sort every label's values across the cluster (sample sort, see the module docstring).

    Parameters
    ----------
    label_blocks : list of Delayed
        One per partition, each computing a list of ``L`` arrays: the partition's values of
        each label.
    chunk_rows : int
        Target size of a sorted bucket (the largest partition's length keeps the memory of every
        task within a few partitions).

    Returns
    -------
    SortedLabels
    """
    sampled = compute(*[delayed(_regular_sample)(b) for b in label_blocks])
    n_labels = len(sampled[0][1])
    splitters = []
    for label in range(n_labels):
        counts = [c[label] for c, _ in sampled]
        samples = [s[label] for _, s in sampled]
        weights = [c / max(s.shape[0], 1) for c, s in zip(counts, samples, strict=True)]
        n_buckets = max(1, math.ceil(sum(counts) / chunk_rows))
        splitters.append(_splitters(samples, weights, n_buckets))
    per_block = compute(*[delayed(_bucket_counts)(b, splitters) for b in label_blocks])
    counts = [sum(block[label] for block in per_block) for label in range(n_labels)]
    splits = [delayed(_split)(b, splitters) for b in label_blocks]
    chunks = [
        [
            delayed(_merge_sorted)([split[label][j] for split in splits])
            for j in range(splitters[label].shape[0] + 1)
        ]
        for label in range(n_labels)
    ]
    return SortedLabels(chunks, counts)


@dataclass
class WindowSums:
    r"""Sums over the rank axis, added window by window.

    Attributes
    ----------
    power : dict of float to numpy.ndarray of shape (L, L)
        ``power[p][a, b]`` is :math:`\int_0^1 |Q_a - Q_b|^p du` for ``p = 1``, the largest gap
        over cells of positive mass for ``p = inf``, and for any other ``p`` the same integral
        of the gaps divided by :math:`2^{e_{ab}}`, ``e = exponent``, a power of two near the
        pair's largest gap (so that ``|gap|**p`` neither overflows nor underflows at p = 1000 or
        at values near 1e200; :meth:`distance` undoes the scale).
    to_barycenter : numpy.ndarray of shape (K,) or None
        :math:`\int_0^1 |Q_a - Q_{bar}| du` for the first ``K`` labels, with :math:`Q_{bar}`
        their weighted median at each rank (the W1 barycenter).
    exponent : numpy.ndarray of shape (L, L)
        The powers of two that scale the ``p ∉ {1, inf}`` sums, pair by pair.
    """

    power: dict
    to_barycenter: np.ndarray | None
    exponent: np.ndarray

    def __add__(self, other: WindowSums) -> WindowSums:
        exponent = np.maximum(self.exponent, other.exponent)
        power = {}
        for p, v in self.power.items():
            w = other.power[p]
            if math.isinf(p):
                power[p] = np.maximum(v, w)
            elif p == 1:
                power[p] = v + w
            else:
                # Bring both to the larger scale: factors 2^(-k p) <= 1 (exact or underflowing
                # to a negligible share, never overflowing).
                power[p] = _rescaled(v, self.exponent - exponent, p) + _rescaled(
                    w, other.exponent - exponent, p
                )
        bary = None if self.to_barycenter is None else self.to_barycenter + other.to_barycenter
        return WindowSums(power, bary, exponent)

    def distance(self, p: float) -> np.ndarray:
        """:math:`W_p` between every pair of labels, of shape (L, L)."""
        value = np.asarray(self.power[p], dtype=float)
        if p == 1 or math.isinf(p):
            return value
        with np.errstate(over="ignore"):
            # Past the float maximum the true distance is not representable: inf.
            return np.ldexp(value ** (1.0 / p), self.exponent)


#: The scale exponent of a pair without any gap in a window: below every real one (whose
#: smallest is about -2100, subnormal values over a gap), so merging never lets it win.
NO_GAP_EXPONENT = -(2**20)


def _rescaled(value: np.ndarray, shift: np.ndarray, p: float) -> np.ndarray:
    """``value * (2**shift) ** p`` for ``shift <= 0`` without overflow."""
    with np.errstate(under="ignore"):
        return value * np.exp2(shift * p)


def _scale_exponent(q: np.ndarray) -> int:
    """``e`` with every ``|q| / 2**e`` at most 1/2, so every gap of the scaled values is <= 1."""
    finite = np.abs(q[np.isfinite(q)])
    largest = float(finite.max()) if finite.size else 0.0
    return math.frexp(largest)[1] + 1 if largest > 0 else 0


def _window_cells(
    los: list[int], his: list[int], sizes: list[int], m0: int, m1: int, n_ref: int
) -> tuple[np.ndarray, np.ndarray]:
    """The joint quantile cells inside the rank window ``(m0 / n_ref, m1 / n_ref]``.

    The same cells as ``fairot.transport._coupling.joint_quantile_cells`` on the whole samples:
    integer units of ``1 / lcm(sizes)`` when that fits, else float breakpoints ``i / n`` merged
    within ``MASS_TOLERANCE``. Indices are local to the slice ``lo .. hi - 1`` of each label.
    """
    common = math.lcm(*sizes)
    if common < 2**62:
        steps = [common // n for n in sizes]
        e0, e1 = m0 * (common // n_ref), m1 * (common // n_ref)
        ends = np.concatenate(
            [
                np.arange(lo + 1, hi + 1, dtype=np.int64) * s
                for lo, hi, s in zip(los, his, steps, strict=True)
            ]
            + [np.array([e1], dtype=np.int64)]
        )
        ends = np.unique(ends[(ends > e0) & (ends <= e1)])
        index = np.stack([(ends + s - 1) // s - 1 - lo for lo, s in zip(los, steps, strict=True)])
        return index, np.diff(ends, prepend=e0) / common
    u0, u1 = m0 / n_ref, m1 / n_ref
    cums = [np.arange(lo + 1, hi + 1) / n for lo, hi, n in zip(los, his, sizes, strict=True)]
    breaks = np.unique(np.concatenate([*cums, [u1]]))
    breaks = breaks[(breaks > u0) & (breaks <= u1)]
    keep = np.diff(breaks, prepend=u0) > MASS_TOLERANCE
    keep[-1] = True
    breaks = breaks[keep]
    probe = breaks - MASS_TOLERANCE / 2
    index = np.stack(
        [np.minimum(np.searchsorted(c, probe, side="left"), c.shape[0] - 1) for c in cums]
    )
    return index, np.diff(breaks, prepend=u0)


def _window_sums(
    pieces: list[list[np.ndarray]],
    los: list[int],
    his: list[int],
    sizes: list[int],
    m0: int,
    m1: int,
    orders: tuple[float, ...],
    n_groups: int | None,
    group_weights: np.ndarray | None,
) -> WindowSums:
    values = [np.concatenate(p) for p in pieces]
    index, mass = _window_cells(los, his, sizes, m0, m1, sizes[-1])
    q = np.stack([v[i] for v, i in zip(values, index, strict=True)])
    n_labels = q.shape[0]
    # Gaps of values scaled by a power of two (exact): |q_a - q_b| cannot overflow, nor its
    # p-th power; W1 and W_inf are scaled back here, the other orders by WindowSums.distance.
    exponent = _scale_exponent(q)
    scaled = np.ldexp(q, -exponent)
    power = {p: np.zeros((n_labels, n_labels)) for p in orders}
    pair_exponent = np.zeros((n_labels, n_labels), dtype=int)
    heavy = mass > MASS_TOLERANCE
    with np.errstate(over="ignore"):
        for a in range(n_labels):
            for b in range(a + 1, n_labels):
                gap = np.abs(scaled[a] - scaled[b])
                # The pair's own power of two for the other orders: its largest gap in [1/2, 1).
                largest = float(gap.max()) if gap.size else 0.0
                shift = math.frexp(largest)[1]
                # A window with no gap for this pair must not set the merged scale.
                pair = exponent + shift if largest > 0 else NO_GAP_EXPONENT
                pair_exponent[a, b] = pair_exponent[b, a] = pair
                relative = np.ldexp(gap, -shift)
                for p in orders:
                    if math.isinf(p):
                        top = float(gap[heavy].max()) if heavy.any() else 0.0
                        value = float(np.ldexp(top, exponent))
                    elif p == 1:
                        value = float(np.ldexp(float(mass @ gap), exponent))
                    else:
                        value = float(mass @ relative**p)
                    power[p][a, b] = power[p][b, a] = value
        bary = None
        if n_groups is not None:
            median = barycenter_quantiles(scaled[:n_groups], group_weights, p=1)
            bary = np.ldexp(np.abs(scaled[:n_groups] - median) @ mass, exponent)
    return WindowSums(power, bary, pair_exponent)


def window_sums(
    sorted_labels: SortedLabels,
    orders: tuple[float, ...],
    *,
    n_groups: int | None = None,
    group_weights: np.ndarray | None = None,
    window_rows: int,
) -> WindowSums:
    """Integrals over ranks of every pair of labels' quantile gaps, summed window by window.

    Windows are cut at breakpoints of the last label (the reference, e.g. the pooled sample),
    each holding about ``window_rows`` of its elements; ``n_groups`` labels (the first ones) also
    get their W1 distance to their barycenter.
    """
    sizes = sorted_labels.sizes
    n_ref = sizes[-1]
    n_windows = max(1, math.ceil(n_ref / window_rows))
    marks = [n_ref * k // n_windows for k in range(n_windows + 1)]
    tasks = []
    for m0, m1 in zip(marks[:-1], marks[1:], strict=True):
        if m0 == m1:
            continue
        # Elements of label l whose rank cell [i/n, (i+1)/n) meets (m0/n_ref, m1/n_ref].
        los = [m0 * n // n_ref for n in sizes]
        his = [-((-m1 * n) // n_ref) for n in sizes]
        pieces = [
            sorted_labels.slice(label, lo, hi)
            for label, (lo, hi) in enumerate(zip(los, his, strict=True))
        ]
        tasks.append(
            delayed(_window_sums)(pieces, los, his, sizes, m0, m1, orders, n_groups, group_weights)
        )
    results = compute(*tasks)
    total = results[0]
    for r in results[1:]:
        total = total + r
    return total


def curve_sums(
    curves: np.ndarray,
    orders: tuple[float, ...],
    *,
    n_groups: int | None = None,
    group_weights: np.ndarray | None = None,
) -> WindowSums:
    """The integrals of :func:`window_sums` for quantile curves on one common grid of ranks.

    A sketch's quantile curves (``curves[l]``: label ``l`` at the ``m`` grid levels) are one
    window of ``m`` equal cells for every label, summed in local memory.
    """
    m = curves.shape[1]
    n_labels = curves.shape[0]
    return _window_sums(
        [[c] for c in curves],
        [0] * n_labels,
        [m] * n_labels,
        [m] * n_labels,
        0,
        m,
        orders,
        n_groups,
        group_weights,
    )
