"""Baseline audit of a regressor on the built-in regression data (the ACS excerpts)."""

from __future__ import annotations

from typing import Any

from fairot.datasets import BUILTIN_REGRESSION_DATASETS, load_baseline_split
from fairot.reporting._audit import Audit, audit

MSG_REGRESSION_DATASET = "name must be one of {names} (regression data); got {value!r}."


def audit_gradient_boosting(
    name: str = "acs-excerpts",
    *,
    random_state: int = 0,
    plots: bool = True,
    n_bootstrap: int = 200,
    min_group_size: int = 30,
    exclude_small_groups: bool = False,
    **loader_kwargs: Any,
) -> Audit:
    """Audit a gradient-boosting regressor on a built-in regression data set's test split.

    ``"acs-excerpts"``: the regression paper's ACS income task (Section 6) on the 2018 national
    NIST ACS excerpt shipped with fairot: log income from AGEP, SEX, EDU, MSP and INDP, three
    race groups (White, Black, Asian), a 70/30 split stratified by group. The model is
    scikit-learn's ``GradientBoostingRegressor(random_state=random_state)``; its test
    predictions are audited with ``task="regression"`` (unweighted, as in the paper).

    Parameters
    ----------
    name : {"acs-excerpts"}, default="acs-excerpts"
        Data set.
    random_state : int, default=0
        Seed of the split, the model and the bootstrap.
    plots : bool, default=True
        Draw the audit's figures.
    n_bootstrap, min_group_size, exclude_small_groups
        As in :func:`fairot.reporting.audit`.
    **loader_kwargs
        Passed to :func:`fairot.datasets.load_acs_excerpts` (e.g. ``n_groups=2``).

    Returns
    -------
    fairot.reporting.Audit

    Examples
    --------
    >>> from fairot.reporting import audit_gradient_boosting
    >>> result = audit_gradient_boosting(plots=False, n_bootstrap=0)
    >>> list(result.report.index[:-1])
    ['Asian', 'Black', 'White']
    """
    from sklearn.ensemble import GradientBoostingRegressor

    if name not in BUILTIN_REGRESSION_DATASETS:
        names = ", ".join(map(repr, BUILTIN_REGRESSION_DATASETS))
        raise ValueError(MSG_REGRESSION_DATASET.format(names=names, value=name))
    split = load_baseline_split(name, random_state=random_state, **loader_kwargs)
    model = GradientBoostingRegressor(random_state=random_state)
    predictions = model.fit(split.X_train, split.y_train).predict(split.X_test)
    title = (
        f"Audit of GradientBoostingRegressor() on {name} "
        f"({split.y_test.name}, test set; {split.split_note})"
    )
    return audit(
        split.y_test,
        predictions,
        split.sensitive_test,
        task="regression",
        title=title,
        plots=plots,
        n_bootstrap=n_bootstrap,
        random_state=random_state,
        min_group_size=min_group_size,
        exclude_small_groups=exclude_small_groups,
    )
