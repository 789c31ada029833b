"""Each run's review seed: the queue orders every scope by a seeded random permutation.

``runs.review_seed`` (integer). Existing runs get the seed a new upload of the same file gets
(:func:`scoring.core.order.seed_from_sha`, restated here so the migration never changes).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def _seed(sha: str) -> int:
    try:
        return int(sha[:8], 16) & 0x7FFFFFFF
    except ValueError:  # an abandoned upload's placeholder; it is removed anyway
        return 0


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the column."""
    bind = op.get_bind()
    if "review_seed" in {c["name"] for c in sa.inspect(bind).get_columns("runs")}:
        return
    # Plain ALTER TABLE on both engines: a batch (copy-and-move) of ``runs`` on SQLite would drop
    # the table, and its rows' parts and verdict scopes with it through ON DELETE CASCADE.
    op.add_column("runs", sa.Column("review_seed", sa.Integer(), nullable=False, server_default="0"))
    runs = sa.table(
        "runs", sa.column("id", sa.Integer()), sa.column("sha256", sa.String()), sa.column("review_seed", sa.Integer())
    )
    for run_id, sha in bind.execute(sa.select(runs.c.id, runs.c.sha256)).all():
        bind.execute(sa.update(runs).where(runs.c.id == run_id).values(review_seed=_seed(str(sha))))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later), for the reason given in upgrade."""
    op.drop_column("runs", "review_seed")
