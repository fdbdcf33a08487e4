"""fairot.utils.sensitive: sensitive features in every accepted form, resolved and encoded."""

import re

import numpy as np
import pandas as pd
import pytest

from fairot.utils.arrays import (
    MSG_LENGTH,
    check_array_1d,
    check_consistent_length,
)
from fairot.utils.groups import MSG_GROUPS_MODE, MSG_ONE_GROUP
from fairot.utils.sensitive import (
    MSG_ENCODING_MODE,
    MSG_SF_REQUIRED,
    check_sensitive_features,
    resolve_sensitive_features,
)


@pytest.mark.parametrize(
    "container", [list, np.asarray, pd.Series, lambda x: pd.DataFrame({"g": x})]
)
def test_one_column_containers(container):
    enc = check_sensitive_features(container(["b", "a", "b", "c"]))
    assert enc.labels == ("a", "b", "c")
    np.testing.assert_array_equal(enc.codes, [1, 0, 1, 2])
    np.testing.assert_array_equal(enc.counts, [1, 2, 1])


def test_errors():
    with pytest.raises(ValueError, match="single group"):
        check_sensitive_features(["a", "a"])
    with pytest.raises(ValueError, match="missing values"):
        check_sensitive_features(["a", None])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        check_sensitive_features(["a", "b"], n_samples=3)
    with pytest.raises(ValueError, match=MSG_GROUPS_MODE.split("{")[0]):
        check_sensitive_features(["a", "b"], group_mode="union")
    with pytest.raises(ValueError, match="must be numeric"):
        check_array_1d(["a", "b"], "scores")
    with pytest.raises(ValueError, match="one-dimensional"):
        check_array_1d(np.zeros((2, 2)), "scores")
    with pytest.raises(ValueError, match="inconsistent numbers of samples: a=2, b=3"):
        check_consistent_length(a=[1, 2], b=[1, 2, 3])


def test_column_names_of_a_frame():
    X = pd.DataFrame({"x": [0.1, 0.2, 0.3], "sex": ["F", "M", "F"], "race": ["A", "A", "B"]})
    sf, columns = resolve_sensitive_features(X, "sex")
    assert columns == ["sex"] and sf["sex"].tolist() == ["F", "M", "F"]
    sf, columns = resolve_sensitive_features(X, ["sex", "race"])
    assert columns == ["sex", "race"] and check_sensitive_features(sf).n_groups == 3
    assert list(X.columns) == ["x", "sex", "race"]  # X untouched
    # A list of labels (not all column names) is data.
    sf, columns = resolve_sensitive_features(X, ["F", "M", "F"])
    assert columns is None and sf == ["F", "M", "F"]
    with pytest.raises(ValueError, match="X has no column 'age'"):
        resolve_sensitive_features(X, "age")
    with pytest.raises(ValueError, match="not a pandas DataFrame"):
        resolve_sensitive_features(X.to_numpy(), "sex")
    with pytest.raises(
        ValueError, match=MSG_SF_REQUIRED.format(name="sensitive_features").split(":")[0]
    ):
        resolve_sensitive_features(X, None)
    assert resolve_sensitive_features(X, None, required=False) == (None, None)


def test_an_encoding_is_returned_as_it_is():
    g = pd.DataFrame({"race": ["A", "B", "A", "B"], "sex": ["F", "F", "M", "M"]})
    for mode in ("intersection", "marginal"):
        enc = check_sensitive_features(g, group_mode=mode)
        assert check_sensitive_features(enc, 4, group_mode=mode) is enc
        assert enc.n_samples == 4


def test_an_encoding_is_checked_as_its_data_would_be():
    enc = check_sensitive_features(["a", "b", "a"])
    with pytest.raises(ValueError, match=re.escape(MSG_LENGTH.format(
            lengths="sensitive_features=3, samples=4"))):  # fmt: skip
        check_sensitive_features(enc, 4)
    with pytest.raises(ValueError, match=re.escape(MSG_ENCODING_MODE.format(
            name="sensitive_features", mode="intersection", group_mode="marginal"))):  # fmt: skip
        check_sensitive_features(enc, 3, group_mode="marginal")
    with pytest.raises(ValueError, match=re.escape(MSG_ONE_GROUP.format(
            name="sensitive_features", label="a"))):  # fmt: skip
        check_sensitive_features(enc, min_groups=3)
    one = check_sensitive_features(["a", "a"], min_groups=1)
    with pytest.raises(ValueError, match=re.escape(MSG_ONE_GROUP.format(
            name="sensitive_features", label="a"))):  # fmt: skip
        check_sensitive_features(one)
