"""An identity model whose score is a column of ``X``: post-process scores you already have.

The post-processors (:class:`~fairot.classification.QuantileParityPostProcessor`,
:class:`~fairot.regression.WassersteinFairRegressor`) wrap a model; when the scores come from
elsewhere (a CSV of a production model's outputs), this stands in for that model. It holds only
NumPy arrays and numbers, so it pickles and loads with ``skops.io`` as a plain object.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

MSG_PROBA_RANGE = (
    "ScoreColumn.predict_proba needs scores in [0, 1] in column {column}; got values in "
    "[{low:g}, {high:g}]."
)
MSG_COLUMN = "column must be < n_features_in_ = {n}; got {column}."


class ScoreColumn(BaseEstimator):
    r"""Identity score model: column ``column`` of ``X`` is the score.

    ``predict`` returns the column (a regressor's prediction); ``predict_proba`` returns
    ``[1 - s, s]`` for scores :math:`s \in [0, 1]` (a binary classifier's probabilities, the
    positive class being the larger one). ``fit`` learns nothing but the input width and classes.

    Parameters
    ----------
    column : int, default=0
        Index of the score column.

    Attributes
    ----------
    n_features_in_ : int
    classes_ : ndarray of shape (2,)
        The two classes of ``y`` at fit time (``[0, 1]`` when ``y`` is not binary labels).

    Examples
    --------
    >>> import numpy as np
    >>> from fairot.utils import ScoreColumn
    >>> model = ScoreColumn().fit(np.array([[0.2], [0.9]]), [0, 1])
    >>> model.predict_proba(np.array([[0.25]]))
    array([[0.75, 0.25]])
    """

    _parameter_constraints: dict = {"column": [Interval(numbers.Integral, 0, None, closed="left")]}

    def __init__(self, *, column: int = 0):
        self.column = column

    def fit(self, X, y=None):
        """Record the input width (and the two classes of ``y``, if it has two).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            Ignored but for its classes.

        Returns
        -------
        self : ScoreColumn
        """
        self._validate_params()
        X = validate_data(self, X, dtype=np.float64, reset=True)
        if self.column >= X.shape[1]:
            raise ValueError(MSG_COLUMN.format(n=X.shape[1], column=self.column))
        found = np.unique(np.asarray(y)) if y is not None else np.array([])
        self.classes_ = found if found.shape[0] == 2 else np.array([0, 1])
        return self

    def predict(self, X) -> np.ndarray:
        """The score column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X[:, self.column].copy()

    def predict_proba(self, X) -> np.ndarray:
        """``[1 - s, s]`` with ``s`` the score column, which must lie in [0, 1].

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
        """
        s = self.predict(X)
        if s.size and (s.min() < 0 or s.max() > 1):
            raise ValueError(MSG_PROBA_RANGE.format(column=self.column, low=s.min(), high=s.max()))
        return np.column_stack([1.0 - s, s])
