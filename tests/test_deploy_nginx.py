"""The team deployment of the README, run for real (issue 20): ``deploy/nginx/answer-review.conf``
in Debian's nginx, in front of two dashboard processes on one throwaway PostgreSQL database.

The site file is used as shipped; only its ``CHANGE`` lines are filled (ports, certificate,
htpasswd) and one debugging header is added (``X-Review-Upstream``: which process answered).
Browsers reach the site as ``review.test`` (chromium maps it to 127.0.0.1), not as 127.0.0.1:
Streamlit lets a websocket from a 127.0.0.1 page through whatever the Host header says, so only
another name tests that the proxy passes the Host the page's Origin must match.

nginx runs as a foreground process with its own prefix, files and ports in a temporary folder
(never the system service); a missing nginx or openssl fails with what to install (``make nginx``).
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browser import (
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    AppServer,
    ChromiumMissing,
    free_port,
    look_at_row,
    no_exception,
    open_nav,
    require_chromium,
    settle,
    start_app,
    upload_file,
)
from playwright.sync_api import Browser, BrowserContext, Page, WebSocket, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from scoring import ingest, review, store
from scoring.review import roles as I
from scoring.store import make_engine

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "deploy" / "nginx" / "answer-review.conf"
HOST = "review.test"
HEADER = "X-Forwarded-Email"
DEBUG_HEADER = "X-Review-Upstream"
COOKIE = "review_backend"
USERS = {"alice@example.org": "alice-secret", "bob@example.org": "bob-secret", "carol@example.org": "carol-secret"}
#: The bundled sample's rows (every agreement bucket, so the queue has rows to hand out) 40
#: times over, each question made unique and long: about 1.5 MB, over nginx's default
#: client_max_body_size of 1 MB.
_SAMPLE = (ROOT / "sample_data" / "sample_run.csv").read_text(encoding="utf-8").splitlines()
_PADDING = "Read the whole question before answering. " * 20
BIG_RUN = (
    "\n".join(
        [_SAMPLE[0]]
        + [
            line.replace(",", f" ({copy}: {_PADDING.strip()}),", 1) if not line.startswith('"') else line
            for copy in range(40)
            for line in _SAMPLE[1:]
        ]
    ).encode()
    + b"\n"
)
assert len(BIG_RUN) > 1024 * 1024
INSTALL_HINT = "nginx is missing: run 'make nginx' (or 'sudo apt-get install -y nginx openssl')"


# --- the site: PostgreSQL, two dashboards, nginx -------------------------------------------------


@dataclass
class Site:
    apps: list[AppServer]
    nginx: subprocess.Popen[bytes]
    folder: Path
    https_port: int
    http_port: int
    db_url: str

    @property
    def base(self) -> str:
        return f"https://{HOST}:{self.https_port}"

    @staticmethod
    def upstream(app: AppServer) -> str:
        return f"127.0.0.1:{app.port}"

    def app_at(self, upstream: str) -> AppServer:
        return next(app for app in self.apps if self.upstream(app) == upstream)

    def access_log(self) -> str:
        return (self.folder / "access.log").read_text(errors="replace")

    def error_log(self) -> str:
        try:
            return (self.folder / "error.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""


def nginx_binary() -> str:
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if not found or not shutil.which("openssl"):
        pytest.fail(INSTALL_HINT, pytrace=False)
    return found


def htpasswd_line(user: str, password: str) -> str:
    """One htpasswd line, made the way deploy/README.md says (``openssl passwd -6``, SHA-512 crypt)."""
    made = subprocess.run(
        ["openssl", "passwd", "-6", "-stdin"], input=password, capture_output=True, text=True, check=True
    )
    return f"{user}:{made.stdout.strip()}"


def render_site(text: str, values: dict[str, str]) -> str:
    """The shipped site with each placeholder replaced; each must be there exactly once, and every
    ``CHANGE`` line but the host name must have been filled (so this test follows the file)."""
    for old, new in values.items():
        assert text.count(old) == 1, f"{SITE.name} should hold {old!r} exactly once"
        text = text.replace(old, new)
    for line in SITE.read_text().splitlines():
        if "# CHANGE" in line and "server_name" not in line:
            assert line not in text, f"the test does not fill this CHANGE line of {SITE.name}: {line.strip()}"
    return text


MAIN_CONF = """{user}daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log notice;
events {{ worker_connections 256; }}
http {{
    log_format review '$remote_user "$request" $status up=$upstream_addr '
                      'cookie=$cookie_review_backend sent_email="$http_x_forwarded_email"';
    access_log {folder}/access.log review;
    client_body_temp_path {folder}/tmp/body;
    proxy_temp_path {folder}/tmp/proxy;
    fastcgi_temp_path {folder}/tmp/fastcgi;
    uwsgi_temp_path {folder}/tmp/uwsgi;
    scgi_temp_path {folder}/tmp/scgi;
    include {folder}/answer-review.conf;
}}
"""


def start_nginx(folder: Path, apps: list[AppServer]) -> tuple[subprocess.Popen[bytes], int, int]:
    binary = nginx_binary()
    (folder / "tmp").mkdir()
    cert, key = folder / "site.pem", folder / "site.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            f"/CN={HOST}",
            "-addext",
            f"subjectAltName=DNS:{HOST}",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    (folder / "htpasswd").write_text("".join(htpasswd_line(u, p) + "\n" for u, p in USERS.items()))
    https_port, http_port = free_port(), free_port()
    site = render_site(
        SITE.read_text(),
        {
            "server 127.0.0.1:8501;": f"server {Site.upstream(apps[0])};",
            "server 127.0.0.1:8502;": f"server {Site.upstream(apps[1])};",
            "listen 80;": f"listen 127.0.0.1:{http_port};",
            "listen 443 ssl;": f"listen 127.0.0.1:{https_port} ssl;",
            "/etc/ssl/certs/review.example.org.pem;": f"{cert};",
            "/etc/ssl/private/review.example.org.key;": f"{key};",
            "/etc/nginx/answer-review.htpasswd;": f"{folder / 'htpasswd'};",
            "location / {": f"location / {{\n        add_header {DEBUG_HEADER} $upstream_addr always;",
        },
    )
    (folder / "answer-review.conf").write_text(site)
    # As root the workers would run as nobody, who cannot read the htpasswd in pytest's 0700 folder.
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = folder / "nginx.conf"
    conf.write_text(MAIN_CONF.format(user=user, folder=folder))
    args = [binary, "-p", str(folder), "-c", str(conf), "-e", str(folder / "error.log")]
    check = subprocess.run([*args, "-t"], capture_output=True, text=True)
    assert check.returncode == 0, f"nginx -t refused the site:\n{check.stderr}"
    with (folder / "nginx.out").open("wb") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"nginx exited with {process.returncode}:\n{(folder / 'error.log').read_text()}")
        try:
            socket.create_connection(("127.0.0.1", https_port), timeout=1).close()
            return process, https_port, http_port
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def stop_nginx(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # nginx's fast shutdown
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, postgres) -> Iterator[Site]:  # noqa: ANN001
    folder = tmp_path_factory.mktemp("deploy_nginx")
    name, url = postgres.database()
    engine = make_engine(url)
    ingest.ensure_sample(engine)  # before the dashboards start, so they do not race to load it
    engine.dispose()
    env = {I.HEADER_SETTING: HEADER, I.ADJUDICATORS_SETTING: "", I.REVIEWERS_SETTING: ""}
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(start_app, url, folder / f"app{i}.log", extra_env=env) for i in (1, 2)]
    apps = [f.result() for f in futures if f.exception() is None]
    nginx = None
    try:
        if len(apps) < 2:
            raise next(f.exception() for f in futures if f.exception() is not None)
        nginx, https_port, http_port = start_nginx(folder, apps)
        yield Site(apps, nginx, folder, https_port, http_port, url)
    finally:
        if nginx is not None:
            stop_nginx(nginx)
        for app in apps:
            app.stop()
        postgres.drop(name)


# --- plain HTTP through the proxy ---------------------------------------------------------------


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


def call(
    site: Site,
    path: str,
    user: str | None = None,
    headers: dict[str, str] | None = None,
    method: str = "GET",
    body: bytes | None = None,
    port: int | None = None,
) -> Reply:
    """One request to the site (TLS unless ``port`` is the plain-HTTP one), as ``user`` if given."""
    sent = {"Host": f"{HOST}:{port or site.https_port}", **(headers or {})}
    if user is not None:
        sent["Authorization"] = "Basic " + base64.b64encode(f"{user}:{USERS.get(user, 'wrong')}".encode()).decode()
    if port is None:
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            "127.0.0.1", site.https_port, timeout=30, context=ssl._create_unverified_context()
        )
    else:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        return Reply(resp.status, resp.headers, resp.read())
    finally:
        conn.close()


def our_cookies(reply: Reply) -> list[str]:
    """The affinity cookies the reply sets (Streamlit sets its own XSRF cookie too)."""
    return [c for c in reply.headers.get_all("Set-Cookie") or [] if c.startswith(f"{COOKIE}=")]


def test_the_proxy_asks_who_you_are_and_keeps_each_browser_on_one_process(site: Site) -> None:
    # Nobody gets past nginx without a password, and a wrong one is refused.
    anonymous = call(site, "/")
    assert anonymous.status == 401 and 'Basic realm="Answer review"' in anonymous.headers["WWW-Authenticate"]
    assert call(site, "/", user="mallory@example.org").status == 401
    # Plain HTTP only redirects to HTTPS (basic-auth passwords never travel in clear).
    plain = call(site, "/review", port=site.http_port)
    assert plain.status == 301 and plain.headers["Location"] == f"https://{HOST}/review"

    # A first visit gets an affinity cookie with its page; with it, every request reaches the
    # process that served the page. Other answers (here the health check) set no cookie.
    assert not our_cookies(call(site, "/_stcore/health", user="alice@example.org"))
    first = call(site, "/", user="alice@example.org")
    assert first.status == 200 and first.headers["Content-Type"].startswith("text/html")
    ours = our_cookies(first)
    assert len(ours) == 1, first.headers.get_all("Set-Cookie")
    match = re.fullmatch(rf"{COOKIE}=([0-9a-f]{{32}}); Path=/; Secure; HttpOnly; SameSite=Lax", ours[0])
    assert match, ours[0]
    seen = {first.headers[DEBUG_HEADER]}
    for path in ("/", "/_stcore/health", "/review", "/_stcore/host-config") * 2:
        again = call(site, path, user="alice@example.org", headers={"Cookie": f"{COOKIE}={match[1]}"})
        assert again.status == 200 and not our_cookies(again), (path, again.status)  # not reissued
        seen.add(again.headers[DEBUG_HEADER])
    assert len(seen) == 1, f"one cookie, several processes: {seen}"
    # Browsers without a cookie are spread over both processes (not all on one, as ip_hash would
    # put every client of 127.0.0.1): 24 fresh visits all on one process would happen 1 in 8 million.
    fresh = {call(site, "/", user="bob@example.org").headers[DEBUG_HEADER] for _ in range(24)}
    assert fresh == {Site.upstream(app) for app in site.apps}

    # Uploads: nginx takes what the dashboard takes (server.maxUploadSize, in MB) and no more.
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    limit = re.search(r"^\s*client_max_body_size\s+(\d+)m;", SITE.read_text(), re.M)
    assert limit and int(limit[1]) == config["server"]["maxUploadSize"], "nginx's limit differs from the dashboard's"
    upload = "/_stcore/upload_file/no-session/no-file"
    too_big = call(
        site,
        upload,
        user="alice@example.org",
        method="PUT",
        headers={"Content-Length": str((int(limit[1]) + 1) * 1024 * 1024)},
    )
    assert too_big.status == 413  # refused from the header alone, nothing sent
    # (That a run over nginx's default 1 MB gets through is carol's upload in the browser test.)


# --- browsers through the proxy ------------------------------------------------------------------


@dataclass
class Reviewer:
    """One person's browser through nginx: its page, the process it was put on, what it saw."""

    user: str
    context: BrowserContext
    page: Page
    upstream: str
    upstreams: list[str] = field(default_factory=list)
    sockets: list[WebSocket] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)

    def marks(self, site: Site) -> list[str]:
        engine = make_engine(site.db_url)
        try:
            current = review.current_verdicts(engine)
        finally:
            engine.dispose()
        return current.loc[current["reviewer"] == self.user, "item_key"].tolist()


