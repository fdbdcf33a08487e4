"""A diverged torch run raises DivergenceError, as COT and DOT do; a sane run never does."""

import math
import re

import numpy as np
import pytest
import torch
from sklearn.metrics import log_loss

from fairot.classification import DivergenceError
from fairot.torch import FairMLPClassifier, FairTrainer, WassersteinParityPenalty
from fairot.torch.trainers._divergence import (
    MSG_FIRST_STEP_OVERFLOW,
    MSG_PARAMETER_NOT_FINITE,
    MSG_SATURATED,
    MSG_WEIGHT_DECAY,
    SATURATED_LOGIT,
    DivergenceMonitor,
    advice,
)
from fairot.torch.trainers._fair_trainer import MSG_PARAM
from tests.helpers import IGNORE_SMALL_GROUPS, shifted_groups


def _data(seed=0, n=400):
    return shifted_groups(n, seed, group_column=True)


def _separable(n=200):
    # |x| >= 1 and y = [x > 0]: a linear model can be right on every row with any large logits,
    # so the cross-entropy stays small and only the saturation check can see the divergence.
    rng = np.random.default_rng(0)
    x = rng.choice([-1.0, 1.0], n) * rng.uniform(1, 2, n)
    a = rng.integers(0, 2, n)
    return np.column_stack([x, a]).astype(np.float32), (x > 0).astype(np.float32), a


def _linear(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(2, 1)


def test_saturation_bound_gives_exact_hard_scores_in_float32():
    bound = np.float32(SATURATED_LOGIT)
    # numpy's float32 as the oracle of the bound, and torch's sigmoid on this backend.
    with np.errstate(over="ignore"):
        assert np.float32(1) / (np.float32(1) + np.exp(bound)) == 0.0
    assert np.float32(1) / (np.float32(1) + np.exp(-bound)) == 1.0
    s = torch.sigmoid(torch.tensor([-SATURATED_LOGIT, SATURATED_LOGIT], dtype=torch.float32))
    assert s.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("learning_rate", [1e6, 1e3, 10.0])
def test_huge_learning_rate_raises_for_the_estimator(learning_rate):
    X, y, a = _data()
    clf = FairMLPClassifier(
        hidden_layer_sizes=(8,), n_epochs=10, learning_rate=learning_rate, random_state=0
    )
    with pytest.raises(DivergenceError, match=re.escape(advice(learning_rate, 0.0) + ".")):
        clf.fit(X, y, sensitive_features=a)


def test_blowup_names_lam_once_the_penalty_is_on():
    X, y, a = _data()
    clf = FairMLPClassifier(
        hidden_layer_sizes=(8,), n_epochs=4, warmup_epochs=0, learning_rate=1e6, random_state=0
    )
    with pytest.raises(DivergenceError, match=re.escape(advice(1e6, 3.0) + ".")) as info:
        clf.fit(X, y, sensitive_features=a)
    assert "or lam (now 3)" in str(info.value)
    assert "mean cross-entropy rose to" in str(info.value)


def test_saturated_logits_with_small_loss_raise():
    X, y, a = _separable()
    trainer = FairTrainer(
        _linear(), WassersteinParityPenalty(2, method="dot"), lam=1.0, warmup_epochs=1,
        n_epochs=5, batch_size=64, learning_rate=100.0, random_state=0,
    )  # fmt: skip
    with pytest.raises(DivergenceError, match="every logit of the last batch is beyond") as info:
        trainer.fit(X, y, a)
    assert str(info.value).endswith(advice(100.0, 0.0) + ".")


def test_returned_model_saturated_after_its_only_step_raises():
    # One epoch of one step: the epoch's logits are the starting model's, so only the check of
    # the returned model on the training rows sees that the step saturated it.
    X, y, a = _separable(n=40)
    X = X[:, :1]  # logit = w x: Adam's first step moves w by about 1e4, |x| >= 1
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1, bias=False)
    trainer = FairTrainer(
        model, WassersteinParityPenalty(2, method="dot"), lam=0.0, warmup_epochs=0,
        n_epochs=1, batch_size=64, learning_rate=1e4, random_state=0,
    )  # fmt: skip
    with torch.no_grad():
        start = float(model(torch.as_tensor(X)).abs().min())
    with pytest.raises(DivergenceError) as info:
        trainer.fit(X, y, a)
    with torch.no_grad():
        smallest = float(model(torch.as_tensor(X)).abs().min())
    assert smallest > SATURATED_LOGIT
    expected = MSG_SATURATED.format(
        epoch=0,
        where="training data",
        bound=SATURATED_LOGIT,
        smallest=smallest,
        start=start,
        advice=advice(1e4, 0.0),
    )
    assert str(info.value) == expected


class _NaNAfterStep(torch.optim.SGD):
    """SGD that leaves NaN in the first parameter: a step whose gradient was non-finite."""

    def step(self, closure=None):
        super().step(closure)
        with torch.no_grad():
            self.param_groups[0]["params"][0].fill_(float("nan"))


def test_non_finite_parameters_after_the_last_step_raise():
    X, y, a = _separable(n=40)
    model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    trainer = FairTrainer(
        model, WassersteinParityPenalty(2, method="dot"), lam=0.0, warmup_epochs=0,
        n_epochs=1, batch_size=64, optimizer=lambda p: _NaNAfterStep(p, lr=0.1), random_state=0,
    )  # fmt: skip
    message = MSG_PARAMETER_NOT_FINITE.format(epoch=0, name="0.weight", advice=advice(1e-3, 0.0))
    with pytest.raises(DivergenceError, match=re.escape(message)):
        trainer.fit(X, y, a)


