"""Shared fixtures: where the project and its bundled sample live, how to run a CLI, and the
dashboard server with a real browser for the browser tests (helpers in ``tests/browser.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pg_server
import pytest
from browser import TIMEOUT_MS, AppServer, ChromiumMissing, launch_chromium, start_app
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

PROJECT_ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = PROJECT_ROOT / ".venv" / "bin" / "python"

RunCli = Callable[..., "subprocess.CompletedProcess[str]"]


#: The test files that take longest (seconds on 2 cores, measured with --durations=0), longest
#: first. ``make test`` runs files on two workers (``--dist loadfile --no-loadscope-reorder``) in
#: collection order: started first, a long browser file no longer runs alone at the end while the
#: other worker idles (xdist's own reorder puts files with many short tests first).
SLOW_FIRST = (
    "test_browser_queue.py", "test_browser.py", "test_small_runs.py", "test_app_pages.py",
    "test_export.py", "test_browser_team.py", "test_deploy_nginx.py", "test_metric_coverage.py",
    "test_browser_keys.py", "test_browser_export.py", "test_browser_secrets.py", "test_browser_pages.py",
    "test_browser_review.py", "test_app_review.py", "test_verdicts.py", "test_concurrency.py",
    "test_judge.py", "test_browser_blind.py", "test_cli.py", "test_browser_estimate.py",
)  # fmt: skip


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put :data:`SLOW_FIRST` files first, in its order; the rest keep theirs (a stable sort)."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session")
def project_root() -> Path:
    """The repository root (the directory holding ``scoring/``)."""
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def sample_csv(project_root: Path) -> Path:
    """The bundled sample run used by ``make run`` and by tests."""
    path = project_root / "sample_data" / "sample_run.csv"
    assert path.is_file(), f"bundled sample missing: {path}"
    return path


@pytest.fixture(scope="session")
def run_cli(project_root: Path) -> RunCli:
    """``run_cli("scoring.word_overlap", "--responses", path)`` runs ``python -m <args>``.

    A real subprocess with the project's venv python, from the project root, so exit codes,
    stdout/stderr separation and tracebacks are seen exactly as a user would see them.
    """
    python = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable

    def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python, "-m", *(str(a) for a in args)],
            cwd=project_root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=180,
            check=False,
        )

    return run


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The dashboard on a free port with its own SQLite file; stopped when the module ends."""
    folder = tmp_path_factory.mktemp("browser_app")
    app = start_app(f"sqlite:///{folder / 'review.db'}", folder / "streamlit.log")
    try:
        yield app
    finally:
        app.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Debian chromium; a missing binary is a failure, never a skip."""
    try:
        with sync_playwright() as playwright:
            chromium = launch_chromium(playwright)
            try:
                yield chromium
            finally:
                chromium.close()
    except ChromiumMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser profile (a person's own browser): its own cookies, storage and session."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    ctx.set_default_timeout(TIMEOUT_MS)
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


# --- databases: SQLite and a throwaway PostgreSQL (issue 11) ------------------------------------

ENGINES = ("sqlite", "postgresql")


@pytest.fixture(scope="session")
def postgres() -> Iterator[pg_server.PgServer]:
    """One PostgreSQL server for the session, started on first use; missing binaries fail."""
    try:
        server = pg_server.start()
    except pg_server.PostgresMissing as exc:
        pytest.fail(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=ENGINES)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new empty database of each engine: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'review.db'}"
        return
    server: pg_server.PgServer = request.getfixturevalue("postgres")
    name, url = server.database()
    try:
        yield url
    finally:
        server.drop(name)
