"""Real-browser tests of the Adjudication page and of archiving a run (issue 27, defects 1 and 4).

Both defects live in what the browser does between two script runs, so AppTest cannot show them:
a note typed and not yet committed with Enter when a button is clicked, and an expander's open
state carried from one run's confirmation to the next run's. The app runs on its own SQLite file
(the ``server`` fixture) with the bundled sample set; pages are reached by sidebar clicks.
"""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle
from playwright.sync_api import Page, expect

from scoring import review, store
from scoring.store import make_engine

MAIN = "[data-testid='stMain']"
NOTE = "golden answer names the river, the response the valley"


def _run_in_url(page: Page) -> int:
    found = re.search(r"[?&]run=(\d+)", page.url)
    assert found, f"no ?run= in {page.url}"
    return int(found.group(1))


def test_a_note_typed_then_decide_clicked_without_enter_is_saved_with_the_decision(
    server: AppServer, page: Page
) -> None:
    """alice and bob disagree on one row; ana types a note and clicks "Decide: correct" at once,
    as a person does (no Enter, no click elsewhere first): the stored decision carries the note.
    Before the fix the callback read the note of the previous script run, so it saved ""."""
    page.goto(f"{server.url}/?reviewer=ana", timeout=TIMEOUT_MS)
    settle(page)
    run_id = _run_in_url(page)
    engine = make_engine(server.db_url)
    try:
        scored = store.load_scored(engine, run_id)
        row = scored[scored["bucket"] == "overlap_only"].iloc[0]
        key, row_no = str(row["item_key"]), int(row["row_idx"]) + 1
        review.record_mark(engine, key, run_id, "alice", "correct")
        review.record_mark(engine, key, run_id, "bob", "wrong")

        open_nav(page, "Adjudication", "Adjudication")
        main = page.locator(MAIN)
        expect(main).to_contain_text(f"Row {row_no} of the run", timeout=TIMEOUT_MS)
        field = page.locator(f".st-key-adj_note_{key[:12]} input")
        field.click()
        field.press_sequentially(NOTE, delay=5)
        page.locator(".st-key-adj_correct button").click()
        expect(main).to_contain_text(f"Saved: row {row_no} decided correct by ana", timeout=TIMEOUT_MS)
        settle(page)
        no_exception(page, "the Adjudication page after a decision")

        decided = review.adjudications(engine, [key]).loc[key]
        assert (decided["adjudicator"], decided["decision"], decided["adjudication_note"]) == ("ana", "correct", NOTE)
    finally:
        engine.dispose()


def test_archiving_a_run_closes_the_confirmation_and_says_so_above_it(server: AppServer, page: Page) -> None:
    """Archive the selected run through its confirmation: the page moves to the next run with its
    "Archive this run" closed and unticked (not one click from archiving it too), and the
    message naming the archived run is shown as a toast and above the next run's archive control,
    not below it."""
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    open_nav(page, "Upload", "Upload a model run")
    archived = _run_in_url(page)
    main = page.locator(MAIN)
    expect(main).to_contain_text(f"Run #{archived}", timeout=TIMEOUT_MS)
    page.locator(MAIN).get_by_text("Archive this run", exact=True).first.click()
    page.locator("[data-testid='stCheckbox']", has_text="Yes, archive this run").click()
    settle(page)
    page.locator(".st-key-archive_run button").click()
    engine = make_engine(server.db_url)
    try:
        expect(page).not_to_have_url(re.compile(rf"[?&]run={archived}(&|$)"), timeout=TIMEOUT_MS)
        settle(page)
        assert store.archived_at(engine, archived) is not None
        shown = _run_in_url(page)
        assert shown != archived and shown in [r.id for r in store.listed_runs(engine)]
    finally:
        engine.dispose()
    no_exception(page, "the Upload page after archiving")
    expect(main).to_contain_text(f"Run #{shown}", timeout=TIMEOUT_MS)
    confirmation = page.locator(MAIN).locator("details", has_text="Archive this run")
    expect(confirmation).to_have_count(1)
    assert confirmation.evaluate("el => el.open") is False, "the next run's archive confirmation is open"
    expect(page.locator("[data-testid='stCheckbox'] input:checked")).to_have_count(0)

    message = f"Run #{archived} archived"
    expect(page.locator("[data-testid='stToast']")).to_contain_text(message, timeout=TIMEOUT_MS)
    notice = page.locator(MAIN).locator("[data-testid='stAlert']", has_text=message)
    expect(notice).to_have_count(1)
    notice_y = notice.bounding_box()["y"]  # type: ignore[index]
    confirmation_y = confirmation.bounding_box()["y"]  # type: ignore[index]
    assert notice_y < confirmation_y, "the archive message is below the next run's confirmation"
