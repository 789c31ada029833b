"""Double-blind scopes narrower than a bucket: a domain, and the queue's random sample.

``blind_scopes`` gains ``domain`` ("" = every domain) and ``sample`` (0 = every row; k = the
queue's reproducible sample of k rows) in its key. The table is small (a few rows per run), so it
is rebuilt: rows read, table dropped, recreated, rows written back (renaming it instead would
leave PostgreSQL's primary-key index name taken).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

KEEP = ("run_id", "bucket", "created_by", "created_at")


def _columns() -> set[str]:
    return {c["name"] for c in sa.inspect(op.get_bind()).get_columns("blind_scopes")}


def _rows(narrow: bool = False) -> list[dict]:
    """The scopes as typed rows (SQLite hands back text for a raw datetime column)."""
    old = sa.table(
        "blind_scopes",
        sa.column("run_id", sa.Integer()),
        sa.column("bucket", sa.String()),
        sa.column("created_by", sa.String()),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("domain", sa.String()),
        sa.column("sample", sa.Integer()),
    )
    query = sa.select(*(old.c[name] for name in KEEP))
    if narrow:
        query = query.where(old.c.domain == "", old.c.sample == 0)
    return [dict(row._mapping) for row in op.get_bind().execute(query)]


def _create(extra: list[sa.Column], key: list[str]) -> sa.Table:
    return op.create_table(
        "blind_scopes",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("bucket", sa.String(20), nullable=False),
        *extra,
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_blind_scopes_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint(*key, name="pk_blind_scopes"),
    )


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the columns."""
    if "domain" in _columns():
        return
    rows = _rows()
    op.drop_table("blind_scopes")
    extra = [sa.Column("domain", sa.String(200), nullable=False), sa.Column("sample", sa.Integer(), nullable=False)]
    table = _create(extra, ["run_id", "bucket", "domain", "sample"])
    if rows:
        op.bulk_insert(table, [{**row, "domain": "", "sample": 0} for row in rows])


def downgrade() -> None:
    """Only scopes of a whole bucket or run survive: the older schema cannot hold the others."""
    rows = _rows(narrow=True)
    op.drop_table("blind_scopes")
    table = _create([], ["run_id", "bucket"])
    if rows:
        op.bulk_insert(table, rows)