def open_reviewer(
    browser: Browser, site: Site, user: str, on: AppServer | None = None, headers: dict[str, str] | None = None
) -> Reviewer:
    """A fresh browser logged in as ``user`` whose affinity cookie (given by nginx) puts it on
    process ``on`` (any when None): a fresh visit lands at random, so drop the cookie and visit
    again until it lands there."""
    context = browser.new_context(
        viewport={"width": 1400, "height": 1000},
        ignore_https_errors=True,
        http_credentials={"username": user, "password": USERS[user]},
        extra_http_headers=headers or {},
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()

    def document_only(route) -> None:  # noqa: ANN001  (playwright Route)
        route.continue_() if route.request.resource_type in ("document", "fetch") else route.abort()

    page.route("**/*", document_only)  # placing the browser needs the page's cookie, not the app
    for _ in range(30):
        first = page.goto(f"{site.base}/review", timeout=TIMEOUT_MS)
        assert first is not None and first.status == 200, first and first.status
        assert len([c for c in context.cookies() if c["name"] == COOKIE]) == 1, context.cookies()
        # The browser's next request (with the cookie it now holds) reaches the same process.
        upstream = page.evaluate(f"fetch('/_stcore/health').then(r => r.headers.get('{DEBUG_HEADER}'))")
        assert upstream == first.headers[DEBUG_HEADER.lower()], "the cookie did not keep the browser on its process"
        if on is None or upstream == site.upstream(on):
            break
        context.clear_cookies()
    else:
        raise AssertionError(f"30 fresh visits never reached {site.upstream(on)}")
    page.unroute("**/*", document_only)
    person = Reviewer(user, context, page, upstream)

    def on_response(response) -> None:  # noqa: ANN001  (playwright Response)
        if response.url.startswith(site.base):
            person.upstreams.append(response.headers.get(DEBUG_HEADER.lower(), "?"))

    def on_socket(ws: WebSocket) -> None:
        person.sockets.append(ws)
        ws.on("close", lambda ws: person.closed.append(ws.url))

    page.on("response", on_response)
    page.on("websocket", on_socket)
    open_queue(page, site, user)
    return person


def open_queue(page: Page, site: Site, user: str) -> None:
    """Open the Review queue (straight from its address) and see who the page says is reviewing."""
    page.goto(f"{site.base}/review", timeout=TIMEOUT_MS)
    settle(page)
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    sidebar = page.locator("[data-testid='stSidebar']")
    expect(sidebar).to_contain_text(f"Reviewer: {user}", timeout=TIMEOUT_MS)
    expect(sidebar).to_contain_text(f"from the proxy header {HEADER}", timeout=TIMEOUT_MS)
    no_exception(page, f"{user}'s review queue")


def mark(person: Reviewer, site: Site) -> None:
    """Press Correct on the row on screen and see it saved: on the page and in the database (the
    page may still show the previous press's "Saved: row", so the count is what proves this one)."""
    main = person.page.locator("[data-testid='stMain']")
    before = len(person.marks(site))
    try:
        look_at_row(person.page)
        person.page.locator(".st-key-q_yes button").click()
        expect(main).to_contain_text("Saved: row", timeout=TIMEOUT_MS)
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while len(person.marks(site)) == before and time.monotonic() < deadline:
            person.page.wait_for_timeout(200)
        assert len(person.marks(site)) == before + 1
    except (AssertionError, PlaywrightTimeout):
        raise AssertionError(f"{person.user} could not mark; the page says:\n{main.inner_text()[:1500]}") from None
    no_exception(person.page, f"{person.user}'s review queue")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian chromium that resolves review.test to 127.0.0.1 (a missing binary fails)."""
    try:
        executable = require_chromium()
    except ChromiumMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    with sync_playwright() as playwright:
        args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {HOST} 127.0.0.1"]
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=args)
        try:
            yield chromium
        finally:
            chromium.close()


def test_two_reviewers_on_two_processes_named_by_the_proxy(site: Site, browser: Browser) -> None:
    one, two = site.apps
    started = time.monotonic()

    def stage(what: str) -> None:  # shown with the logs if the test fails
        print(f"{time.monotonic() - started:6.1f}s {what}")

    alice = open_reviewer(browser, site, "alice@example.org", on=one)
    bob = open_reviewer(browser, site, "bob@example.org", on=two)
    try:
        stage("browsers open")
        mark(alice, site)
        mark(bob, site)
        # Each mark is in the one database under the name nginx set from the login.
        assert len(alice.marks(site)) == 1 and len(bob.marks(site)) == 1
        # Sticky: every response each page got (page, scripts, health, the websocket's own
        # process) came from the process it was put on, and each page holds one open websocket.
        assert set(alice.upstreams) == {site.upstream(one)} and set(bob.upstreams) == {site.upstream(two)}
        for person in (alice, bob):
            streams = [ws.url for ws in person.sockets]
            assert streams == [f"wss://{HOST}:{site.https_port}/_stcore/stream"] and not person.closed, (
                person.user,
                streams,
                person.closed,
            )

        stage("alice and bob marked")
        # A client that sends its own X-Forwarded-Email (claiming to be alice) is still carol.
        # She uploads a run over nginx's default body limit of 1 MB, then marks one of its rows.
        carol = open_reviewer(browser, site, "carol@example.org", headers={HEADER: "alice@example.org"})
        try:
            stage("carol open")
            upload_file(carol.page, "big_run.csv", BIG_RUN)
            stage("carol uploaded")
            open_nav(carol.page, "Review queue", "Review queue")
            mark(carol, site)
        finally:
            carol.context.close()
        assert len(carol.marks(site)) == 1 and len(alice.marks(site)) == 1
        engine = make_engine(site.db_url)
        try:
            big = store.find_run_by_sha(engine, store.sha256_bytes(BIG_RUN))
            assert big is not None, "the 1.5 MB upload was not stored"
            assert review.current_verdicts(engine, reviewer="carol@example.org")["run_id"].tolist() == [big.id]
        finally:
            engine.dispose()
        # ... and the header did reach nginx on carol's websocket, which dropped it.
        spoofed = [
            line
            for line in site.access_log().splitlines()
            if line.startswith("carol@example.org ") and 'sent_email="alice@example.org"' in line
        ]
        assert any("/_stcore/stream" in line for line in spoofed), site.access_log()[-3000:]

        stage("carol marked")
        # The process under alice dies: alice's websocket closes, bob's stays open and he marks on.
        site.app_at(alice.upstream).stop()
        deadline = time.monotonic() + 20
        while not alice.closed and time.monotonic() < deadline:
            alice.page.wait_for_timeout(200)
        assert alice.closed, "alice's websocket did not close when her process was killed"
        stage("alice's process killed")
        mark(bob, site)
        assert len(bob.marks(site)) == 2
        assert not bob.closed and len(bob.sockets) == 1, "bob's session was interrupted"
        assert set(bob.upstreams) == {site.upstream(two)}

        stage("bob marked again")
        # nginx moves alice to the surviving process: a fresh page there, and she marks on.
        open_queue(alice.page, site, alice.user)
        mark(alice, site)
        assert len(alice.marks(site)) == 2
        # (nginx tried the dead process first, then the other: "dead:port, other:port")
        assert alice.upstreams[-1].endswith(site.upstream(two)), alice.upstreams[-1]
        stage("alice marked on the other process")
    except BaseException:
        print(site.access_log()[-4000:], site.error_log(), sep="\n")
        raise
    finally:
        alice.context.close()
        bob.context.close()
