"""A run's scored rows as one Parquet file, stored in the database in parts.

Runs never change after upload, and every page reads a run whole, so the rows are kept the
way they are read: one columnar file (Parquet, zstd), cut into parts of :data:`PART_BYTES`
stored in ``run_parts``. Saving a million rows is a few dozen inserts, each a short transaction
(issue 8's rule: no write lock held for long), instead of a million row inserts; loading is one
query and one Parquet read into Arrow-backed columns. The database stays the only thing to back
up, on SQLite and PostgreSQL alike.

The Parquet file is followed by a seal (its SHA-256 and :data:`SEAL_MAGIC`): Parquet as written
here has no page checksums, so about one damaged byte in ten still decodes, to other text or
verdicts. A run whose bytes no longer match its seal, or that cannot be decoded, or lacks a
stored column, is :class:`DamagedRun`: named, one line, and no other run is touched. Runs stored
before the seal (their last bytes are Parquet's ``PAR1``) are read as before, unchecked.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Sequence

import polars as pl
from polars.exceptions import PanicException
from sqlalchemy import Connection, Engine, delete, func, insert, select

from scoring.core.items import item_keys
from scoring.core.report import SCORE_COLUMNS, score_table
from scoring.core.row_language import LANGUAGE, fill_languages
from scoring.store.chunked import WriteStats, write_in_chunks
from scoring.store.orm_tables import Run, RunPart

#: Bytes per stored part: small enough that inserting one holds the write lock for a few ms.
PART_BYTES = 2 * 1024**2
#: Rows per Parquet row group. Writing encodes a group's columns at once: a million rows in groups of
#: 50,000 add 15 MiB at the upload's peak instead of 65 MiB (polars' default, 262,144), the file
#: 1% larger, writing and reading as fast.
ROW_GROUP_ROWS = 50_000
ROW_COLUMNS = ["question", "answer", "Domain", "response"]
#: Extra (input) columns are stored under this prefix, so an input column named like a stored
#: one (``bucket``, ``item_key``) can never collide with it.
EXTRA_PREFIX = "extra:"
STORED_COLUMNS = ["item_key", *ROW_COLUMNS, *SCORE_COLUMNS]
#: Each row's language (:mod:`scoring.core.row_language`), stored after ``Domain`` since revision
#: 0013; not in :data:`STORED_COLUMNS` (what a run must hold), since older runs lack it: reading
#: one fills it (:func:`read_rows`), so every reader sees it.
LANGUAGE_COLUMN = LANGUAGE
#: Ends a sealed run's bytes, after the SHA-256 of the Parquet file before it.
SEAL_MAGIC = b"RUNSEAL1"
SEAL_BYTES = hashlib.sha256().digest_size + len(SEAL_MAGIC)


class DamagedRun(Exception):
    """A stored run's rows cannot be read back as they were saved (bytes changed in the database,
    while SQLite's or PostgreSQL's own pages are intact). The message names the run and what to do;
    other runs are unaffected."""

    def __init__(self, run_id: int, name: str | None, reason: str) -> None:
        self.run_id, self.name, self.reason = run_id, name, reason
        shown = " ".join((name or "").split())  # one line, whatever the uploader named it
        named = f"Run #{run_id}" + (f" ({shown[:80]})" if shown else "")
        super().__init__(
            f"{named} is damaged in the database: its stored rows cannot be read back ({reason}). Other runs are "
            "not affected; nothing was changed. Restore the database from a backup, or archive this run, delete "
            "it for good (Upload page) and upload its file again: reviewers' verdicts belong to the rows and come "
            "back with it."
        )


class _Unreadable(Exception):
    """Why a run's bytes are not its rows (turned into :class:`DamagedRun` with the run's name)."""


def scored_rows(table: pl.DataFrame, extra_columns: Sequence[str], languages: pl.Series) -> pl.DataFrame:
    """What a run stores: item key, the input's columns (``language`` after ``Domain``), both
    verdicts, then the extras. ``languages``: each row's, decided by the caller
    (:func:`scoring.core.row_language.row_languages`: the one place a row's language is decided)."""
    scored = score_table(table.select(ROW_COLUMNS)).with_columns(item_key=item_keys(table)).select(STORED_COLUMNS)
    scored = scored.insert_column(scored.columns.index("Domain") + 1, languages.alias(LANGUAGE_COLUMN))
    extras = table.select(pl.col(name).alias(EXTRA_PREFIX + name) for name in extra_columns)
    return pl.concat([scored, extras], how="horizontal")


def to_parts(rows: pl.DataFrame) -> list[memoryview]:
    """The rows as Parquet bytes and their seal, cut into parts of at most :data:`PART_BYTES`.

    The parts are views into one bytes object, the buffer Parquet was written to (``getvalue``
    hands it over without copying while no view of the buffer is open): a million rows' file
    (about 70 MB) is held once, not again as sliced copies, until the parts are written.
    """
    buffer = io.BytesIO()
    rows.write_parquet(buffer, compression="zstd", compression_level=1, statistics=False, row_group_size=ROW_GROUP_ROWS)
    with buffer.getbuffer() as parquet:  # released before the buffer grows
        seal = hashlib.sha256(parquet).digest() + SEAL_MAGIC
    buffer.write(seal)
    whole = memoryview(buffer.getvalue())
    del buffer
    return [whole[start : start + PART_BYTES] for start in range(0, len(whole), PART_BYTES)] or [whole]


def _unsealed(parts: Sequence[bytes | memoryview]) -> list[bytes | memoryview]:
    """The parts without their seal, checked against it (unchanged for a run stored unsealed).

    Only the last part or two are copied (the seal may straddle a cut); the hash reads the parts
    in place, so a large run costs one pass at about 1 GB/s and no second copy.
    """
    body, tail = list(parts), b""
    while body and len(tail) < SEAL_BYTES:
        tail = bytes(body.pop()) + tail
    if len(tail) < SEAL_BYTES or not tail.endswith(SEAL_MAGIC):
        if tail.endswith(b"PAR1"):  # ``tail`` is the whole file when shorter than a seal
            return list(parts)  # stored before the seal: read unchecked
        raise _Unreadable("its last bytes are neither a seal nor the end of a Parquet file")
    body.append(tail[:-SEAL_BYTES])
    digest = hashlib.sha256()
    for part in body:
        digest.update(part)
    if digest.digest() != tail[-SEAL_BYTES : -len(SEAL_MAGIC)]:
        raise _Unreadable("its bytes no longer match the checksum stored with them")
    return body


def from_parts(parts: Sequence[bytes | memoryview]) -> pl.DataFrame:
    """The rows of a run's parts; :class:`_Unreadable` when the bytes are not what was stored."""
    body = _unsealed(parts)
    try:
        table = pl.read_parquet(io.BytesIO(b"".join(body)))
    except (Exception, PanicException) as exc:  # noqa: BLE001  polars raises many kinds (and panics) on bad bytes
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        said = first[:200] if first.lower().startswith("parquet") else f"Parquet: {first[:200]}"
        raise _Unreadable(said) from None
    missing = [name for name in STORED_COLUMNS if name not in table.columns]
    if missing:
        raise _Unreadable(f"stored column {missing[0]!r} is missing")
    return table


def write_parts(
    engine: Engine,
    run_id: int,
    parts: Sequence[bytes | memoryview],
    still_ours: Callable[[Connection], None],
    progress: Callable[[int, int], None] | None = None,
) -> WriteStats:
    """Insert the parts of ``run_id``, one or a few per short transaction.

    ``still_ours(conn)`` runs first in each transaction, under the same lock, and raises if the
    run was taken over (see :mod:`scoring.store.runs`). ``progress(done, total)`` after each.
    """
    numbered = list(enumerate(parts))
    done = 0

    def write(conn: Connection, chunk: Sequence[tuple[int, bytes | memoryview]]) -> None:
        nonlocal done
        still_ours(conn)
        _insert_parts(conn, [{"run_id": run_id, "part": i, "data": data} for i, data in chunk])
        done += len(chunk)
        if progress is not None:
            progress(done, len(parts))

    return write_in_chunks(engine, numbered, write, first=1)


def _insert_parts(conn: Connection, records: list[dict]) -> None:
    """One transaction's INSERT (its own function so a test can make one fail or slow down)."""
    conn.execute(insert(RunPart), records)


def highest_part(conn: Connection, run_id: int) -> int | None:
    return conn.execute(select(func.max(RunPart.part)).where(RunPart.run_id == run_id)).scalar()


def delete_parts_from(conn: Connection, run_id: int, low: int) -> int:
    """Delete the parts numbered ``low`` and up; returns how many went."""
    return conn.execute(delete(RunPart).where(RunPart.run_id == run_id, RunPart.part >= low)).rowcount


def read_rows(engine: Engine, run_id: int) -> pl.DataFrame:
    """The stored rows of a run, in upload order, with a ``language`` column however old the run
    (:func:`scoring.core.row_language.fill_languages`; an unknown run gives an empty table).

    :class:`DamagedRun` when its bytes are not the rows that were stored (see the module).
    """
    with engine.connect() as conn:
        parts = conn.execute(select(RunPart.data).where(RunPart.run_id == run_id).order_by(RunPart.part)).scalars()
        data = list(parts)
        about = conn.execute(select(Run.name, Run.language, Run.language_source).where(Run.id == run_id)).first()
    if not data or not any(data):
        columns = [*STORED_COLUMNS[:4], LANGUAGE_COLUMN, *STORED_COLUMNS[4:]]
        return pl.DataFrame(schema={name: pl.String for name in columns})
    try:
        rows = from_parts(data)
    except _Unreadable as exc:
        raise DamagedRun(run_id, about.name if about else None, str(exc)) from None
    language, source = (about.language, about.language_source) if about else ("", None)
    return as_read(rows, language, source)


def as_read(rows: pl.DataFrame, language: str | None, source: str | None) -> pl.DataFrame:
    """Stored ``rows`` of a run with ``language`` and ``language_source`` as :func:`read_rows`
    gives them (their languages filled as the run's are now)."""
    return fill_languages(rows, language or "", source, EXTRA_PREFIX)
