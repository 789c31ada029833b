"""Each model's figure per domain, for the report's per-domain charts, under the very rule of the
model x language cells.

Why the cells' rule and not a new one: a domain's bar beside a language's cell must mean the same
thing (the estimated true accuracy with its 95% interval where the model's rows there are reviewed,
else a metric's accuracy, marked), with the same evidence minimums. So a model's runs are given to
:func:`scoring.team_report.table_cells.model_cells` with each row's domain standing where its
language stands: the estimate of a domain is then that of a run of the domain's rows alone,
exactly as a language's is (:mod:`scoring.estimate.group_estimate`, whose coverage is simulated).
A cell of the result holds the domain in ``language``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from scoring.estimate.group_estimate import LANGUAGE
from scoring.team_report.table_cells import ModelRuns, TableCell, model_cells

DOMAIN = "Domain"


def _by_domain(table: pl.DataFrame) -> pl.DataFrame:
    """``table`` whose ``language`` column holds each row's domain."""
    return table.with_columns(pl.col(DOMAIN).cast(pl.String).alias(LANGUAGE))


def domain_cells(models: Sequence[ModelRuns]) -> list[TableCell]:
    """Every model's cells per domain (models in the given order, domains sorted)."""
    cells: list[TableCell] = []
    for model in models:
        runs = [(run_id, replace(run, table=_by_domain(run.table)), _by_domain(s)) for run_id, run, s in model.runs]
        cells += model_cells(replace(model, runs=runs))
    return cells
