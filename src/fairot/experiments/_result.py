"""The result of one study: tables, curves, figures, and the paper's numbers beside ours."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from fairot.utils import markdown_table

# fairot.reporting (the artifact writer and jsonable) is imported inside the methods: importing it
# loads the metrics' numba kernels, and ``fairot reproduce --list`` must stay light.


@dataclass
class StudyResult:
    """Everything one study produced.

    Attributes
    ----------
    name : str
        The study's name, as given to ``fairot reproduce``.
    tables : dict of str to pandas.DataFrame
        Result tables (ours).
    curves : dict of str to pandas.DataFrame
        Curves over updates, tolerances or steps, in long or wide form.
    figures : dict of str to matplotlib.figure.Figure
        Figures; written as ``<key>.png``.
    paper : dict of str to pandas.DataFrame
        The paper's published numbers, keyed like ``tables`` where they correspond.
    notes : str
        Markdown prose: what was run, and how our numbers compare with the paper's.
    config : dict
        Parameters of the run (seeds, sizes, hyper-parameters), for reproducibility.

    Examples
    --------
    >>> import pandas as pd
    >>> from fairot.experiments import StudyResult
    >>> result = StudyResult("demo", tables={"main": pd.DataFrame({"err": [0.15]})})
    >>> print(result.to_markdown().splitlines()[0])
    # demo
    """

    name: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    curves: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    paper: dict[str, pd.DataFrame] = field(default_factory=dict)
    notes: str = ""
    config: dict[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (tables as lists of records)."""
        from fairot.reporting.artifacts import jsonable

        return {
            "name": self.name,
            "config": jsonable(self.config),
            "tables": {k: _frame_records(v) for k, v in self.tables.items()},
            "paper": {k: _frame_records(v) for k, v in self.paper.items()},
            "curves": {k: _frame_records(v) for k, v in self.curves.items()},
            "notes": self.notes,
        }

    def to_markdown(self) -> str:
        """The tables, with the paper's beside them, as a markdown document."""
        from fairot.reporting.artifacts import jsonable

        lines = [f"# {self.name}", ""]
        if self.notes:
            lines += [self.notes.strip(), ""]
        for key, table in self.tables.items():
            lines += [f"## {key}", "", markdown_table(table), ""]
            if key in self.paper:
                lines += [f"Paper ({key}):", "", markdown_table(self.paper[key]), ""]
        for key, table in self.paper.items():
            if key not in self.tables:
                lines += [f"## Paper: {key}", "", markdown_table(table), ""]
        if self.figures:
            lines += ["## Figures", ""]
            lines += [f"![{key}]({key}.png)" for key in self.figures]
            lines.append("")
        if self.config:
            lines += [
                "## Configuration",
                "",
                "```json",
                json.dumps(jsonable(self.config), indent=2),
                "```",
                "",
            ]
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> Path:
        """Write ``results.json``, ``results.md`` and one PNG per figure to ``out_dir``.

        Every file is written atomically by :func:`fairot.reporting.artifacts.write_artifacts`,
        the audits' writer: complete or absent, never truncated.

        Parameters
        ----------
        out_dir : str or pathlib.Path
            Folder, created when missing.

        Returns
        -------
        pathlib.Path
            The folder.
        """
        from fairot.reporting.artifacts import write_artifacts

        files = {
            "results.json": json.dumps(self.to_json_dict(), indent=2) + "\n",
            "results.md": self.to_markdown(),
        }
        return write_artifacts(out_dir, files, self.figures)


def _frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    from fairot.reporting.artifacts import jsonable

    flat = (
        frame.reset_index()
        if frame.index.name or not isinstance(frame.index, pd.RangeIndex)
        else frame
    )
    return jsonable(flat.to_dict(orient="records"))
