r"""Euclidean projections used by the quantile adjustment (closed forms and Dykstra).

Every curve lives on the midpoint grid :math:`u_k = (k - 1/2)/M`, and distances use the *grid norm*

.. math:: \|h\|_p = \Big(\frac{1}{M}\sum_{k=1}^{M} |h_k|^p\Big)^{1/p}, \qquad
          \|h\|_\infty = \max_k |h_k|,

the discretisation of the quantile form of :math:`W_p` (Section 2.4 of [1]_). The ball
:math:`\{\|h\|_p \le \epsilon\}` is therefore the ordinary :math:`\ell_p` ball of radius
:math:`\epsilon M^{1/p}`.

References
----------
.. [1] "Fair Regression under Approximate Demographic Parity" (the regression seed paper).
.. [2] J. Duchi, S. Shalev-Shwartz, Y. Singer, T. Chandra, "Efficient projections onto the
   l1-ball for learning in high dimensions", ICML 2008.
"""

from __future__ import annotations

import numba
import numpy as np

from fairot.utils.compilation import install_compile_notice

install_compile_notice()  # one log line if a cold cache makes the first call compile long

__all__ = [
    "grid_norm",
    "pairwise_grid_distances",
    "project_l1_ball",
    "project_lp_ball",
    "project_monotone_box",
    "project_pair",
]


def grid_norm(h: np.ndarray, p: float, axis: int = -1) -> np.ndarray:
    r"""Grid norm :math:`((1/M)\sum_k |h_k|^p)^{1/p}` (or :math:`\max_k |h_k|` for ``p = inf``)."""
    a = np.abs(h)
    if np.isinf(p):
        return a.max(axis=axis)
    if p == 1:
        return a.mean(axis=axis)
    if p == 2:
        return np.sqrt(np.mean(a * a, axis=axis))
    return np.mean(a**p, axis=axis) ** (1.0 / p)


P_CODE = {1.0: 1, 2.0: 2}  # the compiled kernels' code for p (anything else, inf, is 0)


@numba.njit(inline="always")
def _norm_accumulate(acc, d, p_code):  # pragma: no cover - jit
    """One |difference| ``d`` into the running max (W∞), sum (W1) or sum of squares (W2)."""
    if p_code == 0:
        return max(acc, d)
    if p_code == 1:
        return acc + d
    return acc + d * d


@numba.njit(inline="always")
def _norm_finish(acc, m, p_code):  # pragma: no cover - jit
    """The grid norm from the accumulated value over ``m`` grid points."""
    if p_code == 1:
        return acc / m
    if p_code == 2:
        return np.sqrt(acc / m)
    return acc


@numba.njit(cache=True)
def curve_grid_norm(delta, p_code):  # pragma: no cover - jit
    """:func:`grid_norm` of one gap curve, compiled (``p_code`` of :data:`P_CODE`)."""
    acc = 0.0
    for k in range(delta.size):
        acc = _norm_accumulate(acc, abs(delta[k]), p_code)
    return _norm_finish(acc, delta.size, p_code)


@numba.njit(cache=True)
def grid_distance(x, i, j, p_code):  # pragma: no cover - jit
    """Grid distance between rows ``i`` and ``j`` of ``x`` (``p_code`` of :data:`P_CODE`)."""
    m = x.shape[1]
    acc = 0.0
    for k in range(m):
        acc = _norm_accumulate(acc, abs(x[i, k] - x[j, k]), p_code)
    return _norm_finish(acc, m, p_code)


@numba.njit(cache=True)
def _pairwise_distances(x, p_code):  # pragma: no cover - jit
    n_rows = x.shape[0]
    out = np.zeros((n_rows, n_rows))
    for i in range(n_rows):
        for j in range(i + 1, n_rows):
            out[i, j] = out[j, i] = grid_distance(x, i, j, p_code)
    return out


def pairwise_grid_distances(curves: np.ndarray, p: float) -> np.ndarray:
    """Matrix ``D[i, j] = ||curves[i] - curves[j]||_p`` (grid norm) of shape (K, K).

    Compiled pair by pair: memory stays O(K^2), not the O(K^2 M) of a broadcast difference
    (400 MB at K = 1000, M = 50).
    """
    curves = np.ascontiguousarray(curves, dtype=np.float64)
    p = float(p)
    if p not in (1.0, 2.0, np.inf):
        diff = curves[:, None, :] - curves[None, :, :]
        return grid_norm(diff, p, axis=-1)
    return _pairwise_distances(curves, P_CODE.get(p, 0))


def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    r"""Euclidean projection of ``v`` onto :math:`\{w : \sum_k |w_k| \le r\}` (Duchi et al. [2]_).

    The answer is the soft-threshold :math:`\mathrm{sgn}(v)(|v| - \lambda)_+` with :math:`\lambda`
    solved exactly by sorting (Table 1 of [1]_, case :math:`p = 1`).
    """
    a = np.abs(v)
    if a.sum() <= radius:
        return v.copy()
    if radius <= 0.0:
        return np.zeros_like(v)
    mu = np.sort(a)[::-1]
    cumulative = np.cumsum(mu)
    j = np.arange(1, mu.size + 1)
    # rho = the largest j with mu_j > (cumsum_j - r)/j (always >= 1 in exact arithmetic).
    holds = np.flatnonzero(mu * j > cumulative - radius)
    rho = holds[-1] + 1 if holds.size else 1
    lam = (cumulative[rho - 1] - radius) / rho
    return np.sign(v) * np.maximum(a - lam, 0.0)


