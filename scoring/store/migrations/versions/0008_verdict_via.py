"""Where a reviewer's action was given: ``verdict_events.via``.

``queue`` for a row the queue served in its seeded order, ``opened`` for a row opened on purpose
(from Compare, Agreement, My verdicts, a ``?row=`` link), ``restored`` for a mark read back from an
export. The estimate counts only a prefix of each stratum's review order as its random sample, and
the queue's marks and skips are what say how far that prefix reaches (:mod:`scoring.estimate.sample`).
Events written before this revision keep NULL, read as ``queue``: a row opened by hand long ago then
stretches the prefix, which widens the interval (its skipped rows are missing data) but never
biases it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the column."""
    if "via" in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("verdict_events")}:
        return
    # Plain ALTER TABLE (see 0006): a nullable column needs no batch copy on SQLite.
    op.add_column("verdict_events", sa.Column("via", sa.String(10), nullable=True))


def downgrade() -> None:
    op.drop_column("verdict_events", "via")
