"""Real-browser tests of the review loop as a reviewer uses it (issue 8): the name typed once
stays in force across sidebar links, uploads and refreshes; fast key presses each mark the row
seen when pressed, once (issue 27); a finished scope ends; a note field takes letters; a moment of an unwritable
database loses nothing.

`streamlit run app.py` on a free port with its own SQLite file, driven by Debian chromium through
Playwright. Navigation is by the sidebar links; every mark is checked in the server's database.
"""

from __future__ import annotations

import re
import sqlite3
import statistics
import time

import pandas as pd
from browser import TIMEOUT_MS, AppServer, look_at_row, no_exception, open_nav, review_rows, settle, upload_file
from playwright.sync_api import Browser, Page, expect
from queue_browser import (
    ROW_TEXT,
    check_presses,
    focus_page,
    run_frame,
    settle_presses,
    shown_row,
    start_recording,
    stored_events,
    type_reviewer,
)
from sqlalchemy import select

from scoring import review, store
from scoring.store import make_engine
from scoring.store.orm_tables import VerdictEvent

MAIN = "[data-testid='stMain']"


def queue_csv(tag: str, n: int, domains: tuple[str, ...] = ("Art", "History")) -> bytes:
    """``n`` overlap_only rows (golden words present, not as a substring) plus two both_pass rows."""
    lines = ["question,answer,Domain,response"]
    for i in range(n):
        lines.append(f"{tag} question {i}?,{tag}{i} beta,{domains[i % len(domains)]},beta {tag}{i}")
    lines += [f"{tag} easy 1?,gamma,Art,gamma", f"{tag} easy 2?,delta,History,delta"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def events_of(db_url: str, reviewer: str) -> list[tuple[str, str, str | None]]:
    """(action, item key, verdict) of the reviewer's events, oldest first."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            stmt = (
                select(VerdictEvent.action, VerdictEvent.item_key, VerdictEvent.verdict)
                .where(VerdictEvent.reviewer == reviewer)
                .order_by(VerdictEvent.id)
            )
            return [tuple(r) for r in conn.execute(stmt)]
    finally:
        engine.dispose()


def queue_of_new_run(page: Page, server: AppServer, name: str, data: bytes, reviewer: str) -> pd.DataFrame:
    """Open the app, upload ``data``, type the reviewer's name, open the queue by its link.

    Returns the stored run's rows (``row_idx``, ``item_key``...)."""
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, name, data)
    _, frame = run_frame(server.db_url, data)
    type_reviewer(page, reviewer)
    open_nav(page, "Review queue", "Review queue")
    return frame


def reviewer_in_force(page: Page, name: str) -> None:
    """The sidebar shows ``name``, the URL carries it, and the queue's buttons are enabled."""
    expect(page.locator(".st-key-reviewer_name input")).to_have_value(name, timeout=TIMEOUT_MS)
    assert re.search(rf"[?&]reviewer={re.escape(name)}(&|$)", page.url), page.url


def test_the_reviewer_typed_once_stays_across_links_uploads_and_refreshes(server: AppServer, page: Page) -> None:
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    type_reviewer(page, "asha")
    reviewer_in_force(page, "asha")

    open_nav(page, "Review queue", "Review queue")
    reviewer_in_force(page, "asha")
    main = page.locator(MAIN)
    expect(main).not_to_contain_text("Type your name in the sidebar")
    expect(page.locator(".st-key-q_yes button")).to_be_enabled()
    row = shown_row(page)
    focus_page(page)
    look_at_row(page)
    page.keyboard.press("y")
    expect(main).to_contain_text(f"Saved: row {row} marked correct.")
    settle(page)
    assert events_of(server.db_url, "asha")[-1][0::2] == ("mark", "correct")

    # Another page and back, an upload (which switches page itself), then a refresh.
    open_nav(page, "Overview", "Overview")
    reviewer_in_force(page, "asha")
    data = queue_csv("ident", 4)
    upload_file(page, "ident_model_hindi.csv", data)
    reviewer_in_force(page, "asha")
    open_nav(page, "Review queue", "Review queue")
    reviewer_in_force(page, "asha")
    page.reload(timeout=TIMEOUT_MS)
    settle(page)
    reviewer_in_force(page, "asha")
    expect(page.locator(".st-key-q_yes button")).to_be_enabled()
    row = shown_row(page)
    focus_page(page)
    look_at_row(page)
    page.keyboard.press("n")
    expect(main).to_contain_text(f"Saved: row {row} marked wrong.")
    settle(page)
    _, frame = run_frame(server.db_url, data)
    assert events_of(server.db_url, "asha")[-1] == ("mark", frame["item_key"].iloc[row - 1], "wrong")

    # A name that cannot be saved is refused with the reason; the field keeps the name in force.
    type_reviewer(page, "a;b")
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text("may not contain")
    reviewer_in_force(page, "asha")
    # A new name is in force at once, on this page and the next.
    type_reviewer(page, "bina")
    open_nav(page, "Agreement", "Agreement")
    reviewer_in_force(page, "bina")
    open_nav(page, "Review queue", "Review queue")
    reviewer_in_force(page, "bina")
    no_exception(page, "the queue after renaming")


