"""AppTest tests of the path a new user takes (issue 27): the Start here page (the default, three
steps with working buttons, the queue's own count, a template that uploads cleanly) and "no number
before its evidence" (no estimated true accuracy on the Overview or the True accuracy page until a
row of the random sample is reviewed; the planner's pilot and its button instead)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from apptest_support import (
    APP,
    PAGES,
    TIMEOUT,
    alerts,
    click,
    download,
    goto,
    ok,
    open_page,
    progress,
    record_media_managers,
    texts,
    unescape_md,
)
from sqlalchemy import Engine
from streamlit.testing.v1 import AppTest

from scoring import ingest, review, store
from scoring.core.loader import load_bytes
from scoring.estimate import build_strata, next_rows, plan_review
from scoring.estimate.stored_run import stored_estimate

ESTIMATE = "Estimated true accuracy"
PILOT = re.compile(r"Review about ([\d,]+) rows of the random sample to estimate the true accuracy \(±5 points\)")


def start(reviewer: str | None = "alice", run_id: int | None = None) -> AppTest:
    """A new session on the root URL: the default page."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    if reviewer:
        at.query_params["reviewer"] = reviewer
    if run_id is not None:
        at.query_params["run"] = str(run_id)
    return ok(at.run())


def titles(at: AppTest) -> list[str]:
    return [str(t.value).replace("\\", "") for t in at.title]


def pilot_rows(at: AppTest) -> int | None:
    """k of the "Review about k rows" sentence on the page, None when the page has none."""
    found = [int(m.group(1).replace(",", "")) for i in at.info if (m := PILOT.search(str(i.value)))]
    assert len(found) <= 1
    return found[0] if found else None


def planner_pilot(engine: Engine, run_id: int) -> int:
    """The planner's figure for +-5 points on the run's strata, computed here from the stored run."""
    sample = stored_estimate(engine, run_id)[1].sample
    return plan_review(build_strata(sample), 0.05).remaining


def estimate_shown(at: AppTest) -> list[str]:
    """Every place an estimated true accuracy shows: tiles, chart series, table columns or rows."""
    places = [m.label for m in at.metric if "Estimated" in m.label or "judge-assisted" in m.label.lower()]
    for chart in at.get("plotly_chart"):
        places += [t["name"] for t in json.loads(chart.proto.spec)["data"] if t.get("name") == ESTIMATE]
    places += [
        f"table {list(d.value.columns)}"
        for d in at.dataframe
        if ESTIMATE in d.value.columns or {"estimate", "95% CI"} <= set(d.value.columns)
    ]
    return places


# --- Start here -----------------------------------------------------------------------------------


def test_start_here_is_the_default_page_first_in_the_sidebar(sample_engine: Engine, run_id: int) -> None:
    app = Path(APP).read_text(encoding="utf-8")
    assert PAGES[0] == "views/start.py"
    assert re.findall(r'st\.Page\("([^"]+)"[^)]*default=True', app) == ["views/start.py"]
    at = start()
    assert titles(at) == ["Start here"]
    assert [s.value for s in at.subheader] == [
        "1. Upload a file of your model's answers",
        "2. Review the rows the metrics disagree on",
        "3. Export the adjudicated verdicts",
        "Sample runs",  # the box that removes them all (issue 37)
    ]
    assert any("You are looking at a bundled sample run" in str(i.value) for i in at.info)
    shown = "\n".join(str(m.value) for m in at.markdown)
    for column in ("`question`", "`answer`", "**golden answer**", "`response`", "`Domain`", "`model`", "`language`"):
        assert column in shown
    assert any("CSV, TSV, JSON lines" in str(c.value) and "Parquet" in str(c.value) for c in at.caption)


def test_an_uploaded_run_is_not_called_the_sample(sample_engine: Engine) -> None:
    own = ingest.save_run(sample_engine, b"question,answer,response,Domain\nQ?,A,A,Art\n", "own.csv").run
    at = start(run_id=own.id)
    assert not any("bundled sample" in str(i.value) for i in at.info)


@pytest.mark.parametrize(
    ("key", "title"),
    [
        ("start_go_upload", "Upload a model run"),
        ("start_go_review", "Review queue: Sample run"),
        ("start_go_export", "Export: Sample run"),
    ],
)
def test_each_step_button_opens_its_page(sample_engine: Engine, run_id: int, key: str, title: str) -> None:
    at = click(start(run_id=run_id), key)
    assert titles(at) == [title]
    if key == "start_go_review":
        assert at.selectbox(key="q_bucket").value == "overlap_only"


