"""Blind means blind on every page, including new ones (issue 36, point 8), in a real browser.

A run is under double-blind review (its audit scope, as the True accuracy planner sets it) and
two other reviewers, Zoltan and Quenby, have given their verdicts on it (they disagree on some
rows). bob, who is not an adjudicator (``REVIEW_ADJUDICATORS=ana``), opens every page the sidebar's
navigation lists, clicking each link as a person does: the list is read from the sidebar itself,
so a page added later is swept without editing this test. No page shows him a figure built on
the other reviewers' verdicts, nor their names. ana, the adjudicator, sweeps the same pages and
does see them (so the sweep is not vacuous), on the Model x language page among others.

What counts as "a figure built on other reviewers' verdicts" (:data:`FIGURES`) is what only such a
figure carries: the adjudicated series' label, the estimated true accuracy's label, a count of
reviewed rows behind an estimate ("16 reviewed"), and the reviewers' names.

One ``streamlit run`` for the module, on its own SQLite file prepared before it starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser import NAV_LINK, TIMEOUT_MS, AppServer, no_exception, settle, start_app
from playwright.sync_api import Browser, Page

from scoring import ingest, review, store
from scoring.store import make_engine
from ui.identity import BLIND_NOTE

MAIN = "[data-testid='stMain']"
ICON = "[data-testid='stIconMaterial']"
OTHERS = ("Zoltan", "Quenby")  #: the other reviewers, whose verdicts are stored
ADJUDICATOR, REVIEWER = "ana", "bob"
#: What only a figure built on reviewers' verdicts shows (case matters: the blind note says
#: "the adjudicated accuracy and the estimated true accuracy are hidden" in small letters).
FIGURES = re.compile(r"\bAdjudicated\b|\bEstimated\b|\b[1-9][\d,]* reviewed\b|" + "|".join(OTHERS))
BLIND_SAID = BLIND_NOTE.split(":")[0]  #: "Double-blind review is on for this run"


@pytest.fixture(scope="module")
def blind_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppServer, store.RunInfo]]:
    """The bundled sample set; its newest run (the one every page opens on) under double-blind
    review of its audit scope, with every row marked by Zoltan and a quarter by Quenby, who
    disagrees on half of those."""
    folder = tmp_path_factory.mktemp("blind_pages")
    url = f"sqlite:///{folder / 'review.db'}"
    engine = make_engine(url)
    try:
        run = ingest.ensure_sample(engine)
        assert run is not None
        scored = store.load_scored(engine, run.id)
        order = review.queue_scope(scored, None, seed=run.review_seed)
        keys = [str(scored["item_key"].iat[int(i)]) for i in order.row_idx]
        review.set_audit(engine, run.id, keys[: len(keys) // 2], ADJUDICATOR)
        review.set_blind(engine, run.id, review.BlindSpec(review.AUDIT), ADJUDICATOR)
        for i, key in enumerate(keys):
            verdict = "correct" if i % 3 else "wrong"
            review.record_mark(engine, key, run.id, OTHERS[0], verdict, note=f"{OTHERS[0]} looked")
            if i % 4 == 0:
                other = verdict if i % 8 else ("wrong" if verdict == "correct" else "correct")
                review.record_mark(engine, key, run.id, OTHERS[1], other, note=f"{OTHERS[1]} looked")
    finally:
        engine.dispose()
    server = start_app(url, folder / "streamlit.log", extra_env={"REVIEW_ADJUDICATORS": ADJUDICATOR})
    try:
        yield server, run
    finally:
        server.stop()


def _label(page: Page, index: int) -> str:
    """The i-th navigation link's words (its icon's ligature name left out)."""
    link = page.locator(NAV_LINK).nth(index)
    text = link.inner_text()
    icon = link.locator(ICON)
    if icon.count():
        text = text.replace(icon.first.inner_text(), "", 1)
    return text.strip()


HEADING = f"{MAIN} h1"
#: In the page: whether the main area's first heading is no longer ``arg`` (the last page's).
HEADING_CHANGED = f"(last) => {{ const h = document.querySelector({HEADING!r}); return !h || h.innerText !== last; }}"


def _heading(page: Page) -> str | None:
    found = page.locator(HEADING)
    return found.first.inner_text() if found.count() else None


def sweep(browser: Browser, server: AppServer, who: str) -> dict[str, str]:
    """Every page of the sidebar's navigation, opened by clicking its link as ``who``: the main
    area's text of each, by the link's words."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/?reviewer={who}", timeout=TIMEOUT_MS)
        settle(page)
        count = page.locator(NAV_LINK).count()
        assert count >= 10, f"the sidebar lists {count} pages"
        seen: dict[str, str] = {}
        for index in range(count):
            label = _label(page, index)
            link = page.locator(NAV_LINK).nth(index)
            href = link.get_attribute("href") or ""
            heading = _heading(page)
            link.click()
            page.wait_for_url(re.compile(re.escape(href.split("?")[0]) + r"(\?.*)?$"), timeout=TIMEOUT_MS)
            if index:  # the page's own heading has replaced the last one's (none is left: a page without one)
                page.wait_for_function(HEADING_CHANGED, arg=heading, timeout=TIMEOUT_MS)
            settle(page)
            no_exception(page, f"{label} as {who}")
            seen[label] = page.locator(MAIN).inner_text()
        return seen
    finally:
        context.close()


def test_no_page_shows_a_blind_reviewer_what_others_decided(
    browser: Browser, blind_server: tuple[AppServer, store.RunInfo]
) -> None:
    server, _ = blind_server
    bob = sweep(browser, server, REVIEWER)
    leaks = {label: sorted(set(FIGURES.findall(text))) for label, text in bob.items() if FIGURES.search(text)}
    assert not leaks, f"pages showing {REVIEWER} figures built on others' verdicts: {leaks}"

    ana = sweep(browser, server, ADJUDICATOR)
    assert list(ana) == list(bob)  # the same navigation for both
    shown = {label: sorted(set(FIGURES.findall(text))) for label, text in ana.items() if FIGURES.search(text)}
    # Not vacuous: the adjudicator sees the figures and names, on the Model x language page too.
    assert "Model x language" in shown and len(shown) >= 5, shown
    for label, text in bob.items():
        if BLIND_SAID in text:  # something was withheld from bob here: ana is shown it
            assert BLIND_SAID not in ana[label] and ana[label] != text, label
