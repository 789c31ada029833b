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
from dataclasses import dataclass
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
WHOLE_RUN = ""  #: the bucket (and domain) value of a scope covering every bucket (domain)
WINDOW = 200  #: candidates read per query by :func:`claim_next` (the front of the queue suffices)


@dataclass(frozen=True)
class BlindSpec:
    """A double-blind scope as the queue names it: a bucket and a domain (None: all) and a sample
    size (None: every row; k: the queue's reproducible random sample of k rows)."""

    bucket: str | None = None
    domain: str | None = None
    sample: int | None = None

    def key(self) -> tuple[str, str, int]:
        return (self.bucket or WHOLE_RUN, self.domain or WHOLE_RUN, self.sample or 0)

    def label(self) -> str:
        """How the pages name the scope: "overlap_only · Food · sample of 50", "the whole run"."""
        parts = [self.bucket or "", self.domain or "", f"sample of {self.sample}" if self.sample else ""]
        return " · ".join(p for p in parts if p) or "the whole run"


def _spec(scope: BlindSpec | str | None) -> BlindSpec:
    """A bucket name (or None, the whole run) as a scope, as the first version of these calls took."""
    return scope if isinstance(scope, BlindSpec) else BlindSpec(bucket=scope)


def set_blind(engine: Engine, run_id: int, scope: BlindSpec | str | None, by: str, on: bool = True) -> None:
    """Put a scope of a run (a bucket name, None for the whole run, or a :class:`BlindSpec`) into
    double-blind review, or out of it."""
    bucket, domain, sample = _spec(scope).key()
    match = (BlindScope.run_id == run_id, BlindScope.bucket == bucket, BlindScope.domain == domain,
             BlindScope.sample == sample)  # fmt: skip
    with writer(engine).begin() as conn:
        conn.execute(delete(BlindScope).where(*match))
        if on:
            row = {"run_id": run_id, "bucket": bucket, "domain": domain, "sample": sample}
            conn.execute(BlindScope.__table__.insert().values(**row, created_by=by, created_at=utcnow()))


def blind_scopes(engine: Engine, run_id: int) -> list[BlindSpec]:
    """The run's double-blind scopes."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(BlindScope.bucket, BlindScope.domain, BlindScope.sample).where(BlindScope.run_id == run_id)
        ).all()
    return sorted((BlindSpec(b or None, d or None, s or None) for b, d, s in rows), key=BlindSpec.key)


def covers(outer: BlindSpec, inner: BlindSpec) -> bool:
    """Whether every item of the queue scope ``inner`` is in the blind scope ``outer``.

    A scope without a sample covers its narrower bucket/domain scopes and their samples; a
    sampled scope covers only itself (another sample size draws other rows).
    """
    (ob, od, osample), (ib, idom, isample) = outer.key(), inner.key()
    if osample:
        return (ob, od, osample) == (ib, idom, isample)
    return ob in (WHOLE_RUN, ib) and od in (WHOLE_RUN, idom)


def is_blind(engine: Engine, run_id: int, scope: BlindSpec | str | None) -> bool:
    """Whether a queue scope is reviewed double-blind: a blind scope of the run covers it."""
    wanted = _spec(scope)
    return any(covers(outer, wanted) for outer in blind_scopes(engine, run_id))


def blind_buckets(engine: Engine, run_id: int) -> list[str]:
    """The buckets of the run's double-blind scopes, "" for every bucket (any entry: some of the
    run is blind)."""
    return sorted({spec.key()[0] for spec in blind_scopes(engine, run_id)})


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

    An item the reviewer already holds comes first, so a refresh shows the same item again. The
    candidates are read :data:`WINDOW` at a time from the front, so a call costs the same at 300
    and at 300,000 items while the front of the queue has work.
    """
    name = check_reviewer(reviewer)
    keys = list(dict.fromkeys(str(k) for k in candidates))
    now = utcnow()
    with engine.connect() as conn:
        held = conn.execute(select(Claim.item_key, Claim.expires_at).where(Claim.reviewer == name)).all()
    in_scope = set(keys) & {str(k) for k, expires in held if _aware(expires) >= now}
    windows = [[k for k in keys if k in in_scope]] if in_scope else []
    windows += [keys[i : i + WINDOW] for i in range(0, len(keys), WINDOW)]
    for window in windows:
        found = _first_open(engine, run_id, name, window, now, ttl)
        if found is not None:
            return found
    return None


def _first_open(engine: Engine, run_id: int, name: str, window: list[str], now: datetime, ttl: timedelta) -> str | None:
    """Claim the first item of ``window`` open to ``name``: read what the window's items hold
    (verdicts, claims) in two queries, then try the open ones in order (each try re-checks)."""
    current = current_verdicts(engine, window)
    judged_by: dict[str, set[str]] = {}
    for key, who in zip(current["item_key"], current["reviewer"]):
        judged_by.setdefault(str(key), set()).add(str(who))
    with engine.connect() as conn:
        rows = conn.execute(
            select(Claim.item_key, Claim.reviewer, Claim.expires_at).where(Claim.item_key.in_(window))
        ).all()
    held = {str(k): (str(r), e) for k, r, e in rows}
    for key in window:
        done = judged_by.get(key, set())
        if name in done or len(done) >= VERDICTS_NEEDED:
            continue
        holder = held.get(key)
        if holder and holder[0] != name and _aware(holder[1]) >= now and holder[0] not in done:
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