def test_fast_presses_each_mark_the_row_seen_once(server: AppServer, page: Page) -> None:
    data = queue_csv("fast", 40)
    frame = queue_of_new_run(page, server, "fast_model_tamil.csv", data, "fastfingers")
    order = review_rows(server.db_url, data)  # the queue's order: the run's seeded permutation
    assert shown_row(page) == order[0]
    # Record, at each key press, the row the reviewer saw painted and for how long (tests/queue_browser.py).
    start_recording(page, "fast")
    focus_page(page)
    keys = list("nyynyynyynyynyynyyny")
    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(50)
    presses, said = settle_presses(page, server.db_url, "fastfingers", 0)
    no_exception(page, "the queue after fast presses")
    assert [p.key for p in presses] == keys
    events = stored_events(server.db_url, "fastfingers")
    assert events and all(e.action == "mark" for e in events)
    keys_of = dict(zip(frame["question"].astype(str), frame["item_key"].astype(str), strict=True))
    # Every press is stored once, on the row painted when it was pressed, unless that row had just
    # appeared (then the page said so): none dropped unsaid (issues 27 and 36).
    stored, refused = check_presses(presses, said, events, keys_of, "presses 50 ms apart")
    rows = {key: int(i) + 1 for i, key in zip(frame["row_idx"], frame["item_key"], strict=True)}
    marked = [rows[e.item_key] for e in events]
    # The rows were marked in queue order, and the queue shows the next one.
    distinct = list(dict.fromkeys(marked))
    assert distinct == order[: len(distinct)], marked
    print(f"fast presses: {len(keys)} pressed, {stored} applied, {refused} refused, on {len(distinct)} rows")
    assert shown_row(page) == order[len(distinct)]
    assert "not applied" not in page.locator(MAIN).inner_text()
    marked = events

    # At a person's pace (look at the row, then press) every press lands.
    before = len(marked)
    for i in range(6):
        row = shown_row(page)
        look_at_row(page)
        page.keyboard.press("y" if i % 2 else "n")
        expect(page.locator(MAIN)).to_contain_text(f"Saved: row {row} marked {'correct' if i % 2 else 'wrong'}.")
        expect(page.locator(MAIN)).to_contain_text(f"Row {order[order.index(row) + 1]} of the run")
        settle(page)
    assert len(events_of(server.db_url, "fastfingers")) == before + 6
    assert "not applied" not in page.locator(MAIN).inner_text()

    # The per-domain progress is drawn only while its expander is open; it stays open across a press.
    table = page.locator(f"{MAIN} [data-testid='stExpander'] [data-testid='stDataFrame']")
    assert table.count() == 0
    page.locator(f"{MAIN} [data-testid='stExpander'] summary", has_text="Progress per domain").click()
    expect(table).to_be_visible(timeout=TIMEOUT_MS)
    settle(page)
    focus_page(page)
    row = shown_row(page)
    look_at_row(page)
    page.keyboard.press("y")
    expect(page.locator(MAIN)).to_contain_text(f"Row {order[order.index(row) + 1]} of the run")
    settle(page)
    expect(table).to_be_visible(timeout=TIMEOUT_MS)
    assert len(events_of(server.db_url, "fastfingers")) == before + 7


def stored_after(db_url: str, reviewer: str, count: int, page: Page, timeout_ms: int = 20_000) -> list:
    """The reviewer's events once ``count`` are stored (or the timeout passed), the page settled."""
    waited = 0
    while waited < timeout_ms and len(events_of(db_url, reviewer)) < count:
        page.wait_for_timeout(250)
        waited += 250
    settle(page)
    return events_of(db_url, reviewer)


