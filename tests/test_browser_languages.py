"""Issue 29 in a real browser: two models' mixed-language files (a ``language`` column: English,
Hindi, Tamil) uploaded through the Upload page; one model's rows reviewed; True accuracy shows each
language's figure, the Model x language page shows the table (estimates where reviewed, a metric
marked as such elsewhere) and its CSV download carries every cell. Sidebar links and buttons only."""

from __future__ import annotations

import csv
import io
import re

from browser import TIMEOUT_MS, AppServer, click_download, no_exception, open_nav, upload_file
from playwright.sync_api import Page, expect

from scoring import store
from scoring.store import make_engine
from scoring.store.verdict_log import record_mark

MAIN = "[data-testid='stMain']"
PLAN = {"English": (24, 18), "Hindi": (16, 8), "Tamil": (12, 6)}  #: rows, right answers (llama)


def mixed_csv(shift: int) -> bytes:
    """Every language's questions; the first ``right - shift`` answers right (a model a bit worse)."""
    lines = ["question,answer,Domain,response,language"]
    for language, (rows, right) in PLAN.items():
        for i in range(rows):
            answer = f"{language[:3].lower()}{i}"
            response = f"it is {answer}" if i < right - shift else f"not {i}"
            lines.append(f"{language} question {i}?,{answer},{('Art', 'History')[i % 2]},{response},{language}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def test_a_mixed_language_upload_shows_each_language_and_the_table(server: AppServer, page: Page) -> None:
    main = page.locator(MAIN)
    page.goto(server.url, timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text("Start here", timeout=TIMEOUT_MS)
    gpt, llama = mixed_csv(4), mixed_csv(0)
    upload_file(page, "gpt.csv", gpt)
    upload_file(page, "llama.csv", llama)
    no_exception(page, "the Overview after two uploads")

    engine = make_engine(server.db_url)
    try:  # every llama row reviewed (a reviewer's marks, written as the queue writes them)
        run = store.find_run_by_sha(engine, store.sha256_bytes(llama))
        assert run is not None
        rows = store.load_table(engine, run.id)
        truth = {f"{lang} question {i}?": i < right for lang, (n, right) in PLAN.items() for i in range(n)}
        for key, question in zip(rows["item_key"], rows["question"], strict=True):
            record_mark(engine, key, run.id, "asha", "correct" if truth[question] else "wrong")
    finally:
        engine.dispose()

    open_nav(page, "True accuracy", "True accuracy")
    expect(main).to_contain_text("By language", timeout=TIMEOUT_MS)
    # every row reviewed: each language's estimate is its share of right answers
    expect(main).to_contain_text("Estimated true accuracy by language: English 75.0% (95% CI")
    expect(main).to_contain_text("Hindi 50.0% (95% CI")
    expect(main).to_contain_text("Tamil 50.0% (95% CI")
    no_exception(page, "True accuracy by language")

    open_nav(page, "Model x language", "Model x language")
    # the bundled sample's runs are in the table too (every listed run is, by default)
    expect(main).to_contain_text(re.compile(r"\d+ models x \d+ languages: \d+ of \d+ cells are estimated true"))
    expect(main).to_contain_text("Exact substring: ")  # gpt's cells: the metric, marked as such
    expect(main).to_contain_text("Who is ahead, per language")
    no_exception(page, "Model x language")
    saved = click_download(page, "lang_csv", server)
    every = list(csv.DictReader(io.StringIO(saved.path().read_text(encoding="utf-8"))))
    cells = [c for c in every if c["model"] in ("gpt", "llama")]
    assert {(c["model"], c["language"]) for c in cells} == {(m, lang) for m in ("gpt", "llama") for lang in PLAN}
    kinds = {(c["model"], c["language"]): (c["kind"], c["reviewed"]) for c in cells}
    assert kinds[("llama", "Tamil")] == ("estimate", "12") and kinds[("gpt", "Tamil")] == ("exact", "0")
