r"""Fused numba loops for COT (Algorithm 1) and DOT: the whole run of updates in one call.

The arithmetic is that of :mod:`fairot.classification._reference` (same mini-batch indices, same
order of operations per sample) with three savings that do not change the mathematics:

- rows are stored as padded sparse lists ``(indices, values)``, so a one-hot row of Adult costs
  its ~15 non-zeros instead of ~100 columns, both for the score and for the gradient;
- :math:`\psi` and :math:`\psi'` are read from a table on [0, 1] and interpolated linearly
  (:func:`fairot.transport.tabulate_features`);
- the loop over updates runs in compiled code (``cache=True``: the compilation is paid once per
  machine).

Both kernels return early, without touching the state further, when the optimisation diverges;
the estimator turns the status into an error that names the step size to lower.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit

from fairot.classification._rows import padded_rows
from fairot.utils.compilation import install_compile_notice

install_compile_notice()  # one log line if a cold cache makes the first call compile long

STATUS_OK = 0
STATUS_DUAL_OVERFLOW = 1
STATUS_NOT_FINITE = 2

# exp(40) ~ 2e17: an entropic alpha this large is far past any density ratio of a coupling on
# [0, 1] and would make the next theta step explode; the run is stopped before exp overflows.
MAX_ENTROPIC_EXPONENT = 40.0
# L2's alpha grows linearly; past this the duals have diverged just as surely.
MAX_L2_EXPONENT = 1e8
# Reassociation lets the D-long dot products vectorise (about 25% faster); NaN and inf keep their
# IEEE meaning, so the divergence checks below stay valid.
FASTMATH = {"reassoc", "contract", "arcp"}


@njit(cache=True, inline="always")
def _sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@njit(cache=True, inline="always")
def _score(theta, indices, values, row):
    d = theta.shape[0] - 1
    z = theta[d]
    for t in range(indices.shape[1]):
        z += theta[indices[row, t]] * values[row, t]
    return _sigmoid(z)


@njit(cache=True, inline="always")
def _cell(s, grid_size):
    t = s * grid_size
    k = int(t)
    if k > grid_size - 1:
        k = grid_size - 1
    return k, t - k


@njit(cache=True, inline="always")
def _conjugate(z, reg):
    """``(phi*(z), alpha)`` of the regulariser: entropic (``reg == 0``) or L2.

    ``alpha = lambda phi*'(z)`` in the paper's notation, with ``z`` already divided by lambda:
    ``exp(z)`` for the entropy, ``max(z, 0) / 2`` for L2 (whose ``phi*`` is ``max(z, 0)^2 / 4``).
    """
    if reg == 0:
        phi = math.exp(z)
        return phi, phi
    zp = z if z > 0.0 else 0.0
    return 0.25 * zp * zp, 0.5 * zp


@njit(cache=True, inline="always")
def _descend(theta, indices, values, grad_rows, grad_coef, step_size):
    """Descend: ``theta -= step_size * sum_a sum_i grad_coef[a, i] * (x_row, 1)``, sparse rows."""
    d = theta.shape[0] - 1
    for a in range(grad_rows.shape[0]):
        for i in range(grad_rows.shape[1]):
            row = grad_rows[a, i]
            g = step_size * grad_coef[a, i]
            theta[d] -= g
            for t in range(indices.shape[1]):
                theta[indices[row, t]] -= g * values[row, t]


@njit(cache=True, inline="always")
def _loss_step(theta, indices, values, labels, rows, coef, weight, step_size):
    r"""Descend ``weight`` times the log-loss gradient :math:`(s - y)(x, 1)` of ``rows``."""
    for i in range(rows.shape[0]):
        coef[0, i] = weight * (_score(theta, indices, values, rows[i]) - labels[rows[i]])
    _descend(theta, indices, values, rows.reshape(1, -1), coef, step_size)


@njit(cache=True, inline="always")
def _sign(x):
    if x > 0.0:
        return 1.0
    if x < 0.0:
        return -1.0
    return 0.0


def cot_kernel(
    theta, duals, target_duals, indices, values, members, offsets, target_samples, *args
):
    """Run COT updates in place; see :func:`_reference.cot_updates_numpy` for the mathematics.

    ``target_samples`` is the shared target, shape (n_target,), or one target per group, shape
    (n_groups, n_target) (a tolerance tau: each group's point on the geodesic to the shared
    target); the other arguments are those of :func:`_cot_updates`.
    """
    targets = np.asarray(target_samples, dtype=np.float64)
    if targets.ndim == 1:
        targets = targets.reshape(1, -1)
    return _cot_updates(
        theta, duals, target_duals, indices, values, members, offsets, targets, *args
    )


@njit(cache=True, inline="always", fastmath=FASTMATH)
def _target_batch(target, positions, tb, psi_t, table_values, grid_size):
    """The target batch of one update and its tabulated Fourier features."""
    for j in range(tb.shape[0]):
        sb = target[positions[j]]
        tb[j] = sb
        c, w = _cell(sb, grid_size)
        for q in range(psi_t.shape[1]):
            psi_t[j, q] = (1.0 - w) * table_values[c, q] + w * table_values[c + 1, q]


@njit(cache=True, fastmath=FASTMATH)
def _cot_updates(
    theta,
    duals,
    target_duals,
    indices,
    values,
    members,
    offsets,
    targets,
    batch_positions,
    target_positions,
    table_values,
    table_derivatives,
    reg,
    reg_strength,
    dual_step_size,
    step_size,
    constrain_duals,
    all_pairs,
    objectives,
    diagnostics,
    labels=None,
    loss_positions=None,
    loss_weight=0.0,
):
    """The COT updates; ``targets`` has one row (shared) or one per group.

    ``loss_positions`` (rows of ``X`` per update; ``None``: the paper's) add a log-loss term.

    Returns the number of updates completed and a status; ``diagnostics[0]`` holds the offending
    exponent :math:`z` when the status is not OK.
    """
    n_updates, n_groups, n_batch = batch_positions.shape
    n_dual = duals.shape[1]
    grid_size = table_values.shape[0] - 1
    lam = reg_strength
    d = theta.shape[0] - 1
    max_exponent = MAX_ENTROPIC_EXPONENT if reg == 0 else MAX_L2_EXPONENT

    tb = np.empty(n_batch)
    psi_t = np.empty((n_batch, n_dual))
    s = np.empty(n_batch)
    cell = np.empty(n_batch, dtype=np.int64)
    weight = np.empty(n_batch)
    lam_s = np.empty(n_batch)
    dlam_s = np.empty(n_batch)
    lam_t = np.empty(n_batch)
    coef_s = np.empty(n_batch)
    coef_t = np.empty(n_batch)
    grad_rows = np.empty((n_groups, n_batch), dtype=np.int64)
    grad_coef = np.empty((n_groups, n_batch))
    mu = np.empty(n_dual)
    loss_coef = np.empty((1, n_batch))

    per_group = targets.shape[0] > 1
    for k in range(n_updates):
        if not per_group:
            _target_batch(targets[0], target_positions[k], tb, psi_t, table_values, grid_size)
        total = 0.0
        for a in range(n_groups):
            if per_group:
                _target_batch(targets[a], target_positions[k], tb, psi_t, table_values, grid_size)
            lam_a = duals[a]
            if constrain_duals:
                for q in range(n_dual):
                    mu[q] = -lam_a[q]
            else:
                for q in range(n_dual):
                    mu[q] = target_duals[a, q]
            for i in range(n_batch):
                row = members[offsets[a] + batch_positions[k, a, i]]
                grad_rows[a, i] = row
                si = _score(theta, indices, values, row)
                s[i] = si
                c, w = _cell(si, grid_size)
                cell[i] = c
                weight[i] = w
                v0 = 0.0
                v1 = 0.0
                g0 = 0.0
                g1 = 0.0
                for q in range(n_dual):
                    v0 += lam_a[q] * table_values[c, q]
                    v1 += lam_a[q] * table_values[c + 1, q]
                    g0 += lam_a[q] * table_derivatives[c, q]
                    g1 += lam_a[q] * table_derivatives[c + 1, q]
                lam_s[i] = (1.0 - w) * v0 + w * v1
                dlam_s[i] = (1.0 - w) * g0 + w * g1
                acc = 0.0
                for q in range(n_dual):
                    acc += mu[q] * psi_t[i, q]
                lam_t[i] = acc
            if all_pairs:
                for j in range(n_batch):
                    coef_t[j] = 0.0
                for i in range(n_batch):
                    row_alpha = 0.0
                    ds = 0.0
                    for j in range(n_batch):
                        diff = s[i] - tb[j]
                        z = (lam_s[i] + lam_t[j] - abs(diff)) / lam
                        if not z <= max_exponent:
                            diagnostics[0] = z
                            return k, STATUS_DUAL_OVERFLOW
                        phi, alpha = _conjugate(z, reg)
                        total += (lam_s[i] + lam_t[j] - lam * phi) / (n_batch * n_batch)
                        row_alpha += alpha
                        coef_t[j] += alpha
                        ds += (1.0 - alpha) * dlam_s[i] + alpha * _sign(diff)
                    coef_s[i] = 1.0 - row_alpha / n_batch
                    grad_coef[a, i] = ds / n_batch * s[i] * (1.0 - s[i])
                for j in range(n_batch):
                    coef_t[j] = 1.0 - coef_t[j] / n_batch
            else:
                for i in range(n_batch):
                    diff = s[i] - tb[i]
                    z = (lam_s[i] + lam_t[i] - abs(diff)) / lam
                    if not z <= max_exponent:
                        diagnostics[0] = z
                        return k, STATUS_DUAL_OVERFLOW
                    phi, alpha = _conjugate(z, reg)
                    total += (lam_s[i] + lam_t[i] - lam * phi) / n_batch
                    coef_s[i] = 1.0 - alpha
                    coef_t[i] = 1.0 - alpha
                    ds = (1.0 - alpha) * dlam_s[i] + alpha * _sign(diff)
                    grad_coef[a, i] = ds * s[i] * (1.0 - s[i])
            # Dual ascent step (update (5)); every lambda above was read before this write.
            scale = dual_step_size / n_batch
            for i in range(n_batch):
                c = cell[i]
                w = weight[i]
                f0 = scale * coef_s[i] * (1.0 - w)
                f1 = scale * coef_s[i] * w
                for q in range(n_dual):
                    lam_a[q] += f0 * table_values[c, q] + f1 * table_values[c + 1, q]
            for j in range(n_batch):
                f = scale * coef_t[j]
                if constrain_duals:
                    for q in range(n_dual):
                        lam_a[q] -= f * psi_t[j, q]
                else:
                    for q in range(n_dual):
                        target_duals[a, q] += f * psi_t[j, q]
        objectives[k] = total
        if loss_positions is not None:  # at the theta of the fairness gradient above
            rows = loss_positions[k]
            _loss_step(theta, indices, values, labels, rows, loss_coef, loss_weight, step_size)
        # Model descent step: the paper's sum over groups and batch.
        _descend(theta, indices, values, grad_rows, grad_coef, step_size)
        if not math.isfinite(theta[d]):
            diagnostics[0] = theta[d]
            return k + 1, STATUS_NOT_FINITE
    return n_updates, STATUS_OK


@njit(cache=True)
def bucket_argsort(values, order, buckets):
    """Stable argsort of values in [0, 1] into ``order``: O(n) expected for spread-out values.

    A counting sort into ``n`` equal buckets followed by an insertion sort, which is linear on
    the almost sorted result and stable (ties keep their input order, as ``kind="stable"``).
    ``buckets`` is scratch space of length ``n + 1``.
    """
    n = values.shape[0]
    for b in range(n + 1):
        buckets[b] = 0
    for i in range(n):
        b = int(values[i] * n)
        b = min(max(b, 0), n - 1)
        buckets[b + 1] += 1
    for b in range(n):
        buckets[b + 1] += buckets[b]
    for i in range(n):
        b = int(values[i] * n)
        b = min(max(b, 0), n - 1)
        order[buckets[b]] = i
        buckets[b] += 1
    for r in range(1, n):
        i = order[r]
        v = values[i]
        q = r - 1
        while q >= 0 and values[order[q]] > v:
            order[q + 1] = order[q]
            q -= 1
        order[q + 1] = i


@njit(cache=True)
def matched_signs(s, sorted_target, signs, order, buckets):
    """Optimal 1-D coupling of ``s`` with an equal-size sorted sample, as signs per row.

    The optimal plan of two uniform samples of equal size matches them in sorted order (stable
    sort, as :func:`fairot.transport.optimal_coupling_1d`); ``signs[i]`` is the sign of
    ``s[i]`` minus its matched target sample, and the return value is the plan's mean cost.
    ``order`` and ``buckets`` are scratch arrays of lengths ``n`` and ``n + 1``.
    """
    n = s.shape[0]
    bucket_argsort(s, order, buckets)
    cost = 0.0
    for r in range(n):
        i = order[r]
        diff = s[i] - sorted_target[r]
        cost += abs(diff)
        signs[i] = _sign(diff)
    return cost / n


def dot_kernel(theta, indices, values, members, offsets, target_samples, *args):
    """Run DOT updates in place; see :func:`_reference.dot_updates_numpy`.

    ``target_samples`` is the shared target, shape (n_target,), or one target per group, shape
    (n_groups, n_target); the other arguments are those of :func:`_dot_updates`.
    """
    targets = np.asarray(target_samples, dtype=np.float64)
    if targets.ndim == 1:
        targets = targets.reshape(1, -1)
    return _dot_updates(theta, indices, values, members, offsets, targets, *args)


@njit(cache=True)
def _dot_updates(
    theta,
    indices,
    values,
    members,
    offsets,
    targets,
    batch_positions,
    target_positions,
    step_size,
    objectives,
    diagnostics,
    labels=None,
    loss_positions=None,
    loss_weight=0.0,
):
    """The DOT updates; ``targets`` has one row (shared) or one per group; loss term as COT's.

    The optimal 1-D coupling of two equal-size uniform samples is the sorted matching (stable
    sorts, as :func:`fairot.transport.optimal_coupling_1d`), each pair carrying mass ``1/N``.
    """
    n_updates, n_groups, n_batch = batch_positions.shape
    d = theta.shape[0] - 1
    tb = np.empty(n_batch)
    s = np.empty(n_batch)
    grad_rows = np.empty((n_groups, n_batch), dtype=np.int64)
    grad_coef = np.empty((n_groups, n_batch))
    signs = np.empty(n_batch)
    order = np.empty(n_batch, dtype=np.int64)
    buckets = np.empty(n_batch + 1, dtype=np.int64)
    tb_sorted = np.empty(n_batch)
    loss_coef = np.empty((1, n_batch))
    loss_mean = loss_weight / n_batch
    per_group = targets.shape[0] > 1
    for k in range(n_updates):
        total = 0.0
        for a in range(n_groups):
            if a == 0 or per_group:
                target = targets[a if per_group else 0]
                for j in range(n_batch):
                    tb[j] = target[target_positions[k, j]]
                bucket_argsort(tb, order, buckets)
                for j in range(n_batch):
                    tb_sorted[j] = tb[order[j]]
            for i in range(n_batch):
                row = members[offsets[a] + batch_positions[k, a, i]]
                grad_rows[a, i] = row
                s[i] = _score(theta, indices, values, row)
            total += matched_signs(s, tb_sorted, signs, order, buckets)
            for i in range(n_batch):
                grad_coef[a, i] = signs[i] / n_batch * s[i] * (1.0 - s[i])
        objectives[k] = total
        if loss_positions is not None:
            rows = loss_positions[k]
            _loss_step(theta, indices, values, labels, rows, loss_coef, loss_mean, step_size)
        _descend(theta, indices, values, grad_rows, grad_coef, step_size)
        if not math.isfinite(theta[d]):
            diagnostics[0] = theta[d]
            return k + 1, STATUS_NOT_FINITE
    return n_updates, STATUS_OK


def logits(theta: np.ndarray, X) -> np.ndarray:
    r"""Logits :math:`\theta^\top (x, 1)` of the rows of a dense or sparse ``X``, batch-free.

    Each row is summed over its columns in order, starting from the intercept, as the kernels
    score it: the result for a row does not depend on the other rows of ``X``.
    """
    if sp.issparse(X):
        return logit_rows(theta, *padded_rows(X))
    return _dense_logits(theta, np.ascontiguousarray(X, dtype=np.float64))


@njit(cache=True)
def _dense_logits(theta, X):
    # Zero entries add exact zeros, so this equals logit_rows on the padded non-zeros.
    d = theta.shape[0] - 1
    out = np.empty(X.shape[0])
    for row in range(X.shape[0]):
        z = theta[d]
        for j in range(d):
            z += theta[j] * X[row, j]
        out[row] = z
    return out


@njit(cache=True)
def logit_rows(theta, indices, values):
    """Logits of every stored row, each summed in its own fixed order.

    A row's logit then depends on that row alone, never on which rows share the call (BLAS
    blocks a matrix product by batch size, which moves the last bits).
    """
    d = theta.shape[0] - 1
    out = np.empty(indices.shape[0])
    for row in range(indices.shape[0]):
        z = theta[d]
        for t in range(indices.shape[1]):
            z += theta[indices[row, t]] * values[row, t]
        out[row] = z
    return out


@njit(cache=True)
def score_rows(theta, indices, values):
    """Scores of every stored row (single-threaded: cheap beside BLAS on a shared machine)."""
    out = np.empty(indices.shape[0])
    for row in range(indices.shape[0]):
        out[row] = _score(theta, indices, values, row)
    return out
