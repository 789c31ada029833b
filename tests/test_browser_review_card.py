"""Real-browser tests of the review card as a person uses it (issue 36, points 4 to 6).

- Keys never go into a field by accident: after any pick (scope, domain, reason, mode, view) the
  focus returns to the card, so the next presses mark rows; while a field holds the focus the card
  says so beside the buttons.
- The whole row is on screen, every time: at 1280x720, on every card of a blind audit, first and
  after each action, the question, golden answer and response (responses up to 300 characters)
  and the four buttons are visible unscrolled, and the confirmation does not move the card.
- Nothing typed is lost: a note is kept on Skip and Undo as on Correct and Wrong, and comes back
  with its row; a scope change, a sidebar link or a refresh asks before a typed note is dropped.

`streamlit run app.py` on a free port with its own SQLite file, Debian chromium through Playwright.
"""

from __future__ import annotations

import re

from browser import NAV_LINK, TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Browser, Dialog, Page, expect
from queue_browser import (
    MAIN,
    focus_page,
    focused_tag,
    item_keys_by_question,
    overlap_csv,
    shown_row,
    stored_events,
    type_reviewer,
    wait_for_events,
)

from scoring import review, store
from scoring.store import make_engine

FIELD_NOTICE = re.compile(r"typing in", re.IGNORECASE)


def open_queue(page: Page, server: AppServer, name: str, data: bytes, reviewer: str) -> None:
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, name, data)
    type_reviewer(page, reviewer)
    open_nav(page, "Review queue", "Review queue")
    expect(page.locator(MAIN)).to_contain_text("of the run", timeout=TIMEOUT_MS)


def pick(page: Page, key: str, option: str) -> None:
    """Open the select box ``key`` and click ``option``, as a person does."""
    page.locator(f".st-key-{key}").click()
    page.get_by_role("option", name=option, exact=True).click()


#: The values of every input on the page that hold only the queue's letters (typed by mistake).
TYPED_LETTERS = "() => [...document.querySelectorAll('input')].map((i) => i.value).filter((v) => /^[yns]+$/.test(v))"


def presses_mark(page: Page, server: AppServer, reviewer: str, keys: str, where: str) -> None:
    """Press ``keys`` at a person's pace right after a pick: each must be taken as a verdict, none
    typed into a field."""
    before = len(stored_events(server.db_url, reviewer))
    for i, key in enumerate(keys):
        page.wait_for_timeout(350)  # a person reads the row before pressing
        page.keyboard.press(key)
        wait_for_events(page, server.db_url, reviewer, before + i + 1, timeout_ms=10_000)
    got = stored_events(server.db_url, reviewer)[before:]
    assert len(got) == len(keys), (
        f"after {where}: {len(keys)} presses, {len(got)} stored (focus on {focused_tag(page)})"
    )
    typed = page.evaluate(
        "() => [...document.querySelectorAll('input')].map((i) => i.value).filter((v) => /^[yns]+$/.test(v))"
    )
    assert typed == [], f"after {where}: letters went into a field: {typed}"


