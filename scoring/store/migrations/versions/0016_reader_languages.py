"""The languages each reviewer reads: ``reader_languages`` (one row per reviewer and language).

In team review a reviewer who set languages is handed only rows in them; existing reviewers have
no row and are handed any row, as before.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the table."""
    if "reader_languages" in set(sa.inspect(op.get_bind()).get_table_names()):
        return
    op.create_table(
        "reader_languages",
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("language", sa.String(100), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("reviewer", "language", name="pk_reader_languages"),
    )


def downgrade() -> None:
    """Every reviewer is handed any row again."""
    op.drop_table("reader_languages")
