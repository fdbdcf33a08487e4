"""What an audit of thousands of groups leaves out, and the warnings that say so.

Internal surface: :func:`many_group_limits`, :data:`MSG_NO_SUMMARY_INTERVALS`,
:data:`MSG_LARGEST_PLOTTED`. The audit's cost is linear in rows and groups except where a
statistic couples every pair of groups: beyond :data:`fairot.metrics.MAX_PAIRWISE_GROUPS`
the bootstrap of the summary (each replicate couples every pair) is left out, and beyond
:data:`fairot.reporting._plots.MAX_PLOTTED_GROUPS` the figures draw the largest groups only.
"""

from __future__ import annotations

from fairot.metrics import MAX_PAIRWISE_GROUPS
from fairot.reporting._plots import MAX_PLOTTED_GROUPS

MSG_NO_SUMMARY_INTERVALS = (
    "no bootstrap intervals of the summary: {k} groups are more than the {limit} "
    "(fairot.metrics.MAX_PAIRWISE_GROUPS) whose every pair each replicate couples; the "
    "per-group rates keep their exact intervals."
)
MSG_LARGEST_PLOTTED = (
    "the figures draw the {limit} largest of the {k} groups (MAX_PLOTTED_GROUPS); the tables "
    "list every group."
)


def many_group_limits(
    n_groups: int, n_headline: int, n_bootstrap: int, plots: bool
) -> tuple[bool, list[str]]:
    """Whether to run the summary bootstrap, and the warnings of what is left out.

    Parameters
    ----------
    n_groups : int
        Groups of the per-group table.
    n_headline : int
        Groups of the headline (those the bootstrap resamples).
    n_bootstrap : int
        Replicates asked for (0: none).
    plots : bool
        Whether figures are drawn.

    Returns
    -------
    bootstrap : bool
    warnings : list of str
    """
    warnings = []
    bootstrap = bool(n_bootstrap)
    if bootstrap and n_headline > MAX_PAIRWISE_GROUPS:
        # Cost and memory of a replicate grow as the square of the groups: say so rather than
        # run for hours.
        bootstrap = False
        warnings.append(MSG_NO_SUMMARY_INTERVALS.format(k=n_headline, limit=MAX_PAIRWISE_GROUPS))
    if plots and n_groups > MAX_PLOTTED_GROUPS:
        warnings.append(MSG_LARGEST_PLOTTED.format(limit=MAX_PLOTTED_GROUPS, k=n_groups))
    return bootstrap, warnings
