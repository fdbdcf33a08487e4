"""The regression paper's studies: approximate demographic parity under a W_p tolerance.

``fairot reproduce afr-simulation | afr-multigroup | afr-crime | afr-acs | afr-acs-folktables |
afr-classification``.
Each function returns a :class:`~fairot.experiments.StudyResult` with our numbers beside the
paper's ("Fair Regression under Approximate Demographic Parity", ``seeds/001``, Sections 5-6).

One module per part of the paper (``_simulation``: Sections 5.2-5.3, ``_acs``: Section 6,
``_real_data``: Communities & Crime, ``_classification``: Section 5.4); what they share is in
``_common``.
"""

from fairot.experiments.afr._acs import run_afr_acs, run_afr_acs_folktables
from fairot.experiments.afr._classification import run_afr_classification
from fairot.experiments.afr._common import GroupwiseModel
from fairot.experiments.afr._real_data import run_afr_crime
from fairot.experiments.afr._simulation import run_afr_multigroup, run_afr_simulation

__all__ = [
    "GroupwiseModel",
    "run_afr_acs",
    "run_afr_acs_folktables",
    "run_afr_classification",
    "run_afr_crime",
    "run_afr_multigroup",
    "run_afr_simulation",
]
