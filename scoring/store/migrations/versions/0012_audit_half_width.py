"""The review plan's half-width, kept with its audit scope: ``audit_rows.half_width``.

Nullable float (a share: 0.05 is +-5 points), the same on every row of a run's scope: the planner
offers it again in any session, so the plan in force and the planner agree after a refresh.
Existing scopes get NULL: the planner then starts from its +-5-point pilot, as for a new run.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the column."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("audit_rows")}
    # Plain ALTER TABLE (see 0006, 0010): a nullable column needs no default and no table copy.
    if "half_width" not in have:
        op.add_column("audit_rows", sa.Column("half_width", sa.Double(), nullable=True))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): the scopes' rows stay, their half-width
    is lost (the planner falls back to its pilot)."""
    op.drop_column("audit_rows", "half_width")
