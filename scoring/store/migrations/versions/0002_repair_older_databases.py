"""What databases made before migrations may lack: the unique index on ``verdict_events.undoes``
(a mark can be undone once only) and ``runs.complete`` (uploads written in short transactions).

``create_all`` never altered an existing table, so a database made before either was added
lacks it. Each step checks first, so the revision is a no-op on databases that have both.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "complete" not in {c["name"] for c in inspector.get_columns("runs")}:
        op.add_column("runs", sa.Column("complete", sa.Boolean(), server_default=sa.true(), nullable=False))
    if "ux_verdict_events_undoes" not in {i["name"] for i in inspector.get_indexes("verdict_events")}:
        op.create_index("ux_verdict_events_undoes", "verdict_events", ["undoes"], unique=True)


def downgrade() -> None:
    """Nothing: 0001 already declares both."""
