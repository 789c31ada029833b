"""AppTest of the judge-assisted estimate on the True accuracy page and the Overview (issue 18
section 4): the bundled sample run with every row judged and a reviewed part shows the
judge-assisted estimate beside the human-only one, the method named and the effective reviews,
plans with the judge and says what it is worth; a run without judge labels shows none of it."""

from __future__ import annotations

import json

import pytest
from apptest_support import frame_with, open_page, texts
from sqlalchemy import Engine

from scoring import review, store
from scoring.core.formatting import interval, percent
from scoring.estimate import PLAN_METHOD
from scoring.estimate.judged import judge_figures
from scoring.estimate.ppi import PPI_METHOD
from scoring.estimate.ppi_plan import PPI_PLAN_METHOD
from scoring.estimate.stored_run import stored_estimate
from scoring.store import judge_cache
from scoring.store.judge_choice import ANY_CONFIG
from ui.estimate_view import ci_text


def _review_most(engine: Engine, run_id: int) -> None:
    """Three rows of every four reviewed (its verdict: both metrics pass, or overlap passes on rows
    0 mod 4): 30 of 40, enough for the run's interval (every other row left it without one, and no
    figure is shown without one: issue 36), not for any domain's."""
    scored = store.load_scored(engine, run_id)
    for row in scored.itertuples():
        if row.row_idx % 4 != 3:
            right = row.bucket == "both_pass" or (row.bucket == "overlap_only" and row.row_idx % 4 == 0)
            review.record_mark(engine, row.item_key, run_id, "alice", "correct" if right else "wrong")


def _judge_all(engine: Engine, run_id: int) -> None:
    scored = store.load_scored(engine, run_id)
    judge_cache.save(
        engine,
        [
            {
                "cache_key": f"{i:064x}",
                "item_key": row.item_key,
                "model": "m",
                "prompt_version": "v",
                "label": "CORRECT" if row.bucket in ("both_pass", "overlap_only") else "INCORRECT",
            }
            for i, row in enumerate(scored.itertuples())
        ],
    )


def _none(value: float | None) -> float | None:
    """A table cell as None where it is empty (pandas shows None as NaN)."""
    return None if value is None or value != value else value


def _captions(at) -> str:  # noqa: ANN001
    return "\n".join(str(c.value).replace("\\", "") for c in at.main.caption)


def test_the_true_accuracy_page_shows_both_estimates_and_plans_with_the_judge(
    sample_engine: Engine, run_id: int
) -> None:
    _review_most(sample_engine, run_id)
    _judge_all(sample_engine, run_id)
    at = open_page("estimate", run_id=run_id)
    _, figures = stored_estimate(sample_engine, run_id)
    judged = judge_figures(figures.sample)
    assert judged is not None and judged.plans
    side = judged.comparison(figures.accuracy.table())
    combined = side.row(-1, named=True)
    metric = {m.label: m for m in at.metric}["Judge-assisted (combined)"]
    assert metric.value == percent(combined["judge_estimate"])
    assert interval(combined["judge_ci_low"], combined["judge_ci_high"]) in metric.help
    worth = {m.label: m for m in at.metric}["The judge is worth"]
    assert worth.value == f"{max(0.0, combined['effective_reviews'] - combined['reviewed']):,.0f} reviews"
    table = frame_with(at, "judge-assisted 95% CI")
    assert table["domain"].tolist() == side["scope"].to_list()
    assert table["human-only 95% CI"].tolist() == [ci_text(r, "human_ci_low", "human_ci_high") for r in side.to_dicts()]
    assert table["judge-assisted 95% CI"].tolist() == [
        ci_text(r, "judge_ci_low", "judge_ci_high") for r in side.to_dicts()
    ]
    assert [_none(v) for v in table["judge-assisted"]] == pytest.approx(side["judge_estimate"].to_list())
    assert side["judge_estimate"].to_list()[-1] is not None  # the run's figure, with its interval
    assert [v is None for v in side["judge_estimate"].to_list()[:-1]] == [True] * (side.height - 1)  # no domain's
    assert table["the judge narrows it"].tolist() == [
        "yes" if u else "no: human-only figure" for u in side["uses_judge"]
    ]
    # this judge says what the buckets say: it narrows nothing, and the page leads with the human-only
    # figure and says so in plain words
    assert not combined["uses_judge"]
    lead = {m.label: m for m in at.metric}["Estimated true accuracy (combined)"]
    assert lead.value == percent(figures.accuracy.combined.estimate)
    assert any(t.startswith("The judge's labels do not narrow the interval here") for t in texts(at))
    shown = _captions(at)
    assert PPI_METHOD in shown and PPI_PLAN_METHOD in shown and PLAN_METHOD not in shown
    assert f"Judge labels: {ANY_CONFIG}." in shown  # no configuration chosen for the run
    # The chart carries the judge-assisted series beside the human-only estimate.
    traces = {t["name"]: t for t in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]}
    assert traces["Judge-assisted estimate"]["y"] == side["judge_estimate"].to_list()
    # The planner plans with the judge and says what the same interval needs without it, at the
    # half-width it offers first (the +-5-point pilot: no plan has been kept for the run).
    plan = judge_figures(figures.sample, 0.05).plan
    line = next(t for t in texts(at) if t.startswith("Planned with the judge's labels"))
    assert f"{plan.plan.planned:,} rows in all" in line and f"without its labels needs {plan.human_planned:,}" in line
    planned = frame_with(at, "planned")
    assert planned["planned"].tolist() == plan.plan.strata["planned"].to_list()
    assert not at.exception


def test_the_overview_shows_the_judge_assisted_estimate_beside_the_estimate(sample_engine: Engine, run_id: int) -> None:
    _review_most(sample_engine, run_id)
    _judge_all(sample_engine, run_id)
    at = open_page("overview", run_id=run_id)
    _, figures = stored_estimate(sample_engine, run_id)
    judged = judge_figures(figures.sample)
    assert judged is not None
    side = judged.comparison(figures.accuracy.table()).to_dicts()
    table = frame_with(at, "Judge-assisted estimate")
    assert table["Judge-assisted 95% CI"].tolist() == [ci_text(r, "judge_ci_low", "judge_ci_high") for r in side]
    assert table["Effective reviews"].tolist() == [round(r["effective_reviews"]) for r in side]
    assert "Estimated true accuracy" in table.columns
    metric = {m.label: m for m in at.metric}["Judge-assisted (combined)"]
    assert metric.value == percent(side[-1]["judge_estimate"])
    assert PPI_METHOD in _captions(at)
    assert any(t.startswith("The judge's labels do not narrow the interval here") for t in texts(at))
    assert not at.exception


def test_a_run_without_judge_labels_shows_no_judge_assisted_part(sample_engine: Engine, run_id: int) -> None:
    _review_most(sample_engine, run_id)
    for page in ("estimate", "overview"):
        at = open_page(page, run_id=run_id)
        assert not [m for m in at.metric if m.label.startswith("Judge-assisted")]
        assert PPI_METHOD not in _captions(at)
        assert not any("judge" in t.lower() for t in texts(at))
        assert not at.exception
    assert PLAN_METHOD in _captions(open_page("estimate", run_id=run_id))
