"""Issue 37, point 1, in a real browser: one file whose ``model`` column holds two models. The
Upload page says "2 models: gemma (300 rows), llama (300 rows)" before anything is saved, then
saves one run per model; each run's Overview shows its own model's figure (never the two pooled),
with a link to the other's. The same rows again, shuffled and in UTF-16, are named as the same
runs and nothing new is stored; the identical bytes say so too. A promptfoo log of two providers
is two runs, named by the log.

`streamlit run app.py` on a free port with its own SQLite file, driven by Debian chromium through
Playwright; the sidebar and the buttons are clicked as a person does, and what was stored is read
from the server's database.
"""

from __future__ import annotations

import codecs
import random
import re
from pathlib import Path

from browser import TIMEOUT_MS, UPLOAD_INPUT, AppServer, no_exception, open_nav, settle
from playwright.sync_api import Page, expect

from scoring import store
from scoring.store import make_engine

#: rows per model, and how many each answers right (exact substring and word overlap alike)
ROWS, RIGHT = 300, {"gemma": 240, "llama": 150}
POOLED = f"{(RIGHT['gemma'] + RIGHT['llama']) / (2 * ROWS):.1%}"  # 65.0%: what one mixed run showed


def two_models_lines() -> list[str]:
    """Both models' answers to the same 300 questions, one model's rows after the other's."""
    lines = []
    for model, right in RIGHT.items():
        for i in range(ROWS):
            response = f"it is answer {i}" if i < right else "I do not know"
            lines.append(f"Question {i}?,answer {i},{('Art', 'History')[i % 2]},{response},{model}")
    return lines


HEADER = "question,answer,Domain,response,model"
HARNESS = Path(__file__).resolve().parent / "harness_files"
MAIN = "[data-testid='stMain']"


def stored_runs(db_url: str) -> list[store.RunInfo]:
    engine = make_engine(db_url)
    try:
        return [r for r in store.list_runs(engine) if r.filename.startswith("mixed")]
    finally:
        engine.dispose()


def put_file(page: Page, name: str, data: bytes) -> None:
    open_nav(page, "Upload", "Upload a model run")
    page.locator(UPLOAD_INPUT).set_input_files(files=[{"name": name, "mimeType": "text/csv", "buffer": data}])


def exact_combined(page: Page) -> str:
    metric = page.locator("[data-testid='stMetric']", has_text="Exact substring (combined)")
    return metric.locator("[data-testid='stMetricValue']").inner_text()


def test_a_file_of_two_models_becomes_two_runs_and_the_same_rows_open_them(server: AppServer, page: Page) -> None:
    main = page.locator(MAIN)
    page.goto(server.url, timeout=TIMEOUT_MS)
    expect(page.locator("h1").first).to_have_text("Start here", timeout=TIMEOUT_MS)
    lines = two_models_lines()
    data = ("\n".join([HEADER, *lines]) + "\n").encode("utf-8")

    # Before saving: what the file holds, and nothing stored yet.
    put_file(page, "mixed.csv", data)
    said = "mixed.csv: 2 models: gemma (300 rows), llama (300 rows), named by the file's column 'model'."
    expect(main).to_contain_text(said, timeout=TIMEOUT_MS)
    settle(page)
    assert stored_runs(server.db_url) == []
    page.get_by_role("button", name="Save 2 runs, one per model").click()

    # One run per model; the first model's Overview shows its own figure, not the two pooled.
    expect(page.locator("h1").first).to_have_text("Overview: gemma (mixed)", timeout=TIMEOUT_MS)
    settle(page)
    gemma, llama = sorted(stored_runs(server.db_url), key=lambda r: r.id)
    assert (gemma.model, gemma.n_rows, llama.model, llama.n_rows) == ("gemma", ROWS, "llama", ROWS)
    expect(main).to_contain_text(
        f"mixed.csv: 2 models: gemma (300 rows), llama (300 rows), a run for each. gemma: saved as run "
        f"#{gemma.id} (300 rows); llama: saved as run #{llama.id} (300 rows)."
    )
    assert exact_combined(page) == "80.0%" != POOLED
    no_exception(page, "the first model's Overview")
    page.get_by_role("link", name=re.compile(rf"Overview of run #{llama.id} llama \(mixed\)")).click()
    expect(page.locator("h1").first).to_have_text("Overview: llama (mixed)", timeout=TIMEOUT_MS)
    settle(page)
    assert exact_combined(page) == "50.0%"

    # The same rows shuffled, in UTF-16 with a BOM: named as the same runs, nothing stored.
    body = lines[:]
    random.Random(37).shuffle(body)
    utf16 = codecs.BOM_UTF16_LE + ("\r\n".join([HEADER, *body]) + "\r\n").encode("utf-16-le")
    put_file(page, "mixed_utf16.csv", utf16)
    expect(page.locator("h1").first).to_contain_text("Overview: ", timeout=TIMEOUT_MS)
    for run in (gemma, llama):
        expect(main).to_contain_text(
            f"{run.model}: the same rows as run #{run.id} '{run.name}' (in another encoding, order or format): "
            "opened it, nothing stored"
        )
    assert [r.id for r in stored_runs(server.db_url)] == [llama.id, gemma.id]

    # The identical bytes: the same runs, said so.
    put_file(page, "mixed.csv", data)
    expect(main).to_contain_text(
        f"gemma: the same bytes as run #{gemma.id} 'gemma (mixed)': opened it, nothing stored", timeout=TIMEOUT_MS
    )
    assert len(stored_runs(server.db_url)) == 2
    no_exception(page, "the Overview after the same rows again")

    # A harness log holding two models (promptfoo, two providers in one eval, written by promptfoo
    # itself): the models named by its metadata, one run each.
    log = (HARNESS / "promptfoo_two_models.json").read_bytes()
    put_file(page, "promptfoo_two_models.json", log)
    expect(main).to_contain_text(
        "promptfoo_two_models.json: 2 models: echo-bare (3 rows), echo-full (3 rows), named by the harness log's "
        "metadata.",
        timeout=TIMEOUT_MS,
    )
    page.get_by_role("button", name="Save 2 runs, one per model").click()
    expect(page.locator("h1").first).to_have_text("Overview: echo-bare (promptfoo_two_models)", timeout=TIMEOUT_MS)
    engine = make_engine(server.db_url)
    try:
        models = sorted(r.model for r in store.list_runs(engine) if r.filename == "promptfoo_two_models.json")
    finally:
        engine.dispose()
    assert models == ["echo-bare", "echo-full"]
