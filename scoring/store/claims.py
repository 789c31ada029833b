"""Double-blind review in the database: which scopes are blind, and who holds which item.

Each item of a blind scope needs :data:`VERDICTS_NEEDED` verdicts from different reviewers. The
queue hands a reviewer the first item (in the scope's order) that still needs a verdict, that
they have not judged, and that nobody else holds; it is theirs for :data:`CLAIM_TTL` (then it goes
back to the pool) or until they mark it. Claims live in the database, so they hold across several
dashboard processes: taking one is a single conditional upsert (PostgreSQL ``INSERT ... ON
CONFLICT DO UPDATE ... WHERE``; the same on SQLite under its write lock), so two reviewers asking
at once never get the same item.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete, exists, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import aliased

from scoring.core.adjudication import check_reviewer
from scoring.store.engine import writer
from scoring.store.tables import BlindScope, Claim, VerdictEvent, utcnow
from scoring.store.verdict_log import ACTION_BUSY_MS, _action_turn, _not_saved, current_verdicts

VERDICTS_NEEDED = 2
CLAIM_TTL = timedelta(minutes=10)
WHOLE_RUN = ""  #: the bucket value of a scope covering the whole run


def set_blind(engine: Engine, run_id: int, bucket: str | None, by: str, on: bool = True) -> None:
    """Put a run (``bucket`` None) or one of its buckets into double-blind review, or out of it."""
    key = bucket or WHOLE_RUN
    with writer(engine).begin() as conn:
        conn.execute(delete(BlindScope).where(BlindScope.run_id == run_id, BlindScope.bucket == key))
        if on:
            conn.execute(BlindScope.__table__.insert().values(run_id=run_id, bucket=key, created_by=by,
                                                              created_at=utcnow()))  # fmt: skip


def is_blind(engine: Engine, run_id: int, bucket: str | None) -> bool:
    """Whether a scope of the run is reviewed double-blind (the whole run, or this bucket)."""
    with engine.connect() as conn:
        found = conn.execute(select(BlindScope.bucket).where(BlindScope.run_id == run_id)).scalars().all()
    return WHOLE_RUN in found or (bucket or WHOLE_RUN) in found


def blind_buckets(engine: Engine, run_id: int) -> list[str]:
    """The run's double-blind scopes: bucket names, "" for the whole run."""
    with engine.connect() as conn:
        return sorted(conn.execute(select(BlindScope.bucket).where(BlindScope.run_id == run_id)).scalars())


def _upsert(dialect: str):
    return pg_insert if dialect == "postgresql" else sqlite_insert


def _in_force(item_key: str, reviewer: str):
    """SQL: ``reviewer`` has a mark on ``item_key`` that no undo retracted (a verdict in force)."""
    mark, undo = aliased(VerdictEvent), aliased(VerdictEvent)
    return exists().where(
        mark.item_key == item_key, mark.reviewer == reviewer, mark.action == "mark",
        ~exists().where(undo.undoes == mark.id),
    )  # fmt: skip


def _try_claim(engine: Engine, item_key: str, run_id: int, reviewer: str, now: datetime, ttl: timedelta) -> bool:
    """Take ``item_key`` for ``reviewer``; True when it is theirs to review now.

    Decided in one transaction on fresh data, never on what the caller read before: the item's
    claim row is locked (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's write lock covers the
    whole transaction), then taken only when free (expired, the reviewer's own, or its holder has
    marked the item) and when the item still needs a verdict that is not the reviewer's.
    """
    mark, undo = aliased(VerdictEvent), aliased(VerdictEvent)
    judges = select(func.count(func.distinct(mark.reviewer))).where(
        mark.item_key == item_key, mark.action == "mark", ~exists().where(undo.undoes == mark.id)
    )
    free = {"item_key": item_key, "run_id": run_id, "reviewer": "", "expires_at": now - ttl}
    try:
        return _take(engine, item_key, run_id, reviewer, now, ttl, judges, free)
    except DBAPIError as exc:  # busy beyond ACTION_BUSY_MS, or unreachable: as for a mark
        raise _not_saved(exc) from exc


def _take(engine: Engine, item_key: str, run_id: int, reviewer: str, now: datetime, ttl: timedelta, judges,
          free: dict) -> bool:  # fmt: skip
    with _action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
        conn.execute(_upsert(engine.dialect.name)(Claim).values(**free).on_conflict_do_nothing())
        holder, expires = conn.execute(
            select(Claim.reviewer, Claim.expires_at).where(Claim.item_key == item_key).with_for_update()
        ).one()
        held_by_other = holder not in ("", reviewer) and _aware(expires) >= now
        if held_by_other and not conn.execute(select(_in_force(item_key, holder))).scalar():
            return False
        full = conn.execute(judges).scalar_one() >= VERDICTS_NEEDED
        if full or conn.execute(select(_in_force(item_key, reviewer))).scalar():
            return False
        conn.execute(update(Claim).where(Claim.item_key == item_key)
                     .values(run_id=run_id, reviewer=reviewer, expires_at=now + ttl))  # fmt: skip
    return True


def claim_next(
    engine: Engine, run_id: int, reviewer: str, candidates: Sequence[str], ttl: timedelta = CLAIM_TTL
) -> str | None:
    """The item the reviewer reviews next in a blind scope (claimed for them), or None when every
    item of ``candidates`` (the scope's keys in queue order) has its verdicts or is held by others.

    An item the reviewer already holds comes first, so a refresh shows the same item again.
    """
    name = check_reviewer(reviewer)
    keys = list(dict.fromkeys(str(k) for k in candidates))
    current = current_verdicts(engine, keys)
    judged_by: dict[str, set[str]] = {}
    for key, who in zip(current["item_key"], current["reviewer"]):
        judged_by.setdefault(str(key), set()).add(str(who))
    now = utcnow()
    with engine.connect() as conn:
        rows = conn.execute(select(Claim.item_key, Claim.reviewer, Claim.expires_at)).all()
    held = {str(k): (str(r), e) for k, r, e in rows}

    def open_for_me(key: str) -> bool:
        done = judged_by.get(key, set())
        return name not in done and len(done) < VERDICTS_NEEDED

    mine = [k for k, (who, _) in held.items() if who == name and k in set(keys) and open_for_me(k)]
    for key in [*mine, *keys]:
        if not open_for_me(key):
            continue
        holder = held.get(key)
        if holder and holder[0] != name and _aware(holder[1]) >= now and holder[0] not in judged_by.get(key, set()):
            continue  # someone else's live claim
        if _try_claim(engine, key, run_id, name, now, ttl):
            return key
    return None


def _aware(stamp: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored as UTC)."""
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=utcnow().tzinfo)


def live_claims(engine: Engine) -> dict[str, str]:
    """Item key -> reviewer of every unexpired claim (for tests and the Reviewers page)."""
    now = utcnow()
    with engine.connect() as conn:
        rows = conn.execute(select(Claim.item_key, Claim.reviewer, Claim.expires_at)).all()
    return {str(k): str(r) for k, r, e in rows if _aware(e) >= now}
