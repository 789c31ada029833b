"""The review planner's audit scope: ``audit_rows`` (run, item key).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent, like the revisions before it."""
    if "audit_rows" in set(sa.inspect(op.get_bind()).get_table_names()):
        return
    op.create_table(
        "audit_rows",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_audit_rows_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "item_key", name="pk_audit_rows"),
    )


def downgrade() -> None:
    op.drop_table("audit_rows")
