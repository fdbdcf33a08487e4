r"""Regularised W1 dual potentials between two fixed samples (Figure 1 of the COT paper).

The dual half of Algorithm 1 on its own: stochastic-gradient ascent (update (5)) of the
regularised dual (4) between two empirical distributions, with potentials in random Fourier
features. Its value approaches :math:`W_1` as the regularisation :math:`\lambda \to 0`.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from fairot.classification._cot import DualPotentials, _Potential
from fairot.classification._objective import REG_ENTROPIC, REG_L2, CotParams, pair_terms
from fairot.exceptions import DivergenceError
from fairot.transport import draw_fourier_features
from fairot.utils.arrays import check_array_1d

MSG_POSITIVE = "{name} must be positive; got {value!r}."
MSG_DIVERGED = (
    "the dual ascent diverged at update {update} (exp overflowed): lower dual_step_size "
    "(epsilon_lambda, now {dual:g}) or raise reg_strength (lambda, now {lam:g}); a step of the "
    "order of lambda is a safe start."
)


class DualFit(NamedTuple):
    r"""Result of :func:`fit_dual_potentials`.

    Attributes
    ----------
    potentials : DualPotentials
        :math:`\lambda_X` (``group``) and :math:`\lambda_Y` (``target``) as functions.
    value : float
        Estimate of the regularised distance :math:`W^\lambda_1`: the mean mini-batch dual
        objective over the second half of the updates.
    objectives : ndarray of shape (n_updates,)
        Mini-batch dual objective at each update.

    Examples
    --------
    See :func:`fit_dual_potentials`.
    """

    potentials: DualPotentials
    value: float
    objectives: np.ndarray


def fit_dual_potentials(
    source: ArrayLike,
    target: ArrayLike,
    *,
    reg: Literal["entropic", "l2"] = "entropic",
    reg_strength: float = 0.1,
    n_fourier_features: int = 100,
    kernel_variance: float = 1.0,
    dual_step_size: float = 0.1,
    n_updates: int = 20_000,
    batch_size: int = 50,
    constrain_duals: bool = False,
    pairing: Literal["diagonal", "all"] = "all",
    random_state: int | np.random.RandomState | None = None,
) -> DualFit:
    r"""Stochastic dual potentials of the regularised :math:`W_1` between two samples.

    Maximises the Monte-Carlo estimate of Problem (4) of [1]_,

    .. math::

        \big\langle \lambda_X(x) + \lambda_Y(y) - \lambda\,\phi^*\big((\lambda_X(x)
        + \lambda_Y(y) - |x - y|)/\lambda\big)\big\rangle_{p_X p_Y},

    by update (5) with mini-batches of both samples.

    Parameters
    ----------
    source, target : array-like of shape (n,) and (m,)
        Samples of :math:`p_X` and :math:`p_Y` (any real values).
    reg : {"entropic", "l2"}, default="entropic"
        :math:`\phi^*(x) = e^x` or :math:`\max(x, 0)^2/4`.
    reg_strength : float, default=0.1
        :math:`\lambda`.
    n_fourier_features : int, default=100
        :math:`D`.
    kernel_variance : float, default=1.0
        :math:`\sigma^2` (choose it on the scale of the data).
    dual_step_size : float, default=0.1
        :math:`\epsilon_\lambda`.
    n_updates : int, default=20_000
        Number of updates.
    batch_size : int, default=50
        :math:`N_x = N_y`.
    constrain_duals : bool, default=False
        Impose :math:`\lambda_X(x) + \lambda_Y(x) = 0` (Figure 1, right).
    pairing : {"diagonal", "all"}, default="all"
        Pairs :math:`(i, i)` only, or all :math:`N_x N_y` pairs.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    DualFit

    References
    ----------
    .. [1] S. Chiappa and A. Pacchiano, "Fairness with Continuous Optimal Transport", 2021.

    Examples
    --------
    Two normal samples one unit apart (exact :math:`W_1` = 1.02 for these draws): the
    regularised dual estimate approaches it from below.

    >>> import numpy as np
    >>> from fairot.classification import fit_dual_potentials
    >>> rng = np.random.default_rng(0)
    >>> source, target = rng.normal(0.0, 0.5, 1000), rng.normal(1.0, 0.5, 1000)
    >>> fit = fit_dual_potentials(source, target, n_updates=1000, random_state=0)
    >>> round(fit.value, 2), fit.objectives.shape
    (0.93, (1000,))
    """
    x = check_array_1d(source, "source")
    y = check_array_1d(target, "target")
    for name, value in (
        ("reg_strength", reg_strength),
        ("dual_step_size", dual_step_size),
        ("kernel_variance", kernel_variance),
        ("n_updates", n_updates),
        ("batch_size", batch_size),
        ("n_fourier_features", n_fourier_features),
    ):
        if not value > 0:
            raise ValueError(MSG_POSITIVE.format(name=name, value=value))
    if reg not in ("entropic", "l2"):
        raise ValueError(f"reg must be 'entropic' or 'l2'; got {reg!r}.")
    if pairing not in ("diagonal", "all"):
        raise ValueError(f"pairing must be 'diagonal' or 'all'; got {pairing!r}.")
    rng = check_random_state(random_state)
    features = draw_fourier_features(n_fourier_features, kernel_variance, rng)
    params = CotParams(
        REG_ENTROPIC if reg == "entropic" else REG_L2,
        float(reg_strength),
        float(dual_step_size),
        0.0,
        bool(constrain_duals),
        pairing == "all",
    )
    duals = np.zeros(n_fourier_features)
    target_duals = np.zeros(n_fourier_features)
    objectives = np.empty(n_updates)
    sampler = np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
    for k in range(n_updates):
        xb = x[sampler.integers(0, x.shape[0], batch_size)]
        yb = y[sampler.integers(0, y.shape[0], batch_size)]
        # A diverging step yields inf/NaN, caught just below with advice instead of warnings.
        with np.errstate(over="ignore", invalid="ignore"):
            terms = pair_terms(xb, yb, duals, target_duals, features, params)
        if not np.isfinite(terms.objective):
            raise DivergenceError(
                MSG_DIVERGED.format(update=k + 1, dual=dual_step_size, lam=reg_strength)
            )
        objectives[k] = terms.objective
        duals += params.dual_step_size * terms.duals
        target_duals += params.dual_step_size * terms.target_duals
    if constrain_duals:
        target_duals = -duals
    potentials = DualPotentials(
        _Potential(duals.copy(), features), _Potential(target_duals.copy(), features)
    )
    return DualFit(potentials, float(objectives[n_updates // 2 :].mean()), objectives)
