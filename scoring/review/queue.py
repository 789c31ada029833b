"""The review queue over a run: which rows a reviewer sees next, and how far a scope is reviewed.

Built once per scope (:class:`QueueScope`), so marking costs work in proportion to the reviewer's
own marks, not to the run's size.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import polars as pl
from sqlalchemy import Engine

from scoring.core.order import review_order
from scoring.core.protocols import BUCKETS
from scoring.core.report import COMBINED
from scoring.core.row_language import LANGUAGE
from scoring.core.verdict_rules import current_marks, isin
from scoring.review.claim_rules import SPLIT, ClaimRule, claim_next, reviewers_per_item
from scoring.review.reader_languages import reads
from scoring.review.verdict_table import VerdictTable
from scoring.store.audit import AUDIT
from scoring.store.verdict_log import STATE_COLUMNS, read_events, reviewer_state

# --------------------------------------------------------------------------- queue and progress


def rows_in_scope(
    scored: pd.DataFrame,
    bucket: str | None,
    domain: str | Sequence[str] | None,
    rows: Sequence[int] | None = None,
    keys: Collection[str] | None = None,
    language: str | None = None,
) -> pd.DataFrame:
    """Rows of a bucket (None: all; :data:`AUDIT`: the rows whose item key is in ``keys``), a
    domain (or several), a row language (None: any) and optionally given row_idx values.
    Columns: row_idx, item_key, Domain, language (blank where the rows carry none)."""
    if bucket is not None and bucket not in (*BUCKETS, AUDIT):
        raise ValueError(f"Unknown bucket {bucket!r}: expected one of {', '.join(BUCKETS)} or {AUDIT}.")
    mask = np.ones(len(scored), dtype=bool)
    if bucket == AUDIT:
        mask &= isin(scored["item_key"], keys or ())
    elif bucket is not None:
        mask &= (scored["bucket"] == bucket).to_numpy()
    if domain is not None:
        domains = [domain] if isinstance(domain, str) else list(domain)
        mask &= isin(scored["Domain"], domains)
    if rows is not None:
        mask &= scored["row_idx"].isin(list(rows)).to_numpy()
    if language is not None:
        mask &= (row_languages(scored) == language).to_numpy()
    columns = ["row_idx", "item_key", "Domain", *([LANGUAGE] if LANGUAGE in scored.columns else [])]
    found = scored.loc[mask, columns]
    return found.assign(language=row_languages(found))


def row_languages(scored: pd.DataFrame) -> pd.Series:
    """Each row's language as the queue filters on it (:data:`LANGUAGE`; blank without one: the
    store fills and trims it for every run, :func:`scoring.core.row_language.fill_languages`)."""
    if LANGUAGE not in scored.columns:
        return pd.Series("", index=scored.index, dtype=object)
    return scored[LANGUAGE].astype(object).fillna("")


def sampled_rows_in_scope(
    scored: pd.DataFrame,
    bucket: str | None,
    domain: str | Sequence[str] | None,
    sample: int | None,
    seed: int,
    keys: Collection[str] | None = None,
    language: str | None = None,
) -> pd.DataFrame:
    """The scope's rows in review order (the run's seeded random permutation, see
    :mod:`scoring.core.order`), or the first ``sample`` of them: a simple random sample of the
    scope, the same rows every time, whatever has been reviewed since.

    ``language`` narrows the rows after the sample is drawn: a sample is the bucket's and
    domain's, the same rows for every reviewer whatever languages they read (a team splitting a
    sample of 50 by language reviews those 50 together), and its rows in one language are still a
    prefix of that language's review order, so still a random sample of them."""
    scope = rows_in_scope(scored, bucket, domain, keys=keys)
    if sample is not None and sample < 0:
        raise ValueError(f"Sample size must be zero or more, not {sample}.")
    scope = scope.iloc[review_order(scope["item_key"].to_numpy(dtype=object), seed)]
    scope = scope.iloc[:sample] if sample is not None else scope
    return scope if language is None else scope[(scope["language"] == language).to_numpy()]


