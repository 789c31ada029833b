"""A stored run as a :class:`scoring.compare.runs.Run`, with its judge labels and final verdicts.

Kept apart from the rest of :mod:`scoring.compare` because it loads the database layer (a second
of imports): ``python -m scoring compare`` on files never pays for it.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl
from sqlalchemy import Engine

from scoring.compare.runs import Run, make_run
from scoring.core.errors import InputError
from scoring.core.items import item_keys
from scoring.export import export_table, open_existing, stored_run_labels
from scoring.store import database_url, get_run


def stored_label(run_id: int, name: str) -> str:
    """How a stored run is named in a comparison: ``#3 gpt_hindi``."""
    return f"#{run_id} {name}".strip()


def stored_run(engine: Engine, run_id: int, label: str | None = None) -> Run:
    """Run ``run_id`` with every row's metrics, judge label (the run's chosen configuration, else
    the latest label of each row: :func:`scoring.export.stored_run_labels`, named in
    :attr:`Run.judge`) and final verdict exactly as ``python -m scoring export --judge`` writes
    them, plus ``item_key`` (to send a row to the review queue). Raises :class:`InputError` when
    there is no such run."""
    info = get_run(engine, run_id)
    if info is None:
        raise InputError(f"No run with id {run_id}.")
    found = stored_run_labels(engine, run_id)
    labels = found.labels
    frame = export_table(engine, run_id, judge_labels=labels)
    frame = frame.with_columns(item_keys(frame).alias("item_key"))
    if not labels:  # no judge verdict stored: the run has no judge source
        frame = frame.drop("judge_label")
    run = make_run(label or stored_label(run_id, info.name), frame.with_columns(pl.col("Domain").cast(pl.String)))
    return replace(run, judge=found.name) if labels else run


def open_database(url: str | None) -> Engine:
    """The database ``--db`` names, else the project's (``REVIEW_DB_URL``, secrets, data/review.db);
    a missing SQLite file is an input error, as for ``export``."""
    return open_existing(url or database_url())
