"""Real-browser test of the review queue (issue 4): upload, mark with the keyboard, refresh, export.

`streamlit run app.py` on a free port with its own SQLite file, driven by Debian chromium through
Playwright (helpers in ``tests/browser.py``). Never skipped: without chromium it fails with what to
install. Every mark is also checked in the server's database, and the downloaded CSV is parsed.
"""

from __future__ import annotations

import hashlib
import io
import re
from pathlib import Path

import pandas as pd
from browser import TIMEOUT_MS, AppServer, click_download, look_at_row, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Page, expect

from scoring import review, store
from scoring.core.items import item_key
from scoring.core.loader import load_bytes
from scoring.core.order import review_order, seed_from_sha
from scoring.core.report import score_frame
from scoring.store import make_engine

NAME = "review_model_bengali.csv"
CSV = (
    "\n".join(
        [
            "question,answer,Domain,response",
            'Who wrote Gitanjali?,Rabindranath Tagore,Literature,"Tagore, Rabindranath"',
            "Capital of India?,New Delhi,Geography,The capital is New Delhi.",
            'First Maurya emperor?,Chandragupta Maurya,History,"Maurya, Chandragupta"',
            "Longest river?,Ganga,Geography,The Godavari",
            'Author of Godaan?,Munshi Premchand,Literature,"Premchand, Munshi"',
            "Capital of Maharashtra?,Mumbai city,Geography,the city of Mumbai",
            "Epic by Valmiki?,Ramayana,Literature,The Ramayana",
            'Founder of Buddhism?,Gautama Buddha,History,"Buddha, Gautama"',
            "Year of independence?,1947,History,It was 1948",
            "Builder of the Taj Mahal?,Shah Jahan,History,Jahan Shah",
        ]
    ).encode("utf-8")
    + b"\n"
)
SCORED = score_frame(load_bytes(CSV, NAME).frame)
IN_FILE = SCORED.index[SCORED["bucket"] == "overlap_only"].tolist()
# The review order of a new reviewer: the run's seeded permutation (the seed comes from the file).
ORDER = [
    IN_FILE[j]
    for j in review_order(
        [item_key(*SCORED.loc[i, ["question", "answer", "response"]]) for i in IN_FILE],
        seed_from_sha(hashlib.sha256(CSV).hexdigest()),
    )
]


def current_verdicts(db_url: str) -> dict[int, str]:
    """row_idx -> alice's current verdict, read from the server's database."""
    engine = make_engine(db_url)
    try:
        current = review.current_verdicts(engine, reviewer="alice")
        keys = dict(zip(current["item_key"], current["verdict"], strict=True))
        run = store.find_run_by_sha(engine, store.sha256_bytes(CSV))
        assert run is not None
        frame = store.load_scored(engine, run.id)
        return {int(r): keys[k] for r, k in zip(frame["row_idx"], frame["item_key"], strict=True) if k in keys}
    finally:
        engine.dispose()


def expect_queue(page: Page, row_idx: int, reviewed: int) -> None:
    """The queue shows row ``row_idx`` and "Reviewed <reviewed> of <n>"."""
    main = page.locator("[data-testid='stMain']")
    expect(main).to_contain_text(f"Row {row_idx + 1} of the run", timeout=TIMEOUT_MS)
    expect(main).to_contain_text(f"Reviewed {reviewed} of {len(ORDER)} in this scope", timeout=TIMEOUT_MS)
    settle(page)


def press(page: Page, key: str) -> None:
    """A keyboard shortcut with the focus on the page, not in the note or reason field."""
    page.locator("h1").first.click()
    focused = page.evaluate("() => document.activeElement ? document.activeElement.tagName : ''")
    assert focused not in ("INPUT", "TEXTAREA"), f"focus is in an {focused}; the shortcut would be typed"
    look_at_row(page)
    page.keyboard.press(key)


