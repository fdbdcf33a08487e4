r"""COT's and DOT's check of a degenerate result, against the raw model :math:`\theta^*`.

At the end of ``fit`` / ``partial_fit`` the adjusted scores are compared with the raw model's by
:func:`fairot.metrics.diagnose_collapse` (on the training rows, then on ``eval_set``); a collapse
of their spread or of their AUC to chance warns with
:class:`~fairot.exceptions.DegenerateModelWarning`. A warning, not an error: with the attribute
the only signal, chance ranking is what parity in distribution demands, and the user may be
asking exactly that. (A spread collapsing against a target that is not itself flat is the
steps' fault, and an error, in the updates of ``_base.py``.)

Internal surface (for ``_base.py``): ``start_theta``, ``warn_if_degenerate``,
``MSG_TARGET_DEGENERATE``, ``MSG_DEGENERATE_ADVICE``, and the saturation check of diverging steps
(``saturated_share``, ``SATURATION_MARGIN``, ``SATURATED_SHARE``).
"""

from __future__ import annotations

import warnings

import numpy as np

from fairot.classification._kernels import logits
from fairot.classification._objective import sigmoid
from fairot.exceptions import DegenerateModelWarning
from fairot.metrics import CollapseDiagnosis, degenerate_model_message, diagnose_fit
from fairot.utils.stacklevel import user_stacklevel

MSG_TARGET_DEGENERATE = (
    " (its target is itself near-constant: standard deviation {spread:.3g} against {start:.3g} "
    "for the raw scores, so the raw model's ranking came from the groups)"
)
MSG_DEGENERATE_ADVICE = (
    "a smaller step_size (epsilon_theta, now {step:g}){extra}, more n_updates at that smaller "
    "step, or a tolerance tau > 0 (now {tau:g})"
)

# The other failure of too large steps: |logits| past ~20, scores 0 or 1 to the last bits. A fair
# model keeps roughly its target's share of such scores; a majority, and twice the target's, is
# divergence, not fairness.
SATURATION_MARGIN = 1e-9
SATURATED_SHARE = 0.5


def saturated_share(scores: np.ndarray) -> float:
    """Share of scores within ``SATURATION_MARGIN`` of 0 or 1."""
    return float(np.mean(np.minimum(scores, 1.0 - scores) < SATURATION_MARGIN))


def start_theta(model) -> np.ndarray:
    r"""The raw model's :math:`\theta^*` (coefficients, then intercept)."""
    return np.concatenate([model.initial_coef_[0], model.initial_intercept_])


def warn_if_degenerate(
    model,
    scores: np.ndarray,
    start_scores: np.ndarray,
    y01: np.ndarray,
    sample_weight: np.ndarray | None,
    evaluation,
    flat_target: CollapseDiagnosis,
) -> None:
    """Warn when ``model``'s adjusted scores collapsed against the raw model's (spread or AUC).

    ``flat_target`` is the diagnosis of the target against the raw scores: when the target is
    itself near-constant, the message says so.
    """
    held_out = None
    if evaluation is not None:
        ex, ey, _ = evaluation

        def held_out():
            return (
                ey,
                sigmoid(logits(np.concatenate([model.coef_[0], model.intercept_]), ex)),
                sigmoid(logits(start_theta(model), ex)),
            )

    diagnosis = diagnose_fit(
        y01, scores, start_scores=start_scores, sample_weight=sample_weight, held_out=held_out
    )
    if not diagnosis.collapsed:
        return
    advice = MSG_DEGENERATE_ADVICE.format(
        step=model.step_size, extra=model._extra_advice(), tau=model.tau_
    )
    cause = ""
    if flat_target.spread_collapsed:
        cause = MSG_TARGET_DEGENERATE.format(
            spread=flat_target.spread, start=flat_target.start_spread
        )
    warnings.warn(
        degenerate_model_message(type(model).__name__, diagnosis, advice, cause),
        DegenerateModelWarning,
        stacklevel=user_stacklevel(),
    )
