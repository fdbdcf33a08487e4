"""Builders shared by the test modules (no test module imports another, nor a conftest).

- :func:`make_biased`, :func:`shifted_groups`, :func:`linear_groups`: small data sets whose
  scores or responses depend on a group;
- :func:`hidden_groups`: groups that are not an input but that X predicts;
- :data:`FAST_IN_PROCESSING`: COT and DOT set for quick fits;
- :class:`TrueCells`, :func:`population_selection_rates`: a Gaussian mixture whose cell
  posteriors and selection rates are known exactly (the rate-constrained rule's oracle);
- :func:`groups_from_first_column`: the groups the scikit-learn estimator checks cannot pass;
- :func:`message_constants`, :func:`fills_template`: whether an error message is one of
  fairot's message constants with its placeholders filled (the fuzz tests);
- :func:`message_prefix`: the pattern of a message constant's text before its first placeholder;
- :func:`run_cli`, :func:`write_rows`, :func:`mitigate_args`: a command run in this process on
  a table written as the user typed it;
- :func:`sized_groups`: groups of distinct sizes, for the plots and pages of many groups;
- :func:`markdown_tables`, :func:`html_tables`: the tables of a report as its reader sees them;
- :func:`chromium`, :func:`chromium_screenshot`: a page rendered by headless Chromium;
- :func:`reference_stream`, :func:`window_monitor`: the reference and the monitor of the tests
  of the monitor's windows and reports.
"""

import os
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterable
from html.parser import HTMLParser

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
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


def hidden_groups(n=1500, seed=0, n_groups=2):
    """The group is not an input; X predicts it (x0) and the label (x0 + x1)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_groups, n)
    X = np.column_stack([rng.normal(a, 1.0), rng.normal(0.0, 1.0, n)])
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 1, n) > 0.5).astype(int)
    return X, y, a


def _in_processing(name, defaults):
    """A maker of ``fairot.classification.<name>`` with ``defaults``, overridden by keywords."""

    def make(**kwargs):
        from fairot import classification

        return getattr(classification, name)(**{**defaults, **kwargs})

    return make


#: COT and DOT at 3,000 small updates with a fixed seed: quick fits of the classification tests.
FAST_IN_PROCESSING = {
    "COT": _in_processing(
        "COTClassifier", {"n_updates": 3000, "step_size": 1e-3, "batch_size": 20, "random_state": 0}
    ),
    "DOT": _in_processing(
        "DOTClassifier", {"n_updates": 3000, "step_size": 1e-2, "batch_size": 20, "random_state": 0}
    ),
}


class TrueCells(ClassifierMixin, BaseEstimator):
    """The exact cell posteriors p(a, y | x) of a Gaussian mixture (codes 2a + y).

    A ~ Bernoulli(PI), Y | A ~ Bernoulli(P_Y[A]), X | A, Y ~ N(MEANS[A, Y], 1).
    """

    PI = np.array([0.6, 0.4])
    P_Y = np.array([0.35, 0.6])
    MEANS = np.array([[-1.0, 0.6], [-0.2, 1.4]])

    def fit(self, X, y=None):
        self.classes_ = np.arange(4)
        return self

    def joint(self, x):
        prior = np.array(
            [
                self.PI[a] * (self.P_Y[a] if y else 1 - self.P_Y[a])
                for a, y in ((0, 0), (0, 1), (1, 0), (1, 1))
            ]
        )
        means = self.MEANS.ravel()
        return prior * np.exp(-0.5 * (x[:, None] - means) ** 2) / np.sqrt(2 * np.pi)

    def predict_proba(self, X):
        joint = self.joint(np.asarray(X, dtype=float)[:, 0])
        return joint / joint.sum(axis=1, keepdims=True)

    def sample(self, n, seed):
        rng = np.random.default_rng(seed)
        a = (rng.random(n) < self.PI[1]).astype(int)
        y = (rng.random(n) < self.P_Y[a]).astype(int)
        return rng.normal(self.MEANS[a, y], 1.0)[:, None], y, a


def population_selection_rates(model, truth):
    """P(decide 1 | A = a) of the fitted rule, integrated from the mixture's densities."""
    from scipy.stats import norm

    grid = np.linspace(-7.0, 8.0, 30_001)
    step = grid[1] - grid[0]
    decided = model.predict(grid[:, None]).astype(float)
    rates = []
    for a in (0, 1):
        density = sum(
            (truth.P_Y[a] if y else 1 - truth.P_Y[a]) * norm.pdf(grid, truth.MEANS[a, y], 1.0)
            for y in (0, 1)
        )
        rates.append(float(decided @ density * step))
    return np.array(rates)


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


