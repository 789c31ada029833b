"""A run's scored rows as one Parquet file, stored in the database in parts.

Runs never change after upload, and every page reads a run whole, so the rows are kept the
way they are read: one columnar file (Parquet, zstd), cut into parts of :data:`PART_BYTES`
stored in ``run_parts``. Saving a million rows is a few dozen inserts, each a short transaction
(issue 8's rule: no write lock held for long), instead of a million row inserts; loading is one
query and one Parquet read into Arrow-backed columns. The database stays the only thing to back
up, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence

import polars as pl
from sqlalchemy import Connection, Engine, delete, func, insert, select

from scoring.core.items import item_keys
from scoring.core.report import SCORE_COLUMNS, score_table
from scoring.store.chunked import WriteStats, write_in_chunks
from scoring.store.tables import RunPart

#: Bytes per stored part: small enough that inserting one holds the write lock for a few ms.
PART_BYTES = 2 * 1024**2
ROW_COLUMNS = ["question", "answer", "Domain", "response"]
#: Extra (input) columns are stored under this prefix, so an input column named like a stored
#: one (``bucket``, ``item_key``) can never collide with it.
EXTRA_PREFIX = "extra:"
STORED_COLUMNS = ["item_key", *ROW_COLUMNS, *SCORE_COLUMNS]


def scored_rows(table: pl.DataFrame, extra_columns: Sequence[str]) -> pl.DataFrame:
    """What a run stores: item key, the input's four columns, both verdicts, then the extras."""
    scored = score_table(table.select(ROW_COLUMNS)).with_columns(item_key=item_keys(table)).select(STORED_COLUMNS)
    extras = table.select(pl.col(name).alias(EXTRA_PREFIX + name) for name in extra_columns)
    return pl.concat([scored, extras], how="horizontal")


def to_parts(rows: pl.DataFrame) -> list[bytes]:
    """The rows as Parquet bytes, cut into parts of at most :data:`PART_BYTES`."""
    buffer = io.BytesIO()
    rows.write_parquet(buffer, compression="zstd", compression_level=1, statistics=False)
    data = buffer.getvalue()
    return [data[start : start + PART_BYTES] for start in range(0, len(data), PART_BYTES)] or [b""]


def from_parts(parts: Sequence[bytes]) -> pl.DataFrame:
    return pl.read_parquet(io.BytesIO(b"".join(parts)))


def write_parts(
    engine: Engine,
    run_id: int,
    parts: list[bytes],
    still_ours: Callable[[Connection], None],
    progress: Callable[[int, int], None] | None = None,
) -> WriteStats:
    """Insert the parts of ``run_id``, one or a few per short transaction.

    ``still_ours(conn)`` runs first in each transaction, under the same lock, and raises if the
    run was taken over (see :mod:`scoring.store.runs`). ``progress(done, total)`` after each.
    """
    numbered = list(enumerate(parts))
    done = 0

    def write(conn: Connection, chunk: Sequence[tuple[int, bytes]]) -> None:
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
    """The stored rows of a run, in upload order (an unknown run gives an empty table)."""
    with engine.connect() as conn:
        parts = conn.execute(select(RunPart.data).where(RunPart.run_id == run_id).order_by(RunPart.part)).scalars()
        data = list(parts)
    if not data or not any(data):
        return pl.DataFrame(schema={name: pl.String for name in STORED_COLUMNS})
    return from_parts(data)
