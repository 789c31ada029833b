"""Real-browser test of the review queue's keyboard (issue 27, defect 3): a key press applies to
the row the person sees when they press it, exactly once, however fast the presses come and
whether or not the server has moved on; only a press made while no row is shown is refused, and
saying so does not linger on later cards.

`streamlit run app.py` on a free port with its own SQLite file, driven by Debian chromium through
Playwright; the sidebar is clicked as a person does, and every press is checked against the
verdicts stored in the server's database.
"""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Page, expect
from sqlalchemy import select

from scoring import review, store
from scoring.store import make_engine
from scoring.store.orm_tables import VerdictEvent

MAIN = "[data-testid='stMain']"
VERDICT = {"y": "correct", "n": "wrong"}
NOT_APPLIED = re.compile(r"not applied|Too fast|Presses not applied", re.IGNORECASE)

# At each keydown (window, capture phase: before the app's own listener on the document) record
# the key, when it was pressed, and the question of the row the page shows at that instant: the
# row the person is looking at. The question is the row's own text, so this needs no cooperation
# from the app's markers.
RECORD_PRESSES = """() => {
    window.__seen = [];
    if (window.__recording) return;
    window.__recording = true;
    window.addEventListener('keydown', (e) => {
        const main = document.querySelector("[data-testid='stMain']");
        const found = /(kq\\d+) question (\\d+)\\?/.exec(main ? main.innerText : '');
        window.__seen.push({key: e.key, at: performance.now(), question: found ? found[0] : null});
    }, true);
}"""


def keys_csv(tag: str, n: int) -> bytes:
    """``n`` overlap_only rows (golden words present, not as one substring) and one both_pass row."""
    lines = ["question,answer,Domain,response"]
    lines += [f"{tag} question {i}?,{tag}w{i} beta,{('Art', 'History')[i % 2]},beta {tag}w{i}" for i in range(n)]
    lines.append(f"{tag} easy?,gamma,Art,gamma")
    return ("\n".join(lines) + "\n").encode("utf-8")


def type_reviewer(page: Page, name: str) -> None:
    field = page.locator(".st-key-reviewer_name input")
    field.click()
    field.fill("")
    field.type(name, delay=20)
    field.press("Enter")
    settle(page)


def focus_page(page: Page) -> None:
    """Click the title, so no field has the focus and letters go to the keyboard handler."""
    page.locator("h1").first.click()
    assert page.evaluate("() => document.activeElement ? document.activeElement.tagName : ''") not in (
        "INPUT",
        "TEXTAREA",
    )