def project_lp_ball(v: np.ndarray, p: float, epsilon: float) -> np.ndarray:
    r"""Euclidean projection of a gap curve onto the grid-norm ball :math:`\|h\|_p \le \epsilon`.

    ``p = 2``: scale by :math:`\min(1, \epsilon/\|v\|_2)`; ``p = 1``: soft-threshold with the exact
    threshold; ``p = inf``: clip to :math:`[-\epsilon, \epsilon]` (Table 1 of [1]_). ``epsilon = 0``
    gives the zero curve. An inactive constraint returns an exact copy of ``v``.

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    Grid norm 1 scaled to 1/2 (``p = 2``); clipping (``p = inf``); soft-thresholding by 1 so that
    the mean absolute value is 1 (``p = 1``):

    >>> import numpy as np
    >>> from fairot.regression import project_lp_ball
    >>> project_lp_ball(np.array([1.0, -1.0, 1.0, -1.0]), 2, 0.5)
    array([ 0.5, -0.5,  0.5, -0.5])
    >>> project_lp_ball(np.array([2.0, -0.2]), np.inf, 1.0)
    array([ 1. , -0.2])
    >>> project_lp_ball(np.array([3.0, 1.0]), 1, 1.0)
    array([2., 0.])
    """
    if epsilon <= 0.0:
        return np.zeros_like(v)
    if np.isinf(p):
        return np.clip(v, -epsilon, epsilon)
    if p == 2:
        norm = grid_norm(v, 2)
        if norm <= epsilon:
            return v.copy()
        return v * (epsilon / norm)
    if p == 1:
        return project_l1_ball(v, epsilon * v.size)
    raise ValueError(f"p must be 1, 2 or inf; got {p!r}.")


def project_pair(
    a_i: np.ndarray, a_j: np.ndarray, w_i: float, w_j: float, p: float, epsilon: float
) -> tuple[np.ndarray, np.ndarray]:
    r"""Weighted projection of the pair ``(a_i, a_j)`` onto :math:`\|Q_i - Q_j\|_p \le \epsilon`.

    Minimises :math:`w_i\|Q_i - a_i\|_2^2 + w_j\|Q_j - a_j\|_2^2`. Writing
    :math:`r_i = w_i/(w_i+w_j)`, the weighted mean :math:`\bar a = r_i a_i + r_j a_j` is kept,
    the gap :math:`\Delta^* = a_i - a_j` is projected onto the ball, and
    :math:`Q_i = \bar a + r_j\Delta`, :math:`Q_j = \bar a - r_i\Delta`
    (Section 2.5.1 and Appendix A.1 of [1]_: the cross term vanishes, so the problem splits into
    the mean and the gap).
    """
    delta_star = a_i - a_j
    delta = project_lp_ball(delta_star, p, epsilon)
    total = w_i + w_j
    r_i, r_j = w_i / total, w_j / total
    mean = r_i * a_i + r_j * a_j
    return mean + r_j * delta, mean - r_i * delta


@numba.njit(cache=True)
def pav_row(y, out, lower, upper, block_sum, block_len):  # pragma: no cover - jit
    """Pool-adjacent-violators on one row (uniform weights), clipped to ``[lower, upper]``.

    ``block_sum`` and ``block_len`` are scratch arrays of the row's length.
    """
    n_blocks = 0
    for k in range(y.size):
        block_sum[n_blocks] = y[k]
        block_len[n_blocks] = 1
        n_blocks += 1
        # merge while the previous block's mean exceeds the last one's
        while (
            n_blocks > 1
            and block_sum[n_blocks - 2] * block_len[n_blocks - 1]
            > block_sum[n_blocks - 1] * block_len[n_blocks - 2]
        ):
            block_sum[n_blocks - 2] += block_sum[n_blocks - 1]
            block_len[n_blocks - 2] += block_len[n_blocks - 1]
            n_blocks -= 1
    k = 0
    for b in range(n_blocks):
        value = block_sum[b] / block_len[b]
        value = min(max(value, lower), upper)
        for _ in range(block_len[b]):
            out[k] = value
            k += 1


@numba.njit(cache=True)
def _pav_rows(y: np.ndarray, lower: float, upper: float) -> np.ndarray:  # pragma: no cover - jit
    """:func:`pav_row` on every row of ``y``."""
    n_rows, n = y.shape
    out = np.empty_like(y)
    block_sum = np.empty(n)
    block_len = np.empty(n, dtype=np.int64)
    for r in range(n_rows):
        pav_row(y[r], out[r], lower, upper, block_sum, block_len)
    return out


def project_monotone_box(curves: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    r"""Project each row onto nondecreasing vectors inside ``[a, b]`` (Euclidean norm).

    Pool-adjacent-violators followed by clipping: clipping the isotonic fit to the box is the
    projection onto the intersection (the bounded isotonic regression), so one set of Dykstra's
    splitting covers both the ordering and the range constraints of problem (6) of [1]_.

    References
    ----------
    .. [1] "Fair Regression under Approximate Demographic Parity" (regression seed paper).

    Examples
    --------
    The same as scikit-learn's bounded isotonic regression of each row:

    >>> import numpy as np
    >>> from sklearn.isotonic import isotonic_regression
    >>> from fairot.regression import project_monotone_box
    >>> curves = np.array([[3.0, 1.0, 2.0], [-1.0, 0.5, 4.0]])
    >>> project_monotone_box(curves, (0.0, 2.5))
    array([[2. , 2. , 2. ],
           [0. , 0.5, 2.5]])
    >>> np.vstack([isotonic_regression(row, y_min=0.0, y_max=2.5) for row in curves])
    array([[2. , 2. , 2. ],
           [0. , 0.5, 2.5]])
    """
    curves = np.ascontiguousarray(curves, dtype=np.float64)
    if np.all(np.diff(curves, axis=1) >= 0.0):
        return np.clip(curves, bounds[0], bounds[1])
    return _pav_rows(curves, float(bounds[0]), float(bounds[1]))
