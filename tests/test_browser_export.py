"""Real-browser test of the export round trip (issue 8, section 5): conflicts survive the move.

Two reviewers' marks, conflicts included, are written straight into the first server's database
(the keyboard flow is tested in ``tests/test_browser_review.py``); the CSV is downloaded in the
browser and uploaded through the Upload page of a second server with its own SQLite file. Both
reviewers' verdicts must arrive there with their own reason, note and time, the conflicts must
stay conflicts (listed on the Reviewers page, pending in the final verdict), and uploading the
same export again (the same bytes, or the same rows in other bytes) must add nothing.
"""

from __future__ import annotations

import codecs
import io
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from browser import TIMEOUT_MS, AppServer, click_download, no_exception, open_nav, settle, start_app, upload_file
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import func, select

from scoring import review, store
from scoring import verdict_export as export
from scoring.core.loader import load_bytes
from scoring.core.report import score_frame
from scoring.store import make_engine
from scoring.store.orm_tables import VerdictEvent

NAME = "export_model_tamil.csv"
CSV = (
    "\n".join(
        [
            "question,answer,Domain,response",
            'Who composed Jana Gana Mana?,Rabindranath Tagore,Music,"Tagore, Rabindranath"',
            "Largest state by area?,Rajasthan,Geography,Madhya Pradesh",
            "Capital of Tamil Nadu?,Chennai,Geography,Chennai",
            "Author of the Tirukkural?,Thiruvalluvar saint,Literature,saint Thiruvalluvar",
        ]
    ).encode("utf-8")
    + b"\n"
)
SCORED = score_frame(load_bytes(CSV, NAME).frame)
CURRENT = ["item_key", "reviewer", "verdict", "reason", "note", "reviewed_at"]
MARKS = [  # row, reviewer, verdict, reason, note, time: conflicts on rows 0 (overlap_only) and 1 (both_fail)
    (0, "alice", "correct", "paraphrase", "=looks right to me", datetime(2026, 5, 1, 9, 30, 1, 250000, tzinfo=UTC)),
    (0, "bob", "wrong", "different claim", "-not the same\nsecond line", datetime(2026, 5, 2, 10, 0, 2, tzinfo=UTC)),
    (1, "alice", "correct", "golden answer wrong", "@ both metrics missed it", datetime(2026, 5, 3, tzinfo=UTC)),
    (1, "bob", "wrong", "", "", datetime(2026, 5, 4, 8, 15, tzinfo=UTC)),
    (3, "alice", "correct", "inflection", "", datetime(2026, 5, 5, tzinfo=UTC)),
    (3, "bob", "correct", "inflection", "agree", datetime(2026, 5, 6, tzinfo=UTC)),
]


def database_state(db_url: str, data: bytes) -> tuple[store.RunInfo | None, set[tuple], int, int]:
    """(the run stored from ``data``, current verdicts on its rows, verdict events, runs)."""
    engine = make_engine(db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        current: set[tuple] = set()
        if run is not None:
            keys = store.load_scored(engine, run.id)["item_key"]
            current = set(map(tuple, review.current_verdicts(engine, keys)[CURRENT].values.tolist()))
        with engine.connect() as conn:
            events = int(conn.execute(select(func.count()).select_from(VerdictEvent)).scalar_one())
        return run, current, events, len(store.list_runs(engine))
    finally:
        engine.dispose()


def final_rows(db_url: str, run_id: int) -> pd.DataFrame:
    engine = make_engine(db_url)
    try:
        return export.build_export(engine, run_id)[["human_verdict", "reviewers", "final_verdict", "final_source"]]
    finally:
        engine.dispose()


def test_conflicts_survive_export_and_reupload_on_another_server(
    server: AppServer, page: Page, browser: Browser, tmp_path: Path
) -> None:
    assert SCORED["bucket"].tolist() == ["overlap_only", "both_fail", "both_pass", "overlap_only"], SCORED
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    no_exception(page, "the first page")
    upload_file(page, NAME, CSV, title="Overview: ")
    no_exception(page, "the overview after an upload")
    run, _, _, _ = database_state(server.db_url, CSV)
    assert run is not None, "the upload was not stored"

    # Two reviewers' marks, straight into the first server's database.
    engine = make_engine(server.db_url)
    try:
        keys = store.load_scored(engine, run.id)["item_key"].tolist()
        for row, reviewer, verdict, reason, note, when in MARKS:
            review.record_mark(engine, keys[row], run.id, reviewer, verdict, reason, note, when)
    finally:
        engine.dispose()
    _, expected, _, _ = database_state(server.db_url, CSV)
    assert len(expected) == len(MARKS)

    # Download the CSV in the browser.
    open_nav(page, "Export", f"Export: {run.name}")
    no_exception(page, "the export page")
    download = click_download(page, "dl_csv", server)
    data = Path(download.path()).read_bytes()
    table = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    assert table["human_verdict"].tolist() == ["conflict", "conflict", "", "correct"]

    # A second server with its own database: upload the export through its Upload page.
    folder = tmp_path / "second"
    folder.mkdir()
    second = start_app(f"sqlite:///{folder / 'review.db'}", folder / "streamlit.log")
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        other = context.new_page()
        other.goto(second.url, timeout=TIMEOUT_MS)
        settle(other)
        no_exception(other, "the second server's first page")
        upload_file(other, download.suggested_filename, data, title="Overview: ")
        no_exception(other, "the overview after an upload")
        moved, current, events, runs = database_state(second.db_url, data)
        assert moved is not None, f"the export was not stored on the second server:\n{second.log_tail()}"
        assert current == expected, "every reviewer's verdict, reason, note and time must arrive"
        final = final_rows(second.db_url, moved.id)
        assert final.iloc[0].tolist() == ["conflict", "alice;bob", "pending", "pending"]
        assert final.iloc[1].tolist() == ["conflict", "alice;bob", "pending", "pending"]  # both_fail: not wrong
        assert final.iloc[3].tolist() == ["correct", "alice;bob", "correct", "human"]

        # The Reviewers page lists the conflicts.
        open_nav(other, "Reviewers", f"Reviewers: {moved.name}")
        no_exception(other, "the Reviewers page")
        main = other.locator("[data-testid='stMain']")
        expect(main).not_to_contain_text("No item has conflicting verdicts", timeout=TIMEOUT_MS)
        for question in SCORED["question"].iloc[[0, 1]]:  # in the conflicts table (its text is in the DOM)
            expect(main).to_contain_text(question, timeout=TIMEOUT_MS)

        # The same file again opens the same run and adds nothing.
        upload_file(other, download.suggested_filename, data, title="Overview: ")
        no_exception(other, "the overview after an upload")
        assert database_state(second.db_url, data) == (moved, current, events, runs)
        # The same verdicts in other bytes (with a BOM): the same rows, so the same run opens and
        # says so; no run and no verdict added.
        upload_file(other, "with_bom.csv", codecs.BOM_UTF8 + data, title="Overview: ")
        no_exception(other, "the overview after an upload")
        expect(main).to_contain_text(f"with_bom.csv: the same rows as run #{moved.id}", timeout=TIMEOUT_MS)
        assert database_state(second.db_url, data) == (moved, current, events, runs)
        assert database_state(second.db_url, codecs.BOM_UTF8 + data)[0] is None
        no_exception(other, "the overview after the uploads")
    finally:
        context.close()
        second.stop()
