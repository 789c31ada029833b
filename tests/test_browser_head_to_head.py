"""Issue 37 §2 in a real browser: two models on the same 40 questions, every row of both reviewed
by a person, most of one model's wrong answers hedging with the golden answer inside (the metrics,
and so the adjudicated verdicts of unreviewed rows, call them right). Compare and Model x language
must lead with the head-to-head of the *estimated true accuracies* ("... is ahead of ... by X
points (95% CI ...): estimated true accuracy ..."), before the sentences read off verdicts; the
method sits in an expander. Before any review, Compare's decision plan (issue 37 §3) says per
language what to review and puts exactly those rows in both runs' audit scopes. Uploads through
the Upload page, sidebar links only."""

from __future__ import annotations

import re

from browser import TIMEOUT_MS, AppServer, no_exception, open_nav, settle, upload_file
from playwright.sync_api import Page, expect

from scoring import store
from scoring.store import make_engine
from scoring.store.audit import audit_keys
from scoring.store.verdict_log import record_mark
from scoring.team_report.decision_scope import decision_plans

MAIN = "[data-testid='stMain']"
ROWS = 40
RIGHT = {"alpha.csv": set(range(30)), "beta.csv": set(range(12))}


def run_file(name: str) -> bytes:
    """``ROWS`` questions with a ``qid``; beta's wrong answers hedge with the golden answer inside."""
    lines = ["qid,question,answer,Domain,response"]
    for i in range(ROWS):
        answer = f"word{i}"
        wrong = f"not {answer} maybe" if name == "beta.csv" else "I do not know"
        response = f"It is {answer}." if i in RIGHT[name] else wrong
        lines.append(f"q{i},Question {i} about {answer}?,{answer},{('Art', 'History')[i % 2]},{response}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def test_compare_and_model_by_language_lead_with_the_estimated_truth(server: AppServer, page: Page) -> None:
    main = page.locator(MAIN)
    page.goto(f"{server.url}/?reviewer=h2h_tester", timeout=TIMEOUT_MS)
    for name in RIGHT:
        upload_file(page, name, run_file(name))

    # Before any review: Compare's decision plan, and its rows put in both runs' audit scopes.
    field = page.locator(".st-key-reviewer_name input")  # who puts them there, typed as a person does
    field.fill("h2h_tester")
    field.press("Enter")
    settle(page)
    open_nav(page, "Compare", "Compare runs")
    page.locator("[data-testid='stCheckbox']", has_text="Plan the reviews that tell").click()
    points = page.get_by_label("Smallest difference worth knowing (points)")
    points.fill("40")
    points.press("Enter")
    settle(page)
    sentences = page.locator(".st-key-cmp_plan_sentences")
    expect(sentences).to_contain_text("review ", timeout=TIMEOUT_MS)
    assert "to tell a 40-point difference with 80% power" in sentences.inner_text()
    button = page.locator(".st-key-cmp_plan_put button")
    expect(button).to_be_enabled(timeout=TIMEOUT_MS)
    asked = int(re.search(r"Put these ([\d,]+) rows", button.inner_text()).group(1).replace(",", ""))
    assert asked > 0
    button.click()
    expect(main).to_contain_text(f"Added {asked:,} rows: the audit scopes now hold", timeout=TIMEOUT_MS)
    no_exception(page, "Compare's decision plan")
    engine = make_engine(server.db_url)
    try:
        ids = [store.find_run_by_sha(engine, store.sha256_bytes(run_file(name))) for name in RIGHT]
        assert all(ids)
        plans = decision_plans(engine, ids[0].id, ids[1].id, 0.4)  # what the page planned
        for info, side in zip(ids, ("a", "b"), strict=True):
            planned = {k for p in plans for k in getattr(p, side).next["item_key"].to_list()}
            assert set(audit_keys(engine, info.id)) == planned  # exactly the plan's rows
        assert sum(p.remaining for p in plans) == asked
    finally:
        engine.dispose()

    engine = make_engine(server.db_url)
    try:  # every row of both runs reviewed, as the queue writes a reviewer's marks
        for name, right in RIGHT.items():
            run = store.find_run_by_sha(engine, store.sha256_bytes(run_file(name)))
            assert run is not None
            rows = store.load_table(engine, run.id)
            for key, qid in zip(rows["item_key"], rows["qid"], strict=True):
                verdict = "correct" if int(str(qid)[1:]) in right else "wrong"
                record_mark(engine, key, run.id, "asha", verdict)
    finally:
        engine.dispose()

    open_nav(page, "Compare", "Compare runs")
    no_exception(page, "Compare")
    lead = page.locator(".st-key-cmp_truth")
    expect(lead).to_contain_text("alpha is ahead of", timeout=TIMEOUT_MS)
    text = lead.inner_text()
    assert "by 45.0 points (95% CI" in text and "estimated true accuracy 75.0% vs 30.0% on 40 shared questions" in text
    # The lead comes first: above the sentences read off verdicts.
    first = main.locator("[class*='st-key-cmp_truth'], [class*='st-key-cmp_answer']").first
    assert "estimated true accuracy" in first.inner_text()
    expect(main).to_contain_text("How is the head-to-head computed?")

    open_nav(page, "Model x language", "Model x language")
    no_exception(page, "Model x language")
    expect(page.locator(".st-key-lang_truth")).to_contain_text("alpha is ahead of beta by 45.0 points (95% CI")
