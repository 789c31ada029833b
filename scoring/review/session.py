"""One reviewer's review session on a run in one browser tab: the mode in force on the scope they
chose, the row they are handed next under its rule, and one method per thing they do.

The review page asks a :class:`ReviewSession` and lays out what it returns:

- :meth:`~ReviewSession.mode` when the page opens on a scope: which scopes of the run are
  double-blind and so which :class:`ReviewMode` applies (:meth:`~ReviewSession.set_double_blind`
  when an adjudicator switches it; :meth:`ReviewMode.chosen` adds the reviewer's own switches);
- :meth:`~ReviewSession.progress` then :meth:`~ReviewSession.next_row`: how far the scope is
  reviewed, and the row to show (claimed for the reviewer under the mode's rule, held while it
  was opened on purpose, resumed after a refresh, let go when the scope or mode changes) or why
  there is none;
- :meth:`~ReviewSession.act` (a click: mark, skip, undo), :meth:`~ReviewSession.take_presses`
  (key presses), :meth:`~ReviewSession.open_row`, :meth:`~ReviewSession.start_reviewing` and
  :meth:`~ReviewSession.leave` (another page opens).

What each press or click does to the verdict log is :class:`~scoring.review.loop.ReviewLoop`'s
(the session keeps one); the claims are :mod:`scoring.review.claim_rules`'. No streamlit here:
the page keeps one session per run in its own state.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

import pandas as pd
from sqlalchemy import Engine

from scoring.core.errors import NotSaved
from scoring.review.blind import BlindRows, blind_rows
from scoring.review.claim_rules import SPLIT, BlindSpec, ClaimRule, blind_scopes, covers, release, rule_for, set_blind
from scoring.review.loop import Feedback, ReviewLoop, Screen
from scoring.review.queue import (
    QueueScope,
    claim_in_queue,
    hold,
    next_unmarked,
    queue_position,
    resume,
    team_progress,
)
from scoring.store.audit import AUDIT, audit_keys
from scoring.store.claim_table import reviewers_per_item
from scoring.store.engine import DatabaseError
from scoring.store.notes import last_details
from scoring.store.verdict_log import reviewer_state, verdict_in_force


class Shown(Enum):
    """What :meth:`ReviewSession.next_row` shows: a row, or why none."""

    ROW = "a row, claimed for the reviewer (or shown to someone who cannot mark)"
    HELD_OFF = "none: the review mode was just switched, nothing is held until the reviewer starts"
    NOTHING_FREE = "none: no row of the scope is what the rule hands out and free right now"
    CANNOT_MARK = "none: nobody who can mark (the rows still to review are counted)"
    FINISHED = "none: every row of the scope has the reviewer's verdict"
    EMPTY = "none: the scope has no rows"


@dataclass(frozen=True)
class ReviewMode:
    """The review mode in force on one queue scope: the run's double-blind scopes (as last read),
    whether one covers this scope, and the reviewer's own switches (:meth:`chosen`)."""

    scope: BlindSpec
    scopes: tuple[BlindSpec, ...] = ()
    double_blind: bool = False
    chose_blind: bool = False  #: the reviewer's "Blind review" switch
    second_opinion: bool = False  #: the reviewer's "Second opinion" switch
    blind_audit: bool = False  #: ``REVIEW_BLIND_AUDIT``: the random sample is shown blind
    #: The languages the reviewer reads (:mod:`scoring.review.reader_languages`): a claiming queue
    #: hands them only rows in these; none, any row.
    languages: tuple[str, ...] = ()

    @property
    def wider(self) -> list[str]:
        """The wider double-blind scopes that make this one blind (it cannot be switched off here)."""
        return [s.label() for s in self.scopes if covers(s, self.scope) and s != self.scope]

    @property
    def elsewhere(self) -> list[str]:
        """The run's double-blind scopes that do not cover this one."""
        return [s.label() for s in self.scopes if not covers(s, self.scope)]

    @property
    def blind(self) -> bool:
        """The metrics' verdicts and the judge's label are hidden on every row (double-blind, or chosen)."""
        return self.double_blind or self.chose_blind

    @property
    def audited(self) -> bool:
        """Shown blind as a random sample (a blind audit): the audit scope or a sample, not chosen blind."""
        return self.blind_audit and not self.blind and (self.scope.bucket == AUDIT or bool(self.scope.sample))

    @property
    def rule(self) -> ClaimRule:
        return rule_for(self.double_blind, self.second_opinion)

    def chosen(
        self, blind: bool | None = None, second_opinion: bool | None = None, languages: Iterable[str] | None = None
    ) -> ReviewMode:
        """This mode with the reviewer's switches as set on the page (and the languages they read)."""
        return replace(
            self,
            chose_blind=self.chose_blind if blind is None else blind,
            second_opinion=self.second_opinion if second_opinion is None else second_opinion,
            languages=self.languages if languages is None else tuple(languages),
        )

    @property
    def reads_line(self) -> str:
        """The card's words for the languages the reviewer reads ("" when none is set: any row)."""
        return f"Your languages: {', '.join(self.languages)}" if self.languages else ""

    def blind_rows(self, scored: pd.DataFrame, seed: int, audit: Collection[str]) -> BlindRows:
        """The run's rows shown blind in this mode (:func:`~scoring.review.blind.blind_rows`)."""
        return blind_rows(
            scored, self.scopes, seed, audit, chose_blind=self.blind, blind_audit=self.blind_audit, viewing=self.scope
        )


