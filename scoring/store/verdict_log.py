"""Human verdicts in the database: an append-only event log (marks, skips, undos) and its reads.

Every action is one INSERT committed in its own transaction before the call returns, so a crash
or a closed tab never loses a given mark and two reviewers never overwrite each other. Nothing is
updated or deleted: the current verdict of a reviewer on an item is the latest ``mark`` not
retracted by an ``undo``. Verdicts attach to the item key (a hash of question, answer and
response), so they apply to every run holding the identical row.

Reading is one query per call, filtered by item key (small sets) or by nothing (large sets, then
filtered with pandas), so a queue of 100,000 rows costs one query and a few vectorised operations.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import polars as pl
from sqlalchemy import Engine, and_, bindparam, exists, func, insert, or_, select
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import aliased

from scoring.core.errors import NotSaved
from scoring.core.verdict_rules import (
    CURRENT_COLUMNS,
    check_reason,
    check_reviewer,
    check_verdict,
    conflicts_in,
    current_marks,
    isin,
    utc,
)
from scoring.store.engine import writer
from scoring.store.orm_tables import VerdictEvent

#: How long a reviewer's action waits for the database's write lock before it is reported as not
#: saved. Other writers hold the lock for about 100 ms at a time, so this is only reached when
#: something is wrong, and the reviewer then sees it at once instead of a frozen page.
ACTION_BUSY_MS = 2_000
#: Above this many item keys the key filter runs in pandas instead of a SQL ``IN`` list (which
#: has a bound-parameter limit and gets slow); the one query then reads the whole log.
KEY_FILTER_LIMIT = 500
#: How a row reached the reviewer (``verdict_events.via``): only :data:`QUEUE` rows say how far the
#: queue got in the seeded review order, which bounds the estimate's random sample.
QUEUE, OPENED, RESTORED = "queue", "opened", "restored"
VIA = (QUEUE, OPENED, RESTORED)
_EVENT_COLUMNS = ["id", "item_key", "run_id", "reviewer", "action", "verdict", "reason", "note", "undoes", "created_at"]
STATE_COLUMNS = ["id", "item_key", "reviewer", "action", "undoes"]

#: A reviewer's mark and any undo of it: ``MARK`` rows with :data:`IN_FORCE` are the verdicts in
#: force, the one definition the undo, the review card and the claims share.
MARK, UNDO = aliased(VerdictEvent), aliased(VerdictEvent)
IN_FORCE = and_(MARK.action == "mark", ~exists().where(UNDO.undoes == MARK.id))
#: The review card's verdict: built once with bound parameters (building it cost more than running it).
_VERDICT_IN_FORCE = (
    select(MARK.verdict, MARK.run_id)
    .where(MARK.item_key == bindparam("key"), MARK.reviewer == bindparam("who"), IN_FORCE)
    .order_by(MARK.id.desc())
    .limit(1)
)


def _check_item(item_key: str) -> str:
    if not isinstance(item_key, str) or not item_key:
        raise ValueError("An item key is required to record a verdict.")
    return item_key


# --------------------------------------------------------------------------- writing


def not_saved_error(exc: DBAPIError) -> NotSaved:
    """The reviewer-facing form of a failed write: the driver's reason, never the SQL or a URL."""
    reason = str(getattr(exc, "orig", None) or exc).splitlines()[0][:200]
    return NotSaved(f"Not saved: the database could not be written ({reason}). Nothing was recorded; try again.")


#: Reviewers' actions in one process take turns here before asking the database for its lock.
#: SQLite's busy handler polls with growing sleeps and is not fair: with many sessions of one
#: dashboard marking at once, one of them can lose the lock for seconds. A thread lock queues
#: them instead; the database's own wait then only covers writers in other processes.
_ACTION_TURN = threading.Lock()


@contextmanager
def action_turn() -> Iterator[None]:
    """Wait for this process's turn to write an action; :class:`NotSaved` past :data:`ACTION_BUSY_MS`."""
    if not _ACTION_TURN.acquire(timeout=ACTION_BUSY_MS / 1000):
        raise NotSaved("Not saved: other marks kept the database busy. Nothing was recorded; try again.")
    try:
        yield
    finally:
        _ACTION_TURN.release()


def append_event(engine: Engine, values: dict) -> int:
    """One INSERT in its own transaction, committed before returning the event id.

    Raises :class:`NotSaved` when the database is busy beyond :data:`ACTION_BUSY_MS` or cannot
    be written; nothing is written then.
    """
    try:
        with action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
            return int(conn.execute(insert(VerdictEvent).values(**values)).inserted_primary_key[0])
    except IntegrityError:
        raise
    except DBAPIError as exc:
        raise not_saved_error(exc) from exc


