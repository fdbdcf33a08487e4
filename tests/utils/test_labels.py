"""Group labels in NFC, and a warning for distinct labels that look alike (issue 37)."""

import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest

from fairot.exceptions import LookAlikeGroupsWarning
from fairot.utils.labels import MSG_LOOK_ALIKE, look_alike_pairs, normal_label
from fairot.utils.sensitive import check_sensitive_features

NFC, NFD = "Caf\u00e9", "Cafe\u0301"


def _no_warning(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return check_sensitive_features(*args, **kwargs)


@pytest.mark.parametrize("make", [list, np.array, pd.Series], ids=["list", "array", "series"])
def test_nfc_and_nfd_are_one_group(make):
    enc = _no_warning(make([NFC, NFD, "Tea", NFD]))
    assert enc.labels == (NFC, "Tea") and enc.names == [NFC, "Tea"]
    assert enc.codes.tolist() == [0, 0, 1, 0]
    assert unicodedata.is_normalized("NFC", enc.labels[0])
    # New data in either form maps to the group; lookups by either form too.
    assert enc.encode([NFD, NFC, "Tea"]).tolist() == [0, 0, 1]
    assert enc.index_of(NFD) == enc.index_of(NFC) == 0


def test_nfc_in_intersections_and_marginal_groups():
    frame = pd.DataFrame({"city": [NFC, NFD, "Rome", "Rome"], "sex": ["F", "F", "M", "F"]})
    enc = _no_warning(frame)
    assert enc.names == [f"city={NFC}, sex=F", "city=Rome, sex=F", "city=Rome, sex=M"]
    enc = _no_warning(frame, group_mode="marginal")
    assert enc.labels == (("city", NFC), ("city", "Rome"), ("sex", "F"), ("sex", "M"))
    assert enc.counts.tolist() == [2, 2, 3, 1]


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("Male", "Male ", "U+0020 SPACE only in one"),
        ("Male", " Male", "U+0020 SPACE vs U+004D"),
        ("a b", "a  b", "U+0020 SPACE vs U+0062"),
        ("Male", "Ma\u200ble", "U+200B ZERO WIDTH SPACE"),
        ("Male", "M\u0430le", "U+0430 CYRILLIC SMALL LETTER A"),
        ("Alpha", "\u0391lpha", "U+0391 GREEK CAPITAL LETTER ALPHA"),
        ("male", "Male", "U+004D LATIN CAPITAL LETTER M"),
        ("ﬁsh", "fish", "U+FB01 LATIN SMALL LIGATURE FI"),
        ("\r", "\u202e", "U+000D \\r vs U+202E RIGHT-TO-LEFT OVERRIDE"),
    ],
)
def test_look_alike_pairs_are_named(a, b, why):
    assert look_alike_pairs([a, b, "other"]) in ([(a, b)], [(b, a)])
    with pytest.warns(LookAlikeGroupsWarning) as record:
        enc = check_sensitive_features([a, b, "other", a])
    assert enc.n_groups == 3  # kept apart
    message = str(record[0].message)
    assert why in message
    # The message itself holds no invisible character: the names are shown with escapes.
    assert message.isprintable()
    assert record[0].filename == __file__  # the user's line


def test_distinct_labels_and_non_strings_do_not_warn():
    _no_warning(["Male", "Female", "Other", "M", "F"])
    _no_warning([1, 2, 3, 1])
    _no_warning(["é", "e", "è"])  # accents are visible
    _no_warning(["0", "O", "l", "1"])


def test_many_pairs_are_listed_briefly():
    labels = [f"g{i}" for i in range(30)] + [f"g{i} " for i in range(30)]
    with pytest.warns(LookAlikeGroupsWarning, match="and 20 more pair") as record:
        check_sensitive_features(labels)
    assert MSG_LOOK_ALIKE.split("{")[0] in str(record[0].message)


def test_normal_label():
    assert normal_label(np.str_(NFD)) == NFC and normal_label(np.int64(3)) == 3
    assert normal_label(NFC) is NFC
