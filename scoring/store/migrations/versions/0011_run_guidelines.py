"""Review guidelines of a run (issue 27): ``run_guidelines``, append-only (the latest row of a run
is in force), and ``guideline_reads``, which version each reviewer has been shown opened (so later
visits show it collapsed). Existing runs have none.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent, like the revisions before it: ``create_all`` at this schema made the tables."""
    have = set(sa.inspect(op.get_bind()).get_table_names())
    if "run_guidelines" not in have:
        op.create_table(
            "run_guidelines",
            sa.Column("id", sa.Integer(), nullable=False),
            sa.Column("run_id", sa.Integer(), nullable=False),
            sa.Column("text", sa.Text(), nullable=False),
            sa.Column("written_by", sa.String(200), nullable=False),
            sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
            sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_guidelines_run_id_runs", ondelete="CASCADE"),
            sa.PrimaryKeyConstraint("id", name="pk_run_guidelines"),
        )
        op.create_index("ix_run_guidelines_run_id", "run_guidelines", ["run_id"])
    if "guideline_reads" not in have:
        op.create_table(
            "guideline_reads",
            sa.Column("guidelines_id", sa.Integer(), nullable=False),
            sa.Column("reader", sa.String(200), nullable=False),
            sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
            sa.ForeignKeyConstraint(
                ["guidelines_id"],
                ["run_guidelines.id"],
                name="fk_guideline_reads_guidelines_id_run_guidelines",
                ondelete="CASCADE",
            ),
            sa.PrimaryKeyConstraint("guidelines_id", "reader", name="pk_guideline_reads"),
        )


def downgrade() -> None:
    """Drops both tables: the guidelines written and who has read them are lost."""
    op.drop_table("guideline_reads")
    op.drop_table("run_guidelines")
