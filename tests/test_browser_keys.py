"""Real-browser test of the review queue's keyboard (issue 27, defect 3; issue 36): a key press
applies to the row the person sees when they press it, exactly once, however fast the presses come
and whether or not the server has moved on; a press made while no row is shown is refused, and so
is a verdict on a row painted less than 150 ms before (``REVIEW_MIN_SHOWN_MS``: the card asks to
press again); saying so does not linger on later cards.

`streamlit run app.py` on a free port with its own SQLite file, driven by Debian chromium through
Playwright; the sidebar is clicked as a person does, and every press is checked against the
verdicts stored in the server's database.
"""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Page, expect
from queue_browser import (
    MAIN,
    check_presses,
    focus_page,
    item_keys_by_question,
    overlap_csv,
    settle_presses,
    start_recording,
    stored_events,
    type_reviewer,
)

from scoring import review
from scoring.store import make_engine

NOT_APPLIED = re.compile(r"not applied|Too fast|Presses not applied|had just appeared", re.IGNORECASE)


def press_apart(page: Page, keys: str, gap_ms: int) -> None:
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(gap_ms)


def check_burst(page: Page, server: AppServer, keys_of: dict[str, str], reviewer: str, keys: str, gap_ms: int) -> None:
    """Press ``keys`` ``gap_ms`` apart; each must be stored once, on the row painted at its press,
    unless that row had just appeared (then nothing is stored and the page says so)."""
    before = len(stored_events(server.db_url, reviewer))
    start_recording(page, "kq1")
    focus_page(page)
    press_apart(page, keys, gap_ms)
    presses, said = settle_presses(page, server.db_url, reviewer, before)
    no_exception(page, f"the queue after presses {gap_ms} ms apart")
    assert [p.key for p in presses] == list(keys)
    got = stored_events(server.db_url, reviewer)[before:]
    stored, refused = check_presses(presses, said, got, keys_of, f"presses {gap_ms} ms apart")
    gaps = [round(b.at - a.at) for a, b in zip(presses, presses[1:], strict=False)]
    rows = [p.question for p in presses]
    print(
        f"presses {gap_ms} ms apart (measured {gaps}): {len(keys)} pressed, {stored} stored, {refused} refused; {rows}"
    )


def test_every_press_applies_once_to_the_row_seen_at_120_and_350_ms(server: AppServer, page: Page) -> None:
    data = overlap_csv("kq1", 40)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "kq1_model_english.csv", data)
    keys_of = item_keys_by_question(server.db_url, data)
    type_reviewer(page, "swift")
    start_recording(page, "kq1")
    open_nav(page, "Review queue", "Review queue")
    expect(page.locator(MAIN)).to_contain_text("kq1 question", timeout=TIMEOUT_MS)

    check_burst(page, server, keys_of, "swift", "nyynyyny", 120)
    check_burst(page, server, keys_of, "swift", "ynynyn", 350)

    # Nothing was lost and nothing applied twice, so the queue moved on past every row marked: the
    # row shown now has no verdict of this reviewer, and the current verdict of each row is the
    # last press stored on it.
    last: dict[str, str | None] = {e.item_key: e.verdict for e in stored_events(server.db_url, "swift")}
    engine = make_engine(server.db_url)
    try:
        current = review.current_verdicts(engine, reviewer="swift")
    finally:
        engine.dispose()
    assert dict(zip(current["item_key"], current["verdict"], strict=True)) == last
    shown = re.search(r"kq1 question \d+\?", page.locator(MAIN).inner_text())
    assert shown and keys_of[shown.group(0)] not in last, "the queue must show a row not yet marked"


def test_only_a_press_while_no_row_is_shown_is_refused_and_said_once(server: AppServer, page: Page) -> None:
    data = overlap_csv("kq2", 3)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "kq2_model_english.csv", data)
    keys_of = item_keys_by_question(server.db_url, data)
    type_reviewer(page, "steady")
    open_nav(page, "Review queue", "Review queue")
    main = page.locator(MAIN)
    # Finish the scope: three rows (overlap_only), one press each.
    for _ in range(3):
        row = re.search(r"kq2 question \d+\?", main.inner_text())
        assert row, main.inner_text()[:1500]
        focus_page(page)
        page.keyboard.press("y")
        expect(main).not_to_contain_text(row.group(0), timeout=TIMEOUT_MS)
        settle(page)
    expect(main).to_contain_text("Done: every row of this scope has your verdict")
    assert len(stored_events(server.db_url, "steady")) == 3
    # No row is shown: a press applies to nothing and the page says so, once.
    focus_page(page)
    page.keyboard.press("y")
    expect(main).to_contain_text("no row was shown", timeout=TIMEOUT_MS)
    settle(page)
    assert len(stored_events(server.db_url, "steady")) == 3
    # The next card (a scope with work left) does not repeat it.
    page.locator(".st-key-q_todo_b0 button").click()  # the both_pass row
    expect(main).to_contain_text("kq2 easy?", timeout=TIMEOUT_MS)
    settle(page)
    focus_page(page)
    page.keyboard.press("n")
    expect(main).to_contain_text("marked wrong", timeout=TIMEOUT_MS)
    settle(page)
    last = stored_events(server.db_url, "steady")[-1]
    assert (last.action, last.item_key, last.verdict) == ("mark", keys_of["kq2 easy?"], "wrong")
    assert not NOT_APPLIED.search(main.inner_text()), main.inner_text()[:1500]
    no_exception(page, "the queue after a refused press")


#: Whether the point (x, y) is on the element with the given class (the button a person aims at).
AIMED = "([x, y, key]) => !!document.elementFromPoint(x, y)?.closest('.' + key)"


def test_every_click_applies_once_to_the_row_seen_even_mid_redraw(server: AppServer, page: Page) -> None:
    """Issue 27: a click on Correct or Wrong, like a key press, goes to the row on screen at the
    click, once, also when it lands while the server is drawing the next row (left to Streamlit,
    the click's callback took the newest run's row)."""
    data = overlap_csv("kq3", 30)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "kq3_model_english.csv", data)
    keys_of = item_keys_by_question(server.db_url, data)
    type_reviewer(page, "clicker")
    start_recording(page, "kq3")
    open_nav(page, "Review queue", "Review queue")
    expect(page.locator(MAIN)).to_contain_text("kq3 question", timeout=TIMEOUT_MS)
    page.wait_for_timeout(400)
    buttons = ["q_no", "q_yes", "q_yes", "q_no", "q_yes", "q_no", "q_yes", "q_yes"]
    for name in buttons:
        # A person's quick clicks: the button where it is, no waiting for the page to settle.
        # A person aims at the button as drawn: if a redraw moved it between looking and clicking
        # (a loaded machine), look again, as the eye would (at most 0.5 s), then click at once.
        for _ in range(20):
            box = page.locator(f".st-key-{name} button").bounding_box()
            assert box is not None
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            if page.evaluate(AIMED, [x, y, f"st-key-{name}"]):
                break
            page.wait_for_timeout(25)
        page.mouse.click(x, y)
        page.wait_for_timeout(150)
    presses, said = settle_presses(page, server.db_url, "clicker", 0)
    no_exception(page, "the queue after quick clicks")
    assert [p.key for p in presses] == ["n" if b == "q_no" else "y" for b in buttons], presses
    got = stored_events(server.db_url, "clicker")
    stored, refused = check_presses(presses, said, got, keys_of, "clicks 150 ms apart")
    print(f"clicks 150 ms apart: {len(buttons)} clicked, {stored} stored, {refused} refused")
    assert stored >= 1
