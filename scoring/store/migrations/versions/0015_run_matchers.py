"""Which optional matchers a team switched on per run: ``run_matchers`` (one row per run).

The Matchers page saves the chosen set; the matchers report (page and ``python -m scoring
matchers``) shows it by default. Existing runs have no row and show every matcher, as before.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the table."""
    if "run_matchers" in set(sa.inspect(op.get_bind()).get_table_names()):
        return
    op.create_table(
        "run_matchers",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("matchers", sa.Text(), nullable=False),
        sa.Column("chosen_by", sa.String(200), nullable=False),
        sa.Column("chosen_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_matchers_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", name="pk_run_matchers"),
    )


def downgrade() -> None:
    """Every run shows every matcher again."""
    op.drop_table("run_matchers")
