"""The head-to-head on the estimated truth (:mod:`scoring.team_report.head_to_head`) of stored
runs: each run read once as a compare run and as the estimator's sample (its random-sample rule:
only the prefix of each stratum's seeded review order counts), or a model's runs pooled.

Kept apart from the pure module because it loads the database layer.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import polars as pl
from sqlalchemy import Engine

from scoring.compare.compared_runs import Run
from scoring.compare.database_runs import stored_label, stored_run
from scoring.estimate.group_estimate import LANGUAGE
from scoring.estimate.sample import reviewed_sample
from scoring.estimate.stored_run import stored_final
from scoring.review.verdict_table import verdict_table
from scoring.store import DamagedRun, RunInfo
from scoring.team_report.head_to_head import Contender, HeadToHead, head_to_head
from scoring.team_report.stored_table import asked_runs, model_of
from scoring.team_report.table_cells import with_language


def stored_contender(engine: Engine, info: RunInfo, withheld: bool = False, label: str | None = None) -> Contender:
    """Run ``info`` as a :class:`Contender`; ``withheld``: without the human verdicts (double-blind
    review: nothing reviewed, so no estimate and no figure built on them)."""
    table = verdict_table(engine, info.id)
    run = stored_run(engine, info.id, label or stored_label(info.id, info.name))
    stored = stored_final(engine, info.id, table=table)
    sample = with_language(reviewed_sample(stored.final, stored.rank, stored.served), info.language)
    if withheld:
        sample = sample.with_columns(reviewed=pl.lit(False), truth=pl.lit(None, dtype=pl.Boolean))
    sources = (
        run.table["final_source"].cast(pl.String).fill_null("").to_list() if "final_source" in run.table.columns else []
    )
    return Contender(run.label, run, sample, () if withheld else tuple(sources))


def pooled(label: str, parts: Sequence[Contender]) -> Contender:
    """One model's runs as one contender (their rows one after the other, each with its language)."""
    tables = [p.run.table.with_columns(p.sample[LANGUAGE].alias(LANGUAGE)) for p in parts]
    common = set.intersection(*(set(p.run.sources) for p in parts))
    table = pl.concat(tables, how="diagonal_relaxed")
    sample = pl.concat([p.sample for p in parts], how="diagonal_relaxed")
    sources = tuple(s for s in parts[0].run.sources if s in common)
    finals = tuple(s for p in parts for s in p.final_sources)
    return Contender(label, Run(label, table, sources), sample, finals, pooled=True)


def stored_head_to_head(
    engine: Engine,
    run_ids: Sequence[int],
    withheld: Collection[int] = (),
    family: str | None = None,
    by_model: bool = False,
    by_language: bool = True,
) -> HeadToHead:
    """The head-to-head of runs ``run_ids`` (in that order); ``by_model``: one contender per model
    (its runs pooled, models in the order first met), as the Model x language page reads them.
    :class:`InputError` names an unknown run id; a damaged run (:class:`DamagedRun`) is left out,
    as the Model x language table leaves it out and names it."""
    infos = asked_runs(engine, run_ids)
    read: list[tuple[RunInfo, Contender]] = []
    for info in infos:
        try:
            read.append((info, stored_contender(engine, info, info.id in withheld)))
        except DamagedRun:
            continue  # its stored rows cannot be read back: the pages name it (Model x language, app.py)
    if not by_model:
        return head_to_head([c for _, c in read], family, by_language)
    models: dict[str, list[Contender]] = {}
    for info, contender in read:
        models.setdefault(model_of(info), []).append(contender)
    return head_to_head([pooled(m, parts) for m, parts in models.items()], family, by_language)
