"""FairMLPClassifier and FairTrainer with sample_weight, and groups named as columns of X."""

import re

import numpy as np
import pandas as pd
import pytest
import torch

from fairot.torch import FairMLPClassifier, FairTrainer, WassersteinParityPenalty
from fairot.torch.trainers._data import MSG_OVERLAP_WEIGHTS, MSG_ZERO_WEIGHT
from tests.helpers import make_biased


def _clf(**kwargs):
    params = {
        "hidden_layer_sizes": (8,),
        "n_epochs": 4,
        "warmup_epochs": 1,
        "batch_size": 32,
        "random_state": 0,
    }
    return FairMLPClassifier(**{**params, **kwargs})


def test_equal_weights_give_the_unweighted_model_exactly():
    X, y, a = make_biased(n=200, seed=1)
    plain = _clf().fit(X, y, sensitive_features=a)
    for w in (np.ones(200), np.full(200, 3.5)):
        weighted = _clf().fit(X, y, sensitive_features=a, sample_weight=w)
        np.testing.assert_array_equal(weighted.predict_proba(X), plain.predict_proba(X))


def test_weights_change_the_model_and_are_checked():
    X, y, a = make_biased(n=200, seed=1)
    w = np.where(a == 1, 3.0, 1.0)
    weighted = _clf().fit(X, y, sensitive_features=a, sample_weight=w)
    plain = _clf().fit(X, y, sensitive_features=a)
    assert not np.array_equal(weighted.predict_proba(X), plain.predict_proba(X))
    with pytest.raises(ValueError, match="sample_weight"):
        _clf().fit(X, y, sensitive_features=a, sample_weight=np.ones(199))
    with pytest.raises(ValueError, match=re.escape(MSG_ZERO_WEIGHT.format(group=1))):
        _clf().fit(X, y, sensitive_features=a, sample_weight=np.where(a == 1, 0.0, 1.0))


def test_marginal_groups_take_no_weights():
    X, y, a = make_biased(n=200, seed=2)
    sf = pd.DataFrame({"a": a, "b": np.arange(200) % 2})
    w = np.arange(200) % 3 + 1.0
    with pytest.raises(ValueError, match=re.escape(MSG_OVERLAP_WEIGHTS)):
        _clf(group_mode="marginal").fit(X, y, sensitive_features=sf, sample_weight=w)


def test_column_names_of_X_are_the_groups_and_stay_inputs():
    X, y, a = make_biased(n=200, seed=3)
    frame = pd.DataFrame(X, columns=["x1", "x2", "a"])
    by_name = _clf().fit(frame, y, sensitive_features="a")
    by_array = _clf().fit(frame, y, sensitive_features=frame["a"].to_numpy())
    np.testing.assert_array_equal(by_name.predict_proba(frame), by_array.predict_proba(frame))
    assert by_name.n_features_in_ == 3  # the column is still an input of the network
    assert by_name.group_names_ == by_array.group_names_
    # predict and score take the groups (ignored) like every fairot classifier
    np.testing.assert_array_equal(
        by_name.predict(frame, sensitive_features="a"), by_name.predict(frame)
    )
    assert by_name.score(frame, y, sensitive_features="a") == by_name.score(frame, y)


def test_trainer_fit_takes_group_codes_and_weights_by_keyword():
    torch.manual_seed(0)
    X, y, a = make_biased(n=120, seed=4)
    model = torch.nn.Linear(3, 1).double()
    trainer = FairTrainer(
        model, WassersteinParityPenalty(2), n_epochs=2, warmup_epochs=1, random_state=0
    )
    trainer.fit(X, y, group_codes=a, sample_weight=np.where(a == 1, 2.0, 1.0))
    assert len(trainer.history_) == 2
