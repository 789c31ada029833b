"""The model x language heatmap's cells: combined accuracy per (model, language) of the runs.

Runs sharing a model and a language (two Hindi files of one model, say) are pooled: their rows
together, as one run. A pairing no run covers has no cell at all, so a chart shows it empty,
never as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from scoring.compare.compared_runs import Run, SourceAccuracy, run_accuracy, verdict_column


@dataclass(frozen=True)
class HeatCell:
    """One model x language cell: its accuracy (pooled over the runs in it) and those runs."""

    model: str
    language: str
    accuracy: SourceAccuracy
    runs: tuple[str, ...]


def _by_language(run: Run, language: str) -> dict[str, pl.DataFrame]:
    """The run's rows per language: each row's own (a ``language`` column), blank ones and runs
    without the column taking the run's ``language``; rows with none at all are left out."""
    if "language" not in run.table.columns:
        return {language: run.table} if language else {}
    own = pl.col("language").cast(pl.String).str.strip_chars().fill_null("")
    keyed = run.table.with_columns(pl.when(own == "").then(pl.lit(language)).otherwise(own).alias("_language"))
    return {str(k[0]): part.drop("_language") for k, part in keyed.group_by("_language") if k[0]}


def heat_cells(runs: Sequence[Run], meta: Sequence[tuple[str, str]], source: str) -> list[HeatCell]:
    """Combined accuracy of ``source`` per (model, language) from the rows: a run's rows carry their
    own language where it has one per row (a mixed file gives several cells), else the run's;
    ``meta`` holds each run's (model, language), in the order of ``runs``. Runs without a model or
    without ``source``, and rows without any language, are left out. Cells sorted by model, language."""
    groups: dict[tuple[str, str], list[tuple[str, pl.DataFrame]]] = {}
    for run, (model, language) in zip(runs, meta, strict=True):
        model = model.strip()
        if not model or source not in run.sources:
            continue
        for row_language, rows in _by_language(run, language.strip()).items():
            groups.setdefault((model, row_language), []).append((run.label, rows))
    column = verdict_column(source)
    cells = []
    for (model, language), members in sorted(groups.items()):
        table = pl.concat([rows.select("Domain", column) for _, rows in members])
        pooled = Run(f"{model} / {language}", table, (source,))
        cells.append(HeatCell(model, language, run_accuracy(pooled, source)[-1], tuple(label for label, _ in members)))
    return cells
