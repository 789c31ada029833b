"""Real-browser tests of the number formatting and the Agreement page's row search (issue 8, section 6).

The dashboard runs with `streamlit run` on a free port (``server`` fixture, its own SQLite file
holding the bundled sample run) and Debian chromium drives it; pages are opened by clicking the
sidebar links, as a reviewer does. These never skip: without chromium they fail.
"""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, exception_count, open_nav, settle
from playwright.sync_api import Locator, Page, expect

P_ZERO = re.compile(r"p = 0(?![.\d])")
ROW_CARD = re.compile(r"^Row (\d+)   ")


def main(page: Page) -> Locator:
    return page.locator("[data-testid='stMain']")


def grid_cells(page: Page) -> list[str]:
    """Text of every dataframe cell on the page (the data grid's accessible cells: what is shown)."""
    cells = page.locator("[data-testid='stDataFrame'] [role='gridcell']")
    expect(cells.first).to_be_attached(timeout=TIMEOUT_MS)
    return [c.strip() for c in cells.all_text_contents()]


def row_cards(page: Page) -> list[int]:
    """1-based row numbers of the row browser's cards on screen."""
    texts = main(page).locator("[data-testid='stText']").all_inner_texts()
    return [int(m.group(1)) for t in texts if (m := ROW_CARD.match(t))]


def search(page: Page, query: str) -> None:
    """Type into the row browser's search field and submit with Enter."""
    box = page.locator(".st-key-agree_search input").first
    box.fill(query)
    box.press("Enter")
    settle(page)


def assert_plain_numbers(page: Page, where: str) -> None:
    """No "p = 0", no "None", no exception box anywhere on the page."""
    text = main(page).inner_text()
    assert not P_ZERO.search(text), f"{where}: 'p = 0' on the page"
    assert "None" not in text, f"{where}: 'None' on the page"
    assert "None" not in grid_cells(page), f"{where}: a 'None' cell"
    assert exception_count(page) == 0, f"{where}: an exception is shown"


def test_overview_percentages_and_agreement_search(server: AppServer, page: Page) -> None:
    page.goto(f"{server.url}/?reviewer=pages_tester", timeout=TIMEOUT_MS)  # so the queue's buttons are enabled
    settle(page)
    expect(page.locator("h1").first).to_have_text("Start here", timeout=TIMEOUT_MS)
    open_nav(page, "Overview", "Overview: Sample run")

    # Overview: every accuracy reads as a percentage, in the metrics and in the table.
    metrics = page.locator("[data-testid='stMetricValue']").all_inner_texts()
    assert metrics and all(re.fullmatch(r"\d{1,3}\.\d%", m.strip()) for m in metrics), metrics
    # The grid draws on a canvas; its accessible cells carry a number column's raw value (0.6667)
    # even though the canvas shows the page's formatting (66.7%), so the displayed percentages are
    # checked in AppTest (tests/test_app_pages.py reads the Styler's display values). Here: the
    # interval column, which is text, and the metrics above.
    cells = grid_cells(page)
    assert "39.1% to 86.2%" in cells, cells  # Art, exact substring: 8 of 12
    assert_plain_numbers(page, "Overview")

    # Agreement, opened from the sidebar: p-value and precision formatting.
    open_nav(page, "Agreement", "Agreement: Sample run")
    expect(main(page)).to_contain_text("p = 0.5811", timeout=TIMEOUT_MS)
    assert "—" in grid_cells(page)  # precision with no reviewed rows
    assert_plain_numbers(page, "Agreement")

    # The row browser (bucket overlap_only, 8 rows) narrowed by the search field.
    expect(main(page)).to_contain_text("(of 1; 8 rows)", timeout=TIMEOUT_MS)
    assert len(row_cards(page)) == 8
    search(page, "नेहरू")  # Hindi, in the golden answer and the response of row 19
    expect(main(page)).to_contain_text("1 of 8 rows in this bucket and domain match the search.", timeout=TIMEOUT_MS)
    assert row_cards(page) == [19]
    expect(main(page)).to_contain_text("(of 1; 1 rows)", timeout=TIMEOUT_MS)
    search(page, "THAR")  # case-insensitive
    assert row_cards(page) == [27]
    search(page, "#34")  # a row number
    assert row_cards(page) == [34]
    search(page, "no such words here")
    assert row_cards(page) == []
    expect(main(page)).to_contain_text("(of 1; 0 rows)", timeout=TIMEOUT_MS)
    search(page, "")
    assert len(row_cards(page)) == 8
    assert exception_count(page) == 0

    # A found row opens in the review queue (row number in the URL for the queue to read).
    search(page, "नेहरू")
    page.get_by_role("button", name="Open row 19 in the review queue").click()
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    settle(page)
    assert re.search(r"[?&]run=\d+", page.url), page.url
    expect(main(page)).to_contain_text("Row 19 of the run", timeout=TIMEOUT_MS)  # the queue read ?row=19
    # The theme's primary colour (the Correct button) is teal, not Streamlit's default red.
    correct = page.locator("[data-testid='stBaseButton-primary']", has_text="Correct").first
    expect(correct).to_be_enabled(timeout=TIMEOUT_MS)
    colours = correct.evaluate("e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).borderColor]")
    assert any("15, 118, 110" in c for c in colours), colours