def test_a_finished_scope_ends_and_my_verdicts_reopens_a_row(server: AppServer, page: Page) -> None:
    data = queue_csv("done", 12, domains=("Art", "History", "Music"))
    frame = queue_of_new_run(page, server, "done_model_bengali.csv", data, "finisher")
    page.locator(".st-key-q_domain").click()
    page.get_by_role("option", name="Music", exact=True).click()
    settle(page)
    main = page.locator(MAIN)
    expect(main).to_contain_text("Reviewed 0 of 4 in this scope")
    focus_page(page)
    for _ in range(4):
        row = shown_row(page)
        look_at_row(page)
        page.keyboard.press("y")
        expect(main).to_contain_text(f"Saved: row {row} marked correct.")
        settle(page)
    expect(main).to_contain_text("Done: every row of this scope has your verdict (4 rows: 4 correct, 0 wrong).")
    assert not ROW_TEXT.search(main.inner_text())
    marks = len(events_of(server.db_url, "finisher"))
    assert marks == 4
    focus_page(page)
    for key in "yyny":
        page.keyboard.press(key)
        page.wait_for_timeout(100)
    settle(page)
    assert len(events_of(server.db_url, "finisher")) == marks, "a finished scope must mark nothing"
    # A link to a scope with work left.
    link = page.locator(".st-key-q_todo_d0 button")
    expect(link).to_contain_text("overlap_only, Art: 4 rows left")
    link.click()
    settle(page)
    expect(main).to_contain_text("Reviewed 0 of 4 in this scope")

    # "My verdicts" in the Music scope: search a row, open it, change the verdict.
    page.locator(".st-key-q_domain").click()
    page.get_by_role("option", name="Music", exact=True).click()
    settle(page)
    page.locator(".st-key-q_view").get_by_text("My verdicts").click()
    settle(page)
    expect(main).to_contain_text("4 of the 4 rows of this scope with your verdict")
    target = int(frame.index[frame["Domain"] == "Music"][1]) + 1
    search = page.locator(".st-key-q_my_search input")
    search.click()
    search.type(f"#{target}", delay=30)
    search.press("Enter")
    settle(page)
    expect(main).to_contain_text("1 of the 4 rows of this scope with your verdict")
    page.locator(".st-key-q_my_open button").click()
    settle(page)
    assert shown_row(page) == target
    expect(main).to_contain_text("Your current verdict: correct.")
    focus_page(page)
    look_at_row(page)
    page.keyboard.press("n")
    expect(main).to_contain_text(f"Saved: row {target} marked wrong.")
    settle(page)
    expect(main).to_contain_text("Done: every row of this scope has your verdict (4 rows: 3 correct, 1 wrong).")
    assert events_of(server.db_url, "finisher")[-1] == ("mark", frame["item_key"].iloc[target - 1], "wrong")
    no_exception(page, "the finished queue")


def test_letters_type_into_the_note_and_a_busy_database_loses_nothing(server: AppServer, page: Page) -> None:
    data = queue_csv("note", 6)
    frame = queue_of_new_run(page, server, "note_model_hindi.csv", data, "noter")
    main = page.locator(MAIN)
    row = shown_row(page)
    note = page.locator("[class*='st-key-q_note_'] input")
    note.click()
    note.type("still correct y", delay=60)
    assert note.input_value() == "still correct y"
    assert events_of(server.db_url, "noter") == [], "letters typed in the note must not mark"
    expect(page.locator(".st-key-q_keys .q-keys")).to_contain_text("Typing in Note: letters go there. Press Esc")
    note.press("Escape")
    look_at_row(page)
    page.keyboard.press("y")
    expect(main).to_contain_text(f"Saved: row {row} marked correct.")
    settle(page)
    engine = make_engine(server.db_url)
    try:
        current = review.current_verdicts(engine, reviewer="noter")
    finally:
        engine.dispose()
    assert current[["item_key", "verdict", "note"]].values.tolist() == [
        [frame["item_key"].iloc[row - 1], "correct", "still correct y"]
    ]

    # The database cannot be written for a moment (another process holds its write lock).
    row = shown_row(page)
    blocker = sqlite3.connect(server.db_url.removeprefix("sqlite:///"), isolation_level=None, timeout=30)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        focus_page(page)
        look_at_row(page)
        page.keyboard.press("n")
        expect(main).to_contain_text(f"Row {row} was NOT saved.", timeout=15_000)
        settle(page)
        assert shown_row(page) == row, "the unsaved row stays on screen"
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    no_exception(page, "the queue after a failed write")
    assert len(events_of(server.db_url, "noter")) == 1
    focus_page(page)
    look_at_row(page)
    page.keyboard.press("n")
    expect(main).to_contain_text(f"Saved: row {row} marked wrong.")
    settle(page)
    assert events_of(server.db_url, "noter")[-1] == ("mark", frame["item_key"].iloc[row - 1], "wrong")
    assert len(events_of(server.db_url, "noter")) == 2
    no_exception(page, "the queue after recovering")


