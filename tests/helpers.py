"""Builders shared by the test modules (no test module imports another, nor a conftest).

- :func:`make_biased`, :func:`shifted_groups`, :func:`linear_groups`: small data sets whose
  scores or responses depend on a group;
- :func:`groups_from_first_column`: the groups the scikit-learn estimator checks cannot pass;
- :func:`message_constants`, :func:`fills_template`: whether an error message is one of
  fairot's message constants with its placeholders filled (the fuzz tests).
"""

import re
import warnings
from collections.abc import Iterable

import numpy as np
from sklearn.utils.validation import _num_samples


def make_biased(n=600, seed=0, n_groups=2):
    """Two (or more) groups whose scores differ; the sensitive attribute is among the inputs."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_groups, n)
    x1 = rng.normal(0.8 * a, 1.0)
    x2 = rng.normal(size=n)
    X = np.column_stack([x1, x2, a.astype(float)])
    y = (x1 + 0.5 * x2 + rng.normal(0, 0.8, n) > 0.6).astype(int)
    return X, y, a


def shifted_groups(
    n, seed=0, *, noise_column=False, group_column=False, dtype=np.float64, label_dtype=int
):
    """Two groups whose first feature is shifted by the group (mean 0 or 1) and ``y`` with it.

    ``X`` holds that feature, then a pure-noise feature and the group itself where asked; the
    label is ``X[:, 0] + N(0, 1) > 0.5`` computed from ``X`` in ``dtype``.
    """
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    columns = [rng.normal(a, 1.0)]
    if noise_column:
        columns.append(rng.normal(size=n))
    if group_column:
        columns.append(a)
    X = np.column_stack(columns).astype(dtype)
    y = (X[:, 0] + rng.normal(0, 1, n) > 0.5).astype(label_dtype)
    return X, y, a


def linear_groups(n=600, seed=0, k=2):
    """A linear response shifted by 1.5 per group code, with Gaussian noise (regression)."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, k, n)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, 0.5, -0.3]) + 1.5 * s + rng.normal(scale=0.5, size=n)
    return X, y, s


def _first_column(X):
    """First column of whatever the check passes, or None when it is not a usable 2-D input."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if hasattr(X, "tocsr"):
                return np.asarray(X.tocsr()[:, [0]].toarray(), dtype=float).ravel()
            X = np.asarray(X, dtype=float)
    except (TypeError, ValueError, IndexError, NotImplementedError):
        return None
    if X.ndim != 2 or X.shape[1] == 0:
        return None
    return X[:, 0]


def groups_from_first_column(X):
    """Two groups read from each row's own first value (sklearn's checks pass no groups)."""
    column = _first_column(X)
    if column is None:
        # Let the estimator's own validation reject X; any two-group labelling will do.
        try:
            n = _num_samples(X)
        except TypeError:
            return None
        return np.arange(n) % 2
    # A pseudo-random group from the row's own first value: the same row always gets the same
    # group (repeated rows and weighted rows agree, as the sample-weight checks need), and the
    # group is unrelated to the label.
    with np.errstate(invalid="ignore"):
        code = np.floor(np.nan_to_num(np.abs(column), posinf=0.0) * 997.0 + 0.5)
    return (code % 2).astype(int)


def message_constants(modules: Iterable, prefix: str = "", suffix: str = "") -> list[str]:
    """The string constants of ``modules`` named ``<prefix>…<suffix>``."""
    return [
        getattr(module, name)
        for module in modules
        for name in dir(module)
        if name.startswith(prefix)
        and name.endswith(suffix)
        and name.isupper()
        and isinstance(getattr(module, name), str)
    ]


def fills_template(message: str, templates: Iterable[str]) -> bool:
    """Whether ``message`` is one of ``templates`` with any text in each ``{placeholder}``."""
    for template in templates:
        pattern = ".*".join(re.escape(part) for part in re.split(r"\{[^}]*\}", template))
        if re.fullmatch(pattern, message, re.S):
            return True
    return False


# scikit-learn's estimator checks and the fuzz tests fit tiny groups on purpose; the small-group
# warning (fairot.utils.groups.MSG_SMALL_GROUP) is tested in
# tests/classification/test_dpp_tolerance.py
IGNORE_SMALL_GROUPS = "ignore:group .* row\\(s\\) at fit, fewer than:UserWarning"


def mitigation_table(folder, *, seed: int, n: int):
    """Feature rows for `fairot mitigate`: x1 (shifted by sex), x2, job, sex and the label y.

    Writes ``data.csv`` and ``new.csv`` (40 rows without ``sex`` and ``y``, for ``--apply``) into
    ``folder``; returns ``(path, frame, new_path, new)``.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    frame = pd.DataFrame(
        {
            "x1": rng.normal(0.8 * (sex == "M"), 1.0),
            "x2": rng.normal(size=n),
            "job": rng.choice(["clerk", "nurse", "smith"], n),
            "sex": sex,
        }
    )
    signal = frame.x1 + 0.6 * (frame.job == "smith") + rng.normal(0, 1, n)
    frame["y"] = (signal > 0.5).astype(int)
    path = folder / "data.csv"
    frame.to_csv(path, index=False)
    new = frame.drop(columns=["sex", "y"]).sample(40, random_state=1)
    new_path = folder / "new.csv"
    new.to_csv(new_path, index=False)
    return path, frame, new_path, new


def assert_one_line_error(code, out, err, pattern):
    """A CLI user error: status 2, nothing on stdout, one stderr line matching ``pattern``."""
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert re.search(pattern, err), err


def mitigation_split(frame, seed=0):
    """The held-out split of ``fairot mitigate``: 30 %, stratified on sex × label, rows in order."""
    from sklearn.model_selection import train_test_split

    key = frame.sex.astype(str) + "|" + frame.y.astype(str)
    train, test = train_test_split(
        np.arange(len(frame)), test_size=0.3, random_state=seed, stratify=key
    )
    return frame.iloc[np.sort(train)], frame.iloc[np.sort(test)]


def mitigation_encoder(train):
    """The feature encoding ``fairot mitigate`` uses on :func:`mitigation_table`, fitted."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer(
        [
            ("num", StandardScaler(), ["x1", "x2"]),
            ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), ["job"]),
        ]
    ).fit(train)