def test_keyboard_review_survives_a_refresh_and_exports(server: AppServer, page: Page) -> None:
    assert IN_FILE == [0, 2, 4, 5, 7, 9], SCORED[["answer", "response", "bucket"]]
    assert sorted(ORDER) == IN_FILE
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    no_exception(page, "the first page")

    # Upload through the file input; the app opens the new run's overview.
    open_nav(page, "Upload", "Upload a model run")
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": NAME, "mimeType": "text/csv", "buffer": CSV}]
    )
    expect(page.locator("h1").first).to_contain_text(f"Overview: {Path(NAME).stem}", timeout=TIMEOUT_MS)
    settle(page)
    no_exception(page, "the overview after the upload")
    engine = make_engine(server.db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(CSV))
    finally:
        engine.dispose()
    assert run is not None, "the upload was not stored"

    # The review queue as alice (the reviewer's name lives in the URL).
    page.goto(f"{server.url}/review?run={run.id}&reviewer=alice", timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(f"Review queue: {run.name}", timeout=TIMEOUT_MS)
    expect_queue(page, ORDER[0], 0)
    expect(page.locator(".st-key-reviewer_name input")).to_have_value("alice", timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-q_yes button")).to_be_enabled(timeout=TIMEOUT_MS)
    no_exception(page, "the review queue")

    steps = [  # key, row shown afterwards, reviewed count afterwards, alice's verdicts afterwards
        ("y", ORDER[1], 1, {ORDER[0]: "correct"}),
        ("n", ORDER[2], 2, {ORDER[0]: "correct", ORDER[1]: "wrong"}),
        ("s", ORDER[3], 2, {ORDER[0]: "correct", ORDER[1]: "wrong"}),  # ORDER[2] skipped
        ("y", ORDER[4], 3, {ORDER[0]: "correct", ORDER[1]: "wrong", ORDER[3]: "correct"}),
        ("u", ORDER[3], 2, {ORDER[0]: "correct", ORDER[1]: "wrong"}),  # undo reopens ORDER[3]
        ("n", ORDER[4], 3, {ORDER[0]: "correct", ORDER[1]: "wrong", ORDER[3]: "wrong"}),
    ]
    for key, row, reviewed, marks in steps:
        press(page, key)
        expect_queue(page, row, reviewed)
        assert current_verdicts(server.db_url) == marks, f"after {key!r}"
        no_exception(page, f"the review queue after {key!r}")

    # A refresh (new session): the progress is kept and the queue continues at the next row.
    page.reload(timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(f"Review queue: {run.name}", timeout=TIMEOUT_MS)
    expect_queue(page, ORDER[4], 3)
    assert re.search(r"[?&]reviewer=alice(&|$)", page.url), page.url
    press(page, "y")
    expect_queue(page, ORDER[5], 4)
    final_marks = {ORDER[0]: "correct", ORDER[1]: "wrong", ORDER[3]: "wrong", ORDER[4]: "correct"}
    assert current_verdicts(server.db_url) == final_marks
    no_exception(page, "the review queue after the refresh")

    # Export: download the CSV and check its verdicts.
    open_nav(page, "Export", f"Export: {run.name}")
    no_exception(page, "the export page")
    download = click_download(page, "dl_csv", server)
    assert download.suggested_filename == f"run{run.id}_adjudicated.csv"
    exported = pd.read_csv(io.BytesIO(Path(download.path()).read_bytes()), dtype=str, keep_default_na=False)
    assert len(exported) == len(SCORED)
    assert exported["question"].tolist() == SCORED["question"].tolist()
    assert exported["bucket"].tolist() == SCORED["bucket"].tolist()
    for i, row in exported.iterrows():
        where = f"row {i}: {row.to_dict()}"
        if i in final_marks:
            verdict = final_marks[i]
            assert (row["human_verdict"], row["final_verdict"], row["final_source"]) == (verdict, verdict, "human"), (
                where
            )
            assert row["reviewers"] == "alice" and row["reviewed_at"], where
        elif row["bucket"] == "overlap_only":  # skipped or not reached: still pending
            assert (row["human_verdict"], row["final_verdict"], row["final_source"]) == ("", "pending", "pending"), (
                where
            )
        else:
            auto = "wrong" if row["bucket"] == "both_fail" else "correct"
            assert (row["human_verdict"], row["final_verdict"], row["final_source"]) == ("", auto, "auto"), where
    no_exception(page, "the export page after the download")


def test_the_row_and_its_buttons_fit_a_1400_by_1000_window_unscrolled(server: AppServer, browser) -> None:
    """Issue 20: a reviewer opening the queue on a 1400x1000 window sees the row and its four
    buttons without scrolling; the review mode's switches are one click away (a popover)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.goto(f"{server.url}/?reviewer=alice", timeout=TIMEOUT_MS)
        settle(page)
        open_nav(page, "Review queue", "Review queue")
        main = page.locator("[data-testid='stMain']")
        expect(main).to_contain_text("of the run", timeout=TIMEOUT_MS)
        assert page.evaluate("() => window.scrollY") == 0
        for label in ("Correct (Y)", "Wrong (N)", "Skip (S)", "Undo (U)"):
            box = page.get_by_role("button", name=label).bounding_box()
            assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 1000, (label, box)
        response = page.get_by_text("Response (amber", exact=False).first.bounding_box()
        assert response is not None and response["y"] + response["height"] <= 1000
        page.locator("[data-testid='stPopover'] button", has_text="Review mode").click()
        expect(page.locator("[data-testid='stPopoverBody']")).to_contain_text("Blind review")
    finally:
        context.close()


#: Elements inside ``root`` whose content is wider than their box and clipped (cut off, not wrapped).
CLIPPED = """(root) => Array.from(root.querySelectorAll('*')).filter((e) => e.scrollWidth > e.clientWidth + 1
    && getComputedStyle(e).overflowX !== 'visible').map((e) => `${e.className}: ${e.scrollWidth} > ${e.clientWidth}`)"""


def test_the_card_its_buttons_and_fields_fit_a_1280_by_720_laptop_window(server: AppServer, browser) -> None:
    """Issue 27: on a 1280x720 laptop window a reviewer who uploaded a file and typed a name sees
    the row, its four buttons and the reason and note fields without scrolling; nothing of the
    queue's header is cut off and the page never scrolls sideways; the Overview's metric tiles
    show their whole titles."""
    data = CSV.replace(b"Who wrote Gitanjali?", b"Who wrote Gitanjali (laptop)?")  # a run of its own
    name = "laptop_model_bengali.csv"
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(server.url, timeout=TIMEOUT_MS)
        settle(page)
        field = page.locator(".st-key-reviewer_name input")
        field.fill("carol")
        field.press("Enter")
        settle(page)
        upload_file(page, name, data)
        no_exception(page, "the overview after the upload")
        labels = page.locator("[data-testid='stMain'] [data-testid='stMetricLabel']")
        expect(labels.first).to_be_visible()
        assert labels.count() >= 3
        for i in range(labels.count()):
            label = labels.nth(i)
            assert label.evaluate(CLIPPED) == [], f"metric title cut off: {label.inner_text()!r}"
        assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 1280

        open_nav(page, "Review queue", "Review queue")
        main = page.locator("[data-testid='stMain']")
        expect(main).to_contain_text("of the run", timeout=TIMEOUT_MS)
        expect(page.locator(".st-key-reviewer_name input")).to_have_value("carol")
        no_exception(page, "the review queue")
        assert page.evaluate("() => window.scrollY") == 0
        assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 1280
        header = page.locator("[data-testid='stHorizontalBlock']", has=page.locator(".st-key-q_bucket")).first
        assert header.evaluate(CLIPPED) == [], "a scope control is cut off"
        for what, locator in (
            ("the row", page.locator("[data-testid='stHtml']", has_text="of the run")),
            *((key, page.locator(f".st-key-{key}")) for key in ("q_yes", "q_no", "q_skip", "q_undo")),
            ("reason", page.locator("[class*='st-key-q_reason_']")),
            ("note", page.locator("[class*='st-key-q_note_']")),
        ):
            box = locator.first.bounding_box()
            assert box is not None, what
            assert 0 <= box["y"] and box["y"] + box["height"] <= 720, (what, box)
            assert 0 <= box["x"] and box["x"] + box["width"] <= 1280, (what, box)
        expect(page.get_by_role("button", name="Correct (Y)")).to_be_enabled()
    finally:
        context.close()
