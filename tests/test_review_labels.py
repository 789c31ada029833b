"""Widget labels built from dataset text show it literally (issue 27, defect 8, third bullet).

Streamlit renders Markdown in button, radio, toggle, expander, tab and metric labels: a Domain
named ``![x](http://127.0.0.1:9/x.png) **bold** :red[c] $x^2$`` drew an image (which the browser
fetched), bold text, colour and TeX on the queue's end-of-scope buttons. An AppTest checks what
the page sends; a real browser (Debian chromium) checks what it draws and that it fetches nothing.
"""

from __future__ import annotations

import csv
import io
import re

from apptest_support import APP, TIMEOUT, click, markdown_texts, ok, open_page, unescape_md
from browser import TIMEOUT_MS, AppServer, Traffic, look_at_row, no_exception, open_nav, settle, upload_file
from playwright.sync_api import BrowserContext, Page, expect
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import ingest
from ui.display import md_escape

HOSTILE = "![x](http://127.0.0.1:9/x.png) **bold** :red[c] $x^2$"
MAIN = "[data-testid='stMain']"


def hostile_csv(tag: str) -> bytes:
    """Two overlap_only rows in Art, two in the hostile domain, one both_pass row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["question", "answer", "Domain", "response"])
    for i, domain in enumerate(["Art", "Art", HOSTILE, HOSTILE]):
        writer.writerow([f"{tag} question {i}?", f"{tag}w{i} beta", domain, f"beta {tag}w{i}"])
    writer.writerow([f"{tag} easy?", "gamma", "Art", "gamma"])
    return out.getvalue().encode("utf-8")


def test_md_escape_leaves_no_markdown_in_the_domain() -> None:
    escaped = md_escape(HOSTILE)
    assert unescape_md(escaped) == HOSTILE
    assert re.search(r"(?<!\\)[!\[\]()*:$^]", escaped) is None, escaped  # every such character escaped


def test_end_of_scope_buttons_send_the_domain_escaped(app_engine: Engine) -> None:
    run = ingest.save_run(app_engine, hostile_csv("lab"), "labels_model_english.csv").run
    at = open_page("review", reviewer="alice", run_id=run.id)
    at.selectbox(key="q_domain").set_value("Art")
    ok(at.run())
    for _ in range(2):
        click(at, "q_yes")
    labels = {b.key: b.label for b in at.button if str(b.key).startswith("q_todo_")}
    assert unescape_md(labels["q_todo_d0"]) == f"overlap_only, {HOSTILE}: 2 rows left", labels
    assert labels["q_todo_d0"] == md_escape(f"overlap_only, {HOSTILE}: 2 rows left")
    # Nothing the page sends to a Markdown renderer holds the domain's Markdown unescaped.
    for text in markdown_texts(at):
        assert "![x]" not in text and "**bold**" not in text and ":red[c]" not in text, text
    # The button still leads to the scope.
    click(at, "q_todo_d0")
    assert at.selectbox(key="q_domain").value == HOSTILE


def test_the_browser_shows_the_domain_literally_and_fetches_nothing(
    server: AppServer, context: BrowserContext, page: Page
) -> None:
    traffic = Traffic.attach(context, page)
    data = hostile_csv("lbb")
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, "lbb_model_english.csv", data)
    field = page.locator(".st-key-reviewer_name input")
    field.click()
    field.fill("")
    field.type("labeller", delay=20)
    field.press("Enter")
    settle(page)
    open_nav(page, "Review queue", "Review queue")
    page.locator(".st-key-q_domain").click()
    page.get_by_role("option", name="Art", exact=True).click()
    settle(page)
    main = page.locator(MAIN)
    for _ in range(2):
        row = re.search(r"lbb question \d\?", main.inner_text())
        assert row, main.inner_text()[:1500]
        look_at_row(page)
        page.locator(".st-key-q_yes button").click()
        expect(main).not_to_contain_text(row.group(0), timeout=TIMEOUT_MS)
        settle(page)
    expect(main).to_contain_text("Done: every row of this scope has your verdict")
    button = page.locator(".st-key-q_todo_d0 button")
    expect(button).to_have_text(f"overlap_only, {HOSTILE}: 2 rows left", timeout=TIMEOUT_MS)
    for drawn in ("img", "strong", ".katex", "span[style*='color']"):
        assert page.locator(f"[class*='st-key-q_todo_'] {drawn}").count() == 0, drawn
    button.click()
    settle(page)
    expect(main).to_contain_text("Reviewed 0 of 2 in this scope")
    expect(main).to_contain_text(f"Domain: {HOSTILE}")
    no_exception(page, "the queue with a hostile domain name")
    assert page.locator(f"{MAIN} img[src*='127.0.0.1:9']").count() == 0
    assert traffic.to_host("127.0.0.1", 9) == [], traffic.to_host("127.0.0.1", 9)


def test_a_run_named_in_the_url_is_quoted_literally(app_engine: Engine) -> None:
    """The sidebar's "Run X does not exist" quotes the URL's ``?run=``: a link carrying Markdown
    must not make the page draw (and the browser fetch) an image."""
    ingest.save_run(app_engine, hostile_csv("url"), "url_model_english.csv")
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params["run"] = HOSTILE
    ok(at.run())
    warnings = [w.value for w in at.sidebar.warning]
    assert warnings, "no warning about the unknown run"
    assert any(unescape_md(w) == f"Run {HOSTILE} does not exist; showing the newest run." for w in warnings), warnings
    for text in warnings:
        assert "![x]" not in text and "**bold**" not in text, text
