"""A run's review guidelines (issue 27) and which version each reviewer has been shown.

Append-only like :mod:`scoring.store.judge_choice`: every save is a new row, the latest row of a
run is in force (an empty text clears them), so what reviewers were told, by whom and when stays
readable. Whether a reviewer has seen a version lives here too (``guideline_reads``), not in the
session: a refresh or another device would otherwise show the same text opened again. Who may
write them is the caller's check (:mod:`scoring.review.guidelines`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, func, insert, select
from sqlalchemy.exc import IntegrityError

from scoring.core.verdict_rules import check_reviewer
from scoring.store.engine import writer
from scoring.store.orm_tables import GuidelinesRead, Run, RunGuidelines, utcnow

#: Longest guidelines accepted (characters): pages of instructions, not a document store.
MAX_CHARS = 20_000


@dataclass(frozen=True)
class Guidelines:
    """One saved version of a run's guidelines; ``id`` names the version (reads refer to it)."""

    id: int
    run_id: int
    text: str
    written_by: str
    written_at: datetime


def check_text(text: str | None) -> str:
    """The text as stored: line endings made ``\\n``, surrounding blank space removed; too long
    raises ValueError with a one-line message (nothing is cut silently)."""
    clean = (text or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    if len(clean) > MAX_CHARS:
        raise ValueError(
            f"The guidelines are too long: {len(clean):,} characters, at most {MAX_CHARS:,}. "
            "Shorten them or link to a longer document."
        )
    return clean


def _from_row(row) -> Guidelines:
    return Guidelines(int(row.id), int(row.run_id), str(row.text), str(row.written_by), row.written_at)


def current(engine: Engine, run_id: int) -> Guidelines | None:
    """The run's guidelines in force; None when none were written or the latest save cleared them."""
    with engine.connect() as conn:
        row = conn.execute(
            select(RunGuidelines).where(RunGuidelines.run_id == run_id).order_by(RunGuidelines.id.desc()).limit(1)
        ).first()
    return _from_row(row) if row is not None and row.text else None


def save(engine: Engine, run_id: int, text: str, by: str) -> Guidelines | None:
    """Append a version (committed before returning); an empty text clears the guidelines (None)."""
    name, clean, now = check_reviewer(by), check_text(text), utcnow()
    with writer(engine).begin() as conn:
        new_id = conn.execute(
            insert(RunGuidelines).values(run_id=run_id, text=clean, written_by=name, written_at=now)
        ).inserted_primary_key[0]
    return Guidelines(int(new_id), run_id, clean, name, now) if clean else None


def latest_elsewhere(engine: Engine, run_id: int) -> tuple[Guidelines, str] | None:
    """The most recently written guidelines in force on another (complete) run, with that run's
    name: what "reuse the last run's guidelines" copies. None when no other run has any."""
    latest = select(func.max(RunGuidelines.id)).where(RunGuidelines.run_id != run_id).group_by(RunGuidelines.run_id)
    with engine.connect() as conn:
        row = conn.execute(
            select(RunGuidelines, Run.name.label("run_name"))
            .join(Run, Run.id == RunGuidelines.run_id)
            .where(RunGuidelines.id.in_(latest), RunGuidelines.text != "", Run.complete.is_(True))
            .order_by(RunGuidelines.id.desc())
            .limit(1)
        ).first()
    return (_from_row(row), str(row.run_name)) if row is not None else None


def reader_key(name: str) -> str:
    """A reviewer as the read marks store them: compared ignoring case and surrounding spaces, as
    the role lists compare names (identity providers differ in the case of emails)."""
    return check_reviewer(name).casefold()


def has_read(engine: Engine, guidelines_id: int, reader: str) -> bool:
    """Whether ``reader`` has been shown this version of the guidelines opened."""
    with engine.connect() as conn:
        found = conn.execute(
            select(GuidelinesRead.reader).where(
                GuidelinesRead.guidelines_id == guidelines_id, GuidelinesRead.reader == reader_key(reader)
            )
        ).first()
    return found is not None


def mark_read(engine: Engine, guidelines_id: int, reader: str, busy_ms: int | None = None) -> bool:
    """Remember that ``reader`` has been shown this version; False when it was already remembered
    (two tabs at once: the key refuses the second, which is the same fact). ``busy_ms`` bounds the
    wait for the write lock (:func:`scoring.store.engine.writer`)."""
    try:
        with writer(engine, busy_ms).begin() as conn:
            conn.execute(
                insert(GuidelinesRead).values(guidelines_id=guidelines_id, reader=reader_key(reader), read_at=utcnow())
            )
    except IntegrityError:
        return False
    return True