def test_a_first_start_compares_the_sample_set(server: AppServer, page: Page) -> None:
    """Issue 20: on the bundled sample set, Compare (opened from the sidebar) shows the four
    samples matched by question id, the model x language heatmap and the paired table at once,
    never "Pick at least two runs"; the sidebar's run list marks them as samples."""
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    picker = page.locator("[data-testid='stSidebar']").get_by_role("combobox", name="Run")
    expect(picker).to_have_value(
        re.compile(r"^#\d+ Sample run · sample-model-a · .* · sample \(40 rows\)$"), timeout=TIMEOUT_MS
    )
    open_nav(page, "Compare", "Compare runs")
    body = main(page)
    expect(body).to_contain_text("Matched on id column 'question_id'", timeout=TIMEOUT_MS)
    expect(body).to_contain_text("20 questions are in every run, once each.")
    assert "Pick at least two runs" not in body.inner_text()
    chips = page.locator(".st-key-cmp_runs [data-testid='stMultiSelectTagsContainer'] [data-tag]")  # the chosen runs
    expect(chips).to_have_count(4, timeout=TIMEOUT_MS)
    heatmap = page.locator(".st-key-cmp_heatmap .js-plotly-plot")
    expect(heatmap).to_be_visible(timeout=TIMEOUT_MS)
    assert "sample-model-b" in heatmap.inner_text() and "Hindi" in heatmap.inner_text()
    paired = page.locator(".st-key-cmp_paired_box [data-testid='stDataFrame']")
    expect(paired).to_be_visible(timeout=TIMEOUT_MS)
    assert exception_count(page) == 0


# For each script, letters drawn in the page's own font, each measured on a canvas: without a font
# for the script every letter is the same empty box (the width of an unassigned code point's box).
GLYPH_WIDTHS = """async (letters) => {
    const font = getComputedStyle(document.querySelector("[data-testid='stMain']")).font;
    await document.fonts.load(font, letters);  // the app's own faces load when text needs them
    const ctx = document.createElement("canvas").getContext("2d");
    ctx.font = font;
    const box = ctx.measureText("\\u0378").width;  // unassigned: always the missing-glyph box
    return {font: font, box: box, widths: [...letters].map((c) => ctx.measureText(c).width)};
}"""
INDIC_LETTERS = {"Devanagari": "कखगघचजटडतदनपमयरलवसह", "Tamil": "கஙசஞடணதநபமயரலவழளறன", "Bengali": "কখগঘচজটডতদনপমযরলসহ"}


def test_indic_text_is_drawn_with_real_glyphs(server: AppServer, page: Page) -> None:
    """Issue 27: the browser tests see Devanagari, Tamil and Bengali as letters, not empty boxes
    (the app serves its own Noto fonts, issue 36; ``tests/test_browser_fonts.py`` checks every
    letter with the system's fonts hidden)."""
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    for script, letters in INDIC_LETTERS.items():
        got = page.evaluate(GLYPH_WIDTHS, letters)
        widths = [round(w, 2) for w in got["widths"]]
        boxes = sum(w == round(got["box"], 2) for w in widths)
        assert len(set(widths)) > 3 and boxes < len(widths) / 2, (script, got["font"], widths, got["box"])
