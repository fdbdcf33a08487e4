"""The ``device`` argument of FairMLPClassifier and FairTrainer: one clear error, before training.

The oracle for what this machine has is torch itself (``torch.cuda.is_available()``,
``torch.cuda.device_count()``, ``torch.backends.mps.is_available()``).
"""

import re

import numpy as np
import pytest
import torch
from sklearn.utils._param_validation import InvalidParameterError

from fairot.torch import FairMLPClassifier, FairTrainer, WassersteinParityPenalty
from fairot.torch._device import MSG_DEVICE, check_device
from tests.helpers import shifted_groups

CUDA = torch.cuda.is_available()
COUNT = torch.cuda.device_count() if CUDA else 0
MPS = torch.backends.mps.is_available()


def _message(value, reason):
    return re.escape(MSG_DEVICE.format(value=value, reason=reason, cuda=CUDA, count=COUNT, mps=MPS))


def _data(n=120):
    return shifted_groups(n, 0, noise_column=True)


def _clf(device):
    return FairMLPClassifier(hidden_layer_sizes=(4,), n_epochs=2, device=device, random_state=0)


BAD = [
    ("tpu", " (not a device torch knows)"),
    ("CUDA", " (not a device torch knows)"),
    ("", " (not a device torch knows)"),
    ("cuda:-1", " (not a device torch knows)"),
    ("meta", " (device type 'meta' is not supported)"),
    ("cpu:1", " (the CPU has index 0 only)"),
    (
        f"cuda:{COUNT + 3}",
        f" (CUDA device {COUNT + 3} does not exist)" if CUDA else " (CUDA is not available)",
    ),
]


@pytest.mark.parametrize(("device", "reason"), BAD)
def test_estimator_rejects_unknown_or_missing_devices(device, reason):
    X, y, a = _data()
    clf = _clf(device)
    with pytest.raises(ValueError, match=_message(device, reason)):
        clf.fit(X, y, sensitive_features=a)
    assert not hasattr(clf, "model_")  # refused before anything was built


@pytest.mark.skipif(CUDA, reason="checks the error on a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:0", torch.device("cuda")])
def test_cuda_without_gpu_names_what_the_machine_has(device):
    X, y, a = _data()
    with pytest.raises(ValueError, match=_message(device, " (CUDA is not available)")):
        _clf(device).fit(X, y, sensitive_features=a)
    with pytest.raises(ValueError, match=_message(device, " (CUDA is not available)")):
        FairTrainer(torch.nn.Linear(2, 1), WassersteinParityPenalty(2), device=device)


@pytest.mark.skipif(not CUDA, reason="needs a CUDA device")
def test_cuda_index_past_the_device_count():
    device = f"cuda:{COUNT}"
    with pytest.raises(
        ValueError, match=_message(device, f" (CUDA device {COUNT} does not exist)")
    ):
        check_device(device)
    assert check_device(f"cuda:{COUNT - 1}") == torch.device(f"cuda:{COUNT - 1}")


@pytest.mark.skipif(MPS, reason="checks the error on a machine without MPS")
def test_mps_without_mps():
    with pytest.raises(ValueError, match=_message("mps", " (MPS is not available)")):
        check_device("mps")


@pytest.mark.parametrize("device", ["cpu", "cpu:0", torch.device("cpu")])
def test_cpu_forms_train_on_the_cpu(device):
    X, y, a = _data()
    clf = _clf(device).fit(X, y, sensitive_features=a)
    assert next(clf.model_.parameters()).device == torch.device("cpu")
    reference = _clf("cpu").fit(X, y, sensitive_features=a)
    np.testing.assert_array_equal(clf.predict_proba(X), reference.predict_proba(X))


def test_wrong_types():
    with pytest.raises(TypeError, match=_message(0, " (of type int)")):
        check_device(0)  # torch.device(0) would mean "cuda:0"
    with pytest.raises(TypeError, match=_message(None, " (of type NoneType)")):
        check_device(None)
    X, y, a = _data()
    with pytest.raises(InvalidParameterError, match="'device' parameter"):
        _clf(0).fit(X, y, sensitive_features=a)
    with pytest.raises(TypeError, match=_message(1.5, " (of type float)")):
        FairTrainer(torch.nn.Linear(2, 1), WassersteinParityPenalty(2), device=1.5)


def test_trainer_rejects_a_bad_device_at_construction():
    with pytest.raises(ValueError, match=_message("tpu", " (not a device torch knows)")):
        FairTrainer(torch.nn.Linear(2, 1), WassersteinParityPenalty(2), device="tpu")
    # None keeps "the model's device".
    assert FairTrainer(torch.nn.Linear(2, 1), WassersteinParityPenalty(2)).device is None
