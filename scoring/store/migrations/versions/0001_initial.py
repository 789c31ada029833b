"""The schema as the project made it before migrations (2026-11-30): runs, their rows, the
reviewers' verdict log and the judge's verdicts.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("language", sa.String(100), nullable=False),
        sa.Column("filename", sa.String(300), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("uploaded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("extra_columns", sa.Text(), nullable=False),
        sa.Column("complete", sa.Boolean(), server_default=sa.true(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.UniqueConstraint("sha256", name="uq_runs_sha256"),
    )
    op.create_table(
        "run_rows",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("row_idx", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("domain", sa.Text(), nullable=False),
        sa.Column("response", sa.Text(), nullable=False),
        sa.Column("extra", sa.Text(), nullable=False),
        sa.Column("exact_correct", sa.Boolean(), nullable=False),
        sa.Column("overlap_correct", sa.Boolean(), nullable=False),
        sa.Column("matching_words", sa.Integer(), nullable=False),
        sa.Column("total_golden_words", sa.Integer(), nullable=False),
        sa.Column("is_blank", sa.Boolean(), nullable=False),
        sa.Column("bucket", sa.String(20), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_run_rows_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "row_idx", name="pk_run_rows"),
    )
    op.create_index("ix_run_rows_item_key", "run_rows", ["item_key"])
    op.create_index("ix_run_rows_run_bucket", "run_rows", ["run_id", "bucket"])
    op.create_table(
        "verdict_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("action", sa.String(10), nullable=False),
        sa.Column("verdict", sa.String(10), nullable=True),
        sa.Column("reason", sa.String(40), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("undoes", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_verdict_events"),
    )
    op.create_index("ix_verdict_events_item_key", "verdict_events", ["item_key"])
    op.create_index("ix_verdict_events_reviewer", "verdict_events", ["reviewer"])
    op.create_index("ux_verdict_events_undoes", "verdict_events", ["undoes"], unique=True)
    op.create_table(
        "judge_verdicts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cache_key", sa.String(64), nullable=False),
        sa.Column("item_key", sa.String(64), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("prompt_version", sa.String(40), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("label", sa.String(20), nullable=False),
        sa.Column("raw", sa.Text(), nullable=False),
        sa.Column("error_class", sa.String(100), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=True),
        sa.Column("completion_tokens", sa.Integer(), nullable=True),
        sa.Column("system_fingerprint", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_judge_verdicts"),
    )
    op.create_index("ix_judge_verdicts_cache_key", "judge_verdicts", ["cache_key"])
    op.create_index("ix_judge_verdicts_item_key", "judge_verdicts", ["item_key"])
    op.create_index("ix_judge_verdicts_model_version", "judge_verdicts", ["model", "prompt_version"])


def downgrade() -> None:
    for table in ("judge_verdicts", "verdict_events", "run_rows", "runs"):
        op.drop_table(table)
