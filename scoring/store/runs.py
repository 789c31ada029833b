"""Uploaded runs in the database: saved once (deduplicated by sha256), scored once at upload.

Scoring at upload and storing the verdicts beside the rows is what keeps every dashboard click
independent of the run's size: pages read stored columns, they never re-score. The rows are
stored as one Parquet file in parts (:mod:`scoring.store.run_table`).

A large upload never makes a reviewer wait: its parts are written in short transactions (see
:mod:`scoring.store.chunked`), with a pause between them so a waiting mark gets the lock. The run
stays hidden (``Run.complete`` False) until its last part is in, and an upload that fails
half-way is removed again, also in short transactions.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl
from sqlalchemy import Connection, Engine, Select, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoring.core.export_format import EXPORT_COLUMNS, split_exported
from scoring.core.export_order import exported_seed
from scoring.core.export_parquet import parquet_manifest
from scoring.core.loader import load_bytes
from scoring.core.order import seed_from_sha
from scoring.store.adjudications import restore_adjudications
from scoring.store.chunked import WriteStats, pause
from scoring.store.engine import writer
from scoring.store.restore import restore_skips, restore_verdicts
from scoring.store.run_table import (
    EXTRA_PREFIX,
    delete_parts_from,
    highest_part,
    read_rows,
    scored_rows,
    to_parts,
    write_parts,
)
from scoring.store.tables import Run, utcnow

if TYPE_CHECKING:
    import pandas as pd

#: ``progress(phase, done, total)``: phases "reading", "scoring", "saving" (rows).
Progress = Callable[[str, int, int], None]

LANGUAGES = (
    "english", "hindi", "tamil", "bengali", "bangla", "telugu", "marathi", "gujarati", "kannada",
    "malayalam", "odia", "oriya", "punjabi", "assamese", "urdu", "sanskrit", "nepali", "konkani",
    "maithili", "sindhi", "kashmiri", "manipuri", "bodo", "dogri", "santali",
)  # fmt: skip
ROW_COLUMNS = ["question", "answer", "Domain", "response"]

REMOVE_PARTS = 4  #: parts deleted per transaction when an incomplete run is removed
#: An incomplete run of the same bytes whose rows do not change for this long is taken to be
#: left by a crashed process: it is removed and the save retried.
STALE_AFTER_S = 60.0
WAIT_POLL_S = 0.25  #: how often a save waiting for another save of the same bytes looks again
#: Incomplete runs of any bytes older than this are removed at the next upload (a crashed
#: process's leftovers nobody uploads again); no real upload takes this long.
ABANDONED_AFTER = timedelta(hours=6)


@dataclass(frozen=True)
class RunInfo:
    id: int
    name: str
    model: str
    language: str
    filename: str
    sha256: str
    uploaded_at: datetime
    n_rows: int
    extra_columns: list[str] = field(default_factory=list)
    review_seed: int = 0


@dataclass(frozen=True)
class SaveResult:
    run: RunInfo
    created: bool
    warnings: list[str]
    table: pl.DataFrame | None = None  # the parsed input columns (None when the run already existed)
    restored: int = 0  # human verdicts restored from an uploaded export
    decisions: int = 0  # adjudicators' decisions restored from it
    #: Of ``restored``, the verdicts of an export without its review seed, which the estimate
    #: cannot count as a random sample (:func:`scoring.core.export_order.unordered_note` says why).
    unordered: int = 0
    skips: int = 0  # skips restored: rows its queue served that nobody holds a verdict on


def guess_model_language(filename: str) -> tuple[str, str]:
    """``my_model_hindi.csv`` -> (``my_model``, ``Hindi``); unknown parts leave the language empty."""
    stem = Path(filename).stem
    parts = [p for p in re.split(r"[_\-\s.]+", stem) if p]
    language = ""
    for i, part in enumerate(parts):
        if part.lower() in LANGUAGES:
            language = part.capitalize()
            parts = parts[:i] + parts[i + 1 :]
            break
    return "_".join(parts), language


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_info(run: Run) -> RunInfo:
    """The plain record of a stored run (what pages and commands get instead of the ORM row)."""
    return RunInfo(
        id=run.id,
        name=run.name,
        model=run.model,
        language=run.language,
        filename=run.filename,
        sha256=run.sha256,
        uploaded_at=run.uploaded_at,
        n_rows=run.n_rows,
        extra_columns=json.loads(run.extra_columns or "[]"),
        review_seed=run.review_seed or 0,
    )


def select_visible_runs() -> Select[tuple[Run]]:
    """Only complete runs: an upload still writing its rows (or being removed) is not shown."""
    return select(Run).where(Run.complete.is_(True))


def find_run_by_sha(engine: Engine, sha: str) -> RunInfo | None:
    with Session(engine) as session:
        run = session.scalars(select_visible_runs().where(Run.sha256 == sha)).first()
        return run_info(run) if run else None


def save_run(
    engine: Engine,
    data: bytes,
    filename: str,
    name: str | None = None,
    model: str | None = None,
    language: str | None = None,
    progress: Progress | None = None,
    columns: Mapping[str, str] | None = None,
    companions: Mapping[str, bytes] | None = None,
) -> SaveResult:
    """Parse, score and store an upload; identical bytes open the existing run instead.
    ``columns``: the column mapping (canonical name -> the file's field), stored with the run;
    ``companions``: files uploaded with it (lm-evaluation-harness's ``results_*.json``).

    Raises :class:`scoring.core.errors.InputError` for bad input, before anything is written. The
    rows go in short transactions and the run appears only once all of them are in; on any
    failure (an interrupt included) what was written is removed and the exception re-raised.
    A concurrent save of the same bytes waits for this one and opens its run. ``progress`` hears
    of each phase (for the upload page's status). An uploaded export restores its verdicts and
    gives the run its review seed (:mod:`scoring.core.export_order`); without one, the result's
    ``unordered`` counts the verdicts the estimate cannot count as a random sample.
    """
    report = progress or (lambda phase, done, total: None)
    sha = sha256_bytes(data)
    existing = find_run_by_sha(engine, sha)
    if existing:
        return SaveResult(existing, False, [])
    report("reading", 0, 0)
    loaded = load_bytes(data, filename, columns, companions)
    table, exported, seed = loaded.table, None, None
    if set(EXPORT_COLUMNS) <= set(table.columns):
        # An uploaded export: its derived columns are not input, its human verdicts are restored,
        # and the run gets the export's review seed, so its review order is the original's.
        frame, exported = split_exported(loaded.frame, neutralised=loaded.format in ("csv", "tsv"))
        table = pl.DataFrame({str(c): pl.Series(frame[c].tolist(), dtype=pl.String) for c in frame.columns})
        seed = exported_seed(exported, parquet_manifest(data) if loaded.format == "parquet" else None)
    extra_columns = [c for c in table.columns if c not in ROW_COLUMNS]
    guessed_model, guessed_language = guess_model_language(filename)
    guessed_model = loaded.model or guessed_model
    # Scored before any write: the write lock is held for the inserts only, so reviewers
    # marking rows elsewhere never wait for a large upload to be scored.
    report("scoring", 0, table.height)
    rows = scored_rows(table, extra_columns)
    parts = to_parts(rows)
    values = {
        "name": name or Path(filename).stem,
        "model": guessed_model if model is None else model,
        "language": guessed_language if language is None else language,
        "filename": filename,
        "sha256": sha,
        "n_rows": table.height,
        "extra_columns": json.dumps(extra_columns, ensure_ascii=False),
        "complete": False,
        "review_seed": seed_from_sha(sha) if seed is None else seed,
        "column_map": json.dumps({"fields": loaded.source_fields, "map": loaded.columns}, ensure_ascii=False)
        if loaded.columns else None,
    }
    report("saving", 0, table.height)
    saved = (lambda done, total: report("saving", table.height * done // total, table.height)) if progress else None
    run_id, created = _store(engine, values, parts, saved)
    if not created:
        existing = get_run(engine, run_id)
        assert existing is not None
        return SaveResult(existing, False, [])
    restored = decided = skipped = 0
    if exported is not None:
        keyed = rows.select("item_key").to_pandas()
        restored = restore_verdicts(engine, run_id, keyed, exported, in_order=seed is not None)
        skipped = restore_skips(engine, run_id, keyed, exported, in_order=seed is not None)
        decided = restore_adjudications(engine, run_id, keyed["item_key"].astype(str).tolist(), exported)
    info = get_run(engine, run_id)
    assert info is not None
    unordered = restored if exported is not None and seed is None else 0
    return SaveResult(info, True, loaded.warnings, table, restored, decided, unordered, skipped)


def run_column_map(engine: Engine, run_id: int) -> dict[str, str]:
    """The column mapping a run was uploaded with (canonical name -> field; empty: names matched)."""
    with Session(engine) as session:
        stored = session.scalar(select(Run.column_map).where(Run.id == run_id))
    return dict(json.loads(stored)["map"]) if stored else {}


def remembered_columns(engine: Engine, fields: list[str]) -> dict[str, str]:
    """The mapping of the latest run uploaded with exactly these fields (any order), or empty:
    a team's second file from the same harness needs no choosing."""
    wanted = sorted(fields)
    with Session(engine) as session:
        stored = session.scalars(select(Run.column_map).where(Run.column_map.is_not(None)).order_by(Run.id.desc()))
        for text in stored:
            found = json.loads(text)
            if sorted(found.get("fields", [])) == wanted:
                return dict(found["map"])
    return {}


class _TakenOver(Exception):
    """Our incomplete run was declared stale and claimed by another save (we were too slow)."""


def _store(
    engine: Engine, values: dict, parts: list[bytes], progress: Callable[[int, int], None] | None = None
) -> tuple[int, bool]:
    """Create the run and write its rows, or find the same bytes' run: ``(run_id, created)``.

    The sha256 is unique, so of two saves of the same bytes one creates the run. The other
    waits: when that run is complete it opens it; when that save failed and removed its run, or
    the run made no progress for :data:`STALE_AFTER_S` (a crashed process: it is removed here),
    it saves the rows itself.
    """
    sha = values["sha256"]
    _remove_abandoned(engine)
    seen: tuple[int, int | None] | None = None
    seen_at = time.monotonic()
    while True:
        other = _progress(engine, sha)
        if other is None:
            try:
                with writer(engine).begin() as conn:
                    run_id = int(conn.execute(insert(Run).values(**values)).inserted_primary_key[0])
            except IntegrityError:
                if _progress(engine, sha) is None:
                    raise  # not the sha256: a real constraint failure
                continue  # another save of the same bytes got there first
            try:
                _write_parts(engine, run_id, sha, parts, progress)
                _mark_complete(engine, run_id, sha)
            except _TakenOver:
                _remove_run(engine, run_id)
                continue
            except BaseException:
                try:
                    _abandon(engine, run_id)
                except Exception:  # noqa: BLE001
                    # The original failure is what the caller must see. If the database cannot
                    # be written now, the hidden leftover is removed later: by the next save of
                    # the same bytes (no progress) or by any upload after ABANDONED_AFTER.
                    pass
                raise
            return run_id, True
        run_id, complete, rows = other
        if complete:
            return run_id, False
        if (run_id, rows) != seen:
            seen, seen_at = (run_id, rows), time.monotonic()
        elif time.monotonic() - seen_at > STALE_AFTER_S:
            _abandon(engine, run_id)
            continue
        time.sleep(WAIT_POLL_S)


def _progress(engine: Engine, sha: str) -> tuple[int, bool, int | None] | None:
    """The run holding ``sha`` (complete or not) as ``(id, complete, highest part written)``."""
    with engine.connect() as conn:
        found = conn.execute(select(Run.id, Run.complete).where(Run.sha256 == sha)).first()
        if found is None:
            return None
        top = highest_part(conn, found.id)
    return int(found.id), bool(found.complete), top


def _write_parts(
    engine: Engine, run_id: int, sha: str, parts: list[bytes], progress: Callable[[int, int], None] | None
) -> WriteStats:
    """Insert the run's parts in short transactions.

    Each transaction first checks, under the same lock, that the run is still ours
    (:func:`_abandon` renames a stale run's sha256), so a save declared stale stops at once.
    """

    def still_ours(conn: Connection) -> None:
        if conn.execute(select(Run.sha256).where(Run.id == run_id)).scalar() != sha:
            raise _TakenOver(run_id)

    return write_parts(engine, run_id, parts, still_ours, progress)


def _mark_complete(engine: Engine, run_id: int, sha: str) -> None:
    """Show the run: its rows are all in. Fails with :class:`_TakenOver` if it was claimed."""
    with writer(engine).begin() as conn:
        done = conn.execute(
            update(Run)
            .where(Run.id == run_id, Run.sha256 == sha, Run.complete.is_(False))
            .values(complete=True, uploaded_at=utcnow())
        )
        if done.rowcount != 1:
            raise _TakenOver(run_id)


def _abandon(engine: Engine, run_id: int) -> None:
    """Remove an incomplete run: first free its sha256 (so its owner, if still alive, stops and
    a retry of the same bytes can start at once), then delete its rows in short transactions."""
    with writer(engine).begin() as conn:
        claimed = conn.execute(
            update(Run).where(Run.id == run_id, Run.complete.is_(False)).values(sha256=f"abandoned-{run_id}")
        ).rowcount
    if claimed:
        _remove_run(engine, run_id)


def _remove_run(engine: Engine, run_id: int) -> None:
    """Delete an abandoned run's parts, newest first, in short transactions, then the run.

    Each transaction first checks the run is still the abandoned one: two removers can race,
    and once one has deleted the run row SQLite may give its id to a new upload, whose parts
    must not be touched.
    """
    while True:
        with writer(engine).begin() as conn:
            if conn.execute(select(Run.sha256).where(Run.id == run_id)).scalar() != f"abandoned-{run_id}":
                return  # removed already, or the id now belongs to another run
            top = highest_part(conn, run_id)
            if top is None:
                conn.execute(delete(Run).where(Run.id == run_id, Run.complete.is_(False)))
                return
            delete_parts_from(conn, run_id, max(0, top + 1 - REMOVE_PARTS))
        pause()


def _remove_abandoned(engine: Engine) -> None:
    """Remove incomplete runs older than :data:`ABANDONED_AFTER` (left by a crashed process)."""
    cutoff = utcnow() - ABANDONED_AFTER
    with engine.connect() as conn:
        stale = conn.execute(select(Run.id).where(Run.complete.is_(False), Run.uploaded_at < cutoff)).scalars().all()
    for run_id in stale:
        _abandon(engine, run_id)


def list_runs(engine: Engine) -> list[RunInfo]:
    """All complete runs, newest first."""
    with Session(engine) as session:
        query = select_visible_runs().order_by(Run.uploaded_at.desc(), Run.id.desc())
        return [run_info(r) for r in session.scalars(query)]


def get_run(engine: Engine, run_id: int) -> RunInfo | None:
    """A complete run by id (None for an upload still writing its rows)."""
    with Session(engine) as session:
        run = session.scalars(select_visible_runs().where(Run.id == run_id)).first()
        return run_info(run) if run else None


def update_run_meta(engine: Engine, run_id: int, name: str, model: str, language: str) -> None:
    """Edit the guessed name, model and language of a run."""
    with writer(engine).begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(name=name, model=model, language=language))


def count_runs(engine: Engine) -> int:
    """Number of complete runs."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(Run).where(Run.complete.is_(True))).scalar_one())


def load_table(engine: Engine, run_id: int) -> pl.DataFrame:
    """A run's stored rows (polars), in upload order: ``row_idx``, ``item_key``, the input's
    four columns, both verdicts and the bucket, then the extra columns under their own names
    (an extra named like a stored column keeps the ``extra:`` prefix)."""
    rows = read_rows(engine, run_id).with_row_index("row_idx").with_columns(pl.col("row_idx").cast(pl.Int64))
    taken = {c for c in rows.columns if not c.startswith(EXTRA_PREFIX)}
    return rows.rename({c: c[len(EXTRA_PREFIX) :] for c in rows.columns if c.startswith(EXTRA_PREFIX)
                        and c[len(EXTRA_PREFIX) :] not in taken})  # fmt: skip


def load_scored(engine: Engine, run_id: int) -> pd.DataFrame:
    """:func:`load_table` as pandas for the pages, strings in Arrow-backed columns.

    Columns: row_idx, item_key, question, answer, Domain, response, exact_correct,
    overlap_correct, matching_words, total_golden_words, is_blank, bucket, then extras.
    """
    return load_table(engine, run_id).to_pandas()
