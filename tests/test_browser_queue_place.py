"""Real-browser tests of issue 36, points 3 and 9: the queue keeps its place, and language is a
review dimension.

- The scope, the domain and the language filter live in the page's address: a sidebar round trip
  through the Overview, a refresh and the URL opened in another browser (a colleague) all show the
  same place; a hand-edited URL names each bad parameter and opens a sensible default.
- A scope with work left is always offered: a finished triage scope points to the audit sample.
- Team split with languages per reviewer: a reviewer who reads Tamil is handed only Tamil rows, one
  who set none gets any; the card shows the reviewer's languages; the setting outlives the session.
- The True accuracy page's planner aims at one language and puts its rows in the audit scope.

One server for the module (SQLite); each test uploads a run of its own, driven by Debian chromium.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pandas as pd
from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Browser, Page, expect
from queue_browser import run_frame, shown_row

from scoring import review, store
from scoring.estimate.language_plan import plan_language
from scoring.estimate.stored_run import stored_estimate
from scoring.store import make_engine

MAIN = "[data-testid='stMain']"
SIDEBAR = "[data-testid='stSidebar']"
LANGUAGES = ("English", "Tamil", "Hindi")


def mixed_csv(tag: str, n: int, domains: tuple[str, ...] = ("Art", "History")) -> bytes:
    """``n`` overlap_only rows whose language cycles through :data:`LANGUAGES` and whose domain
    cycles through ``domains`` (each pair equally often when ``n`` is a multiple of both), plus two
    both_pass rows."""
    lines = ["question,answer,Domain,language,response"]
    for i in range(n):
        language = LANGUAGES[i % len(LANGUAGES)]
        domain = domains[(i // len(LANGUAGES)) % len(domains)]
        lines.append(f"{tag} question {i}?,{tag}{i} beta,{domain},{language},beta {tag}{i}")
    lines += [f"{tag} easy 1?,gamma,Art,English,gamma", f"{tag} easy 2?,delta,History,Tamil,delta"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def plan_audit(db_url: str, run_id: int, keys: list[str]) -> None:
    """What the True accuracy page's planner does: the rows in the run's audit scope."""
    engine = make_engine(db_url)
    try:
        review.set_audit(engine, run_id, keys, "lead", 0.05)
    finally:
        engine.dispose()


def new_page(browser: Browser) -> Page:
    """A fresh browser profile (another person's browser, or a new session)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    context.set_default_timeout(TIMEOUT_MS)
    return context.new_page()


def choose(page: Page, key: str, option: str) -> None:
    """Pick ``option`` in the selectbox ``key`` as a person does: open it, type, click the option."""
    picker = page.locator(f".st-key-{key} input[role='combobox']").first
    picker.click()
    picker.fill(option.split(" ")[0].rstrip(":"))
    page.get_by_role("option", name=re.compile(rf"^{re.escape(option)}")).first.click()
    settle(page)


def expect_choice(page: Page, key: str, option: str) -> None:
    """The selectbox ``key`` shows ``option`` (its label starts with it)."""
    picker = page.locator(f".st-key-{key} input[role='combobox']").first
    expect(picker).to_have_value(re.compile(rf"^{re.escape(option)}"), timeout=TIMEOUT_MS)


def params(page: Page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


def mark_correct(page: Page) -> int:
    """Click Correct on the row shown; returns its 1-based number once the next one is shown."""
    row = shown_row(page)
    page.locator(".st-key-q_yes button").click()
    expect(page.locator(MAIN)).to_contain_text(f"Saved: row {row} marked correct.", timeout=TIMEOUT_MS)
    settle(page)
    return row


def open_queue(page: Page, server: AppServer, reviewer: str, data: bytes, name: str) -> tuple[int, pd.DataFrame]:
    page.goto(f"{server.url}/?reviewer={reviewer}", timeout=TIMEOUT_MS)
    settle(page)
    upload_file(page, name, data)
    run_id, frame = run_frame(server.db_url, data)
    return run_id, frame


def at_place(page: Page, scope: str, domain: str, language: str | None, total: int) -> None:
    """The queue shows the scope, domain and language chosen, their rows, and the URL holds them."""
    main = page.locator(MAIN)
    expect_choice(page, "q_bucket", scope)
    expect_choice(page, "q_domain", domain)
    expect(main).to_contain_text(re.compile(rf"Reviewed \d+ of {total} in this scope"))
    expect(main).to_contain_text(f"Domain: {domain}")
    here = params(page)
    assert here.get("domain") == domain, page.url
    if language is not None:
        expect_choice(page, "q_language", language)
        expect(main).to_contain_text(f"Language: {language}")
        assert here.get("language") == language, page.url
    no_exception(page, f"the queue at {page.url}")


def test_the_queue_keeps_its_place_across_the_sidebar_a_refresh_and_a_colleagues_link(
    server: AppServer, browser: Browser, page: Page
) -> None:
    data = mixed_csv("place", 36)
    run_id, frame = open_queue(page, server, "asha", data, "place_model_tamil.csv")
    overlap = frame[frame["bucket"] == "overlap_only"]
    plan_audit(server.db_url, run_id, overlap["item_key"].tolist())  # the planner's audit: every overlap row
    open_nav(page, "Review queue", "Review queue")

    # Mid-audit: the audit scope, History; one row marked.
    choose(page, "q_bucket", "Estimate: audit sample")
    page.locator(".st-key-q_domain").click()
    page.get_by_role("option", name="History", exact=True).click()
    settle(page)
    history = int((overlap["Domain"] == "History").sum())
    at_place(page, "Estimate: audit sample", "History", None, history)
    mark_correct(page)
    assert params(page)["scope"] == review.AUDIT, page.url

    # The Overview by the sidebar and back by the sidebar: the same place, and the URL holds it.
    open_nav(page, "Overview", "Overview")
    open_nav(page, "Review queue", "Review queue")
    at_place(page, "Estimate: audit sample", "History", None, history)
    assert params(page)["scope"] == review.AUDIT, page.url
    expect(page.locator(MAIN)).to_contain_text(f"Reviewed 1 of {history} in this scope")

    # The language filter beside the domain: Tamil rows of the audit's History rows.
    choose(page, "q_language", "Tamil")
    tamil = int(((overlap["Domain"] == "History") & (overlap["language"] == "Tamil")).sum())
    at_place(page, "Estimate: audit sample", "History", "Tamil", tamil)
    mark_correct(page)
    open_nav(page, "Overview", "Overview")
    open_nav(page, "Review queue", "Review queue")
    at_place(page, "Estimate: audit sample", "History", "Tamil", tamil)

    # A refresh: the same place.
    page.reload(timeout=TIMEOUT_MS)
    settle(page)
    at_place(page, "Estimate: audit sample", "History", "Tamil", tamil)

    # The URL sent to a colleague, opened in their own browser: the same place.
    link = page.url.replace("reviewer=asha", "reviewer=bina")
    colleague = new_page(browser)
    try:
        colleague.goto(link, timeout=TIMEOUT_MS)
        settle(colleague)
        at_place(colleague, "Estimate: audit sample", "History", "Tamil", tamil)
        assert f"run={run_id}" in colleague.url

        # A hand-edited URL: each bad parameter named, then a sensible default; no traceback.
        colleague.goto(
            f"{server.url}/review?run={run_id}&reviewer=bina&scope=nope&domain=Nowhere&language=Klingon"
            "&sample=lots&blind=maybe&view=sideways",
            timeout=TIMEOUT_MS,
        )
        settle(colleague)
        main = colleague.locator(MAIN)
        for said in (
            'scope="nope" cannot be opened',
            'domain="Nowhere" is not a domain of this run',
            'language="Klingon" is not a language of this run',
            'sample="lots" is not a whole number',
            'blind="maybe" is not on or off',
            'view="sideways" is not queue or my-verdicts',
        ):
            expect(main).to_contain_text(said)
        expect_choice(colleague, "q_bucket", "Triage: Overlap only")
        expect(main).to_contain_text(re.compile(r"Reviewed \d+ of 36 in this scope"))
        assert params(colleague)["scope"] == "overlap_only" and "domain" not in params(colleague)
        no_exception(colleague, "a hand-edited URL")
    finally:
        colleague.context.close()


def test_a_finished_triage_scope_points_to_the_audit_scope_with_work_left(
    server: AppServer, browser: Browser, page: Page
) -> None:
    data = mixed_csv("left", 18, domains=("Art", "History", "Music"))
    run_id, frame = open_queue(page, server, "carol", data, "left_model_tamil.csv")
    overlap = frame[frame["bucket"] == "overlap_only"]
    audit = overlap[overlap["Domain"] == "History"]["item_key"].tolist()
    plan_audit(server.db_url, run_id, audit)
    open_nav(page, "Review queue", "Review queue")
    expect_choice(page, "q_bucket", "Triage: Overlap only")
    page.locator(".st-key-q_domain").click()
    page.get_by_role("option", name="Music", exact=True).click()
    settle(page)
    music = int((overlap["Domain"] == "Music").sum())
    for _ in range(music):
        mark_correct(page)
    main = page.locator(MAIN)
    expect(main).to_contain_text(f"Done: every row of this scope has your verdict ({music} rows")
    # The audit sample, which has work left, is offered first.
    first = page.locator(".st-key-q_todo_b0 button")
    expect(first).to_contain_text(f"Estimate: audit sample: {len(audit)} rows left")

    # A teammate on the same finished scope (team split): nothing free, and the audit offered too.
    mate = new_page(browser)
    try:
        mate.goto(f"{server.url}/review?run={run_id}&reviewer=dev&scope=overlap_only&domain=Music", timeout=TIMEOUT_MS)
        settle(mate)
        expect(mate.locator(MAIN)).to_contain_text("No row of this scope is waiting for a reviewer")
        expect(mate.locator(".st-key-q_todo_b0 button")).to_contain_text(
            f"Estimate: audit sample: {len(audit)} rows left"
        )
        no_exception(mate, "a teammate's finished scope")
    finally:
        mate.context.close()

    first.click()
    settle(page)
    expect_choice(page, "q_bucket", "Estimate: audit sample")
    expect(main).to_contain_text(f"Reviewed 0 of {len(audit)} in this scope")
    assert params(page)["scope"] == review.AUDIT and "domain" not in params(page), page.url
    no_exception(page, "the audit scope opened from a finished scope")


def set_languages(page: Page, *names: str) -> None:
    """Choose ``names`` in the sidebar's "Languages I read", as a person does."""
    field = page.locator(".st-key-reader_languages_field")
    for name in names:
        field.locator("input").first.click()
        field.locator("input").first.fill(name)
        page.get_by_role("option", name=name, exact=True).first.click()
        settle(page)
    page.keyboard.press("Escape")
    settle(page)


def test_team_split_hands_rows_by_the_languages_each_reviewer_reads(
    server: AppServer, browser: Browser, page: Page
) -> None:
    data = mixed_csv("team", 36)
    run_id, frame = open_queue(page, server, "tara", data, "team_model_tamil.csv")
    language_of = dict(zip(frame["item_key"], frame["language"], strict=True))
    set_languages(page, "Tamil")
    expect(page.locator(SIDEBAR)).to_contain_text("Tamil")
    open_nav(page, "Review queue", "Review queue")
    main = page.locator(MAIN)
    expect(main).to_contain_text("Your languages: Tamil")  # on the card
    other = new_page(browser)
    try:
        other.goto(f"{server.url}/review?run={run_id}&reviewer=omar", timeout=TIMEOUT_MS)
        settle(other)
        expect(other.locator(MAIN)).not_to_contain_text("Your languages")
        for _ in range(4):
            mark_correct(page)
            mark_correct(other)
        no_exception(other, "omar's queue")
    finally:
        other.context.close()
    engine = make_engine(server.db_url)
    try:
        current = review.current_verdicts(engine)
        tara = [language_of[k] for k in current[current["reviewer"] == "tara"]["item_key"]]
        omar = [language_of[k] for k in current[current["reviewer"] == "omar"]["item_key"]]
        assert review.reader_languages.reviewer_languages(engine, "tara") == ("Tamil",)
    finally:
        engine.dispose()
    assert tara == ["Tamil"] * 4  # only rows in her language
    assert len(omar) == 4 and set(omar) - {"Tamil"}  # none set: any row, the front of the queue

    # A new session (another browser, the next day): the languages are still hers, on the card too.
    later = new_page(browser)
    try:
        later.goto(f"{server.url}/review?run={run_id}&reviewer=tara", timeout=TIMEOUT_MS)
        settle(later)
        expect(later.locator(".st-key-reader_languages_field")).to_contain_text("Tamil")
        expect(later.locator(MAIN)).to_contain_text("Your languages: Tamil")
        expect(later.locator(MAIN)).to_contain_text("Language: Tamil")
        no_exception(later, "tara's next session")
    finally:
        later.context.close()


def test_the_planner_aims_at_one_language_and_puts_its_rows_in_the_audit_scope(server: AppServer, page: Page) -> None:
    language = "Tamil"
    data = mixed_csv("plan", 90)
    run_id, _ = open_queue(page, server, "pia", data, "plan_model_tamil.csv")
    open_nav(page, "True accuracy", "True accuracy")
    page.get_by_role("tab", name="Plan").click()
    settle(page)
    choose(page, "est_plan_language", language)
    engine = make_engine(server.db_url)
    try:
        _, figures = stored_estimate(engine, run_id)
        wanted = plan_language(figures.sample, language, 0.05)
    finally:
        engine.dispose()
    k = wanted.rows.height
    assert 0 < k <= 31
    main = page.locator(MAIN)
    expect(main).to_contain_text(f"Review {k} more {language} rows of the random sample for ±5 points in {language}")
    page.locator(".st-key-est_plan_language_put button").click()
    expect(main).to_contain_text(f"Added {k} {language} rows to the audit scope (it now holds {k} rows)")
    settle(page)
    engine = make_engine(server.db_url)
    try:
        audit = review.audit_keys(engine, run_id)
        languages = store.load_scored(engine, run_id).set_index("item_key")["language"]
    finally:
        engine.dispose()
    assert audit == set(wanted.rows["item_key"].to_list())
    assert {languages[k] for k in audit} == {language}
    page.locator("[data-testid='stPageLink']", has_text=f"Review the {language} rows").click()
    expect(page.locator("h1").first).to_contain_text("Review queue", timeout=TIMEOUT_MS)
    settle(page)
    expect_choice(page, "q_bucket", "Estimate: audit sample")
    expect_choice(page, "q_language", language)
    expect(main).to_contain_text(f"Reviewed 0 of {k} in this scope")
    no_exception(page, "the language's audit rows in the queue")
