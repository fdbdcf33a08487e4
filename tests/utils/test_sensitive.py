"""fairot.utils.sensitive and fairot.utils.groups: sensitive features encoded into groups."""

import re

import numpy as np
import pandas as pd
import pytest

from fairot.utils.arrays import (
    MSG_LENGTH,
    check_array_1d,
    check_consistent_length,
)
from fairot.utils.groups import MSG_GROUPS_MODE, MSG_NAME_CLASH, MSG_ONE_GROUP, group_attributes
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
    enc = check_sensitive_features(sf, group_mode="marginal")
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
        check_sensitive_features(["a", "b"], group_mode="union")
    with pytest.raises(ValueError, match="must be numeric"):
        check_array_1d(["a", "b"], "scores")
    with pytest.raises(ValueError, match="one-dimensional"):
        check_array_1d(np.zeros((2, 2)), "scores")
    with pytest.raises(ValueError, match="inconsistent numbers of samples: a=2, b=3"):
        check_consistent_length(a=[1, 2], b=[1, 2, 3])


def test_labels_that_print_alike_get_distinct_names():
    enc = check_sensitive_features([1, "1", 2, 1, "1"])
    assert enc.labels == (1, 2, "1")
    assert enc.names == ["1", "2", "'1'"]
    assert len(set(enc.names)) == enc.n_groups
    # A label is found as itself first, then by its name.
    assert enc.index_of("1") == 2 and enc.index_of(1) == 0 and enc.index_of("'1'") == 2
    np.testing.assert_array_equal(enc.encode(["1", 1, 2]), [2, 0, 1])
    assert group_attributes(enc) == ([1, 2, "1"], ["1", "2", "'1'"])
    sf = pd.DataFrame({"a": [True, "True", True], "b": ["x", "x", "y"]})
    names = check_sensitive_features(sf).names
    assert len(set(names)) == len(names) == 3
    marginal = check_sensitive_features(pd.DataFrame({"a": [1, "1"]}), group_mode="marginal")
    assert marginal.names == ["a=1", "a='1'"]


def test_names_that_still_clash_raise():
    class Same:
        def __init__(self, k):
            self.k = k

        def __hash__(self):
            return self.k

        def __eq__(self, other):
            return isinstance(other, Same) and other.k == self.k

        def __repr__(self):
            return "same"

    with pytest.raises(ValueError, match=MSG_NAME_CLASH.split("{name}")[1].split("(")[0]):
        check_sensitive_features(np.array([Same(1), Same(2)], dtype=object))


def test_dict_of_arrays_is_several_columns():
    sf = {"race": np.array(["W", "B", "W"]), "sex": pd.Series(["F", "F", "M"], index=[7, 8, 9])}
    enc = check_sensitive_features(sf)
    assert enc.columns == ["race", "sex"]
    assert enc.names == ["race=B, sex=F", "race=W, sex=F", "race=W, sex=M"]
    with pytest.raises(ValueError, match="dict must map column names to arrays of equal length"):
        check_sensitive_features({"a": [1, 2], "b": [1]})


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


@pytest.mark.parametrize("bad", [{"a": 1}, [1, 2], {1}])
def test_unhashable_labels_are_a_clear_error_at_fit_and_at_encode(bad):
    # pandas raises a bare TypeError ("unhashable type") from its hash table; the boundary names
    # the argument instead, both when the groups are first read and when new rows are encoded.
    with pytest.raises(ValueError, match="sensitive_features holds values that cannot name"):
        check_sensitive_features([bad, bad, "x", "y"], 4)
    encoding = check_sensitive_features(["x", "y", "x", "y"], 4)
    with pytest.raises(ValueError, match="control_features holds values that cannot name"):
        encoding.encode(["x", bad], name="control_features")


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
