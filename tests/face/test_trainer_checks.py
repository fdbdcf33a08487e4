"""MetaBalancedTrainer's argument checks: a meta loss needs a loss with group margins."""

import pytest

from fairot.face import MLP, MetaBalancedTrainer, MetaSkewnessLoss, make_method
from fairot.face._trainer_checks import META_LOSS_TYPE_ERROR
from tests.face.test_trainer import DIM, EMB, K


def test_meta_loss_needs_group_margins():
    with pytest.raises(ValueError, match=META_LOSS_TYPE_ERROR.split("{")[0]):
        MetaBalancedTrainer(
            MLP(DIM, embedding_size=EMB),
            make_method("arcface", n_classes=4, embedding_size=EMB, n_groups=K).loss,
            meta_loss=MetaSkewnessLoss(),
        )
