"""Issue 27: the whole first hour of a newcomer, in one real-browser flow, sidebar and buttons only.

Start here -> "Upload a file" -> a CSV this test writes -> the Overview; a name in the sidebar;
True accuracy offers the pilot instead of a number -> "Start the audit" -> the audit scope, blind
(no metric verdicts on the card) -> three rows by keyboard; Start here's review button -> the
triage queue -> a row marked by click; a second reviewer disagrees on a row
(written to the database as another person's mark) -> Adjudication, a note typed and "Decide"
clicked at once -> Start here's "Export verdicts" -> the CSV download carries the decision and the
note. Every step checks that no exception box appears.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
from browser import TIMEOUT_MS, AppServer, click_download, look_at_row, no_exception, open_nav, settle
from playwright.sync_api import Page, expect

from scoring import review, store
from scoring.store import make_engine

MAIN = "[data-testid='stMain']"
NAME = "firsthour_model_hindi.csv"
NOTE = "the response names the valley, the golden answer the river"


def first_hour_csv() -> bytes:
    """60 rows over three domains: both_pass, exact_only, overlap_only and both_fail all occur."""
    lines = ["question,answer,Domain,response"]
    for i in range(60):
        domain = ("History", "Art", "Geography")[i % 3]
        answer = f"fh{i} river"
        response = {0: f"It is {answer}.", 1: f"river fh{i} region", 2: f"nothing about it {i}", 3: f"the {answer}s"}[
            i % 4
        ]
        lines.append(f"first hour question {i}?,{answer},{domain},{response}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def shown_question(page: Page) -> str:
    found = re.search(r"first hour question \d+\?", page.locator(MAIN).inner_text())
    assert found, page.locator(MAIN).inner_text()[:1500]
    return found.group(0)


def test_the_first_hour_of_a_new_team(server: AppServer, page: Page) -> None:
    main = page.locator(MAIN)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    expect(page.locator("h1").first).to_have_text("Start here")

    # Step 1: upload, from Start here's button.
    page.locator(".st-key-start_go_upload button").click()
    expect(page.locator("h1").first).to_contain_text("Upload a model run", timeout=TIMEOUT_MS)
    settle(page)
    data = first_hour_csv()
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": NAME, "mimeType": "text/csv", "buffer": data}]
    )
    expect(page.locator("h1").first).to_contain_text(f"Overview: {Path(NAME).stem}", timeout=TIMEOUT_MS)
    settle(page)
    no_exception(page, "the Overview after the upload")
    field = page.locator(".st-key-reviewer_name input")
    field.click()
    field.press_sequentially("asha", delay=20)
    field.press("Enter")
    settle(page)

    # No number before its evidence: the pilot, then the audit, blind.
    open_nav(page, "True accuracy", "True accuracy")
    expect(main).to_contain_text("No estimated true accuracy is shown until a row of it is reviewed")
    assert "Estimated true accuracy (combined)" not in main.inner_text()
    page.locator(".st-key-est_pilot button").click()
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    settle(page)
    expect(main).to_contain_text(", blind audit", timeout=TIMEOUT_MS)
    for _ in range(3):
        question = shown_question(page)
        text = main.inner_text()
        assert "Exact: " not in text and "Overlap: " not in text, text[:1500]  # blind: no verdicts
        page.locator("h1").first.click()  # no field has the focus: letters go to the keyboard
        look_at_row(page)
        page.keyboard.press("y")
        expect(main).not_to_contain_text(question, timeout=TIMEOUT_MS)
        settle(page)
    no_exception(page, "the blind audit")

    # Triage from Start here: the overlap-only queue, named as triage; one row marked by click. (Its
    # first rows are the audit's too, the same random prefix, so on this small run they stay blind.)
    open_nav(page, "Start here", "Start here")
    page.locator(".st-key-start_go_review button").click()
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    settle(page)
    expect(main).to_contain_text("Triage: these marks settle rows the metrics disagree on", timeout=TIMEOUT_MS)
    triaged = shown_question(page)
    look_at_row(page)
    page.locator(".st-key-q_no button").click()
    expect(main).not_to_contain_text(triaged, timeout=TIMEOUT_MS)
    settle(page)
    no_exception(page, "the triage queue")

    # A second reviewer disagrees with asha on that row; the adjudicator decides with a note.
    engine = make_engine(server.db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        assert run is not None
        scored = store.load_scored(engine, run.id)
        key = str(scored.loc[scored["question"] == triaged, "item_key"].iloc[0])
        review.record_mark(engine, key, run.id, "bina", "correct")
        open_nav(page, "Adjudication", "Adjudication")
        expect(main).to_contain_text(triaged, timeout=TIMEOUT_MS)
        note = page.locator(f".st-key-adj_note_{key[:12]} input")
        note.click()
        note.press_sequentially(NOTE, delay=5)
        page.locator(".st-key-adj_correct button").click()
        expect(main).to_contain_text("decided correct by asha", timeout=TIMEOUT_MS)
        settle(page)
        no_exception(page, "Adjudication")

        # The estimate now has evidence: a number and its interval, from the three audited rows.
        open_nav(page, "True accuracy", "True accuracy")
        expect(main).to_contain_text("reviewed rows of", timeout=TIMEOUT_MS)

        # Export from Start here: the decision and its note are in the file.
        open_nav(page, "Start here", "Start here")
        page.locator(".st-key-start_go_export button").click()
        expect(page.locator("h1").first).to_contain_text("Export", timeout=TIMEOUT_MS)
        settle(page)
        saved = click_download(page, "dl_csv", server)
        exported = pd.read_csv(io.BytesIO(Path(saved.path()).read_bytes()), dtype=str, keep_default_na=False)
        assert len(exported) == 60
        row = exported[exported["question"] == triaged].iloc[0]
        assert (row["final_verdict"], row["final_source"]) == ("correct", "adjudicated"), row.to_dict()
        assert NOTE in " ".join(str(v) for v in row.to_dict().values()), row.to_dict()
        no_exception(page, "Export")
    finally:
        engine.dispose()
