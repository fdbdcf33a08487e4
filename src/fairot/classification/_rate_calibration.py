r"""Calibration of the cell probabilities of the rate-constrained rule.

The rates :class:`~fairot.classification.RateConstrainedClassifier` constrains are
expectations of its cell probabilities, :math:`P(\hat Y = 1 \mid A = a) = E[t(X)\, g_a(X)] /
\pi_a`, so the budget on new rows is only as accurate as those probabilities are calibrated:
:math:`P(C = c \mid \hat p(X) = p) = p_c`. A map :math:`\phi` from the model's probabilities
to calibrated ones is fitted here on the *cross-fitted* probabilities against the true cell
codes (out of fold, as scikit-learn's ``CalibratedClassifierCV(ensemble=False)`` does), and
then applied to every probability the rule reads: the cross-fitted ones before the multipliers
are chosen, and those of the final model at prediction.

Two maps, scikit-learn's names:

- ``"sigmoid"``: a multinomial logistic regression on the centred log-probabilities,
  :math:`\phi(p) = \operatorname{softmax}(W \log p + b)` (*matrix scaling*, Guo et al. [1]_),
  the multiclass form of Platt's sigmoid: with two cells it *is* Platt scaling of the logit.
  Parametric (:math:`C^2 + C` numbers for :math:`C` cells), convex, fitted by L-BFGS from a
  fixed start, so deterministic and stable on a few hundred rows; it undoes a model that is
  over- or under-confident by a temperature exactly (:math:`W = I / T`).
- ``"isotonic"``: one nondecreasing map per cell (one-vs-rest isotonic regression of
  :math:`1\{C = c\}` on :math:`\hat p_c`), the results renormalised to sum to 1, as
  ``CalibratedClassifierCV(method="isotonic")`` does for several classes. Nonparametric: it
  corrects any monotone distortion, but needs many rows per cell (it overfits small cells).

Internal surface (for :mod:`fairot.classification._rate_constrained`): :data:`CALIBRATIONS`,
:class:`CellCalibration`, :func:`resolve_calibration`, :func:`cell_log_loss`.

References
----------
.. [1] C. Guo, G. Pleiss, Y. Sun and K. Q. Weinberger, "On calibration of modern neural
   networks", ICML 2017, PMLR 70:1321-1330.
"""

from __future__ import annotations

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
from sklearn.pipeline import Pipeline

#: The values of ``calibration`` (``None`` too: no calibration).
CALIBRATIONS = ("auto", "sigmoid", "isotonic")

#: The probabilities' floor before the logarithm: a cell given probability 0 (a fold that saw
#: none of its rows) gets a finite, very negative feature instead of ``-inf``.
_FLOOR = 1e-30

#: Models whose probabilities are fitted by the log-loss itself: calibrated by construction
#: (up to their own misspecification), so ``"auto"`` leaves them as they are.
_CALIBRATED_MODELS = (LogisticRegression, LogisticRegressionCV, CalibratedClassifierCV)


def resolve_calibration(calibration: str | None, estimator) -> str | None:
    """The map ``calibration`` asks for; ``"auto"`` resolved for ``estimator``.

    ``"auto"`` is ``None`` for the default model (``estimator=None``), a
    :class:`~sklearn.linear_model.LogisticRegression` (or ``LogisticRegressionCV``), a
    :class:`~sklearn.calibration.CalibratedClassifierCV`, a
    :class:`~sklearn.pipeline.Pipeline` ending in one of those, and a model in
    :class:`~sklearn.frozen.FrozenEstimator` (trained elsewhere: whether the fitting rows are
    new to it, which a map fitted on them needs, only the user knows); ``"sigmoid"``
    otherwise.
    """
    if calibration != "auto":
        return calibration
    model = estimator
    while isinstance(model, Pipeline):
        model = model.steps[-1][1]
    if model is None or isinstance(model, (FrozenEstimator, *_CALIBRATED_MODELS)):
        return None
    return "sigmoid"


def cell_log_loss(proba: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> float:
    r"""The weighted mean of :math:`-\log p_{i, c_i}` (probabilities clipped at 1e-15)."""
    taken = np.clip(proba[np.arange(codes.shape[0]), codes], 1e-15, 1.0)
    return float(-(weights @ np.log(taken)) / weights.sum())


def _log_features(proba: np.ndarray) -> np.ndarray:
    """Centred log-probabilities (the additive constant of a softmax carries no information)."""
    logs = np.log(np.clip(proba, _FLOOR, 1.0))
    return logs - logs.mean(axis=1, keepdims=True)


class CellCalibration:
    """A calibration map of cell probabilities, fitted on out-of-fold probabilities.

    Parameters
    ----------
    method : {"sigmoid", "isotonic"}
        See the module's docstring.
    n_cells : int
        Columns of the probabilities (the cell codes' range).

    Attributes
    ----------
    model_ : LogisticRegression
        The multinomial map on the centred log-probabilities (``"sigmoid"``).
    cells_ : ndarray of int
        The cells present in the fitting rows, each with a map in ``maps_`` (``"isotonic"``).
    maps_ : list of IsotonicRegression
        One map per cell of ``cells_`` (``"isotonic"``).
    """

    def __init__(self, method: str, n_cells: int):
        self.method = method
        self.n_cells = n_cells

    def fit(self, proba: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> CellCalibration:
        """Fit the map on probabilities ``proba`` of rows whose true cells are ``codes``."""
        if self.method == "sigmoid":
            # C = 1 (scikit-learn's default) is a negligible pull towards the prior next to
            # the log-loss summed over hundreds of rows; it keeps the optimum unique when a
            # cell is rare.
            self.model_ = LogisticRegression(C=1.0, max_iter=1000)
            self.model_.fit(_log_features(proba), codes, sample_weight=weights)
        else:
            self.cells_ = np.flatnonzero(np.bincount(codes, weights, self.n_cells) > 0)
            self.maps_ = [
                IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
                    proba[:, c], (codes == c).astype(float), sample_weight=weights
                )
                for c in self.cells_
            ]
        return self

    def transform(self, proba: np.ndarray) -> np.ndarray:
        """Calibrated probabilities, of the same shape as ``proba`` (rows sum to 1)."""
        out = np.zeros((proba.shape[0], self.n_cells))
        if self.method == "sigmoid":
            out[:, self.model_.classes_] = self.model_.predict_proba(_log_features(proba))
            return out
        for c, isotonic in zip(self.cells_, self.maps_, strict=True):
            out[:, c] = isotonic.predict(proba[:, c])
        total = out.sum(axis=1, keepdims=True)
        # Every map at 0 for a row (below every cell's lowest fitted value): uniform over the
        # cells seen, as CalibratedClassifierCV does, instead of a 0/0.
        empty = total[:, 0] <= 0
        out[np.ix_(empty, self.cells_)] = 1.0 / self.cells_.shape[0]
        total[empty] = 1.0
        return out / total
