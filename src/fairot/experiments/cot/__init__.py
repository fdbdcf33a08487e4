"""The COT paper's studies (Chiappa and Pacchiano, 2021): Table 1, Figures 1 to 4, and the demo.

Each ``run_*`` function returns a :class:`~fairot.experiments.StudyResult`; ``fairot reproduce
cot-table1`` (etc.) writes it. ``quick=True`` runs a reduced version in seconds (the tests use it);
the full runs are what ``docs/results.md`` reports.

One module per study (``_table1``: Table 1 and the demo, ``_batch_size``: Figure 2, ``_drift``:
Figures 3 and 4, ``_duals``: Figure 1, ``_torch_adult``: the fair MLP of ``fairot.torch`` against
the paper's methods); what they share is in ``_common``.
"""

from fairot.experiments.cot._batch_size import run_cot_batch_size
from fairot.experiments.cot._common import (
    METHODS,
    METRICS,
    PAPER_TABLE1,
    TABLE1_DATASETS,
    TABLE1_METRICS,
    fit_methods,
    score_metrics,
    table1_metrics,
)
from fairot.experiments.cot._drift import (
    DRIFT_FEMALE_POSITIVE_RATES,
    resample_positive_rate,
    run_cot_drift,
)
from fairot.experiments.cot._duals import run_cot_duals
from fairot.experiments.cot._table1 import (
    DemoScores,
    demo_test_scores,
    run_cot_table1,
    run_demo_comparison,
)
from fairot.experiments.cot._torch_adult import run_torch_adult

__all__ = [
    "DRIFT_FEMALE_POSITIVE_RATES",
    "DemoScores",
    "METHODS",
    "METRICS",
    "PAPER_TABLE1",
    "TABLE1_DATASETS",
    "TABLE1_METRICS",
    "demo_test_scores",
    "fit_methods",
    "resample_positive_rate",
    "run_cot_batch_size",
    "run_cot_drift",
    "run_cot_duals",
    "run_cot_table1",
    "run_demo_comparison",
    "run_torch_adult",
    "score_metrics",
    "table1_metrics",
]
