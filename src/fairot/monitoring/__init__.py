"""Fairness drift monitoring: windowed metrics of a score stream, alerts, closed-loop re-adjustment.

:class:`FairnessMonitor` measures a fairness metric (SDD, Wass1, the demographic-parity difference
or the drift from reference scores) on consecutive windows of a stream, with stratified bootstrap
bands; an alert (the band above the threshold) can re-adjust a COT/DOT estimator with
``partial_fit``, the COT paper's continual re-adjustment. ``fairot monitor`` runs it on a CSV.
"""

from fairot.monitoring._monitor import FairnessMonitor, WindowResult

__all__ = ["FairnessMonitor", "WindowResult"]
