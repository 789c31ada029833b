"""Shared fixtures: where the project and its bundled sample live, how to run a CLI, the
dashboard server with a real browser for the browser tests (helpers in ``tests/browser.py``), and
the databases tests open (issue 28): ``engine`` (a new empty database of each engine),
``app_engine`` (the app's new empty SQLite file), ``sample_engine`` with ``run_id`` and ``scored``
(the app's database holding the bundled sample set) and ``no_judge_settings``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pg_server
import pytest
from browser import TIMEOUT_MS, AppServer, ChromiumMissing, launch_chromium, start_app
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from sqlalchemy import Engine

from scoring import store
from scoring.store import ENV_VAR, make_engine
from scoring.store.samples import SAMPLES_SETTING

PROJECT_ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = PROJECT_ROOT / ".venv" / "bin" / "python"

RunCli = Callable[..., "subprocess.CompletedProcess[str]"]

#: Every test's app (AppTest and the servers of ``tests/browser.py``) names its database through
#: REVIEW_DB_URL, where a first start loads no samples by default (issue 37): the suite's apps load
#: them on a new database as they always did, unless a test says otherwise
#: (``tests/test_browser_samples.py`` and ``tests/test_sample_set.py`` check the default rule).
os.environ.setdefault(SAMPLES_SETTING, "true")


#: The test files that take longest (seconds on 2 cores, measured with --durations=0), longest
#: first. ``make test`` runs files on two workers (``--dist loadfile --no-loadscope-reorder``) in
#: collection order: started first, a long browser file no longer runs alone at the end while the
#: other worker idles (xdist's own reorder puts files with many short tests first).
SLOW_FIRST = (
    "test_browser_queue_place.py",
    "test_browser_press_age.py",
    "test_browser_queue.py",
    "test_browser.py",
    "test_small_runs.py",
    "test_app_pages.py",
    "test_export.py",
    "test_browser_team.py",
    "test_deploy_nginx.py",
    "test_metric_coverage.py",
    "test_browser_keys.py",
    "test_browser_review_card.py",
    "test_browser_blind_pages.py",
    "test_browser_export.py",
    "test_browser_secrets.py",
    "test_browser_pages.py",
    "test_browser_review.py",
    "test_app_review.py",
    "test_verdicts.py",
    "test_concurrency.py",
    "test_judge.py",
    "test_browser_blind.py",
    "test_cli.py",
    "test_browser_estimate.py",
)


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


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on a new empty database of each engine (``db_url``: a SQLite file, a PostgreSQL
    database). A module runs on SQLite alone with
    ``pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)``."""
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


# --- the app's own database: REVIEW_DB_URL points at a new SQLite file ---------------------------


@pytest.fixture
def app_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """A new empty SQLite file that the app (AppTest, the CLI) opens through REVIEW_DB_URL."""
    url = f"sqlite:///{tmp_path / 'dashboard.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    eng = make_engine(url)
    yield eng
    eng.dispose()


@pytest.fixture
def sample_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """The app's database (REVIEW_DB_URL) holding the bundled sample set, as a first start loads it
    (:func:`apptest_support.sample_database`)."""
    from apptest_support import sample_database  # streamlit's test harness: only where it is used

    yield from sample_database(tmp_path, monkeypatch)


@pytest.fixture
def run_id(sample_engine: Engine) -> int:
    """The sample set's newest run, which every page opens on."""
    runs = store.list_runs(sample_engine)
    assert runs[0].name == "Sample run"
    return runs[0].id


@pytest.fixture
def scored(sample_engine: Engine, run_id: int) -> pd.DataFrame:
    """The scored rows of :func:`run_id`."""
    return store.load_scored(sample_engine, run_id)


@pytest.fixture
def no_judge_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No judge configured: no project ``secrets.toml`` is read and no judge variable is set."""
    from scoring import judge  # the OpenAI client: only where it is used
    from scoring.judge import judge_settings as judge_settings

    monkeypatch.setattr(judge_settings, "SECRETS_ROOT", tmp_path)
    for name in judge.ENV_NAMES.values():
        monkeypatch.delenv(name, raising=False)