def stored_events(db_url: str, reviewer: str) -> list[tuple[str, str, str | None]]:
    """(action, item key, verdict) of every event the reviewer caused, oldest first."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            stmt = (
                select(VerdictEvent.action, VerdictEvent.item_key, VerdictEvent.verdict)
                .where(VerdictEvent.reviewer == reviewer)
                .order_by(VerdictEvent.id)
            )
            return [(str(a), str(k), v) for a, k, v in conn.execute(stmt)]
    finally:
        engine.dispose()


def item_keys_by_question(db_url: str, data: bytes) -> dict[str, str]:
    engine = make_engine(db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        assert run is not None, "the upload was not stored"
        frame = store.load_scored(engine, run.id)
        return dict(zip(frame["question"].astype(str), frame["item_key"].astype(str), strict=True))
    finally:
        engine.dispose()


def press_apart(page: Page, keys: str, gap_ms: int) -> None:
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(gap_ms)


def wait_for_events(page: Page, db_url: str, reviewer: str, count: int, timeout_ms: int = 20_000) -> None:
    """Let the page settle until the database holds ``count`` events of ``reviewer`` (or time out)."""
    waited = 0
    while waited < timeout_ms and len(stored_events(db_url, reviewer)) < count:
        page.wait_for_timeout(250)
        waited += 250
    settle(page)


def check_burst(
    page: Page, server: AppServer, keys_of: dict[str, str], reviewer: str, keys: str, gap_ms: int, before: int
) -> None:
    """Press ``keys`` ``gap_ms`` apart; each must be stored once, on the row shown at its press."""
    page.evaluate(RECORD_PRESSES)
    focus_page(page)
    press_apart(page, keys, gap_ms)
    wait_for_events(page, server.db_url, reviewer, before + len(keys))
    page.wait_for_timeout(1000)  # a press resent or applied twice would show up by now
    settle(page)
    no_exception(page, f"the queue after presses {gap_ms} ms apart")
    seen = page.evaluate("() => window.__seen")
    assert [s["key"] for s in seen] == list(keys)
    gaps = [round(b["at"] - a["at"]) for a, b in zip(seen, seen[1:], strict=False)]
    assert all(s["question"] for s in seen), f"a press came while no row was shown: {seen}"
    wanted = [("mark", keys_of[s["question"]], VERDICT[s["key"]]) for s in seen]
    got = stored_events(server.db_url, reviewer)[before:]
    rows = [s["question"] for s in seen]
    print(f"presses {gap_ms} ms apart (measured {gaps}): {len(keys)} pressed, {len(got)} stored; rows seen {rows}")
    assert got == wanted, f"stored {got}\nwanted (one per press, on the row seen) {wanted}"
    assert not NOT_APPLIED.search(page.locator(MAIN).inner_text()), page.locator(MAIN).inner_text()[:1500]


def test_every_press_applies_once_to_the_row_seen_at_120_and_350_ms(server: AppServer, page: Page) -> None:
    data = keys_csv("kq1", 40)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "kq1_model_english.csv", data)
    keys_of = item_keys_by_question(server.db_url, data)
    type_reviewer(page, "swift")
    open_nav(page, "Review queue", "Review queue")
    expect(page.locator(MAIN)).to_contain_text("kq1 question", timeout=TIMEOUT_MS)

    check_burst(page, server, keys_of, "swift", "nyynyyny", 120, before=0)
    check_burst(page, server, keys_of, "swift", "ynynyn", 350, before=8)

    # Nothing was lost and nothing applied twice, so the queue moved on past every row marked: the
    # row shown now has no verdict of this reviewer, and the current verdict of each row is the
    # last press made on it.
    events = stored_events(server.db_url, "swift")
    last: dict[str, str | None] = {}
    for _, key, verdict in events:
        last[key] = verdict
    engine = make_engine(server.db_url)
    try:
        current = review.current_verdicts(engine, reviewer="swift")
    finally:
        engine.dispose()
    assert dict(zip(current["item_key"], current["verdict"], strict=True)) == last
    shown = re.search(r"kq1 question \d+\?", page.locator(MAIN).inner_text())
    assert shown and keys_of[shown.group(0)] not in last, "the queue must show a row not yet marked"


def test_only_a_press_while_no_row_is_shown_is_refused_and_said_once(server: AppServer, page: Page) -> None:
    data = keys_csv("kq2", 3)
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
    assert stored_events(server.db_url, "steady")[-1] == ("mark", keys_of["kq2 easy?"], "wrong")
    assert not NOT_APPLIED.search(main.inner_text()), main.inner_text()[:1500]
    no_exception(page, "the queue after a refused press")


# At each click (window, capture phase: before the app's listener) record the button and the
# question of the row the page shows at that instant.
RECORD_CLICKS = """() => {
    window.__clicked = [];
    window.addEventListener('click', (e) => {
        const button = e.target.closest ? e.target.closest("button") : null;
        const box = button ? button.closest("[class*='st-key-q_']") : null;
        const name = box ? [...box.classList].find((c) => c.startsWith("st-key-q_")) : null;
        const main = document.querySelector("[data-testid='stMain']");
        const found = /(kq\\d+) question (\\d+)\\?/.exec(main ? main.innerText : '');
        window.__clicked.push({button: name, question: found ? found[0] : null});
    }, true);
}"""
CLICK_VERDICT = {"st-key-q_yes": "correct", "st-key-q_no": "wrong"}


#: Whether the point (x, y) is on the element with the given class (the button a person aims at).
AIMED = "([x, y, key]) => !!document.elementFromPoint(x, y)?.closest('.' + key)"


def test_every_click_applies_once_to_the_row_seen_even_mid_redraw(server: AppServer, page: Page) -> None:
    """Issue 27: a click on Correct or Wrong, like a key press, goes to the row on screen at the
    click, once, also when it lands while the server is drawing the next row (left to Streamlit,
    the click's callback took the newest run's row)."""
    data = keys_csv("kq3", 30)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "kq3_model_english.csv", data)
    keys_of = item_keys_by_question(server.db_url, data)
    type_reviewer(page, "clicker")
    open_nav(page, "Review queue", "Review queue")
    expect(page.locator(MAIN)).to_contain_text("kq3 question", timeout=TIMEOUT_MS)
    page.evaluate(RECORD_CLICKS)
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
    wait_for_events(page, server.db_url, "clicker", len(buttons))
    page.wait_for_timeout(1000)  # a click resent or applied twice would show up by now
    settle(page)
    no_exception(page, "the queue after quick clicks")
    clicked = page.evaluate("() => window.__clicked")
    assert [c["button"] for c in clicked] == [f"st-key-{b}" for b in buttons], clicked
    assert all(c["question"] for c in clicked), clicked
    wanted = [("mark", keys_of[c["question"]], CLICK_VERDICT[c["button"]]) for c in clicked]
    got = stored_events(server.db_url, "clicker")
    print(
        f"clicks 150 ms apart: {len(buttons)} clicked, {len(got)} stored; rows seen {[c['question'] for c in clicked]}"
    )
    assert got == wanted, f"stored {got}\nwanted (one per click, on the row seen) {wanted}"
    assert not NOT_APPLIED.search(page.locator(MAIN).inner_text()), page.locator(MAIN).inner_text()[:1500]
