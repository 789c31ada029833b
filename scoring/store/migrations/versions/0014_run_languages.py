"""Which languages a run's rows hold: ``runs.languages``.

Nullable text, the JSON list of the distinct row languages at upload, sorted
(:mod:`scoring.core.row_language`): what a run list and a command print for a run whose rows hold
several languages ("English, Hindi, Tamil") without reading its rows. Existing runs get NULL and
are named by the run's own language, as before.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the column."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}
    # Plain ALTER TABLE (see 0006, 0010, 0013): no batch copy of ``runs``, no default needed.
    if "languages" not in have:
        op.add_column("runs", sa.Column("languages", sa.Text(), nullable=True))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): runs are named by their own language."""
    op.drop_column("runs", "languages")
