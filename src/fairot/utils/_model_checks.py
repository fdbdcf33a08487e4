"""Validate scikit-learn's compiled tree structures in a loaded model before anything uses them.

skops refuses ``sklearn.tree._tree.Tree`` by default because scikit-learn's compiled code never
bounds-checks a tree's node indices: a file whose child index points outside the node array (or
back to an ancestor, a cycle) makes ``predict_proba`` read outside memory (a crash, or a wrong
answer for every row) or loop forever. :func:`fairot.load_model` allows trees only through
:func:`check_trees`, which walks the loaded object graph (estimators, ensembles, pipelines,
containers) and checks every tree against the invariants ``fit`` guarantees:

- a node is a leaf (both children ``-1``) or a split whose two children have larger indices
  than itself and lie in ``[0, node_count)`` (scikit-learn numbers children after their parent,
  so a walk from the root always ends at a leaf: no cycle);
- a split's feature lies in ``[0, n_features)``, where ``n_features`` is the owner's
  ``n_features_in_`` (the width of the ``X`` the compiled code indexes), and its threshold is a
  number (finite for ``Tree``; ``+inf`` is how histogram gradient boosting splits off NaNs);
- the value array has shape ``(node_count, n_outputs, max_n_classes)``;
- the sub-estimators of an ensemble read as many features as the ensemble does (or as its
  ``estimators_features_`` give them);
- a histogram gradient boosting predictor's categorical splits use a bitset that exists, on a
  feature the model's binner knows as categorical, whose categories fit the 256-bit bitsets.

Internal surface (used by ``_persistence``): :func:`check_trees`, :data:`MSG_TREE`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fairot.exceptions import UntrustedModelError

__all__ = ["MSG_TREE", "check_trees"]

MSG_TREE = (
    "{source} holds a tree structure that scikit-learn's fit never builds ({where}: {reason}); "
    "its compiled code does not check tree indices, so fairot.load_model refuses the file "
    "rather than let it crash or answer wrongly. The file was tampered with or is corrupt: "
    "save the fitted model again."
)
_TREE = "sklearn.tree._tree.Tree"
_PREDICTOR = "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"


class _Invalid(Exception):
    """One broken invariant; :func:`check_trees` turns it into an UntrustedModelError."""


def _name(obj: Any) -> str:
    kind = type(obj)
    return f"{kind.__module__}.{kind.__qualname__}"


def _reason(error: Exception) -> str:
    if isinstance(error, _Invalid):
        return str(error)
    return f"malformed arrays, {type(error).__name__}: {error}"[:200]


def _require(condition: bool, reason: str) -> None:
    if not condition:
        raise _Invalid(reason)


def _check_children(left: np.ndarray, right: np.ndarray, is_leaf: np.ndarray) -> None:
    """Children of split nodes after their parent and inside the node array (no cycle)."""
    n = len(left)
    index = np.arange(n)
    split = ~is_leaf
    _require(n >= 1, "no node")
    for side, children in (("left", left), ("right", right)):
        child = children[split].astype(np.int64)
        _require(
            bool(np.all((child > index[split]) & (child < n))),
            f"a {side} child index outside (parent, node_count={n})",
        )


def check_tree(tree: Any, n_features: int | None) -> None:
    """Check one ``sklearn.tree._tree.Tree`` (raises ``_Invalid``)."""
    count = int(tree.node_count)
    left, right = np.asarray(tree.children_left), np.asarray(tree.children_right)
    _require(len(left) == count and len(right) == count, "child arrays of another length")
    leaf = left == -1
    _require(bool(np.array_equal(leaf, right == -1)), "a node with one child")
    _check_children(left, right, leaf)
    width = int(tree.n_features)
    _require(width >= 1, f"n_features={width}")
    # Without its estimator's n_features_in_, scikit-learn checks no width of X before the
    # compiled walk reads X[i, feature]: a tree is only as safe as that check.
    _require(n_features is not None, "no n_features_in_ on the estimator that holds it")
    _require(width == n_features, f"n_features={width}, its estimator reads {n_features}")
    feature = np.asarray(tree.feature)[~leaf]
    _require(bool(np.all((feature >= 0) & (feature < width))), "a feature index out of range")
    threshold = np.asarray(tree.threshold)[~leaf]
    _require(bool(np.all(np.isfinite(threshold))), "a non-finite threshold")
    n_classes = np.asarray(tree.n_classes)
    outputs = int(tree.n_outputs)
    _require(outputs >= 1 and n_classes.shape == (outputs,), "n_classes of another length")
    _require(bool(np.all(n_classes >= 1)), "an output with no class")
    _require(int(tree.max_n_classes) == int(n_classes.max()), "max_n_classes inconsistent")
    shape = (count, outputs, int(tree.max_n_classes))
    _require(np.asarray(tree.value).shape == shape, f"value array not of shape {shape}")


def _check_predictor(predictor: Any, n_features: int, categorical: np.ndarray | None) -> None:
    """Check one histogram gradient boosting ``TreePredictor`` (raises ``_Invalid``)."""
    nodes = predictor.nodes
    leaf = nodes["is_leaf"].astype(bool)
    _check_children(nodes["left"], nodes["right"], leaf)
    split = nodes[~leaf]
    feature = split["feature_idx"]
    _require(bool(np.all((feature >= 0) & (feature < n_features))), "a feature index out of range")
    _require(not bool(np.any(np.isnan(split["num_threshold"]))), "a NaN threshold")
    on_category = split["is_categorical"].astype(bool)
    if on_category.any():
        bitsets = np.asarray(predictor.raw_left_cat_bitsets)
        binned = np.asarray(predictor.binned_left_cat_bitsets)
        index = split["bitset_idx"][on_category]
        _require(
            bool(np.all(index < min(len(bitsets), len(binned)))), "a bitset index out of range"
        )
        known = categorical is not None and bool(np.all(categorical[feature[on_category]]))
        _require(known, "a categorical split on a feature the binner does not know as one")


def _check_binner(model: Any, n_features: int) -> np.ndarray | None:
    """The binner's categorical mask, checked against the width and the 256-bit bitsets."""
    binner = model.__dict__.get("_bin_mapper")
    categorical = getattr(binner, "is_categorical_", None)
    if categorical is None:
        return None
    categorical = np.asarray(categorical, dtype=bool)
    _require(categorical.shape == (n_features,), "a binner of another width")
    thresholds = list(getattr(binner, "bin_thresholds_", []))
    _require(len(thresholds) == n_features, "binner thresholds of another width")
    for f in np.flatnonzero(categorical):
        values = np.asarray(thresholds[f], dtype=float)
        _require(
            bool(np.all((values >= 0) & (values <= 255) & (values == np.round(values)))),
            "a category outside 0..255",
        )
    return categorical