def test_the_count_of_rows_needing_a_verdict_is_the_queues(sample_engine: Engine, run_id: int) -> None:
    scored = store.load_scored(sample_engine, run_id)
    overlap = scored[scored["bucket"] == "overlap_only"]["item_key"].tolist()
    assert len(overlap) >= 3
    review.record_mark(sample_engine, overlap[0], run_id, "bob", "correct")
    review.record_mark(sample_engine, overlap[1], run_id, "carol", "wrong")
    at = start(run_id=run_id)
    label = at.button(key="start_go_review").label
    waiting = int(re.match(r"([\d,]+) rows need a verdict: open the queue$", label).group(1))
    assert waiting == len(overlap) - 2
    queue = click(at, "start_go_review")
    done, total = progress(queue)
    assert waiting == total - done  # the queue's own figure: rows of the scope without a verdict
    left = review.progress(scored, sample_engine, bucket="overlap_only").iloc[-1]
    assert waiting == int(left["remaining"])


def test_the_template_downloads_and_uploads_cleanly(sample_engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    managers = record_media_managers(monkeypatch)
    at = start()
    data = download(at, managers, "start_template")
    loaded = load_bytes(data, "responses_template.csv")  # the loader the Upload page's save_run uses
    assert loaded.table.height == 3 and not loaded.warnings
    assert {"question", "answer", "response", "Domain", "model", "language"} <= set(loaded.table.columns)
    # Through the Upload page as a user would: saved, opened on the Overview, no warning.
    at = goto(at, "upload")
    at.file_uploader(key="uploads").set_value(("responses_template.csv", data, "text/csv"))
    ok(at.run())
    run = next(r for r in store.list_runs(sample_engine) if r.filename == "responses_template.csv")
    assert run.n_rows == 3
    assert titles(at) == [f"Overview: {run.name}"]
    assert not at.main.warning and not at.main.error
    scored = store.load_scored(sample_engine, run.id)
    assert scored["Domain"].tolist() == ["Geography", "Literature", "Geography"]
    assert scored["answer"].tolist()[2] == "नई दिल्ली"
    # After the upload the Overview says what to do next, with the buttons.
    # It names what was saved: the upload's own status label is replaced by this page at once.
    assert any(f"saved as run #{run.id} (3 rows). Next:" in unescape_md(str(s.value)) for s in at.success)
    triage = at.button(key="ov_triage")
    waiting = int(review.progress(scored, sample_engine, bucket="overlap_only").iloc[-1]["remaining"])
    assert triage.label == f"{waiting:,} rows need a verdict: open the queue"
    assert pilot_rows(at) == planner_pilot(sample_engine, run.id)
    assert not at.button(key="ov_pilot").disabled


# --- no number before its evidence ----------------------------------------------------------------


@pytest.mark.parametrize("page", ["overview", "estimate"])
def test_a_fresh_run_shows_the_pilot_not_an_estimate(sample_engine: Engine, run_id: int, page: str) -> None:
    at = open_page(page, run_id=run_id)
    assert estimate_shown(at) == []
    k = pilot_rows(at)
    assert k is not None and k == planner_pilot(sample_engine, run_id) > 0
    button = at.button(key="ov_pilot" if page == "overview" else "est_pilot")
    assert f"{k:,} rows" in button.label and not button.disabled


def test_the_pilot_button_starts_the_audit_and_the_figure_follows_its_reviews(
    sample_engine: Engine, run_id: int
) -> None:
    at = open_page("estimate", reviewer="alice", run_id=run_id)
    run, figures = stored_estimate(sample_engine, run_id)
    wanted = next_rows(figures.sample, plan_review(build_strata(figures.sample), 0.05), seed=run.info.review_seed)
    queue = click(at, "est_pilot")
    assert titles(queue) == ["Review queue: Sample run"]
    assert queue.selectbox(key="q_bucket").value == review.AUDIT
    assert review.audit_keys(sample_engine, run_id) == set(wanted["item_key"].to_list())
    assert progress(queue) == (0, wanted.height)
    # AppTest reruns the page it was last told to open (not one the script switched to): tell it.
    goto(queue, "review")
    assert queue.selectbox(key="q_bucket").value == review.AUDIT
    for _ in range(3):
        click(queue, "q_yes")
    assert progress(queue) == (3, wanted.height)
    for page in ("overview", "estimate"):
        after = open_page(page, reviewer="alice", run_id=run_id)
        assert pilot_rows(after) is None
        # three rows give no 95% interval: no figure anywhere (issue 36), what to review instead
        shown = estimate_shown(after)
        assert not any(s == ESTIMATE for s in shown), (page, shown)  # no bar series
        assert all(m.value == "not yet" for m in after.metric if "Estimated" in m.label), page
        said = [*texts(after), *alerts(after)]
        assert any("to get an estimate" in t for t in said), (page, said)
    # The whole pilot reviewed (as the queue records it): the figure follows, with its interval.
    for key in review.audit_keys(sample_engine, run_id) - set(review.current_verdicts(sample_engine)["item_key"]):
        review.record_mark(sample_engine, key, run_id, "alice", "correct")
    for page in ("overview", "estimate"):
        after = open_page(page, reviewer="alice", run_id=run_id)
        shown = estimate_shown(after)
        assert any("Estimated" in s for s in shown), (page, shown)
        assert any(s == ESTIMATE for s in shown), (page, shown)  # the chart's bar series
