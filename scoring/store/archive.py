"""Runs a team can tidy (issue 19): archive a run, restore it, delete it for good.

An archived run (``Run.archived_at`` set) leaves the run list and every page's choices
(:func:`listed_runs` is what the pages offer) but keeps everything: its rows, its scopes, its
audit plan and judge choice; restoring it puts it back as it was. Verdicts are never touched by
either, nor by deleting: they belong to items (the item key), live in the append-only verdict
log, and apply to any run holding the same rows, so they carry over to a new upload of the file.

Deleting for good (only an archived run, so it always takes two separate steps) removes the run's
rows, its name and file details, its double-blind scopes, audit plan, judge choice, review
guidelines, column mapping and live claims. The run is hidden at once (in the same transaction that
drops its scopes), then its parts go in short transactions, newest first, so no reader sees half a
run and no reviewer waits on the write lock. Its ``runs`` row stays as an empty placeholder that keeps the
id taken: SQLite gives the highest free id to the next insert, and a new upload under a deleted
run's id would inherit what is keyed by run id outside the run (the verdict log's ``run_id``,
which says which rows the queue served and scopes an undo, and every server's per-run caches). The
placeholder looks like an upload still writing its rows (``complete`` False, so no reader sees it)
with a sha256 no file has, dated :data:`PLACEHOLDER_DATE` so the clean-up of abandoned uploads
(:func:`scoring.store.runs._remove_abandoned`) leaves it alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, delete, func, select, update
from sqlalchemy.orm import Session

from scoring.core.errors import InputError
from scoring.store.chunked import pause
from scoring.store.engine import writer
from scoring.store.orm_tables import (
    AuditRow,
    BlindScope,
    Claim,
    GuidelinesRead,
    JudgeChoice,
    Run,
    RunGuidelines,
    RunMatchers,
    VerdictEvent,
    utcnow,
)
from scoring.store.run_table import delete_parts_from, highest_part
from scoring.store.runs import REMOVE_PARTS, RunInfo, run_info, select_visible_runs

#: A deleted run's placeholder row is dated this, far after any real upload (see the module docstring).
PLACEHOLDER_DATE = datetime(9999, 1, 1, tzinfo=UTC)


class UnknownRun(InputError):
    """No (complete) run with that id; the message names it."""


@dataclass(frozen=True)
class ArchivedRun:
    run: RunInfo
    archived_at: datetime


@dataclass(frozen=True)
class DeleteSummary:
    """What deleting a run for good loses (``rows``, ``parts``) and what stays (``log_events``:
    the verdicts, skips, undos and decisions given in this run, which stay in the verdict log)."""

    run: RunInfo
    rows: int
    parts: int
    log_events: int


def _newest_first(query):
    return query.order_by(Run.uploaded_at.desc(), Run.id.desc())


def listed_runs(engine: Engine) -> list[RunInfo]:
    """The run list: complete runs not archived, newest first (what every page offers)."""
    with Session(engine) as session:
        query = _newest_first(select_visible_runs().where(Run.archived_at.is_(None)))
        return [run_info(r) for r in session.scalars(query)]


def archived_runs(engine: Engine) -> list[ArchivedRun]:
    """The archived runs, most recently archived first."""
    query = select_visible_runs().where(Run.archived_at.is_not(None)).order_by(Run.archived_at.desc(), Run.id.desc())
    with Session(engine) as session:
        return [ArchivedRun(run_info(r), r.archived_at) for r in session.scalars(query)]


def all_runs(engine: Engine, archived: bool | None = None) -> list[tuple[RunInfo, datetime | None]]:
    """Complete runs newest first with when each was archived (None: listed). ``archived``:
    True for the archived only, False for the listed only, None for both."""
    query = select_visible_runs()
    if archived is not None:
        query = query.where(Run.archived_at.is_not(None) if archived else Run.archived_at.is_(None))
    with Session(engine) as session:
        return [(run_info(r), r.archived_at) for r in session.scalars(_newest_first(query))]


def archived_at(engine: Engine, run_id: int) -> datetime | None:
    """When the run was archived; None when it is listed (or does not exist)."""
    with engine.connect() as conn:
        return conn.execute(select(Run.archived_at).where(Run.id == run_id, Run.complete.is_(True))).scalar()


def _require(session: Session, run_id: int) -> Run:
    run = session.scalars(select_visible_runs().where(Run.id == run_id)).first()
    if run is None:
        raise UnknownRun(f"No run with id {run_id}.")
    return run


def archive_run(engine: Engine, run_id: int) -> RunInfo:
    """Take a run out of the run list; its rows and everything else stay. Archiving an archived
    run keeps the first time. :class:`UnknownRun` when there is no such run."""
    with Session(writer(engine)) as session, session.begin():
        run = _require(session, run_id)
        if run.archived_at is None:
            run.archived_at = utcnow()
        return run_info(run)


def restore_run(engine: Engine, run_id: int) -> RunInfo:
    """Put an archived run back in the run list (a listed run is left as it is)."""
    with Session(writer(engine)) as session, session.begin():
        run = _require(session, run_id)
        run.archived_at = None
        return run_info(run)


def delete_summary(engine: Engine, run_id: int) -> DeleteSummary:
    """What :func:`delete_run` would lose and keep, for its confirmation."""
    with Session(engine) as session:
        info = run_info(_require(session, run_id))
        top = highest_part(session.connection(), run_id)
        events = session.execute(select(func.count()).select_from(VerdictEvent).where(VerdictEvent.run_id == run_id))
        return DeleteSummary(info, info.n_rows, 0 if top is None else top + 1, int(events.scalar_one()))


def _placeholder_sha(run_id: int) -> str:
    return f"deleted-{run_id}"


def delete_run(engine: Engine, run_id: int) -> DeleteSummary:
    """Delete an archived run for good (see the module's docstring for what goes and what stays).

    :class:`UnknownRun` when there is no such run; :class:`InputError` when it is not archived
    (archiving first keeps deleting a separate, deliberate step).
    """
    summary = delete_summary(engine, run_id)
    mark = _placeholder_sha(run_id)
    with writer(engine).begin() as conn:
        hidden = conn.execute(
            update(Run)
            .where(Run.id == run_id, Run.complete.is_(True), Run.archived_at.is_not(None))
            .values(
                complete=False,
                sha256=mark,
                uploaded_at=PLACEHOLDER_DATE,
                name="",
                model="",
                language="",
                filename="",
                n_rows=0,
                extra_columns="[]",
                column_map=None,
                language_source=None,
                languages=None,
            )
        ).rowcount
        if hidden != 1:
            found = conn.execute(select(Run.complete).where(Run.id == run_id)).first()
            if found is None or not found.complete:  # deleted meanwhile
                raise UnknownRun(f"No run with id {run_id}.")
            raise InputError(f"Run {run_id} is not archived: archive it before deleting it for good.")
        versions = select(RunGuidelines.id).where(RunGuidelines.run_id == run_id)
        conn.execute(delete(GuidelinesRead).where(GuidelinesRead.guidelines_id.in_(versions)))
        for table in (Claim, BlindScope, AuditRow, JudgeChoice, RunGuidelines, RunMatchers):
            conn.execute(delete(table).where(table.run_id == run_id))
    while True:  # the parts, newest first, a few per transaction
        with writer(engine).begin() as conn:
            if conn.execute(select(Run.sha256).where(Run.id == run_id)).scalar() != mark:
                break
            top = highest_part(conn, run_id)
            if top is None:
                break
            delete_parts_from(conn, run_id, max(0, top + 1 - REMOVE_PARTS))
        pause()
    return summary


# --------------------------------------------------------------------------- what the pages say


def archive_prompt(info: RunInfo) -> str:
    """The confirmation of archiving, naming the run (plain text: the name is the uploader's)."""
    return (
        f'Archive run #{info.id} "{info.name}" ({info.n_rows:,} rows, file {info.filename})? It leaves the run '
        "list and every page's choices. Nothing is deleted: its rows stay, and its verdicts stay (they belong "
        "to the items, so they also show in any run with the same rows). It can be restored from the "
        "archived runs at any time."
    )


def delete_warning(summary: DeleteSummary) -> str:
    """What deleting for good loses and keeps, for its confirmation (plain text)."""
    info = summary.run
    return (
        f'Deleting run #{info.id} "{info.name}" for good removes its {summary.rows:,} rows, its name, model, '
        "language and file details, its double-blind scopes, audit plan, judge choice, review guidelines and "
        "column mapping. "
        "This cannot be undone: to have the run again, upload its file again. "
        f"Kept: the {summary.log_events:,} verdicts, skips and decisions given in this run stay in the "
        "verdict log (they belong to the items and show again in any run with the same rows), and so do "
        "the judge's labels."
    )


def confirms_delete(info: RunInfo, typed: str) -> bool:
    """Whether ``typed`` names the run: its id (``7`` or ``#7``) or its whole name."""
    text = typed.strip()
    return bool(text) and text in {str(info.id), f"#{info.id}", info.name.strip()}
