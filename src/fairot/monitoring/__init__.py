"""Fairness drift monitoring: windowed metrics of a score stream, alerts, closed-loop re-adjustment.

The monitor lives in :mod:`fairot.reporting` (it reads a model's fairness, as an audit does); this
package keeps the import path ``from fairot.monitoring import FairnessMonitor`` working.
:class:`FairnessMonitor` measures a fairness metric (SDD, Wass1, the demographic-parity difference
or the drift from reference scores) on consecutive windows of a stream, with stratified bootstrap
bands; an alert (the band above the threshold) can re-adjust a COT/DOT estimator with
``partial_fit``, the COT paper's continual re-adjustment. ``fairot monitor`` runs it on a CSV.
"""

from fairot.reporting import MONITOR_METRICS, FairnessMonitor, WindowResult

__all__ = ["MONITOR_METRICS", "FairnessMonitor", "WindowResult"]
