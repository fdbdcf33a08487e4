r"""The exact one-dimensional optimal coupling and Wasserstein distances.

In one dimension, for any cost convex in :math:`|x - y|`, the optimal coupling matches quantiles:
:math:`W_p^p(\mu, \nu) = \int_0^1 |Q_\mu(u) - Q_\nu(u)|^p\,du`. The quantile functions are step
functions, so the integral is an exact finite sum over the cells between their joint breakpoints
(the north-west-corner rule on the sorted samples).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from fairot.transport._quantiles import MASS_TOLERANCE, cumulative_levels
from fairot.utils.arrays import check_array_1d, check_sample_weight

MSG_P = "p must be a number >= 1 or numpy.inf; got {value!r}."
MSG_COUPLING_SIZES = (
    "SortedCoupling of samples of sizes {expected} was given samples of sizes {got}."
)

# Largest quantile gaps in this range are squared and summed as they are; outside it they are
# divided by the largest first (W_p is homogeneous).
SAFE_SCALE = (1e-100, 1e100)


def check_p(p: float | str) -> float:
    """Validate the order ``p`` of a Wasserstein distance; ``"inf"`` is accepted.

    Examples
    --------
    >>> from fairot.transport import check_p
    >>> check_p(2), check_p("inf")
    (2.0, inf)
    """
    if isinstance(p, str) and p.lower() in ("inf", "infinity"):
        return math.inf
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise ValueError(MSG_P.format(value=p)) from None
    if not value >= 1:
        raise ValueError(MSG_P.format(value=p))
    return value


def joint_quantile_cells(
    sorted_samples: Sequence[np.ndarray],
    sorted_weights: Sequence[np.ndarray | None],
) -> tuple[np.ndarray, np.ndarray]:
    """Cells of the rank axis on which every sample's quantile function is constant.

    Parameters
    ----------
    sorted_samples : sequence of K sorted arrays
        The samples, each sorted nondecreasingly.
    sorted_weights : sequence of K arrays or None
        Weights in the same order as the sorted samples; ``None`` for equal weights.

    Returns
    -------
    index : numpy.ndarray of int of shape (K, n_cells)
        ``index[k, l]`` is the position, in sorted sample ``k``, of its quantile on cell ``l``.
    mass : numpy.ndarray of shape (n_cells,)
        Width of each cell (the probability mass moved there); the widths sum to 1.

    Examples
    --------
    Two and three equally weighted points share the cells of the common refinement 1/6:

    >>> import numpy as np
    >>> from fairot.transport import joint_quantile_cells
    >>> index, mass = joint_quantile_cells([np.array([0.0, 1.0]), np.arange(3.0)], [None, None])
    >>> index.tolist(), mass.round(4).tolist()
    ([[0, 0, 1, 1], [0, 1, 1, 2]], [0.3333, 0.1667, 0.1667, 0.3333])
    """
    return _cells([s.shape[0] for s in sorted_samples], sorted_weights)


def _cells(
    sizes: list[int], sorted_weights: Sequence[np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`joint_quantile_cells` from the sizes (and weights) alone: values never enter."""
    if all(w is None for w in sorted_weights):
        common = math.lcm(*sizes)
        if common < 2**62:
            return _integer_cells(sizes, common)
    cums = [cumulative_levels(w, n) for w, n in zip(sorted_weights, sizes, strict=True)]
    # Breakpoints of different samples closer than the mass tolerance are one breakpoint: a
    # sliver of spurious mass would otherwise create a fake quantile gap for W-infinity.
    breaks = _sorted_unique(np.concatenate(cums))
    keep = np.diff(breaks, prepend=0.0) > MASS_TOLERANCE
    keep[-1] = True
    breaks = breaks[keep]
    breaks[-1] = 1.0
    mass = np.diff(breaks, prepend=0.0)
    # Evaluating just left of each cell's right end is robust to breakpoints that differ by
    # rounding noise only.
    probe = breaks - MASS_TOLERANCE / 2
    index = np.stack(
        [
            np.minimum(np.searchsorted(c, probe, side="left"), n - 1)
            for c, n in zip(cums, sizes, strict=True)
        ]
    )
    return index, mass


