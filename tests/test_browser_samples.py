"""Issue 37, point 5 in a real browser: the bundled sample runs are for a first look on the embedded
default database (no ``REVIEW_DB_URL``: the SQLite file ``data/review.db``); a team database
(``REVIEW_DB_URL`` set: a SQLite file elsewhere, or PostgreSQL) starts without them. Once the
database holds a run of the team's own, the samples leave every run list and table (a sidebar
toggle shows them again), and one click on Start here removes them all, for good: they do not come
back when the server starts again.

The embedded default is the app itself run from a copy of the project in a temporary folder
(``app.py``, ``scoring/``, ``ui/``, ``views/``, ``sample_data/``), so its ``data/review.db`` is the
copy's, never the project's. ``REVIEW_SAMPLES`` is emptied for every server here (the helpers in
``tests/browser.py`` turn it on for the other browser tests): these servers follow the default rule.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pg_server
import pytest
from browser import ROOT, TIMEOUT_MS, AppServer, settle, start_app, upload_file
from playwright.sync_api import Page, expect

from scoring import ingest, store
from scoring.store import make_engine

MAIN = "[data-testid='stMain']"
SIDEBAR = "[data-testid='stSidebar']"
DEFAULT_RULE = {"REVIEW_SAMPLES": ""}  #: empty counts as unset: the rule of the database in use
OWN = b"question,answer,response,Domain,model,language\nWho wrote Gitanjali?,Tagore,Tagore wrote it,Art,ours,English\n"
#: What the app needs to run from a copy; ``static`` (fonts) is linked, not copied.
COPIED = ("app.py", "scoring", "ui", "views", "sample_data", ".streamlit/config.toml")


def copy_project(folder: Path) -> Path:
    """The app as shipped, in ``folder``: its default database is ``folder/data/review.db``."""
    ignore = shutil.ignore_patterns("__pycache__")
    for name in COPIED:
        source, target = ROOT / name, folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=ignore)
        else:
            shutil.copy2(source, target)
    (folder / "static").symlink_to(ROOT / "static")
    return folder


def picker_options(page: Page) -> list[str]:
    """The sidebar run picker's choices, read by opening it as a person does (none: no picker)."""
    picker = page.locator(SIDEBAR).get_by_role("combobox", name="Run")
    if picker.count() == 0:
        return []
    picker.click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible(timeout=TIMEOUT_MS)
    texts = [t.strip() for t in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return texts


def table_runs(page: Page, server: AppServer) -> list[str]:
    """The runs in the Model x language table by default: its multiselect's chips."""
    page.goto(f"{server.url}/languages", timeout=TIMEOUT_MS)
    settle(page)
    chips = page.locator(f"{MAIN} [data-testid='stMultiSelectTagsContainer'] [data-tag]")
    return [str(c.get_attribute("aria-label")) for c in chips.all()]


def save_own(db_url: str) -> store.RunInfo:
    """A run of the team's own, stored as an upload stores it (written from outside the server)."""
    engine = make_engine(db_url)
    try:
        return ingest.save_run(engine, OWN, "ours.csv").run
    finally:
        engine.dispose()


def own_run(db_url: str) -> store.RunInfo:
    """The run stored from :data:`OWN`."""
    engine = make_engine(db_url)
    try:
        found = store.find_run_by_sha(engine, store.sha256_bytes(OWN))
    finally:
        engine.dispose()
    assert found is not None, "the upload was not stored"
    return found


def stored_names(db_url: str) -> list[str]:
    engine = make_engine(db_url)
    try:
        return [r.name for r in store.list_runs(engine)]
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AppServer]:
    """A team database: ``REVIEW_DB_URL`` names a new SQLite file, or a new database on the
    session's throwaway PostgreSQL server (``tests/pg_server.py``)."""
    if request.param == "sqlite":
        url, drop = f"sqlite:///{tmp_path / 'team.db'}", None
    else:
        server: pg_server.PgServer = request.getfixturevalue("postgres")
        name, url = server.database()
        drop = lambda: server.drop(name)  # noqa: E731
    app = start_app(url, tmp_path / "team.log", extra_env=DEFAULT_RULE)
    try:
        yield app
    finally:
        app.stop()
        if drop is not None:
            drop()


def test_a_team_database_starts_without_the_samples(team: AppServer, page: Page) -> None:
    page.goto(team.url, timeout=TIMEOUT_MS)
    settle(page)
    expect(page.locator("h1").first).to_have_text("Start here", timeout=TIMEOUT_MS)
    expect(page.locator(MAIN)).to_contain_text("No run yet")
    assert picker_options(page) == []
    assert stored_names(team.db_url) == [], "a team database got runs it was not given"
    mine = save_own(team.db_url)
    page.reload()
    settle(page)
    options = picker_options(page)
    assert options == [store.run_label(mine)], options
    assert [re.sub(r"^#\d+ ", "", c) for c in table_runs(page, team)] == ["ours · ours · English (1 rows)"]
    page.goto(f"{team.url}/overview", timeout=TIMEOUT_MS)
    settle(page)
    expect(page.locator(MAIN)).to_contain_text("ours")
    assert "Sample run" not in page.locator(MAIN).inner_text() and "sample-model" not in page.locator(MAIN).inner_text()


def test_the_embedded_default_shows_the_samples_until_they_are_removed(tmp_path: Path, page: Page) -> None:
    folder = copy_project(tmp_path / "app")
    default_url = f"sqlite:///{folder / 'data' / 'review.db'}"
    app = start_app("", tmp_path / "first.log", script=folder / "app.py", extra_env=DEFAULT_RULE)
    try:
        page.goto(app.url, timeout=TIMEOUT_MS)
        settle(page)
        # A first look: the four samples, marked as such, the newest open.
        options = picker_options(page)
        assert len(options) == len(store.SAMPLE_SET) and all("· sample (" in o for o in options), options
        upload_file(page, "ours.csv", OWN)
        mine = own_run(default_url)
        # A run of one's own: the samples leave the run list and the tables...
        assert picker_options(page) == [store.run_label(mine)]
        assert len(table_runs(page, app)) == 1
        # ... and one toggle in the sidebar shows them again.
        page.locator(SIDEBAR).get_by_text("Show the sample runs").click()
        settle(page)
        assert len(picker_options(page)) == 1 + len(store.SAMPLE_SET)
        # One click removes them all.
        page.goto(app.url, timeout=TIMEOUT_MS)
        settle(page)
        box = page.locator(".st-key-start_samples")
        expect(box).to_contain_text(f"{len(store.SAMPLE_SET)} sample runs")
        box.get_by_role("button", name=f"Remove the {len(store.SAMPLE_SET)} sample runs").click()
        settle(page)
        expect(page.locator(MAIN)).to_contain_text(f"Removed the {len(store.SAMPLE_SET)} sample runs")
        assert picker_options(page) == [store.run_label(mine)]
        expect(page.locator(SIDEBAR).get_by_text("Show the sample runs")).to_have_count(0)
    finally:
        app.stop()
    assert stored_names(default_url) == ["ours"]
    # Started again on the same database: the samples stay gone.
    again = start_app("", tmp_path / "again.log", script=folder / "app.py", extra_env=DEFAULT_RULE)
    try:
        page.goto(again.url, timeout=TIMEOUT_MS)
        settle(page)
        assert picker_options(page) == [store.run_label(mine)]
    finally:
        again.stop()
    assert stored_names(default_url) == ["ours"]
