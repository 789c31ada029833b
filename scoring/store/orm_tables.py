"""The database schema: runs, their rows, reviewers' verdict history, each run's review guidelines.

Judge verdicts live in :mod:`scoring.store.judge_cache`; importing this module registers every table.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, LargeBinary, String, Text, false, true
from sqlalchemy.orm import Mapped, mapped_column

from scoring.store.engine import Base


def utcnow() -> datetime:
    return datetime.now(UTC)


class Run(Base):
    """One uploaded responses file; re-uploading the same bytes finds it by sha256.

    ``complete`` is False while an upload is still writing its rows (in short transactions, see
    :func:`scoring.store.runs.insert_run`); such a run is invisible to every reader until its last row
    is in. Runs that existed before the column get True (the server default).
    """

    __tablename__ = "runs"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    model: Mapped[str] = mapped_column(String(200), default="")
    language: Mapped[str] = mapped_column(String(100), default="")
    filename: Mapped[str] = mapped_column(String(300), default="")
    sha256: Mapped[str] = mapped_column(String(64), unique=True)
    uploaded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    n_rows: Mapped[int] = mapped_column(Integer, default=0)
    extra_columns: Mapped[str] = mapped_column(Text, default="[]")  # JSON list, input order
    complete: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # The queue's order within any scope is a random permutation seeded by this (see
    # scoring.core.order): a reviewed prefix is a simple random sample of the scope.
    review_seed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Set when the run is archived (it leaves the run list and every page's choices; its verdicts
    # stay, they belong to items); NULL for a listed run. Revision 0010.
    archived_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # JSON of the column mapping the upload was read with ({"answer": "target", ...}); NULL when
    # the file's own headers were used. Revision 0010.
    column_map: Mapped[str | None] = mapped_column(Text, nullable=True)
    # Where the rows' languages came from: "column:<field>", "metadata", "run" or "script"
    # (scoring.core.row_language); NULL for runs stored before rows had a language. Revision 0013.
    language_source: Mapped[str | None] = mapped_column(String(300), nullable=True)
    # JSON list of the distinct row languages at upload, sorted (what a run list names a mixed
    # run by); NULL for runs stored before. Revision 0014.
    languages: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The sha256 of the uploaded file's bytes when ``sha256`` is not it (a file holding several
    # models is one run per model, each with its own ``sha256``); NULL: ``sha256`` is the file's.
    # Revision 0017.
    file_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The sha256 of the run's rows as read, whatever the file's encoding or order
    # (scoring.core.content_hash): a re-upload of the same rows opens this run. NULL for runs
    # stored before, filled when an upload of as many rows looks for its match. Revision 0017.
    content_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # True for a bundled sample the tool loaded (scoring.ingest.load_samples), false for every
    # upload: the one mark every run list and table hides samples by. Revision 0018.
    sample: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class RunPart(Base):
    """A part of a run's scored rows, stored as one Parquet file cut into parts (see
    :mod:`scoring.store.run_table`). Written once at upload, never changed."""

    __tablename__ = "run_parts"
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    part: Mapped[int] = mapped_column(Integer, primary_key=True)
    data: Mapped[bytes] = mapped_column(LargeBinary)


class VerdictEvent(Base):
    """Append-only history of reviewers' actions; current verdicts are derived from it.

    ``action`` is ``mark`` (with ``verdict`` correct/wrong), ``skip``, or ``undo`` (pointing at
    the mark it retracts through ``undoes``). Nothing is ever updated or deleted.
    """

    __tablename__ = "verdict_events"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    item_key: Mapped[str] = mapped_column(String(64), index=True)
    run_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    reviewer: Mapped[str] = mapped_column(String(200), index=True)
    action: Mapped[str] = mapped_column(String(10))
    verdict: Mapped[str | None] = mapped_column(String(10), nullable=True)
    reason: Mapped[str] = mapped_column(String(40), default="")
    note: Mapped[str] = mapped_column(Text, default="")
    undoes: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # How the row reached the reviewer: "queue" (served in review order), "opened" (on purpose,
    # from another page or a link), "restored" (from an export); NULL before revision 0008 = queue.
    via: Mapped[str | None] = mapped_column(String(10), nullable=True)

    # A mark can be retracted once only: two concurrent undos picking the same mark cannot both
    # be written (the loser retries with the next mark). NULLs (marks, skips) never collide.
    __table_args__ = (Index("ux_verdict_events_undoes", "undoes", unique=True),)


class Claim(Base):
    """Double-blind review: a reviewer holds an item for a while so nobody else takes that turn.

    One live claim per item at most (the key). A claim is live until ``expires_at`` and while its
    reviewer has not marked the item; an expired or fulfilled claim is taken over by the next
    reviewer who asks (see :mod:`scoring.store.claim_table`).
    """

    __tablename__ = "claims"
    item_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    run_id: Mapped[int] = mapped_column(Integer)
    reviewer: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class BlindScope(Base):
    """A scope of a run under double-blind review: each item goes to two different reviewers,
    neither seeing the other's verdict nor the metrics' or the judge's.

    A scope is the queue's: a bucket ("" = all), a domain ("" = all) and a sample size (0 = every
    row; k = the queue's reproducible random sample of k rows of that bucket and domain).
    """

    __tablename__ = "blind_scopes"
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    bucket: Mapped[str] = mapped_column(String(20), primary_key=True, default="")  # "" = every bucket
    domain: Mapped[str] = mapped_column(String(200), primary_key=True, default="")  # "" = every domain
    sample: Mapped[int] = mapped_column(Integer, primary_key=True, default=0)  # 0 = every row
    created_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AuditRow(Base):
    """A row the review planner chose for the run's "audit" scope (the queue offers it as a
    scope like a bucket): the rows whose review narrows the true-accuracy estimate the most.
    Each row also carries who planned the scope and for which half-width."""

    __tablename__ = "audit_rows"
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    item_key: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_by: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The interval half-width (a share, 0.05 = +-5 points) the plan was made for, the same on every
    # row of the scope: the planner offers it again, in any session. NULL before revision 0012.
    half_width: Mapped[float | None] = mapped_column(nullable=True)


class JudgeChoice(Base):
    """Which judge configuration (model, prompt version) a run's estimate uses, chosen on the
    Judge page after comparing configurations with the human verdicts. Append-only like the
    verdict log: the latest row of a run is in force (who chose what, and when, stays readable);
    a row with an empty model puts the default back (the latest label of any configuration), as
    does a run without rows."""

    __tablename__ = "judge_choices"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    model: Mapped[str] = mapped_column(String(200), default="")  # "" = back to the default
    prompt_version: Mapped[str] = mapped_column(String(40), default="")
    chosen_by: Mapped[str] = mapped_column(String(200), default="")
    chosen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RunMatchers(Base):
    """Which optional matchers (:mod:`scoring.match`) a team switched on for a run, set on the
    Matchers page: the set the matchers report shows by default. One row per run, replaced when
    saved; no row: every matcher (as before the choice existed)."""

    __tablename__ = "run_matchers"
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    matchers: Mapped[str] = mapped_column(Text, default="")  # comma-separated names; "" = none on
    chosen_by: Mapped[str] = mapped_column(String(200), default="")
    chosen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RunGuidelines(Base):
    """The review guidelines of a run, written by an adjudicator and shown to every reviewer above
    the queue (plain text). Append-only like ``judge_choices``: the latest row of a run is in force
    (an empty text clears them); earlier versions, who wrote them and when, stay readable.
    Revision 0011."""

    __tablename__ = "run_guidelines"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text, default="")
    written_by: Mapped[str] = mapped_column(String(200), default="")
    written_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class GuidelinesRead(Base):
    """A reviewer has been shown one version of a run's guidelines (opened, the first time): later
    visits show them collapsed, on any device, until a new version is saved. ``reader`` is the
    name as roles compare it (stripped, case-folded). Revision 0011."""

    __tablename__ = "guideline_reads"
    guidelines_id: Mapped[int] = mapped_column(ForeignKey("run_guidelines.id", ondelete="CASCADE"), primary_key=True)
    reader: Mapped[str] = mapped_column(String(200), primary_key=True)
    read_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ReaderLanguage(Base):
    """A language a reviewer reads (one row per reviewer and language): in team review a reviewer
    with any row here is handed only rows in those languages (:mod:`scoring.review.reader_languages`);
    none, any row. Kept per reviewer name as marks are saved under it. Revision 0016."""

    __tablename__ = "reader_languages"
    reviewer: Mapped[str] = mapped_column(String(200), primary_key=True)
    language: Mapped[str] = mapped_column(String(100), primary_key=True)
    set_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
