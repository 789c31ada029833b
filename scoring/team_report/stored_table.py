"""The model x language table of stored runs: each run read once through its verdict table (the
one every reader uses), as a compare run and as the estimator's sample.

Kept apart from the pure table modules because it loads the database layer.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

import polars as pl
from sqlalchemy import Engine

from scoring.compare.compared_runs import Run, verdict_column
from scoring.compare.database_runs import stored_label, stored_run
from scoring.core.errors import InputError
from scoring.core.metric_names import ADJUDICATED
from scoring.estimate.group_estimate import LANGUAGE
from scoring.estimate.sample import reviewed_sample
from scoring.estimate.stored_run import stored_final
from scoring.review.verdict_table import verdict_table
from scoring.store import DamagedRun, RunInfo, get_run, listed_runs, shown_runs
from scoring.team_report.domain_cells import domain_cells
from scoring.team_report.language_pairs import PAIRS_METHOD, LanguagePair, language_pairs
from scoring.team_report.table_cells import CELL_METHOD, ModelRuns, TableCell, table_cells, with_language


@dataclass(frozen=True)
class TeamTable:
    """The cells (model-major) and the per-language pairs of a set of runs."""

    cells: list[TableCell]
    pairs: list[LanguagePair]
    runs: list[RunInfo] = field(default_factory=list)
    #: runs left out because their stored rows cannot be read back (damaged), with the reason
    skipped: list[tuple[RunInfo, str]] = field(default_factory=list)
    #: runs whose human verdicts are withheld from the viewer (double-blind review): their models'
    #: cells show a metric and their pairs compare no adjudicated verdicts
    withheld: frozenset[int] = frozenset()
    #: each model's cells per domain (the domain in ``language``), when asked for (the report's charts)
    domains: list[TableCell] = field(default_factory=list)
    #: models left out of the pairs because they hold the same rows as an earlier model:
    #: [(duplicate, the model it repeats)] (:mod:`scoring.core.same_content`)
    duplicates: list[tuple[str, str]] = field(default_factory=list)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(c.model for c in self.cells))

    @property
    def languages(self) -> list[str]:
        seen = dict.fromkeys(c.language for c in self.cells)
        return sorted(seen, key=lambda v: (v.startswith("("), v))

    def cell(self, model: str, language: str) -> TableCell | None:
        return next((c for c in self.cells if c.model == model and c.language == language), None)

    def as_dict(self) -> dict:
        return {
            "by": ["model", "language"],
            "models": self.models,
            "languages": self.languages,
            "cells": [c.as_dict() for c in self.cells],
            "pairs": [p.as_dict() for p in self.pairs],
            "duplicates": [{"model": dup, "same_content_as": first} for dup, first in self.duplicates],
            "runs": [
                {"id": r.id, "name": r.name, "model": model_of(r), "rows": r.n_rows, "withheld": r.id in self.withheld}
                for r in self.runs
            ],
            "skipped": [{"id": r.id, "name": r.name, "reason": why} for r, why in self.skipped],
            "cell_method": CELL_METHOD,
            "pairs_method": PAIRS_METHOD,
        }


def model_of(info: RunInfo) -> str:
    """A run's model as the table names it: its model field, else its name."""
    return info.model.strip() or info.name


def _one_run(engine: Engine, info: RunInfo, withheld: bool = False) -> tuple[int, Run, pl.DataFrame]:
    """One run as a compare run and as the estimator's sample; ``withheld``: without the human
    verdicts (no adjudicated source, nothing reviewed), for a viewer who may not see them."""
    table = verdict_table(engine, info.id)
    run = stored_run(engine, info.id, stored_label(info.id, info.name))
    if withheld:
        column = verdict_column(ADJUDICATED)
        kept = tuple(s for s in run.sources if s != ADJUDICATED)
        run = replace(run, table=run.table.drop(column, strict=False), sources=kept)
    rows = run.table
    if LANGUAGE in table.rows.columns and table.rows.height == rows.height:  # both in upload order
        rows = rows.with_columns(table.rows[LANGUAGE].alias(LANGUAGE))
    run = replace(run, table=with_language(rows, info.language))
    stored = stored_final(engine, info.id, table=table)
    sample = with_language(reviewed_sample(stored.final, stored.rank, stored.served), info.language)
    if withheld:
        sample = sample.with_columns(reviewed=pl.lit(False), truth=pl.lit(None, dtype=pl.Boolean))
    return info.id, run, sample


def asked_runs(engine: Engine, run_ids: Sequence[int]) -> list[RunInfo]:
    """The runs ``run_ids``, in that order; :class:`InputError` names the first unknown id (every
    command and page that is given run ids asks the same way)."""
    infos = []
    for run_id in run_ids:
        info = get_run(engine, run_id)
        if info is None:
            raise InputError(f"No run #{run_id} in the database (python -m scoring runs lists them).")
        infos.append(info)
    return infos


def team_table(
    engine: Engine,
    run_ids: Sequence[int] | None = None,
    strict: Collection[int] = (),
    withheld: Collection[int] = (),
    by_domain: bool = False,
) -> TeamTable:
    """The table of ``run_ids`` (default: every listed run, the bundled samples left out once there
    is a run of the team's own: :func:`scoring.store.shown_runs`), models sorted by name;
    :class:`InputError` names an unknown run id. A damaged run (:class:`DamagedRun`) is left out
    and listed in :attr:`TeamTable.skipped`, unless it is in ``strict`` (a run asked for by name:
    then its error is raised). The human verdicts of the runs in ``withheld`` are not read into
    any figure (double-blind review, :mod:`scoring.review.visibility`): a model with such a run
    shows a metric in every cell, and its pairs use no adjudicated verdicts. ``by_domain``: each
    model's cells per domain too (:mod:`scoring.team_report.domain_cells`)."""
    # the runs every table shows by default: samples only while there is nothing else
    infos = shown_runs(listed_runs(engine)) if run_ids is None else asked_runs(engine, run_ids)
    if not infos:
        raise InputError("No runs in the database yet: upload one on the Upload page or with python -m scoring runs.")
    by_model: dict[str, list[tuple[int, Run, pl.DataFrame]]] = {}
    skipped: list[tuple[RunInfo, str]] = []
    for info in infos:
        try:
            by_model.setdefault(model_of(info), []).append(_one_run(engine, info, info.id in withheld))
        except DamagedRun as damaged:
            if info.id in strict:
                raise
            skipped.append((info, str(damaged)))
    hidden = frozenset(withheld)
    models = [
        ModelRuns(model, by_model[model], withheld=any(run_id in hidden for run_id, _, _ in by_model[model]))
        for model in sorted(by_model, key=str.casefold)
    ]
    pooled = [
        Run(m.model, pl.concat([r.table for _, r, _ in m.runs], how="diagonal_relaxed"), _sources(m), "")
        for m in models
    ]
    left_out = {r.id for r, _ in skipped}
    used = [info for info in infos if info.id not in left_out]
    domains = domain_cells(models) if by_domain else []
    found = language_pairs(pooled)
    return TeamTable(
        table_cells(models), found.pairs, used, skipped, hidden & {i.id for i in used}, domains, found.duplicates
    )


def _sources(model: ModelRuns) -> tuple[str, ...]:
    """The verdict sources every run of ``model`` has (a pair reads only what both sides hold)."""
    common = set.intersection(*(set(run.sources) for _, run, _ in model.runs))
    return tuple(s for s in model.runs[0][1].sources if s in common)
