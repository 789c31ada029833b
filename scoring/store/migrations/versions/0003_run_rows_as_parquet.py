"""Runs' rows stored as one Parquet file in parts (``run_parts``) instead of a row per row.

A run is written once and always read whole, so a million row inserts and a million-row query
became a few dozen blobs and one Parquet read (issue 10). Existing runs are converted: their rows,
verdicts and extra columns are read from ``run_rows`` in order and written as the same Parquet
layout new uploads use; then ``run_rows`` goes. Downgrade converts back.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from __future__ import annotations

import json

import polars as pl
import sqlalchemy as sa
from alembic import op

from scoring.store.run_table import EXTRA_PREFIX, STORED_COLUMNS, from_parts, to_parts

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ROW_FIELDS = [
    "item_key",
    "question",
    "answer",
    "domain",
    "response",
    "exact_correct",
    "overlap_correct",
    "matching_words",
    "total_golden_words",
    "is_blank",
    "bucket",
]
SCHEMA = {
    "item_key": pl.String,
    "question": pl.String,
    "answer": pl.String,
    "Domain": pl.String,
    "response": pl.String,
    "exact_correct": pl.Boolean,
    "overlap_correct": pl.Boolean,
    "matching_words": pl.Int64,
    "total_golden_words": pl.Int64,
    "is_blank": pl.Boolean,
    "bucket": pl.String,
}

runs = sa.table("runs", sa.column("id", sa.Integer), sa.column("extra_columns", sa.Text))
run_rows = sa.table(
    "run_rows",
    sa.column("run_id", sa.Integer),
    sa.column("row_idx", sa.Integer),
    sa.column("extra", sa.Text),
    *(sa.column(name) for name in ROW_FIELDS),
)
run_parts = sa.table(
    "run_parts", sa.column("run_id", sa.Integer), sa.column("part", sa.Integer), sa.column("data", sa.LargeBinary)
)


def _create_run_rows() -> None:
    op.create_table(
        "run_rows",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("row_idx", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("domain", sa.Text(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("extra", sa.Text(), nullable=False),
        sa.Column("exact_correct", sa.Boolean(), nullable=False),
        sa.Column("overlap_correct", sa.Boolean(), nullable=False),
        sa.Column("matching_words", sa.Integer(), nullable=False),
        sa.Column("total_golden_words", sa.Integer(), nullable=False),
        sa.Column("is_blank", sa.Boolean(), nullable=False),
        sa.Column("bucket", sa.String(20), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_rows_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "row_idx", name="pk_run_rows"),
    )
    op.create_index("ix_run_rows_item_key", "run_rows", ["item_key"])
    op.create_index("ix_run_rows_run_bucket", "run_rows", ["run_id", "bucket"])


def upgrade() -> None:
    """Idempotent, like 0002: a database whose tables were made by ``create_all`` at this schema
    but never stamped already has ``run_parts`` and no ``run_rows``."""
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    if "run_parts" not in tables:
        _create_run_parts()
    if "run_rows" in tables:
        _convert_run_rows()
        op.drop_table("run_rows")


def _create_run_parts() -> None:
    op.create_table(
        "run_parts",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("part", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_parts_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "part", name="pk_run_parts"),
    )


def _convert_run_rows() -> None:
    conn = op.get_bind()
    for run_id, extra_json in conn.execute(sa.select(runs.c.id, runs.c.extra_columns)).all():
        extra_columns = json.loads(extra_json or "[]")
        found = conn.execute(
            sa.select(*(run_rows.c[name] for name in ROW_FIELDS), run_rows.c.extra)
            .where(run_rows.c.run_id == run_id)
            .order_by(run_rows.c.row_idx)
        ).all()
        table = pl.DataFrame([row[:-1] for row in found], schema=SCHEMA, orient="row").select(STORED_COLUMNS)
        extras = [json.loads(row[-1] or "{}") for row in found]
        table = table.with_columns(
            pl.Series(EXTRA_PREFIX + name, [e.get(name, "") for e in extras], dtype=pl.String) for name in extra_columns
        )
        parts = to_parts(table)
        if found:
            conn.execute(sa.insert(run_parts), [{"run_id": run_id, "part": i, "data": d} for i, d in enumerate(parts)])


def downgrade() -> None:
    _create_run_rows()
    conn = op.get_bind()
    for run_id, extra_json in conn.execute(sa.select(runs.c.id, runs.c.extra_columns)).all():
        extra_columns = json.loads(extra_json or "[]")
        data = (
            conn.execute(sa.select(run_parts.c.data).where(run_parts.c.run_id == run_id).order_by(run_parts.c.part))
            .scalars()
            .all()
        )
        if not data:
            continue
        table = from_parts(data)
        records = []
        for idx, row in enumerate(table.iter_rows(named=True)):
            record = {name: row["Domain" if name == "domain" else name] for name in ROW_FIELDS}
            extra = {name: row[EXTRA_PREFIX + name] for name in extra_columns}
            records.append({**record, "run_id": run_id, "row_idx": idx, "extra": json.dumps(extra, ensure_ascii=False)})
        conn.execute(sa.insert(run_rows), records)
    op.drop_table("run_parts")
