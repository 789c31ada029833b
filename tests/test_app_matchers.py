"""AppTest of the Matchers page (issue 29): it leads with the recommendation in plain words, shows
each matcher's figures per language as ``python -m scoring matchers`` computes them, keeps the
method under an expander, and follows the page's target."""

from __future__ import annotations

import csv
import io

from apptest_support import alerts, frame_with, open_page, texts
from sqlalchemy import Engine

from scoring import ingest, review, store
from scoring.estimate.matcher_quality import ALL_ROWS, METHOD, NAMES, figures_table, matcher_quality
from scoring.estimate.stored_matchers import report_set, run_matchers, stored_matcher_sample

LANGS = ("Hindi", "English")
PAIRS = [
    ("किताब", "दो किताबें।", True),
    ("गंगा", "गंगा नदी", True),
    ("दिल्ली", "आगरा", False),
    ("amalak", "Amalaka", True),
    ("scroll painting", "Scroll paintings", True),
    ("Jalgaon", "Aurangabad, I believe.", False),
]


def _save(engine: Engine, copies: int) -> int:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(("question", "answer", "Domain", "response", "language"))
    rows = [(a, r, ok) for _ in range(copies) for a, r, ok in PAIRS]
    for i, (answer, response, _) in enumerate(rows):
        writer.writerow((f"q{i}", answer, "Art", response, "Hindi" if answer[0] > "z" else "English"))
    run = ingest.save_run(engine, buf.getvalue().encode("utf-8"), "mixed_matchers.csv").run
    table = store.load_table(engine, run.id)
    for key, (_, _, right) in zip(table["item_key"].to_list(), rows):
        review.record_mark(engine, key, run.id, "alice", "correct" if right else "wrong")
    return run.id


def test_the_page_leads_with_the_recommendation_and_shows_the_clis_figures(app_engine: Engine) -> None:
    run_id = _save(app_engine, 12)  # 72 rows, all reviewed: 36 per language
    at = open_page("matchers", reviewer="carol", run_id=run_id)
    boxes = alerts(at)
    assert boxes[0].startswith(f"{ALL_ROWS}: ")
    assert {b.split(":")[0] for b in boxes} == {ALL_ROWS, *LANGS}
    _, sample = stored_matcher_sample(app_engine, run_id, 30.0)
    want = figures_table(matcher_quality(sample))
    shown = frame_with(at, "rows to review")
    assert shown["rows to review"].tolist() == want["queue"].to_list()
    assert set(shown["scope"]) == {ALL_ROWS, *LANGS}
    assert "72 reviewed rows of the run's random sample." in texts(at)
    assert METHOD in texts(at)  # the method, under the expander
    assert at.expander[0].label == "How these figures are computed"
    # A census of every row: precision is known exactly, so a target the best matcher reaches
    # names it; the stemmer (both languages stemmed) and norm_exact pass every right row here.
    at.number_input(key="match_target").set_value(0.99).run()
    lead = alerts(at)[0]
    assert lead.startswith(f"{ALL_ROWS}: Use ") and "precision is 100.0%" in lead


def test_a_thin_sample_says_it_is_too_small_to_tell(app_engine: Engine) -> None:
    run_id = _save(app_engine, 2)  # 12 reviewed rows
    at = open_page("matchers", reviewer="carol", run_id=run_id)
    assert all("The sample is too small to tell" in b for b in alerts(at))


def test_the_matchers_switched_on_are_saved_at_once_and_become_the_reports_set(app_engine: Engine) -> None:
    """Per run: the page says which matchers are on (every one until a choice is saved), saves the
    multiselect's choice at once, and the report (page and CLI default) compares only those."""
    run_id = _save(app_engine, 2)
    at = open_page("matchers", reviewer="carol", run_id=run_id)
    assert any(t.startswith("On: Normalised exact, Stemmed word overlap, Character F-score") for t in texts(at))
    assert set(frame_with(at, "rows to review")["matcher"]) == set(NAMES.values())
    at.multiselect(key="match_on").set_value(["chrf"])
    at.button[0].click().run()
    assert run_matchers(app_engine, run_id) == ("chrf",)  # written at once
    assert any(b == "Saved: Character F-score (chrF)." for b in alerts(at))
    again = open_page("matchers", reviewer="carol", run_id=run_id)
    assert any(t.startswith("On: Character F-score (chrF).") for t in texts(again))
    assert again.multiselect(key="match_on").value == ["chrf"]
    shown = set(frame_with(again, "rows to review")["matcher"])
    assert shown == {NAMES["exact"], NAMES["overlap"], NAMES["chrf"]}
    assert report_set(app_engine, run_id) == ["exact", "overlap", "chrf"]
    # none on: the spec's two alone, said so
    again.multiselect(key="match_on").set_value([])
    again.button[0].click().run()
    assert run_matchers(app_engine, run_id) == ()
    assert any("none (the spec's two metrics only)" in t for t in texts(open_page("matchers", run_id=run_id)))
