"""Which runs are the bundled samples: ``runs.sample``.

A boolean, false for every run a person uploads; true for the runs the tool itself loaded from
``sample_data/`` (:mod:`scoring.ingest.load_samples`). Every run list and table leaves samples out
once the database holds a run of the team's own (:func:`scoring.store.samples.shown_runs`), and one
action removes them all. Until now a sample was known by its bytes alone, which a new version of a
sample file would have forgotten; the flag keeps what the tool loaded a sample for good.

Existing databases: runs whose bytes are a bundled sample file, in any version the project has
shipped (:data:`SHIPPED`, frozen here as a migration must be) or as ``sample_data/`` holds it now,
are marked.

Named 0018 because issue 37's other work may add a 0017; it revises 0016 until then.

Revision ID: 0018
Revises: 0016
Create Date: 2026-12-10
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

#: The sha256 of every version of the bundled sample files up to this revision (``git log`` of
#: ``sample_data/``): sample_run.csv (three versions), sample_run_model_b.csv (two: issue 37 gave
#: both mixed files a language column), hindi_model_a.csv, hindi_model_b.csv.
SHIPPED = (
    "7d72868f8b678ca70afd03f5fa96ac5b8bfd4754f21c8133c147ee8f5164f52c",
    "65dba6932a3bf4d133537ecbf973f9a6b9c3b4ac90fe57e135e398839367f336",
    "13766a08b88d193f5c017abb27625f4152f7c9c28becd97b7d719d3ad690854f",
    "40bebc2952e1ce20612ab4df3254cd939aa28c548790b90dd2be2661414d4530",
    "7bde5e6e073835415497fbbf744a82e5380dac8d2a3739c45bd3cebb6e8eb284",
    "f8249fb3011194d2dbc7472fa8a38b015112ea16e32a983890b6d5f377a968a3",
    "aa43df084066f0d2f320e8d872acf98e9d2b4942656e9d767ce0aa3f016c8203",
)


#: The bundled files as this checkout holds them (a later version of a file is a sample too).
SAMPLE_DIR = Path(__file__).resolve().parents[4] / "sample_data"


def _sample_hashes() -> list[str]:
    now = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(SAMPLE_DIR.glob("*.csv"))]
    return sorted({*SHIPPED, *now})


def upgrade() -> None:
    """Idempotent: a database made by ``create_all`` at this schema already has the column."""
    have = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("runs")}
    # Plain ALTER TABLE (see 0006, 0010, 0013): no batch copy of ``runs``.
    if "sample" not in have:
        op.add_column("runs", sa.Column("sample", sa.Boolean(), nullable=False, server_default=sa.false()))
    runs = sa.table("runs", sa.column("sha256", sa.String), sa.column("sample", sa.Boolean))
    op.execute(runs.update().where(runs.c.sha256.in_(_sample_hashes())).values(sample=True))


def downgrade() -> None:
    """ALTER TABLE ... DROP COLUMN (SQLite 3.35 and later): samples are known by their bytes again."""
    op.drop_column("runs", "sample")
