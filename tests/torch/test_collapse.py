"""The penalty, FairTrainer and FairMLPClassifier say when the model is degenerate.

Oracles: scikit-learn's ``roc_auc_score`` and NumPy's standard deviation of the returned
model's scores, computed here.
"""

import warnings

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

from fairot.datasets import load_adult
from fairot.exceptions import DegenerateModelWarning
from fairot.torch import FairMLPClassifier, WassersteinParityPenalty


def attribute_only_data(n=1000, seed=0):
    """The label depends on the group alone (an input here); the other column is noise."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, n)
    X = np.column_stack([a, rng.normal(size=n)]).astype(np.float32)
    y = (rng.uniform(size=n) < np.where(a == 1, 0.8, 0.2)).astype(int)
    return X, y, a


def test_mlp_warns_once_at_the_users_line():
    X, y, a = attribute_only_data()
    with pytest.warns(DegenerateModelWarning, match="FairTrainer: degenerate model") as record:
        clf = FairMLPClassifier(lam=10.0, random_state=0).fit(X, y, sensitive_features=a)
    assert len(record) == 1  # the penalty's own watch is off inside the trainer
    assert record[0].filename == __file__
    assert "lam (now 10)" in str(record[0].message)
    assert abs(roc_auc_score(y, clf.predict_proba(X)[:, 1]) - 0.5) < 0.06


def test_penalty_warns_when_a_users_loop_collapses():
    X, y, a = attribute_only_data()
    Xt, yt, gt = torch.tensor(X), torch.tensor(y, dtype=torch.float32), torch.tensor(a)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    penalty = WassersteinParityPenalty(2, method="dot")
    opt, bce = torch.optim.Adam(model.parameters(), lr=1e-2), torch.nn.BCEWithLogitsLoss()
    with pytest.warns(DegenerateModelWarning, match="WassersteinParityPenalty") as record:
        for step in range(300):
            lam = 0.0 if step < 100 else 10.0  # cross-entropy first, then a heavy penalty
            i = torch.randint(0, X.shape[0], (128,))
            logits = model(Xt[i]).squeeze(1)
            loss = bce(logits, yt[i]) + lam * penalty(torch.sigmoid(logits), gt[i])
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert len(record) == 1
    assert record[0].filename == __file__
    with torch.no_grad():
        scores = torch.sigmoid(model(Xt).squeeze(1)).numpy()
    assert np.std(scores) < 0.05


def test_quiet_on_adult():
    """Adult, 1,500 rows, race and sex kept out of X: the default MLP is not degenerate."""
    adult = load_adult(include_sensitive=False)
    idx = np.random.default_rng(0).choice(adult.target.shape[0], 1500, replace=False)
    X, y, sf = adult.data.to_numpy()[idx], adult.target.to_numpy()[idx], adult.sensitive.iloc[idx]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateModelWarning)
        clf = FairMLPClassifier(n_epochs=20, random_state=0).fit(X, y, sensitive_features=sf)
    assert roc_auc_score(y, clf.predict_proba(X)[:, 1]) > 0.7


def test_trainer_reads_the_held_out_rows_when_the_training_rows_still_rank():
    # A model that memorised its training rows (they still rank) and ranks its eval_set rows at
    # chance: the end-of-fit check is diagnose_fit, COT's, so the held-out rows decide.
    from types import SimpleNamespace

    from fairot.torch._collapse import warn_if_degenerate
    from fairot.torch.trainers._state import Run

    rng = np.random.default_rng(0)
    y, yv = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    start, start_held = 0.2 + 0.6 * y + 0.1 * rng.uniform(size=200), 0.2 + 0.6 * yv
    X, Xv = torch.zeros(200, 1), torch.ones(200, 1)
    chance = rng.uniform(size=200)
    trainer = SimpleNamespace(
        learning_rate=0.01,
        predict_scores=lambda rows: start if bool((rows == 0).all()) else chance,
    )
    run = Run(lam=1.0, start_scores=torch.tensor(start), start_eval_scores=torch.tensor(start_held))
    labels = torch.tensor(y, dtype=torch.float32)
    evaluation = (Xv, torch.tensor(yv, dtype=torch.float32), None)
    assert abs(roc_auc_score(yv, chance) - 0.5) < 0.1 < roc_auc_score(y, start) - 0.5
    with pytest.warns(DegenerateModelWarning, match=r"its AUC is 0\.\d+, near chance"):
        warn_if_degenerate(trainer, X, labels, run, None, evaluation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_degenerate(trainer, X, labels, run, None, None)  # training rows alone: quiet
