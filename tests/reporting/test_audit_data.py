"""One audit call encodes its groups once: every step reads the encoding built at the boundary.

The encoder's work is ``check_sensitive_features`` factorising the columns of the groups; the
test wraps that step and records the rows of every column it factorises. Before the audit read
one encoding, a call factorised its groups 5 to 8 times (fairness_report, the rates, the counts,
the rules, the plots, the bootstrap each parsed the column again).
"""

from __future__ import annotations

import numpy as np
import pytest

from fairot.reporting import audit
from fairot.utils.sensitive import check_sensitive_features

N = 240


def _data(sizes=(80, 80, 80), seed=0):
    rng = np.random.default_rng(seed)
    g = np.repeat(["a", "b", "c"], sizes)
    y = rng.integers(0, 2, g.size)
    s = np.clip(rng.normal(0.4 + 0.1 * (g == "b"), 0.15), 0, 1)
    return y, s, g


STANDARDS = ("four-fifths", "credit", "ll144", "distributional")


@pytest.mark.parametrize("n_bootstrap", [0, 20])
@pytest.mark.parametrize("plots", [False, True])
@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_one_audit_encodes_the_groups_once(encoded, n_bootstrap, plots, constraint):
    y, s, g = _data()
    audit(y, s, g, n_bootstrap=n_bootstrap, plots=plots, standards=STANDARDS,
          constraint=constraint)  # fmt: skip
    assert encoded.count(g.tolist()) == 1


def test_the_count_sees_every_encoding(encoded):
    """The oracle of the test above: an encoding of the groups is seen, each time."""
    _, _, g = _data()
    for _ in range(3):
        check_sensitive_features(g)
    assert encoded.count(g.tolist()) == 3


def test_an_encoding_passed_as_groups_is_not_encoded_again(encoded):
    _, _, g = _data()
    encoding = check_sensitive_features(g)
    assert check_sensitive_features(encoding, g.size) is encoding
    assert len(encoded) == 1


def test_small_groups_left_out_encode_the_groups_once(encoded):
    """The headline without a small group encodes its own rows (fewer groups), once."""
    y, s, g = _data(sizes=(80, 80, 10))
    result = audit(y, s, g, n_bootstrap=20, plots=False, min_group_size=30, standards=STANDARDS)
    assert result.settings["excluded_groups"] == ["c"]
    assert encoded.count(g.tolist()) == 1
    kept = g[g != "c"].tolist()
    assert encoded.count(kept) == 1


def test_with_control_features_each_row_set_is_encoded_once(encoded):
    """The whole rows' groups once, and each stratum's (its own rows, its own groups) once."""
    y, s, g = _data()
    strata = np.where(np.arange(g.size) < 100, "u", "v")  # strata of unlike groups
    result = audit(y, s, g, n_bootstrap=20, plots=True, standards=STANDARDS,
                   control_features=strata)  # fmt: skip
    assert sorted(result.strata) == ["u", "v"]
    assert encoded.count(g.tolist()) == 1
    for stratum in ("u", "v"):
        assert encoded.count(g[strata == stratum].tolist()) == 1
