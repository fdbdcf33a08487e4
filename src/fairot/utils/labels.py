"""Group labels as the encoder keeps them, and the labels that look alike.

String labels are compared in Unicode normal form NFC (:func:`normal_label`): ``"é"`` as one
code point and as ``"e"`` plus a combining accent is one group. Distinct labels that a reader
cannot tell apart (:func:`look_alike_pairs`: whitespace, invisible characters, compatibility
forms, case, Cyrillic or Greek letters drawn like Latin ones) stay distinct groups, with a
:class:`fairot.exceptions.LookAlikeGroupsWarning` naming each pair (:func:`warn_look_alikes`).
"""

from __future__ import annotations

import unicodedata
import warnings
from typing import Any

import numpy as np

from fairot.exceptions import LookAlikeGroupsWarning

from ._escape import is_invisible, show_invisible
from .stacklevel import user_stacklevel

__all__ = ["MSG_LOOK_ALIKE", "look_alike_pairs", "normal_label", "warn_look_alikes"]

MSG_LOOK_ALIKE = (
    "{name} has distinct groups that look alike: {pairs}. They are kept apart; rename the labels "
    "if they are meant to be one group."
)
# Letters of other scripts drawn like Latin ones (after NFKC and casefold, so lower case only):
# the homoglyphs of Unicode's confusables list between Cyrillic, Greek and Latin that a label is
# likely to hold. A small explicit table: no dependency, and every entry can be read.
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic
        "а": "a", "в": "b", "е": "e", "ё": "e", "һ": "h", "і": "i", "ї": "i", "ј": "j",
        "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
        "у": "y", "х": "x", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ь": "b", "ү": "y",
        # Greek
        "α": "a", "β": "b", "γ": "y", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v",
        "ο": "o", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ζ": "z",
    }
)  # fmt: skip
# How many look-alike pairs a warning lists (with thousands of groups, the first ones say enough).
_MAX_LISTED_PAIRS = 10


def normal_label(label: Any) -> Any:
    """A group label as the encoder keeps it: a Python scalar, a string in NFC.

    Examples
    --------
    >>> normal_label("Cafe\u0301") == "Caf\u00e9"
    True
    """
    label = label.item() if isinstance(label, np.generic) else label
    if isinstance(label, str) and not unicodedata.is_normalized("NFC", label):
        return unicodedata.normalize("NFC", label)
    return label


def _skeleton(text: str) -> str:
    """What a reader sees of ``text``: NFKC, no format characters, one space, casefold, Latin."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(char for char in text if not is_invisible(char) or char.isspace())
    return " ".join(text.split()).casefold().translate(_CONFUSABLES)


def _difference(a: str, b: str) -> str:
    # The first character where two look-alike labels differ, named: readers see no difference.
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"character {i + 1}: {_char_name(x)} vs {_char_name(y)}"
    longer, extra = (a, b) if len(a) > len(b) else (b, a)
    char = longer[len(extra)]
    return f"character {len(extra) + 1}: {_char_name(char)} only in one"


def _char_name(char: str) -> str:
    # Controls have no Unicode name: their escape says what they are.
    return f"U+{ord(char):04X} {unicodedata.name(char, None) or show_invisible(char)}"


def look_alike_pairs(labels: list) -> list[tuple[str, str]]:
    """Pairs of distinct string labels that print alike.

    Two labels look alike when they are equal once whitespace is trimmed and collapsed,
    invisible (format) characters are dropped, compatibility forms are folded (NFKC), case is
    ignored (casefold) and the Cyrillic and Greek letters drawn like Latin ones are read as
    those. Linear in the total length of the labels.

    Parameters
    ----------
    labels : list
        Distinct labels of one column (only strings are compared).

    Returns
    -------
    list of tuple of str
        Each pair once, in the order of ``labels``.

    Examples
    --------
    >>> look_alike_pairs(["Male", "Male ", "M\u0430le", "Female"])
    [('Male', 'Male '), ('Male', 'Mаle')]
    """
    classes: dict[str, list[str]] = {}
    for label in labels:
        if isinstance(label, str):
            classes.setdefault(_skeleton(label), []).append(label)
    pairs = []
    for members in classes.values():
        pairs += [(members[0], other) for other in members[1:]]
    return pairs


def warn_look_alikes(labels: list, name: str) -> None:
    """Warn :class:`~fairot.exceptions.LookAlikeGroupsWarning` naming look-alike labels."""
    pairs = look_alike_pairs(labels)
    if not pairs:
        return
    listed = [
        f"{show_invisible(repr(a))} vs {show_invisible(repr(b))} ({_difference(a, b)})"
        for a, b in pairs[:_MAX_LISTED_PAIRS]
    ]
    if len(pairs) > _MAX_LISTED_PAIRS:
        listed.append(f"and {len(pairs) - _MAX_LISTED_PAIRS} more pair(s)")
    warnings.warn(
        MSG_LOOK_ALIKE.format(name=name, pairs="; ".join(listed)),
        LookAlikeGroupsWarning,
        stacklevel=user_stacklevel(),
    )
