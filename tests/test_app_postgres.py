"""The dashboard on PostgreSQL (issue 11): the same pages and the same code as on SQLite, the
database shown without its password, and nothing secret on any page.

Runs against the session's throwaway PostgreSQL server (``tests/pg_server.py``), as a role with
a password in its URL, so a leak of the password would be visible.
"""

from __future__ import annotations

from collections.abc import Iterator

import pg_server
import pytest
from apptest_support import click, element_dump, frame_with, open_page, shown_row

from scoring import review, store
from scoring.store import ENV_VAR, make_engine

PASSWORD = "s3cret-Pa55word"


@pytest.fixture
def pg_url(postgres: pg_server.PgServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh database owned by a role with a password; the app is pointed at it."""
    name, url = postgres.owned_database(PASSWORD)
    monkeypatch.setenv(ENV_VAR, url)
    yield url
    postgres.drop_owned(name)


def test_the_dashboard_runs_on_postgresql_and_never_shows_the_password(pg_url: str) -> None:
    """First start on an empty PostgreSQL database: the sample run is loaded, the sidebar shows
    the database with the password masked, a mark is stored in PostgreSQL, and the Reviewers
    page counts it; the password appears in no element of any page."""
    at = open_page("overview")
    shown = element_dump(at)
    assert PASSWORD not in shown
    assert store.display_url(pg_url) in shown and "***" in store.display_url(pg_url)
    (code,) = [c for c in at.sidebar.code if "***" in c.value]  # host and database in full, wrapped (issue 20)
    assert code.proto.wrap_lines and code.value.endswith(pg_url.rsplit("@", 1)[1])
    engine = make_engine(pg_url)
    sample = store.list_runs(engine)[0]  # the sample set's newest, "Sample run"
    assert sample.n_rows == 40

    at = open_page("review", run_id=sample.id)
    row = shown_row(at)
    click(at, "q_yes")
    key = store.load_scored(engine, sample.id)["item_key"].iloc[row]
    current = review.current_verdicts(engine, [key])
    assert current[["reviewer", "verdict"]].values.tolist() == [["alice", "correct"]]
    assert PASSWORD not in element_dump(at)

    at = open_page("reviewers", run_id=sample.id)
    assert frame_with(at, "correct")["correct"].sum() == 1
    for page in ("agreement", "export", "judge", "upload"):
        at = open_page(page, run_id=sample.id)
        assert PASSWORD not in element_dump(at), page
    engine.dispose()


@pytest.fixture
def own_postgres(monkeypatch: pytest.MonkeyPatch) -> Iterator[pg_server.PgServer]:
    """A server of its own: this test stops it, which must not touch other tests' databases."""
    server = pg_server.start()
    _, url = server.database()
    monkeypatch.setenv(ENV_VAR, url)
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("adjudicators", ["", "ana"])
def test_a_mark_while_postgresql_is_down_is_not_saved_and_the_next_one_works(
    own_postgres, adjudicators: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops: the mark shows why it was not saved, the row stays, nothing says saved.
    The server comes back: the next press saves, without restarting the dashboard. With
    adjudicators named, what the reviewer may see (read from the database once per page run)
    is the record read last while the server is down, so the queue still shows its row."""
    monkeypatch.setenv("REVIEW_ADJUDICATORS", adjudicators)
    at = open_page("review")
    row = shown_row(at)
    own_postgres.pause()
    try:
        at.button(key="q_yes").click()
        at.run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert any("not saved" in e.lower() for e in errors), errors
        assert shown_row(at) == row
        assert not any("saved" in s.value.lower() and "not" not in s.value.lower() for s in at.success)
    finally:
        pg_server.restart(own_postgres)
    click(at, "q_yes")
    assert not at.error
    engine = make_engine(store.database_url())
    key = store.load_scored(engine, store.list_runs(engine)[0].id)["item_key"].iloc[row]
    assert review.current_verdicts(engine, [key])["verdict"].tolist() == ["correct"]
    engine.dispose()
