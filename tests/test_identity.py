"""Who is reviewing (issue 11): sign-in, a trusted proxy header, or a typed name, in that order,
and the roles from configuration. The rules are pure (scoring.review.roles); the pages show
which way is in force, refuse a name that may not mark, and take the header in a real browser.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from apptest_support import open_page
from browser import TIMEOUT_MS, exception_count, look_at_row, open_nav, settle, start_app
from playwright.sync_api import Browser, expect

from scoring import review, store
from scoring.review import roles as I
from scoring.store import ENV_VAR, make_engine


def test_the_first_configured_way_wins() -> None:
    assert I.identity({}, {}).mode == "typed"
    assert I.identity({}, {I.HEADER_SETTING: "X-Forwarded-Email"}).mode == "header"
    assert I.identity({I.HEADER_SETTING: "X-Forwarded-Email"}, {}).header == "X-Forwarded-Email"
    assert I.identity({"auth": {"client_id": "x"}}, {I.HEADER_SETTING: "X-Forwarded-Email"}).mode == "signin"
    assert I.identity({}, {I.HEADER_SETTING: "X-Forwarded-Email"}).label == "from the proxy header X-Forwarded-Email"


def test_roles_from_environment_or_secrets_ignore_case_and_spaces() -> None:
    config = I.identity({I.ADJUDICATORS_SETTING: ["Ana@Example.org"]}, {I.REVIEWERS_SETTING: " bob , carol"})
    assert config.may_adjudicate("ana@example.org ") and not config.may_adjudicate("bob")
    assert config.may_review("BOB") and config.may_review("ana@example.org")  # an adjudicator may mark
    assert not config.may_review("mallory") and not config.may_review("")
    open_config = I.identity({}, {})
    assert open_config.may_review("anyone") and open_config.may_adjudicate("anyone")  # no lists: no limits
    assert I.refusal(config, "mallory") is not None and I.refusal(config, "carol") is None


def test_the_header_is_read_case_insensitively_and_checked() -> None:
    config = I.identity({}, {I.HEADER_SETTING: "X-Forwarded-Email"})
    assert I.from_header({"x-forwarded-email": " bob@example.org "}, config) == ("bob@example.org", None)
    name, problem = I.from_header({}, config)
    assert name == "" and "sent no X-Forwarded-Email" in problem
    name, problem = I.from_header({"X-Forwarded-Email": "a;b"}, config)
    assert name == "" and "not a usable name" in problem


def test_a_typed_name_not_on_the_reviewers_list_cannot_mark(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{tmp_path / 'r.db'}")
    monkeypatch.setenv(I.REVIEWERS_SETTING, "bob")
    at = open_page("review", reviewer="alice")
    assert any("not on the reviewers list" in e.value.replace("\\", "") for e in at.sidebar.error)
    assert at.button(key="q_yes").disabled
    assert any(c.value == "Identity: typed name (one machine)" for c in at.sidebar.caption)
    at = open_page("review", reviewer="bob")
    assert not at.button(key="q_yes").disabled and not at.sidebar.error


def test_header_mode_without_the_header_names_nobody(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{tmp_path / 'r.db'}")
    monkeypatch.setenv(I.HEADER_SETTING, "X-Forwarded-Email")
    at = open_page("review", reviewer="alice")  # a typed name in the URL is ignored in this mode
    assert "Reviewer: (none)" in [t.value for t in at.sidebar.text]
    assert any("sent no X-Forwarded-Email" in e.value.replace("\\", "") for e in at.sidebar.error)
    assert at.button(key="q_yes").disabled
    assert not at.sidebar.text_input  # no name field to type into


def _main_messages(at) -> list[str]:
    return [
        str(m.value).replace("\\", "")
        for kind in (at.main.warning, at.main.info, at.main.error, at.main.success)
        for m in kind
    ]


def test_who_cannot_mark_is_told_why_and_never_that_they_are_done(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 20: a name not on REVIEW_REVIEWERS on a double-blind queue is told it is not on the list
    (and who to ask), not "Done"; in proxy-header mode nobody is told to type a name; a key press
    says the same reason."""
    url = f"sqlite:///{tmp_path / 'r.db'}"
    monkeypatch.setenv(ENV_VAR, url)
    monkeypatch.setenv(I.REVIEWERS_SETTING, "bob")
    engine = make_engine(url)
    open_page("review", reviewer="bob")  # loads the sample run
    run = store.list_runs(engine)[0]  # the sample set's newest, "Sample run"
    review.set_blind(engine, run.id, review.BlindSpec("overlap_only"), "bob", on=True)
    at = open_page("review", reviewer="alice")
    said = _main_messages(at)
    assert any("alice is not on the reviewers list (REVIEW_REVIEWERS)" in m and "Ask whoever runs" in m for m in said)
    assert not any(m.startswith("Done") for m in said), said
    assert at.session_state[f"q_loop_{run.id}"].cannot_mark.startswith("alice is not on the reviewers list")
    monkeypatch.delenv(I.REVIEWERS_SETTING)
    monkeypatch.setenv(I.HEADER_SETTING, "X-Forwarded-Email")
    at = open_page("review", reviewer=None)
    said = _main_messages(at)
    assert any("sent no X-Forwarded-Email header" in m for m in said), said
    assert not any("Type your name" in m for m in said), said


def test_behind_a_proxy_the_header_names_the_reviewer(tmp_path: Path, browser: Browser) -> None:
    """A real browser whose requests carry X-Forwarded-Email (what the proxy adds): the sidebar
    shows that name and how it was found, and a mark is saved under it."""
    url = f"sqlite:///{tmp_path / 'proxy.db'}"
    env = {I.HEADER_SETTING: "X-Forwarded-Email", I.ADJUDICATORS_SETTING: "bob@example.org"}
    server = start_app(url, tmp_path / "proxy.log", extra_env=env)
    context = browser.new_context(extra_http_headers={"X-Forwarded-Email": "bob@example.org"})
    try:
        page = context.new_page()
        page.goto(server.url, timeout=TIMEOUT_MS)
        settle(page)
        sidebar = page.locator("[data-testid='stSidebar']")
        expect(sidebar).to_contain_text("Reviewer: bob@example.org", timeout=TIMEOUT_MS)
        expect(sidebar).to_contain_text("from the proxy header X-Forwarded-Email · adjudicator", timeout=TIMEOUT_MS)
        open_nav(page, "Review queue", "Review queue")
        look_at_row(page)
        page.locator(".st-key-q_yes button").click()
        expect(page.locator("[data-testid='stMain']")).to_contain_text("Saved", timeout=TIMEOUT_MS)
        assert exception_count(page) == 0
        engine = make_engine(url)
        marks = review.current_verdicts(engine)
        assert marks["reviewer"].tolist() == ["bob@example.org"]
        assert store.count_runs(engine) == len(store.SAMPLE_SET)
        engine.dispose()
    finally:
        context.close()
        server.stop()
