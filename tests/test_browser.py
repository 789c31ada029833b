"""Real-browser tests: `streamlit run app.py` on a free port, driven with Debian chromium.

These never skip: without chromium they fail with what to install.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
from browser import TIMEOUT_MS, AppServer, Traffic, exception_count, open_nav, settle, start_app, upload_file
from playwright.sync_api import Browser, BrowserContext, Page, expect

from scoring import ingest, store
from scoring.core.loader import load_bytes
from scoring.core.report import mcnemar, score_frame
from scoring.store import make_engine
from ui.tables import bucket_option

GOOD_NAME = "browser_model_tamil.csv"
GOOD_CSV = (
    "\n".join(
        [
            "question,answer,Domain,response",
            "Capital of India?,New Delhi,Geography,The capital is New Delhi.",
            "Longest river?,Ganga,Geography,The Godavari",
            "Highest peak?,Kangchenjunga,Geography,Kangchenjunga peak",
            'Who wrote Gitanjali?,Rabindranath Tagore,Literature,"Tagore, Rabindranath"',
            "Author of Godaan?,Munshi Premchand,Literature,Premchand",
            "Epic by Valmiki?,Ramayana,Literature,The Ramayana",
            "Founder of the Maurya empire?,Chandragupta Maurya,History,Chandragupta",
            "Year of independence?,1947,History,It was 1947",
            "First emperor?,Ashoka the Great,History,Great Ashoka",
        ]
    ).encode("utf-8")
    + b"\n"
)

PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "![x](http://127.0.0.1:9/p.png)",
)
XSS_NAME = "xss_browser.csv"
XSS_CSV = (
    pd.DataFrame(
        {
            "question": [PAYLOADS[0], "Plain question?", "Other question?", "Fourth?"],
            "answer": [PAYLOADS[1], "plain answer", "other", "fourth"],
            "Domain": [PAYLOADS[2], PAYLOADS[0], PAYLOADS[1], "Plain"],
            "response": [" ".join(PAYLOADS), "plain answer here", "nothing", "fourth"],
        }
    )
    .to_csv(index=False)
    .encode("utf-8")
)


def run_id_for(db_url: str, data: bytes) -> int:
    """The id of the run stored for ``data`` (found by sha256 in the server's database)."""
    engine = make_engine(db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        assert run is not None, "the upload was not stored"
        return run.id
    finally:
        engine.dispose()


def heading(page: Page) -> str:
    return page.locator("h1").first.inner_text(timeout=TIMEOUT_MS)


def choose(page: Page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox with widget key ``key`` (type to filter, click the option)."""
    box = page.locator(f".st-key-{key} input[role='combobox']").first
    box.click()
    box.fill(option)
    page.get_by_role("option", name=option, exact=True).first.click()
    expect(box).to_have_value(option, timeout=TIMEOUT_MS)
    settle(page)


def test_upload_chart_buckets_and_reload(server: AppServer, context: BrowserContext, page: Page) -> None:
    """Upload through the file input, see the chart and bucket counts, reload onto the same run."""
    traffic = Traffic.attach(context, page)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    assert heading(page) == "Start here"  # the first page: the three steps the tool is for
    assert exception_count(page) == 0

    upload_file(page, GOOD_NAME, GOOD_CSV)
    run_id = run_id_for(server.db_url, GOOD_CSV)
    name = Path(GOOD_NAME).stem
    assert heading(page) == f"Overview: {name}"
    assert re.search(rf"[?&]run={run_id}(&|$)", page.url), page.url
    chart = page.locator("[data-testid='stPlotlyChart']").first
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    expect(chart.locator(".main-svg").first).to_be_attached(timeout=TIMEOUT_MS)
    chart_text = chart.text_content() or ""
    for domain in ("Geography", "History", "Literature"):
        assert domain in chart_text, chart_text[:500]
    assert exception_count(page) == 0

    scored = score_frame(load_bytes(GOOD_CSV, GOOD_NAME).frame)
    test = mcnemar(scored)
    overlap_only = int((scored["bucket"] == "overlap_only").sum())
    open_nav(page, "Agreement", f"Agreement: {name}")
    main = page.locator("[data-testid='stMain']")
    counts = f"exact_only = {test.exact_only}, overlap_only = {test.overlap_only}"
    expect(main).to_contain_text(counts, timeout=TIMEOUT_MS)
    expect(main).to_contain_text(f"{overlap_only} rows)", timeout=TIMEOUT_MS)
    expect(page.locator("[data-testid='stPlotlyChart']")).to_have_count(1, timeout=TIMEOUT_MS)
    assert exception_count(page) == 0

    page.reload(timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text(f"Agreement: {name}", timeout=TIMEOUT_MS)
    settle(page)
    assert re.search(rf"[?&]run={run_id}(&|$)", page.url), page.url
    expect(page.locator("[data-testid='stMain']")).to_contain_text(counts, timeout=TIMEOUT_MS)
    picker = page.locator(".st-key-run_picker input[role='combobox']")
    expect(picker).to_have_value(re.compile(rf"^#{run_id} {re.escape(name)} "), timeout=TIMEOUT_MS)
    assert exception_count(page) == 0
    assert traffic.dialogs == []
    assert any(url.startswith(server.url) for url in traffic.routed), "the route recorder saw nothing"


def test_payloads_render_as_text_and_fetch_nothing(server: AppServer, context: BrowserContext, page: Page) -> None:
    """Script, img-onerror and Markdown-image payloads show literally; no dialog, no request to :9."""
    traffic = Traffic.attach(context, page)
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, XSS_NAME, XSS_CSV)
    page.wait_for_timeout(1000)
    chart_text = page.locator("[data-testid='stPlotlyChart']").first.text_content() or ""
    for payload in PAYLOADS:
        assert payload in chart_text, f"overview chart lacks {payload!r}: {chart_text[:400]!r}"
    assert exception_count(page) == 0

    scored = score_frame(load_bytes(XSS_CSV, XSS_NAME).frame)
    bucket = str(scored.loc[0, "bucket"])
    open_nav(page, "Agreement", "Agreement: ")
    # The picker names a bucket in words with its row count ("Both pass: 3").
    choose(page, "agree_bucket", bucket_option(bucket, scored["bucket"].value_counts().to_dict()))
    main = page.locator("[data-testid='stMain']")
    expect(main).to_contain_text(f"Bucket: {bucket}", timeout=TIMEOUT_MS)
    expect(main).to_contain_text(PAYLOADS[0], timeout=TIMEOUT_MS)
    page.wait_for_timeout(1000)
    text = main.inner_text()
    for payload in PAYLOADS:
        assert payload in text, f"agreement rows lack {payload!r} as text"
    assert f"Domain: {PAYLOADS[2]}" in text
    scripts = page.evaluate("() => [...document.querySelectorAll('script')].map(s => s.text).join('\\n')")
    assert "alert(1)" not in scripts
    assert page.locator("[data-testid='stMain'] img[src='x']").count() == 0
    assert page.locator("[data-testid='stMain'] img[src*='127.0.0.1:9']").count() == 0
    assert exception_count(page) == 0

    assert traffic.dialogs == [], traffic.dialogs
    assert traffic.to_host("127.0.0.1", 9) == []
    assert any(url.startswith(server.url) for url in traffic.requests), "the request recorder saw nothing"
    assert any(url.startswith(server.url) for url in traffic.routed), "the route recorder saw nothing"


def test_shared_link_works_as_the_first_visit_after_a_start(tmp_path: Path, browser: Browser) -> None:
    """A fresh server's first visit is a deep link (/agreement?run=ID): app.py must run around it.

    With a ``pages/`` folder beside app.py, Streamlit treats a fresh server as a v1 multipage app
    until some session has run app.py, so a deep link ran the page alone (no sidebar, no run).
    """
    url = f"sqlite:///{tmp_path / 'review.db'}"
    engine = make_engine(url)
    sample = ingest.ensure_sample(engine)
    engine.dispose()
    assert sample is not None
    app = start_app(url, tmp_path / "streamlit.log")
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        page = ctx.new_page()
        page.goto(f"{app.url}/agreement?run={sample.id}", timeout=TIMEOUT_MS)
        settle(page)
        expect(page.locator("h1").first).to_have_text(f"Agreement: {sample.name}", timeout=TIMEOUT_MS)
        expect(page.locator(".st-key-run_picker")).to_have_count(1, timeout=15_000)
        assert re.search(rf"/agreement\?(.*&)?run={sample.id}(&|$)", page.url), page.url
        assert exception_count(page) == 0
    finally:
        ctx.close()
        app.stop()


SEEN_PHASES = """() => {
  window.__phases = [];
  const keep = (el) => {
    const t = el.innerText.trim();
    if (t && !window.__phases.includes(t)) window.__phases.push(t);
  };
  const record = () => document.querySelectorAll("[data-testid='stProgress'], [data-testid='stExpander'] summary")
    .forEach(keep);
  new MutationObserver(record).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_a_large_upload_shows_its_phases(server: AppServer, page: Page) -> None:
    """A 200,000-row upload shows scoring and saving k of n rows as they happen, then its result,
    and opens its Overview (the texts are recorded by a MutationObserver as the page changes;
    reading so small a file is over before the browser draws it)."""
    rows = 200_000
    lines = ["question,answer,Domain,response"]
    lines += [f"q{i},a{i % 97} b,D{i % 5},the a{i % 89} b {i}" for i in range(rows)]
    data = ("\n".join(lines) + "\n").encode()
    page.goto(server.url, timeout=TIMEOUT_MS)
    settle(page)
    open_nav(page, "Upload", "Upload a model run")
    page.evaluate(SEEN_PHASES)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(
        files=[{"name": "large_run.csv", "mimeType": "text/csv", "buffer": data}]
    )
    expect(page.locator("h1").first).to_have_text("Overview: large_run", timeout=TIMEOUT_MS)
    seen = " | ".join(page.evaluate("window.__phases || []"))
    assert f"Scoring {rows:,} rows" in seen, seen
    assert re.search(rf"Saving [\d,]+ of {rows:,} rows", seen), seen
    # The status's last label is replaced by the Overview at once; the Overview says what was saved.
    saved = re.compile(rf"large_run\.csv: saved as run #\d+ \({rows:,} rows\)\. Next:")
    expect(page.get_by_text(saved)).to_be_visible(timeout=TIMEOUT_MS)
    assert exception_count(page) == 0
