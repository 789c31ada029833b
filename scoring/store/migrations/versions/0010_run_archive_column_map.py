"""Runs a team can tidy, and a run's column mapping: ``runs.archived_at`` and ``runs.column_map``.

``archived_at`` (nullable timestamp): set when a run is archived, NULL for a run in the run list;
an archived run leaves every page's choices and its verdicts stay (they belong to items).
``column_map`` (nullable text): the JSON of the column mapping an upload was read with (which of the
file's fields is the question, golden answer, response and domain); NULL when none was needed.
Existing runs get NULL for both: listed, no mapping.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the columns."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}
    # Plain ALTER TABLE (see 0006): a batch copy of ``runs`` on SQLite would drop the table, and its
    # parts and scopes with it through ON DELETE CASCADE. Nullable columns need no default.
    if "archived_at" not in have:
        op.add_column("runs", sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))
    if "column_map" not in have:
        op.add_column("runs", sa.Column("column_map", sa.Text(), nullable=True))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): archived runs are listed again and the
    stored mappings are lost; nothing else changes."""
    op.drop_column("runs", "column_map")
    op.drop_column("runs", "archived_at")
