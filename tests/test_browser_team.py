"""A team on one PostgreSQL database (issues 11 and 18): two dashboard processes on two ports,
reviewers in real browsers on both. Outside double-blind three reviewers of one scope are each
handed different rows, across the two processes, and what the team marked is a prefix of the
seeded order; a second opinion is asked for on purpose and the Reviewers page of the other
process measures the agreement; then in double-blind mode no row is handed to two reviewers at
once, across the two processes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pg_server
from browser import TIMEOUT_MS, exception_count, look_at_row, open_nav, settle, start_app
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import Engine

from scoring import review, store
from scoring.store import make_engine

MAIN = "[data-testid='stMain']"


def _switch_mode(page, label: str) -> None:
    """Open the queue's "Review mode" popover, as a person does, flip a switch, close it again."""
    page.locator("[data-testid='stPopover'] button", has_text="Review mode").click()
    page.locator("[data-testid='stPopoverBody'] label", has_text=label).click()
    page.keyboard.press("Escape")


def _reviewer_page(browser: Browser, url: str, name: str) -> Page:
    page = browser.new_context().new_page()
    page.goto(f"{url}/?reviewer={name}", timeout=TIMEOUT_MS)
    settle(page)
    open_nav(page, "Review queue", "Review queue")
    return page


def _mark(page: Page, times: int) -> None:
    """Press Correct ``times`` times, each after the next row is shown (as a person does)."""
    for _ in range(times):
        before = page.locator(MAIN).inner_text()
        row = re.search(r"Row (\d+) of the run", before)
        look_at_row(page)
        page.locator(".st-key-q_yes button").click()
        expect(page.locator(MAIN)).not_to_contain_text(row.group(0) if row else "\0", timeout=TIMEOUT_MS)
        settle(page)


def _row_shown(page: Page) -> int:
    found = re.search(r"Row (\d+) of the run", page.locator(MAIN).inner_text())
    assert found, "no row on screen"
    return int(found.group(1))


def _marks(engine: Engine, rows_of: dict[str, int]) -> set[tuple[str, int]]:
    """(reviewer, 1-based row) of every verdict in force."""
    current = review.current_verdicts(engine)
    return {(r.reviewer, rows_of[r.item_key]) for r in current.itertuples()}


def test_two_dashboard_processes_share_one_postgresql_split_the_rows_and_double_blind_holds_across_them(
    postgres: pg_server.PgServer, browser: Browser, tmp_path: Path
) -> None:
    """Two processes, one database (the parts share the servers: starting them is most of the
    time). alice and carol (process one) and bob (process two) open the queue on one scope: each
    is shown a different row, in the seeded order. They mark in turn: every row is marked once,
    and the marked rows are the first five of the order. bob turns on Second opinion and is handed
    alice's first row; the Reviewers page of process one shows the pair. Then ana
    (an adjudicator) turns double-blind on in process one: ana, alice and bob are each shown a
    different row, held for them in the shared database, without the metrics; each marks the row
    held for them, not another's."""
    name, url = postgres.database()
    make_engine(url).dispose()  # migrate once before two processes start (they would agree anyway)
    env = {"REVIEW_ADJUDICATORS": "ana"}
    one = start_app(url, tmp_path / "one.log", extra_env=env)
    two = start_app(url, tmp_path / "two.log", extra_env=env)
    engine = make_engine(url)
    try:
        alice = _reviewer_page(browser, one.url, "alice")
        bob = _reviewer_page(browser, two.url, "bob")
        carol = _reviewer_page(browser, one.url, "carol")
        run = store.list_runs(engine)[0]
        scored = store.load_scored(engine, run.id)
        rows_of = {str(k): int(i) + 1 for k, i in zip(scored["item_key"], scored["row_idx"], strict=True)}
        order = [int(i) + 1 for i in review.queue_scope(scored, "overlap_only", seed=run.review_seed).row_idx]
        assert [_row_shown(p) for p in (alice, bob, carol)] == order[:3]  # claimed in turn, across processes
        for page in (alice, bob, alice, bob, carol):
            _mark(page, 1)
        marks = _marks(engine, rows_of)
        assert sorted(r for _, r in marks) == sorted(order[:5])  # each row once, the team's rows a prefix
        assert {r for who, r in marks if who == "alice"} == {order[0], order[3]}
        assert {r for who, r in marks if who == "bob"} == {order[1], order[4]}
        assert store.count_runs(engine) == len(store.SAMPLE_SET)  # loaded once, though two processes started
        expect(carol.locator(MAIN)).to_contain_text("(rows marked by anyone: the team shares this scope)")
        assert f"Reviewed 5 of {len(order)} in this scope" in carol.locator(MAIN).inner_text()

        _switch_mode(bob, "Second opinion")
        settle(bob)
        expect(bob.locator(MAIN)).to_contain_text(f"Row {order[0]} of the run", timeout=TIMEOUT_MS)  # alice's row
        _mark(bob, 1)
        open_nav(alice, "Reviewers", "Reviewers")
        expect(alice.locator(MAIN)).to_contain_text("alice vs bob: n = 1, raw agreement = 100.0%", timeout=TIMEOUT_MS)
        assert exception_count(alice) == 0 and exception_count(bob) == 0 and exception_count(carol) == 0
        before = _marks(engine, rows_of)
        assert len(before) == 6 and (("bob", order[0]) in before)

        ana = _reviewer_page(browser, one.url, "ana")
        _switch_mode(ana, "Double-blind for this scope")
        settle(ana)
        expect(ana.locator(MAIN)).to_contain_text("Mode: double-blind", timeout=TIMEOUT_MS)
        assert "ana" not in review.live_claims(engine).values()  # switching the mode holds nothing (issue 20)
        ana.get_by_role("button", name="Start reviewing").click()
        settle(ana)
        for page in (alice, bob):
            open_nav(page, "Review queue", "Review queue")
        rows = {_row_shown(ana), _row_shown(alice), _row_shown(bob)}
        assert len(rows) == 3, rows  # three reviewers, three different rows held
        for page in (alice, bob):
            assert "Exact:" not in page.locator(MAIN).inner_text()  # metrics hidden
        shown = {"alice": _row_shown(alice), "bob": _row_shown(bob)}
        _mark(alice, 1)
        _mark(bob, 1)
        new = _marks(engine, rows_of) - before
        assert {who: row for who, row in new} == shown  # each marked the row held for them, not the other's
        assert exception_count(alice) == 0 and exception_count(bob) == 0
    finally:
        engine.dispose()
        one.stop()
        two.stop()
        postgres.drop(name)
