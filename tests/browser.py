"""Helpers for the real-browser tests: the app on a free port, Debian chromium via Playwright.

Not a test module (pytest collects only ``test_*.py``). ``tests/test_browser.py`` uses it.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import Browser, BrowserContext, Download, Page, Playwright, Request, Route, expect

from scoring import review, store
from scoring.store import make_engine
from scoring.store.samples import SAMPLES_SETTING

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT_S = 90.0
READY_TIMEOUT_MS = 60_000
CONNECTED = "[data-testid='stApp'][data-test-connection-state='CONNECTED']"
NOT_RUNNING = "[data-test-script-state='notRunning']"
EXCEPTION = "[data-testid='stException']"
TIMEOUT_MS = 60_000
NAV_LINK = "[data-testid='stSidebarNavLink']"
UPLOAD_INPUT = "[data-testid='stFileUploaderDropzoneInput']"


class ChromiumMissing(RuntimeError):
    """Debian chromium is not installed; the browser tests cannot run."""


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class AppServer:
    """A running ``streamlit run app.py``; :meth:`stop` ends it (and only it)."""

    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    db_url: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminate the server's process group, then kill it if it lingers."""
        if self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, 15)
            self.process.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, 9)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=15)


def start_app(
    db_url: str,
    log_path: Path,
    timeout_s: float = START_TIMEOUT_S,
    script: Path = ROOT / "app.py",
    extra_env: dict[str, str] | None = None,
) -> AppServer:
    """Start the dashboard on a free port with ``REVIEW_DB_URL=db_url`` (plus ``extra_env``) and
    wait until healthy. A new database gets the bundled samples on its first start (as the
    embedded default does) unless ``REVIEW_SAMPLES`` says otherwise (the environment, ``extra_env``)."""
    port = free_port()
    env = {SAMPLES_SETTING: "true", **os.environ, "REVIEW_DB_URL": db_url, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(script),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = AppServer(process, port, log_path, db_url)
    try:
        wait_healthy(server, timeout_s)
    except BaseException:
        server.stop()
        raise
    return server


def wait_healthy(server: AppServer, timeout_s: float) -> None:
    """Poll ``/_stcore/health`` until it answers ``ok``; fail early if the process died."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200 and resp.read().strip() == b"ok":
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"streamlit not healthy after {timeout_s:.0f}s:\n{server.log_tail()}")


def require_chromium() -> str:
    """The chromium binary, or :class:`ChromiumMissing` with what to do about it."""
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        raise ChromiumMissing(
            f"{CHROMIUM} not found: the browser tests need Debian's chromium "
            "(`make browser`, or `sudo apt-get install -y chromium`); Playwright cannot download browsers here."
        )
    return str(CHROMIUM)


def launch_chromium(playwright: Playwright) -> Browser:
    """Headless Debian chromium with the flags from the project notes."""
    return playwright.chromium.launch(executable_path=require_chromium(), headless=True, args=CHROMIUM_ARGS)


def wait_ready(page: Page, timeout_ms: int = READY_TIMEOUT_MS) -> None:
    """Wait until the app is connected and no script run is in progress."""
    page.wait_for_selector(CONNECTED, state="attached", timeout=timeout_ms)
    page.wait_for_selector(NOT_RUNNING, state="attached", timeout=timeout_ms)


def settle(page: Page, timeout_ms: int = READY_TIMEOUT_MS) -> None:
    """After an action whose rerun may not have started yet: wait for idle twice, a beat apart."""
    wait_ready(page, timeout_ms)
    page.wait_for_timeout(300)
    wait_ready(page, timeout_ms)


#: Whether the review card has shown the same row (its showing's number) for ``ms``: kept in the
#: page between polls, reset whenever the row shown changes or none is shown.
_STEADY_ROW = """(ms) => {
    const marker = document.querySelector("[data-q-screen]");
    const screen = marker ? marker.getAttribute("data-q-run") + ":" + marker.getAttribute("data-q-screen") : null;
    const now = performance.now();
    const seen = window.__steadyRow;
    if (!seen || seen.screen !== screen) { window.__steadyRow = {screen: screen, since: now}; return false; }
    return screen !== null && now - seen.since >= ms;
}"""
#: How long a person looks at a new row before pressing (well above ``REVIEW_MIN_SHOWN_MS``, 150 ms).
LOOK_MS = 350


def look_at_row(page: Page, ms: int = LOOK_MS, timeout_ms: int = READY_TIMEOUT_MS) -> None:
    """Wait, as a person reads before judging, until the review card has shown the same row for
    ``ms``: a verdict given sooner on a row just painted is refused by design (issue 36)."""
    page.evaluate("() => { window.__steadyRow = null; }")
    page.wait_for_function(_STEADY_ROW, arg=ms, polling=50, timeout=timeout_ms)


def exception_count(page: Page) -> int:
    return page.locator(EXCEPTION).count()


def no_exception(page: Page, where: str) -> None:
    """Fail with the first exception box's text if the page shows any."""
    count = exception_count(page)
    if count:
        details = page.locator(EXCEPTION).first.inner_text()
        raise AssertionError(f"{count} exception(s) on {where}: {details[:2000]}")


def open_nav(page: Page, label: str, title_prefix: str) -> None:
    """Click a sidebar navigation link, as a person does, and wait for its page to finish."""
    # The link's text ends with its label; its icon's name comes first ("compare_arrowsAgreement"),
    # so a plain substring "Compare" would also find Agreement's link.
    page.locator(NAV_LINK, has_text=re.compile(rf"{re.escape(label)}\s*$")).first.click()
    expect(page.locator("h1").first).to_contain_text(title_prefix, timeout=TIMEOUT_MS)
    settle(page)


def click_download(page: Page, key: str, server: AppServer | None = None) -> Download:
    """Click the download button ``key`` as a person does and return the file the browser saved.

    Without a download in time, fail with what the person saw under the button (Streamlit shows a
    failed deferred download there for 5 s only, so it is read while waiting) and the server's log.
    """
    seen: list[Download] = []

    def keep(download: Download) -> None:
        seen.append(download)

    page.on("download", keep)
    said: set[str] = set()
    error = page.locator(f".st-key-{key} [data-testid='stDownloadButtonError']")
    try:
        page.locator(f".st-key-{key} button").click()
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while not seen and time.monotonic() < deadline:
            said.update(error.all_inner_texts())
            page.wait_for_timeout(100)
    finally:
        page.remove_listener("download", keep)
    if not seen:
        log = server.log_tail() if server is not None else "(no server given)"
        raise AssertionError(
            f"no download from {key!r} in {TIMEOUT_MS} ms; under the button: {sorted(said)}; log:\n{log}"
        )
    return seen[0]


def upload_file(page: Page, name: str, data: bytes, title: str | None = None) -> None:
    """Upload one file through the Upload page's file input; the app then opens an overview
    (``title``: its heading, by default the new run's ``Overview: <file stem>``)."""
    open_nav(page, "Upload", "Upload a model run")
    page.locator(UPLOAD_INPUT).set_input_files(files=[{"name": name, "mimeType": "text/csv", "buffer": data}])
    expected = title if title is not None else f"Overview: {Path(name).stem}"
    expect(page.locator("h1").first).to_contain_text(expected, timeout=TIMEOUT_MS)
    settle(page)


@dataclass
class Traffic:
    """Dialogs and requests seen by one browser context (listener and route, both recorded)."""

    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    routed: list[str] = field(default_factory=list)

    @classmethod
    def attach(cls, context: BrowserContext, page: Page) -> Traffic:
        traffic = cls()

        def on_dialog(dialog) -> None:  # noqa: ANN001  (playwright Dialog)
            traffic.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        def on_request(request: Request) -> None:
            traffic.requests.append(request.url)

        def on_route(route: Route) -> None:
            traffic.routed.append(route.request.url)
            route.continue_()

        page.on("dialog", on_dialog)
        page.on("request", on_request)
        context.route("**/*", on_route)
        return traffic

    def to_host(self, host: str, port: int) -> list[str]:
        """Recorded URLs (either recorder) that go to ``host:port``."""
        hits = []
        for url in [*self.requests, *self.routed]:
            parsed = urlparse(url)
            if parsed.hostname == host and parsed.port == port:
                hits.append(url)
        return hits


def review_rows(db_url: str, data: bytes, bucket: str | None = "overlap_only", domain: str | None = None) -> list[int]:
    """1-based rows of the stored run of ``data`` in the order the queue shows them to a new
    reviewer: the run's seeded random permutation (read from the server's database)."""
    engine = make_engine(db_url)
    try:
        run = store.find_run_by_sha(engine, store.sha256_bytes(data))
        assert run is not None, "the upload was not stored"
        scope = review.queue_scope(store.load_scored(engine, run.id), bucket, domain, seed=run.review_seed)
        return [int(i) + 1 for i in scope.row_idx]
    finally:
        engine.dispose()
