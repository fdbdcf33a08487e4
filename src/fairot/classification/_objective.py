r"""The regularised dual objective of one (group, target) pair, shared by COT and its oracle.

What the production code needs of the mathematics of Algorithm 1 (see
:mod:`fairot.classification._reference` for the notation): the two regularisations and their
convex conjugates, the step options of a run, the overflow-free logistic function and
:func:`pair_terms`, one pair's share of the mini-batch objective :math:`J` and its gradients.
:func:`fairot.classification.fit_dual_potentials` ascends it directly; the test oracle
``_reference`` builds Algorithm 1 and DOT's update on it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fairot.transport import (
    FeatureTable,
    FourierFeatures,
    fourier_features,
    fourier_features_derivative,
    interpolate_features,
)

REG_ENTROPIC = 0
REG_L2 = 1


class CotParams(NamedTuple):
    """Step sizes and options of one COT run (see :class:`~fairot.classification.COTClassifier`)."""

    reg: int
    reg_strength: float
    dual_step_size: float
    step_size: float
    constrain_duals: bool
    all_pairs: bool


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic function, overflow-free for any finite ``z``."""
    out = np.empty_like(z, dtype=float)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def conjugate(z: np.ndarray, reg: int) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`\phi^*(z)` and :math:`\alpha = \phi^{*\prime}(z)` for the two regularisations.

    Entropic: :math:`\phi^*(z) = e^z`; L2: :math:`\phi^*(z) = \max(z, 0)^2/4`.
    """
    if reg == REG_ENTROPIC:
        # Past exp(709) the float overflows: report inf (the caller stops) without a warning.
        with np.errstate(over="ignore"):
            e = np.exp(z)
        return e, e
    zp = np.maximum(z, 0.0)
    return 0.25 * zp * zp, 0.5 * zp


def _psi(s: np.ndarray, features: FourierFeatures | FeatureTable) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(features, FeatureTable):
        return interpolate_features(s, features)
    return fourier_features(s, features), fourier_features_derivative(s, features)


class PairTerms(NamedTuple):
    """One group's share of :math:`J` and its derivatives (see :func:`pair_terms`)."""

    objective: float
    duals: np.ndarray
    target_duals: np.ndarray
    scores: np.ndarray


def pair_terms(
    s: np.ndarray,
    target_batch: np.ndarray,
    duals: np.ndarray,
    target_duals: np.ndarray,
    features: FourierFeatures | FeatureTable,
    params: CotParams,
) -> PairTerms:
    r"""Mini-batch regularised dual objective of one pair (group, target) and its gradients.

    Parameters
    ----------
    s : ndarray of shape (N_S,)
        Samples of :math:`p_{S_a}` (scores).
    target_batch : ndarray of shape (N_S̄,)
        Samples of :math:`p_{\bar S}`.
    duals, target_duals : ndarray of shape (D,)
        :math:`\lambda_a`, :math:`\mu_a` (``target_duals`` ignored under the constraint).
    features : FourierFeatures or FeatureTable
    params : CotParams

    Returns
    -------
    PairTerms
        ``objective``: the pair's term of :math:`J`; ``duals``/``target_duals``: its gradients
        in :math:`\lambda_a` and :math:`\mu_a` (under the constraint ``duals`` is the total
        gradient in :math:`\lambda_a` and ``target_duals`` is zero); ``scores``: its derivative
        in each :math:`s^i`.
    """
    lam = params.reg_strength
    psi_t, _ = _psi(target_batch, features)
    psi_s, dpsi_s = _psi(s, features)
    mu = -duals if params.constrain_duals else target_duals
    lam_s, dlam_s, lam_t = psi_s @ duals, dpsi_s @ duals, psi_t @ mu
    if params.all_pairs:
        diff = s[:, None] - target_batch[None, :]
        z = (lam_s[:, None] + lam_t[None, :] - np.abs(diff)) / lam
    else:
        diff = s - target_batch
        z = (lam_s + lam_t - np.abs(diff)) / lam
    phi, alpha = conjugate(z, params.reg)
    objective = float(lam_s.mean() + lam_t.mean() - lam * phi.mean())
    if params.all_pairs:
        coef_s = 1.0 - alpha.mean(axis=1)
        coef_t = 1.0 - alpha.mean(axis=0)
        ds = ((1.0 - alpha) * dlam_s[:, None] + alpha * np.sign(diff)).mean(axis=1)
    else:
        coef_s = coef_t = 1.0 - alpha
        ds = (1.0 - alpha) * dlam_s + alpha * np.sign(diff)
    g_lam_s = coef_s @ psi_s / s.shape[0]
    g_lam_t = coef_t @ psi_t / target_batch.shape[0]
    if params.constrain_duals:
        return PairTerms(objective, g_lam_s - g_lam_t, np.zeros_like(g_lam_t), ds / s.shape[0])
    return PairTerms(objective, g_lam_s, g_lam_t, ds / s.shape[0])