def _sub_estimators(model: Any) -> list[Any]:
    found = model.__dict__.get("estimators_")
    if isinstance(found, np.ndarray):
        return list(found.ravel())
    return list(found) if isinstance(found, (list, tuple)) else []


def _check_ensemble(model: Any, n_features: int) -> None:
    """Sub-estimators read the ensemble's features (or their subset of them).

    Gradient boosting adds ``estimators_[i, k]``'s predictions to column ``k`` of an array of
    ``n_trees_per_iteration_`` columns through a raw pointer: the shapes must agree.
    """
    stages = model.__dict__.get("estimators_")
    per_iteration = model.__dict__.get("n_trees_per_iteration_")
    if isinstance(stages, np.ndarray) and stages.ndim == 2 and per_iteration is not None:
        _require(stages.shape[1] == int(per_iteration), "stages of another width")
        init = model.__dict__.get("init_")
        classes = getattr(init, "__dict__", {}).get("classes_")
        if classes is not None and int(per_iteration) > 1:
            _require(len(classes) == int(per_iteration), "an initial model of other classes")
    subsets = model.__dict__.get("estimators_features_")
    for k, sub in enumerate(_sub_estimators(model)):
        width = getattr(sub, "__dict__", {}).get("n_features_in_")
        if width is None:
            continue
        expected = n_features
        if subsets is not None:
            _require(k < len(subsets), "fewer feature subsets than estimators")
            subset = np.asarray(subsets[k])
            _require(
                bool(np.all((subset >= 0) & (subset < n_features))), "a feature subset out of range"
            )
            expected = len(subset)
        _require(int(width) == expected, f"a sub-estimator reads {width} features, not {expected}")


def check_trees(model: Any, source: str) -> None:
    """Walk a loaded model and check every tree structure in it; raise when one is invalid.

    Parameters
    ----------
    model : object
        What skops built from the file.
    source : str
        The file's name, for the message.

    Raises
    ------
    fairot.exceptions.UntrustedModelError
        Naming the estimator that holds the invalid tree and the broken invariant
        (:data:`MSG_TREE`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = np.arange(8.0).reshape(-1, 1), np.arange(8) % 2
    >>> model = DecisionTreeClassifier(max_depth=2).fit(X, y)
    >>> check_trees(model, "model.skops")  # a fitted tree passes
    """
    seen: set[int] = set()
    stack: list[tuple[Any, int | None, str]] = [(model, None, _name(model))]
    while stack:
        obj, n_features, where = stack.pop()
        if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type)):
            continue
        seen.add(id(obj))
        try:
            if _name(obj) == _TREE:
                check_tree(obj, n_features)
                continue
            if _name(obj) == _PREDICTOR:
                raise _Invalid("a histogram predictor outside its boosting model")
        except Exception as invalid:  # _Invalid, or arrays too malformed to compare
            message = MSG_TREE.format(source=source, where=where, reason=_reason(invalid))
            raise UntrustedModelError(message, [_name(obj)]) from None
        children: list[tuple[Any, str]] = []
        if isinstance(obj, dict):
            children = [(v, f"{where}[{k!r}]") for k, v in obj.items()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            children = [(v, f"{where}[{i}]") for i, v in enumerate(obj)]
        elif isinstance(obj, np.ndarray):
            if obj.dtype == object:
                children = [(v, f"{where}[{i}]") for i, v in enumerate(obj.ravel())]
        elif hasattr(obj, "__dict__"):
            state = obj.__dict__
            width = state.get("n_features_in_")
            if width is not None:
                n_features = int(width)
            try:
                if n_features is not None:
                    _check_ensemble(obj, n_features)
                    if "_predictors" in state:
                        categorical = _check_binner(obj, n_features)
                        for predictors in state["_predictors"]:
                            for predictor in predictors:
                                _require(_name(predictor) == _PREDICTOR, "not a tree predictor")
                                _check_predictor(predictor, n_features, categorical)
                                seen.add(id(predictor))
            except Exception as invalid:  # _Invalid, or arrays too malformed to compare
                message = MSG_TREE.format(source=source, where=where, reason=_reason(invalid))
                raise UntrustedModelError(message, [_name(obj)]) from None
            children = [(v, f"{where}.{k}") for k, v in state.items()]
        stack.extend((child, n_features, at) for child, at in children)
