"""The judge configuration a run's estimate uses: ``judge_choices``, append-only (the latest row
of a run is in force).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent, like the revisions before it."""
    if "judge_choices" in set(sa.inspect(op.get_bind()).get_table_names()):
        return
    op.create_table(
        "judge_choices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("prompt_version", sa.String(40), nullable=False),
        sa.Column("chosen_by", sa.String(200), nullable=False),
        sa.Column("chosen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_judge_choices_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name="pk_judge_choices"),
    )
    op.create_index("ix_judge_choices_run_id", "judge_choices", ["run_id"])


def downgrade() -> None:
    op.drop_table("judge_choices")
