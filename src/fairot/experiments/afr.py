"""The regression paper's studies: approximate demographic parity under a W_p tolerance.

``fairot reproduce afr-simulation | afr-multigroup | afr-crime | afr-acs | afr-classification``.
Each function returns a :class:`~fairot.experiments.StudyResult` with our numbers beside the
paper's ("Fair Regression under Approximate Demographic Parity", ``seeds/001``, Sections 5-6).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import train_test_split
from tqdm.auto import tqdm

from fairot.experiments._result import StudyResult
from fairot.metrics import max_pairwise_wasserstein
from fairot.regression import (
    LogisticCost,
    WassersteinFairRegressor,
    fairness_accuracy_path,
    plot_path,
    plot_quantile_curves,
)

__all__ = [
    "run_afr_acs",
    "run_afr_classification",
    "run_afr_crime",
    "run_afr_multigroup",
    "run_afr_simulation",
]

BETA = np.array([1.0, 0.8, 0.6, 0.4, 0.2])
P_VALUES = {"W1": 1.0, "W2": 2.0, "Winf": np.inf}


class GroupwiseModel(RegressorMixin, BaseEstimator):
    """One clone of ``estimator`` per group; the group index is the last column of ``X``.

    Lets a group-wise score (the paper's Stage 1) be frozen and reused across Wasserstein orders
    and tolerances without refitting.
    """

    def __init__(self, estimator=None):
        self.estimator = estimator

    def fit(self, X, y):
        """Fit one model per group (group index in the last column)."""
        X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        groups = X[:, -1].astype(int)
        self.models_ = {
            g: clone(self.estimator).fit(X[groups == g, :-1], y[groups == g])
            for g in np.unique(groups)
        }
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        """Route each row to its group's model."""
        X = np.asarray(X, dtype=float)
        groups = X[:, -1].astype(int)
        out = np.empty(X.shape[0])
        for g, model in self.models_.items():
            member = groups == g
            if member.any():
                out[member] = model.predict(X[member, :-1])
        return out


def _split_403030(codes: np.ndarray, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified 40/30/30 auxiliary / calibration / test split (Section 5.1)."""
    index = np.arange(codes.shape[0])
    aux, rest = train_test_split(index, train_size=0.4, stratify=codes, random_state=seed)
    cal, test = train_test_split(rest, train_size=0.5, stratify=codes[rest], random_state=seed)
    return aux, cal, test


def _simulate(dgp: int, n: int, rng: np.random.Generator, shares=(0.6, 0.4), intercepts=None):
    """The paper's data-generating processes (Section 5.1; ours, stated in docs/regression.md)."""
    X = rng.normal(size=(n, 5))
    s = rng.choice(len(shares), size=n, p=np.asarray(shares) / np.sum(shares))
    lin = X @ BETA
    if dgp == 1:
        mean = lin + 2.0 * (s == 1)
    elif dgp == 2:
        mean = lin + 0.5 * (s == 1) + 3.0 * (s == 1) * np.maximum(lin - 1.0, 0.0)
    else:
        mean = lin + np.asarray(intercepts)[s]
    return X, s, mean + rng.normal(size=n)


def _path_for(model, X_cal, y_cal, s_cal, X_test, y_test, s_test, taus, **params):
    template = WassersteinFairRegressor(estimator=FrozenEstimator(model), **params)
    with warnings.catch_warnings():
        # tau > 1 (the classification plot's last points) is intended here
        warnings.filterwarnings("ignore", message="tau=", category=UserWarning)
        return fairness_accuracy_path(
            template,
            X_cal,
            y_cal,
            sensitive_features=s_cal,
            taus=taus,
            X_test=X_test,
            y_test=y_test,
            sensitive_features_test=s_test,
        )


def _unchanged_share(estimator) -> float:
    """Share of grid ranks where no group's curve moved (W-infinity clipping, Section 5.2)."""
    same = np.all(estimator.adjusted_curves_ == estimator.latent_curves_, axis=0)
    return float(same.mean())


def _diminishing_returns(frame: pd.DataFrame, unadjusted: pd.DataFrame) -> pd.DataFrame:
    """Share of the raw test gap removed at tau = .5, and its share of the tau = 0 MSE increase."""
    rows = []
    for (dgp, p), g in frame.groupby(["dgp", "p"], sort=False):
        raw = unadjusted[(unadjusted["dgp"] == dgp) & (unadjusted["p"] == p)]
        by_tau = g.groupby("tau")[["mse", "test_gap"]].mean()
        mse_raw, gap_raw = raw["mse"].mean(), raw["test_gap"].mean()
        half = by_tau.loc[np.isclose(by_tau.index, 0.5)].iloc[0]
        zero = by_tau.loc[np.isclose(by_tau.index, 0.0)].iloc[0]
        rows.append(
            {
                "dgp": dgp,
                "p": p,
                "gap removed at tau=.5 (%)": 100 * (1 - half["test_gap"] / gap_raw),
                "gap removed at tau=0 (%)": 100 * (1 - zero["test_gap"] / gap_raw),
                "MSE increase at .5 / at 0 (%)": 100
                * (half["mse"] - mse_raw)
                / (zero["mse"] - mse_raw),
            }
        )
    return pd.DataFrame(rows)


def run_afr_simulation(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> StudyResult:
    """Two-group simulations (Section 5.2, Figure 1, Table 3): DGP1 and DGP2, W1/W2/W-inf.

    n = 2000, stratified 40/30/30 split, group-wise random forests (200 trees, depth 10, min
    leaf 5), M = 2000, range [-20, 20], 11 tolerances, R = 50 replications (``quick``: R = 2,
    20 trees, n = 1000, M = 400).
    """
    n_rep = n_seeds or (2 if quick else 50)
    n, n_grid = (1000, 400) if quick else (2000, 2000)
    forest = RandomForestRegressor(
        n_estimators=20 if quick else 200,
        max_depth=10,
        min_samples_leaf=5,
        n_jobs=1,
    )
    taus = np.linspace(0.0, 1.0, 11)
    rows, raw_rows, examples = [], [], {}
    jobs = [(dgp, r) for dgp in (1, 2) for r in range(n_rep)]
    for dgp, r in tqdm(jobs, disable=not progress, desc="afr-simulation"):
        seed = random_state + 1000 * dgp + r
        rng = np.random.default_rng(seed)
        X, s, y = _simulate(dgp, n, rng)
        aux, cal, test = _split_403030(s, seed)
        Xs = np.column_stack([X, s])
        model = GroupwiseModel(clone(forest).set_params(random_state=seed)).fit(Xs[aux], y[aux])
        for name, p in P_VALUES.items():
            path = _path_for(
                model,
                Xs[cal],
                y[cal],
                s[cal],
                Xs[test],
                y[test],
                s[test],
                taus,
                p=p,
                n_grid=n_grid,
                bounds=(-20.0, 20.0),
            )
            table = path.table.assign(dgp=f"DGP{dgp}", p=name, replication=r)
            if np.isinf(p):
                table["unchanged_ranks"] = [_unchanged_share(e) for e in path.estimators]
            rows.append(table)
            raw_rows.append({"dgp": f"DGP{dgp}", "p": name, "replication": r, **path.unadjusted})
            if r == 0:
                examples[(dgp, name)] = path
    frame = pd.concat(rows, ignore_index=True)
    unadjusted = pd.DataFrame(raw_rows)
    summary = (
        frame.groupby(["dgp", "p", "tau"], sort=False)
        .agg(
            mse=("mse", "mean"),
            mse_se=("mse", "sem"),
            test_gap=("test_gap", "mean"),
            test_gap_se=("test_gap", "sem"),
            grid_gap=("grid_gap", "mean"),
            max_grid_violation=("grid_violation", "max"),
        )
        .reset_index()
    )
    unchanged = (
        frame[frame["p"] == "Winf"].groupby(["dgp", "tau"])["unchanged_ranks"].mean().reset_index()
    )
    at_half = summary[np.isclose(summary["tau"], 0.5)].reset_index(drop=True)
    returns = _diminishing_returns(frame, unadjusted)
    figures = {}
    for dgp in (1, 2):
        fig = None
        for name in P_VALUES:
            sub = summary[(summary["dgp"] == f"DGP{dgp}") & (summary["p"] == name)]
            ax = None if fig is None else fig.axes[0]
            fig = plot_path(sub, x="test_gap", y="mse", label=name, ax=ax)
        fig.axes[0].set_title(f"DGP{dgp}: test MSE against test gap (mean of {n_rep})")
        figures[f"path_dgp{dgp}"] = fig
    example = examples[(2, "Winf")].estimators[5]
    figures["quantiles_dgp2_winf_tau05"] = plot_quantile_curves(example)
    max_violation = float(frame["grid_violation"].max())
    dgp2_half = (unchanged["dgp"] == "DGP2") & np.isclose(unchanged["tau"], 0.5)
    dgp2_half_unchanged = unchanged.loc[dgp2_half, "unchanged_ranks"].mean()
    paper = {
        "claims": pd.DataFrame(
            [
                {
                    "quantity": "largest grid violation over all fits",
                    "paper": "1.75e-14",
                    "ours": f"{max_violation:.3g}",
                },
                {
                    "quantity": "DGP1 W2: test gap removed at tau=.5",
                    "paper": "almost half",
                    "ours": _fmt_pct(returns, "DGP1", "W2", "gap removed at tau=.5 (%)"),
                },
                {
                    "quantity": "DGP1 W2: MSE increase at tau=.5 vs tau=0",
                    "paper": "about one quarter",
                    "ours": _fmt_pct(returns, "DGP1", "W2", "MSE increase at .5 / at 0 (%)"),
                },
                {
                    "quantity": "DGP2 W-inf tau=.5: ranks left unchanged",
                    "paper": "about 62%",
                    "ours": f"{100 * dgp2_half_unchanged:.1f}%",
                },
            ]
        )
    }
    notes = (
        f"Two groups, n = {n}, R = {n_rep} replications, M = {n_grid}. Test gap = held-out W_p "
        "between the groups' predictions (same p as the constraint). 'MSE increase at .5 / at 0' "
        "is (MSE(.5) - MSE(raw)) / (MSE(0) - MSE(raw)); 'gap removed' is 1 - gap / raw gap. "
        "Table 3 of the paper lost its numbers in the text we have; its qualitative claims are "
        "compared in 'claims'."
    )
    return StudyResult(
        name="afr-simulation",
        tables={
            "at_tau_0.5": at_half,
            "diminishing_returns": returns,
            "claims": paper["claims"],
            "unchanged_ranks_winf": unchanged,
        },
        curves={"path": summary, "unadjusted": unadjusted},
        figures=figures,
        notes=notes,
        config={
            "n": n,
            "replications": n_rep,
            "n_grid": n_grid,
            "taus": taus.tolist(),
            "forest": forest.get_params(),
            "random_state": random_state,
        },
    )


def _fmt_pct(table, dgp, p, column) -> str:
    row = table[(table["dgp"] == dgp) & (table["p"] == p)]
    return f"{row[column].iloc[0]:.1f}%"


def run_afr_multigroup(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> StudyResult:
    """Three groups (Section 5.3, Figure 5): intercepts 0, 2, 4, OLS with group indicators.

    n = 2000, shares .2/.3/.5, stratified 40/30/30 split, M = 100, range [-20, 20], 25
    tolerances, W2, known squared cost and the observed-loss variant.
    """
    n = 2000
    taus = np.linspace(0.0, 1.0, 7 if quick else 25)
    if not np.any(np.isclose(taus, 0.5)):  # pragma: no cover - both grids contain .5
        taus = np.sort(np.append(taus, 0.5))
    seed = random_state + 7
    rng = np.random.default_rng(seed)
    X, s, y = _simulate(3, n, rng, shares=(0.2, 0.3, 0.5), intercepts=(0.0, 2.0, 4.0))
    aux, cal, test = _split_403030(s, seed)
    design = np.column_stack([X, np.eye(3)[s][:, 1:]])
    ols = LinearRegression().fit(design[aux], y[aux])
    tables, paths, figures = {}, {}, {}
    fig = None
    for cost in tqdm(["squared", "observed_squared"], disable=not progress, desc="afr-multigroup"):
        path = _path_for(
            ols,
            design[cal],
            y[cal],
            s[cal],
            design[test],
            y[test],
            s[test],
            taus,
            p=2,
            n_grid=100,
            bounds=(-20.0, 20.0),
            cost=cost,
        )
        paths[cost] = path
        t = path.table
        mse = {tau: t.loc[np.isclose(t["tau"], tau), "mse"].iloc[0] for tau in (0.0, 0.5, 1.0)}
        recovery = 100 * (mse[0.0] - mse[0.5]) / (mse[0.0] - mse[1.0])
        tables[cost] = {
            "MSE tau=0": mse[0.0],
            "MSE tau=.5": mse[0.5],
            "MSE tau=1": mse[1.0],
            "recovery at .5 (%)": recovery,
            "max grid violation": t["grid_violation"].max(),
            "raw OLS MSE": path.unadjusted["mse"],
        }
        ax = None if fig is None else fig.axes[0]
        fig = plot_path(path, x="grid_gap", y="mse", label=cost, ax=ax)
    fig.axes[0].set_title("K = 3: test MSE against the calibration-grid W2 gap")
    figures["path"] = fig
    half = paths["squared"].estimators[int(np.argmin(np.abs(taus - 0.5)))]
    figures["quantiles_tau05"] = plot_quantile_curves(half)
    movement = np.sqrt(((half.adjusted_curves_ - half.latent_curves_) ** 2).mean(axis=1))
    ours = pd.DataFrame(tables).T.reset_index(names="cost")
    paper = pd.DataFrame(
        [
            {
                "cost": "paper (observed loss)",
                "MSE tau=0": 3.6678,
                "MSE tau=.5": 1.7769,
                "MSE tau=1": 1.1359,
                "recovery at .5 (%)": 74.7,
                "max grid violation": 3.73e-11,
            }
        ]
    )
    shares = np.bincount(s[cal], minlength=3) / cal.size
    notes = (
        f"Calibration shares {np.round(shares, 4).tolist()} (paper: 0.1967, 0.2900, 0.5133). "
        f"At tau = .5 the groups' curves moved by RMS {np.round(movement, 2).tolist()} "
        "(paper: smallest group 1.58, largest 0.54). Recovery = (MSE(0) - MSE(.5)) / "
        "(MSE(0) - MSE(1))."
    )
    return StudyResult(
        name="afr-multigroup",
        tables={"mse": ours},
        paper={"mse": paper},
        curves={c: p.table for c, p in paths.items()},
        figures=figures,
        notes=notes,
        config={"n": n, "taus": taus.tolist(), "n_grid": 100, "p": 2, "seed": seed},
    )


def _gradient_boosting(quick: bool, seed: int) -> GradientBoostingRegressor:
    return GradientBoostingRegressor(
        n_estimators=30 if quick else 200,
        max_depth=6,
        learning_rate=0.1,
        subsample=0.8,
        random_state=seed,
    )


def _split_and_fit(bunch, seed: int, quick: bool):
    """A loader's data split 40/30/30 within groups, and gradient boosting on the first part.

    Returns the fitted model and the calibration and test parts, each as ``(X, y, groups)``.
    """
    X = bunch.data.to_numpy(dtype=float)
    y = bunch.target.to_numpy(dtype=float)
    labels = bunch.sensitive.iloc[:, 0].to_numpy()
    aux, cal, test = _split_403030(pd.factorize(labels, sort=True)[0], seed)
    model = _gradient_boosting(quick, seed).fit(X[aux], y[aux])
    return model, (X[cal], y[cal], labels[cal]), (X[test], y[test], labels[test])


def run_afr_crime(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> StudyResult:
    """Real data: Communities & Crime, target ViolentCrimesPerPop, K = 2 and K = 3 groups.

    Gradient boosting (200 trees, depth 6, learning rate .1, subsample .8) on a stratified
    40/30/30 split; W2 paths of 11 tolerances; R² and the largest held-out pairwise W2 gap.
    """
    from fairot.datasets import load_communities_crime

    taus = np.linspace(0.0, 1.0, 6 if quick else 11)
    seed = 42 + random_state
    tables, curves, figures = [], {}, {}
    for k in tqdm((2, 3), disable=not progress, desc="afr-crime"):
        bunch = load_communities_crime(task="regression", n_groups=k)
        model, cal, test = _split_and_fit(bunch, seed, quick)
        path = _path_for(model, *cal, *test, taus, p=2, n_grid=500)
        t = path.table
        curves[f"K{k}"] = t
        zero, half = t.iloc[0], t.iloc[int(np.argmin(np.abs(taus - 0.5)))]
        raw = path.unadjusted
        tables.append(
            {
                "K": k,
                "R2 raw": raw["r2"],
                "gap raw": raw["test_gap"],
                "R2 tau=.5": half["r2"],
                "gap tau=.5": half["test_gap"],
                "R2 tau=0": zero["r2"],
                "gap tau=0": zero["test_gap"],
                "gap cut at tau=0 (%)": 100 * (1 - zero["test_gap"] / raw["test_gap"]),
                "max grid violation": t["grid_violation"].max(),
            }
        )
        figures[f"path_K{k}"] = plot_path(path, x="test_gap", y="r2", label=f"K={k}")
    notes = (
        "Communities & Crime is not in the regression paper; this is fairot's real-data check. "
        "Groups: racepctblack above/below its median (K = 2) and its tertiles (K = 3). Scores "
        "are unbounded (no range); M = 500 (calibration groups have 200-300 rows)."
    )
    return StudyResult(
        name="afr-crime",
        tables={"summary": pd.DataFrame(tables)},
        curves=curves,
        figures=figures,
        notes=notes,
        config={"taus": taus.tolist(), "seed": seed, "n_grid": 500, "p": 2},
    )


ACS_PAPER = pd.DataFrame(
    [
        {"quantity": "K=2 unadjusted R2", "paper": 0.5817},
        {"quantity": "K=2 R2 cost at tau=0", "paper": 0.0078},
        {"quantity": "K=2 held-out gap cut at tau=0 (%)", "paper": "> 90"},
        {"quantity": "K=2 W1 / W2 held-out gap at tau=1", "paper": "0.1865 / 0.1900"},
        {"quantity": "K=3 largest held-out gap, raw -> tau=0", "paper": "0.2789 -> 0.0817"},
        {"quantity": "K=3 R2 cost at tau=0", "paper": 0.0099},
        {"quantity": "K=3 largest grid violation", "paper": 9.46e-11},
    ]
)


def run_afr_acs(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> StudyResult:
    """ACS income, California 2018 (Section 6): runs where ``psam_p06.csv`` is available.

    Without the file (offline), returns the paper's expected numbers and how to run it.
    """
    from fairot.datasets import load_acs_income

    try:
        bunches = {k: load_acs_income(n_groups=k, download_if_missing=False) for k in (2, 3)}
    except (FileNotFoundError, OSError) as error:
        return StudyResult(
            name="afr-acs",
            paper={"expected": ACS_PAPER},
            notes=(
                "The ACS PUMS file is not available here, so this study did not run: "
                f"{error}. Online, `fairot reproduce afr-acs` downloads it (or put "
                "psam_p06.csv under $FAIROT_DATA_HOME/acs/2018/1-Year/) and compares with "
                "the paper's numbers below."
            ),
        )
    taus = np.linspace(0.0, 1.0, 6 if quick else 30)
    rows, curves, figures = [], {}, {}
    for k, bunch in tqdm(bunches.items(), disable=not progress, desc="afr-acs"):
        model, cal, test = _split_and_fit(bunch, 42, quick)
        for name, p in (("W1", 1.0), ("W2", 2.0)) if k == 2 else (("W2", 2.0),):
            path = _path_for(
                model,
                *cal,
                *test,
                taus if k == 2 else np.linspace(0, 1, 6 if quick else 25),
                p=p,
                n_grid=2000,
                bounds=(0.0, 20.0),
            )
            t = path.table
            curves[f"K{k}_{name}"] = t
            raw = path.unadjusted
            rows.append(
                {
                    "K": k,
                    "p": name,
                    "R2 raw": raw["r2"],
                    "R2 tau=0": t["r2"].iloc[0],
                    "gap raw": raw["test_gap"],
                    "gap tau=0": t["test_gap"].iloc[0],
                    "max grid violation": t["grid_violation"].max(),
                }
            )
            figures[f"path_K{k}_{name}"] = plot_path(path, x="grid_gap", y="r2", label=name)
    return StudyResult(
        name="afr-acs",
        tables={"summary": pd.DataFrame(rows)},
        paper={"expected": ACS_PAPER},
        curves=curves,
        figures=figures,
        config={"seed": 42, "n_grid": 2000, "bounds": [0, 20]},
    )


def run_afr_classification(
    *,
    quick: bool = False,
    n_seeds: int | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> StudyResult:
    """Classification illustration (Section 5.4, Figure 6): W-inf adjustment of logits on Adult.

    Logistic regression on a stratified 40/30/30 split of Adult (all 48,842 rows, sex groups);
    its logits are adjusted under W-infinity with the expected logistic loss as induced cost,
    for 30 tolerances tau in [0, 1.1]; test accuracy against the calibration-grid gap.
    """
    from fairot.datasets import load_adult

    bunch = load_adult(restrict_race=False)
    X = bunch.data.to_numpy(dtype=float)
    y = bunch.target.to_numpy(dtype=float)
    sex = bunch.sensitive["sex"].to_numpy()
    codes = pd.factorize(sex, sort=True)[0]
    seed = 42 + random_state
    aux, cal, test = _split_403030(codes, seed)
    if quick:
        cal, test = cal[:3000], test[:3000]
    clf = LogisticRegression(max_iter=2000).fit(X[aux], y[aux])
    logit = _Logit(clf)
    taus = np.linspace(0.0, 1.1, 8 if quick else 30)
    path = _path_for(
        logit,
        X[cal],
        y[cal],
        sex[cal],
        X[test],
        y[test],
        sex[test],
        taus,
        p=np.inf,
        n_grid=2000,
        cost=LogisticCost(),
    )
    accuracy, gaps_inf, gaps_1 = [], [], []
    for est in path.estimators:
        pred = est.predict(X[test], sensitive_features=sex[test])
        accuracy.append(float(np.mean((pred > 0) == (y[test] == 1))))
        gaps_inf.append(max_pairwise_wasserstein(pred, sex[test], p=np.inf).distance)
        gaps_1.append(max_pairwise_wasserstein(pred, sex[test], p=1).distance)
    raw_logit = logit.predict(X[test])
    table = path.table.assign(accuracy=accuracy, test_gap_winf=gaps_inf, test_gap_w1=gaps_1)
    raw = {
        "accuracy": float(np.mean((raw_logit > 0) == (y[test] == 1))),
        "test_gap_winf": max_pairwise_wasserstein(raw_logit, sex[test], p=np.inf).distance,
        "test_gap_w1": max_pairwise_wasserstein(raw_logit, sex[test], p=1).distance,
    }
    mid = int(np.argmin(np.abs(taus - 0.569)))
    summary = pd.DataFrame(
        [
            {"point": "unadjusted", **raw},
            {
                "point": f"tau={taus[mid]:.3f}",
                **table.iloc[mid][["accuracy", "test_gap_winf", "test_gap_w1"]].to_dict(),
            },
            {
                "point": "tau=0",
                **table.iloc[0][["accuracy", "test_gap_winf", "test_gap_w1"]].to_dict(),
            },
        ]
    )
    paper = pd.DataFrame(
        [
            {"point": "unadjusted", "accuracy": 0.7667, "held-out logit gap": 1.9300},
            {"point": "tau=0.569", "accuracy": 0.7458, "held-out logit gap": 1.2572},
            {"point": "tau=0", "accuracy": 0.7017, "held-out logit gap": 0.3226},
        ]
    )
    fig = plot_path(table, x="grid_gap", y="accuracy", label="W-inf, logistic cost")
    fig.axes[0].set_title("Adult (sex): test accuracy against the calibration-grid W-inf gap")
    notes = (
        "The paper does not state its Adult preprocessing or which W distance its held-out "
        "'logit gap' uses; its unadjusted accuracy (.7667) is far below a standard logistic "
        "regression on Adult (about .85), so the absolute numbers are not comparable. We report "
        "held-out W-inf and W1 gaps of the logits."
    )
    return StudyResult(
        name="afr-classification",
        tables={"summary": summary},
        paper={"summary": paper},
        curves={"path": table},
        figures={"path": fig},
        notes=notes,
        config={"taus": taus.tolist(), "seed": seed, "n_grid": 2000},
    )


class _Logit(RegressorMixin, BaseEstimator):
    """A fitted classifier's logit as a regression score."""

    def __init__(self, classifier=None):
        self.classifier = classifier

    def fit(self, X, y):  # pragma: no cover - only used frozen
        return self

    def predict(self, X):
        return self.classifier.decision_function(X)

    def __sklearn_is_fitted__(self):
        return True
