"""Issue 37, point 4, in a real browser: the report a team sends, and the heatmap it is read beside.

One server over a team's database (six models x eight languages, model A's rows reviewed), opened
by Debian chromium through Playwright:

- at 1280x720 the Model x language heatmap's cell labels are drawn at 11 px or more (they were
  drawn at 4 px) and the chart's title says what its cells hold;
- the page offers every download the docs list (the JSON one sat hidden in an expander);
- the report, downloaded from the page's button, opens with every request aborted: nothing is
  asked of any host (not even this server), the per-domain charts draw, and its cells are the
  page's (its CSV download) and the command line's (``python -m scoring report``).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import TIMEOUT_MS, AppServer, click_download, no_exception, open_nav, settle, start_app
from playwright.sync_api import Browser, Page, Request, Route, expect

from scoring import ingest
from scoring.store import load_table, make_engine
from scoring.store.verdict_log import record_mark

MAIN = "[data-testid='stMain']"
MODELS = ("gemma-2-9b-it", "llama-3.1-8b-instruct", "qwen2.5-7b-instruct", "mistral-7b-v0.3", "sarvam-1", "aya-8b")
LANGUAGES = ("English", "Hindi", "Tamil", "Bengali", "Telugu", "Marathi", "Kannada", "Malayalam")
QUESTIONS = 10  #: per language
DOMAINS = ("Art", "History", "Geography")
#: labels smaller than this are not read at 1280x720 (they were 4 px)
MIN_LABEL_PX = 11.0


def model_csv(index: int) -> bytes:
    """One model's answers to the same questions in every language; model ``index`` gets fewer right."""
    lines = ["question,answer,Domain,response,language,question_id"]
    for shift, language in enumerate(LANGUAGES):
        for i in range(QUESTIONS):
            answer = f"{language[:3].lower()}{i}"
            right = (i + index + shift) % 10 < 8 - index // 2 - shift % 3
            response = f"it is {answer}" if right else f"perhaps {i}"
            lines.append(f"{language} <q{i}>?,{answer},{DOMAINS[i % 3]},{response},{language},q{i}")
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """A team's database (no sample run: it holds runs before the app first opens it), then the app."""
    folder = tmp_path_factory.mktemp("report_app")
    url = f"sqlite:///{folder / 'review.db'}"
    engine = make_engine(url)
    try:
        for index, model in enumerate(MODELS):
            run = ingest.save_run(engine, model_csv(index), f"{model}.csv", model=model, language="").run
            if index == 0:  # every row of model A reviewed: its cells are estimates
                rows = load_table(engine, run.id)
                for key, response in zip(rows["item_key"], rows["response"], strict=True):
                    record_mark(engine, key, run.id, "asha", "correct" if response.startswith("it is") else "wrong")
    finally:
        engine.dispose()
    app = start_app(url, folder / "streamlit.log")
    try:
        yield app
    finally:
        app.stop()


def test_the_heatmap_is_readable_at_1280x720(team_server: AppServer, browser: Browser, tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 720}, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = context.new_page()
        page.goto(team_server.url, timeout=TIMEOUT_MS)
        settle(page)
        open_nav(page, "Model x language", "Model x language")
        chart = page.locator(".st-key-lang_heatmap")
        labels = chart.locator("g.heatmaplayer text")
        expect(labels.first).to_be_attached(timeout=TIMEOUT_MS)
        chart.scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / "heatmap-1280x720.png"))
        print(f"screenshot: {tmp_path / 'heatmap-1280x720.png'}")
        sizes = labels.evaluate_all("els => els.map(e => parseFloat(getComputedStyle(e).fontSize))")
        shown = [s for s in sizes if s > 0]
        assert len(shown) >= len(MODELS) * len(LANGUAGES), sizes
        assert min(shown) >= MIN_LABEL_PX, f"cell labels drawn at {min(shown)} px (of {sorted(set(shown))})"
        box = chart.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 1280, box  # not cut off on the right
        title = " ".join((chart.locator(".gtitle").text_content() or "").split())
        assert title.startswith("Accuracy by model and language") and "estimated true accuracy where" in title, title
        no_exception(page, "Model x language at 1280x720")
    finally:
        context.close()


def figures(text: str) -> list[str]:
    """The percentages a cell shows, in order (its figure and its interval's ends), or its words
    when it shows none ("no estimate yet")."""
    return re.findall(r"\d+\.\d%", text) or [text.split(" · ")[0].split("\n")[0]]


def cells_of(page: Page) -> dict[tuple[str | None, str | None], list[str]]:
    """The report's cells as opened: (model, language) -> :func:`figures`."""
    return {
        (c.get_attribute("data-model"), c.get_attribute("data-language")): figures(c.inner_text())
        for c in page.locator("td.cell").all()
    }


def test_the_report_opens_offline_with_the_pages_figures(
    team_server: AppServer, page: Page, browser: Browser, tmp_path: Path, run_cli
) -> None:
    page.goto(team_server.url, timeout=TIMEOUT_MS)
    settle(page)
    open_nav(page, "Model x language", "Model x language")
    for key in ("lang_report_html", "lang_report_md", "lang_csv", "lang_pairs_csv", "lang_json", "lang_html"):
        expect(page.locator(f".st-key-{key} button")).to_be_visible()  # offered, not hidden in an expander
    no_exception(page, "Model x language")
    report, cli = tmp_path / "report.html", tmp_path / "cli.html"
    click_download(page, "lang_report_html", team_server).save_as(report)
    table = click_download(page, "lang_csv", team_server).path().read_text(encoding="utf-8")
    page_cells = {(r["model"], r["language"]): figures(r["cell"]) for r in csv.DictReader(io.StringIO(table))}
    out = run_cli("scoring", "report", "--db", team_server.db_url, "--out", cli)
    assert out.returncode == 0, out.stderr

    offline = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)
    files = {report.as_uri(), cli.as_uri()}
    asked: list[str] = []

    def refuse(route: Route) -> None:
        """Every request but the opening of the files themselves is recorded and aborted."""
        if route.request.url in files:
            route.continue_()
            return
        asked.append(route.request.url)
        route.abort()

    offline.route("**/*", refuse)
    try:
        opened = offline.new_page()
        requests: list[str] = []
        opened.on("request", lambda r: requests.append(r.url) if isinstance(r, Request) else None)
        opened.goto(report.as_uri(), timeout=TIMEOUT_MS)
        opened.wait_for_load_state("load")
        assert [u for u in [*asked, *requests] if u not in files] == []  # nothing fetched from anywhere
        bars = opened.locator("svg.domain-chart rect.bar")
        assert bars.count() >= (len(MODELS) - 1) * len(DOMAINS)  # one bar per model and domain with a figure
        widths = bars.evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
        assert min(widths) > 20, widths  # drawn, not empty boxes
        assert opened.locator("h1").inner_text().startswith("Model x language report")
        from_button = cells_of(opened)
        opened.goto(cli.as_uri(), timeout=TIMEOUT_MS)
        from_cli = cells_of(opened)
        assert [u for u in [*asked, *requests] if u not in files] == []
    finally:
        offline.close()
    assert len(from_button) == len(MODELS) * len(LANGUAGES)
    assert from_button == page_cells  # the page's figures
    assert from_cli == page_cells  # and the command line's
