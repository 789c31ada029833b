"""Claims in the database: which scopes are double-blind, and who holds which item.

Every queue with a reviewer claims its rows, so that no review is done twice by accident. A
:class:`ClaimRule` says which items a queue hands out: by default (:data:`SPLIT`) an item nobody
has a verdict on, so reviewers of one scope get different rows, interleaved along the scope's
seeded order (what the team has reviewed stays a prefix of it); in a double-blind scope
(:data:`DOUBLE_BLIND`) an item with fewer than :data:`VERDICTS_NEEDED` verdicts; for a second
opinion (:data:`SECOND_OPINION`) an item someone else has marked once, so agreement is checked
on purpose. The queue hands a reviewer the first such item (in the scope's order) that they have
not judged and that nobody else holds; it is theirs for :data:`CLAIM_TTL` (then it goes back to
the pool) or until they mark it. Claims live in the database, so they hold across several
dashboard processes: taking one is a single conditional upsert (PostgreSQL ``INSERT ... ON
CONFLICT DO UPDATE ... WHERE``; the same on SQLite under its write lock), so two reviewers asking
at once never get the same item.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete, exists, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import aliased

from scoring.core.adjudication import check_reviewer
from scoring.core.errors import NotSaved
from scoring.store.engine import writer
from scoring.store.tables import BlindScope, Claim, VerdictEvent, utcnow
from scoring.store.verdict_log import ACTION_BUSY_MS, action_turn, current_verdicts, not_saved_error

VERDICTS_NEEDED = 2
CLAIM_TTL = timedelta(minutes=10)
WHOLE_RUN = ""  #: the bucket (and domain) value of a scope covering every bucket (domain)
WINDOW = 200  #: candidates read per query by :func:`claim_next` (the front of the queue suffices)


@dataclass(frozen=True)
class ClaimRule:
    """Which items a queue hands out: fewer than ``needed`` verdicts in force and at least
    ``least`` (given by others: an item the reviewer has judged is never handed to them)."""

    needed: int
    least: int = 0

    def wants(self, verdicts: int) -> bool:
        return self.least <= verdicts < self.needed


SPLIT = ClaimRule(1)  #: the default: each row to one reviewer, so a team's reviews add up
DOUBLE_BLIND = ClaimRule(VERDICTS_NEEDED)  #: each row to two reviewers, one at a time
SECOND_OPINION = ClaimRule(VERDICTS_NEEDED, 1)  #: rows marked once by someone else, for agreement


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


def reviewers_per_item(engine: Engine) -> dict[str, int]:
    """Item key -> how many reviewers have a verdict in force on it (the count a claim checks),
    for every item with one, from one query, so a queue passes over the front its team has
    finished at once instead of reading it window by window. (Counted here: SQLite's
    ``COUNT(DISTINCT)`` with ``GROUP BY`` took three times as long.)"""
    undone = select(VerdictEvent.undoes).where(VerdictEvent.undoes.is_not(None))
    stmt = select(VerdictEvent.item_key, VerdictEvent.reviewer).where(
        VerdictEvent.action == "mark", VerdictEvent.id.not_in(undone)
    )
    with engine.connect() as conn:
        pairs = {(key, who) for key, who in conn.execute(stmt).all()}
    return dict(Counter(str(key) for key, _ in pairs))


def _try_claim(engine: Engine, item_key: str, run_id: int, reviewer: str, now: datetime, ttl: timedelta,
               rule: ClaimRule = DOUBLE_BLIND) -> bool:  # fmt: skip
    """Take ``item_key`` for ``reviewer``; True when it is theirs to review now.

    Decided in one transaction on fresh data, never on what the caller read before: the item's
    claim row is locked (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's write lock covers the
    whole transaction), then taken only when free (expired, the reviewer's own, or its holder has
    marked the item) and when the item's verdicts are what ``rule`` wants, none the reviewer's.
    """
    mark, undo = aliased(VerdictEvent), aliased(VerdictEvent)
    judges = select(func.count(func.distinct(mark.reviewer))).where(
        mark.item_key == item_key, mark.action == "mark", ~exists().where(undo.undoes == mark.id)
    )
    free = {"item_key": item_key, "run_id": run_id, "reviewer": "", "expires_at": now - ttl}
    try:
        return _take(engine, item_key, run_id, reviewer, now, ttl, judges, free, rule)
    except DBAPIError as exc:  # busy beyond ACTION_BUSY_MS, or unreachable: as for a mark
        raise not_saved_error(exc) from exc


def _take(engine: Engine, item_key: str, run_id: int, reviewer: str, now: datetime, ttl: timedelta, judges,
          free: dict, rule: ClaimRule) -> bool:  # fmt: skip
    with action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
        conn.execute(_upsert(engine.dialect.name)(Claim).values(**free).on_conflict_do_nothing())
        holder, expires = conn.execute(
            select(Claim.reviewer, Claim.expires_at).where(Claim.item_key == item_key).with_for_update()
        ).one()
        held_by_other = holder not in ("", reviewer) and _aware(expires) >= now
        if held_by_other and not conn.execute(select(_in_force(item_key, holder))).scalar():
            return False
        unwanted = not rule.wants(conn.execute(judges).scalar_one())
        if unwanted or conn.execute(select(_in_force(item_key, reviewer))).scalar():
            return False
        conn.execute(update(Claim).where(Claim.item_key == item_key)
                     .values(run_id=run_id, reviewer=reviewer, expires_at=now + ttl))  # fmt: skip
    return True


def claim_next(
    engine: Engine,
    run_id: int,
    reviewer: str,
    candidates: Sequence[str],
    ttl: timedelta = CLAIM_TTL,
    rule: ClaimRule = DOUBLE_BLIND,
    skipped: Collection[str] = (),
    keep: Collection[str] | None = None,
) -> str | None:
    """The item the reviewer reviews next (claimed for them), or None when no item of
    ``candidates`` (the scope's keys in queue order) is what ``rule`` wants and free.

    An item the reviewer already holds comes first, so a refresh shows the same item again
    (``keep`` narrows that to the given items, e.g. the one on screen: ``[]`` starts at the
    front, as on a newly chosen scope); ``skipped`` (the reviewer's skipped items) come last, and
    once another item is theirs their other claims among the candidates are let go, so a skipped
    row goes back to the pool at once. The candidates are read :data:`WINDOW` at a time from the
    front, so a call costs the same at 300 and at 300,000 items while the front of the queue has
    work.
    """
    name = check_reviewer(reviewer)
    keys = list(dict.fromkeys(str(k) for k in candidates))
    later = {str(k) for k in skipped}
    if later:
        keys = [k for k in keys if k not in later] + [k for k in keys if k in later]
    now = utcnow()
    with engine.connect() as conn:
        held = conn.execute(select(Claim.item_key, Claim.expires_at).where(Claim.reviewer == name)).all()
    mine = set(keys) & {str(k) for k, expires in held if _aware(expires) >= now}
    first = mine if keep is None else set(keys) & {str(k) for k in keep}
    windows = [[k for k in keys if k in first and k not in later]] if first - later else []
    windows += [keys[i : i + WINDOW] for i in range(0, len(keys), WINDOW)]
    for window in windows:
        found = _first_open(engine, run_id, name, window, now, ttl, rule)
        if found is not None:
            _release(engine, name, mine - {found}, now)
            return found
    return None


def _first_open(engine: Engine, run_id: int, name: str, window: list[str], now: datetime, ttl: timedelta,
                rule: ClaimRule = DOUBLE_BLIND) -> str | None:  # fmt: skip
    """Claim the first item of ``window`` open to ``name``: read what the window's items hold
    (verdicts, claims) in two queries, then try the open ones in order (each try re-checks).

    An item the reviewer holds for more than half the TTL yet is served without a write (a rerun
    after every press need not wait for a busy database's write lock to show the same row)."""
    current = current_verdicts(engine, window)
    judged_by: dict[str, set[str]] = {}
    for key, who in zip(current["item_key"], current["reviewer"]):
        judged_by.setdefault(str(key), set()).add(str(who))
    with engine.connect() as conn:
        rows = conn.execute(
            select(Claim.item_key, Claim.reviewer, Claim.expires_at).where(Claim.item_key.in_(window))
        ).all()
    held = {str(k): (str(r), _aware(e)) for k, r, e in rows}
    for key in window:
        done = judged_by.get(key, set())
        if name in done or not rule.wants(len(done)):
            continue
        holder = held.get(key)
        if holder and holder[0] != name and holder[1] >= now and holder[0] not in done:
            continue  # someone else's live claim
        if holder and holder[0] == name and holder[1] >= now + ttl / 2:
            return key  # held for a while yet: nobody else can take it
        if _try_claim(engine, key, run_id, name, now, ttl, rule):
            return key
    return None


def release(engine: Engine, reviewer: str, keys: Collection[str]) -> None:
    """Let go of the reviewer's claims on ``keys`` (a row left for another scope or mode)."""
    _release(engine, check_reviewer(reviewer), {str(k) for k in keys}, utcnow())


def _release(engine: Engine, name: str, keys: set[str], now: datetime) -> None:
    """Let go of ``name``'s claims on ``keys`` (rows they skipped or moved on from): they are
    free for the next reviewer who asks. Best effort: a busy database lets them expire instead."""
    if not keys:
        return
    try:
        with action_turn(), writer(engine, busy_ms=ACTION_BUSY_MS).begin() as conn:
            conn.execute(update(Claim).where(Claim.reviewer == name, Claim.item_key.in_(sorted(keys)))
                         .values(reviewer="", expires_at=now - timedelta(seconds=1)))  # fmt: skip
    except (DBAPIError, NotSaved):
        pass


def _aware(stamp: datetime) -> datetime:
    """SQLite hands back naive datetimes (stored as UTC)."""
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=utcnow().tzinfo)


def live_claims(engine: Engine) -> dict[str, str]:
    """Item key -> reviewer of every unexpired claim (for tests and the Reviewers page)."""
    now = utcnow()
    with engine.connect() as conn:
        rows = conn.execute(select(Claim.item_key, Claim.reviewer, Claim.expires_at)).all()
    return {str(k): str(r) for k, r, e in rows if _aware(e) >= now}
