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


def heat_cells(runs: Sequence[Run], meta: Sequence[tuple[str, str]], source: str) -> list[HeatCell]:
    """Combined accuracy of ``source`` per (model, language); ``meta`` holds each run's (model,
    language), in the order of ``runs``. Runs without both, or without ``source``, are left out."""
    groups: dict[tuple[str, str], list[Run]] = {}
    for run, (model, language) in zip(runs, meta, strict=True):
        model, language = model.strip(), language.strip()
        if model and language and source in run.sources:
            groups.setdefault((model, language), []).append(run)
    column = verdict_column(source)
    cells = []
    for (model, language), members in groups.items():
        pooled = Run(f"{model} / {language}", pl.concat([r.table.select("Domain", column) for r in members]), (source,))
        cells.append(HeatCell(model, language, run_accuracy(pooled, source)[-1], tuple(r.label for r in members)))
    return cells
