"""The recipes of the paper's methods: m-RBN's margins and the reweighting's group weights."""

import numpy as np

from fairot.face import make_method


def test_m_rbn_margins_inverse_to_training_share():
    spec = make_method(
        "m-rbn", n_classes=8, embedding_size=4, n_groups=4, group_counts=[70, 10, 10, 10]
    )
    m = spec.loss.group_margins().detach().numpy()
    np.testing.assert_allclose(m.mean(), 0.3, rtol=1e-6)
    np.testing.assert_allclose(m[1] / m[0], 7.0, rtol=1e-6)
    spec = make_method(
        "reweight", n_classes=8, embedding_size=4, n_groups=4, group_counts=[70, 10, 10, 10]
    )
    np.testing.assert_allclose(spec.group_weights * [70, 10, 10, 10], 25.0)
