"""fairot.utils.groups: the GroupEncoding of sensitive features (names, encode, membership)."""

import numpy as np
import pandas as pd
import pytest

from fairot.utils.groups import MSG_NAME_CLASH, group_attributes
from fairot.utils.sensitive import check_sensitive_features


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


@pytest.mark.parametrize("bad", [{"a": 1}, [1, 2], {1}])
def test_unhashable_labels_are_a_clear_error_at_fit_and_at_encode(bad):
    # pandas raises a bare TypeError ("unhashable type") from its hash table; the boundary names
    # the argument instead, both when the groups are first read and when new rows are encoded.
    with pytest.raises(ValueError, match="sensitive_features holds values that cannot name"):
        check_sensitive_features([bad, bad, "x", "y"], 4)
    encoding = check_sensitive_features(["x", "y", "x", "y"], 4)
    with pytest.raises(ValueError, match="control_features holds values that cannot name"):
        encoding.encode(["x", bad], name="control_features")
