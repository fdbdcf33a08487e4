"""What DPP reads of ``X``: its width and column names, and the wrapped estimator's input tags.

``X`` goes to the base classifier untouched (strings, NaN, sparse, feature names: whatever it
accepts); DPP records or checks only its number and names of columns.

Internal surface of :mod:`fairot.classification._postprocessing`: :class:`WrappedInputsMixin`.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.utils import get_tags
from sklearn.utils.validation import _num_features, validate_data

from fairot.utils.backends import is_dask_collection


class WrappedInputsMixin:
    """``_check_features`` and the input tags of an estimator that wraps ``estimator``."""

    def _check_features(self, X, *, reset: bool) -> None:
        """Record (at fit) or check the number and names of features, without converting X.

        Inputs without a column count (a list of texts for a text pipeline, or a 1-D array
        that the estimator will reject with its own advice) are left to the estimator.
        """
        try:
            _num_features(X)
        except TypeError:
            if reset:
                for name in ("n_features_in_", "feature_names_in_"):
                    self.__dict__.pop(name, None)
            return
        validate_data(self, X, skip_check_array=True, reset=reset)
        if reset and is_dask_collection(X) and hasattr(X, "columns"):
            # scikit-learn reads the names of pandas frames only; the partitions of a Dask
            # frame, which predictions see, are pandas frames with these columns.
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        # X goes to the estimator untouched: it accepts what the estimator accepts.
        base = LogisticRegression() if self.estimator is None else self.estimator
        base_tags = get_tags(base)
        tags.input_tags.allow_nan = base_tags.input_tags.allow_nan
        tags.input_tags.sparse = base_tags.input_tags.sparse
        tags.input_tags.string = base_tags.input_tags.string
        return tags
