"""Issue 36, point 7, in a real browser: no figure before its evidence. A fresh upload, 13 rows
of the triage queue marked by click (the overlap-only bucket, so the other buckets have no
reviewed row: the estimate has no interval yet), then True accuracy, the Overview and Model x
language: none of them prints a percentage for the estimated true accuracy, and each says what to
review to get one ("Review at least k more rows of the random sample ... to get an estimate").

Before the fix the three pages led with the point estimate of a figure without an interval
("Estimated true accuracy 50.2%" beside "not yet"), its unreviewed buckets counted at 50%.
"""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Locator, Page, expect

from scoring import review, store
from scoring.store import make_engine

MAIN = "[data-testid='stMain']"
NAME = "evidence_model.csv"
REVIEWER = "evidence_tester"
TRIAGED = 13
#: The words every surface uses where an estimate has no interval yet (scoring.estimate.wording).
TO_GET_ONE = "to get an estimate"
PERCENT = re.compile(r"\d+(\.\d+)?\s*%")


def evidence_csv() -> bytes:
    """80 English rows over three domains, every bucket present: rows i % 4 == 1 are overlap-only
    (the triage queue's 20 rows), 0 both pass, 2 both fail, 3 exact-only."""
    lines = ["question,answer,Domain,response,language"]
    for i in range(80):
        answer = f"ev{i} river"
        response = {0: f"It is {answer}.", 1: f"river ev{i} region", 2: f"nothing about it {i}", 3: f"the {answer}s"}[
            i % 4
        ]
        lines.append(f"evidence question {i}?,{answer},{('History', 'Art', 'Geography')[i % 3]},{response},English")
    return ("\n".join(lines) + "\n").encode("utf-8")


def metric_values(page: Page, label: re.Pattern[str]) -> list[str]:
    """The values of the st.metric boxes whose label matches ``label``."""
    found = []
    for box in page.locator(f"{MAIN} [data-testid='stMetric']").all():
        if label.search(box.locator("[data-testid='stMetricLabel']").inner_text()):
            found.append(box.locator("[data-testid='stMetricValue']").inner_text())
    return found


def no_percent_in(values: list[str], where: str) -> None:
    for value in values:
        assert not PERCENT.search(value), f"{where}: the estimate shows {value!r} without an interval"


def test_thirteen_triage_rows_give_no_estimated_figure_anywhere(server: AppServer, page: Page) -> None:
    main: Locator = page.locator(MAIN)
    page.goto(server.url, timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text("Start here", timeout=TIMEOUT_MS)
    data = evidence_csv()
    upload_file(page, NAME, data)
    no_exception(page, "the Overview after the upload")

    # 13 rows of the triage queue (the Review queue's default scope: overlap-only), by click.
    page.goto(f"{server.url}/review?reviewer={REVIEWER}", timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    settle(page)
    engine = make_engine(server.db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        assert run is not None
        for done in range(TRIAGED):
            expect(main).to_contain_text(f"Reviewed {done} of", timeout=TIMEOUT_MS)
            page.locator(f".st-key-q_{'yes' if done % 3 else 'no'} button").click()
            expect(main).to_contain_text(f"Reviewed {done + 1} of", timeout=TIMEOUT_MS)
            settle(page)
        marks = review.current_verdicts(engine, reviewer=REVIEWER)
        assert len(marks) == TRIAGED
        scored = store.load_scored(engine, run.id)
        buckets = set(scored.loc[scored["item_key"].isin(marks["item_key"]), "bucket"])
        assert buckets == {"overlap_only"}, buckets  # triage only: three buckets have no reviewed row
    finally:
        engine.dispose()
    no_exception(page, "the triage queue")

    # True accuracy: no estimated figure, the words of what to review instead.
    open_nav(page, "True accuracy", "True accuracy")
    no_exception(page, "True accuracy")
    expect(main).to_contain_text(TO_GET_ONE, timeout=TIMEOUT_MS)
    no_percent_in(metric_values(page, re.compile(r"true accuracy|judge-assisted", re.I)), "True accuracy's headline")
    text = main.inner_text()
    assert not re.search(r"Combined: \d", text), text[:2000]
    assert "at least 2 in each of: both_pass, both_fail, exact_only" in text, text[:2000]
    # The chart draws the metrics' bars with their intervals, and no estimate bar: no zero-width cap
    # that reads as certainty (no scope has an interval: no estimate series at all; the table and the
    # words say what to review instead).
    chart = page.locator(".st-key-est_chart")
    traces = chart.locator("g.trace.bars")
    expect(traces).to_have_count(2, timeout=TIMEOUT_MS)  # exact (raw), overlap (raw)
    assert traces.nth(0).locator("path.yerror").count() > 0  # the raw metrics' intervals are drawn
    legend = chart.locator("g.legend").text_content() or ""
    assert "Exact substring (raw)" in legend and "Estimated true accuracy" not in legend, legend

    # The Overview: the estimate's box holds no percentage and says what to review.
    open_nav(page, "Overview", "Overview")
    no_exception(page, "Overview")
    expect(main).to_contain_text(TO_GET_ONE, timeout=TIMEOUT_MS)
    no_percent_in(metric_values(page, re.compile(r"^Estimated", re.I)), "the Overview's estimate")

    # Model x language: the uploaded model's English cell is no percentage, but what to review.
    open_nav(page, "Model x language", "Model x language")
    no_exception(page, "Model x language")
    heatmap = page.locator(".st-key-lang_heatmap")
    expect(heatmap).to_contain_text("no estimate yet", timeout=TIMEOUT_MS)
    cells = [t for t in heatmap.locator("text").all_text_contents() if "reviewed" in t]
    ours = [t for t in cells if f"{TRIAGED} reviewed" in t]
    assert ours, cells
    for cell in ours:
        assert not PERCENT.search(cell), f"Model x language cell {cell!r}: a figure without an interval"
    # The chart's labels are short (issue 37): what to review is said in full under it.
    expect(main).to_contain_text(re.compile(r"· English: Review at least \d+ more rows? of the random sample"))
