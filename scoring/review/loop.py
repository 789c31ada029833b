"""One reviewer's pass through the queue in one browser tab: which row is on which screen, and
what each key press or click does.

A key press or click carries the number of the screen (one showing of one row) the reviewer was
looking at when they gave it, and applies to that screen's row, exactly once (a press is known by
its sequence number), whether or not the page has since moved on: reruns in the browser lag
behind fast typing, so a press often arrives after the server has already shown the next row, and
the person pressed on the row they saw (Prodigy's model). A press given while no row was shown
(the page still loading, the scope finished) is refused, and said so once; so is a verdict or a
skip pressed on a row shown for less than :attr:`ReviewLoop.min_shown_ms` (``REVIEW_MIN_SHOWN_MS``,
150 ms): no person can have read a row that fast, so it is the second key of a double tap, or a
key meant for the row before, and the card asks to press again. A write that fails (database busy
or unwritable) leaves the screen open, so the next press on it retries.

Nothing typed is lost: the reason and note typed on a screen go with its mark or skip, and a note
typed on a row that an undo takes off the screen is kept for that row (:attr:`ReviewLoop.drafts`).

No streamlit here: the page keeps a :class:`ReviewLoop` in the session and renders what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import Engine

from scoring.core.errors import NotSaved
from scoring.core.settings import default_of, lookup
from scoring.store import verdict_log

#: The keyboard: letter -> action (``correct``/``wrong`` are marks).
ACTION_KEYS: dict[str, str] = {"y": "correct", "n": "wrong", "s": "skip", "u": "undo"}
ACTIONS: tuple[str, ...] = ("correct", "wrong", "skip", "undo")
#: How many past screens a press can still name: far more than a person presses ahead of the page.
SCREENS_KEPT = 256
NO_ROW = "came while no row was shown and {verb} not applied: nothing was saved."
#: The setting: how long a row must have been on screen before a verdict or skip pressed on it counts.
MIN_SHOWN_SETTING = "REVIEW_MIN_SHOWN_MS"
#: The actions that judge the row on screen, and so wait until it can have been seen (an undo
#: takes back the previous mark: it judges nothing shown).
JUDGING: frozenset[str] = frozenset({"correct", "wrong", "skip"})
JUST_APPEARED = "Row {row} had just appeared: press again."


def min_shown_ms(secrets: Mapping | None = None, environ: Mapping[str, str] | None = None) -> float:
    """``REVIEW_MIN_SHOWN_MS`` as a number of milliseconds (the environment, then secrets, then
    150). A value that is not a number of zero or more is a ValueError that names the setting:
    the dashboard says so rather than guess how fast its reviewers are."""
    raw = lookup(MIN_SHOWN_SETTING, secrets, environ)
    if raw is None:
        return float(default_of(MIN_SHOWN_SETTING))
    try:
        value = float(str(raw).strip())
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ValueError(f"{MIN_SHOWN_SETTING} must be a number of milliseconds, 0 or more; it is {raw!r}.")
    return value


@dataclass(frozen=True)
class Screen:
    """One showing of one row; a new showing (even of the same row) gets a new number."""

    number: int
    row_idx: int
    item_key: str
    via: str = verdict_log.QUEUE  #: how the row came: the queue's order, or opened on purpose


@dataclass(frozen=True)
class Press:
    """A key press as the browser reports it: its sequence number (its identity: the browser
    resends a press until acknowledged), the key, and the screen shown when it was pressed, read
    from the row's own block on the page (``None``: no row was shown). ``run`` and ``item`` name
    that screen's run and row, so a press is never applied to another run's screen of the same
    number, nor to a row other than the one the block showed."""

    seq: int
    key: str
    screen: int | None
    run: int | None = None
    item: str | None = None
    #: How long the row had been painted when the key went down (the browser's clock; None: not
    #: measured, as from a page that predates it).
    shown_ms: float | None = None

    @classmethod
    def parse(cls, raw: Mapping) -> Press | None:
        """A press from the browser's JSON, or None for anything malformed."""
        try:
            screen = raw["screen"]
            run = raw.get("run")
            item = raw.get("item")
            shown = raw.get("shown_ms")
            return cls(
                int(raw["seq"]),
                str(raw["key"]).lower(),
                None if screen is None or int(screen) <= 0 else int(screen),
                None if run is None else int(run),
                None if item is None else str(item),
                None if shown is None else float(shown),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


@dataclass(frozen=True)
class Feedback:
    """What happened, for the reviewer: ``saved``, ``info``, ``refused`` or ``error``."""

    kind: str
    text: str


@dataclass
class ReviewLoop:
    """The queue's state for one run in one session (see the module docstring)."""

    run_id: int
    screen: Screen | None = None
    consumed: set[int] = field(default_factory=set)
    next_number: int = 1
    last_seq: int = 0
    #: A row to show instead of the queue's next one: opened on purpose, or reopened by an undo.
    opened: int | None = None
    #: What the presses since the last action (or the last new screen) did, for the page. A message
    #: stays until a page run has drawn it to its end (:meth:`feedback_drawn`) and the next action
    #: or screen comes: a rerun interrupted by the next press (Streamlit stops a running script
    #: when a widget changes) would otherwise lose "Row N had just appeared" unsaid.
    feedback: list[Feedback] = field(default_factory=list)
    #: How many of :attr:`feedback` a page run has drawn to its end (or :meth:`take_feedback` took).
    drawn: int = 0
    #: Presses refused because no row was shown when they were given (said once, as feedback).
    refused: int = 0
    #: The screens shown lately, by number: a press applies to the screen it names, even one the
    #: page has since replaced.
    screens: dict[int, Screen] = field(default_factory=dict)
    #: The reason and note read for each screen when it took a press: its fields are gone from the
    #: page once the next row is shown, and a later press on it must not blank them.
    noted: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: How ``opened`` reached the screen (``verdict_log.OPENED`` on purpose; an undo's row keeps
    #: the way it first came): saved with the mark, since only queue rows extend the estimate.
    opened_via: str = verdict_log.QUEUE
    #: The way each row this session marked had come (for an undo's reopened row).
    via_of: dict[str, str] = field(default_factory=dict)
    #: Why this session cannot mark (no name typed, not on the reviewers list, no proxy header),
    #: said when a press arrives without a reviewer; the page keeps it current.
    cannot_mark: str = "Type your name in the sidebar first."
    #: A verdict or skip pressed on a row shown for less than this (ms) is refused (:data:`JUST_APPEARED`).
    min_shown_ms: float = 150.0
    #: The reason and note typed on a row that left the screen without taking them (an undo
    #: reopened another row), by item key: the card offers them again when the row comes back.
    drafts: dict[str, tuple[str, str]] = field(default_factory=dict)

    # ------------------------------------------------------------------ what is on screen

    def show(self, row_idx: int, item_key: str) -> Screen:
        """The screen for ``row_idx``: the current one while it shows that row and took no action."""
        current = self.screen
        if current is not None and current.row_idx == row_idx and current.number not in self.consumed:
            return current
        self._forget_drawn()
        via = self.opened_via if self.opened is not None and int(row_idx) == self.opened else verdict_log.QUEUE
        self.screen = Screen(self.next_number, int(row_idx), item_key, via)
        self.screens[self.screen.number] = self.screen
        for old in [n for n in self.screens if n <= self.screen.number - SCREENS_KEPT]:
            self.screens.pop(old, None)
            self.noted.pop(old, None)
            self.consumed.discard(old)
        self.next_number += 1
        return self.screen

    def show_nothing(self) -> None:
        """Nothing to mark is shown (scope finished or empty): presses then apply to nothing."""
        self.screen = None
        self._forget_drawn()

    def open_row(self, row_idx: int) -> None:
        """Show ``row_idx`` next, whatever the queue order (a deliberate revisit): its mark is
        saved as given on an opened row, outside the estimate's random sample."""
        self.opened = int(row_idx)
        self.opened_via = verdict_log.OPENED

    def take_feedback(self) -> list[Feedback]:
        """The messages not taken or drawn before (each is taken once)."""
        out = self.feedback[self.drawn :]
        self.drawn = len(self.feedback)
        return out

    def feedback_to_show(self) -> list[Feedback]:
        """What the presses since the last action or new screen did: drawn again by every page run
        until the next action or screen, so a run cut short never loses one."""
        return list(self.feedback)

    def feedback_drawn(self) -> None:
        """A page run drew :meth:`feedback_to_show` to its end: the next action or screen replaces it."""
        self.drawn = len(self.feedback)

    def _forget_drawn(self) -> None:
        del self.feedback[: self.drawn]
        self.drawn = 0

    # ------------------------------------------------------------------ actions

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
        """Apply ``action`` to the row of ``screen``, whether or not that screen is still the one
        shown: it is the row the reviewer was looking at. A screen never shown (``None``: no row
        was on the page) is refused.

        ``row_of`` maps an item key to its row in this run (for the undo message).
        """
        if action not in ACTIONS:
            raise ValueError(f"Unknown action {action!r}: expected one of {', '.join(ACTIONS)}.")
        self._forget_drawn()
        if not reviewer:
            return self._say("error", f"{self.cannot_mark} Nothing was saved.")
        target = self.screens.get(screen) if screen is not None else None
        if target is None:
            self.refused += 1
            return self._say("refused", "A key press " + NO_ROW.format(verb="was"))
        row = target.row_idx + 1
        try:
            if action == "undo":
                undone = verdict_log.undo_last_mark(engine, reviewer, run_id=self.run_id)
                self.consumed.add(target.number)
                if reason or note:  # typed on the row the undo takes off the screen: kept for it
                    self.drafts[target.item_key] = (reason, note)
                if undone is None:
                    return self._say("info", "Nothing to undo in this run.")
                back = row_of(undone.item_key)
                self.opened = back
                self.opened_via = self.via_of.get(undone.item_key, verdict_log.QUEUE)
                where = f"row {back + 1}" if back is not None else "an item"
                text = f"Undone: your '{undone.verdict}' on {where} is taken back; it is shown again."
                if undone.skips_passed:
                    text += (
                        f" Undo takes back marks only: the {undone.skips_passed} skip(s) you gave after it "
                        "stay skipped."
                    )
                return self._say("saved", text)
            if action == "skip":
                verdict_log.record_skip(engine, target.item_key, self.run_id, reviewer, target.via, reason, note)
                text = f"Skipped row {row}: it comes back after the rows you have not seen."
            else:
                verdict_log.record_mark(
                    engine, target.item_key, self.run_id, reviewer, action, reason, note, via=target.via
                )
                self.via_of[target.item_key] = target.via
                text = f"Saved: row {row} marked {action}."
        except NotSaved as exc:
            return self._say("error", f"Row {row} was NOT saved. {exc} The row stays on screen.")
        self.drafts.pop(target.item_key, None)  # given with the mark or skip, and read back from it
        self.consumed.add(target.number)
        if self.opened is not None and target.row_idx == self.opened:
            self.opened = None  # the row shown on purpose got its action; the queue's order resumes
        return self._say("saved", text)

    def take_presses(
        self,
        raw_presses: Iterable[Mapping],
        engine: Engine,
        reviewer: str,
        details: Callable[[int], tuple[str, str]] = lambda _screen: ("", ""),
        row_of: Callable[[str], int | None] = lambda _key: None,
    ) -> None:
        """Apply the presses not seen before, in the order they were pressed, each to the row of
        the screen it names.

        The browser resends every press until the page acknowledges it (``last_seq``), so a
        press is never lost between reruns; one already taken is ignored, and so is one naming
        another run (that run's loop takes it). ``details(screen)`` gives the reason and note
        typed on that screen, while its fields are on the page. After a failed write the rest of
        the batch is not tried (the database is not taking writes) and is said to be unsaved.
        """
        self._forget_drawn()
        presses = sorted((p for p in map(Press.parse, raw_presses) if p is not None), key=lambda p: p.seq)
        refused = unsaved = 0
        early: list[int] = []  # rows pressed on before they could be seen, in order
        failed = False
        for press in presses:
            if press.seq <= self.last_seq or (press.run is not None and press.run != self.run_id):
                continue
            self.last_seq = press.seq
            action = ACTION_KEYS.get(press.key)
            if action is None:
                continue
            if not reviewer:
                self.act(engine, reviewer, action, press.screen)  # says why, once
                continue
            if failed:
                unsaved += 1
                continue
            target = self.screens.get(press.screen) if press.screen is not None else None
            if target is None or (press.item is not None and press.item != target.item_key):
                refused += 1
                self.refused += 1
                continue
            if action in JUDGING and press.shown_ms is not None and press.shown_ms < self.min_shown_ms:
                early.append(target.row_idx + 1)
                continue
            reason, note = self._details(target.number, details)
            outcome = self.act(engine, reviewer, action, target.number, reason, note, row_of)
            failed = outcome.kind == "error"
        for row in dict.fromkeys(early):  # said where the reviewer looks, once per row
            self._say("refused", JUST_APPEARED.format(row=row))
        if refused:
            self._say("refused", f"{refused} key press(es) " + NO_ROW.format(verb="were"))
        if unsaved:
            self._say(
                "error", f"{unsaved} later key press(es) were not saved either. Press again once the row is saved."
            )

    def draft(self, item_key: str) -> tuple[str, str] | None:
        """The reason and note typed on ``item_key``'s row before it left the screen untaken, if any."""
        return self.drafts.get(item_key)

    def _details(self, screen: int, details: Callable[[int], tuple[str, str]]) -> tuple[str, str]:
        """The reason and note of ``screen``: read from its fields while it is the screen shown,
        else as they were when it last took a press (its fields have left the page since)."""
        current = self.screen is not None and self.screen.number == screen
        if current or screen not in self.noted:
            self.noted[screen] = details(screen)
        return self.noted[screen]

    def _say(self, kind: str, text: str) -> Feedback:
        feedback = Feedback(kind, text)
        if not self.feedback or self.feedback[-1] != feedback:  # one box for a repeated message
            self.feedback.append(feedback)
        return feedback
