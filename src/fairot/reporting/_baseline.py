"""Baseline audits of a logistic regression on the built-in data sets (the COT paper's LR row)."""

from __future__ import annotations

from typing import Any

from fairot.datasets import load_baseline_split
from fairot.reporting._audit import Audit, audit


def audit_logistic_regression(
    name: str,
    *,
    random_state: int = 0,
    plots: bool = True,
    threshold: float = 0.5,
    n_bootstrap: int = 200,
    min_group_size: int = 30,
    exclude_small_groups: bool | None = None,
    reference: Any = None,
    standards: tuple[str, ...] | None = None,
    provenance_extra: dict[str, Any] | None = None,
    favorable_outcome: int = 1,
    **loader_kwargs: Any,
) -> Audit:
    """Audit scikit-learn's default ``LogisticRegression`` on a built-in data set's test split.

    The COT paper's LR baseline: default hyper-parameters, the sensitive attributes among the
    inputs, scores ``predict_proba[:, 1]`` audited on the test set.

    Parameters
    ----------
    name : {"adult", "german-credit", "communities-crime"}
        Data set.
    random_state : int, default=0
        Seed of the split where the data set has no official one, and of the bootstrap.
    plots : bool, default=True
        Draw the audit's figures.
    threshold, n_bootstrap, min_group_size, exclude_small_groups, reference, standards
        As in :func:`fairot.reporting.audit`.
    provenance_extra : dict, optional
        As in :func:`fairot.reporting.audit` (the model is described here).
    favorable_outcome : {1, 0}, default=1
        As in :func:`fairot.reporting.audit`.
    **loader_kwargs
        Passed to the loader.

    Returns
    -------
    fairot.reporting.Audit

    Examples
    --------
    >>> from fairot.reporting import audit_logistic_regression
    >>> result = audit_logistic_regression("german-credit", plots=False, n_bootstrap=20)
    >>> 0 <= result.summary["wass1"] <= 1
    True
    """
    from sklearn.linear_model import LogisticRegression

    split = load_baseline_split(name, random_state=random_state, **loader_kwargs)
    model = LogisticRegression().fit(split.X_train, split.y_train)
    scores = model.predict_proba(split.X_test)[:, 1]
    title = f"Audit of LogisticRegression() on {name} (test set; {split.split_note})"
    return audit(
        split.y_test,
        scores,
        split.sensitive_test,
        group_mode=split.group_mode,
        title=title,
        plots=plots,
        threshold=threshold,
        n_bootstrap=n_bootstrap,
        random_state=random_state,
        min_group_size=min_group_size,
        exclude_small_groups=exclude_small_groups,
        reference=reference,
        standards=standards,
        model=f"LogisticRegression() fitted on the {name} training split",
        provenance_extra=provenance_extra,
        favorable_outcome=favorable_outcome,
    )
