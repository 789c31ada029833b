"""Where a run's row languages came from: ``runs.language_source``.

Nullable text: ``column:<field>`` (the file's language column), ``metadata`` (a harness log's
sample metadata), ``run`` (the run's language) or ``script`` (each row's script, named as a
script); see :mod:`scoring.core.row_language`. Rows stored since this revision carry a
``language`` column in their Parquet file. Existing runs get NULL: their rows have no such column,
and reading them fills it (an input column named ``language`` or ``lang``, else the run's
language, else the script), so every reader sees one either way.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the column."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}
    # Plain ALTER TABLE (see 0006, 0010): a batch copy of ``runs`` on SQLite would drop the table,
    # and its parts with it through ON DELETE CASCADE. A nullable column needs no default.
    if "language_source" not in have:
        op.add_column("runs", sa.Column("language_source", sa.String(300), nullable=True))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): the stored rows keep their
    ``language`` column (older code reads the columns it knows), only the source is lost."""
    op.drop_column("runs", "language_source")
