r"""Plain NumPy transcription of Algorithm 1 (COT) and of DOT's update, and the objective (7).

This module is the readable statement of the mathematics and the test oracle of the fast kernels
in :mod:`fairot.classification._kernels`: fed the same mini-batch indices, both produce the same
iterates (to rounding). It is also the baseline that ``benchmarks/bench_classification.py`` times.

Notation (Section "COT Method" of [1]_): groups :math:`a`, scores :math:`s_a^i = \sigma(\theta^\top
(x^i, 1))` of a batch of :math:`N_S` rows of group :math:`a`, target samples :math:`\bar s^j`, dual
potentials :math:`\lambda_{S_a}(s) = \lambda_a^\top\psi(s)` and
:math:`\lambda_{\bar S, a}(s) = \mu_a^\top\psi(s)` (:math:`\mu_a = -\lambda_a` under the constraint
:math:`\lambda_{S_a}(x) + \lambda_{\bar S,a}(x) = 0`), cost :math:`C(s, \bar s) = |s - \bar s|`,
:math:`z_{ij} = (\lambda_{S_a}(s^i) + \lambda_{\bar S,a}(\bar s^j) - C(s^i, \bar s^j))/\lambda`.
The mini-batch estimate of the objective (7) is

.. math::

    J = \sum_a \frac{1}{|P|}\sum_{(i, j) \in P}
        \Big(\lambda_{S_a}(s^i) + \lambda_{\bar S,a}(\bar s^j) - \lambda\,\phi^*(z_{ij})\Big),

with :math:`P = \{(i, i)\}` for the paper's pairing :math:`i = j` and all :math:`N_S N_{\bar S}`
pairs otherwise. With :math:`\alpha_{ij} = \phi^{*\prime}(z_{ij})` its gradients are exactly the
paper's updates: the dual step is :math:`\lambda_a \leftarrow \lambda_a + \epsilon_\lambda
\nabla_{\lambda_a} J` (update (5), plus the extra term under the constraint) and the model step is
:math:`\theta \leftarrow \theta - \epsilon_\theta N_S \nabla_\theta J`, the paper's sums over
groups and batch.

References
----------
.. [1] S. Chiappa and A. Pacchiano, "Fairness with Continuous Optimal Transport", 2021.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fairot.classification._objective import (
    REG_ENTROPIC,
    REG_L2,
    CotParams,
    PairTerms,
    conjugate,
    pair_terms,
    sigmoid,
)
from fairot.transport import FeatureTable, FourierFeatures, optimal_coupling_1d

__all__ = [
    "REG_ENTROPIC",
    "REG_L2",
    "CotGradients",
    "CotParams",
    "PairTerms",
    "conjugate",
    "cot_objective_and_gradients",
    "cot_updates_numpy",
    "dot_updates_numpy",
    "log_loss_gradient",
    "pair_terms",
    "scores",
    "sigmoid",
]


def scores(theta: np.ndarray, X: np.ndarray) -> np.ndarray:
    r""":math:`s = \sigma(\theta^\top (x, 1))`; the intercept is ``theta[-1]``."""
    return sigmoid(X @ theta[:-1] + theta[-1])


def log_loss_gradient(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    r"""Gradient in :math:`\theta` of the mean log-loss :math:`\mathcal L(\theta)` of ``(X, y)``.

    .. math:: \nabla_\theta \frac1n \sum_i \ell\big(y_i, \sigma(\theta^\top (x_i, 1))\big)
       = \frac1n \sum_i (s_i - y_i)\,(x_i, 1),

    the term that ``loss_weight`` adds to the model steps of COT and DOT.
    """
    residual = scores(theta, X) - y
    return np.append(residual @ X, residual.sum()) / X.shape[0]


def _loss_term(theta, X, labels, loss_positions, k) -> np.ndarray:
    if loss_positions is None or loss_positions.shape[1] == 0:
        return np.zeros_like(theta)
    rows = loss_positions[k]
    return log_loss_gradient(theta, X[rows], labels[rows])


class CotGradients(NamedTuple):
    """Value and gradients of the mini-batch objective :math:`J` at one point."""

    objective: float
    theta: np.ndarray
    duals: np.ndarray
    target_duals: np.ndarray


def cot_objective_and_gradients(
    theta: np.ndarray,
    duals: np.ndarray,
    target_duals: np.ndarray,
    group_batches: list[np.ndarray],
    target_batch: np.ndarray,
    features: FourierFeatures | FeatureTable,
    params: CotParams,
) -> CotGradients:
    r""":math:`J` and its exact gradients in ``theta``, ``duals`` and ``target_duals``.

    Parameters
    ----------
    theta : ndarray of shape (d + 1,)
        Model coefficients, intercept last.
    duals, target_duals : ndarray of shape (n_groups, D)
        :math:`\lambda_a` and :math:`\mu_a` (``target_duals`` is ignored under the constraint,
        where :math:`\mu_a = -\lambda_a`; its gradient is then zero).
    group_batches : list of ndarray of shape (N_S, d)
        The batch of rows of each group.
    target_batch : ndarray of shape (N_S,) or (n_groups, N_S)
        Target samples :math:`\bar s^j`, shared or one batch per group (a tolerance tau).
    features : FourierFeatures or FeatureTable
        Exact features, or the tabulated ones of the fast kernel.
    params : CotParams
        Regularisation and options.
    """
    total = 0.0
    g_theta = np.zeros_like(theta)
    g_duals = np.zeros_like(duals)
    g_target = np.zeros_like(target_duals)
    for a, xb in enumerate(group_batches):
        s = scores(theta, xb)
        tb = target_batch[a] if target_batch.ndim == 2 else target_batch
        terms = pair_terms(s, tb, duals[a], target_duals[a], features, params)
        total += terms.objective
        g_duals[a] = terms.duals
        g_target[a] = terms.target_duals
        # d s / d theta = (x, 1) s (1 - s)
        w = terms.scores * s * (1.0 - s)
        g_theta[:-1] += w @ xb
        g_theta[-1] += w.sum()
    return CotGradients(float(total), g_theta, g_duals, g_target)


def cot_updates_numpy(
    theta: np.ndarray,
    duals: np.ndarray,
    target_duals: np.ndarray,
    X: np.ndarray,
    group_rows: list[np.ndarray],
    target_samples: np.ndarray,
    batch_positions: np.ndarray,
    target_positions: np.ndarray,
    features: FourierFeatures | FeatureTable,
    params: CotParams,
    labels: np.ndarray | None = None,
    loss_positions: np.ndarray | None = None,
    loss_weight: float = 0.0,
) -> np.ndarray:
    r"""Run Algorithm 1 for ``len(batch_positions)`` updates, in place.

    Parameters
    ----------
    theta, duals, target_duals : ndarray
        Updated in place.
    X : ndarray of shape (n_samples, d)
        Dense features.
    group_rows : list of ndarray of int
        Row indices of each group.
    target_samples : ndarray of shape (n_target,) or (n_groups, n_target)
        The target data set :math:`\bar{\mathcal D}`, or one per group (a tolerance tau).
    batch_positions : ndarray of int of shape (n_updates, n_groups, N_S)
        Batch of each group at each update, as positions into ``group_rows[a]``.
    target_positions : ndarray of int of shape (n_updates, N_S)
        Target batch of each update, as positions into ``target_samples``.
    features : FourierFeatures or FeatureTable
    params : CotParams
    labels : ndarray of shape (n_samples,), optional
        0/1 labels of ``X`` (for the loss term).
    loss_positions : ndarray of int of shape (n_updates, N_S), optional
        Rows of ``X`` in each update's loss batch; the model step then also descends
        ``loss_weight`` times the batch's mean log-loss, scaled by :math:`N_S` like :math:`J`.
    loss_weight : float, default=0.0
        :math:`\kappa`.

    Returns
    -------
    ndarray of shape (n_updates,)
        Mini-batch objective :math:`J` before each update.
    """
    n_updates, _, n_batch = batch_positions.shape
    objectives = np.empty(n_updates)
    for k in range(n_updates):
        batches = [X[rows[batch_positions[k, a]]] for a, rows in enumerate(group_rows)]
        target_batch = target_samples[..., target_positions[k]]
        grad = cot_objective_and_gradients(
            theta, duals, target_duals, batches, target_batch, features, params
        )
        objectives[k] = grad.objective
        loss = _loss_term(theta, X, labels, loss_positions, k)
        duals += params.dual_step_size * grad.duals
        if not params.constrain_duals:
            target_duals += params.dual_step_size * grad.target_duals
        theta -= params.step_size * n_batch * (grad.theta + loss_weight * loss)
    return objectives


def dot_updates_numpy(
    theta: np.ndarray,
    X: np.ndarray,
    group_rows: list[np.ndarray],
    target_samples: np.ndarray,
    batch_positions: np.ndarray,
    target_positions: np.ndarray,
    step_size: float,
    labels: np.ndarray | None = None,
    loss_positions: np.ndarray | None = None,
    loss_weight: float = 0.0,
) -> np.ndarray:
    r"""Run DOT's updates for ``len(batch_positions)`` steps, in place.

    Each step couples each group's batch with the target batch by the exact optimal coupling
    :math:`T^*_a` of Eq. (8) (marginals :math:`1/N`, from
    :func:`fairot.transport.optimal_coupling_1d`) and sets
    :math:`\theta \leftarrow \theta - \epsilon_\theta \sum_a \sum_{ij} T^*_a(i, j)
    \,\mathrm{sign}(s^i_a - \bar s^j)\nabla_\theta s^i_a`, plus ``loss_weight`` times the
    mean log-loss gradient of the rows ``loss_positions[k]`` of ``X`` (as in
    :func:`cot_updates_numpy`, without the :math:`N` factor: DOT's steps are means).

    Returns
    -------
    ndarray of shape (n_updates,)
        Sum over groups of the mini-batch W1 estimates :math:`\langle T^*_a, C\rangle`.
    """
    n_updates = batch_positions.shape[0]
    objectives = np.empty(n_updates)
    for k in range(n_updates):
        target_batch = target_samples[..., target_positions[k]]
        grad = loss_weight * _loss_term(theta, X, labels, loss_positions, k)
        total = 0.0
        for a, rows in enumerate(group_rows):
            xb = X[rows[batch_positions[k, a]]]
            s = scores(theta, xb)
            tb = target_batch[a] if target_batch.ndim == 2 else target_batch
            i, j, mass = optimal_coupling_1d(s, tb)
            diff = s[i] - tb[j]
            total += float(mass @ np.abs(diff))
            w = mass * np.sign(diff) * s[i] * (1.0 - s[i])
            grad[:-1] += w @ xb[i]
            grad[-1] += w.sum()
        objectives[k] = total
        theta -= step_size * grad
    return objectives
