"""Double-blind review: ``claims`` (who holds which item, until when) and ``blind_scopes`` (which
runs or buckets are reviewed double-blind).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent, like 0002 and 0003 (a database made by ``create_all`` at this schema)."""
    tables = set(sa.inspect(op.get_bind()).get_table_names())
    if "claims" not in tables:
        _create_claims()
    if "blind_scopes" not in tables:
        _create_blind_scopes()


def _create_claims() -> None:
    op.create_table(
        "claims",
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("item_key", name="pk_claims"),
    )


def _create_blind_scopes() -> None:
    op.create_table(
        "blind_scopes",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("bucket", sa.String(20), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_blind_scopes_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "bucket", name="pk_blind_scopes"),
    )


def downgrade() -> None:
    op.drop_table("blind_scopes")
    op.drop_table("claims")