def record_mark(
    engine: Engine,
    item_key: str,
    run_id: int | None,
    reviewer: str,
    verdict: str,
    reason: str = "",
    note: str = "",
    reviewed_at: datetime | None = None,
    via: str = QUEUE,
) -> int:
    """Append a reviewer's verdict on an item; returns the event id once it is committed.

    ``reviewed_at`` defaults to now; restoring an export passes the original time. ``via``: how
    the row reached the reviewer (:data:`VIA`); only the queue's rows extend the estimate's sample.
    """
    values = _mark_values(item_key, run_id, reviewer, verdict, reason, note, reviewed_at, via)
    return append_event(engine, values)


def _mark_values(
    item_key: str,
    run_id: int | None,
    reviewer: str,
    verdict: str,
    reason: str = "",
    note: str = "",
    reviewed_at: datetime | None = None,
    via: str = QUEUE,
) -> dict:
    if via not in VIA:
        raise ValueError(f"Unknown via {via!r}: expected one of {', '.join(VIA)}.")
    return {
        "item_key": _check_item(item_key),
        "run_id": run_id,
        "reviewer": check_reviewer(reviewer),
        "action": "mark",
        "verdict": check_verdict(verdict),
        "reason": check_reason(reason),
        "note": (note or "").strip(),
        "created_at": reviewed_at or datetime.now(UTC),
        "via": via,
    }


#: Marks per write transaction when restoring many: a few milliseconds of the write lock each,
#: so reviewers marking elsewhere never wait behind a restore.
RESTORE_CHUNK = 1_000


def record_marks(engine: Engine, marks: Iterable[Mapping]) -> int:
    """Append many marks (restoring an export); all are validated before anything is written.

    Each mapping has the keyword arguments of :func:`record_mark` (without ``engine``). They are
    written in short transactions of :data:`RESTORE_CHUNK`: an interrupted restore keeps what it
    wrote, and restoring the same file again adds only the rest (the restore skips marks that
    are already current).
    """
    rows = [_mark_values(**{"via": RESTORED, **dict(m)}) for m in marks]
    for start in range(0, len(rows), RESTORE_CHUNK):
        with writer(engine).begin() as conn:
            conn.execute(insert(VerdictEvent), rows[start : start + RESTORE_CHUNK])
    return len(rows)


def record_skip(
    engine: Engine, item_key: str, run_id: int | None, reviewer: str, via: str = QUEUE, reason: str = "", note: str = ""
) -> int:
    """Append a skip: the item moves behind the reviewer's unreviewed rows until marked. A skip
    in the queue still says the queue reached the row: it stays in the estimate's sample as a
    row whose truth is missing, never silently left out. The reason and note typed before it are
    kept with it (:func:`scoring.store.notes.last_details` gives them back with the row)."""
    return append_event(engine, _skip_values(item_key, run_id, reviewer, via, reason, note))


def _skip_values(item_key: str, run_id: int | None, reviewer: str, via: str = QUEUE, reason="", note="") -> dict:
    if via not in VIA:
        raise ValueError(f"Unknown via {via!r}: expected one of {', '.join(VIA)}.")
    values = {"item_key": _check_item(item_key), "run_id": run_id, "reviewer": check_reviewer(reviewer)}
    return values | {
        "action": "skip",
        "reason": check_reason(reason),
        "note": (note or "").strip(),
        "created_at": datetime.now(UTC),
        "via": via,
    }


def record_skips(engine: Engine, skips: Iterable[Mapping]) -> int:
    """Append many skips (restoring an export), as :func:`record_marks` appends marks: all
    validated first, then written in transactions of :data:`RESTORE_CHUNK`. Each mapping has the
    keyword arguments of :func:`record_skip` (without ``engine``)."""
    rows = [_skip_values(**dict(s)) for s in skips]
    for start in range(0, len(rows), RESTORE_CHUNK):
        with writer(engine).begin() as conn:
            conn.execute(insert(VerdictEvent), rows[start : start + RESTORE_CHUNK])
    return len(rows)


@dataclass(frozen=True)
class Undone:
    """What an undo took back: the item, the verdict retracted, and how many later skips it passed.

    Undo retracts marks only; skips given after the mark stay skips, and the reviewer is told.
    """

    item_key: str
    verdict: str
    run_id: int | None
    skips_passed: int


def undo_last(engine: Engine, reviewer: str, run_id: int | None = None) -> str | None:
    """Retract the reviewer's latest mark not yet undone (in ``run_id`` if given).

    Appends an ``undo`` event and returns the item key it reopened, or None when there is
    nothing left to undo. Calling it again walks further back. See :func:`undo_last_mark`.
    """
    undone = undo_last_mark(engine, reviewer, run_id)
    return undone.item_key if undone else None


