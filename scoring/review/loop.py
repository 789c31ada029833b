"""One reviewer's pass through the queue in one browser tab: which row is on which screen, and
which screens have already taken an action.

A key press or click carries the number of the screen it was given on. Reruns in the browser lag
behind fast typing, so several presses can arrive while the same row is still shown; the first
applies to that row and the rest are dropped and reported ("too fast: press again"), never
applied to the row again, nor to a row the reviewer has not seen. A write that fails (database
busy or unwritable) leaves the screen open, so the next press on it retries.

No streamlit here: the page keeps a :class:`ReviewLoop` in the session and renders what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import Engine

from scoring.core.errors import NotSaved
from scoring.store import verdict_log

#: The keyboard: letter -> action (``correct``/``wrong`` are marks).
ACTION_KEYS: dict[str, str] = {"y": "correct", "n": "wrong", "s": "skip", "u": "undo"}
ACTIONS: tuple[str, ...] = ("correct", "wrong", "skip", "undo")


@dataclass(frozen=True)
class Screen:
    """One showing of one row; a new showing (even of the same row) gets a new number."""

    number: int
    row_idx: int
    item_key: str
    via: str = verdict_log.QUEUE  #: how the row came: the queue's order, or opened on purpose


@dataclass(frozen=True)
class Press:
    """A key press as the browser reports it: its sequence number, the key, the screen shown."""

    seq: int
    key: str
    screen: int

    @classmethod
    def parse(cls, raw: Mapping) -> Press | None:
        """A press from the browser's JSON, or None for anything malformed."""
        try:
            return cls(int(raw["seq"]), str(raw["key"]).lower(), int(raw["screen"]))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Feedback:
    """What happened, for the reviewer: ``saved``, ``info``, ``dropped`` or ``error``."""

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
    feedback: list[Feedback] = field(default_factory=list)
    #: Presses dropped as too fast since the queue was opened in this tab (shown until it closes).
    dropped: int = 0
    #: How ``opened`` reached the screen (``verdict_log.OPENED`` on purpose; an undo's row keeps
    #: the way it first came): saved with the mark, since only queue rows extend the estimate.
    opened_via: str = verdict_log.QUEUE
    #: The way each row this session marked had come (for an undo's reopened row).
    via_of: dict[str, str] = field(default_factory=dict)
    #: Why this session cannot mark (no name typed, not on the reviewers list, no proxy header),
    #: said when a press arrives without a reviewer; the page keeps it current.
    cannot_mark: str = "Type your name in the sidebar first."

    # ------------------------------------------------------------------ what is on screen

    def show(self, row_idx: int, item_key: str) -> Screen:
        """The screen for ``row_idx``: the current one while it shows that row and took no action."""
        current = self.screen
        if current is not None and current.row_idx == row_idx and current.number not in self.consumed:
            return current
        via = self.opened_via if self.opened is not None and int(row_idx) == self.opened else verdict_log.QUEUE
        self.screen = Screen(self.next_number, int(row_idx), item_key, via)
        self.next_number += 1
        return self.screen

    def show_nothing(self) -> None:
        """Nothing to mark is shown (scope finished or empty): presses then apply to nothing."""
        self.screen = None

    def open_row(self, row_idx: int) -> None:
        """Show ``row_idx`` next, whatever the queue order (a deliberate revisit): its mark is
        saved as given on an opened row, outside the estimate's random sample."""
        self.opened = int(row_idx)
        self.opened_via = verdict_log.OPENED

    def take_feedback(self) -> list[Feedback]:
        """The messages since the last call (each is shown once)."""
        out, self.feedback = self.feedback, []
        return out

    # ------------------------------------------------------------------ actions

    def act(
        self,
        engine: Engine,
        reviewer: str,
        action: str,
        screen: int,
        reason: str = "",
        note: str = "",
        row_of: Callable[[str], int | None] = lambda _key: None,
    ) -> Feedback:
        """Apply ``action`` to the row of ``screen`` if that screen is still open; else drop it.

        ``row_of`` maps an item key to its row in this run (for the undo message).
        """
        if action not in ACTIONS:
            raise ValueError(f"Unknown action {action!r}: expected one of {', '.join(ACTIONS)}.")
        if not reviewer:
            return self._say("error", f"{self.cannot_mark} Nothing was saved.")
        current = self.screen
        if current is None:
            return self._say("info", "There is no row to mark here: the press was not applied.")
        if screen != current.number or screen in self.consumed:
            self.dropped += 1
            return self._say("dropped", "Too fast: a press arrived before the next row was shown and was not applied. "
                                        "Press again.")  # fmt: skip
        row = current.row_idx + 1
        try:
            if action == "undo":
                undone = verdict_log.undo_last_mark(engine, reviewer, run_id=self.run_id)
                self.consumed.add(screen)
                if undone is None:
                    return self._say("info", "Nothing to undo in this run.")
                back = row_of(undone.item_key)
                self.opened = back
                self.opened_via = self.via_of.get(undone.item_key, verdict_log.QUEUE)
                where = f"row {back + 1}" if back is not None else "an item"
                text = f"Undone: your '{undone.verdict}' on {where} is taken back; it is shown again."
                if undone.skips_passed:
                    text += (f" Undo takes back marks only: the {undone.skips_passed} skip(s) you gave after it "
                             "stay skipped.")  # fmt: skip
                return self._say("saved", text)
            if action == "skip":
                verdict_log.record_skip(engine, current.item_key, self.run_id, reviewer, current.via)
                text = f"Skipped row {row}: it comes back after the rows you have not seen."
            else:
                verdict_log.record_mark(engine, current.item_key, self.run_id, reviewer, action, reason, note,
                                        via=current.via)  # fmt: skip
                self.via_of[current.item_key] = current.via
                text = f"Saved: row {row} marked {action}."
        except NotSaved as exc:
            return self._say("error", f"Row {row} was NOT saved. {exc} The row stays on screen.")
        self.consumed.add(screen)
        self.opened = None
        return self._say("saved", text)

    def take_presses(
        self,
        raw_presses: Iterable[Mapping],
        engine: Engine,
        reviewer: str,
        details: Callable[[int], tuple[str, str]] = lambda _screen: ("", ""),
        row_of: Callable[[str], int | None] = lambda _key: None,
    ) -> None:
        """Apply the presses not seen before, in the order they were pressed.

        The browser resends every press until the page acknowledges it (``last_seq``), so a
        press is never lost between reruns; one already taken is ignored. ``details(screen)``
        gives the reason and note typed on that screen. After a failed write the rest of the
        batch is dropped (they were pressed on the same unsaved row).
        """
        presses = sorted((p for p in map(Press.parse, raw_presses) if p is not None), key=lambda p: p.seq)
        dropped = 0
        failed = False
        for press in presses:
            if press.seq <= self.last_seq:
                continue
            self.last_seq = press.seq
            action = ACTION_KEYS.get(press.key)
            if action is None:
                continue
            if failed:
                dropped += 1
                self.dropped += 1
                continue
            reason, note = details(press.screen)
            before = len(self.feedback)
            outcome = self.act(engine, reviewer, action, press.screen, reason, note, row_of)
            if outcome.kind == "dropped":
                del self.feedback[before:]
                dropped += 1
            failed = outcome.kind == "error"
        if dropped:
            self._say("dropped", f"Too fast: {dropped} key press(es) arrived before the next row was shown and "
                                 "were not applied. Look at the row on screen and press again.")  # fmt: skip

    def _say(self, kind: str, text: str) -> Feedback:
        feedback = Feedback(kind, text)
        if not self.feedback or self.feedback[-1] != feedback:  # one box for a repeated message
            self.feedback.append(feedback)
        return feedback
