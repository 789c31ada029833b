"""Real-browser test (issue 36, point 2): a press applies only to a row the reviewer has seen.

A double tap used to store a verdict on the next row, on screen for about a millisecond. Now a
press (key or click) on a row shown for less than ``REVIEW_MIN_SHOWN_MS`` (150 ms) stores nothing
and the card says "Row N had just appeared: press again"; every other press lands, once, on the
row on screen at its keydown, with that key's verdict.

The test keeps its own record of what was painted when (tests/queue_browser.py ``RECORD``: the
question in the main area, timed at the frame that paints it), so it checks the app against the
person's view, not against the app's own markers. Double taps 30-80 ms apart, presses 300 ms apart
and presses at a person's pace, each with and without a CPU hog on every core.
"""

from __future__ import annotations

from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Page, expect
from queue_browser import (
    MAIN,
    check_presses,
    cpu_hog,
    focus_page,
    item_keys_by_question,
    settle_presses,
    start_recording,
    stored_events,
    type_reviewer,
)
from queue_browser import overlap_csv as taps_csv


def _phase(
    page: Page, server: AppServer, keys_of: dict[str, str], reviewer: str, pattern: list[tuple[str, int]], where: str
) -> tuple[int, int]:
    """Press each key of ``pattern`` and wait its pause after it; then check every press."""
    before = len(stored_events(server.db_url, reviewer))
    start_recording(page, "tq")
    focus_page(page)
    for key, pause_ms in pattern:
        page.keyboard.press(key)
        page.wait_for_timeout(pause_ms)
    presses, said = settle_presses(page, server.db_url, reviewer, before)
    no_exception(page, where)
    events = stored_events(server.db_url, reviewer)[before:]
    stored, refused = check_presses(presses, said, events, keys_of, where)
    ages = [round(p.age_ms) if p.age_ms is not None else None for p in presses]
    print(f"{where}: {len(presses)} presses, {stored} stored, {refused} refused; ages at keydown (ms) {ages}")
    return stored, refused


#: Whether the question shown differs from ``arg`` (polled at every animation frame).
MOVED_ON = """(before) => {
    const m = document.querySelector("[data-testid='stMain']");
    const f = m ? /tq question \\d+\\?/.exec(m.textContent) : null;
    return f !== null && f[0] !== before;
}"""
QUESTION = """() => {
    const m = document.querySelector("[data-testid='stMain']");
    const f = m ? /tq question \\d+\\?/.exec(m.textContent) : null;
    return f ? f[0] : null;
}"""


def _held_over(page: Page, server: AppServer, keys_of: dict[str, str], reviewer: str, count: int) -> tuple[int, int]:
    """A key meant for the row before: press, and press again the moment the next row is painted
    (the second tap of a double tap that the server answered faster than the finger)."""
    before = len(stored_events(server.db_url, reviewer))
    start_recording(page, "tq")
    focus_page(page)
    for i in range(count):
        shown = page.evaluate(QUESTION)
        key = "ny"[i % 2]
        page.keyboard.press(key)
        page.wait_for_function(MOVED_ON, arg=shown, polling="raf", timeout=TIMEOUT_MS)
        page.keyboard.press(key)
        page.wait_for_timeout(600)
    presses, said = settle_presses(page, server.db_url, reviewer, before)
    events = stored_events(server.db_url, reviewer)[before:]
    stored, refused = check_presses(presses, said, events, keys_of, "a key held over from the row before")
    ages = [round(p.age_ms) if p.age_ms is not None else None for p in presses]
    print(f"held-over keys: {len(presses)} presses, {stored} stored, {refused} refused; ages (ms) {ages}")
    return stored, refused


def _double_taps(count: int) -> list[tuple[str, int]]:
    """``count`` double taps, the two presses 30-80 ms apart, a person's pause (0.65 s) after each."""
    gaps = (30, 45, 60, 70, 80, 55)
    out: list[tuple[str, int]] = []
    for i in range(count):
        key = "yn"[i % 2]
        out += [(key, gaps[i % len(gaps)]), (key, 650)]
    return out


def _steady(count: int, pause_ms: int) -> list[tuple[str, int]]:
    return [("ynyyn"[i % 5], pause_ms) for i in range(count)]


def test_a_press_on_a_row_just_shown_stores_nothing_and_says_so(server: AppServer, page: Page) -> None:
    data = taps_csv("tq", 120)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "tq_model_english.csv", data)
    keys_of = item_keys_by_question(server.db_url, data)
    type_reviewer(page, "tapper")
    start_recording(page, "tq")  # before the queue's first row is painted: its age is known too
    open_nav(page, "Review queue", "Review queue")
    expect(page.locator(MAIN)).to_contain_text("tq question", timeout=TIMEOUT_MS)

    # The second key of each pair the moment the next row is painted: the rule must refuse it.
    stored, refused = _held_over(page, server, keys_of, "tapper", 5)
    assert refused >= 4, "a key pressed the moment a row was painted must be refused"
    _phase(page, server, keys_of, "tapper", _double_taps(6), "double taps 30-80 ms apart")
    with cpu_hog():
        _phase(page, server, keys_of, "tapper", _double_taps(4), "double taps under a CPU hog")
        _held_over(page, server, keys_of, "tapper", 3)

    # 300 ms apart: each lands on the row painted at its keydown, or, when the server took longer
    # than 150 ms to draw it (another test worker busy beside this one), is refused and said; on a
    # quiet machine all land (rows 160-260 ms old at the keydown).
    _phase(page, server, keys_of, "tapper", _steady(10, 300), "presses 300 ms apart")
    with cpu_hog():
        _phase(page, server, keys_of, "tapper", _steady(6, 300), "presses 300 ms apart under a CPU hog")
        stored, refused = _phase(page, server, keys_of, "tapper", _steady(4, 1100), "a person's pace under a CPU hog")
    assert (stored, refused) == (4, 0), "presses at a person's pace must each land, even on a loaded machine"
