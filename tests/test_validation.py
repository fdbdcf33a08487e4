"""Sensitive-feature handling: containers, intersections, marginal groups, unseen groups."""

import numpy as np
import pandas as pd
import pytest

from fairot._validation import (
    MSG_GROUPS_MODE,
    check_array_1d,
    check_consistent_length,
    check_sensitive_features,
)


@pytest.mark.parametrize(
    "container", [list, np.asarray, pd.Series, lambda x: pd.DataFrame({"g": x})]
)
def test_one_column_containers(container):
    enc = check_sensitive_features(container(["b", "a", "b", "c"]))
    assert enc.labels == ("a", "b", "c")
    np.testing.assert_array_equal(enc.codes, [1, 0, 1, 2])
    np.testing.assert_array_equal(enc.counts, [1, 2, 1])


def test_intersection_and_encode():
    sf = pd.DataFrame({"race": ["W", "B", "W", "B"], "sex": ["F", "F", "M", "M"]})
    enc = check_sensitive_features(sf)
    assert enc.names == ["race=B, sex=F", "race=B, sex=M", "race=W, sex=F", "race=W, sex=M"]
    assert enc.labels[0] == ("B", "F")
    new = pd.DataFrame({"race": ["B", "W"], "sex": ["M", "F"]})
    np.testing.assert_array_equal(enc.encode(new), [1, 2])
    with pytest.raises(ValueError, match="not seen at fit time"):
        enc.encode(pd.DataFrame({"race": ["A"], "sex": ["F"]}))
    with pytest.raises(ValueError, match="columns but 2 were seen"):
        enc.encode(["B"])


def test_numeric_labels_encode_across_dtypes():
    enc = check_sensitive_features(np.array([0, 1, 1]))
    np.testing.assert_array_equal(enc.encode(np.array([1.0, 0.0])), [1, 0])
    assert enc.index_of(1) == 1 and enc.index_of("1") == 1


def test_marginal_groups():
    sf = pd.DataFrame({"a": ["x", "y", "x"], "b": [0, 0, 1]})
    enc = check_sensitive_features(sf, groups="marginal")
    assert enc.names == ["a=x", "a=y", "b=0", "b=1"]
    assert enc.codes is None and not enc.is_partition
    np.testing.assert_array_equal(enc.membership.sum(axis=1), [2, 2, 2])
    np.testing.assert_array_equal(
        enc.encode(pd.DataFrame({"a": ["y"], "b": [1]})), [[False, True, False, True]]
    )


def test_errors():
    with pytest.raises(ValueError, match="single group"):
        check_sensitive_features(["a", "a"])
    with pytest.raises(ValueError, match="missing values"):
        check_sensitive_features(["a", None])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        check_sensitive_features(["a", "b"], n_samples=3)
    with pytest.raises(ValueError, match=MSG_GROUPS_MODE.split("{")[0]):
        check_sensitive_features(["a", "b"], groups="union")
    with pytest.raises(ValueError, match="must be numeric"):
        check_array_1d(["a", "b"], "scores")
    with pytest.raises(ValueError, match="one-dimensional"):
        check_array_1d(np.zeros((2, 2)), "scores")
    with pytest.raises(ValueError, match="inconsistent numbers of samples: a=2, b=3"):
        check_consistent_length(a=[1, 2], b=[1, 2, 3])


def test_check_array_copies():
    x = np.array([1.0, 2.0])
    out = check_array_1d(x, "x")
    out[0] = 5
    assert x[0] == 1.0