def _integer_cells(sizes: list[int], common: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact cells for unweighted samples, in integer units of ``1/common``."""
    if len(set(sizes)) == 1:
        n = sizes[0]
        index = np.tile(np.arange(n), (len(sizes), 1))
        return index, np.full(n, 1.0 / n)
    steps = [common // n for n in sizes]
    ends = _sorted_unique(
        np.concatenate(
            [np.arange(1, n + 1, dtype=np.int64) * s for n, s in zip(sizes, steps, strict=True)]
        )
    )
    # The sample-k quantile on the cell ending at e is its element ceil(e / step_k) - 1.
    index = np.stack([(ends + s - 1) // s - 1 for s in steps])
    mass = np.diff(ends, prepend=0) / common
    return index, mass


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values; one sort, cheaper than numpy's hash-based ``unique`` here."""
    values = np.sort(values)
    keep = np.empty(values.shape[0], dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _sorted_inputs(
    u: ArrayLike,
    v: ArrayLike,
    u_weights: ArrayLike | None,
    v_weights: ArrayLike | None,
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray | None]]:
    xs = [check_array_1d(u, "u_values"), check_array_1d(v, "v_values")]
    ws = [
        check_sample_weight(u_weights, xs[0].shape[0], "u_weights"),
        check_sample_weight(v_weights, xs[1].shape[0], "v_weights"),
    ]
    orders = [np.argsort(x, kind="stable") for x in xs]
    return (
        orders,
        [x[o] for x, o in zip(xs, orders, strict=True)],
        [None if w is None else w[o] for w, o in zip(ws, orders, strict=True)],
    )


def optimal_coupling_1d(
    u: ArrayLike,
    v: ArrayLike,
    u_weights: ArrayLike | None = None,
    v_weights: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The optimal transport plan between two 1-D empirical distributions, in sparse form.

    Sorting both samples and sweeping their cumulative weights (the north-west-corner rule) gives
    a plan that is optimal for every cost :math:`c(x, y) = h(|x - y|)` with :math:`h` convex; it
    has at most ``n + m - 1`` nonzero entries. This is the coupling :math:`T^*_a` of Eq. (8) of the
    COT paper for the :math:`L^1` cost.

    Parameters
    ----------
    u, v : array-like of shape (n,) and (m,)
        The two samples.
    u_weights, v_weights : array-like, optional
        Non-negative weights (equal by default); each is normalised to sum to 1.

    Returns
    -------
    rows : numpy.ndarray of int
        Indices into ``u`` (its original order).
    cols : numpy.ndarray of int
        Indices into ``v``.
    mass : numpy.ndarray
        Mass moved from ``u[rows[l]]`` to ``v[cols[l]]``; the masses sum to 1 and have marginals
        equal to the normalised weights.

    See Also
    --------
    wasserstein_1d : the cost of this plan.

    Examples
    --------
    The smaller point of ``u`` goes to the smaller point of ``v``:

    >>> from fairot.transport import optimal_coupling_1d
    >>> rows, cols, mass = optimal_coupling_1d([0.0, 1.0], [5.0, 3.0])
    >>> rows.tolist(), cols.tolist(), mass.tolist()
    ([0, 1], [1, 0], [0.5, 0.5])
    """
    orders, xs, ws = _sorted_inputs(u, v, u_weights, v_weights)
    index, mass = joint_quantile_cells(xs, ws)
    return orders[0][index[0]], orders[1][index[1]], mass


def wasserstein_1d(
    u: ArrayLike,
    v: ArrayLike,
    p: float | str = 1,
    u_weights: ArrayLike | None = None,
    v_weights: ArrayLike | None = None,
) -> float:
    r"""Exact p-Wasserstein distance between two 1-D empirical distributions.

    .. math::

        W_p(\mu, \nu) = \Big(\int_0^1 |Q_\mu(u) - Q_\nu(u)|^p\,du\Big)^{1/p},
        \qquad W_\infty(\mu, \nu) = \sup_{u} |Q_\mu(u) - Q_\nu(u)|,

    with :math:`Q` the empirical quantile functions.

    Parameters
    ----------
    u, v : array-like of shape (n,) and (m,)
        The two samples; sizes may differ.
    p : float or "inf", default=1
        Order, ``1 <= p <= inf``.
    u_weights, v_weights : array-like, optional
        Non-negative sample weights.

    Returns
    -------
    float
        The distance.

    Examples
    --------
    Shifting {0, 1} by 2 costs 2 in every order:

    >>> from fairot.transport import wasserstein_1d
    >>> wasserstein_1d([0.0, 1.0], [2.0, 3.0]), wasserstein_1d([0.0, 1.0], [2.0, 3.0], p="inf")
    (2.0, 2.0)
    >>> wasserstein_1d([0.0, 1.0], [0.0, 3.0], p=2) ** 2  # (0**2 + 2**2) / 2
    2.0
    """
    p = check_p(p)
    if u_weights is None and v_weights is None:
        # No weights to carry along: a plain sort is several times faster than an argsort.
        x = np.sort(check_array_1d(u, "u_values"))
        y = np.sort(check_array_1d(v, "v_values"))
        return wasserstein_sorted(x, y, p)
    _, xs, ws = _sorted_inputs(u, v, u_weights, v_weights)
    return wasserstein_sorted(xs[0], xs[1], p, ws[0], ws[1])


def wasserstein_sorted(
    x: np.ndarray,
    y: np.ndarray,
    p: float,
    x_weights: np.ndarray | None = None,
    y_weights: np.ndarray | None = None,
) -> float:
    r""":func:`wasserstein_1d` on already sorted, validated samples (no checks, no copies).

    Parameters
    ----------
    x, y : numpy.ndarray
        Samples sorted nondecreasingly.
    p : float
        The order, at least 1 (``inf`` for the largest quantile gap).
    x_weights, y_weights : numpy.ndarray or None
        Weights in the sorted order, or ``None`` for equal weights.

    Returns
    -------
    float
        :math:`W_p(x, y) = (\int_0^1 |F_x^{-1}(u) - F_y^{-1}(u)|^p du)^{1/p}`.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import wasserstein_distance
    >>> from fairot.transport import wasserstein_sorted
    >>> x, y = np.array([0.0, 1.0, 3.0]), np.array([0.5, 2.0])
    >>> bool(np.isclose(wasserstein_sorted(x, y, 1.0), wasserstein_distance(x, y)))
    True
    """
    return wasserstein_sorted_orders(x, y, (p,), x_weights, y_weights)[0]


def wasserstein_sorted_orders(
    x: np.ndarray,
    y: np.ndarray,
    orders: tuple[float, ...],
    x_weights: np.ndarray | None = None,
    y_weights: np.ndarray | None = None,
) -> list[float]:
    """W_p for several orders p from one coupling of two sorted samples.

    Parameters
    ----------
    x, y : numpy.ndarray
        Samples sorted nondecreasingly.
    orders : tuple of float
        The orders p, each at least 1 (``inf`` allowed).
    x_weights, y_weights : numpy.ndarray or None
        Weights in the sorted order, or ``None`` for equal weights.

    Returns
    -------
    list of float
        One distance per order, in the order given.

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.transport import wasserstein_sorted_orders
    >>> [float(d) for d in wasserstein_sorted_orders(np.array([0.0, 1.0]), np.array([1.0, 3.0]),
    ...                                               (1.0, 2.0, np.inf))]
    [1.5, 1.5811388300841898, 2.0]
    """
    return SortedCoupling.of(x, y, x_weights, y_weights).distances(x, y, orders)


class SortedCoupling(NamedTuple):
    r"""The optimal coupling of two sorted samples, as cells of the rank axis, kept for reuse.

    :math:`W_p^p(x, y) = \sum_l m_l\,|x_{i_l} - y_{j_l}|^p` over the cells :math:`l` of
    :func:`joint_quantile_cells` (positions :math:`i_l, j_l` in the sorted samples, mass
    :math:`m_l`). Without weights the cells depend on the two sizes only, so the distances of
    many samples of fixed sizes to one fixed reference (a fit's history, recorded a hundred
    times against the same target) cut them once: :meth:`unweighted`, then :meth:`distances`
    on each new sorted sample. :func:`wasserstein_sorted_orders` is
    ``SortedCoupling.of(x, y, ...).distances(x, y, orders)``, so both give the same floats.

    Attributes
    ----------
    sizes : tuple of int
        The sizes ``(n, m)`` of the two samples.
    index : numpy.ndarray of int of shape (2, n_cells) or None
        Positions in the sorted samples of each cell's quantiles; ``None`` for two unweighted
        samples of one size (cell ``l`` pairs the ``l``-th points).
    mass : numpy.ndarray of shape (n_cells,) or None
        The cells' masses (summing to 1); ``None``: equal masses.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import wasserstein_distance
    >>> from fairot.transport import SortedCoupling
    >>> reference = np.sort(np.random.default_rng(0).uniform(size=7))
    >>> coupling = SortedCoupling.unweighted(3, 7)
    >>> x = np.array([0.1, 0.5, 0.6])
    >>> d = coupling.distances(x, reference, (1.0,))[0]
    >>> bool(np.isclose(d, wasserstein_distance(x, reference)))
    True
    """

    sizes: tuple[int, int]
    index: np.ndarray | None
    mass: np.ndarray | None

    @classmethod
    def of(
        cls,
        x: np.ndarray,
        y: np.ndarray,
        x_weights: np.ndarray | None = None,
        y_weights: np.ndarray | None = None,
    ) -> SortedCoupling:
        """The coupling of sorted ``x`` and ``y`` (weights in their sorted order, or ``None``)."""
        if x_weights is None and y_weights is None:
            return cls.unweighted(x.shape[0], y.shape[0])
        sizes = (x.shape[0], y.shape[0])
        return cls(sizes, *_cells(list(sizes), [x_weights, y_weights]))

    @classmethod
    def unweighted(cls, n: int, m: int) -> SortedCoupling:
        """The coupling of any two unweighted sorted samples of sizes ``n`` and ``m``."""
        if n == m:
            return cls((n, m), None, None)
        return cls((n, m), *_cells([n, m], [None, None]))

    def distances(self, x: np.ndarray, y: np.ndarray, orders: tuple[float, ...]) -> list[float]:
        """:math:`W_p(x, y)` for each order ``p`` (``inf`` allowed), on these cells.

        ``x`` and ``y`` are sorted samples of the coupling's sizes (not checked for order).
        """
        if (x.shape[0], y.shape[0]) != self.sizes:
            raise ValueError(
                MSG_COUPLING_SIZES.format(expected=self.sizes, got=(x.shape[0], y.shape[0]))
            )
        xs, ys = (x, y) if self.index is None else (x[self.index[0]], y[self.index[1]])
        with np.errstate(over="ignore"):
            gaps = np.abs(xs - ys)
        factor = 1.0
        if not np.isfinite(gaps.max()):
            # Finite samples near the float limit whose difference overflows: halving both
            # sides is exact, and W_p is homogeneous.
            gaps, factor = np.abs(0.5 * xs - 0.5 * ys), 2.0
        return [factor * _lp_norm(gaps, self.mass, p) for p in orders]


def _lp_norm(gaps: np.ndarray, mass: np.ndarray | None, p: float) -> float:
    r"""``(sum mass * gaps**p) ** (1/p)``, safe from overflow and underflow; ``mass=None``: equal.

    :math:`W_p` is homogeneous, so the gaps are divided by the largest one first: the powers of
    the ratios lie in [0, 1] and cannot overflow, and the largest term is its own mass, so the
    sum cannot underflow. For ``p > 2`` the sum is taken in log space,
    :math:`\log \sum_l m_l r_l^p = \operatorname{logsumexp}(\log m_l + p \log r_l)`, which keeps
    every term (a ratio of .5 to the power 1000 is below the smallest float).
    """
    if math.isinf(p):
        if mass is not None:
            gaps = gaps[mass > MASS_TOLERANCE]
        return float(gaps.max())
    scale = float(gaps.max())
    if scale == 0.0:
        return 0.0
    if p in (1, 2) and SAFE_SCALE[0] <= scale <= SAFE_SCALE[1]:
        # Squares of such gaps stay far inside the float range, and the gaps that underflow
        # weigh less than 1e-100 of the total: the division below would only cost time.
        ratios, scale = gaps, 1.0
    else:
        ratios = gaps / scale
    if p == 1:
        total = float(ratios.mean()) if mass is None else float(mass @ ratios)
        return scale * total
    if p == 2:
        total = float((ratios * ratios).mean()) if mass is None else float(mass @ (ratios * ratios))
        return scale * math.sqrt(total)
    keep = ratios > 0 if mass is None else (ratios > 0) & (mass > 0)
    log_terms = p * np.log(ratios[keep])
    if mass is None:
        log_terms -= math.log(ratios.shape[0])
    else:
        log_terms += np.log(mass[keep])
    top = float(log_terms.max())
    log_total = top + math.log(float(np.exp(log_terms - top).sum()))
    return scale * math.exp(log_total / p)
