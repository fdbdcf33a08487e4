import pytest
import torch

from fairot.face import MLP, iresnet18, iresnet34, iresnet50
from fairot.face._models import INPUT_SIZE_ERROR


@pytest.mark.parametrize(
    ("factory", "n_blocks"), [(iresnet18, 8), (iresnet34, 16), (iresnet50, 24)]
)
def test_iresnet_depth_and_embedding_shape(factory, n_blocks):
    net = factory(embedding_size=32, input_size=32)
    blocks = [m for m in net.modules() if type(m).__name__ == "_IBasicBlock"]
    assert len(blocks) == n_blocks
    net.eval()
    with torch.no_grad():
        assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 32)


def test_iresnet18_on_112_faces_has_insightface_size():
    net = iresnet18()
    n_params = sum(p.numel() for p in net.parameters())
    # insightface's iresnet18 has 24.0M parameters with a 512-d embedding
    assert 23.5e6 < n_params < 24.5e6
    with pytest.raises(ValueError, match="input_size must be"):
        iresnet18(input_size=100)
    assert "multiple of 16" in INPUT_SIZE_ERROR


def test_mlp_shapes():
    net = MLP(10, embedding_size=4, hidden_sizes=(8, 8))
    assert net(torch.randn(5, 10)).shape == (5, 4)
    with pytest.raises(ValueError, match="layer sizes"):
        MLP(10, hidden_sizes=(0,))
