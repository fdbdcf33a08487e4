"""fairot.verification's functions keep fairlearn's calling form, without sample weights.

The group ones (NIST FRVT's reading, the LFW/RFW protocol per group) take ``y_true, y_pred`` and
the keyword ``sensitive_features`` like every group metric of :mod:`fairot.metrics`, but no
``sample_weight`` (pairs count equally in both protocols), and their labels are never optional.
"""

import inspect
import re

import numpy as np
import pytest

import fairot.verification as fv

VERIFICATION_GROUP_METRICS = {"det_curves", "verification_accuracy_by_group", "verification_rates"}
PAIR_SCORES = {"best_accuracy_threshold", "fmr_threshold", "kfold_verification_accuracy"}
FORM_PARAMETERS = [
    ("y_true", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ("y_pred", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ("sensitive_features", inspect.Parameter.KEYWORD_ONLY),
]
FORM = "takes fairlearn's form {name}(y_true, y_pred, *, sensitive_features"


def test_every_public_function_is_sorted_by_kind():
    functions = {
        name
        for name in fv.__all__
        if callable(getattr(fv, name)) and not inspect.isclass(getattr(fv, name))
    }
    assert functions == VERIFICATION_GROUP_METRICS | PAIR_SCORES


@pytest.mark.parametrize("name", sorted(VERIFICATION_GROUP_METRICS))
def test_verification_metrics_take_fairlearns_form_without_weights(name):
    parameters = inspect.signature(getattr(fv, name)).parameters
    assert [(p.name, p.kind) for p in parameters.values()][:3] == FORM_PARAMETERS
    assert "sample_weight" not in parameters
    same = np.tile([True, False], 50)
    scores = np.where(same, 0.7, 0.3) + np.linspace(-0.3, 0.3, 100)
    groups = np.repeat(["a", "b"], 50)
    options = {"target_fmr": 0.1} if name == "verification_rates" else {}
    assert getattr(fv, name)(same, scores, sensitive_features=groups, **options) is not None
    form = re.escape(FORM.format(name=name))
    with pytest.raises(TypeError, match=form):
        getattr(fv, name)(same, scores, groups)
    with pytest.raises(TypeError, match=form):
        getattr(fv, name)(same, scores)
