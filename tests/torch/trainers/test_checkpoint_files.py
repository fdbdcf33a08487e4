"""What a checkpoint may hold: tensors and plain data, NumPy scalars converted, arrays refused."""

import numpy as np
import pytest

from fairot.torch.trainers import plain_state


def test_plain_state_converts_numpy_scalars_and_refuses_arrays():
    state = plain_state({"lr": [np.float64(0.1)], "n": np.int64(3), "ok": np.bool_(True)})
    assert state == {"lr": [0.1], "n": 3, "ok": True}
    assert [type(state["lr"][0]), type(state["n"]), type(state["ok"])] == [float, int, bool]
    with pytest.raises(TypeError, match=r"\['rng'\] is a numpy.ndarray"):
        plain_state({"rng": np.zeros(2)})
    with pytest.raises(TypeError, match="numpy.float32"):
        plain_state({"lr": np.float32(0.1)})  # its value as a Python float would change sums