def set_audit_of(db_url: str, data: bytes, rows: list[int]) -> None:
    """The planner's audit scope: the rows (0-based) of the stored run of ``data``."""
    engine = make_engine(db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        assert run is not None
        frame = store.load_scored(engine, run.id)
        review.set_audit(engine, run.id, [str(frame.iloc[i]["item_key"]) for i in rows], by="planner")
    finally:
        engine.dispose()


def test_after_any_pick_keys_mark_rows_and_a_focused_field_is_said(server: AppServer, page: Page) -> None:
    data = overlap_csv("fk", 60, domains=("Art", "History", "Music"), languages=("English", "Hindi"))
    open_queue(page, server, "fk_model_english.csv", data, "picker")
    set_audit_of(server.db_url, data, list(range(40)))
    page.reload()
    settle(page)
    expect(page.locator(MAIN)).to_contain_text("of the run", timeout=TIMEOUT_MS)

    pick(page, "q_bucket", "Estimate: audit sample (40 rows)")
    settle(page)
    presses_mark(page, server, "picker", "nnnnn", "picking the scope")
    pick(page, "q_domain", "Music")
    settle(page)
    presses_mark(page, server, "picker", "yny", "picking a domain")
    pick(page, "q_domain", "All")
    settle(page)
    pick(page, "q_language", "Hindi")
    settle(page)
    presses_mark(page, server, "picker", "ny", "picking a language")
    reason = page.locator("[class*='st-key-q_reason_']").first
    reason.click()
    page.get_by_role("option", name=review.REASONS[0], exact=True).click()
    settle(page)
    presses_mark(page, server, "picker", "n", "picking a reason")
    assert stored_events(server.db_url, "picker")[-1].reason == review.REASONS[0]
    page.locator(".st-key-q_view").get_by_text("My verdicts").click()
    settle(page)
    page.locator(".st-key-q_view").get_by_text("Queue").click()
    settle(page)
    presses_mark(page, server, "picker", "yy", "switching the view")
    page.locator("[data-testid='stPopover'] button", has_text="Review mode").click()
    page.get_by_text("Second opinion: review rows").click()
    settle(page)
    page.get_by_text("Second opinion: review rows").click()  # back off
    settle(page)
    page.keyboard.press("Escape")  # the popover closes as a person closes it
    presses_mark(page, server, "picker", "ny", "switching the review mode")

    # A field that holds the focus is said right under the buttons, and letters type there.
    bar = page.locator(".st-key-q_keys .q-keys")
    expect(bar).not_to_contain_text(FIELD_NOTICE)
    buttons, notice = page.locator(".st-key-q_bar").bounding_box(), bar.bounding_box()
    assert buttons and notice and 0 <= notice["y"] - (buttons["y"] + buttons["height"]) <= 30, (buttons, notice)
    note = page.locator("[class*='st-key-q_note_'] input").first
    note.click()
    expect(bar).to_contain_text(FIELD_NOTICE)
    before = len(stored_events(server.db_url, "picker"))
    page.keyboard.type("ny", delay=80)
    expect(note).to_have_value("ny")
    page.keyboard.press("Escape")
    expect(bar).not_to_contain_text(FIELD_NOTICE)
    assert len(stored_events(server.db_url, "picker")) == before
    no_exception(page, "the queue after picks")


def long_csv(n: int) -> tuple[bytes, list[dict[str, str]]]:
    """``n`` overlap_only rows in four languages with long texts: questions of about 150
    characters, golden answers of about 60 and responses of 300 (the longest the layout promises
    to show whole on a 1280x720 window)."""
    words = {
        "english": "the river festival of the southern coast is celebrated with boats and songs",
        "hindi": "दक्षिणी तट का नदी उत्सव नावों और गीतों के साथ मनाया जाता है",
        "tamil": "தெற்கு கடற்கரையின் நதி திருவிழா படகுகள் மற்றும் பாடல்களுடன் கொண்டாடப்படுகிறது",
        "bengali": "দক্ষিণ উপকূলের নদী উৎসব নৌকা এবং গান দিয়ে উদযাপিত হয়",
    }
    rows = []
    for i in range(n):
        lang = list(words)[i % 4]
        base = words[lang]
        question = (f"lq{i} " + (base + " ") * 3)[:150].strip() + "?"
        answer = f"lqw{i} " + base.split()[1] + " " + base.split()[2]
        response = (f"{base.split()[2]} lqw{i} {base.split()[1]} " + (base + " ") * 6)[:300].strip()
        rows.append({"question": question, "answer": answer, "Domain": ("Art", "History")[i % 2], "response": response})
    lines = ["question,answer,Domain,response"] + [
        ",".join(f'"{r[c]}"' for c in ("question", "answer", "Domain", "response")) for r in rows
    ]
    return ("\n".join(lines) + "\n").encode("utf-8"), rows


#: The element's box in the window and whether anything above it scrolled.
GEOMETRY = """(e) => {
    const r = e.getBoundingClientRect();
    let scrolled = window.scrollY;
    for (let p = e.parentElement; p; p = p.parentElement) scrolled += p.scrollTop;
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, scrolled: scrolled};
}"""


def check_card(page: Page, rows: list[dict[str, str]], where: str) -> float:
    """The row shown, its texts and the four buttons fully inside the 1280x720 window with nothing
    scrolled; returns the question block's top."""
    row = shown_row(page) - 1
    card = page.locator("[data-q-screen]").first
    tops = []
    for what in ("question", "answer", "response"):
        block = card.get_by_text(rows[row][what], exact=True).first
        box = block.evaluate(GEOMETRY)
        assert box["scrolled"] == 0, f"{where}: the page was scrolled ({what})"
        assert 0 <= box["top"] and box["bottom"] <= 720, f"{where}: row {row + 1}'s {what} is not all visible: {box}"
        tops.append(box["top"])
    for key in ("q_yes", "q_no", "q_skip", "q_undo"):
        box = page.locator(f".st-key-{key} button").evaluate(GEOMETRY)
        assert 0 <= box["top"] and box["bottom"] <= 720 and box["right"] <= 1280, f"{where}: {key} not visible: {box}"
    return tops[0]


def test_every_audit_card_shows_the_whole_row_at_1280_by_720(server: AppServer, browser: Browser) -> None:
    data, rows = long_csv(40)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        open_queue(page, server, "lq_model_mixed.csv", data, "lena")
        set_audit_of(server.db_url, data, list(range(0, 40, 2)))
        page.reload()
        settle(page)
        pick(page, "q_bucket", "Estimate: audit sample (20 rows)")
        settle(page)
        expect(page.locator(MAIN)).to_contain_text("of the run")
        first_top = check_card(page, rows, "the first audit card")
        page.screenshot(path=str(server.log_path.parent / "audit-card-first.png"))
        focus_page(page)
        for i, key in enumerate("ynyysnynuyny"):
            before = shown_row(page)
            page.keyboard.press(key)
            if key == "u":
                expect(page.locator(MAIN)).to_contain_text("Undone", timeout=TIMEOUT_MS)
            else:
                expect(page.locator(MAIN)).not_to_contain_text(f"Row {before} of the run", timeout=TIMEOUT_MS)
            settle(page)
            top = check_card(page, rows, f"card {i + 2} (after '{key}')")
            assert abs(top - first_top) <= 1, f"after '{key}' the card moved from {first_top} to {top}"
            page.wait_for_timeout(200)
        page.screenshot(path=str(server.log_path.parent / "audit-card-after.png"))
        no_exception(page, "the audit cards")
    finally:
        context.close()


def test_a_typed_note_is_kept_on_every_action_and_asked_before_it_is_dropped(server: AppServer, page: Page) -> None:
    data = overlap_csv("nt", 3)
    open_queue(page, server, "nt_model_english.csv", data, "noter")
    keys_of = item_keys_by_question(server.db_url, data)
    by_key = {v: k for k, v in keys_of.items()}
    main = page.locator(MAIN)
    note = page.locator("[class*='st-key-q_note_'] input").first

    # Skip keeps the note: stored with the skip, and back in the field when the row returns.
    skipped = shown_row(page)
    note.click()
    note.type("unsure: check the spelling", delay=10)
    page.keyboard.press("Escape")
    page.keyboard.press("s")
    expect(main).to_contain_text(f"Skipped row {skipped}", timeout=TIMEOUT_MS)
    settle(page)
    wait_for_events(page, server.db_url, "noter", 1)
    skip = stored_events(server.db_url, "noter")[-1]
    assert (skip.action, skip.note) == ("skip", "unsure: check the spelling")

    # Correct keeps it; Undo keeps the note typed on the row it leaves, and brings the undone
    # mark's note back with its row.
    marked = shown_row(page)
    note = page.locator("[class*='st-key-q_note_'] input").first
    note.click()
    note.type("first note", delay=10)
    page.keyboard.press("Escape")
    page.keyboard.press("y")
    expect(main).to_contain_text(f"Saved: row {marked} marked correct", timeout=TIMEOUT_MS)
    settle(page)
    left = shown_row(page)
    note = page.locator("[class*='st-key-q_note_'] input").first
    note.click()
    note.type("typed before undo", delay=10)
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    page.keyboard.press("u")
    expect(main).to_contain_text("Undone", timeout=TIMEOUT_MS)
    settle(page)
    assert shown_row(page) == marked
    expect(page.locator("[class*='st-key-q_note_'] input").first).to_have_value("first note")
    page.wait_for_timeout(300)
    focus_page(page)
    page.keyboard.press("n")  # the undone row, marked again with its note
    expect(main).to_contain_text(f"Saved: row {marked} marked wrong", timeout=TIMEOUT_MS)
    settle(page)
    assert stored_events(server.db_url, "noter")[-1].note == "first note"
    assert shown_row(page) == left
    expect(page.locator("[class*='st-key-q_note_'] input").first).to_have_value("typed before undo")
    page.wait_for_timeout(300)
    focus_page(page)
    page.keyboard.press("y")
    expect(main).to_contain_text(f"Saved: row {left} marked correct", timeout=TIMEOUT_MS)
    settle(page)
    assert stored_events(server.db_url, "noter")[-1].note == "typed before undo"
    # The skipped row comes back last, its note with it.
    assert shown_row(page) == skipped
    expect(page.locator("[class*='st-key-q_note_'] input").first).to_have_value("unsure: check the spelling")
    assert by_key[skip.item_key] == f"nt question {skipped - 1}?"

    # A typed note not yet given with a verdict: leaving asks first; "stay" keeps everything.
    asked: list[str] = []

    def stay(dialog: Dialog) -> None:
        asked.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", stay)
    note = page.locator("[class*='st-key-q_note_'] input").first
    note.click()
    note.fill("")
    note.type("half a thought", delay=10)
    page.locator(".st-key-q_bucket").click()
    page.wait_for_timeout(300)
    assert any("note" in a.lower() for a in asked), f"a scope change did not ask: {asked}"
    page.keyboard.press("Escape")
    settle(page)
    assert shown_row(page) == skipped
    expect(page.locator("[class*='st-key-q_note_'] input").first).to_have_value("half a thought")
    asked.clear()
    page.locator(NAV_LINK, has_text=re.compile(r"Overview\s*$")).first.click()
    page.wait_for_timeout(500)
    assert any("note" in a.lower() for a in asked), f"a sidebar link did not ask: {asked}"
    expect(page.locator("h1").first).to_contain_text("Review queue")
    asked.clear()
    page.evaluate("() => setTimeout(() => location.reload(), 0)")  # F5, without waiting for a load
    page.wait_for_timeout(800)
    assert any(a.startswith("beforeunload") for a in asked), f"a refresh did not ask: {asked}"
    page.remove_listener("dialog", stay)
    settle(page)
    expect(page.locator("[class*='st-key-q_note_'] input").first).to_have_value("half a thought")
    no_exception(page, "the queue after the notes")
