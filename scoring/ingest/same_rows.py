"""A stored run holding the same rows as an upload: the same content in another encoding, order or
format (:mod:`scoring.core.content_hash`), opened instead of stored again as a new run.

Runs stored before revision 0017 (or kept through a downgrade) have no content hash: an upload of
as many rows hashes them from their stored rows (once; the hash is kept), so a re-upload of an old
run is recognised too.
"""

from __future__ import annotations

import polars as pl
from sqlalchemy import Engine

from scoring.core.content_hash import BASE_COLUMNS, content_columns, content_hash
from scoring.core.file_models import FILE_ROW, model_field
from scoring.core.row_language import LANGUAGE, from_file
from scoring.store import archived_at, runs
from scoring.store.run_table import EXTRA_PREFIX, DamagedRun, read_rows
from scoring.store.runs import RunInfo


def upload_content(table: pl.DataFrame, extra_columns: list[str], languages: pl.Series | None) -> str:
    """The content hash of an upload's rows (one model's): ``languages``, the row languages when
    the file gave them (None otherwise); the model column is left out."""
    if languages is not None:
        table = table.with_columns(languages.alias(LANGUAGE))
    field = model_field(table.columns)
    return content_hash(content_columns(table, extra_columns, languages is not None, [field] if field else []))


def stored_content(engine: Engine, run: RunInfo, source: str | None) -> str | None:
    """The content hash of a stored run's rows, as :func:`upload_content` hashed its upload
    (``source``: its rows' language source); None when its rows cannot be read (a damaged run is
    named where it is opened, not here)."""
    try:
        rows = read_rows(engine, run.id)
    except DamagedRun:
        return None
    extras = [c for c in run.extra_columns if EXTRA_PREFIX + c in rows.columns]
    if extras[-1:] == [FILE_ROW] and model_field(extras[:-1]):  # one model's run of a file of several
        extras = extras[:-1]  # its rows' places in the file are not its content
    named = rows.select(
        *BASE_COLUMNS,
        *([LANGUAGE] if from_file(source) and LANGUAGE in rows.columns else []),
        *(pl.col(EXTRA_PREFIX + c).alias(c) for c in extras),
    )
    languages = named[LANGUAGE] if LANGUAGE in named.columns else None
    return upload_content(named.drop(LANGUAGE, strict=False), extras, languages)


def same_rows(engine: Engine, content: str, n_rows: int, model: str) -> RunInfo | None:
    """The stored run whose rows are ``content`` (``n_rows`` of them), or None: of several, the
    one of the same ``model``, then a listed one before an archived one, then the oldest."""
    found = runs.runs_with_content(engine, content)
    for run in runs.unhashed_runs(engine, n_rows):  # stored before revision 0017: hashed once, now
        stored = stored_content(engine, run, runs.language_source(engine, run.id))
        if stored is not None:
            runs.set_content_hash(engine, run.id, stored)
            if stored == content:
                found.append(run)
    if not found:
        return None
    return min(found, key=lambda r: (r.model != model, archived_at(engine, r.id) is not None, r.id))