@dataclass(frozen=True)
class ScopeProgress:
    """How far the scope is reviewed: ``table`` per domain (``combined`` last), the team's marks
    under the split rule, else the reviewer's own; ``first`` is the reviewer's next row by the
    queue's order alone, ``counts`` the reviewers per item (read once for the claim as well)."""

    first: int | None
    table: pd.DataFrame
    counts: Mapping[str, int]
    mine_done: int
    total: int
    team: bool
    #: The reviewer's (marked, skipped) item keys, read once per press for the claim as well.
    state: tuple[Collection[str], Collection[str]] | None = None

    @property
    def done(self) -> int:
        return int(self.table.iloc[-1]["reviewed"])


@dataclass(frozen=True)
class Turn:
    """What the queue shows now: a row on ``screen`` (``shown`` is :attr:`Shown.ROW`) or why
    none; ``busy`` when the claim could not be written (the row that was on screen stays)."""

    shown: Shown
    screen: Screen | None = None
    busy: bool = False


@dataclass(frozen=True)
class GivenVerdict:
    """The reviewer's verdict in force on a row, and the run it was given in (None: this one)."""

    verdict: str
    other_run: int | None


@dataclass
class ReviewSession:
    """One run's queue in one tab: its :class:`ReviewLoop` and the claim protocol's state."""

    run_id: int
    loop: ReviewLoop = field(init=False)  #: screens, presses taken, messages
    #: The scope and rule the queue last claimed in (None: a new session, i.e. a refresh).
    claimed_in: Hashable | None = None
    #: The review mode was just switched: no row is held until the reviewer starts reviewing.
    hold_off: bool = False
    #: Per queue scope, the run's double-blind scopes last read (kept while the database is out).
    blind_seen: dict[tuple, tuple[BlindSpec, ...]] = field(default_factory=dict)
    #: The run's audit rows last read (kept while the database is out).
    audit_seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.loop = ReviewLoop(self.run_id)

    @property
    def cannot_mark(self) -> str:
        """Why this session cannot mark (said when a press comes without a reviewer)."""
        return self.loop.cannot_mark

    @cannot_mark.setter
    def cannot_mark(self, why: str) -> None:
        self.loop.cannot_mark = why

    @property
    def min_shown_ms(self) -> float:
        """How long a row must be on screen before a verdict pressed on it counts (ms)."""
        return self.loop.min_shown_ms

    @min_shown_ms.setter
    def min_shown_ms(self, ms: float) -> None:
        self.loop.min_shown_ms = ms

    @property
    def last_seq(self) -> int:
        """The last key press this run's queue has taken."""
        return self.loop.last_seq

    # ------------------------------------------------------------------ opening a scope

    def audit(self, engine: Engine) -> set[str]:
        """The run's audit rows. While the database cannot be reached, the ones read last: a moment
        of a busy or unreachable database must not take the audit scope off the scopes offered (and
        the reviewer back to a triage scope); the queue says the database is out."""
        try:
            self.audit_seen = audit_keys(engine, self.run_id)
        except DatabaseError:
            pass
        return set(self.audit_seen)

    def mode(self, engine: Engine, scope: BlindSpec, blind_audit: bool = False) -> ReviewMode:
        """The mode in force on ``scope``: double-blind when a blind scope of the run covers it.
        While the database cannot be reached, the scopes last read for it (the queue says the rest)."""
        try:
            scopes = tuple(blind_scopes(engine, self.run_id))
        except DatabaseError:
            scopes = self.blind_seen.get(scope.key(), ())
        self.blind_seen[scope.key()] = scopes
        return ReviewMode(scope, scopes, any(covers(s, scope) for s in scopes), blind_audit=blind_audit)

    def set_double_blind(self, engine: Engine, mode: ReviewMode, reviewer: str, on: bool) -> ReviewMode:
        """An adjudicator puts the scope into double-blind review or out of it. Switching claims
        nothing: one who came only to switch it holds no row until they start reviewing."""
        set_blind(engine, self.run_id, mode.scope, reviewer, on=on)
        self.hold_off = True
        return replace(mode, double_blind=on)

    def start_reviewing(self) -> None:
        """The reviewer starts reviewing in the mode just switched: the queue claims again."""
        self.hold_off = False

    # ------------------------------------------------------------------ the row to show

    def progress(self, engine: Engine, scope: QueueScope, reviewer: str, mode: ReviewMode) -> ScopeProgress:
        """How far ``scope`` is reviewed (raises the database's error when it cannot be reached)."""
        if not reviewer:
            first, table = queue_position(scope, engine, reviewer)
            return ScopeProgress(first, table, {}, int(table.iloc[-1]["reviewed"]), len(scope), False)
        marked, skipped = reviewer_state(engine, reviewer, None)
        first = next_unmarked(scope, set(marked), set(skipped))
        mine = scope.mask(marked)
        counts = reviewers_per_item(engine)
        team = mode.rule == SPLIT  # the team splits the scope: everyone's marks
        table = team_progress(scope, counts) if team else scope.progress_table(mine)
        return ScopeProgress(first, table, counts, int(mine.sum()), len(scope), team, (marked, skipped))

    def next_row(
        self,
        engine: Engine,
        scored: pd.DataFrame,
        scope: QueueScope,
        reviewer: str,
        mode: ReviewMode,
        progress: ScopeProgress,
    ) -> Turn:
        """The row to show now, claimed for the reviewer under the mode's rule, or why there is none.

        A row opened on purpose is held while on screen, whatever the order; else the same scope
        and rule keep the row on screen, a refresh serves the rows the reviewer holds first, and a
        newly chosen scope or mode starts at its front and lets the old row go. A claim the busy
        database could not write keeps the row on screen rather than hand out one another
        reviewer holds."""
        loop = self.loop
        if reviewer and self.hold_off:  # the row the old mode held is let go
            if loop.screen is not None:
                release(engine, reviewer, [loop.screen.item_key])
            self.claimed_in = None
            loop.show_nothing()
            return Turn(Shown.HELD_OFF)
        first, busy = progress.first, False
        if reviewer:
            try:
                first = self._claim(engine, scored, scope, reviewer, mode, progress.counts, progress.state)
            except NotSaved:
                busy = True
                first = loop.opened if loop.opened is not None else loop.screen.row_idx if loop.screen else None
        pos = loop.opened if loop.opened is not None else first
        if pos is None:
            loop.show_nothing()
            if reviewer and (mode.rule != SPLIT or progress.mine_done < progress.total):
                shown = Shown.NOTHING_FREE
            elif progress.total:
                shown = Shown.CANNOT_MARK if not reviewer else Shown.FINISHED
            else:
                shown = Shown.EMPTY
            return Turn(shown, busy=busy)
        return Turn(Shown.ROW, loop.show(pos, str(scored.iloc[pos]["item_key"])), busy)

    def _claim(
        self,
        engine: Engine,
        scored: pd.DataFrame,
        scope: QueueScope,
        reviewer: str,
        mode: ReviewMode,
        counts: Mapping[str, int],
        state: tuple[Collection[str], Collection[str]] | None = None,
    ) -> int | None:
        loop = self.loop
        if loop.opened is not None:  # shown on purpose: held while on screen, whatever the order
            hold(engine, self.run_id, reviewer, str(scored.iloc[loop.opened]["item_key"]), mode.rule)
            return loop.opened
        # A language filter or the reviewer's languages changed: the row on screen may be out of them.
        here = (mode.scope, mode.rule, mode.languages, scope.language)
        keep, let_go = resume(self.claimed_in, here, loop.screen.item_key if loop.screen is not None else None)
        self.claimed_in = here
        release(engine, reviewer, let_go)
        return claim_in_queue(scope, engine, self.run_id, reviewer, mode.rule, counts, keep, state, mode.languages)

    def offline_screen(self) -> Screen | None:
        """The database cannot be reached: the row that was on screen stays (presses on it say
        "Not saved")."""
        screen = self.loop.screen
        return self.loop.show(screen.row_idx, screen.item_key) if screen is not None else None

    def typed_before(self, engine: Engine, reviewer: str, item_key: str) -> tuple[str, str]:
        """(reason, note) the card's fields start from when ``item_key``'s row is shown: what was
        typed on it before an undo took it off the screen, else what the reviewer last gave with a
        mark or skip of it (so a note is never typed twice, nor blanked by marking the row again)."""
        return self.loop.draft(item_key) or last_details(engine, reviewer, item_key)

    def given(self, engine: Engine, reviewer: str, item_key: str) -> GivenVerdict | None:
        """The reviewer's verdict in force on ``item_key``, if any (for the card)."""
        found = verdict_in_force(engine, reviewer, item_key)
        if found is None:
            return None
        verdict, run_id = found
        return GivenVerdict(verdict, None if run_id is None or int(run_id) == self.run_id else int(run_id))

    # ------------------------------------------------------------------ actions

    def open_row(self, row_idx: int) -> None:
        """Show ``row_idx`` next, whatever the queue order (a deliberate revisit)."""
        self.loop.open_row(row_idx)

    def act(
        self,
        engine: Engine,
        reviewer: str,
        action: str,
        screen: int | None,
        reason: str = "",
        note: str = "",
        row_of: Callable[[str], int | None] = lambda _key: None,
    ) -> Feedback:
        """A click: mark (``correct``/``wrong``), ``skip`` or ``undo`` the row of ``screen``."""
        return self.loop.act(engine, reviewer, action, screen, reason, note, row_of=row_of)

    def take_presses(
        self,
        raw_presses: Iterable[Mapping],
        engine: Engine,
        reviewer: str,
        details: Callable[[int], tuple[str, str]] = lambda _screen: ("", ""),
        row_of: Callable[[str], int | None] = lambda _key: None,
    ) -> None:
        """Key presses, each applied once to the row of the screen it names."""
        self.loop.take_presses(raw_presses, engine, reviewer, details, row_of)

    def feedback_to_show(self) -> list[Feedback]:
        """What the presses since the last action or new screen did (drawn by every page run)."""
        return self.loop.feedback_to_show()

    def feedback_drawn(self) -> None:
        """A page run drew :meth:`feedback_to_show` to its end."""
        self.loop.feedback_drawn()

    def take_feedback(self) -> list[Feedback]:
        """The messages since the last call (each is shown once)."""
        return self.loop.take_feedback()

    def leave(self, engine: Engine, reviewer: str) -> None:
        """Another page opens: let go of the row on screen, so a reviewer who walks away keeps
        nobody else from it; coming back starts at the scope's front (what is left of it). Raises
        the database's error when it cannot be reached (the claim then expires on its own)."""
        if reviewer and self.loop.screen is not None:
            release(engine, reviewer, [self.loop.screen.item_key])
            self.loop.show_nothing()
        self.claimed_in = None