def _domain_codes(domains: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the domains sorted, each row's index into them)."""
    names, codes = np.unique(np.asarray(domains).astype(str), return_inverse=True)
    return names.astype(object), codes.reshape(-1)


def _counted_table(names: np.ndarray, codes: np.ndarray, done: np.ndarray) -> pd.DataFrame:
    """Reviewed k of n per domain (sorted), then ``combined``; columns domain, n, reviewed, remaining.
    Counted with ``bincount``: a pandas group-by was 20 ms of every key press at 100k rows."""
    n = np.bincount(codes, minlength=len(names))
    reviewed = np.bincount(codes, weights=done, minlength=len(names)).astype("int64")
    table = pd.DataFrame(
        {
            "domain": [*names.tolist(), COMBINED],
            "n": np.append(n, len(codes)).astype("int64"),
            "reviewed": np.append(reviewed, int(np.count_nonzero(done))).astype("int64"),
        }
    )
    table["remaining"] = table["n"] - table["reviewed"]
    return table


def _progress_table(domains: np.ndarray, done: np.ndarray) -> pd.DataFrame:
    """:func:`_counted_table` of rows given by their domains."""
    return _counted_table(*_domain_codes(domains), done)


def queue(
    scored: pd.DataFrame,
    reviewer: str | None,
    engine: Engine,
    bucket: str | None = "overlap_only",
    domain: str | Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    keys: Collection[str] | None = None,
    language: str | None = None,
) -> list[int]:
    """row_idx values in review order: unreviewed by this reviewer, then skipped, then reviewed.

    Within each group rows keep the scope's review order (a random permutation seeded by
    ``seed``, the run's ``review_seed``; the same for everyone and after a restart), so a queue
    recomputed after a refresh continues where the reviewer left off, and what reviewers get
    through is a random sample of the scope. ``sample=k`` takes the first k rows of that order.
    ``bucket=None`` means all rows; ``bucket=AUDIT`` the rows whose item key is in ``keys``;
    ``language`` the rows of one language (:func:`sampled_rows_in_scope`).
    """
    scope = sampled_rows_in_scope(scored, bucket, domain, sample, seed, keys, language)
    row_idx = scope["row_idx"].to_numpy()
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    if not name or scope.empty:
        return [int(i) for i in row_idx]
    marked, skipped = reviewer_state(engine, name, scope["item_key"])
    keys = scope["item_key"]
    rank = np.where(isin(keys, marked), 2, np.where(isin(keys, skipped), 1, 0))
    order = np.argsort(rank, kind="stable")  # review order within each group
    return [int(i) for i in row_idx[order]]


def progress(
    scored: pd.DataFrame,
    engine: Engine,
    reviewer: str | None = None,
    bucket: str | None = "overlap_only",
    domain: str | Sequence[str] | None = None,
    rows: Sequence[int] | None = None,
    keys: Collection[str] | None = None,
    language: str | None = None,
) -> pd.DataFrame:
    """Reviewed k of n per domain (sorted) and ``combined`` (last row) for a scope.

    Columns: domain, n, reviewed, remaining. Reviewed means a current verdict by anyone, or by
    ``reviewer`` when given. ``rows`` (row_idx values, e.g. a sampled queue) narrows the scope.
    """
    scope = rows_in_scope(scored, bucket, domain, rows, keys, language)
    name = reviewer.strip() if isinstance(reviewer, str) and reviewer.strip() else None
    if scope.empty:
        done = pd.Series(dtype=bool)
    else:
        events = read_events(engine, scope["item_key"], reviewer=name, actions=("mark", "undo"), columns=STATE_COLUMNS)
        reviewed_keys = current_marks(events)["item_key"] if not events.empty else pd.Series(dtype=object)
        done = pd.Series(isin(scope["item_key"], reviewed_keys), index=scope.index)
    return _progress_table(scope["Domain"].astype(str).to_numpy(), done.to_numpy(dtype=bool))


@dataclass(frozen=True)
class QueueScope:
    """The rows of one review scope, in queue order, built once per (run, bucket, domain, sample).

    Marking then costs work in proportion to the reviewer's marks, not to the run's size: the
    next row and the progress come from the reviewer's own events and lookups in this index.
    """

    row_idx: np.ndarray
    item_keys: np.ndarray
    domains: np.ndarray
    positions: dict[str, list[int]]  # item key -> positions in the scope (identical rows share one)
    languages: np.ndarray | None = None  #: each row's language (None: the rows carry none)
    language: str | None = None  #: the language the scope was narrowed to (None: any)

    def __len__(self) -> int:
        return len(self.row_idx)

    @functools.cached_property
    def domain_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(the scope's domains sorted, each row's index into them), kept for every press."""
        return _domain_codes(self.domains)

    @functools.cached_property
    def first_of_item(self) -> np.ndarray:
        """True at each item's first position: the candidates a claim tries, each item once."""
        first = np.zeros(len(self), dtype=bool)
        first[[places[0] for places in self.positions.values()]] = True
        return first

    def mask(self, item_keys: Iterable[str]) -> np.ndarray:
        """True at every position of ``item_keys`` in the scope, looked up key by key: a press
        costs work in proportion to the marks it reads, not to the scope's size."""
        hit = np.zeros(len(self), dtype=bool)
        places = [p for key in item_keys for p in self.positions.get(key, ())]
        hit[places] = True
        return hit

    def progress_table(self, done: np.ndarray) -> pd.DataFrame:
        """:func:`_progress_table` of this scope, on its kept :attr:`domain_codes`."""
        return _counted_table(*self.domain_codes, done)

    @functools.cached_property
    def language_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(the scope's row languages, distinct, each row's index into them), kept for every press."""
        rows = self.languages if self.languages is not None else np.full(len(self), "", dtype=object)
        codes, names = pd.factorize(rows)  # hashed: a tenth of np.unique's sort on 100,000 strings
        return np.asarray(names, dtype=object), codes

    def readable(self, reader: Collection[str]) -> np.ndarray:
        """True at the rows a reviewer who reads ``reader`` may be handed (every row when they
        set none: :func:`~scoring.review.reader_languages.reads`), decided once per distinct
        language: a press costs no pass over the scope's strings."""
        if not reader:
            return np.ones(len(self), dtype=bool)
        names, codes = self.language_codes
        return reads(names, reader)[codes] if len(self) else np.zeros(0, dtype=bool)


def queue_scope(
    scored: pd.DataFrame,
    bucket: str | None = "overlap_only",
    domain: str | Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    keys: Collection[str] | None = None,
    language: str | None = None,
) -> QueueScope:
    """The scope :func:`queue` orders, as an index for :func:`next_in_queue` and :func:`scope_progress`."""
    scope = sampled_rows_in_scope(scored, bucket, domain, sample, seed, keys, language)
    keys = scope["item_key"].to_numpy(dtype=object)
    positions: dict[str, list[int]] = {}
    for pos, key in enumerate(keys):
        positions.setdefault(key, []).append(pos)
    domains = scope["Domain"].astype(str).to_numpy(dtype=object)
    row_languages = scope["language"].to_numpy(dtype=object)
    return QueueScope(scope["row_idx"].to_numpy(), keys, domains, positions, row_languages, language)


def next_in_queue(scope: QueueScope, engine: Engine, reviewer: str | None) -> int | None:
    """row_idx of the row :func:`queue` would put first among the rows still without the
    reviewer's verdict (unreviewed, then skipped); None for an empty scope or one the reviewer
    has finished. A finished queue does not loop back: revisiting a verdict is a deliberate act.
    """
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    if not len(scope) or not name:
        return next_unmarked(scope, set(), set())
    marked, skipped = reviewer_state(engine, name, None)
    return next_unmarked(scope, set(marked), set(skipped))


def claim_in_queue(
    scope: QueueScope,
    engine: Engine,
    run_id: int,
    reviewer: str,
    rule: ClaimRule = SPLIT,
    counts: Mapping[str, int] | None = None,
    keep: Collection[str] | None = None,
    state: tuple[Collection[str], Collection[str]] | None = None,
    languages: Collection[str] = (),
) -> int | None:
    """row_idx of the row claimed for ``reviewer`` next (see :mod:`scoring.review.claim_rules`): the
    first in queue order that ``rule`` wants, without their verdict and held by nobody else,
    their skipped rows last. None when no such row is left (or free) right now.

    With :data:`~scoring.review.claim_rules.SPLIT` reviewers of one scope get different rows, each the
    front of what is left, so the rows a team has reviewed stay a prefix of the seeded order.
    ``counts`` (:func:`~scoring.review.claim_rules.reviewers_per_item`, read here when not given) passes
    over the rows the rule no longer wants; each try still re-checks on fresh data. ``keep``:
    the rows to serve first if still open (default: every row the reviewer holds; ``[]`` on a
    scope just chosen, so it starts at its front), as for :func:`~scoring.review.claim_rules.claim_next`.
    ``state``: the reviewer's (marked, skipped) keys when the caller has just read them.
    ``languages``: the languages the reviewer reads (:mod:`scoring.review.reader_languages`):
    only rows in them are handed out; none set, any row.
    """
    marked, skipped = reviewer_state(engine, reviewer, None) if state is None else state
    counts = reviewers_per_item(engine) if counts is None else counts
    given = np.zeros(len(scope), dtype=np.int64)
    for key, n in counts.items():  # the items with a verdict, not every row of the scope
        given[scope.positions.get(key, [])] = n
    wanted = (given >= rule.least) & (given < rule.needed) & ~scope.mask(marked) & scope.first_of_item
    wanted &= scope.readable(languages)
    candidates = scope.item_keys[wanted]
    places = scope.positions
    key = claim_next(
        engine,
        run_id,
        reviewer,
        candidates,
        rule=rule,
        skipped=set(skipped),
        keep=keep,
        distinct=True,
        member=lambda k: k in places and bool(wanted[places[k][0]]),
    )
    return int(scope.row_idx[scope.positions[key][0]]) if key is not None else None


def resume(seen: Hashable | None, here: Hashable, on_screen: str | None) -> tuple[list[str] | None, list[str]]:
    """What a tab's claiming queue serves first, and which claim it lets go, from the scope (and
    rule) it showed last (``seen``; None in a new session), the one chosen now, and the item on
    screen: ``(keep, let_go)`` for :func:`claim_in_queue` and :func:`~scoring.review.claim_rules.release`.

    A new session (a refresh) serves the rows the reviewer holds first; the same scope keeps the
    row on screen; a newly chosen scope or mode starts at its front and lets the row go.
    """
    if seen is None:
        return None, []
    if seen != here:
        return [], [on_screen] if on_screen is not None else []
    return ([on_screen] if on_screen is not None else None), []


def team_progress(scope: QueueScope, counts: Mapping[str, int]) -> pd.DataFrame:
    """The table of :func:`scope_progress` counting every reviewer's verdicts, from
    :func:`~scoring.review.claim_rules.reviewers_per_item` (read once per press for the claim as well)."""
    return scope.progress_table(scope.mask(k for k, n in counts.items() if n))


def hold(engine: Engine, run_id: int, reviewer: str, item_key: str, rule: ClaimRule = SPLIT) -> bool:
    """Claim a row shown on purpose (opened, or reopened by an undo) while it is on screen, so
    the queue does not hand it to someone else meanwhile; False when it is not free or not wanted."""
    return claim_next(engine, run_id, reviewer, [item_key], rule=rule) is not None


def next_unmarked(scope: QueueScope, marked: set[str], skipped: set[str]) -> int | None:
    """row_idx of the scope's first row without a verdict in ``marked``, the skipped ones last."""
    first_skipped = None
    for pos, key in enumerate(scope.item_keys):
        if key in marked:
            continue
        if key in skipped:
            first_skipped = pos if first_skipped is None else first_skipped
        else:
            return int(scope.row_idx[pos])
    return int(scope.row_idx[first_skipped]) if first_skipped is not None else None


def unreviewed_in(table: VerdictTable, bucket: str = "overlap_only") -> int:
    """Rows of ``bucket`` with no current verdict by anyone: what the queue's progress over
    everyone (:func:`scope_progress`) leaves in that bucket's scope, counted on the run's verdict
    table (which the pages hold already) instead of a scope built and ordered for it."""
    reviewed = pl.Series(table.current["item_key"].astype(str).tolist(), dtype=pl.String)
    waiting = (table.keys["bucket"] == bucket) & ~table.keys["item_key"].is_in(reviewed.implode())
    return int(waiting.sum())


def queue_position(scope: QueueScope, engine: Engine, reviewer: str | None) -> tuple[int | None, pd.DataFrame]:
    """:func:`next_in_queue` and :func:`scope_progress` from one read of the reviewer's events:
    what the queue page needs after every mark."""
    name = reviewer.strip() if isinstance(reviewer, str) else ""
    if not name:
        return next_in_queue(scope, engine, None), scope_progress(scope, engine, None)
    marked, skipped = reviewer_state(engine, name, None)
    return next_unmarked(scope, set(marked), set(skipped)), scope.progress_table(scope.mask(marked))


def scope_progress(scope: QueueScope, engine: Engine, reviewer: str | None = None) -> pd.DataFrame:
    """Same table as :func:`progress`, from the reviewer's events (or everyone's) and the index."""
    name = reviewer.strip() if isinstance(reviewer, str) and reviewer.strip() else None
    events = read_events(engine, None, reviewer=name, actions=("mark", "undo"), columns=STATE_COLUMNS)
    marked = current_marks(events)["item_key"] if not events.empty else ()
    return scope.progress_table(scope.mask(marked))
