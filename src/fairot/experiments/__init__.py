"""The seed papers' studies, each a function returning a :class:`StudyResult`.

``fairot reproduce NAME`` runs the study registered under ``NAME`` in :data:`STUDIES` and writes its
results. Study modules import lazily, so listing studies imports neither numba kernels nor torch.

These are studies, not library API: their functions, options and result tables may change from
one version to the next without notice (no stability promise), and ``docs/api.md`` leaves them
out. The studies that compare with fairlearn need the ``studies`` extra
(``pip install "fairot[studies]"``); those on PyTorch the ``torch`` extra.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from fairot.experiments._result import StudyResult

#: Study name -> "module:function"; each function takes ``quick``, ``n_seeds``,
#: ``random_state`` and ``progress`` keyword arguments and returns a StudyResult.
STUDIES: dict[str, str] = {
    "cot-table1": "fairot.experiments.cot:run_cot_table1",
    "cot-batch-size": "fairot.experiments.cot:run_cot_batch_size",
    "cot-drift": "fairot.experiments.cot:run_cot_drift",
    "cot-duals": "fairot.experiments.cot:run_cot_duals",
    "afr-simulation": "fairot.experiments.afr:run_afr_simulation",
    "afr-multigroup": "fairot.experiments.afr:run_afr_multigroup",
    "afr-crime": "fairot.experiments.afr:run_afr_crime",
    "afr-acs": "fairot.experiments.afr:run_afr_acs",
    "afr-acs-folktables": "fairot.experiments.afr:run_afr_acs_folktables",
    "afr-classification": "fairot.experiments.afr:run_afr_classification",
    "mbn-synthetic": "fairot.experiments.mbn:run_mbn_synthetic",
    "torch-adult": "fairot.experiments.cot:run_torch_adult",
    "beyond-dp": "fairot.experiments.beyond:run_beyond_dp",
    "frontier": "fairot.experiments.frontier:run_frontier",
}

#: Study name -> (the optional package it imports, the extra that installs it).
STUDY_REQUIRES: dict[str, tuple[str, str]] = {
    "beyond-dp": ("fairlearn", "studies"),
    "frontier": ("fairlearn", "studies"),
    "mbn-synthetic": ("torch", "torch"),
    "torch-adult": ("torch", "torch"),
}

MSG_UNKNOWN_STUDY = "unknown study {name!r}; available: {names}."
MSG_STUDY_EXTRA = (
    'the study {name!r} needs {package}, which is not installed: pip install "fairot[{extra}]".'
)


def get_study(name: str) -> Callable[..., StudyResult]:
    """Return the function that runs study ``name``.

    Raises
    ------
    ValueError
        For an unknown name.
    ImportError
        When the study needs an optional dependency that is missing (the message names the
        extra that installs it).

    Examples
    --------
    >>> from fairot.experiments import get_study
    >>> get_study("cot-table1").__name__
    'run_cot_table1'
    """
    if name not in STUDIES:
        raise ValueError(MSG_UNKNOWN_STUDY.format(name=name, names=", ".join(STUDIES)))
    if name in STUDY_REQUIRES:
        package, extra = STUDY_REQUIRES[name]
        if importlib.util.find_spec(package) is None:
            raise ImportError(MSG_STUDY_EXTRA.format(name=name, package=package, extra=extra))
    module_name, function_name = STUDIES[name].split(":")
    return getattr(importlib.import_module(module_name), function_name)


__all__ = ["STUDIES", "StudyResult", "get_study"]