def _mark_in_pace(page: Page, key: str) -> tuple[int, float]:
    """A person's press: look at the row, press, wait for the confirmation. (row, seconds)"""
    row = shown_row(page)
    focus_page(page)
    start = time.perf_counter()
    look_at_row(page)
    page.keyboard.press(key)
    verdict = "correct" if key == "y" else "wrong"
    expect(page.locator(MAIN)).to_contain_text(f"Saved: row {row} marked {verdict}.", timeout=TIMEOUT_MS)
    took = time.perf_counter() - start
    expect(page.locator(MAIN)).not_to_contain_text(f"Row {row} of the run", timeout=TIMEOUT_MS)
    settle(page)
    return row, took


def test_two_reviewers_mark_while_someone_uploads_a_large_file(server: AppServer, browser: Browser) -> None:
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1100}) for _ in range(3)]
    try:
        alice, bob, uploader = (c.new_page() for c in contexts)
        for p in (alice, bob, uploader):
            p.set_default_timeout(TIMEOUT_MS)
        data = queue_csv("duo", 30)
        alice.goto(server.url, timeout=TIMEOUT_MS)
        settle(alice)
        upload_file(alice, "duo_model_tamil.csv", data)
        _, frame = run_frame(server.db_url, data)
        type_reviewer(alice, "alice2")
        open_nav(alice, "Review queue", "Review queue: duo_model_tamil")
        bob.goto(server.url, timeout=TIMEOUT_MS)
        settle(bob)
        type_reviewer(bob, "bob2")
        open_nav(bob, "Review queue", "Review queue: duo_model_tamil")

        big = ["question,answer,Domain,response"] + [
            f"big question {i}?,big{i} beta,{('Art', 'History')[i % 2]},beta big{i} and more" for i in range(200_000)
        ]
        big_bytes = ("\n".join(big) + "\n").encode()
        uploader.goto(server.url, timeout=TIMEOUT_MS)
        settle(uploader)
        open_nav(uploader, "Upload", "Upload a model run")
        uploader.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
            files=[{"name": "big_model_hindi.csv", "mimeType": "text/csv", "buffer": big_bytes}]
        )
        # While the large upload is read, scored and saved, both reviewers keep marking.
        keys = "ynyyn nyny".replace(" ", "")
        took: list[float] = []
        marked: dict[str, list[tuple[int, str]]] = {"alice2": [], "bob2": []}
        for key in keys:
            for name, page in (("alice2", alice), ("bob2", bob)):
                row, seconds = _mark_in_pace(page, key)
                marked[name].append((row, "correct" if key == "y" else "wrong"))
                took.append(seconds)
        expect(uploader.locator("h1").first).to_contain_text("Overview: big_model_hindi", timeout=300_000)
        print(
            f"press to saved while uploading 200k rows: median {statistics.median(took):.3f} s, "
            f"max {max(took):.3f} s over {len(took)} marks"
        )
        order = review_rows(server.db_url, data)
        for first, (name, page) in enumerate((("alice2", alice), ("bob2", bob))):
            no_exception(page, f"{name}'s queue")
            events = events_of(server.db_url, name)
            rows = {k: int(i) + 1 for i, k in zip(frame["row_idx"], frame["item_key"], strict=True)}
            assert [(rows[k], v) for _, k, v in events] == marked[name]
            # One scope, two reviewers: they take the queue's rows in turn, never each other's (issue 18).
            assert [r for r, _ in marked[name]] == order[first : 2 * len(keys) : 2]
        engine = make_engine(server.db_url)
        try:
            big_run = store.find_run_by_sha(engine, store.sha256_bytes(big_bytes))
            assert big_run is not None and big_run.n_rows == 200_000
            assert len(store.load_scored(engine, big_run.id)) == 200_000
        finally:
            engine.dispose()
        assert max(took) < 5.0, took
    finally:
        for c in contexts:
            c.close()
