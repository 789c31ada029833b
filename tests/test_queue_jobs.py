"""Triage and the estimate named as two jobs wherever a queue is picked (issue 27): the Review
queue's scope picker says which job each scope serves ("Triage: Overlap only (n rows)",
"Estimate: audit sample (k rows)"), the page says in one line which job the marks serve, and
Start here names its queue's job. The line is checked against the estimate itself: marks given in
a triage queue count for their bucket only, the audit sample's for the run, a row opened on purpose
for none (:mod:`scoring.estimate.sample`)."""

from __future__ import annotations

import re

import pandas as pd
from apptest_support import APP, TIMEOUT, click, ok, open_page, page_path, progress
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import review
from scoring.core.protocols import BUCKETS
from scoring.estimate import next_rows
from scoring.estimate.stored_run import stored_estimate
from scoring.review.jobs import ESTIMATE, TRIAGE, job_sentence
from ui.tables import bucket_name


def queue(run_id: int, **params: str) -> AppTest:
    """The Review queue in a new session, as alice, with extra query parameters."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.query_params.update({"reviewer": "alice", "run": str(run_id), **params})
    ok(at.run())
    at.switch_page(page_path("review"))
    return ok(at.run())


def job_line(at: AppTest) -> str:
    """The page's one line naming the job (a caption starting "Triage:" or "Estimate:")."""
    found = [re.sub(r"\\(.)", r"\1", str(c.value)) for c in at.main.caption]
    lines = [c for c in found if c.startswith((f"{TRIAGE}:", f"{ESTIMATE}:"))]
    assert len(lines) == 1, found
    return lines[0]


def plan_audit(engine: Engine, run_id: int) -> list[int]:
    """Put the planner's rows for +-10 points in the audit scope; their row_idx in queue order."""
    run, figures = stored_estimate(engine, run_id, 0.10)
    wanted = next_rows(figures.sample, figures.plan, seed=run.info.review_seed)
    review.set_audit(engine, run_id, wanted["item_key"].to_list(), "ana", 0.10)
    return wanted["row_idx"].to_list()


def test_the_scope_picker_names_each_scopes_job_and_rows(
    sample_engine: Engine, run_id: int, scored: pd.DataFrame
) -> None:
    counts = scored["bucket"].value_counts()
    at = queue(run_id)
    expected = [f"Triage: {bucket_name(b)} ({int(counts.get(b, 0)):,} rows)" for b in BUCKETS]
    assert at.selectbox(key="q_bucket").options == expected
    audited = plan_audit(sample_engine, run_id)
    at = queue(run_id)
    assert at.selectbox(key="q_bucket").options == [*expected, f"Estimate: audit sample ({len(audited):,} rows)"]


def test_the_page_says_which_job_the_marks_serve(sample_engine: Engine, run_id: int) -> None:
    at = queue(run_id)
    assert job_line(at) == job_sentence("overlap_only")
    assert job_line(at).startswith("Triage: these marks settle rows the metrics disagree on.")
    at.selectbox(key="q_bucket").set_value("both_pass")
    ok(at.run())
    assert job_line(at).startswith("Triage: these marks check rows both metrics pass.")
    at.number_input(key="q_sample").set_value(10)
    ok(at.run())
    assert job_line(at) == job_sentence("both_pass", 10)
    assert job_line(at).startswith("Estimate: these marks are a random sample of this bucket (its first 10 rows")
    plan_audit(sample_engine, run_id)
    at = queue(run_id, scope=review.AUDIT)
    assert at.selectbox(key="q_bucket").value == review.AUDIT
    assert job_line(at) == job_sentence(review.AUDIT)
    assert job_line(at).startswith("Estimate: these marks are the random sample the True accuracy page planned")


def test_the_lines_claims_hold_in_the_estimate(sample_engine: Engine, run_id: int, scored: pd.DataFrame) -> None:
    """Triage marks count for their bucket only; a row opened on purpose counts nowhere in the
    estimate; the audit sample's marks count for every bucket it spans."""
    at = queue(run_id)  # overlap_only: triage
    for _ in range(3):
        click(at, "q_yes")
    assert progress(at)[0] == 3
    sample = stored_estimate(sample_engine, run_id)[1].sample
    counted = sample.filter(sample["reviewed"])
    assert counted.height == 3 and set(counted["bucket"]) == {"overlap_only"}
    # A both_pass row opened on purpose (a link's ?row=) and marked: a verdict, not in the estimate.
    row = int(scored[scored["bucket"] == "both_pass"]["row_idx"].iloc[-1])
    at = queue(run_id, row=str(row + 1))
    click(at, "q_yes")
    sample = stored_estimate(sample_engine, run_id)[1].sample
    assert sample.filter(sample["reviewed"]).height == 3
    assert sample.filter(sample["by_hand"])["row_idx"].to_list() == [row]
    # The audit sample spans the buckets: its marks count wherever they are.
    planned = plan_audit(sample_engine, run_id)
    at = queue(run_id, scope=review.AUDIT)
    for _ in range(len(planned)):
        click(at, "q_yes")
    sample = stored_estimate(sample_engine, run_id)[1].sample
    counted = set(sample.filter(sample["reviewed"])["row_idx"].to_list())
    assert set(planned) <= counted
    buckets = set(scored.set_index("row_idx").loc[planned, "bucket"])
    assert len(buckets) > 1 and buckets <= set(sample.filter(sample["reviewed"])["bucket"])


def test_start_here_names_its_queues_job(sample_engine: Engine, run_id: int) -> None:
    at = open_page("start", run_id=run_id)
    shown = [re.sub(r"\\(.)", r"\1", str(c.value)) for c in at.main.caption]
    assert job_sentence("overlap_only") in shown
    assert job_sentence("overlap_only").startswith("Triage:") and "audit sample" in job_sentence("overlap_only")
