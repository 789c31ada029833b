"""Real-browser test of the True accuracy page (issue 13): a reviewer marks a few rows, opens True
accuracy from the sidebar, types a half-width, presses the planner's button, goes to the Review
queue, chooses the audit scope and marks the first planned row there.

``streamlit run`` on a free port with its own SQLite file (``server`` fixture; the bundled sample
run is loaded on first start), driven by Debian chromium as a person would. Never skips: without
chromium it fails. What the page planned and what was marked are checked in the server's database.
"""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, look_at_row, no_exception, open_nav, settle
from playwright.sync_api import Page, expect

from scoring import review, store
from scoring.estimate import next_rows
from scoring.estimate.stored_run import stored_estimate
from scoring.store import make_engine

REVIEWER = "planner_tester"


def main(page: Page):
    return page.locator("[data-testid='stMain']")


def test_plan_put_rows_in_the_audit_scope_and_review_one(server: AppServer, page: Page) -> None:
    engine = make_engine(server.db_url)
    try:
        _walk(server, page, engine)
    finally:
        engine.dispose()


def _walk(server: AppServer, page: Page, engine) -> None:
    # The Review queue first (a bookmarked link): mark three rows of its default scope, overlap_only.
    page.goto(f"{server.url}/review?reviewer={REVIEWER}", timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    settle(page)
    run = store.list_runs(engine)[0]
    for done in range(3):
        expect(main(page)).to_contain_text(f"Reviewed {done} of", timeout=TIMEOUT_MS)
        look_at_row(page)
        page.locator(".st-key-q_yes button").click()
        expect(main(page)).to_contain_text(f"Reviewed {done + 1} of", timeout=TIMEOUT_MS)
        settle(page)
    assert len(review.current_verdicts(engine, reviewer=REVIEWER)) == 3

    # True accuracy from the sidebar; type the half-width as a person does.
    open_nav(page, "True accuracy", "True accuracy")
    no_exception(page, "True accuracy")
    # three overlap-only rows give no interval: no figure, what to review instead (issue 36)
    expect(main(page)).to_contain_text("No estimated true accuracy yet: 3 reviewed rows of 40 give no 95% interval")
    box = page.locator(".st-key-est_half_width input")
    box.click()
    box.press("Control+a")
    box.press_sequentially("10")
    box.press("Enter")
    expect(main(page)).to_contain_text("Review plan for ±10 points", timeout=TIMEOUT_MS)
    settle(page)
    info, figures = stored_estimate(engine, run.id, 0.10)
    wanted = next_rows(figures.sample, figures.plan, seed=info.info.review_seed)
    assert 0 < wanted.height < 37
    button = page.locator(".st-key-est_audit button")
    expect(button).to_have_text(f"Put these {wanted.height} rows in the audit scope")
    button.click()
    expect(main(page)).to_contain_text(f"The audit scope now holds these {wanted.height} rows", timeout=TIMEOUT_MS)
    settle(page)
    assert review.audit_keys(engine, run.id) == set(wanted["item_key"].to_list())
    expect(page.locator("[data-testid='stPageLink']")).to_contain_text("Review the audit scope")
    no_exception(page, "True accuracy after planning")

    # The Review queue: choose the audit scope (the estimate's job), see the first planned row, mark it.
    open_nav(page, "Review queue", "Review queue")
    picker = page.locator(".st-key-q_bucket input[role='combobox']").first
    picker.click()
    picker.fill("audit")
    page.get_by_role("option", name=re.compile(r"^Estimate: audit sample \(")).first.click()
    first = wanted.row(0, named=True)
    expect(main(page)).to_contain_text(f"Reviewed 0 of {wanted.height} in this scope", timeout=TIMEOUT_MS)
    expect(main(page)).to_contain_text(f"Row {first['row_idx'] + 1} of the run", timeout=TIMEOUT_MS)
    settle(page)
    look_at_row(page)
    page.locator(".st-key-q_no button").click()
    expect(main(page)).to_contain_text(f"Reviewed 1 of {wanted.height} in this scope", timeout=TIMEOUT_MS)
    settle(page)
    mine = review.current_verdicts(engine, reviewer=REVIEWER)
    assert dict(zip(mine["item_key"], mine["verdict"], strict=True))[first["item_key"]] == "wrong"
    no_exception(page, "Review queue, audit scope")