def undo_last_mark(engine: Engine, reviewer: str, run_id: int | None = None) -> Undone | None:
    """:func:`undo_last` with what was undone. The unique index on ``undoes`` makes a concurrent
    double undo of the same mark fail; the loser retries with the next mark. Raises
    :class:`NotSaved` when the database cannot be written.
    """
    name = check_reviewer(reviewer)
    stmt = (
        select(MARK.id, MARK.item_key, MARK.run_id, MARK.verdict)
        .where(MARK.reviewer == name, IN_FORCE)
        .order_by(MARK.id.desc())
        .limit(1)
    )
    if run_id is not None:
        stmt = stmt.where(MARK.run_id == run_id)
    for _attempt in range(20):
        try:
            with action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
                target = conn.execute(stmt).first()
                if target is None:
                    return None
                skips = select(func.count()).where(
                    VerdictEvent.reviewer == name, VerdictEvent.action == "skip", VerdictEvent.id > target.id
                )
                if run_id is not None:
                    skips = skips.where(VerdictEvent.run_id == run_id)
                passed = int(conn.execute(skips).scalar_one())
                conn.execute(
                    insert(VerdictEvent).values(
                        item_key=target.item_key,
                        run_id=target.run_id,
                        reviewer=name,
                        action="undo",
                        undoes=target.id,
                        created_at=datetime.now(UTC),
                    )
                )
                return Undone(str(target.item_key), str(target.verdict), target.run_id, passed)
        except IntegrityError:
            continue
        except DBAPIError as exc:
            raise not_saved_error(exc) from exc
    raise RuntimeError("Undo kept colliding with concurrent undos; try again.")


# --------------------------------------------------------------------------- reading


def _unique_keys(item_keys: Iterable[str]) -> pd.Index:
    """Distinct keys, in the column's own dtype (converting a million Arrow strings to Python
    objects first cost a second)."""
    if isinstance(item_keys, pd.Series | pd.Index):
        return pd.Index(item_keys.unique())
    keys = item_keys if isinstance(item_keys, np.ndarray) else list(item_keys)
    return pd.Index(pd.unique(pd.Series(keys, dtype=object)))


def read_events(
    engine: Engine,
    item_keys: Iterable[str] | None = None,
    reviewer: str | None = None,
    actions: Sequence[str] | None = None,
    columns: Sequence[str] = _EVENT_COLUMNS,
) -> pd.DataFrame:
    """The event log (one query), oldest first, optionally restricted to keys/reviewer/actions.

    ``columns`` narrows what is read: the queue needs no text or times, which keeps it cheap.
    """
    columns = list(columns)
    stmt = select(*(getattr(VerdictEvent, c) for c in columns)).order_by(VerdictEvent.id)
    if reviewer is not None:
        stmt = stmt.where(VerdictEvent.reviewer == reviewer)
    if actions is not None:
        stmt = stmt.where(VerdictEvent.action.in_(list(actions)))
    keys: Iterable[str] | None = None
    if item_keys is not None:
        keys = item_keys if isinstance(item_keys, pd.Series | pd.Index | np.ndarray | pl.Series) else list(item_keys)
        if len(keys) == 0:
            return pd.DataFrame(columns=columns)
        if len(keys) <= KEY_FILTER_LIMIT:  # else: read every event, then keep the run's (below)
            stmt = stmt.where(VerdictEvent.item_key.in_([str(k) for k in _unique_keys(keys)]))
    with engine.connect() as conn:
        rows = conn.execute(stmt).all()
    frame = pd.DataFrame.from_records([tuple(r) for r in rows], columns=columns)
    if keys is not None and len(keys) > KEY_FILTER_LIMIT and len(frame):  # no event: nothing to hash a million keys for
        frame = frame[isin(frame["item_key"], keys)]
    return frame.reset_index(drop=True)


def _empty_current() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series(dtype=object) for c in CURRENT_COLUMNS})
    frame["reviewed_at"] = pd.Series(dtype="datetime64[us, UTC]")
    frame["run_id"] = pd.Series(dtype="Int64")
    return frame


def current_verdicts(
    engine: Engine, item_keys: Iterable[str] | None = None, reviewer: str | None = None
) -> pd.DataFrame:
    """Each reviewer's current verdict per item (latest mark not undone), sorted by item, reviewer.

    Columns: item_key, reviewer, verdict, reason, note, reviewed_at (UTC), run_id (where the mark
    was given; missing for marks restored without one).
    """
    name = reviewer.strip() if reviewer is not None else None
    events = read_events(engine, item_keys, reviewer=name, actions=("mark", "undo"))
    if events.empty:
        return _empty_current()
    current = current_marks(events).rename(columns={"created_at": "reviewed_at"})
    if current.empty:
        return _empty_current()
    current = current.sort_values(["item_key", "reviewer"])[CURRENT_COLUMNS].reset_index(drop=True)
    current["reviewed_at"] = utc(current["reviewed_at"])
    current["reason"] = current["reason"].fillna("")
    current["note"] = current["note"].fillna("")
    current["run_id"] = current["run_id"].astype("Int64")
    return current


