"""A team on one PostgreSQL database (issue 11): two dashboard processes on two ports, a reviewer
in a real browser on each, marking at the same time; after a refresh each sees the other's marks
on the Reviewers page, and the database holds every mark once; then in double-blind mode no row
is handed to two reviewers at once, across the two processes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pg_server
from browser import TIMEOUT_MS, exception_count, open_nav, settle, start_app
from playwright.sync_api import Browser, Page, expect

from scoring import review, store
from scoring.store import make_engine


def _reviewer_page(browser: Browser, url: str, name: str) -> Page:
    page = browser.new_context().new_page()
    page.goto(f"{url}/?reviewer={name}", timeout=TIMEOUT_MS)
    settle(page)
    open_nav(page, "Review queue", "Review queue")
    return page


def _mark(page: Page, times: int) -> None:
    """Press Correct ``times`` times, each after the next row is shown (as a person does)."""
    for _ in range(times):
        before = page.locator("[data-testid='stMain']").inner_text()
        row = re.search(r"Row (\d+) of the run", before)
        page.locator(".st-key-q_yes button").click()
        expect(page.locator("[data-testid='stMain']")).not_to_contain_text(
            row.group(0) if row else "\0", timeout=TIMEOUT_MS
        )
        settle(page)


def _row_shown(page: Page) -> int:
    found = re.search(r"Row (\d+) of the run", page.locator("[data-testid='stMain']").inner_text())
    assert found, "no row on screen"
    return int(found.group(1))


def test_two_dashboard_processes_share_one_postgresql_and_double_blind_holds_across_them(
    postgres: pg_server.PgServer, browser: Browser, tmp_path: Path
) -> None:
    """Two processes, one database (both parts share the servers: starting them is most of the
    time). First alice (process one) and bob (process two) mark; after a refresh each sees the
    other's marks on the Reviewers page. Then ana (an adjudicator) turns double-blind on in
    process one: ana, alice and bob are each shown a different row, held for them in the shared
    database, without the metrics; each marks the row held for them, not another's."""
    name, url = postgres.database()
    make_engine(url).dispose()  # migrate once before two processes start (they would agree anyway)
    env = {"REVIEW_ADJUDICATORS": "ana"}
    one = start_app(url, tmp_path / "one.log", extra_env=env)
    two = start_app(url, tmp_path / "two.log", extra_env=env)
    try:
        alice = _reviewer_page(browser, one.url, "alice")
        bob = _reviewer_page(browser, two.url, "bob")
        _mark(alice, 2)
        _mark(bob, 3)
        _mark(alice, 1)
        for page in (alice, bob):
            page.reload(timeout=TIMEOUT_MS)
            settle(page)
            open_nav(page, "Reviewers", "Reviewers")
            main = page.locator("[data-testid='stMain']")
            # Both marked the same three rows (each in their own process): the pair is on both.
            expect(main).to_contain_text("alice vs bob: n = 3, raw agreement = 100.0%", timeout=TIMEOUT_MS)
            assert exception_count(page) == 0
        engine = make_engine(url)
        current = review.current_verdicts(engine)
        assert current.groupby("reviewer").size().to_dict() == {"alice": 3, "bob": 3}
        assert (current["verdict"] == "correct").all()
        assert store.count_runs(engine) == 1  # the sample, loaded once though two processes started
        first_part = set(current["item_key"])

        ana = _reviewer_page(browser, one.url, "ana")
        ana.locator("[data-testid='stMain'] label", has_text="Double-blind for this scope").click()
        settle(ana)
        expect(ana.locator("[data-testid='stMain']")).to_contain_text("Double-blind review", timeout=TIMEOUT_MS)
        for page in (alice, bob):
            open_nav(page, "Review queue", "Review queue")
        rows = {_row_shown(ana), _row_shown(alice), _row_shown(bob)}
        assert len(rows) == 3, rows  # three reviewers, three different rows held
        for page in (alice, bob):
            assert "Exact:" not in page.locator("[data-testid='stMain']").inner_text()  # metrics hidden
        shown = {"alice": _row_shown(alice), "bob": _row_shown(bob)}
        _mark(alice, 1)
        _mark(bob, 1)
        scored = store.load_scored(engine, store.list_runs(engine)[0].id)
        current = review.current_verdicts(engine)
        new = current[~current["item_key"].isin(first_part)]
        marked = {r.reviewer: int(scored.loc[scored["item_key"] == r.item_key, "row_idx"].iloc[0]) + 1
                  for r in new.itertuples()}  # fmt: skip
        assert marked == shown  # each marked the row held for them, not the other's
        assert exception_count(alice) == 0 and exception_count(bob) == 0
        engine.dispose()
    finally:
        one.stop()
        two.stop()
        postgres.drop(name)
