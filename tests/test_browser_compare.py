"""Real-browser test of the Compare page (issue 12): three runs uploaded through the file uploader,
the page opened from the sidebar, its tables and charts drawn, a discordant question chosen in
the table and opened in the review queue.

``streamlit run`` on a free port with its own SQLite file (``server`` fixture; the bundled sample
run is loaded on first start), driven by Debian chromium as a person would. Never skips: without
chromium it fails.
"""

from __future__ import annotations

import re

from browser import NAV_LINK, TIMEOUT_MS, UPLOAD_INPUT, AppServer, look_at_row, no_exception, open_nav, settle
from playwright.sync_api import Page, expect

QIDS = [f"q{i:02d}" for i in range(6)]
ANSWERS = ["Delhi", "Ganga", "Everest", "Tagore", "Premchand", "Ashoka"]
DOMAINS = ["Art", "History"] * 3
# Right on these questions (exact substring and word overlap agree: one-word golden answers).
RIGHT = {"gpt_hindi.csv": {0, 1, 2, 3}, "llama_hindi.csv": {0, 4}, "gpt_tamil.csv": {0, 1, 2, 3, 4}}


def run_file(name: str) -> bytes:
    """Six questions with a ``qid``; the Tamil run asks them in other words."""
    lines = ["qid,question,answer,Domain,response"]
    for i, (qid, answer) in enumerate(zip(QIDS, ANSWERS)):
        question = f"கேள்வி {i}?" if "tamil" in name else f"Question {i} about {answer.lower()}?"
        response = f"It is {answer}." if i in RIGHT[name] else "I do not know."
        lines.append(f"{qid},{question},{answer},{DOMAINS[i]},{response}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def main(page: Page):
    return page.locator("[data-testid='stMain']")


def test_compare_three_uploaded_runs_and_open_a_discordant_question_in_the_queue(server: AppServer, page: Page) -> None:
    page.goto(f"{server.url}/?reviewer=compare_tester", timeout=TIMEOUT_MS)
    settle(page)

    # Three files chosen at once in the uploader; the newest (the last) opens in the Overview.
    open_nav(page, "Upload", "Upload a model run")
    files = [{"name": name, "mimeType": "text/csv", "buffer": run_file(name)} for name in RIGHT]
    page.locator(UPLOAD_INPUT).set_input_files(files=files)
    expect(page.locator("h1").first).to_contain_text("Overview: gpt_tamil", timeout=TIMEOUT_MS)
    settle(page)

    # The Compare page from the sidebar ("Agreement"'s icon is named compare_arrows: match the label).
    page.locator(f"{NAV_LINK}:has(span[label='Compare'])").click()
    expect(page.locator("h1").first).to_have_text("Compare runs", timeout=TIMEOUT_MS)
    settle(page)
    no_exception(page, "Compare")
    # By default the three runs sharing their qid values (the sample run has no qid).
    chips = page.locator(".st-key-cmp_runs [data-testid='stMultiSelectTagsContainer'] [data-tag]")
    expect(chips).to_have_count(3)
    names = [re.sub(r"^#\d+ ", "", str(c.get_attribute("aria-label"))).split(" · ")[0] for c in chips.all()]
    assert names == ["gpt_tamil", "llama_hindi", "gpt_hindi"], names
    expect(main(page)).to_contain_text("Matched on id column 'qid'")

    # The paired table (three pairs x three sources, Holm with three runs) and the charts.
    paired = page.locator(".st-key-cmp_paired_box [data-testid='stDataFrame']")
    expect(paired).to_be_visible()
    headers = paired.locator("[role='columnheader']").all_inner_texts()  # the grid draws visible columns only
    # The pair, then the answer: the difference, its interval and p come before the counts.
    assert headers[:7] == [
        "source",
        "run A",
        "run B",
        "difference A − B",
        "95% CI of the difference",
        "McNemar p",
        "Holm p",
    ], headers
    # ... and the page leads with it in words, one sentence per pair.
    answer = page.locator(".st-key-cmp_answer").inner_text()
    assert answer.count("matched questions") == 3 and "McNemar p" in answer, answer
    expect(main(page)).to_contain_text("Adjustment for multiple comparisons: Holm step-down")
    cells = [c.strip() for c in paired.locator("[role='gridcell']").all_text_contents()]
    assert cells.count("Exact substring") == 3, cells
    bars = page.locator(".st-key-cmp_bars_exact [data-testid='stPlotlyChart']")
    bars.scroll_into_view_if_needed()
    expect(bars.locator(".main-svg").first).to_be_visible()
    assert bars.locator("g.point").count() >= 9  # 3 runs x (2 domains + combined)
    heatmap = page.locator(".st-key-cmp_heatmap [data-testid='stPlotlyChart']")
    heatmap.scroll_into_view_if_needed()
    expect(heatmap).to_contain_text("n = 6")

    # Choose the first discordant question (gpt_tamil vs llama_hindi, exact substring: question 1,
    # tamil right) by clicking its row's box in the table: both responses appear side by side.
    table = page.locator(".st-key-cmp_disc_table [data-testid='stDataFrame']")
    table.scroll_into_view_if_needed()
    expect(table).to_be_visible()
    box = table.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 15, box["y"] + 35 + 17)  # the row marker of the first data row
    settle(page)
    expect(main(page)).to_contain_text(re.compile(r"#\d+ gpt_tamil: row 2, right \(Exact substring\)"))
    expect(main(page)).to_contain_text(re.compile(r"#\d+ llama_hindi: row 2, wrong \(Exact substring\)"))
    no_exception(page, "Compare, a question chosen")

    # ... and llama_hindi's copy opens in the review queue on that run and row.
    page.locator(".st-key-cmp_open_b button").click()
    expect(page.locator("h1").first).to_have_text("Review queue: llama_hindi", timeout=TIMEOUT_MS)
    settle(page)
    expect(main(page)).to_contain_text("Row 2 of the run")
    no_exception(page, "the review queue")

    # Marked there, the row opened on purpose is a verdict like any other, but not part of the
    # random sample: True accuracy lists it as reviewed by hand and leaves it out of the estimate.
    look_at_row(page)
    page.locator(".st-key-q_no button").click()
    expect(main(page)).to_contain_text("Saved: row 2 marked wrong", timeout=TIMEOUT_MS)
    settle(page)
    open_nav(page, "True accuracy", "True accuracy")
    no_exception(page, "True accuracy")
    expect(main(page)).to_contain_text("Reviewed by hand, not in the estimate: 1", timeout=TIMEOUT_MS)
    # No reviewed row of the random sample yet: no estimate, the audit's first step instead.
    expect(main(page)).to_contain_text("No estimated true accuracy is shown until a row of it is reviewed")
    by_hand = page.locator(".st-key-est_by_hand [data-testid='stDataFrame']")
    expect(by_hand).to_be_visible()
    cells = [c.strip() for c in by_hand.locator("[role='gridcell']").all_text_contents()]
    assert "2" in cells and "wrong" in cells, cells
