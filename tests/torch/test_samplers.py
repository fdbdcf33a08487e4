import numpy as np
import pytest

from fairot.torch.samplers import (
    BATCH_SIZE_ERROR,
    TOO_FEW_ERROR,
    BalancedGroupSampler,
    RandomBatchSampler,
)


def test_balanced_sampler_gives_equal_groups_with_positive_pairs():
    labels = np.repeat(np.arange(40), 3)
    groups = labels % 4
    sampler = BalancedGroupSampler(labels, groups, 16, samples_per_identity=2, random_state=0)
    for batch in sampler:
        assert np.bincount(groups[batch], minlength=4).tolist() == [4, 4, 4, 4]
        _, counts = np.unique(labels[batch], return_counts=True)
        assert np.all(counts == 2)
        assert len(np.unique(batch)) == len(batch)
    state = sampler.state_dict()
    first = sampler.sample_batch()
    sampler.load_state_dict(state)
    np.testing.assert_array_equal(sampler.sample_batch(), first)


def test_balanced_sampler_errors():
    labels = np.repeat(np.arange(8), 2)
    groups = labels % 4
    with pytest.raises(ValueError, match=BATCH_SIZE_ERROR.split("{")[0]):
        BalancedGroupSampler(labels, groups, 10)
    singletons = np.arange(8)
    with pytest.raises(ValueError, match=TOO_FEW_ERROR.split("{")[0]):
        BalancedGroupSampler(singletons, singletons % 4, 8)


def test_random_batch_sampler():
    sampler = RandomBatchSampler(10, 4, random_state=0)
    batch = sampler.sample_batch()
    assert len(np.unique(batch)) == 4 and batch.max() < 10
    with pytest.raises(ValueError, match="batch_size must be"):
        RandomBatchSampler(3, 4)
