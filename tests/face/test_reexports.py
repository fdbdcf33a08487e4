"""fairot.face keeps every name it had, as the very objects that now live in fairot.torch."""

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


@pytest.mark.parametrize(
    ("old", "new"),
    [("fairot.face.losses", "fairot.torch.losses"), ("fairot.face.miners", "fairot.torch.miners")],
)
def test_public_submodules_keep_their_names(old, new):
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    assert old_module.__all__ == new_module.__all__
    for name in new_module.__all__:
        assert getattr(old_module, name) is getattr(new_module, name)


@pytest.mark.parametrize(
    ("old", "names"),
    [
        ("fairot.face._margin_losses", ["GroupMarginLoss", "LABELS_RANGE_ERROR", "unit_rows"]),
        ("fairot.face._skewness", ["MetaSkewnessLoss", "MetaBatchWarning"]),
        ("fairot.face._samplers", ["BalancedGroupSampler", "RandomBatchSampler"]),
    ],
)
def test_old_private_paths_still_resolve(old, names):
    # the face trainer's modules and pickled whole-module checkpoints name these paths
    module = importlib.import_module(old)
    for name in names:
        assert getattr(module, name) is not None


@pytest.mark.integration
def test_fairot_torch_does_not_import_fairot_face():
    code = (
        "import sys, fairot.torch.losses, fairot.torch.miners, fairot.torch.samplers; "
        "assert not [m for m in sys.modules if m.startswith('fairot.face')], 'face imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