def message_prefix(message: str) -> str:
    """The regular expression of ``message`` up to its first ``{placeholder}``."""
    return re.escape(message.split("{")[0])


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


def run_cli(capsys, *args):
    """``fairot ARGS`` in this process: ``(status, stdout, stderr)``, arguments turned to text."""
    from fairot.cli import main

    code = main(list(map(str, args)))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_rows(path, rows, header):
    """A table written line by line, not by pandas, so that "01" stays the text the user typed."""
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def mitigate_args(path, out, *extra):
    """``fairot mitigate --method dpp`` on the ``score`` and ``group`` columns of ``path``."""
    return [
        "mitigate", "--data", path, "--score", "score", "--sensitive", "group",
        "--method", "dpp", "--out", out, "--n-bootstrap", 0, *extra,
    ]  # fmt: skip


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


# --------------------------------------------------------------------------- Chromium
def chromium() -> str | None:
    """The path of a Chromium or Chrome executable, or ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_screenshot(page, tmp_path, name):
    """Screenshot ``page`` with headless Chromium; return the image and the console lines."""
    browser = chromium()
    if browser is None:
        pytest.skip(
            "headless Chromium not found (Debian: apt-get install chromium; `make test` installs "
            "it when run as root)"
        )
    shot = tmp_path / f"{name}.png"
    args = [
        browser,
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1200,3200",  # the verdict block first pushes the figures down
        f"--screenshot={shot}",
        "--enable-logging=stderr",
        "--v=0",
        # Any request leaving the machine fails, and its failure is a console error.
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'profile'}",
        page.as_uri(),
    ]
    if os.geteuid() == 0:
        args.insert(1, "--no-sandbox")
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if not shot.exists():
        pytest.fail(f"Chromium made no screenshot (exit {done.returncode}): {done.stderr[-2000:]}")
    import matplotlib.image

    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return matplotlib.image.imread(shot), console


def markdown_tables(text):
    """Every table of a markdown report, by the heading above it: a list of [header, rows].

    A section may hold several tables (the per-group table comes in blocks of columns).
    """
    tables, heading, rows = {}, None, []
    for line in text.splitlines() + [""]:
        if line.startswith("## "):
            heading = line[3:].strip()
        elif line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if not set("".join(cells)) <= set("-"):
                rows.append(cells)
        elif rows:
            tables.setdefault(heading, []).append(
                [[c.replace("\\", "") for c in rows[0]], rows[1:]]
            )
            rows = []
    return tables


class _Tables(HTMLParser):
    """The cells of every ``<table>`` of a page, row by row."""

    def __init__(self):
        super().__init__()
        self.tables, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def html_tables(text):
    """Every table of an HTML page: a list of [header, rows]."""
    parser = _Tables()
    parser.feed(text)
    return [[rows[0], rows[1:]] for rows in parser.tables]


def sized_groups(k, seed=0):
    """``k`` groups of distinct sizes (not in name order): scores, groups, names by size."""
    rng = np.random.default_rng(seed)
    sizes = 20 + 7 * rng.permutation(k)  # distinct sizes, not in name order
    g = np.repeat([f"group {i:02d}" for i in range(k)], sizes)
    s = rng.beta(2, 3, g.size)
    order = [f"group {i:02d}" for i in np.argsort(-sizes, kind="stable")]
    return s, g, order


def reference_stream():
    """The reference window of the monitor tests: 60 uniform scores of two alternating groups."""
    rng = np.random.default_rng(0)
    return rng.uniform(size=60), np.tile(["a", "b"], 30)


def window_monitor(**kwargs):
    """A :class:`~fairot.reporting.FairnessMonitor` on :func:`reference_stream` (threshold 0.5)."""
    from fairot.reporting import FairnessMonitor

    ref_s, ref_g = reference_stream()
    return FairnessMonitor(ref_s, ref_g, threshold=0.5, n_bootstrap=20, **kwargs)
