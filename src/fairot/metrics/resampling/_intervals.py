r"""Intervals read off bootstrap replicates: bias-corrected, percentile, or why none.

Internal surface (used by :mod:`fairot.metrics.resampling`, which re-exports the public names):
:func:`bias_corrected_interval`, :func:`percentile_interval` and the ``NOT_ESTIMABLE_*`` and
``ONE_SIDED`` messages that stand in the reports where an interval cannot be shown.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

MSG_CONFIDENCE = "confidence must be in (0, 1); got {value!r}."
MSG_METHOD = "method must be 'percentile' or 'bc'; got {value!r}."
# Why an interval is "not estimable": shown in place of the interval, never a bare [x, x].
NOT_ESTIMABLE_CONSTANT = (
    "all {n} replicates equal {value:.4g} (a group of one or two rows, or no variation): "
    "the bootstrap cannot see the sampling error"
)
NOT_ESTIMABLE_FEW = (
    "{n} replicates leave fewer than one in each {level:.1%} tail; use at least {need}"
)
NOT_ESTIMABLE_POINT = (
    "{share:.0%} of the replicates equal {value:.4g}: the bootstrap distribution is too "
    "discrete for an interval of positive width"
)
NOT_ESTIMABLE_UNDEFINED = "undefined or infinite in {k} of {n} replicates"
NOT_ESTIMABLE_ESTIMATE = "the estimate itself is undefined or infinite"
NOT_ESTIMABLE_TAIL = (
    "the estimate lies in the tail of its own bootstrap distribution ({share:.1%} of the "
    "replicates below it): the statistic is biased at these group sizes, so no interval "
    "around it is reported"
)
ONE_SIDED = (
    "one-sided: the estimate lies below {share:.1%} of its replicates (a statistic biased "
    "upwards at these group sizes, as distances are), so the interval runs from the "
    "statistic's floor {floor:g} to the replicates' {level:.1%} quantile, a conservative upper "
    "bound"
)


def bias_corrected_interval(
    estimate: float,
    replicates: ArrayLike,
    confidence: float = 0.95,
    *,
    method: str = "bc",
    floor: float | None = None,
) -> tuple[float, float, str]:
    r"""An interval read off bootstrap replicates, or the reason it cannot be estimated.

    ``method="bc"`` is Efron's bias-corrected percentile interval [1]_ (BCa with acceleration
    :math:`a = 0`):

    .. math::

        z_0 = \Phi^{-1}(\hat p_0), \quad
        \hat p_0 = \frac{\#\{\theta^*_b < \hat\theta\} + \tfrac12
        \#\{\theta^*_b = \hat\theta\}}{B}, \qquad
        [\theta^*_{(\Phi(2 z_0 + z_{\alpha/2}))}, \theta^*_{(\Phi(2 z_0 + z_{1-\alpha/2}))}],

    where :math:`\theta^*_{(q)}` is the ``q`` quantile of the replicates and
    :math:`\alpha = 1 - \text{confidence}`. It shifts the percentile interval by the
    replicates' bias, so a statistic such as a maximum, a minimum or a standard deviation of
    group rates, whose replicates sit mostly above the estimate, still gets an interval around
    it. The lower level is below :math:`\hat p_0` and the upper above exactly when
    :math:`|z_0| < z_{1-\alpha/2}`; otherwise (and wherever interpolation would still leave the
    estimate outside) the interval is *not estimable* with that reason, never reported beside
    an estimate it excludes — except for a statistic with a known ``floor`` (a distance, a
    gap: 0) whose estimate lies in the *lower* tail, the signature of an upward bias: then the
    interval is one-sided, from the floor to the replicates' :math:`1 - \alpha/2` quantile
    (conservative, since the replicates overstate the statistic), and the reason says so.
    ``method="percentile"`` is the central range of the replicates.

    Parameters
    ----------
    estimate : float
        The statistic on the data.
    replicates : array-like of shape (B,)
        The statistic on each bootstrap replicate.
    confidence : float in (0, 1), default=0.95
        Coverage.
    method : {"bc", "percentile"}, default="bc"
    floor : float, optional
        The smallest value the statistic can take (0 for a distance), which allows the
        one-sided interval above.

    Returns
    -------
    low, high : float
        The interval; NaN when it is not estimable.
    note : str
        Empty for a two-sided interval; else why it is not estimable (all replicates equal,
        fewer than one replicate per tail, undefined replicates, an undefined estimate, or an
        estimate in the tail), or that it is one-sided.

    References
    ----------
    .. [1] B. Efron, "Better bootstrap confidence intervals", Journal of the American
       Statistical Association 82(397), 171-185, 1987 (Section 2; the BC interval).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.metrics.resampling import bias_corrected_interval
    >>> reps = np.linspace(0.0, 1.0, 101)
    >>> low, high, reason = bias_corrected_interval(0.5, reps)
    >>> round(low, 3), round(high, 3), reason
    (0.025, 0.975, '')
    >>> bias_corrected_interval(0.5, np.full(50, 0.5))[2].startswith("all 50 replicates equal")
    True
    """
    if method not in ("bc", "percentile"):
        raise ValueError(MSG_METHOD.format(value=method))
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(MSG_CONFIDENCE.format(value=confidence))
    reps = np.asarray(replicates, dtype=float).ravel()
    nan = float("nan")
    n = reps.shape[0]
    alpha = (1.0 - confidence) / 2
    need = math.ceil(1.0 / (2 * alpha) - 1e-9)
    if n < need:
        return nan, nan, NOT_ESTIMABLE_FEW.format(n=n, level=alpha, need=need)
    finite = np.isfinite(reps)
    if not finite.all():
        return nan, nan, NOT_ESTIMABLE_UNDEFINED.format(k=int((~finite).sum()), n=n)
    if method == "bc" and not math.isfinite(estimate):
        return nan, nan, NOT_ESTIMABLE_ESTIMATE
    if reps.min() == reps.max():
        return nan, nan, NOT_ESTIMABLE_CONSTANT.format(n=n, value=reps[0])
    if method == "percentile":
        low, high = (float(v) for v in np.quantile(reps, [alpha, 1 - alpha]))
        return _positive_width(low, high, reps, "")
    from scipy.special import ndtr, ndtri

    below = (np.count_nonzero(reps < estimate) + 0.5 * np.count_nonzero(reps == estimate)) / n
    z_crit = float(ndtri(1 - alpha))
    z0 = float(ndtri(below)) if 0 < below < 1 else math.copysign(math.inf, below - 0.5)
    if not abs(z0) < z_crit:
        if floor is not None and z0 < 0 and floor <= estimate:
            high = float(np.quantile(reps, 1 - alpha))
            note = ONE_SIDED.format(share=1 - below, floor=floor, level=1 - alpha)
            return _positive_width(float(floor), high, reps, note)
        return nan, nan, NOT_ESTIMABLE_TAIL.format(share=below)
    levels = ndtr([2 * z0 - z_crit, 2 * z0 + z_crit])
    low, high = (float(v) for v in np.quantile(reps, levels))
    if not low <= estimate <= high:
        return nan, nan, NOT_ESTIMABLE_TAIL.format(share=below)
    return _positive_width(low, high, reps, "")


def _positive_width(low: float, high: float, reps: np.ndarray, note: str) -> tuple:
    """The interval, unless it has zero width: then not estimable (never shown as [x, x])."""
    if low < high:
        return low, high, note
    share = float(np.mean(reps == low))
    return math.nan, math.nan, NOT_ESTIMABLE_POINT.format(share=share, value=low)


def _linear_quantile(values: pd.DataFrame, q: float) -> pd.Series:
    """Linear quantile of each column as pandas computes it (NaN skipped), exact with infinities.

    Interpolating between two equal infinities (an unbounded skewed error ratio, a distance
    beyond the float range) computes ``inf - inf``: NaN and a RuntimeWarning. Between ranks
    ``a <= b`` the quantile is ``a`` at an exact rank, else ``b`` when ``b`` is infinite.
    """
    with np.errstate(invalid="ignore"):  # the NaN it makes is replaced just below
        out = values.quantile(q)
    lower = values.quantile(q, interpolation="lower")
    higher = values.quantile(q, interpolation="higher")
    position = q * (values.count() - 1)
    exact = (position == np.floor(position)) | (lower == higher)
    undefined = out.isna() & lower.notna()
    return out.where(~undefined, lower.where(exact, higher))


def percentile_interval(values: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The central ``1 - 2 alpha`` range of each column: ``low`` and ``high`` columns."""
    return pd.DataFrame(
        {"low": _linear_quantile(values, alpha), "high": _linear_quantile(values, 1 - alpha)}
    )
