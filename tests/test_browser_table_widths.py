"""Issue 37: at 1280x720 (a laptop, the sidebar open) no table on Overview, Compare, Model x
language or Matchers is cut off on the right. Each ``st.dataframe`` is measured in a real browser:
its box ends inside the window, and its grid scrolls no wider than it is (a grid wider than its box
hides its last columns behind a horizontal scroll bar nobody sees). The pages show the bundled
sample runs (a first start), whose tables are as wide as a page gets with two metrics, the
adjudicated figures, four runs compared and five languages."""

from __future__ import annotations

import pytest
from browser import TIMEOUT_MS, AppServer, settle
from playwright.sync_api import Browser

WINDOW = {"width": 1280, "height": 720}
#: Each page and the tables it shows at least (Compare: accuracy, the paired answer and its counts).
PAGES = {"overview": 1, "compare": 3, "languages": 1, "matchers": 1}
#: The tables a reader sees without opening anything (one in a closed expander is not drawn).
TABLES = (
    "[...document.querySelectorAll(\"[data-testid='stDataFrame']\")].filter(e => !e.closest('details:not([open])'))"
)
#: Every table's box and its grid's scrolled width, read in the page.
MEASURE = f"""() => {TABLES}.map(el => {{
  const box = el.getBoundingClientRect(); const grid = el.querySelector('.dvn-scroller');
  return {{right: box.right, scrolled: grid ? grid.scrollWidth : 0, shown: grid ? grid.clientWidth : 0}};
}})"""
DRAWN = f"(least) => {TABLES}.length >= least && {TABLES}.every(e => e.querySelector('.dvn-scroller'))"


@pytest.mark.parametrize("name", PAGES)
def test_no_table_is_cut_off_on_the_right_at_1280x720(server: AppServer, browser: Browser, name: str) -> None:
    context = browser.new_context(viewport=WINDOW)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/{name}", timeout=TIMEOUT_MS)
        settle(page)
        page.wait_for_function(DRAWN, arg=PAGES[name], timeout=TIMEOUT_MS)
        tables = page.evaluate(MEASURE)
        assert len(tables) >= PAGES[name], f"{len(tables)} tables on {name}"
        for i, t in enumerate(tables):
            assert t["right"] <= WINDOW["width"], f"{name}: table {i} ends at {t['right']} px, past the window"
            assert t["scrolled"] <= t["shown"] + 1, (
                f"{name}: table {i} is {t['scrolled']} px wide in a {t['shown']} px box: its right part is cut off"
            )
    finally:
        context.close()