def test_a_model_saturated_from_the_start_is_not_divergence():
    # The user's model, confident before training: the checks compare against the start.
    X, y, a = _separable()
    model = _linear()
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[500.0, 0.0]]))
        model.bias.zero_()
    trainer = FairTrainer(
        model, WassersteinParityPenalty(2, method="dot"), lam=0.0, warmup_epochs=0,
        n_epochs=2, batch_size=64, learning_rate=1e-6, random_state=0,
    ).fit(X, y, a)  # fmt: skip
    assert trainer.history_.shape[0] == 2


def test_monitor_start_statistics_against_sklearn():
    X, y, _ = _data(1)
    model = torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    Xt = torch.as_tensor(X, dtype=torch.float32)
    monitor = DivergenceMonitor.start(model, Xt, torch.as_tensor(y, dtype=torch.float32), 1e-3)
    with torch.no_grad():
        logits = model(Xt).double().reshape(-1).numpy()
    assert monitor.start_logit == pytest.approx(np.abs(logits).min(), rel=1e-6)
    scores = 1.0 / (1.0 + np.exp(-logits))
    assert monitor.start_bce == pytest.approx(log_loss(y, scores), rel=1e-5)
    assert monitor.start_bce < 10 * math.log(2)


@pytest.mark.parametrize("method", ["dot", "cot"])
def test_default_estimator_never_trips(method):
    # The defaults (Adam 1e-3, cosine decay, 40 epochs, lam=3) on data like the docs' example.
    X, y, a = _data(2, n=800)
    clf = FairMLPClassifier(method=method, random_state=0).fit(X, y, sensitive_features=a)
    p = clf.predict_proba(X)[:, 1]
    assert np.isfinite(p).all() and p.min() > 0.0 and p.max() < 1.0


def test_learning_rate_whose_first_adam_step_overflows():
    # Adam's first step is lr / (1 - beta1) = 10 lr: past float32's largest (numpy's finfo as the
    # oracle) torch's own error was an overflow RuntimeError from inside Adam.
    X, y, a = _data()
    largest = float(np.finfo(np.float32).max)
    lr = 1e38
    message = MSG_FIRST_STEP_OVERFLOW.format(
        step=lr / (1 - 0.9), dtype=torch.float32, largest=largest, advice=advice(lr, 0.0)
    )
    clf = FairMLPClassifier(hidden_layer_sizes=(4,), n_epochs=1, learning_rate=lr)
    with pytest.raises(DivergenceError, match=re.escape(message)):
        clf.fit(X, y, sensitive_features=a)
    with pytest.raises(
        ValueError,
        match=re.escape(MSG_WEIGHT_DECAY.format(largest=largest, dtype=torch.float32, value=1e39)),
    ):
        FairMLPClassifier(hidden_layer_sizes=(4,), n_epochs=1, weight_decay=1e39).fit(
            X, y, sensitive_features=a
        )
    # Just below the bound the first step fits in float32 and the run diverges the usual way.
    with pytest.raises(DivergenceError, match=re.escape(advice(3e37, 0.0) + ".")):
        FairMLPClassifier(hidden_layer_sizes=(4,), n_epochs=1, learning_rate=3e37).fit(
            X, y, sensitive_features=a
        )


@pytest.mark.parametrize("name", ["learning_rate", "weight_decay"])
@pytest.mark.parametrize("value", [float("inf"), float("nan")])
def test_non_finite_step_arguments_are_refused(name, value):
    message = MSG_PARAM.format(name=name, expected="a finite non-negative number", value=value)
    with pytest.raises(ValueError, match=re.escape(message)):
        FairTrainer(_linear(), WassersteinParityPenalty(2), **{name: value})


@pytest.mark.filterwarnings(IGNORE_SMALL_GROUPS)  # two rows, one per group, on purpose
@pytest.mark.parametrize(
    ("warmup_epochs", "n_epochs", "where"),
    [
        (0, 1, "training data"),  # the returned model
        (1, 2, "training data"),  # the warm model, before its NaN scores could fix the target
        (0, 2, "batch"),  # the penalty's input, instead of its ValueError about scores
    ],
)
def test_overflowed_network_is_divergence_not_a_nan_model(warmup_epochs, n_epochs, where):
    # Found by the fuzz: two rows, lr=1e30. One Adam step leaves finite weights near 1e31 whose
    # logits overflow; the fit returned NaN probabilities or raised the penalty's or the
    # target's "scores/samples contain NaN".
    X = np.array([[-0.0862689, -0.30787726], [-0.75125653, -0.30029074]])
    clf = FairMLPClassifier(
        hidden_layer_sizes=(4,), n_epochs=n_epochs, warmup_epochs=warmup_epochs, batch_size=1,
        learning_rate=1e30, validation_fraction=0.0, random_state=0,
    )  # fmt: skip
    with pytest.raises(DivergenceError, match=re.escape(f"logits of the {where} are non-finite")):
        clf.fit(X, np.array([1, 0]), sensitive_features=np.array([0, 1]))
