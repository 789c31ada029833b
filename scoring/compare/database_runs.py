"""A stored run as a :class:`scoring.compare.compared_runs.Run`, with its judge labels and final verdicts.

Kept apart from the rest of :mod:`scoring.compare` because it loads the database layer (a second
of imports): ``python -m scoring compare`` on files never pays for it.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl
from sqlalchemy import Engine

from scoring.compare.compared_runs import Run, make_run
from scoring.core.items import item_keys
from scoring.review.verdict_table import verdict_table
from scoring.store import open_database
from scoring.verdict_export import export_table


def stored_label(run_id: int, name: str) -> str:
    """How a stored run is named in a comparison: ``#3 gpt_hindi``."""
    return f"#{run_id} {name}".strip()


def stored_run(engine: Engine, run_id: int, label: str | None = None) -> Run:
    """Run ``run_id`` with every row's metrics, judge label (the run's chosen configuration, else
    the latest label of each row, named in :attr:`Run.judge`) and final verdict exactly as
    ``python -m scoring export --judge`` writes them (the run's verdict table,
    :func:`scoring.review.verdict_table`), plus ``item_key`` (to send a row to the review queue).
    Raises :class:`InputError` when there is no such run."""
    table = verdict_table(engine, run_id)
    info, found = table.info, table.labels
    labels = found.labels
    frame = export_table(engine, run_id, judge_labels=labels)
    frame = frame.with_columns(item_keys(frame).alias("item_key"))
    if not labels:  # no judge verdict stored: the run has no judge source
        frame = frame.drop("judge_label")
    run = make_run(label or stored_label(run_id, info.name), frame.with_columns(pl.col("Domain").cast(pl.String)))
    return replace(run, judge=found.name) if labels else run


__all__ = ["open_database", "stored_label", "stored_run"]
