"""The ``runs`` table: each uploaded run's row (deduplicated by sha256) and its details, the
queries that find and list runs, and writing a new run in short transactions.

What goes into a run (parsing the upload, guessing its model and language, scoring, restoring an
export's verdicts) is :mod:`scoring.ingest`'s job; this module stores what it is given. The rows
are stored as one Parquet file in parts (:mod:`scoring.store.run_table`).

A large upload never makes a reviewer wait: its parts are written in short transactions (see
:mod:`scoring.store.chunked`), with a pause between them so a waiting mark gets the lock. The run
stays hidden (``Run.complete`` False) until its last part is in, and an upload that fails
half-way is removed again, also in short transactions.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import polars as pl
from sqlalchemy import Connection, Engine, Select, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from scoring.store.chunked import WriteStats, pause
from scoring.store.engine import writer
from scoring.store.orm_tables import Run, utcnow
from scoring.store.run_table import EXTRA_PREFIX, as_read, delete_parts_from, highest_part, read_rows, write_parts

if TYPE_CHECKING:
    import pandas as pd

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
    #: the distinct languages of its rows at upload (empty for a run stored before rows had one);
    #: a summary, left out of equality like any cache
    languages: tuple[str, ...] = field(default=(), compare=False)
    #: the sha256 of the file it was uploaded from (its ``sha256``, unless the file held several
    #: models) and of its rows as read ("" until known: :mod:`scoring.core.content_hash`)
    file_sha256: str = field(default="", compare=False)
    content_sha256: str = field(default="", compare=False)
    #: a bundled sample the tool loaded, not an upload (:mod:`scoring.store.samples`); a mark
    #: that can be set after the save, so left out of equality
    sample: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class NewRun:
    """What a new run's row holds (:func:`insert_run`): its details, its rows' count and extra
    columns, its review seed and the column mapping it was read with."""

    name: str
    model: str
    language: str
    filename: str
    sha256: str
    n_rows: int
    extra_columns: list[str]
    review_seed: int
    #: the file's own field names and the mapping applied (canonical name -> field); an empty
    #: mapping (the names matched) stores none, so no later upload is offered it
    source_fields: list[str] = field(default_factory=list)
    column_map: Mapping[str, str] = field(default_factory=dict)
    #: where the rows' languages came from (:mod:`scoring.core.row_language`), and which they are
    language_source: str | None = None
    languages: tuple[str, ...] = ()
    #: the file's sha256 when ``sha256`` is not it (one model's run of a file holding several)
    file_sha256: str | None = None
    content_sha256: str | None = None  #: :mod:`scoring.core.content_hash` of its rows

    def values(self) -> dict:
        """The ``runs`` row, hidden (``complete`` False) until its rows are all in."""
        mapped = json.dumps({"fields": self.source_fields, "map": dict(self.column_map)}, ensure_ascii=False)
        return {
            "name": self.name,
            "model": self.model,
            "language": self.language,
            "filename": self.filename,
            "sha256": self.sha256,
            "n_rows": self.n_rows,
            "extra_columns": json.dumps(self.extra_columns, ensure_ascii=False),
            "complete": False,
            "review_seed": self.review_seed,
            "column_map": mapped if self.column_map else None,
            "language_source": self.language_source,
            "languages": json.dumps(sorted(self.languages), ensure_ascii=False) if self.languages else None,
            "file_sha256": self.file_sha256,
            "content_sha256": self.content_sha256,
        }


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
        languages=tuple(json.loads(run.languages)) if run.languages else (),
        file_sha256=run.file_sha256 or run.sha256,
        content_sha256=run.content_sha256 or "",
        sample=bool(run.sample),
    )


def select_visible_runs() -> Select[tuple[Run]]:
    """Only complete runs: an upload still writing its rows (or being removed) is not shown."""
    return select(Run).where(Run.complete.is_(True))


def find_run_by_sha(engine: Engine, sha: str) -> RunInfo | None:
    with Session(engine) as session:
        run = session.scalars(select_visible_runs().where(Run.sha256 == sha)).first()
        return run_info(run) if run else None


def runs_of_file(engine: Engine, file_sha: str) -> list[RunInfo]:
    """The complete runs (archived ones too) cut from the file of sha256 ``file_sha`` (one per
    model it holds), in the order they were saved."""
    with Session(engine) as session:
        query = select_visible_runs().where(Run.file_sha256 == file_sha).order_by(Run.id)
        return [run_info(r) for r in session.scalars(query)]


def runs_with_content(engine: Engine, content: str) -> list[RunInfo]:
    """The complete runs (archived ones too) whose rows hash to ``content``, oldest first."""
    with Session(engine) as session:
        query = select_visible_runs().where(Run.content_sha256 == content).order_by(Run.id)
        return [run_info(r) for r in session.scalars(query)]


def unhashed_runs(engine: Engine, n_rows: int) -> list[RunInfo]:
    """The complete runs of ``n_rows`` rows stored before their content was hashed (revision 0017)."""
    with Session(engine) as session:
        query = select_visible_runs().where(Run.content_sha256.is_(None), Run.n_rows == n_rows).order_by(Run.id)
        return [run_info(r) for r in session.scalars(query)]


def set_content_hash(engine: Engine, run_id: int, content: str) -> None:
    """Record the content hash of a run stored before revision 0017 (its rows never change)."""
    with writer(engine).begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(content_sha256=content))


def run_column_map(engine: Engine, run_id: int) -> dict[str, str]:
    """The column mapping a run was uploaded with (canonical name -> field; empty: names matched)."""
    with Session(engine) as session:
        stored = session.scalar(select(Run.column_map).where(Run.id == run_id))
    return dict(json.loads(stored)["map"]) if stored else {}


def language_source(engine: Engine, run_id: int) -> str | None:
    """Where a run's row languages came from: ``column:<field>``, ``metadata``, ``run`` or
    ``script`` (:mod:`scoring.core.row_language`); None for a run stored before rows had one."""
    with Session(engine) as session:
        return session.scalar(select(Run.language_source).where(Run.id == run_id))


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


def insert_run(
    engine: Engine, run: NewRun, parts: Sequence[bytes | memoryview], progress: Callable[[int, int], None] | None = None
) -> tuple[int, bool]:
    """Create the run and write its rows (``parts``: :func:`scoring.store.run_table.to_parts`), or
    find the same bytes' run: ``(run_id, created)``. ``progress(done, total)`` after each part.

    The rows go in short transactions and the run appears only once all of them are in; on any
    failure (an interrupt included) what was written is removed and the exception re-raised.

    The sha256 is unique, so of two saves of the same bytes one creates the run. The other
    waits: when that run is complete it opens it; when that save failed and removed its run, or
    the run made no progress for :data:`STALE_AFTER_S` (a crashed process: it is removed here),
    it saves the rows itself.
    """
    sha, values = run.sha256, run.values()
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
    engine: Engine,
    run_id: int,
    sha: str,
    parts: Sequence[bytes | memoryview],
    progress: Callable[[int, int], None] | None,
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


def remove_new_runs(engine: Engine, run_ids: Sequence[int]) -> None:
    """Remove runs this process has just saved and nobody has opened yet (the other models' runs of
    a file whose save failed half-way: a file is saved whole or not at all). Each is hidden first,
    then its parts go in short transactions (:func:`_remove_run`)."""
    for run_id in run_ids:
        with writer(engine).begin() as conn:
            conn.execute(update(Run).where(Run.id == run_id).values(complete=False, sha256=f"abandoned-{run_id}"))
        _remove_run(engine, run_id)


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
    return _as_loaded(read_rows(engine, run_id))


def saved_as_loaded(rows: pl.DataFrame, run: NewRun) -> pl.DataFrame:
    """:func:`load_table` of a run just saved from ``rows`` (:func:`scoring.store.run_table.scored_rows`),
    without reading it back: the process that saved a large run hands its rows to its readers
    (a million rows' read is most of a second)."""
    return _as_loaded(as_read(rows, run.language, run.language_source))


def _as_loaded(rows: pl.DataFrame) -> pl.DataFrame:
    """:func:`load_table`'s frame of a run's rows as :func:`~scoring.store.run_table.read_rows` gives them."""
    rows = rows.with_row_index("row_idx").with_columns(pl.col("row_idx").cast(pl.Int64))
    taken = {c for c in rows.columns if not c.startswith(EXTRA_PREFIX)}
    return rows.rename(
        {
            c: c[len(EXTRA_PREFIX) :]
            for c in rows.columns
            if c.startswith(EXTRA_PREFIX) and c[len(EXTRA_PREFIX) :] not in taken
        }
    )


def load_scored(engine: Engine, run_id: int) -> pd.DataFrame:
    """:func:`load_table` as pandas for the pages, strings in Arrow-backed columns.

    Columns: row_idx, item_key, question, answer, Domain, response, exact_correct,
    overlap_correct, matching_words, total_golden_words, is_blank, bucket, then extras.
    """
    return load_table(engine, run_id).to_pandas()
