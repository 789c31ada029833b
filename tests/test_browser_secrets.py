"""No secret leaves the dashboard (issue 11, "Load and faults"): the database password and the
judge's API key appear on no page, in no log line and in no export, on a PostgreSQL URL.

One real dashboard process (``streamlit run``, its stdout and stderr in a log file) on a
PostgreSQL server of the test's own that checks passwords, its database owned by a role with a
password, and the judge pointed at the local OpenAI-compatible stub with a distinctive key. In
one browser a reviewer visits every page from the sidebar, runs the judge on one bucket, marks a
row, marks one while the server is stopped (the page says it was not saved) and one after it is
back, and downloads the CSV export and its manifest. The export command line runs too, once
working and twice failing (a wrong password, a stopped server).

Everything a person or an operator could see is kept and searched for the secrets: each page's
HTML and address, every websocket frame between browser and server, the browser console, the
downloads, the command line's files, stdout and stderr, and the server's log. Positive checks
keep it from passing vacuously: the sidebar shows the masked URL, the stub received the key as
Bearer auth, the export holds the marked rows, the outage was shown and the failing commands did
fail.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pg_server
import pytest
from browser import ROOT, TIMEOUT_MS, click_download, look_at_row, no_exception, open_nav, settle, start_app
from openai_stub import StubOpenAI
from playwright.sync_api import Browser, Page, WebSocket, expect

from scoring import judge, store

PASSWORD = "Pa55-DoNotLeak-db7"
WRONG_PASSWORD = "Wr0ng-DoNotLeak-db9"
API_KEY = "sk-test-DoNotLeak-123"
SECRETS = (PASSWORD, WRONG_PASSWORD, API_KEY)
REVIEWER = "alice"
MAIN = "[data-testid='stMain']"
ROW = re.compile(r"Row (\d+) of the run")
CLI_TIMEOUT_S = 120


class Seen:
    """Everything shown or sent is searched for the secrets the moment it is seen."""

    @staticmethod
    def add(where: str, content: str | bytes) -> None:
        data = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
        for secret in SECRETS:
            assert secret.encode() not in data, f"the secret {secret!r} is in {where}:\n{_around(data, secret)}"

    def page(self, page: Page, where: str) -> None:
        self.add(f"the HTML of {where}", page.content())
        self.add(f"the address of {where}", page.url)


def _around(data: bytes, secret: str) -> str:
    i = data.find(secret.encode())
    return data[max(0, i - 300) : i + 300].decode("utf-8", "replace")


@pytest.fixture
def pg_own() -> Iterator[pg_server.PgServer]:
    """A server of the test's own (it is stopped mid-test) that checks passwords, so a wrong
    password is refused as in a deployment."""
    try:
        server = pg_server.start(passwords=True)
    except pg_server.PostgresMissing as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def stub() -> Iterator[StubOpenAI]:
    with StubOpenAI() as server:
        yield server


def _export_cli(db: str, run_id: int, out: Path, *extra: str) -> subprocess.Popen[str]:
    """``python -m scoring export`` started in the background (the tests' CLI runs overlap the
    browser's waits: each costs seconds of imports)."""
    args = [sys.executable, "-m", "scoring", "export", "--db", db, "--run", str(run_id), "--out", str(out), *extra]
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")


def _finish(process: subprocess.Popen[str], seen: Seen, what: str) -> tuple[int, str, str]:
    """Wait for a CLI started by :func:`_export_cli`; its stdout and stderr go to ``seen``."""
    try:
        stdout, stderr = process.communicate(timeout=CLI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        raise AssertionError(f"{what} did not finish in {CLI_TIMEOUT_S} s: {stderr[-2000:]}") from None
    seen.add(f"the stdout of {what}", stdout)
    seen.add(f"the stderr of {what}", stderr)
    return process.returncode, stdout, stderr


def _row(page: Page) -> int:
    found = ROW.search(page.locator(MAIN).inner_text())
    assert found, "no row on screen"
    return int(found.group(1))


def _mark_correct(page: Page) -> int:
    """Press Correct on the row shown and wait for the next one; returns the marked row (1-based)."""
    row = _row(page)
    look_at_row(page)
    page.locator(".st-key-q_yes button").click()
    expect(page.locator(MAIN)).not_to_contain_text(f"Row {row} of the run", timeout=TIMEOUT_MS)
    settle(page)
    return row


def _visit(page: Page, seen: Seen, label: str, heading: str, masked: str) -> None:
    """Open a page from the sidebar; it shows no exception, the masked database, no secret."""
    open_nav(page, label, heading)
    no_exception(page, f"the {label} page")
    expect(page.locator("[data-testid='stSidebar']")).to_contain_text(masked)
    seen.page(page, f"the {label} page")


def _download(page: Page, key: str) -> bytes:
    return Path(click_download(page, key).path()).read_bytes()


def test_no_secret_on_any_page_log_line_export_or_cli_output(
    pg_own: pg_server.PgServer, stub: StubOpenAI, browser: Browser, tmp_path: Path
) -> None:
    _, url = pg_own.owned_database(PASSWORD)
    assert PASSWORD in url
    masked = store.display_url(url)
    assert "***" in masked and PASSWORD not in masked
    wrong_url = url.replace(PASSWORD, WRONG_PASSWORD)
    seen = Seen()
    env = {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": API_KEY, "JUDGE_MODEL": "stub-judge"}
    env |= {n: "" for n in judge.ENV_NAMES.values() if n not in env}  # nothing else from the caller's shell
    app = start_app(url, tmp_path / "streamlit.log", extra_env=env)
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    frames: list[tuple[str, str | bytes]] = []

    def on_socket(ws: WebSocket) -> None:
        ws.on("framereceived", lambda payload: frames.append(("a websocket frame to the browser", payload)))
        ws.on("framesent", lambda payload: frames.append(("a websocket frame from the browser", payload)))

    try:
        # A wrong password on the command line, while the dashboard's first run loads the sample.
        wrong_cli = _export_cli(wrong_url, 1, tmp_path / "wrong.csv")
        page = context.new_page()
        page.on("websocket", on_socket)
        page.on("console", lambda msg: frames.append(("the browser console", msg.text)))
        page.goto(f"{app.url}/?reviewer={REVIEWER}", timeout=TIMEOUT_MS)
        settle(page)
        expect(page.locator("h1").first).to_have_text("Start here")
        expect(page.locator("[data-testid='stSidebar']")).to_contain_text(masked)  # the database, password masked
        no_exception(page, "the first page")
        seen.page(page, "the first page (Start here)")
        code, _, stderr = _finish(wrong_cli, seen, "the CLI with a wrong password")
        assert code != 0 and store.display_url(wrong_url) in stderr, stderr  # refused, named masked
        assert "password authentication failed" in stderr, stderr  # the driver's reason, not a bare class name
        engine = store.make_engine(url)
        run = store.list_runs(engine)[0].id  # the bundled sample shown first, loaded on first start
        engine.dispose()

        _visit(page, seen, "Upload", "Upload a model run", masked)
        _visit(page, seen, "Agreement", "Agreement: ", masked)

        # The judge on one bucket (overlap_only by default): the key goes to the endpoint only.
        _visit(page, seen, "Judge", "Judge: ", masked)
        page.locator(f"{MAIN} summary", has_text="Another scope").click()  # the whole run is the default action
        page.locator(f"{MAIN} label", has_text="One bucket").click()
        settle(page)
        expect(page.locator(MAIN)).to_contain_text("Rows in scope: ", timeout=TIMEOUT_MS)
        seen.page(page, "the Judge page's preflight")
        page.locator(".st-key-judge_run button").click()
        expect(page.locator(MAIN)).to_contain_text("Done: ", timeout=TIMEOUT_MS)
        settle(page)
        assert " 0 errors" in page.locator(MAIN).inner_text()
        seen.page(page, "the Judge page after a run")
        assert stub.requests > 0
        assert set(stub.auth_headers) == {f"Bearer {API_KEY}"}  # the judge really ran, with the key

        # The Review queue: a mark, a mark while the database is down, a mark once it is back.
        _visit(page, seen, "Review queue", "Review queue: ", masked)
        marked = [_mark_correct(page)]
        seen.page(page, "the Review queue after a mark")
        row = _row(page)
        pg_own.pause()
        try:
            down_cli = _export_cli(url, run, tmp_path / "down.csv")
            look_at_row(page)
            page.locator(".st-key-q_yes button").click()
            expect(page.locator(MAIN)).to_contain_text("Not saved", timeout=TIMEOUT_MS)
            settle(page)
            assert _row(page) == row  # the row stays on screen
            seen.page(page, "the Review queue while the database is down")
            code, _, stderr = _finish(down_cli, seen, "the CLI while the database is down")
            assert code != 0 and "password authentication" not in stderr, stderr
            assert re.search(r"Connection refused|No such file|could not connect|server closed|timeout", stderr), stderr
        finally:
            pg_server.restart(pg_own)
        marked.append(_mark_correct(page))
        assert marked[1] == row  # the row that was not saved is the one saved now
        no_exception(page, "the Review queue after the database came back")
        seen.page(page, "the Review queue after the database came back")

        # The command line's export, while the browser reads two more pages and downloads.
        out = tmp_path / "cli_export.csv"
        good_cli = _export_cli(url, run, out, "--judge")
        _visit(page, seen, "Reviewers", "Reviewers: ", masked)
        _visit(page, seen, "Adjudication", "Adjudication: ", masked)
        _visit(page, seen, "Export", "Export: ", masked)
        csv_bytes = _download(page, "dl_csv")
        manifest_bytes = _download(page, "dl_manifest")
        seen.add("the downloaded CSV export", csv_bytes)
        seen.add("the downloaded manifest", manifest_bytes)
        seen.page(page, "the Export page after the downloads")
        table = pd.read_csv(io.BytesIO(csv_bytes), dtype=str, keep_default_na=False)
        correct = table.index[table["human_verdict"] == "correct"].tolist()
        assert sorted(i + 1 for i in correct) == sorted(marked), table["human_verdict"].tolist()
        assert all(REVIEWER in table.loc[i, "human_verdicts"] for i in correct)
        assert json.loads(manifest_bytes)["run"]["id"] == run

        code, stdout, stderr = _finish(good_cli, seen, "the CLI export")
        assert code == 0, stderr
        assert stdout.startswith(f"wrote {len(table)} rows"), stdout
        cli_table = pd.read_csv(out, dtype=str, keep_default_na=False)
        assert (cli_table["human_verdict"] == "correct").sum() == len(marked)
        assert (cli_table["judge_label"] != "").any()  # the labels of the judge run in the browser
        seen.add("the CLI's export file", out.read_bytes())
        seen.add("the CLI's manifest file", Path(f"{out}.manifest.json").read_bytes())
        assert not (tmp_path / "wrong.csv").exists() and not (tmp_path / "down.csv").exists()
    finally:
        context.close()
        app.stop()

    for where, payload in frames:
        seen.add(where, payload)
    to_browser = [p if isinstance(p, bytes) else p.encode() for w, p in frames if w.endswith("to the browser")]
    assert any(masked.encode() in p for p in to_browser)  # the frames are searchable: the masked URL is in one
    log = app.log_path.read_text(encoding="utf-8", errors="replace")
    assert app.url.rsplit(":", 1)[1] in log  # the log was written (Streamlit prints its address)
    seen.add("the dashboard's log (stdout and stderr)", log)
