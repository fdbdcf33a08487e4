import re

import numpy as np
import pytest
import torch

from fairot.face import SCENARIOS, make_synthetic_faces, run_synthetic_method
from fairot.face._synthetic import SCENARIO_ERROR

SMALL = dict(
    n_train_identities=80,
    images_per_identity=4,
    n_meta_identities=4,
    n_test_identities=10,
    n_pairs=40,
)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_benchmark_follows_its_scenario(scenario):
    data = make_synthetic_faces(scenario, random_state=1, **SMALL)
    share = np.asarray(SCENARIOS[scenario]["train_share"], dtype=float)
    ids = np.array(data.config["train_identities_per_group"])
    np.testing.assert_array_equal(ids, np.round(share / share.sum() * 80))
    x, labels, groups = data.train
    assert x.shape == (80 * 4, 64) and x.dtype == torch.float32
    assert np.bincount(groups.numpy()).tolist() == (ids * 4).tolist()
    assert data.n_classes == len(torch.unique(labels)) == ids.sum()
    # every identity lives in one group
    for k in torch.unique(labels):
        assert len(torch.unique(groups[labels == k])) == 1
    assert np.bincount(data.meta[2].numpy()).tolist() == [16] * 4
    assert (
        data.pairs.groupby("group")["is_same"].agg(["sum", "size"]).values.tolist()
        == [[40, 80]] * 4
    )
    assert data.config["noise"] == list(SCENARIOS[scenario]["noise"])


def test_benchmark_is_deterministic():
    a = make_synthetic_faces("mixed", random_state=3, **SMALL)
    b = make_synthetic_faces("mixed", random_state=3, **SMALL)
    c = make_synthetic_faces("mixed", random_state=4, **SMALL)
    assert torch.equal(a.train[0], b.train[0]) and a.pairs.equals(b.pairs)
    assert not torch.equal(a.train[0], c.train[0])


def test_noisier_groups_are_farther_from_their_identity_centre():
    data = make_synthetic_faces(
        None,
        train_share=(1, 1, 1, 1),
        noise=(0.1, 0.1, 0.1, 1.5),
        nuisance=0.0,
        random_state=0,
        **SMALL,
    )
    x, labels, groups = data.train
    spread = []
    for g in range(4):
        in_g = groups == g
        centres = {int(k): x[labels == k].mean(0) for k in torch.unique(labels[in_g])}
        spread.append(
            np.mean([float((x[i] - centres[int(labels[i])]).norm()) for i in torch.where(in_g)[0]])
        )
    assert spread[3] > 2 * max(spread[:3])


def test_bad_arguments():
    with pytest.raises(ValueError, match=re.escape(SCENARIO_ERROR.split("{")[0])):
        make_synthetic_faces("easy")
    with pytest.raises(ValueError, match="train_share must be"):
        make_synthetic_faces(None, noise=(1, 1, 1, 1))
    with pytest.raises(ValueError, match="noise must be 4 positive"):
        make_synthetic_faces("noise", noise=(1, 1, -1, 1))
    with pytest.raises(ValueError, match="must not exceed latent_dim"):
        make_synthetic_faces("noise", identity_dim=40)
    with pytest.raises(ValueError, match="subspace_overlap must be in"):
        make_synthetic_faces("noise", subspace_overlap=1.5)


def test_run_synthetic_method_reports_every_group():
    data = make_synthetic_faces("representation", random_state=0, **SMALL)
    run = run_synthetic_method(data, "mbn-arc", n_steps=4, batch_size=32, seed=0)
    assert list(run.report.by_group.index) == [0, 1, 2, 3]
    assert 0.0 <= run.report.mean_accuracy <= 1.0
    assert len(run.history) == 4 and "margin_3" in run.history
    fixed = run_synthetic_method(data, fixed_margins=[0.3, 0.9, 0.9, 0.9], n_steps=2, seed=0)
    assert fixed.history["margin_1"].iloc[-1] == pytest.approx(0.9)
    assert torch.get_num_threads() >= 1
