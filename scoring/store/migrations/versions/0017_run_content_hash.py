"""Runs of a file holding several models, and the same rows recognised in another encoding or
order: ``runs.file_sha256`` and ``runs.content_sha256``.

Both nullable. ``file_sha256`` is the uploaded file's sha256 for a run that is one model's rows of
a file holding several (each such run's own ``sha256`` is derived from the file's and the model,
so it stays unique); NULL when ``sha256`` is the file's, as for every existing run.
``content_sha256`` is the sha256 of the run's rows as read (:mod:`scoring.core.content_hash`);
existing runs get NULL and are hashed from their stored rows when an upload of as many rows looks
for a run with the same content.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-09
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the columns."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}
    # Plain ALTER TABLE (see 0006, 0010, 0013): a batch copy of ``runs`` on SQLite would drop the
    # table, and its parts with it through ON DELETE CASCADE. Nullable columns need no default.
    for name in ("file_sha256", "content_sha256"):
        if name not in have:
            op.add_column("runs", sa.Column(name, sa.String(64), nullable=True))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later). Every run and its rows stay; a run of
    one model of a several-model file keeps its own ``sha256`` (older code opens it for no
    upload, as its bytes are no file's), and re-uploads are told apart by their bytes only."""
    op.drop_column("runs", "content_sha256")
    op.drop_column("runs", "file_sha256")
