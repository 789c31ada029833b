"""Real-browser test of "blind means blind everywhere" (issue 27, defect 9).

ana (an adjudicator) plans an audit on the True accuracy page with "Double-blind for the audit
scope" ticked. bob then works through an ordinary bucket scope of the Review queue that holds an
audit row: the rows outside the audit show the metrics and the highlighting as before; the audit
row is shown blind (no metric verdicts, no bucket, no highlight markup). In "My verdicts" the
audit row's bucket is not named, and reopened from there it is blind again.

Its own ``streamlit run`` (with ``REVIEW_ADJUDICATORS``) on a free port and SQLite file, driven by
Debian chromium with sidebar clicks; what was planned is read back from the server's database.
"""

from __future__ import annotations

import re
from pathlib import Path

from browser import TIMEOUT_MS, look_at_row, no_exception, open_nav, settle, start_app
from playwright.sync_api import Browser, Page, expect

from scoring import review, store
from scoring.core.highlight import EXACT_STYLE, WORD_STYLE
from scoring.core.protocols import BUCKETS
from scoring.store import make_engine
from ui.queue_state import scope_option

MAIN = "[data-testid='stMain']"
HIDDEN = "hidden (blind review)"


def _main(page: Page):
    return page.locator(MAIN)


def _row_shown(page: Page) -> int:
    found = re.search(r"Row (\d+) of the run", _main(page).inner_text())
    assert found, "no row on screen"
    return int(found.group(1))


def _assert_blind(page: Page, where: str) -> None:
    text, markup = _main(page).inner_text(), _main(page).inner_html()
    assert not [w for w in ("Exact:", "Overlap:", "Bucket:", "Judge suggests", "struck through") if w in text], where
    # The picker shows the scope's name; the card itself names no bucket.
    card = text.split("Row ", 1)[1]
    assert not [b for b in BUCKETS if b in card], (where, card)
    assert "<s>" not in markup and EXACT_STYLE not in markup and WORD_STYLE not in markup, where


def _assert_open(page: Page, where: str) -> None:
    text = _main(page).inner_text()
    assert "Exact:" in text and "Bucket:" in text and "struck through" in text, where


def _choose(page: Page, key: str, option: str) -> None:
    picker = page.locator(f".st-key-{key} input[role='combobox']").first
    picker.click()
    picker.fill(option.split(" ")[0])
    page.get_by_role("option", name=re.compile(rf"^{re.escape(option)}")).first.click()
    settle(page)


def test_an_audit_row_is_blind_in_a_bucket_scope_and_in_my_verdicts(browser: Browser, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'review.db'}"
    server = start_app(url, tmp_path / "streamlit.log", extra_env={"REVIEW_ADJUDICATORS": "ana"})
    engine = make_engine(url)
    try:
        # ana plans a double-blind audit on the True accuracy page.
        ana = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
        ana.goto(f"{server.url}/?reviewer=ana", timeout=TIMEOUT_MS)
        settle(ana)
        open_nav(ana, "True accuracy", "True accuracy")
        run = store.list_runs(engine)[0]
        # Nothing reviewed yet: the pilot leads the page and the planner waits in its tab.
        ana.get_by_role("tab", name="Plan").click()
        ana.locator(f".st-key-est_blind_{run.id} label").click()
        settle(ana)
        ana.locator(".st-key-est_audit button").click()
        expect(_main(ana)).to_contain_text("The audit scope now holds these", timeout=TIMEOUT_MS)
        no_exception(ana, "True accuracy after planning")
        audit = review.audit_keys(engine, run.id)
        assert audit and review.is_blind(engine, run.id, review.AUDIT)

        # The bucket scope whose queue comes soonest to an audit row after at least one row that is
        # not audited (so both kinds of card are seen), else the one that starts with one.
        scored = store.load_scored(engine, run.id)
        found = []
        for bucket in BUCKETS:
            rows = review.queue_scope(scored, bucket, seed=run.review_seed).row_idx
            at = [i for i, r in enumerate(rows) if scored["item_key"].iat[int(r)] in audit]
            if at:
                found.append((at[0] == 0, at[0], bucket, [int(r) + 1 for r in rows]))
        assert found
        _, position, bucket, order = min(found)

        # bob works through that bucket's ordinary (not blind) scope up to the audit row.
        bob = browser.new_context(viewport={"width": 1400, "height": 1100}).new_page()
        bob.goto(f"{server.url}/?reviewer=bob", timeout=TIMEOUT_MS)
        settle(bob)
        open_nav(bob, "Review queue", "Review queue")
        if bucket != "overlap_only":  # the picker names the job, the bucket in words and its rows
            _choose(bob, "q_bucket", scope_option(bucket, scored["bucket"].value_counts().to_dict(), len(audit)))
        expect(_main(bob)).to_contain_text("Mode: team split", timeout=TIMEOUT_MS)
        for i in range(position + 1):
            expect(_main(bob)).to_contain_text(f"Row {order[i]} of the run", timeout=TIMEOUT_MS)
            settle(bob)
            if i < position:
                _assert_open(bob, f"row {order[i]}, not audited")
            else:
                _assert_blind(bob, f"audit row {order[i]} in scope {bucket}")
                expect(_main(bob)).to_contain_text("Shown blind: a row of a double-blind scope")
            look_at_row(bob)
            bob.locator(".st-key-q_yes button").click()
            expect(_main(bob)).not_to_contain_text(f"Row {order[i]} of the run", timeout=TIMEOUT_MS)
            settle(bob)
        audited = order[position]
        no_exception(bob, "Review queue")

        # My verdicts, in the bucket's scope: the audit row's bucket reads hidden.
        bob.locator(".st-key-q_view button", has_text="My verdicts").click()
        settle(bob)
        expect(_main(bob)).to_contain_text(
            f"{position + 1} of the {position + 1} rows of this scope", timeout=TIMEOUT_MS
        )
        grid = _main(bob).locator("[data-testid='stDataFrame']")
        expect(grid).to_contain_text("verdict", timeout=TIMEOUT_MS)
        cells = grid.inner_text()
        # The rows before it name their bucket; the audit row's reads hidden (or, alone, no bucket column).
        assert cells.count(bucket) == position, cells
        assert (HIDDEN in cells) if position else ("bucket" not in cells), cells
        # In the audit scope nothing on the page names a bucket, and the row reopens blind.
        _choose(bob, "q_bucket", "Estimate: audit sample")
        expect(_main(bob)).to_contain_text("1 of the 1 rows of this scope", timeout=TIMEOUT_MS)
        text = _main(bob).inner_text()
        assert not [b for b in BUCKETS if b in text], text
        bob.locator(".st-key-q_my_open button").click()
        expect(_main(bob)).to_contain_text(f"Row {audited} of the run", timeout=TIMEOUT_MS)
        settle(bob)
        _assert_blind(bob, "audit row reopened from My verdicts")
        no_exception(bob, "My verdicts")
    finally:
        engine.dispose()
        server.stop()
