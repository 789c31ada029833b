"""The review rules: which items a queue hands out, to whom, and which scopes are double-blind.

Every queue with a reviewer claims its rows, so that no review is done twice by accident. A
:class:`ClaimRule` says which items a queue hands out: by default (:data:`SPLIT`) an item nobody
has a verdict on, so reviewers of one scope get different rows, interleaved along the scope's
seeded order (what the team has reviewed stays a prefix of it); in a double-blind scope
(:data:`DOUBLE_BLIND`) an item with fewer than :data:`VERDICTS_NEEDED` verdicts; for a second
opinion (:data:`SECOND_OPINION`) an item someone else has marked once, so agreement is checked
on purpose (:func:`rule_for` picks one). The queue hands a reviewer the first such item (in the
scope's order) that they have not judged and that nobody else holds (:func:`claim_next`); it is
theirs for :data:`CLAIM_TTL` (then it goes back to the pool) or until they mark it.

A double-blind scope (:class:`BlindSpec`) is a bucket, a domain and a sample of the queue; one
scope covers another (:func:`covers`) when every item of the other is in it.

The tables themselves (claims, blind scopes) are read and written in :mod:`scoring.store.claim_table`
and :mod:`scoring.store.blind_table`; the two reads a caller of these rules needs alongside them,
:func:`live_claims` and :func:`reviewers_per_item`, are named here too.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine

from scoring.core.verdict_rules import check_reviewer
from scoring.store.blind_table import WHOLE_RUN, blind_scope_rows, set_blind_scope
from scoring.store.claim_table import (
    claims_on,
    held_by,
    judged_by,
    live_claims,
    release_claims,
    reviewers_per_item,
    try_claim,
)
from scoring.store.orm_tables import utcnow

__all__ = [
    "CLAIM_TTL",
    "DOUBLE_BLIND",
    "SECOND_OPINION",
    "SPLIT",
    "VERDICTS_NEEDED",
    "WHOLE_RUN",
    "WINDOW",
    "BlindSpec",
    "ClaimRule",
    "blind_buckets",
    "blind_scopes",
    "claim_next",
    "covers",
    "is_blind",
    "live_claims",
    "release",
    "reviewers_per_item",
    "rule_for",
    "set_blind",
]

VERDICTS_NEEDED = 2
CLAIM_TTL = timedelta(minutes=10)
WINDOW = 200  #: candidates read per query by :func:`claim_next` (the front of the queue suffices)
#: The first window's size: the row a press is handed is nearly always among the queue's first
#: few, and reading 200 items' verdicts and claims cost a key press 10 ms.
FIRST_WINDOW = 16


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


def rule_for(double_blind: bool, second_opinion: bool) -> ClaimRule:
    """The rule a queue scope is reviewed under: double-blind when a blind scope covers it, else a
    second opinion when the reviewer asked for one, else the team's split."""
    return DOUBLE_BLIND if double_blind else SECOND_OPINION if second_opinion else SPLIT


# --------------------------------------------------------------------------- double-blind scopes


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
    set_blind_scope(engine, run_id, *_spec(scope).key(), by, on=on)


def blind_scopes(engine: Engine, run_id: int) -> list[BlindSpec]:
    """The run's double-blind scopes."""
    rows = blind_scope_rows(engine, run_id)
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


# --------------------------------------------------------------------------- who gets which item


def claim_next(
    engine: Engine,
    run_id: int,
    reviewer: str,
    candidates: Sequence[str],
    ttl: timedelta = CLAIM_TTL,
    rule: ClaimRule = DOUBLE_BLIND,
    skipped: Collection[str] = (),
    keep: Collection[str] | None = None,
    distinct: bool = False,
    member: Callable[[str], bool] | None = None,
) -> str | None:
    """The item the reviewer reviews next (claimed for them), or None when no item of
    ``candidates`` (the scope's keys in queue order) is what ``rule`` wants and free.

    An item the reviewer already holds comes first, so a refresh shows the same item again
    (``keep`` narrows that to the given items, e.g. the one on screen: ``[]`` starts at the
    front, as on a newly chosen scope); ``skipped`` (the reviewer's skipped items) come last, and
    once another item is theirs their other claims among the candidates are let go, so a skipped
    row goes back to the pool at once. The candidates are read :data:`WINDOW` at a time from the
    front (:data:`FIRST_WINDOW` first), so a call costs the same at 300 and at 300,000 items while
    the front of the queue has work. ``distinct``: the candidates are already distinct strings
    (the queue's index, sliced a window at a time, never copied whole); ``member``: whether a key
    is a candidate (its index answers without a set of 30,000 keys).
    """
    name = check_reviewer(reviewer)
    keys = candidates if distinct else list(dict.fromkeys(str(k) for k in candidates))
    later = {str(k) for k in skipped}
    if later:
        keys = [k for k in keys if k not in later] + [k for k in keys if k in later]
    now = utcnow()
    held = held_by(engine, name, now)
    wanted = held if keep is None else {str(k) for k in keep}
    if member is None or later:
        member = (set(keys) if held or wanted else set()).__contains__
    mine = {k for k in held if member(k)}
    first = mine if keep is None else {k for k in wanted if member(k)}
    windows = [[k for k in keys if k in first and k not in later]] if first - later else []
    starts = [0, *range(FIRST_WINDOW, len(keys), WINDOW)]
    windows = itertools.chain(windows, (list(keys[a:b]) for a, b in zip(starts, [*starts[1:], len(keys)]) if a < b))
    for window in windows:
        found = _first_open(engine, run_id, name, window, now, ttl, rule)
        if found is not None:
            release_claims(engine, name, mine - {found}, now)
            return found
    return None


def _first_open(
    engine: Engine,
    run_id: int,
    name: str,
    window: list[str],
    now: datetime,
    ttl: timedelta,
    rule: ClaimRule = DOUBLE_BLIND,
) -> str | None:
    """Claim the first item of ``window`` open to ``name``: read what the window's items hold
    (verdicts, claims) in two queries, then try the open ones in order (each try re-checks).

    An item the reviewer holds for more than half the TTL yet is served without a write (a rerun
    after every press need not wait for a busy database's write lock to show the same row)."""
    judged = judged_by(engine, window)
    held = claims_on(engine, window)
    for key in window:
        done = judged.get(key, set())
        if name in done or not rule.wants(len(done)):
            continue
        holder = held.get(key)
        if holder and holder[0] != name and holder[1] >= now and holder[0] not in done:
            continue  # someone else's live claim
        if holder and holder[0] == name and holder[1] >= now + ttl / 2:
            return key  # held for a while yet: nobody else can take it
        if try_claim(engine, key, run_id, name, now, ttl, rule.wants):
            return key
    return None


def release(engine: Engine, reviewer: str, keys: Collection[str]) -> None:
    """Let go of the reviewer's claims on ``keys`` (a row left for another scope or mode)."""
    release_claims(engine, check_reviewer(reviewer), keys, utcnow())