def verdict_in_force(engine: Engine, reviewer: str, item_key: str) -> tuple[str, int | None] | None:
    """(verdict, run it was given in) of the reviewer's latest mark on the item that no undo
    retracted, as :func:`current_verdicts` gives it; one query for the review card."""
    with engine.connect() as conn:
        found = conn.execute(_VERDICT_IN_FORCE, {"key": item_key, "who": reviewer.strip()}).first()
    return (str(found[0]), found[1]) if found is not None else None


def reviewer_state(engine: Engine, reviewer: str, item_keys: Iterable[str] | None) -> tuple[pd.Index, pd.Index]:
    """(keys the reviewer has a current verdict on, keys skipped and not marked since): one query,
    folded in plain Python (a reviewer's own events are few; pandas' fixed cost per call was a
    fifth of a key press)."""
    if item_keys is None:
        stmt = select(*(getattr(VerdictEvent, c) for c in STATE_COLUMNS)).where(VerdictEvent.reviewer == reviewer)
        with engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(stmt.order_by(VerdictEvent.id)).all()]
    else:
        rows = list(read_events(engine, item_keys, reviewer=reviewer, columns=STATE_COLUMNS).itertuples(False, None))
    undone = {undoes for _, _, _, action, undoes in rows if action == "undo" and undoes is not None}
    marks: dict[str, int] = {}  # key -> its latest mark not undone, in the order of those marks
    skips: dict[str, int] = {}
    for event_id, key, _, action, _ in rows:
        latest = marks if action == "mark" and event_id not in undone else skips if action == "skip" else None
        if latest is not None:
            latest.pop(key, None)
            latest[key] = event_id
    skipped = [key for key, event_id in skips.items() if event_id > marks.get(key, -1)]
    return pd.Index(list(marks), dtype=object), pd.Index(skipped, dtype=object)


def skipped_keys(engine: Engine, reviewer: str, item_keys: Iterable[str] | None = None) -> set[str]:
    """Items the reviewer skipped and has not marked since (an undone mark does not count)."""
    _, skipped = reviewer_state(engine, check_reviewer(reviewer), item_keys)
    return {str(k) for k in skipped}


# --------------------------------------------------------------------------- agreement


def conflicts(engine: Engine, item_keys: Iterable[str] | None = None) -> pd.DataFrame:
    """Items whose reviewers' current verdicts disagree, one row each (see :func:`conflicts_in`)."""
    return conflicts_in(current_verdicts(engine, item_keys))


def revision(engine: Engine) -> int:
    """Id of the newest verdict event: a cheap cache key that changes with every mark."""
    with engine.connect() as conn:
        return int(conn.execute(select(func.max(VerdictEvent.id))).scalar() or 0)


def served_keys(engine: Engine, run_id: int, item_keys: Iterable[str] | None = None) -> set[str]:
    """Items of ``run_id`` the queue served: a mark or skip given in this run through the queue
    (or before revision 0008, when nothing else was recorded), undone or not. Marks restored from
    an export, given on rows opened on purpose, or given in another run do not count."""
    stmt = select(VerdictEvent.item_key).where(*_served(run_id)).distinct()
    with engine.connect() as conn:
        found = {str(k) for (k,) in conn.execute(stmt).all()}
    if item_keys is None:
        return found
    return found & {str(k) for k in item_keys}


def _served(run_id: int) -> tuple:
    """The events that say the queue of ``run_id`` served their item (see :func:`served_keys`)."""
    return (
        VerdictEvent.run_id == run_id,
        VerdictEvent.action.in_(("mark", "skip")),
        or_(VerdictEvent.via.is_(None), VerdictEvent.via == QUEUE),
    )


def served_unmarked(engine: Engine, run_id: int) -> dict[str, list[str]]:
    """Items of ``run_id`` the queue served (:func:`served_keys`) that nobody holds a current
    verdict on (skipped, or marked and undone), each with the reviewers the queue served it to,
    sorted. An export carries them (every other served row says so in its verdicts' ``via``), so
    a restore serves the same rows: they are part of the estimate's sample as missing data."""
    stmt = select(VerdictEvent.item_key, VerdictEvent.reviewer).where(*_served(run_id)).distinct()
    with engine.connect() as conn:
        pairs = [(str(k), str(r)) for k, r in conn.execute(stmt).all()]
    if not pairs:
        return {}
    marked = set(current_verdicts(engine, sorted({k for k, _ in pairs}))["item_key"].astype(str))
    found: dict[str, list[str]] = {}
    for key, reviewer in pairs:
        if key not in marked:
            found.setdefault(key, []).append(reviewer)
    return {key: sorted(names) for key, names in found.items()}
