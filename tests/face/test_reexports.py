"""fairot.face re-exports the PyTorch pieces face users need, as the objects of fairot.torch."""

import importlib
import subprocess
import sys

import pytest

import fairot.face
import fairot.torch.losses
import fairot.torch.miners
import fairot.torch.samplers

# Every name fairot.face exported before the move, by its new home (the losses in one string:
# a pinned contract, not a second copy of fairot.torch.losses.__all__ to keep in step).
LOSSES = (
    "ArcFaceLoss CosFaceLoss GroupMarginLoss MarginSoftmaxLoss MetaBatchWarning MetaSkewnessLoss "
    "NormSoftmaxLoss SkewnessResult SoftmaxLoss"
)
MOVED = {
    "fairot.torch.losses": LOSSES.split(),
    "fairot.torch.miners": ["HardestTripletMiner"],
    "fairot.torch.samplers": ["BalancedGroupSampler", "RandomBatchSampler"],
}


@pytest.mark.parametrize(
    ("home", "name"), [(home, name) for home, names in MOVED.items() for name in names]
)
def test_fairot_face_reexports_the_moved_name(home, name):
    assert name in fairot.face.__all__
    assert getattr(fairot.face, name) is getattr(importlib.import_module(home), name)


@pytest.mark.integration
def test_fairot_torch_does_not_import_fairot_face():
    code = (
        "import sys, fairot.torch.losses, fairot.torch.miners, fairot.torch.samplers; "
        "assert not [m for m in sys.modules if m.startswith('fairot.face')], 'face imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
