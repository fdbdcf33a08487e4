r"""Stage 4 of the estimator: exact calibration quantiles, the prediction tables and their look-up.

A new score :math:`x` of group :math:`s` is ranked among the group's :math:`n_s` sorted calibration
scores, and its rank can only be one of the :math:`n_s + 1` levels :math:`\hat F_s(x)`. The
fitted estimator therefore tabulates its prediction at every possible level once
(:func:`prediction_tables`) and predicting is one merge of the sorted new scores with the
calibration scores (:func:`table_indices`): no interpolation per prediction, and one value per
rank, whatever the other rows of the call.

The quantile convention is the linear interpolation between order statistics at position
:math:`u(n - 1)` (NumPy's ``method="linear"``, the empirical quantile function of EquiPy and of
Chzhen et al., 2020), generalised to frequency weights: a row of weight :math:`w` counts as
:math:`w` rows, so that integer weights equal replicated rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _quantile_at(x, cum_w, total, u, shift, inv_scale, cursor):  # pragma: no cover - compiled
    """Quantile of the sorted sample ``x`` at level ``u``, in the scaled unit ``x*inv_scale-shift``.

    ``cum_w`` empty means unit weights (direct indexing); otherwise the cursor in ``cursor[0:2]``
    only moves forwards, so nondecreasing levels visit ``x`` once.
    """
    n = x.shape[0]
    position = u * (total - 1.0)
    if position < 0.0:
        position = 0.0
    row = math.floor(position)
    frac = position - row
    if cum_w.shape[0] == 0:
        lo = min(int(row), n - 1)
        hi = min(lo + 1, n - 1)
    else:
        lo = cursor[0]
        while lo < n - 1 and cum_w[lo] <= row:
            lo += 1
        hi = max(cursor[1], lo)
        while hi < n - 1 and cum_w[hi] <= row + 1.0:
            hi += 1
        cursor[0] = lo
        cursor[1] = hi
    a = x[lo] * inv_scale - shift
    b = x[hi] * inv_scale - shift
    return a + frac * (b - a)


@numba.njit(cache=True, nogil=True)
def _curve_at(curve, u):  # pragma: no cover - compiled
    """A curve on the midpoint grid at rank ``u``: linear between nodes, constant beyond them."""
    n_grid = curve.shape[0]
    if n_grid == 1:
        return curve[0]
    position = u * n_grid - 0.5
    cell = min(max(math.floor(position), 0.0), n_grid - 2.0)
    weight = min(max(position - cell, 0.0), 1.0)
    k = int(cell)
    return curve[k] + weight * (curve[k + 1] - curve[k])


@numba.njit(cache=True, nogil=True)
def _quantiles(x, cum_w, total, levels, shift, inv_scale, out):  # pragma: no cover - compiled
    cursor = np.zeros(2, dtype=np.intp)
    for t in range(levels.shape[0]):
        out[t] = _quantile_at(x, cum_w, total, levels[t], shift, inv_scale, cursor)


@numba.njit(cache=True, nogil=True)
def _table(
    levels,
    group,
    samples,
    offsets,
    cum_w,
    totals,
    shares,
    own_share,
    residual,
    shift,
    inv_scale,
    centre,
    scale,
    out,
):  # pragma: no cover - compiled
    n_groups = offsets.shape[0] - 1
    cursors = np.zeros((n_groups, 2), dtype=np.intp)
    running = -np.inf
    for t in range(levels.shape[0]):
        u = levels[t]
        barycenter = 0.0
        own = 0.0
        for g in range(n_groups):
            x = samples[offsets[g] : offsets[g + 1]]
            w = cum_w[offsets[g] : offsets[g + 1]] if cum_w.shape[0] else cum_w
            q = _quantile_at(x, w, totals[g], u, shift, inv_scale, cursors[g])
            barycenter += shares[g] * q
            if g == group:
                own = q
        value = own_share * own + (1.0 - own_share) * barycenter + _curve_at(residual, u)
        # A running maximum keeps the map nondecreasing (within-group order preserved) where the
        # linear residual dips inside a grid cell (at tau = 0 the residual is zero). Only ranks
        # a score can have count: none stops inside a run of equal calibration scores, and
        # those entries must not lift the rest (else weights would differ from repeated rows).
        own_sample = samples[offsets[group] : offsets[group + 1]]
        reachable = t == 0 or t == own_sample.shape[0] or own_sample[t - 1] < own_sample[t]
        if reachable:
            running = max(running, value)
        out[t] = centre + running * scale


@numba.njit(cache=True, nogil=True)
def _table_indices(scores, codes, order, samples, offsets, tolerance, out):  # pragma: no cover
    cursor = offsets[:-1].copy()
    for t in range(order.shape[0]):
        i = order[t]
        g = codes[i]
        threshold = scores[i] + tolerance
        j = cursor[g]
        end = offsets[g + 1]
        while j < end and samples[j] <= threshold:
            j += 1
        cursor[g] = j
        # group g's table starts at offsets[g] + g: it has one entry more than samples
        out[i] = j + g


def frequency_quantiles(
    sorted_samples: np.ndarray,
    levels: np.ndarray,
    cumulative_weights: np.ndarray | None = None,
    *,
    shift: float = 0.0,
    inv_scale: float = 1.0,
) -> np.ndarray:
    r"""Linear-interpolation quantiles of a sorted sample at nondecreasing levels.

    With unit weights, :math:`Q(u) = x_{(j)} + f\,(x_{(j+1)} - x_{(j)})`, :math:`j + f = u(n-1)`
    (``numpy.quantile(..., method="linear")``). With frequency weights, the same on the sample in
    which row :math:`i` is repeated :math:`w_i` times, :math:`n = \sum_i w_i`.

    Parameters
    ----------
    sorted_samples : numpy.ndarray of shape (n,)
        Sample in nondecreasing order.
    levels : numpy.ndarray of shape (m,)
        Nondecreasing levels in [0, 1].
    cumulative_weights : numpy.ndarray of shape (n,), optional
        Cumulative frequency weights of the sorted sample; ``None`` for unit weights.
    shift, inv_scale : float
        The result is in the unit :math:`x \cdot \mathrm{inv\_scale} - \mathrm{shift}`.

    Returns
    -------
    numpy.ndarray of shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.regression._readout import frequency_quantiles
    >>> frequency_quantiles(np.array([0.0, 1.0, 3.0]), np.array([0.25, 0.75]))
    array([0.5, 2. ])
    """
    x = np.ascontiguousarray(sorted_samples, dtype=np.float64)
    cum_w = _cumulative_or_empty(cumulative_weights)
    total = float(x.shape[0]) if cumulative_weights is None else float(cum_w[-1])
    out = np.empty(len(levels))
    levels = np.ascontiguousarray(levels, dtype=np.float64)
    _quantiles(x, cum_w, total, levels, shift, inv_scale, out)
    return out


def _cumulative_or_empty(cumulative_weights: np.ndarray | None) -> np.ndarray:
    if cumulative_weights is None:
        return np.empty(0)
    return np.ascontiguousarray(cumulative_weights, dtype=np.float64)


def prediction_tables(
    samples: list[np.ndarray],
    cumulative_weights: list[np.ndarray] | None,
    shares: np.ndarray,
    own_shares: np.ndarray,
    residuals: np.ndarray,
    *,
    shift: float,
    inv_scale: float,
    centre: float,
    scale: float,
) -> np.ndarray:
    r"""The prediction of each group at each of its possible calibration ranks, in the scaled unit.

    For group :math:`s` and rank :math:`u = \hat F_s(x)` the prediction is

    .. math:: \alpha_s \hat Q_s(u) + (1 - \alpha_s) \sum_{s'} r_{s'} \hat Q_{s'}(u) + C_s(u),

    the exact calibration quantiles of the group and of the barycenter, mixed by
    ``own_shares`` :math:`\alpha_s`, plus the residual curve :math:`C_s` on the midpoint grid
    (linear between nodes, held at the end nodes beyond them).

    Parameters
    ----------
    samples : list of numpy.ndarray
        Each group's sorted calibration scores.
    cumulative_weights : list of numpy.ndarray or None
        Each group's cumulative frequency weights (``None``: unit weights).
    shares : numpy.ndarray of shape (n_groups,)
        Barycenter weights :math:`r_s`.
    own_shares : numpy.ndarray of shape (n_groups,)
        :math:`\alpha_s`.
    residuals : numpy.ndarray of shape (n_groups, n_grid)
        :math:`C_s(u_k)`.
    shift, inv_scale : float
        The scaled unit :math:`z = x \cdot \mathrm{inv\_scale} - \mathrm{shift}` of the
        calibration scores, in which ``residuals`` are given.
    centre, scale : float
        Back to the scores' unit: :math:`\mathrm{centre} + z \cdot \mathrm{scale}`.

    Returns
    -------
    numpy.ndarray of shape (n_samples + n_groups,)
        Group ``s``'s table (ranks 0 to :math:`n_s`) starts at ``offsets[s] + s``.
    """
    offsets = np.concatenate([[0], np.cumsum([x.shape[0] for x in samples])]).astype(np.intp)
    flat = np.concatenate(samples).astype(np.float64, copy=False)
    if cumulative_weights is None:
        cum_w = np.empty(0)
        totals = np.array([float(x.shape[0]) for x in samples])
    else:
        cum_w = np.concatenate(cumulative_weights).astype(np.float64, copy=False)
        totals = np.array([float(c[-1]) for c in cumulative_weights])
    out = np.empty(flat.shape[0] + len(samples))
    for s, x in enumerate(samples):
        n = x.shape[0]
        if cumulative_weights is None:
            levels = np.arange(n + 1) / n
        else:
            levels = np.concatenate([[0.0], cumulative_weights[s] / totals[s]])
            levels[-1] = 1.0
        _table(
            levels,
            s,
            flat,
            offsets,
            cum_w,
            totals,
            np.ascontiguousarray(shares, dtype=np.float64),
            float(own_shares[s]),
            np.ascontiguousarray(residuals[s], dtype=np.float64),
            shift,
            inv_scale,
            centre,
            scale,
            out[offsets[s] + s : offsets[s + 1] + s + 1],
        )
    return out


def table_indices(
    scores: np.ndarray,
    codes: np.ndarray,
    samples: np.ndarray,
    offsets: np.ndarray,
    tolerance: float,
) -> np.ndarray:
    r"""Where each score reads the tables: its group's entry at rank :math:`\#\{c \le x + t\}`.

    Parameters
    ----------
    scores : numpy.ndarray of shape (n,)
    codes : numpy.ndarray of int of shape (n,)
        Group of each score.
    samples : numpy.ndarray
        The groups' sorted calibration scores, concatenated.
    offsets : numpy.ndarray of int of shape (n_groups + 1,)
        Start of each group in ``samples``.
    tolerance : float
        :math:`t`: calibration scores within this distance above a score count as tied with it.

    Returns
    -------
    numpy.ndarray of int of shape (n,)
        Indices into the array of :func:`prediction_tables`.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    out = np.empty(scores.shape[0], dtype=np.intp)
    # Visiting the scores in increasing order walks every group's calibration scores once, in
    # order (one argsort, as the unavoidable work of ranking does).
    _table_indices(
        scores,
        np.ascontiguousarray(codes, dtype=np.intp),
        np.argsort(scores),
        samples,
        offsets,
        float(tolerance),
        out,
    )
    return out
